/* A contraction O[p][q][r] += I[p][q][s] * W[s][r] with short outer loops. */
double O[P][Q][R]; double I[P][Q][S]; double W[S][R];
for (p = 0; p < P; p++)
  for (q = 0; q < Q; q++)
    for (s = 0; s < S; s++)
      for (r = 0; r < R; r++)
        O[p][q][r] += I[p][q][s] * W[s][r];
