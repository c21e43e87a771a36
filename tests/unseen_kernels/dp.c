/* An int dynamic program with max() over a split point (nussinov-like). */
int T2[N][N]; int w[N];
for (i = N - 1; i >= 0; i--)
  for (j = i + 1; j < N; j++) {
    T2[i][j] = max(T2[i][j], T2[i + 1][j] + w[j]);
    for (k = i; k < j; k++)
      T2[i][j] = max(T2[i][j], T2[i][k] + T2[k + 1][j]);
  }
