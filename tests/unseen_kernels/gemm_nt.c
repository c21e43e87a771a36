/* C += A B^T: B read across its rows for each column of C. */
double C[NI][NJ]; double A[NI][NK]; double B[NJ][NK];
for (i = 0; i < NI; i++)
  for (j = 0; j < NJ; j++)
    for (k = 0; k < NK; k++)
      C[i][j] += A[i][k] * B[j][k];
