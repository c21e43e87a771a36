/* polybench.h: the support header of polylab's PolyBench-style examples (written for polylab; it follows
   the conventions of PolyBench/C so that files in that style are read unmodified, it is not PolyBench's).

   Conventions a kernel file uses:
     DATA_TYPE, SCALAR_VAL(x), SQRT_FUN(x), EXP_FUN(x), POW_FUN(x, y), DATA_PRINTF_MODIFIER
         the element type: double, or float with -DDATA_TYPE_IS_FLOAT, or int with -DDATA_TYPE_IS_INT;
     _PB_N (defined by each file as POLYBENCH_LOOP_BOUND(N, n))
         loop bounds: the compile-time size N, or the function's argument n with -DPOLYBENCH_USE_SCALAR_LB;
     POLYBENCH_1D/2D/3D(var, sizes..., arguments...)
         array parameters with the compile-time extents (variable extents with -DPOLYBENCH_USE_C99_PROTO);
     POLYBENCH_2D_ARRAY_DECL(var, type, sizes..., arguments...), POLYBENCH_ARRAY(var), POLYBENCH_FREE_ARRAY
         arrays on the heap, passed to the kernel as arrays;
     polybench_prevent_dce(call)
         prints the results (to stderr) with -DPOLYBENCH_DUMP_ARRAYS, else only when the program is given
         more than 42 arguments, so the compiler cannot drop the kernel's work;
     MINI_DATASET, SMALL_DATASET (the default), MEDIUM_DATASET, LARGE_DATASET
         the sizes a file picks when no -DN=... is given. */
#ifndef POLYLAB_POLYBENCH_H
#define POLYLAB_POLYBENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && !defined(LARGE_DATASET)
# define SMALL_DATASET
#endif

#if defined(DATA_TYPE_IS_INT)
# define DATA_TYPE int
# define DATA_PRINTF_MODIFIER "%d "
# define SCALAR_VAL(x) x
# define SQRT_FUN(x) sqrt(x)
# define EXP_FUN(x) exp(x)
# define POW_FUN(x, y) pow(x, y)
#elif defined(DATA_TYPE_IS_FLOAT)
# define DATA_TYPE float
# define DATA_PRINTF_MODIFIER "%0.2f "
# define SCALAR_VAL(x) x##f
# define SQRT_FUN(x) sqrtf(x)
# define EXP_FUN(x) expf(x)
# define POW_FUN(x, y) powf(x, y)
#else
# define DATA_TYPE double
# define DATA_PRINTF_MODIFIER "%0.2lf "
# define SCALAR_VAL(x) x
# define SQRT_FUN(x) sqrt(x)
# define EXP_FUN(x) exp(x)
# define POW_FUN(x, y) pow(x, y)
#endif

#ifdef POLYBENCH_USE_SCALAR_LB
# define POLYBENCH_LOOP_BOUND(size, arg) arg
#else
# define POLYBENCH_LOOP_BOUND(size, arg) size
#endif

#ifdef POLYBENCH_USE_C99_PROTO
# define POLYBENCH_C99_SELECT(size, arg) arg
#else
# define POLYBENCH_C99_SELECT(size, arg) size
#endif

#define POLYBENCH_1D(var, s1, a1) var[POLYBENCH_C99_SELECT(s1, a1)]
#define POLYBENCH_2D(var, s1, s2, a1, a2) var[POLYBENCH_C99_SELECT(s1, a1)][POLYBENCH_C99_SELECT(s2, a2)]
#define POLYBENCH_3D(var, s1, s2, s3, a1, a2, a3) \
  var[POLYBENCH_C99_SELECT(s1, a1)][POLYBENCH_C99_SELECT(s2, a2)][POLYBENCH_C99_SELECT(s3, a3)]

#define POLYBENCH_1D_ARRAY_DECL(var, type, s1, a1) \
  type (*var)[s1] = (type (*)[s1]) polybench_alloc((size_t) (s1), sizeof(type))
#define POLYBENCH_2D_ARRAY_DECL(var, type, s1, s2, a1, a2) \
  type (*var)[s1][s2] = (type (*)[s1][s2]) polybench_alloc((size_t) (s1) * (size_t) (s2), sizeof(type))
#define POLYBENCH_3D_ARRAY_DECL(var, type, s1, s2, s3, a1, a2, a3) \
  type (*var)[s1][s2][s3] = (type (*)[s1][s2][s3]) \
    polybench_alloc((size_t) (s1) * (size_t) (s2) * (size_t) (s3), sizeof(type))
#define POLYBENCH_ARRAY(var) (*var)
#define POLYBENCH_FREE_ARRAY(var) free((void *) var)

#define polybench_start_instruments
#define polybench_stop_instruments
#define polybench_print_instruments

#define POLYBENCH_DUMP_TARGET stderr
#define POLYBENCH_DUMP_START fprintf(POLYBENCH_DUMP_TARGET, "==BEGIN DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_FINISH fprintf(POLYBENCH_DUMP_TARGET, "\n==END   DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_BEGIN(name) fprintf(POLYBENCH_DUMP_TARGET, "begin dump: %s", name)
#define POLYBENCH_DUMP_END(name) fprintf(POLYBENCH_DUMP_TARGET, "\nend   dump: %s\n", name)

#ifdef POLYBENCH_DUMP_ARRAYS
# define polybench_prevent_dce(call) call
#else
# define polybench_prevent_dce(call) if (argc > 42) call
#endif

/* zeroed heap memory for n elements of the given size; stops the program when there is none */
static void *polybench_alloc(size_t n, size_t size)
{
  void *p = calloc(n, size);
  if (p == NULL) {
    fprintf(stderr, "polybench_alloc: cannot allocate %lu elements\n", (unsigned long) n);
    exit(1);
  }
  return p;
}

#endif
