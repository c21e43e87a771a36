/* A lower-triangular product and its transposed product, the second reading the first's result. */
double L[N][N]; double x[N]; double y[N];
for (i = 0; i < N; i++) {
  y[i] = 0.0;
  for (j = 0; j <= i; j++)
    y[i] += L[i][j] * x[j];
}
for (j = 0; j < N; j++)
  for (i = j; i < N; i++)
    x[j] += L[i][j] * y[i];
