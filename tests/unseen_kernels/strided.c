/* A 1-D smoothing with stride 2 in a time loop, copied back. */
double a[N]; double b[N];
for (t = 0; t < T; t++) {
  for (i = 2; i < N - 2; i += 2)
    b[i] = 0.25 * (a[i - 2] + 2.0 * a[i] + a[i + 2]);
  for (i = 2; i < N - 2; i += 2)
    a[i] = b[i];
}
