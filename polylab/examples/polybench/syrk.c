/* syrk.c: a symmetric rank-k update of the lower triangle, C := alpha A A^T + beta C (a PolyBench-style file
   written for polylab). Sizes: -DM=.. -DN=.., or a dataset (-DMINI_DATASET, SMALL (default), MEDIUM, LARGE). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "polybench.h"

#ifndef M
# if defined(MINI_DATASET)
#  define M 20
# elif defined(MEDIUM_DATASET)
#  define M 200
# elif defined(LARGE_DATASET)
#  define M 1000
# else
#  define M 60
# endif
#endif
#ifndef N
# if defined(MINI_DATASET)
#  define N 30
# elif defined(MEDIUM_DATASET)
#  define N 240
# elif defined(LARGE_DATASET)
#  define N 1200
# else
#  define N 80
# endif
#endif

#define _PB_M POLYBENCH_LOOP_BOUND(M, m)
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)

static void init_array(int n, int m, DATA_TYPE *alpha, DATA_TYPE *beta, DATA_TYPE POLYBENCH_2D(C, N, N, n, n),
                       DATA_TYPE POLYBENCH_2D(A, N, M, n, m))
{
  int i, j;

  *alpha = SCALAR_VAL(1.5);
  *beta = SCALAR_VAL(1.2);
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      A[i][j] = (DATA_TYPE) ((i * j + 1) % n) / n;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      C[i][j] = (DATA_TYPE) ((i * j + 2) % m) / m;
}

static void print_array(int n, int n_, DATA_TYPE POLYBENCH_2D(C, N, N, n, n_))
{
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("C");
  for (i = 0; i < n; i++)
    for (j = 0; j < n_; j++) {
      if ((i * n_ + j) % 20 == 0)
        fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, C[i][j]);
    }
  POLYBENCH_DUMP_END("C");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_syrk(int n, int m, DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE POLYBENCH_2D(C, N, N, n, n),
                        DATA_TYPE POLYBENCH_2D(A, N, M, n, m))
{
  int i, j, k;

#pragma scop
  for (i = 0; i < _PB_N; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < _PB_M; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N, m = M;
  DATA_TYPE alpha, beta;
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, N, N, n, n);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, M, n, m);

  init_array(n, m, &alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A));
  polybench_start_instruments;
  kernel_syrk(n, m, alpha, beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A));
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(n, n, POLYBENCH_ARRAY(C)));

  POLYBENCH_FREE_ARRAY(C);
  POLYBENCH_FREE_ARRAY(A);
  return 0;
}
