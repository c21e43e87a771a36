/* Left-looking Cholesky: updates of column j from the columns before it, then the division. */
double A[N][N];
for (j = 0; j < N; j++) {
  for (k = 0; k < j; k++)
    for (i = j; i < N; i++)
      A[i][j] -= A[i][k] * A[j][k];
  A[j][j] = sqrt(A[j][j]);
  for (i = j + 1; i < N; i++)
    A[i][j] /= A[j][j];
}
