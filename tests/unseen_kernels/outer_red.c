/* A rank-1 update followed by two matrix-vector products, one transposed. */
double A[N][N]; double u[N]; double v[N]; double x[N]; double y[N];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    A[i][j] += u[i] * v[j];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    y[i] += A[i][j] * x[j];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    x[j] += A[i][j] * y[i];
