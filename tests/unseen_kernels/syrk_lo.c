/* Lower-triangular rank-k update: the row of A[j] read down its columns' rows; j's bound depends on i. */
double C[N][N]; double A[N][M];
for (i = 0; i < N; i++)
  for (j = 0; j <= i; j++)
    for (k = 0; k < M; k++)
      C[i][j] += A[i][k] * A[j][k];
