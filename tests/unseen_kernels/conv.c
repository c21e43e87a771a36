/* A 5 x 5 convolution: two short loops inside the long ones. */
double out[N][N]; double in[N + 4][N + 4]; double w[5][5];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    for (p = 0; p < 5; p++)
      for (q = 0; q < 5; q++)
        out[i][j] += in[i + p][j + q] * w[p][q];
