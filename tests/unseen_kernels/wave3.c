/* A 3-D recurrence: each point depends on its three lower neighbours. */
double U[N][N][N];
for (i = 1; i < N; i++)
  for (j = 1; j < N; j++)
    for (k = 1; k < N; k++)
      U[i][j][k] = 0.3 * (U[i - 1][j][k] + U[i][j - 1][k] + U[i][j][k - 1]);
