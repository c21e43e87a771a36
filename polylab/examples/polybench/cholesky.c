/* cholesky.c: the Cholesky factor L of a symmetric positive definite matrix, A = L L^T, computed in place in
   the lower triangle of A (a PolyBench-style file written for polylab).
   Sizes: -DN=.., or a dataset (-DMINI_DATASET, SMALL (default), MEDIUM, LARGE). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "polybench.h"

#ifndef N
# if defined(MINI_DATASET)
#  define N 40
# elif defined(MEDIUM_DATASET)
#  define N 400
# elif defined(LARGE_DATASET)
#  define N 2000
# else
#  define N 120
# endif
#endif

#define _PB_N POLYBENCH_LOOP_BOUND(N, n)

/* A := B B^T for a lower triangular B with a positive diagonal: positive definite */
static void init_array(int n, DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
  int i, j, k;
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, N, N, n, n);

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      (*B)[i][j] = j < i ? (DATA_TYPE) ((i + j) % n) / n : (j == i ? 1 : 0);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      A[i][j] = 0;
      for (k = 0; k < n; k++)
        A[i][j] += (*B)[i][k] * (*B)[j][k];
    }
  POLYBENCH_FREE_ARRAY(B);
}

static void print_array(int n, DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < n; i++)
    for (j = 0; j <= i; j++) {
      if ((i * n + j) % 20 == 0)
        fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j]);
    }
  POLYBENCH_DUMP_END("A");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_cholesky(int n, DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
  int i, j, k;

#pragma scop
  for (i = 0; i < _PB_N; i++) {
    /* the row i left of the diagonal */
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[j][k];
      A[i][j] /= A[j][j];
    }
    /* the diagonal element */
    for (k = 0; k < i; k++)
      A[i][i] -= A[i][k] * A[i][k];
    A[i][i] = SQRT_FUN(A[i][i]);
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, N, n, n);

  init_array(n, POLYBENCH_ARRAY(A));
  polybench_start_instruments;
  kernel_cholesky(n, POLYBENCH_ARRAY(A));
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(A)));

  POLYBENCH_FREE_ARRAY(A);
  return 0;
}
