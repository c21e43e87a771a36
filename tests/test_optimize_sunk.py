"""A loop shared by several statements, strip-mined with its points sunk into each of them
(:func:`polylab.schedule.transform.strip_sink`, the optimizer's :attr:`Structure.STRIP_SUNK`):

* the transformation is the affine map of its docstring, and wherever the exact legality check accepts it
  the program computes what the original does, bit for bit (random affine nests, the reference
  interpreter);
* the optimizer takes it where the shared loop is the stride-1 loop of statements that ran another loop
  inside it: a column sweep with a recurrence along its rows (deriche's) becomes a row walk over strips of
  columns, its scalars kept in buffers indexed by the column (a buffer contracted modulo the strip would
  index the vector loop by a remainder: refused), and gramschmidt's two passes over ``A`` share each
  strip of columns (the distribution that splits them loses that reuse: ``reuse_lost``);
* where it only ties (2mm's product after its initialisation: strips of 32 columns instead of whole rows)
  the other structures win.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import polylab
from polylab.errors import PolylabError
from polylab.reference.interpret import same_live_out
from polylab.schedule import check, original, parse_schedule
from polylab.schedule.core import floor_div
from polylab.schedule.legality import is_legal
from polylab.schedule.optimize import Machine, Structure
from polylab.schedule.optimize.scoring import program_score
from polylab.schedule.optimize.structures import bases, reuse_lost, sinkable_loops
from polylab.schedule.transform import distribute, strip_sink
from polylab.storage import recipe_steps

sys.path.insert(0, str(Path(__file__).parent))
from example_params import scop_of  # noqa: E402
from strategies import PARAMS, affine_nests, bounded_draw  # noqa: E402

COLUMNS = """
void kernel(int w, int h, float a, float b, float imgOut[{W}][{H}], float y[{W}][{H}]) {{
  float tm1, ym1;
#pragma scop
  for (int j = 0; j < h; j++) {{
    tm1 = 0.0f;
    ym1 = 0.0f;
    for (int i = 0; i < w; i++) {{
      y[i][j] = a * imgOut[i][j] + b * tm1 + ym1;
      tm1 = imgOut[i][j];
      ym1 = y[i][j];
    }}
  }}
#pragma endscop
}}
"""

GRAMSCHMIDT = """
void kernel(int m, int n, double A[{M}][{N}], double R[{N}][{N}], double Q[{M}][{N}]) {{
  double nrm;
#pragma scop
  for (int k = 0; k < n; k++) {{
    nrm = 0.0;
    for (int i = 0; i < m; i++)
      nrm += A[i][k] * A[i][k];
    R[k][k] = sqrt(nrm);
    for (int i = 0; i < m; i++)
      Q[i][k] = A[i][k] / R[k][k];
    for (int j = k + 1; j < n; j++) {{
      R[k][j] = 0.0;
      for (int i = 0; i < m; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (int i = 0; i < m; i++)
        A[i][j] = A[i][j] - Q[i][k] * R[k][j];
    }}
  }}
#pragma endscop
}}
"""


def optimized(scop, spec, machine=Machine()):
    return parse_schedule(scop, spec, steps=recipe_steps(machine))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(src=affine_nests(max_depth=3, max_statements=3), size=st.integers(2, 3), data=st.data())
def test_strip_sink_is_its_affine_map_and_exact_where_legal(src, size, data):
    """Every loop dimension of a random nest's source order, strip-mined by 2 or 3 with its points sunk:
    the statements with a loop there get ``floor(t_d / size)`` at ``d`` and ``t_d`` right after the
    group's deepest loop, the others a zero there; where the exact check accepts the schedule, the
    reference interpreter finds the original's values at several parameter values."""
    with bounded_draw():
        try:
            scop = polylab.parse(src).scop
            s = original(scop)
        except PolylabError:
            assume(False)
        assume(s.loop_dims)
        # mostly a loop with another loop inside it (the points then move below that loop)
        outer = [d for d in s.loop_dims if any(not a[e].is_cst() for a in s.affs.values() if not a[d].is_cst()
                                               for e in range(d + 1, len(a)))]
        d = data.draw(st.sampled_from(outer or s.loop_dims))
        sunk = strip_sink(s, d, size)
        group = [n for n, a in s.affs.items() if not a[d].is_cst()]
        p = 1 + max(e for n in group for e, a in enumerate(s.affs[n]) if not a.is_cst())
        for n, a in s.affs.items():
            b = sunk.affs[n]
            assert len(b) == len(a) + 1
            if n in group:
                assert b[d].is_equal(floor_div(a[d], size)) and b[p].is_equal(a[d])
            else:
                assert b[p].is_cst() and b[p].get_pieces()[0][1].get_constant_val().to_python() == 0
        legal = is_legal(sunk)
    event(f"legal: {legal}, the points move below another loop: {d in outer}")
    assume(legal)
    for values in ({"N": 3, "M": 2}, {"N": 5, "M": 4}, {"N": 0, "M": 3}):
        assert same_live_out(scop, scop, {k: values[k] for k in PARAMS}, schedule=sunk.union_map) == [], values


def test_a_column_sweep_runs_along_rows_in_strips_of_columns():
    """deriche's column sweep: the loop on columns ``j`` holds its scalars' resets and the recurrence
    along the rows ``i``; sunk, each strip of 32 columns runs row by row with the columns innermost (the
    vector loop), every scalar in a buffer of one element per column (``expand_scalars``), which
    contraction modulo 32 would index by a remainder: refused with the reason."""
    scop = polylab.parse(COLUMNS.format(W=64, H=80)).scop
    for threads in (1, 2):
        s = optimized(scop, f"optimize({threads})")
        rep = s.provenance.optimize
        assert rep.structure is Structure.STRIP_SUNK, s.notes
        assert all(c.vector for c in rep.choices), rep.choices
        assert "floor((j)/32)" in s.expressions("S2")[0] and s.expressions("S2")[-4:-3] == ["j"], s.text()
        assert any("would index the innermost loop" in line and "remainder" in line for line in s.notes), s.notes
        assert check(s).legal
        for params in ({"w": 5, "h": 40}, {"w": 3, "h": 7}, {"w": 0, "h": 33}):
            assert same_live_out(scop, s.scop, params, schedule=s.union_map) == [], params
    from polylab.experiment import verify

    v = verify(scop, optimized(scop, "optimize(2)"), "openmp", params={"w": 17, "h": 70}, threads=2)
    assert v.verified, v.reason


def test_gramschmidt_shares_its_strips_of_columns_between_its_two_passes():
    """The two passes over ``A`` along ``i`` inside the loop on ``j``: distributed, each streams ``A``
    (``reuse_lost`` counts the pair: they read the same elements ``A[i][j]`` with every loop inside
    ``k``); sunk, they share each strip of 32 columns, both with the columns as their vector loop."""
    scop = polylab.parse(GRAMSCHMIDT.format(M=300, N=320)).scop
    s = optimized(scop, "optimize(1)")
    rep = s.provenance.optimize
    assert rep.structure is Structure.STRIP_SUNK, s.notes
    deep = {c.statement: c for c in rep.choices if c.statement in ("S5", "S6")}
    assert all(c.vector for c in deep.values()), deep
    plain = original(scop)
    level = plain.loop_dims[0] + 1
    assert reuse_lost(plain, distribute(plain, level)) >= 1
    assert any(b.structure is Structure.STRIP_SUNK and reuse_lost(plain, b.schedule) == 0
               for b in bases(plain, Machine()))
    assert check(s).legal
    for params in ({"m": 4, "n": 35}, {"m": 3, "n": 5}, {"m": 6, "n": 40}):
        assert same_live_out(scop, s.scop, params, schedule=s.union_map) == [], params


@pytest.mark.parametrize("name", ["polybench/2mm.c", "polybench/3mm.c", "polybench/trmm.c", "gemm.c"])
def test_strips_that_only_tie_leave_the_whole_rows(name):
    """Where the sunk strips score the same as another structure (an initialisation sharing the product's
    loop: 2mm's ``tmp[i][j] = 0`` and ``tmp[i][j] += ..``), the other structure wins: strips of 32 columns
    instead of whole rows ran at 0.77x (2mm at PolyBench's MEDIUM size, one thread, measured)."""
    for threads in (1, 2):
        s = optimized(scop_of(name), f"optimize({threads})")
        assert s.provenance.optimize.structure is not Structure.STRIP_SUNK, (name, threads, s.notes)


def test_doitgen_keeps_its_sums_in_a_strip_of_columns():
    """doitgen's ``sum[p] += A[r][q][s] * C4[s][p]`` inside the loop on ``p`` that its reset shares:
    sunk, the strip of 32 sums runs along ``s`` with ``p`` as the vector loop (it ran ``p`` rows of dot
    products along ``s``: 2.2x at PolyBench's MEDIUM size, one thread, measured)."""
    s = optimized(scop_of("polybench/doitgen.c"), "optimize(1)")
    rep = s.provenance.optimize
    assert rep.structure is Structure.STRIP_SUNK and sinkable_loops(original(scop_of("polybench/doitgen.c")))
    assert next(c for c in rep.choices if c.statement == "S1").vector


def test_one_thread_counts_no_loops_outside_the_parallel_ones():
    """With one thread no loop starts a team: the score's last field is zero, so it breaks no tie."""
    s = optimized(scop_of("seidel2d.c"), "optimize(2)")
    choices = s.provenance.optimize.choices
    assert program_score(s, choices, 2).outer_loops > 0, s.text()     # the wave around its parallel tiles
    assert program_score(s, choices, 1).outer_loops == 0
