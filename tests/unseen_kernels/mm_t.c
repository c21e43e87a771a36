/* Two products, the second reading the first's result transposed (D[k][i]). */
double D[N][N]; double A[N][N]; double B[N][N]; double E[N][N]; double C[N][N];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++) {
    D[i][j] = 0.0;
    for (k = 0; k < N; k++)
      D[i][j] += A[i][k] * B[k][j];
  }
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++) {
    E[i][j] = 0.0;
    for (k = 0; k < N; k++)
      E[i][j] += D[k][i] * C[k][j];
  }
