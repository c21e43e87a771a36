/* seidel-2d.c: a nine-point Gauss-Seidel sweep over a grid, TSTEPS times, in place (a PolyBench-style file
   written for polylab). Sizes: -DTSTEPS=.. -DN=.., or a dataset (-DMINI_DATASET, SMALL (default), MEDIUM, LARGE). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "polybench.h"

#ifndef TSTEPS
# if defined(MINI_DATASET)
#  define TSTEPS 10
# elif defined(MEDIUM_DATASET)
#  define TSTEPS 100
# elif defined(LARGE_DATASET)
#  define TSTEPS 500
# else
#  define TSTEPS 20
# endif
#endif
#ifndef N
# if defined(MINI_DATASET)
#  define N 20
# elif defined(MEDIUM_DATASET)
#  define N 400
# elif defined(LARGE_DATASET)
#  define N 2000
# else
#  define N 40
# endif
#endif

#define _PB_TSTEPS POLYBENCH_LOOP_BOUND(TSTEPS, tsteps)
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)

static void init_array(int n, DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
  int i, j;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = ((DATA_TYPE) i * (j + 2) + 2) / n;
}

static void print_array(int n, int n_, DATA_TYPE POLYBENCH_2D(A, N, N, n, n_))
{
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < n; i++)
    for (j = 0; j < n_; j++) {
      if ((i * n_ + j) % 20 == 0)
        fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j]);
    }
  POLYBENCH_DUMP_END("A");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_seidel_2d(int tsteps, int n, DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
  int t, i, j;

#pragma scop
  for (t = 0; t <= _PB_TSTEPS - 1; t++)
    for (i = 1; i <= _PB_N - 2; i++)
      for (j = 1; j <= _PB_N - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                   + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / SCALAR_VAL(9.0);
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, tsteps = TSTEPS;
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, N, n, n);

  init_array(n, POLYBENCH_ARRAY(A));
  polybench_start_instruments;
  kernel_seidel_2d(tsteps, n, POLYBENCH_ARRAY(A));
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(n, n, POLYBENCH_ARRAY(A)));

  POLYBENCH_FREE_ARRAY(A);
  return 0;
}
