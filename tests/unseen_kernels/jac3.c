/* Three statements per time step: a 3-point average, a square, a combination. */
double A[N]; double B[N]; double C[N];
for (t = 0; t < T; t++) {
  for (i = 1; i < N - 1; i++)
    B[i] = 0.33 * (A[i - 1] + A[i] + A[i + 1]);
  for (i = 1; i < N - 1; i++)
    C[i] = B[i] * B[i];
  for (i = 1; i < N - 1; i++)
    A[i] = 0.5 * (B[i] + C[i]);
}
