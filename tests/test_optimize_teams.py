"""The work of an OpenMP team where the program has parameters: the sizes the arrays' declarations allow
(:func:`~polylab.schedule.optimize.machine.declared_sizes`), the team's work counted there
(:func:`~polylab.schedule.optimize.team_work`), and the loops left sequential because of it.

Each count is checked against a brute-force enumeration of the same loops in Python.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polylab
from polylab.schedule import original, parse_schedule
from polylab.schedule.optimize import MIN_TEAM_WORK, Machine, SerialReason, loop_dims, team_work
from polylab.schedule.optimize.openmp import team_least, team_work_bound
from polylab.schedule.optimize.explain import serial_line
from polylab.schedule.optimize.machine import declared_sizes
from polylab.storage import recipe_steps

#: ludcmp's upper update after its scalar is homed: each row ``i`` starts a team over ``j``
UPPER = """void kernel(int n, double A[{N}][{N}]) {{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = i; j < n; j++)
      for (k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
#pragma endscop
}}"""


#: rows that cannot be distributed (row ``i``'s update reads ``s[i]``, the next row's sum reads what it
#: wrote): the parallel ``j`` runs inside the sequential ``i``, one team per row of ``n^2`` instances
ROWS = """void kernel(int n, double s[{N}], double A[{N}][{N}], double D[{N}][{N}]) {{
  int i, j, k, l;
#pragma scop
  for (i = 1; i < n; i++) {{
    for (k = 0; k < i; k++)
      s[i] += D[k][i] * s[k];
    for (j = 0; j < n; j++)
      for (l = 0; l < n; l++)
        D[j][l] += s[i] * A[j][l];
  }}
#pragma endscop
}}"""


#: a time loop around each sweep: a team per sweep, ``n - 2`` instances each, whatever ``t``
JACOBI = """void k(int t, int n, double A[{N}], double B[{N}]) {{
  int s, i;
#pragma scop
  for (s = 0; s < t; s++) {{
    for (i = 1; i < n - 1; i++) B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (i = 1; i < n - 1; i++) A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }}
#pragma endscop
}}"""


def scop(text: str):
    return polylab.parse(text).scop


def test_declared_sizes_are_the_largest_the_arrays_allow():
    s = scop("""void k(int n, int m, double A[40][30], double x[30]) {
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) for (j = 0; j < m; j++) A[i][j] = x[j];
#pragma endscop
}""")
    assert declared_sizes(s) == {"n": 40, "m": 30}
    # a subscript shifted by one: the loop may run one row less
    assert declared_sizes(scop(UPPER.format(N=24).replace("A[i][j] -=", "A[i + 1][j] -="))) == {"n": 23}
    # the context fixes them (``--param``): those values
    assert declared_sizes(s.with_parameters({"n": 7, "m": 3})) == {"n": 7, "m": 3}
    # a time count that no subscript bounds: as large as the largest bounded size
    assert declared_sizes(scop(JACOBI.format(N=50))) == {"t": 50, "n": 50}
    # only such counts: unknown
    assert declared_sizes(scop("""void k(int t, double x[1]) {
  int s;
#pragma scop
  for (s = 0; s < t; s++) x[0] = 0.5 * x[0];
#pragma endscop
}""")) is None
    # an array declared with a parameter's extent: unknown
    assert declared_sizes(scop("""void k(int n, double A[n]) {
  int i;
#pragma scop
  for (i = 0; i < n; i++) A[i] = 2.0 * A[i];
#pragma endscop
}""")) is None


@settings(max_examples=25, deadline=None)
@given(extent=st.integers(1, 40), low=st.integers(0, 4), cut=st.integers(-3, 3), shift=st.integers(-3, 3))
def test_declared_sizes_agree_with_brute_force(extent, low, cut, shift):
    """``for (i = low; i < n - cut; i++) A[i + shift] = ...`` over ``double A[extent]``: the largest ``n`` at
    which the loop runs and every access stays inside ``A``, found by trying every ``n``."""
    s = scop(f"""void k(int n, double A[{extent}]) {{
  int i;
#pragma scop
  for (i = {low}; i < n - ({cut}); i++) A[i + ({shift})] = 2.0 * A[i + ({shift})];
#pragma endscop
}}""")

    def allowed(n: int) -> bool:
        rows = range(low, n - cut)
        return len(rows) > 0 and all(0 <= i + shift < extent for i in rows)

    fits = [n for n in range(-10, extent + 20) if allowed(n)]
    assert declared_sizes(s) == ({"n": max(fits)} if fits else None)


@pytest.mark.parametrize("size", [5, 24])
def test_team_work_is_counted_at_the_declared_sizes(size):
    s = original(scop(UPPER.format(N=size)))
    i_dim, j_dim = loop_dims(s, "S0")[:2]
    points = [(i, j, k) for i, j, k in itertools.product(range(size), repeat=3) if j >= i and k < i]
    # the team over j starts once per row i that runs an instance; over i, once
    assert team_work(s, j_dim, ["S0"]) == (len({p[0] for p in points}), len(points))
    assert team_work(s, i_dim, ["S0"]) == (1, len(points))


def test_little_work_per_team_leaves_the_loop_sequential_and_says_where_it_counted():
    machine = Machine(threads=2)

    def optimized(n: int):
        return parse_schedule(scop(ROWS.format(N=n)), "optimize(2)", steps=recipe_steps(machine))

    small = optimized(64)
    serial = [x for x in small.provenance.optimize.serial if x.reason is SerialReason.LITTLE_WORK]
    assert serial and serial[0].sizes == (("n", 64),)
    # rows i = 1..63, each a team over the 64 x 64 instances of the update
    assert (serial[0].starts, serial[0].instances) == (63, 63 * 64 * 64)
    assert serial[0].instances < MIN_TEAM_WORK * serial[0].starts
    assert "counted at n = 64, the largest sizes the arrays' declarations allow" in serial_line(serial[0])
    assert not small.marked
    large = optimized(2000)
    assert large.marked
    assert not any(x.reason is SerialReason.LITTLE_WORK for x in large.provenance.optimize.serial)


def test_wider_vectors_need_more_work_per_team():
    """A team start costs the same whatever the vectors; an instance costs less with wider ones: the work a
    start must get grows with the build's vector width (:func:`team_least`). The rows' teams of 256 x 256
    instances at n = 256 are kept with 16-byte vectors, and the same loop is left sequential where the
    vectors are 4 times as wide."""
    assert team_least(16) == MIN_TEAM_WORK and team_least(32) == 2 * MIN_TEAM_WORK
    assert team_least(64) == 4 * MIN_TEAM_WORK and team_least(8) == MIN_TEAM_WORK

    def serial(vector: int):
        machine = Machine(threads=2, vector_bytes=vector)
        s = parse_schedule(scop(ROWS.format(N=256)), "optimize(2)", steps=recipe_steps(machine))
        return s, [x for x in s.provenance.optimize.serial if x.reason is SerialReason.LITTLE_WORK]

    narrow, none = serial(16)
    # rows i = 1..255, each a team over 256 x 256 instances: more than MIN_TEAM_WORK, fewer than 4 times it
    assert MIN_TEAM_WORK < 256 * 256 < 4 * MIN_TEAM_WORK
    assert narrow.marked and not none
    wide, some = serial(64)
    assert not wide.marked and some and some[0].least == 4 * MIN_TEAM_WORK
    assert f"fewer than {4 * MIN_TEAM_WORK}" in serial_line(some[0])


#: doitgen: the sums of one (r, q) in a shared array, so r and q run in sequence and the parallel loop over p
#: inside them starts a team per (r, q)
DOITGEN = """void kernel(int nr, int nq, int np, double A[{N}][{N}][{N}], double C4[{N}][{N}], double sum[{N}]) {{
  int r, q, p, s;
#pragma scop
  for (r = 0; r < nr; r++)
    for (q = 0; q < nq; q++) {{
      for (p = 0; p < np; p++) {{
        sum[p] = 0.0;
        for (s = 0; s < np; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }}
      for (p = 0; p < np; p++)
        A[r][q][p] = sum[p];
    }}
#pragma endscop
}}"""


def test_too_many_instances_to_count_are_bounded_by_their_boxes():
    """Where the instances are too many to count (doitgen at n = 64: 262,144 rows of ``r, q, p``), their
    bounding boxes bound them from above, never below (checked against the exact count where it can be
    made), and a bound below the work a start needs leaves the loop sequential: 4,096 starts of at most
    64 x 64 + 64 instances each."""
    small = original(scop(DOITGEN.format(N=8)))
    for d in loop_dims(small, "S1")[:3]:
        exact, bound = team_work(small, d, ["S0", "S1"]), team_work_bound(small, d, ["S0", "S1"])
        assert exact is not None and bound is not None and bound[0] == exact[0] and bound[1] >= exact[1]
    big = original(scop(DOITGEN.format(N=64)))
    p_dim = loop_dims(big, "S1")[2]
    assert team_work(big, p_dim, ["S0", "S1"]) is None
    assert team_work_bound(big, p_dim, ["S0", "S1"]) == (64 * 64, 64 ** 4 + 64 ** 3)
    s = parse_schedule(scop(DOITGEN.format(N=64)), "optimize(2)", steps=recipe_steps(Machine(threads=2)))
    serial = [x for x in s.provenance.optimize.serial if x.reason is SerialReason.LITTLE_WORK]
    assert serial and serial[0].bounded and serial[0].starts == 64 * 64, s.provenance.optimize.serial
    assert "for at most" in serial_line(serial[0]) and not s.marked


@pytest.mark.parametrize("size", [400, 200000])
def test_a_time_loop_around_the_teams_counts_as_large_as_the_arrays(size):
    """jacobi-1d at PolyBench's MEDIUM size: 400 points a sweep, a team per sweep, sequential (0.01x of the
    original on two threads with OpenMP); with 200,000 points a sweep the teams stay."""
    s = parse_schedule(scop(JACOBI.format(N=size)), "optimize(2)", steps=recipe_steps(Machine(threads=2)))
    serial = [x for x in s.provenance.optimize.serial if x.reason is SerialReason.LITTLE_WORK]
    if size == 400:
        assert not s.marked and serial and all(x.sizes == (("t", 400), ("n", 400)) for x in serial)
        assert all(x.instances // x.starts == size - 2 for x in serial)
    else:
        assert s.marked and not serial
