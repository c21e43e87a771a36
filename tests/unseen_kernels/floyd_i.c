/* Floyd-Warshall on ints with min(). */
int P2[N][N];
for (k = 0; k < N; k++)
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      P2[i][j] = min(P2[i][j], P2[i][k] + P2[k][j]);
