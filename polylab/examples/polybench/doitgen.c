/* doitgen.c: a multiresolution-analysis kernel, each slice A[r][q] multiplied by C4 through a temporary sum
   (a PolyBench-style file written for polylab).
   Sizes: -DNQ=.. -DNR=.. -DNP=.., or a dataset (-DMINI_DATASET, SMALL (default), MEDIUM, LARGE). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "polybench.h"

#ifndef NQ
# if defined(MINI_DATASET)
#  define NQ 8
# elif defined(MEDIUM_DATASET)
#  define NQ 40
# elif defined(LARGE_DATASET)
#  define NQ 140
# else
#  define NQ 20
# endif
#endif
#ifndef NR
# if defined(MINI_DATASET)
#  define NR 10
# elif defined(MEDIUM_DATASET)
#  define NR 50
# elif defined(LARGE_DATASET)
#  define NR 150
# else
#  define NR 25
# endif
#endif
#ifndef NP
# if defined(MINI_DATASET)
#  define NP 12
# elif defined(MEDIUM_DATASET)
#  define NP 60
# elif defined(LARGE_DATASET)
#  define NP 160
# else
#  define NP 30
# endif
#endif

#define _PB_NQ POLYBENCH_LOOP_BOUND(NQ, nq)
#define _PB_NR POLYBENCH_LOOP_BOUND(NR, nr)
#define _PB_NP POLYBENCH_LOOP_BOUND(NP, np)

static void init_array(int nr, int nq, int np, DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np),
                       DATA_TYPE POLYBENCH_2D(C4, NP, NP, np, np))
{
  int i, j, k;

  for (i = 0; i < nr; i++)
    for (j = 0; j < nq; j++)
      for (k = 0; k < np; k++)
        A[i][j][k] = (DATA_TYPE) ((i * j + k) % np) / np;
  for (i = 0; i < np; i++)
    for (j = 0; j < np; j++)
      C4[i][j] = (DATA_TYPE) (i * j % np) / np;
}

static void print_array(int nr, int nq, int np, DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np))
{
  int i, j, k;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < nr; i++)
    for (j = 0; j < nq; j++)
      for (k = 0; k < np; k++) {
        if ((i * nq * np + j * np + k) % 20 == 0)
          fprintf(POLYBENCH_DUMP_TARGET, "\n");
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j][k]);
      }
  POLYBENCH_DUMP_END("A");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_doitgen(int nr, int nq, int np, DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np),
                           DATA_TYPE POLYBENCH_2D(C4, NP, NP, np, np), DATA_TYPE POLYBENCH_1D(sum, NP, np))
{
  int r, q, p, s;

#pragma scop
  for (r = 0; r < _PB_NR; r++)
    for (q = 0; q < _PB_NQ; q++) {
      for (p = 0; p < _PB_NP; p++) {
        sum[p] = SCALAR_VAL(0.0);
        for (s = 0; s < _PB_NP; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < _PB_NP; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int nr = NR, nq = NQ, np = NP;
  POLYBENCH_3D_ARRAY_DECL(A, DATA_TYPE, NR, NQ, NP, nr, nq, np);
  POLYBENCH_1D_ARRAY_DECL(sum, DATA_TYPE, NP, np);
  POLYBENCH_2D_ARRAY_DECL(C4, DATA_TYPE, NP, NP, np, np);

  init_array(nr, nq, np, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(C4));
  polybench_start_instruments;
  kernel_doitgen(nr, nq, np, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(C4), POLYBENCH_ARRAY(sum));
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(nr, nq, np, POLYBENCH_ARRAY(A)));

  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(sum);
  POLYBENCH_FREE_ARRAY(C4);
  return 0;
}
