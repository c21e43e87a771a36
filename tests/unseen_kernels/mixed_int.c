/* A Smith-Waterman-like int recurrence with a conditional expression and nested max(). */
int H[N][M]; int a[N]; int b[M];
for (i = 1; i < N; i++)
  for (j = 1; j < M; j++)
    H[i][j] = max(H[i - 1][j - 1] + (a[i] == b[j] ? 2 : -1), max(H[i - 1][j] - 1, H[i][j - 1] - 1));
