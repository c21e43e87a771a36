/* The 2-D wave equation with three time levels: a 5-point step into U2, then two copies that rotate the levels. */
double U0[NX][NY]; double U1[NX][NY]; double U2[NX][NY];
for (t = 0; t < T; t++) {
  for (i = 1; i < NX - 1; i++)
    for (j = 1; j < NY - 1; j++)
      U2[i][j] = 2.0 * U1[i][j] - U0[i][j] + 0.1 * (U1[i + 1][j] + U1[i - 1][j] + U1[i][j + 1] + U1[i][j - 1] - 4.0 * U1[i][j]);
  for (i = 1; i < NX - 1; i++)
    for (j = 1; j < NY - 1; j++)
      U0[i][j] = U1[i][j];
  for (i = 1; i < NX - 1; i++)
    for (j = 1; j < NY - 1; j++)
      U1[i][j] = U2[i][j];
}
