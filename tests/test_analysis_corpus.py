"""The corpus kernels: exact dependences against brute force (the independent interpreter of
``tests/oracle_interp.py``), and the facts their headers state."""

from __future__ import annotations

import pytest

import polylab
from analysis_strategies import Event, oracle_pairs, relation_pairs
from oracle_interp import run_fragment, run_program
from polylab.analysis import compute_dependences
from polylab.analysis.dataflow import dataflow
from polylab.analysis.parallelism import parallelism

ALL = ("flow", "anti", "output", "input")
SMALL = {"N": 5, "M": 3, "T": 2, "NI": 3, "NJ": 3, "NK": 3, "NX": 4, "NY": 4}
KERNELS = ["fdtd2d.c", "gemm.c", "heat3d.c", "jacobi2d.c", "lu.c", "mvt.c", "seidel2d.c", "shift.c",
           "sweep2d.c", "sl3.sy"]


def load(name):
    return polylab.parse_file(polylab.example_path(name)).scop


def events_of(name, scop):
    """The interpreter's trace as events in execution order (reads of an instance before its write)."""
    text = polylab.example_path(name).read_text()
    if name.endswith(".sy"):
        params = {"n": 5}
        trace = run_program(text, {"__input__": [5]})
    else:
        params = {k: v for k, v in SMALL.items() if k in scop.parameters}
        trace = run_fragment(text, params)
    by_line = {st.line: st.name for st in scop.statements}
    arrays = {a.name for a in scop.arrays}  # read-only scalars such as sl3's f are not accesses
    acc: dict = {}
    for line, it, kind, array, index in trace.accesses:
        if array in arrays:
            acc.setdefault((line, it), []).append((kind, array, index))
    events = []
    for line, it in trace.instances:
        if line not in by_line:
            continue
        recs = sorted(acc.get((line, it), []), key=lambda r: r[0] != "read")
        for kind, array, index in recs:
            events.append(Event(by_line[line], tuple(it), -1, kind, array, tuple(index)))
    return events, params


def _instances(pairs):
    return {(s, u, t, v) for s, _a, u, t, _b, v in pairs}


@pytest.mark.parametrize("name", KERNELS)
def test_corpus_against_brute_force(name):
    scop = load(name)
    events, params = events_of(name, scop)
    assert events
    for vb in (False, True):
        graph = compute_dependences(scop, value_based=vb, kinds=ALL)
        for kind in ALL:
            want = _instances(oracle_pairs(events, kind, vb))
            got = _instances(relation_pairs(graph, params, kind))
            assert got == want, (name, kind, vb, sorted(want - got)[:4], sorted(got - want)[:4])


def _dists(graph, kind, source=None, sink=None):
    out = set()
    for d in graph.of_kind(kind):
        if (source is None or d.source == source) and (sink is None or d.sink == sink):
            assert d.distances is not None, str(d)
            out.update(d.distances)
    return out


def test_sweep2d_facts():
    g = compute_dependences(load("sweep2d.c"))
    assert _dists(g, "flow") == {(1, 0), (0, 1)}
    par = parallelism(g)
    assert par.parallel_loops("S0") == ()


def test_shift_facts():
    scop = load("shift.c")
    g = compute_dependences(scop)
    (waw,) = g.of_kind("output")
    assert waw.carried_level == 2 and waw.levels == (2,) and waw.loops[1] == "j"
    assert waw.distances is None  # (0, d) for every d >= 1: not a constant
    assert waw.direction == ("=", "<")
    import islpy as isl

    assert waw.distance_set.is_equal(isl.Set("[N, M] -> { [0, d] : 0 < d < M and N >= 2 }"))
    par = parallelism(g)
    assert par.is_parallel("S0", 1) and not par.is_parallel("S0", 2)
    assert all(d.carried_level == 2 for d in g.dependences)


def test_gemm_facts():
    scop = load("gemm.c")
    g = compute_dependences(scop)
    par = parallelism(g)
    s1 = scop.statements[1]
    assert s1.iterators == ("i", "k", "j")
    assert par.is_parallel("S1", 1) and not par.is_parallel("S1", 2) and par.is_parallel("S1", 3)
    assert par.parallel_loops("S0") == (1, 2)
    assert {d.kind for d in par.of("S1")[1].preventing} == {"flow", "anti", "output"}
    for d in g.between("S1", "S1"):
        assert d.carried_level == 2 and d.direction == ("=", "<", "=")
    # S0 -> S1 on C[i][j]: same i iteration, ordered by the text: loop-independent
    for d in g.between("S0", "S1"):
        assert d.levels == (None,) and d.loops == ("i",)


def test_seidel2d_no_parallel_loop():
    scop = load("seidel2d.c")
    par = parallelism(scop)
    assert par.parallel_loops("S0") == ()
    g = par.graph
    assert {d.kind for d in g.dependences} == {"flow", "anti", "output"}
    kinds_at = {lv: {d.kind for d in g.dependences if lv in d.levels} for lv in (1, 2, 3)}
    assert "flow" in kinds_at[1] and "flow" in kinds_at[2] and "flow" in kinds_at[3]
    assert "anti" in kinds_at[2] and "anti" in kinds_at[3]


