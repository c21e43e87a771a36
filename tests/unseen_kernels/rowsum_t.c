/* Column sums and row sums of squares in one nest. */
double A[N][M]; double s[M]; double r[N];
for (i = 0; i < N; i++)
  for (j = 0; j < M; j++) {
    s[j] += A[i][j];
    r[i] += A[i][j] * A[i][j];
  }
