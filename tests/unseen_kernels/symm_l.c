/* symm's lower part with a file-scope scalar accumulator. */
double C[M][N]; double A[M][M]; double B[M][N]; double t2;
for (i = 0; i < M; i++)
  for (j = 0; j < N; j++) {
    t2 = 0.0;
    for (k = 0; k < i; k++) {
      C[k][j] += 1.5 * B[i][j] * A[i][k];
      t2 += B[k][j] * A[i][k];
    }
    C[i][j] = 1.2 * C[i][j] + 1.5 * B[i][j] * A[i][i] + 1.5 * t2;
  }
