/* LU in its column (left-looking) form: the parallel loop walks down a column. */
double A[N][N];
for (j = 0; j < N; j++) {
  for (k = 0; k < j; k++)
    for (i = k + 1; i < N; i++)
      A[i][j] -= A[i][k] * A[k][j];
  for (i = j + 1; i < N; i++)
    A[i][j] /= A[j][j];
}
