"""Brute force against exact analysis: execute the nest, record every access, derive every dependent pair
and compare with the isl relations instantiated at the same parameter values."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from analysis_strategies import (If, Loop, Ref, Stmt, build_scop, nests, oracle_pairs, relation_pairs,
                                 trace)
from polylab.analysis import compute_dependences
from polylab.errors import TooComplexError
from strategies import small_budget

ALL = ("flow", "anti", "output", "input")


def check_nest(nest, sizes=(3, 5)):
    scop = build_scop(nest)
    for vb in (False, True):
        graph = compute_dependences(scop, value_based=vb, kinds=ALL)
        for d in graph.dependences:
            assert not d.relation.is_empty()
        for n in sizes:
            events = trace(nest, {"N": n})
            for kind in ALL:
                want = oracle_pairs(events, kind, vb)
                got = relation_pairs(graph, {"N": n}, kind)
                assert got == want, (kind, vb, n, sorted(want - got)[:5], sorted(got - want)[:5])


HAND = {
    "sweep": (Loop("i", "1", "N", (Loop("j", "1", "N", (
        Stmt(Ref("a", ("i", "j")), (Ref("a", ("i - 1", "j")), Ref("a", ("i", "j - 1")))),)),)),),
    "imperfect": (Loop("i", "0", "N", (
        Stmt(Ref("C", ("i", "0")), (Ref("C", ("i", "0")),)),
        Loop("k", "0", "N", (Stmt(Ref("C", ("i", "0")), (Ref("C", ("i", "0")), Ref("A", ("i", "k")))),)),
    )),),
    "triangular-guard": (Loop("i", "0", "N", (Loop("j", "0", "i + 1", (
        If("i - j - 1", (Stmt(Ref("B", ("i",)), (Ref("B", ("j",)),)),)),)),)),),
    "scalar": (Stmt(Ref("B", ("0",)), ()), Loop("i", "0", "N", (Stmt(Ref("B", ("0",)), (Ref("B", ("0",)),)),))),
    "two-nests": (Loop("i", "0", "N", (Stmt(Ref("B", ("i",)), (), "1.0"),)),
                  Loop("i", "1", "N - 1", (Stmt(Ref("B", ("i",)), (Ref("B", ("i - 1",)), Ref("B", ("i + 1",)))),))),
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_nests(name):
    check_nest(HAND[name], sizes=(3, 4, 6))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nests())
def test_random_nests(nest):
    check_nest(nest, sizes=(4,))


def check_parallel_and_dataflow(nest, n=4):
    from analysis_strategies import oracle_parallel
    from polylab.analysis.dataflow import dataflow
    from polylab.analysis.parallelism import parallelism

    scop = build_scop(nest)
    events = trace(nest, {"N": n})
    par = parallelism(scop)
    got = {(p.statement, p.level): p.parallel for p in par.loops}
    # a loop that runs at most once at N = n cannot be refuted by the trace: compare the rest
    want = oracle_parallel(nest, events)
    for key, ok in want.items():
        if not ok:
            assert not got[key], key
    import islpy as isl

    for p in par.loops:
        if p.parallel:
            continue
        # the parametric answer may need a larger N: take N from a carried pair isl exhibits
        d = p.preventing[0]
        sub = d.carried_by(p.level)
        assert sub is not None and not sub.is_empty()
        point = sub.wrap().sample_point()
        n_at = point.get_coordinate_val(isl.dim_type.param, 0).to_python()
        if n_at <= 12:
            assert not oracle_parallel(nest, trace(nest, {"N": n_at}))[(p.statement, p.level)], p
    flow = dataflow(scop)
    # live-in: reads with no earlier write of the element
    written: set = set()
    live_in: set = set()
    last: dict = {}
    for e in events:
        if e.kind == "read" and (e.array, e.element) not in written:
            live_in.add((e.stmt, e.access, e.instance, e.array, e.element))
        if e.kind == "write":
            written.add((e.array, e.element))
            last[(e.array, e.element)] = (e.stmt, e.access, e.instance)
    got_li = set()
    for r in flow.reads:
        for u, elem in _points_of_map(r.live_in, n):
            got_li.add((r.statement, r.access, u, r.array, elem))
    assert got_li == live_in
    got_last = set()
    for s, a, m in flow.last_writes:
        for u, elem in _points_of_map(m, n):
            got_last.add((s, a, u))
    assert got_last == set(last.values())


def _points_of_map(m, n):
    import islpy as isl

    k = m.find_dim_by_name(isl.dim_type.param, "N")
    if k >= 0:
        m = m.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(m.get_ctx(), n))
    n_in = m.dim(isl.dim_type.in_)
    pts: list = []
    m.wrap().foreach_point(pts.append)
    out = []
    for p in pts:
        vals = [p.get_coordinate_val(isl.dim_type.set, q).to_python()
                for q in range(n_in + m.dim(isl.dim_type.out))]
        out.append((tuple(vals[:n_in]), tuple(vals[n_in:])))
    return out


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_parallel_dataflow(name):
    check_parallel_and_dataflow(HAND[name])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nests())
def test_random_parallel_dataflow(nest):
    check_parallel_and_dataflow(nest)


# -- through the C front end, against the independent interpreter --------------------------------------------
def check_via_frontend(nest, n=4):
    import polylab
    from analysis_strategies import Event, to_c
    from oracle_interp import run_fragment

    text = to_c(nest)
    program = polylab.parse(text)
    assert len(program.scops) == 1, (text, program.rejected)
    scop = program.scop
    trace_ = run_fragment(text, {"N": n})
    by_line = {s.line: s.name for s in scop.statements}
    acc: dict = {}
    for line, it, kind, array, index in trace_.accesses:
        acc.setdefault((line, it), []).append((kind, array, index))
    events = []
    for line, it in trace_.instances:
        for kind, array, index in sorted(acc.get((line, it), []), key=lambda r: r[0] != "read"):
            events.append(Event(by_line[line], tuple(it), -1, kind, array, tuple(index)))
    _agrees_with_the_trace(scop, events, {"N": n}, text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nests())
def test_random_nests_through_frontend(nest):
    check_via_frontend(nest)


# -- the shared generator of C fragments (steps, downward loops, %, /, ?: bounds, if/else, +=) -----------------
def _events_from_trace(scop, trace_):
    from analysis_strategies import Event

    by_line = {s.line: s.name for s in scop.statements}
    arrays = {a.name for a in scop.arrays}
    acc: dict = {}
    for line, it, kind, array, index in trace_.accesses:
        if array in arrays:
            acc.setdefault((line, it), []).append((kind, array, index))
    events = []
    for line, it in trace_.instances:
        if line in by_line:
            for kind, array, index in sorted(acc.get((line, it), []), key=lambda r: r[0] != "read"):
                events.append(Event(by_line[line], tuple(it), -1, kind, array, tuple(index)))
    return events


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_shared_generator_against_interpreter(data):
    import polylab
    from oracle_interp import run_fragment
    from strategies import affine_nests, parameter_values

    text = data.draw(affine_nests())
    params = data.draw(parameter_values(low=0, high=4))
    program = polylab.parse(text)
    assert len(program.scops) == 1, (text, program.rejected)
    scop = program.scop
    events = _events_from_trace(scop, run_fragment(text, params))
    mine = {k: v for k, v in params.items() if k in scop.parameters}
    _agrees_with_the_trace(scop, events, mine, (text, params))


def _agrees_with_the_trace(scop, events, params, what) -> None:
    """The memory- and value-based dependences of ``scop`` (computed under the small budget: a draw refused
    as too complex is assumed away, never approximated) pair exactly the instances the trace ``events``
    pairs at ``params``, kind by kind (the source and target statement and instance of each pair)."""
    for vb in (False, True):
        try:
            with small_budget():
                graph = compute_dependences(scop, value_based=vb, kinds=ALL)
        except TooComplexError:  # refused within the limits (test_robustness_budget)
            assume(False)
        for kind in ALL:
            want = {(s, u, t, v) for s, _a, u, t, _b, v in oracle_pairs(events, kind, vb)}
            got = {(s, u, t, v) for s, _a, u, t, _b, v in relation_pairs(graph, params, kind)}
            assert got == want, (what, kind, vb, sorted(want - got)[:4], sorted(got - want)[:4])
