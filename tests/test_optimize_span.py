"""A parallel loop of a few iterations is no parallelism worth a thread team: the optimizer counts a
loop as parallel only when its number of values grows with the parameters (or is large), and a time
dimension that takes one value is no loop (:func:`polylab.schedule.optimize.value_span`, exact)."""

from __future__ import annotations

import islpy as isl
import pytest

import polylab
from polylab.reference.interpret import same_live_out
from polylab.schedule import parse_schedule
from polylab.schedule.optimize import MIN_PARALLEL_SPAN, Machine, ShapeKind, iterator_of, value_span
from polylab.schedule.tuning import OUTER_ITERATIONS_PER_THREAD
from polylab.storage import recipe_steps

# a time loop of 10 steps around a strided recurrence: the only parallel loop a tile-level wavefront
# can offer is t (10 values) inside the sequential wave over n; OpenMP started it once per wave step
SHORT_TIME = """
void k(int n, double b[n + 1], double c[n + 1]) {
#pragma scop
  for (int i = 1; i < n; i++)
    c[i] = b[i] - b[i - 1];
  for (int t = 0; t < 10; t++)
    for (int i = 2; i < n; i += 2)
      c[i] = c[i] + 0.25 * c[i - 2];
#pragma endscop
}
"""


@pytest.mark.parametrize("aff, domain, span", [
    ("[n] -> { S[t, i] -> [(floor(t / 128))] }", "[n] -> { S[t, i] : 0 <= t < 10 and 0 <= i < n }", 1),
    ("[n] -> { S[t, i] -> [(t)] }", "[n] -> { S[t, i] : 0 <= t < 10 and 0 <= i < n }", 10),
    ("[n] -> { S[t, i] -> [(floor(t / 4))] }", "[n] -> { S[t, i] : 0 <= t < 10 and 0 <= i < n }", 3),
    ("[n] -> { S[t, i] -> [(i + 3t)] }", "[n] -> { S[t, i] : 0 <= t < 10 and 0 <= i < n }", None),
    ("[n] -> { S[t, i] -> [(i)] }", "[n] -> { S[t, i] : 0 <= t < 10 and 0 <= i < n and i < 7 }", 7),
    ("[n] -> { S[t, i] -> [(i)] }", "[n] -> { S[t, i] : 0 <= t < 10 and 0 <= i < n and n < 0 }", 0),
])
def test_value_span_is_exact(aff, domain, span):
    assert value_span(isl.PwAff(aff), isl.Set(domain)) == span


def test_a_short_parallel_loop_is_not_chosen_over_the_source_order():
    scop = polylab.parse(SHORT_TIME).scop
    for threads in (1, 2):
        s = parse_schedule(scop, f"optimize({threads})", steps=recipe_steps(Machine()))
        rec = next(c for c in s.provenance.optimize.choices if c.statement == "S1")
        assert rec.kind is ShapeKind.KEEP, rec.why          # no strips or wavefront around the 10-step t loop
        for d in s.marked:                           # and no OpenMP loop of a handful of iterations
            a = s.affs["S1"][d]
            if not a.is_cst():
                span = value_span(a, s.scop.statement("S1").domain)
                assert span is None or span >= MIN_PARALLEL_SPAN
        assert same_live_out(scop, s.scop, {"n": 23}, schedule=s.union_map) == []


# a 3 x 3 convolution: the compiler unrolls the a, b loops, keeps the 9-term sum of out[i][j] in a
# register and vectorizes j around them; moving j inside a and b (to make it the innermost loop) streams
# out[i] nine times per row instead (0.55x of the original)
CONV = """
void conv(int n, double img[n + 2][n + 2], double w[3][3], double out[n][n]) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      out[i][j] = 0.0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          out[i][j] += w[a][b] * img[i + a][j + b];
    }
#pragma endscop
}
"""


def test_loops_of_a_few_constant_iterations_count_as_unrolled():
    scop = polylab.parse(CONV).scop
    for threads in (1, 2):
        s = parse_schedule(scop, f"optimize({threads})", steps=recipe_steps(Machine()))
        rec = next(c for c in s.provenance.optimize.choices if c.statement == "S1")
        assert rec.kind is ShapeKind.KEEP and rec.vector, rec.why  # j stays around the unrolled a, b: a vector loop
        assert same_live_out(scop, s.scop, {"n": 7}, schedule=s.union_map) == []


# a contraction over a short outer loop: p (20 values) and q (3) are below MIN_PARALLEL_SPAN; r, the only
# long parallel loop, is the stride-1 one
CONTRACTION = """
void k(double O[20][3][40], double I[20][3][5], double W[5][40]) {
#pragma scop
  for (int p = 0; p < 20; p++)
    for (int q = 0; q < 3; q++)
      for (int s = 0; s < 5; s++)
        for (int r = 0; r < 40; r++)
          O[p][q][r] += I[p][q][s] * W[s][r];
#pragma endscop
}
"""


@pytest.mark.parametrize("threads", [2, 4, 16])
def test_a_short_outermost_loop_shares_its_nest_among_the_threads(threads):
    """With threads, a statement's outermost parallel loop counts as parallel from a few iterations per
    thread (one team for the whole nest): p stays outermost and r innermost, a vector loop, where r had
    been moved outermost (leaving a reduction loop innermost). With fewer than four iterations of p per
    thread, p is not the parallel loop."""
    scop = polylab.parse(CONTRACTION).scop
    s = parse_schedule(scop, f"optimize({threads})", steps=recipe_steps(Machine()))
    rec = next(c for c in s.provenance.optimize.choices if c.statement == "S0")
    stmt = s.scop.statement("S0")
    first = iterator_of(next(a for a in s.affs["S0"] if not a.is_cst()), stmt)
    if threads * OUTER_ITERATIONS_PER_THREAD <= 20:
        last = iterator_of([a for a in s.affs["S0"] if not a.is_cst()][-1], stmt)
        assert rec.vector and first == 0 and last == 3, rec.why
    else:
        assert first != 0, rec.why
    assert same_live_out(scop, s.scop, {}, schedule=s.union_map) == []
