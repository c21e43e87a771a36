/* Three products in a chain, the third with both operands transposed. */
double A[N][N]; double B[N][N]; double C[N][N]; double D[N][N]; double E[N][N];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++) {
    C[i][j] = 0.0;
    for (k = 0; k < N; k++)
      C[i][j] += A[i][k] * B[k][j];
  }
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++) {
    D[i][j] = 0.5 * C[i][j];
    for (k = 0; k < N; k++)
      D[i][j] += C[i][k] * A[k][j];
  }
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    for (k = 0; k < N; k++)
      E[i][j] += D[k][i] * B[j][k];
