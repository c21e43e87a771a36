/* Right-looking Cholesky, column by column. */
double A[N][N];
for (k = 0; k < N; k++) {
  A[k][k] = sqrt(A[k][k]);
  for (i = k + 1; i < N; i++)
    A[i][k] = A[i][k] / A[k][k];
  for (j = k + 1; j < N; j++)
    for (i = j; i < N; i++)
      A[i][j] -= A[i][k] * A[j][k];
}
