/* C += A^T B: A read down its columns. */
double C[NI][NJ]; double A[NK][NI]; double B[NK][NJ];
for (i = 0; i < NI; i++)
  for (j = 0; j < NJ; j++)
    for (k = 0; k < NK; k++)
      C[i][j] += A[k][i] * B[k][j];
