/* Triangular product with a column read A[k][i] and a sum from below the diagonal, then a scaling. */
double B[M][N]; double A[M][M];
for (i = 0; i < M; i++)
  for (j = 0; j < N; j++) {
    for (k = i + 1; k < M; k++)
      B[i][j] += A[k][i] * B[k][j];
    B[i][j] = 1.5 * B[i][j];
  }
