/* A banded matrix-vector product with max() and min() in the bounds (C does not define them). */
double A[N][N]; double x[N]; double y[N];
for (i = 0; i < N; i++)
  for (j = max(0, i - 3); j <= min(N - 1, i + 3); j++)
    y[i] += A[i][j] * x[j];
