/* A product over a triangle of triangles: k runs from i to j. */
double X[N][N]; double A[N][N];
for (i = 0; i < N; i++)
  for (j = i; j < N; j++)
    for (k = i; k <= j; k++)
      X[i][j] += A[i][k] * A[k][j];
