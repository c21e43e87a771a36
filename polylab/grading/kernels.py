"""The loop nests of the course, as the labs write them, and their models (parsed once per process).

The checks of ``polylab/grading/labs/`` compute every expected answer from these texts with the engine;
the solved notebooks show the same texts in their ``%%scop`` cells (``tests/test_labs.py`` checks that
each text appears in its lab).
"""

from __future__ import annotations

from functools import cache

from polylab.corpus import example_path
from polylab.frontend import parse, parse_file
from polylab.model import Scop

SWEEP = """double a[N][N];
for (i = 1; i < N; i++)
  for (j = 1; j < N; j++)
    a[i][j] = a[i - 1][j] + a[i][j - 1];
"""

SHIFT = """double Z[N];
for (i = 1; i < N; i++)
  for (j = 0; j < M; j++)
    Z[i - 1] = Z[i - 1] + 0.5 * j;
"""

SEIDEL = """double A[N][N];
for (t = 0; t <= T - 1; t++)
  for (i = 1; i <= N - 2; i++)
    for (j = 1; j <= N - 2; j++)
      A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
               + A[i][j - 1] + A[i][j] + A[i][j + 1]
               + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
"""


@cache
def scop(source: str) -> Scop:
    """The (single) SCoP of a C fragment."""
    return parse(source).scop


@cache
def sl3() -> Scop:
    """The shipped ``sl3.sy``: the initialisation ``S0`` and the sweep ``S1``."""
    return parse_file(example_path("sl3.sy")).scop


__all__ = ["SEIDEL", "SHIFT", "SWEEP", "scop", "sl3"]
