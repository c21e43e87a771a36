/* A summed-area table: dependences along both dimensions. */
double Sum[N][N];
for (i = 1; i < N; i++)
  for (j = 1; j < N; j++)
    Sum[i][j] = Sum[i][j] + Sum[i - 1][j] + Sum[i][j - 1] - Sum[i - 1][j - 1];
