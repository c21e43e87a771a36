/* A backward recurrence x[i] = f(x[i + 1]) and a rank-1 update of the upper triangle. */
double x[N]; double y[N]; double L[N][N];
for (i = N - 2; i >= 0; i--) {
  x[i] = x[i + 1] * 0.5 + y[i];
  for (j = i + 1; j < N; j++)
    L[i][j] = L[i][j] + x[i] * x[j];
}
