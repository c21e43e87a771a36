/* Two accumulations in one statement body of a product nest. */
double C[NI][NJ]; double A[NI][NK]; double B[NK][NJ]; double D[NI][NJ];
for (i = 0; i < NI; i++)
  for (j = 0; j < NJ; j++)
    for (k = 0; k < NK; k++) {
      C[i][j] += A[i][k] * B[k][j];
      D[i][j] += A[i][k] * A[i][k] * B[k][j];
    }