def test_jacobi2d_facts():
    scop = load("jacobi2d.c")
    g = compute_dependences(scop)
    par = parallelism(g)
    for s in ("S0", "S1"):
        assert not par.is_parallel(s, 1)
        assert par.is_parallel(s, 2) and par.is_parallel(s, 3)
    # value-based: S1 reads B written by S0 at the same t (loop-independent), S0 reads A written by S1
    # at t - 1 (carried by t, distance 1)
    vb = compute_dependences(scop, value_based=True, kinds=("flow",))
    flow01 = vb.between("S0", "S1")
    assert len(flow01) == 5 and all(d.levels == (None,) and d.distances == ((0,),) for d in flow01)
    flow10 = vb.between("S1", "S0")
    assert len(flow10) == 5 and all(d.levels == (1,) and d.distances == ((1,),) for d in flow10)
    # memory-based, S1 also reads B values of earlier time steps' writes (overwritten since)
    assert any(1 in d.levels for d in g.between("S0", "S1") if d.kind == "flow")


def test_mvt_facts():
    par = parallelism(load("mvt.c"))
    assert par.is_parallel("S0", 1) and par.is_parallel("S1", 1)
    assert not par.is_parallel("S0", 2) and not par.is_parallel("S1", 2)
    assert not par.graph.between("S0", "S1") and not par.graph.between("S1", "S0")


def test_sl3_facts():
    scop = load("sl3.sy")
    init, sweep = scop.statements
    g = compute_dependences(scop)
    raw = _dists(g, "flow", sweep.name, sweep.name)
    war = _dists(g, "anti", sweep.name, sweep.name)
    assert raw == {(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)}
    assert war == {(1, 0, 0), (0, 1, 0), (0, 0, 1)}
    vb = compute_dependences(scop, value_based=True, kinds=("flow",))
    assert _dists(vb, "flow", sweep.name, sweep.name) == raw
    flow = dataflow(scop)
    future = {"x[i + 1][j][k]", "x[i][j + 1][k]", "x[i][j][k + 1]"}
    seen = set()
    for r in flow.reads:
        if r.statement != sweep.name:
            continue
        text = r.text.replace(" ", "")
        if text in {f.replace(" ", "") for f in future}:
            seen.add(text)
            assert [s.statement for s in r.sources] == [init.name]
            assert not r.is_live_in
            assert r.constant is not None and getattr(r.constant, "text", "").startswith("1.0")
        else:
            # past neighbours: from the sweep itself, and from the init nest on the boundary planes
            assert sweep.name in {s.statement for s in r.sources}
            assert r.constant is None
    assert len(seen) == 3
    assert flow.live_in.is_empty()


def _compute_flow_reference(scop):
    """Value-based flow with isl's own ``compute_flow`` (tagged references, must-sources), per pair of
    references: ``{(source, access, sink, access): relation}``."""
    import islpy as isl

    from polylab.analysis.loops import LoopStructure

    st = LoopStructure.of(scop)
    sink = isl.UnionMap.empty(scop.context.get_space())
    must = isl.UnionMap.empty(scop.context.get_space())
    sched = isl.UnionMap.empty(scop.context.get_space())
    for s, a in scop.accesses():
        tag = f"{s.name}__a{a.index}"
        tagmap = isl.Map.from_domain_and_range(s.domain, isl.Set(f"{{ {tag}[] }}")).domain_map()
        order = isl.Map.from_domain_and_range(s.domain, isl.Set(f"{{ [{0 if a.kind == 'read' else 1}] }}"))
        time = st.time_map(s.name).flat_range_product(order)
        tagged = isl.UnionMap.from_map(tagmap.apply_range(a.relation))
        if a.kind == "read":
            sink = sink.union(tagged)
        else:
            must = must.union(tagged)
        sched = sched.union(isl.UnionMap.from_map(tagmap.apply_range(time)))
    flow = (isl.UnionAccessInfo.from_sink(sink).set_must_source(must).set_schedule_map(sched)
            .compute_flow().get_must_dependence())
    out = {}
    maps: list = []
    flow.foreach_map(maps.append)
    for m in maps:
        src = m.domain().unwrap().range().get_tuple_name().split("__a")
        snk = m.range().unwrap().range().get_tuple_name().split("__a")
        rel = m.domain_factor_domain().range_factor_domain().intersect_params(scop.context)
        if not rel.is_empty():
            out[(src[0], int(src[1]), snk[0], int(snk[1]))] = rel
    return out


@pytest.mark.parametrize("name", KERNELS)
def test_value_based_equals_isl_compute_flow(name):
    scop = load(name)
    graph = compute_dependences(scop, value_based=True, kinds=("flow",))
    mine = {(d.source, d.source_access, d.sink, d.sink_access): d.relation for d in graph.dependences}
    ref = _compute_flow_reference(scop)
    assert set(mine) == set(ref)
    for key, rel in mine.items():
        assert rel.is_equal(ref[key]), key
