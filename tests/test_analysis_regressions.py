"""Regressions of the loop structure and dependence analysis: parametric schedule coordinates are kept
exactly, and statements that never run have no dependences (but keep their loops)."""

from dataclasses import replace

import islpy as isl
import pytest

import polylab
from polylab.analysis import LoopStructure, compute_dependences, dataflow, parallelism


def _scop(src):
    return polylab.parse(src).scop


SWEEP = """
void f(int n, double a[100]) {
  for (int i = 0; i < n; i++) a[i] = a[i] + 1.0;
}
"""


def test_parametric_coordinate_keeps_the_parameter():
    """A schedule coordinate ``n - 1`` that involves no iterator is not truncated to ``-1``."""
    scop = _scop(SWEEP)
    tree = isl.Schedule.from_domain(scop.domain).insert_partial_schedule(
        isl.MultiUnionPwAff("[n] -> [{ S0[i] -> [(n - 1)] }, { S0[i] -> [(i)] }]"))
    st = LoopStructure.of(replace(scop, schedule=tree))
    assert st.loop_names("S0") == ("i",)
    expected = isl.Map("[n] -> { S0[i] -> [n - 1, i] : 0 <= i < n }")
    assert st.time_map("S0").is_equal(expected.intersect_domain(scop.statement("S0").domain))


def test_parametric_coordinate_orders_instances_exactly():
    """S1 runs at time (n - 1, 1) after all of S0 at (i, 0): the write a[0] by S1 comes after every read
    of a[0] by S0, so the dependence is S0 -> S1 (anti) and never S1 -> S0."""
    scop = _scop("""
void f(int n, double a[100], double b[100]) {
  for (int i = 0; i < n; i++) b[i] = a[0];
  a[0] = 2.0;
}
""")
    tree = isl.Schedule.from_domain(scop.domain).insert_partial_schedule(
        isl.MultiUnionPwAff("[n] -> [{ S0[i] -> [(i)]; S1[] -> [(n - 1)] }, { S0[i] -> [(0)]; S1[] -> [(1)] }]"))
    graph = compute_dependences(replace(scop, schedule=tree))
    pairs = {(d.kind, d.source, d.sink) for d in graph}
    assert pairs == {("anti", "S0", "S1")}


def test_contracted_sl3_schedule_is_legal():
    """The sl3 storage chain ends with a copy-out scheduled at ``(n - 1, ...)``; its result is legal."""
    import polylab.storage as stg
    from polylab.schedule.legality import check

    scop = polylab.parse_file(polylab.example_path("sl3.sy")).scop
    plan = stg.storage_pipeline(scop)
    assert plan.step_names()[-1] == "contract(x)"
    rep = check(plan.schedule)
    assert rep.legal, str(rep)
    graph = compute_dependences(plan.scop)
    copy_out = plan.scop.statements[-1].name
    for d in graph:   # the copy-out runs last: nothing of it is a dependence source towards S0
        assert not (d.source == copy_out and d.sink == "S0"), str(d)


@pytest.mark.parametrize("src, empty", [
    ("""void f(double a[10], double b[10][10]) {
  for (int i = 0; i < 10; i++) { a[i] = 1; for (int j = 0; j < 0; j++) b[i][j] = a[i]; }
}""", "S1"),
    ("""void f(double a[10], double b[10][10]) {
  for (int i = 0; i < 10; i++) { if (i > 20) a[i] = 1; for (int j = 0; j < 10; j++) b[i][j] = a[i]; }
}""", "S0"),
    ("""void f(double a[10], double b[10][10]) {
  for (int i = 0; i < 0; i++) a[i] = 0;
  for (int i = 0; i < 10; i++) for (int j = 0; j < 10; j++) b[i][j] = a[i];
}""", "S0"),
])
def test_statement_that_never_runs(src, empty):
    scop = _scop(src)
    assert scop.statement(empty).domain.is_empty()
    st = LoopStructure.of(scop)
    stmt = scop.statement(empty)
    assert st.loop_names(empty) == stmt.iterators   # its loops are still known
    for kind_graph in (compute_dependences(scop), compute_dependences(scop, value_based=True)):
        assert all(empty not in (d.source, d.sink) for d in kind_graph)
    df = dataflow(scop)
    assert all(not s.statement == empty for r in df.reads for s in r.sources)
    parallelism(scop)   # no error


def test_never_running_statement_shares_loops():
    scop = _scop("""void f(double a[10], double b[10][10]) {
  for (int i = 0; i < 10; i++) { a[i] = 1; for (int j = 0; j < 0; j++) b[i][j] = a[i]; }
}""")
    st = LoopStructure.of(scop)
    assert len(st.common_loops("S0", "S1")) == 1
