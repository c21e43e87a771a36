/* max(), MIN(), floord() and ceild() on doubles and ints, in bounds, subscripts and statements. */
double y[N]; double x[N]; double A[N][N];
for (i = 0; i < N; i++)
  for (j = MAX(0, i - 3); j <= min(N - 1, i + 3); j++)
    y[i] = max(y[i], A[i][j] * x[j] + 0.25);
for (i = 0; i < N; i++)
  x[i] = MIN(x[i], y[floord(i, 2)]) + ceild(i, 3);
