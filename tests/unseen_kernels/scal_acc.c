/* An NT product summed in a file-scope scalar (its last value is live after the region). */
double C[N][N]; double A[N][N]; double B[N][N]; double s;
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++) {
    s = 0.0;
    for (k = 0; k < N; k++)
      s += A[i][k] * B[j][k];
    C[i][j] = s * 0.5;
  }
