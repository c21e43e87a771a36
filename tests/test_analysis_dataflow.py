"""Dataflow facts: sources, live-in, live-out with declared live elements, constant sources; displays."""

from __future__ import annotations

import islpy as isl
import pytest

import polylab
from analysis_strategies import Loop, Ref, Stmt, build_scop
from polylab.analysis import compute_dependences
from polylab.analysis.dataflow import constant_expression, dataflow
from polylab.analysis.parallelism import parallelism
from polylab.errors import AnalysisError

TWO = (Loop("i", "0", "N", (Stmt(Ref("B", ("i",)), (), "1.0"),)),
       Loop("i", "1", "N - 1", (Stmt(Ref("B", ("i",)), (Ref("B", ("i - 1",)), Ref("B", ("i + 1",)),
                                                       Ref("C", ("i",)))),)))


def test_sources_live_in_constant():
    scop = build_scop(TWO)
    flow = dataflow(scop)
    prev, nxt, c = flow.reads
    assert [s.statement for s in nxt.sources] == ["S0"] and nxt.constant is not None
    assert nxt.constant.text == "1.0" and not nxt.is_live_in
    assert {s.statement for s in prev.sources} == {"S0", "S1"} and prev.constant is None
    assert c.is_live_in and not c.sources
    assert c.live_in_elements.is_equal(isl.Set("[N] -> { C[i] : 0 < i < N - 1 }"))
    assert flow.live_in.is_equal(isl.UnionSet("[N] -> { C[i] : 0 < i < N - 1 }"))
    assert constant_expression(scop.statement("S0")).text == "1.0"
    assert constant_expression(scop.statement("S1")) is None
    assert flow.read("S1", 1) is nxt
    with pytest.raises(AnalysisError):
        flow.read("S1", 9)


def test_live_out_declared():
    scop = build_scop(TWO)
    everything = dataflow(scop)
    got = {(s, a) for s, a, _m in everything.last_writes}
    assert got == {("S0", 0), ("S1", 3)}
    # S0's last writes: B[0] and B[N-1] (the sweep never rewrites them)
    m0 = [m for s, _a, m in everything.last_writes if s == "S0"][0]
    assert m0.range().is_equal(isl.Set("[N] -> { B[i] : (i = 0 or i = N - 1) and N >= 1 }"))
    # B[1]: the sweep writes it last when it runs (N >= 3), the init nest when N = 2
    only = dataflow(scop, live="[N] -> { B[i] : i = 1 and N >= 3 }")
    assert [(s, a) for s, a, _m in only.last_writes] == [("S1", 3)]
    small = dataflow(scop, live="{ B[1] }")
    assert [(s, a, str(m.params())) for s, a, m in small.last_writes][0] == ("S0", 0, "[N] -> {  : N = 2 }")
    assert dataflow(scop, live="C").last_writes == ()
    assert not dataflow(scop, live="B").live_out("B").is_empty()
    with pytest.raises(AnalysisError):
        dataflow(scop, live="Q")
    with pytest.raises(AnalysisError):
        dataflow(scop, live="{ B[i] : ")


def test_displays():
    scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    g = compute_dependences(scop)
    d = g.dependences[0]
    assert "<table" in d._repr_html_() and "<table" in g._repr_html_()
    assert "distance (1, 0)" in str(d) and "level 1 (i)" in str(d)
    assert "RAW" in str(g)
    par = parallelism(g)
    assert "<table" in par._repr_html_()
    rows = [ln.split() for ln in str(par).splitlines()[3:]]
    assert [r[:4] for r in rows] == [["S0", "1", "i", "no"], ["S0", "2", "j", "no"]]
    flow = dataflow(scop)
    assert "<table" in flow._repr_html_() and "sources" in str(flow)
    js = g.to_json()
    assert js["dependences"][0]["distances"] == [[1, 0]] and js["dependences"][0]["carried_level"] == 1
    assert d.directions == (("<", "="),)
    with pytest.raises(AnalysisError):
        compute_dependences(scop, kinds=("true",))
    u = g.union(["flow"])
    assert u.is_equal(isl.UnionMap(
        "[N] -> { S0[i, j] -> S0[i + 1, j] : 0 < i <= N - 2 and 0 < j < N; "
        "S0[i, j] -> S0[i, j + 1] : 0 < i < N and 0 < j <= N - 2 }"))
    with pytest.raises(AnalysisError):
        par.is_parallel("S0", 3)


def test_lu_levels_imperfect():
    scop = polylab.parse_file(polylab.example_path("lu.c")).scop
    g = compute_dependences(scop)
    st = g.structure
    assert [st.loop_names(s.name) for s in scop.statements] == [("i", "j", "k"), ("i", "j"), ("i", "j", "k")]
    # S0 and S1 share i and j (the same j loop); S0 and S2 share only i
    assert len(st.common_loops("S0", "S1")) == 2 and len(st.common_loops("S0", "S2")) == 1
    for d in g.dependences:
        assert len(d.loops) == len(st.common_loops(d.source, d.sink))
        assert d.levels and all(lv is None or 1 <= lv <= len(d.loops) for lv in d.levels)
