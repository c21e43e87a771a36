/* A triangular solve with many right-hand sides. */
double X[N][M]; double L[N][N];
for (i = 0; i < N; i++) {
  for (k = 0; k < i; k++)
    for (j = 0; j < M; j++)
      X[i][j] -= L[i][k] * X[k][j];
  for (j = 0; j < M; j++)
    X[i][j] = X[i][j] / L[i][i];
}
