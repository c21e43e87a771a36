/* fdtd-2d.c: a 2-D finite-difference time-domain kernel, the fields ex, ey and hz updated TMAX times from a
   source fict (a PolyBench-style file written for polylab).
   Sizes: -DTMAX=.. -DNX=.. -DNY=.., or a dataset (-DMINI_DATASET, SMALL (default), MEDIUM, LARGE). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "polybench.h"

#ifndef TMAX
# if defined(MINI_DATASET)
#  define TMAX 10
# elif defined(MEDIUM_DATASET)
#  define TMAX 100
# elif defined(LARGE_DATASET)
#  define TMAX 500
# else
#  define TMAX 20
# endif
#endif
#ifndef NX
# if defined(MINI_DATASET)
#  define NX 20
# elif defined(MEDIUM_DATASET)
#  define NX 200
# elif defined(LARGE_DATASET)
#  define NX 1000
# else
#  define NX 60
# endif
#endif
#ifndef NY
# if defined(MINI_DATASET)
#  define NY 30
# elif defined(MEDIUM_DATASET)
#  define NY 240
# elif defined(LARGE_DATASET)
#  define NY 1200
# else
#  define NY 80
# endif
#endif

#define _PB_TMAX POLYBENCH_LOOP_BOUND(TMAX, tmax)
#define _PB_NX POLYBENCH_LOOP_BOUND(NX, nx)
#define _PB_NY POLYBENCH_LOOP_BOUND(NY, ny)

static void init_array(int tmax, int nx, int ny, DATA_TYPE POLYBENCH_2D(ex, NX, NY, nx, ny),
                       DATA_TYPE POLYBENCH_2D(ey, NX, NY, nx, ny), DATA_TYPE POLYBENCH_2D(hz, NX, NY, nx, ny),
                       DATA_TYPE POLYBENCH_1D(fict, TMAX, tmax))
{
  int i, j;

  for (i = 0; i < tmax; i++)
    fict[i] = (DATA_TYPE) i;
  for (i = 0; i < nx; i++)
    for (j = 0; j < ny; j++) {
      ex[i][j] = ((DATA_TYPE) i * (j + 1)) / nx;
      ey[i][j] = ((DATA_TYPE) i * (j + 2)) / ny;
      hz[i][j] = ((DATA_TYPE) i * (j + 3)) / nx;
    }
}

static void print_array(int nx, int ny, DATA_TYPE POLYBENCH_2D(hz, NX, NY, nx, ny))
{
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("hz");
  for (i = 0; i < nx; i++)
    for (j = 0; j < ny; j++) {
      if ((i * ny + j) % 20 == 0)
        fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, hz[i][j]);
    }
  POLYBENCH_DUMP_END("hz");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_fdtd_2d(int tmax, int nx, int ny, DATA_TYPE POLYBENCH_2D(ex, NX, NY, nx, ny),
                           DATA_TYPE POLYBENCH_2D(ey, NX, NY, nx, ny), DATA_TYPE POLYBENCH_2D(hz, NX, NY, nx, ny),
                           DATA_TYPE POLYBENCH_1D(fict, TMAX, tmax))
{
  int t, i, j;

#pragma scop
  for (t = 0; t < _PB_TMAX; t++) {
    for (j = 0; j < _PB_NY; j++)
      ey[0][j] = fict[t];
    for (i = 1; i < _PB_NX; i++)
      for (j = 0; j < _PB_NY; j++)
        ey[i][j] = ey[i][j] - SCALAR_VAL(0.5) * (hz[i][j] - hz[i - 1][j]);
    for (i = 0; i < _PB_NX; i++)
      for (j = 1; j < _PB_NY; j++)
        ex[i][j] = ex[i][j] - SCALAR_VAL(0.5) * (hz[i][j] - hz[i][j - 1]);
    for (i = 0; i < _PB_NX - 1; i++)
      for (j = 0; j < _PB_NY - 1; j++)
        hz[i][j] = hz[i][j] - SCALAR_VAL(0.7) * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int tmax = TMAX, nx = NX, ny = NY;
  POLYBENCH_2D_ARRAY_DECL(ex, DATA_TYPE, NX, NY, nx, ny);
  POLYBENCH_2D_ARRAY_DECL(ey, DATA_TYPE, NX, NY, nx, ny);
  POLYBENCH_2D_ARRAY_DECL(hz, DATA_TYPE, NX, NY, nx, ny);
  POLYBENCH_1D_ARRAY_DECL(fict, DATA_TYPE, TMAX, tmax);

  init_array(tmax, nx, ny, POLYBENCH_ARRAY(ex), POLYBENCH_ARRAY(ey), POLYBENCH_ARRAY(hz), POLYBENCH_ARRAY(fict));
  polybench_start_instruments;
  kernel_fdtd_2d(tmax, nx, ny, POLYBENCH_ARRAY(ex), POLYBENCH_ARRAY(ey), POLYBENCH_ARRAY(hz),
                 POLYBENCH_ARRAY(fict));
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(nx, ny, POLYBENCH_ARRAY(hz)));

  POLYBENCH_FREE_ARRAY(ex);
  POLYBENCH_FREE_ARRAY(ey);
  POLYBENCH_FREE_ARRAY(hz);
  POLYBENCH_FREE_ARRAY(fict);
  return 0;
}
