"""The dataflows that folding and dead-write removal derive for their new SCoPs equal the ones analysed
anew (:func:`polylab.storage.fold.folded_dataflow`, :func:`polylab.storage.dead.restricted_dataflow`), on
every shipped kernel; a restriction that removes a source is refused."""

from dataclasses import replace

import islpy as isl
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import polylab
from example_params import corpus, scop_of
from polylab.errors import TooComplexError
from strategies import affine_nests, declarations, small_budget
from polylab.analysis import dataflow
from polylab.reference.builder import make_scop, statement
from polylab.storage import fold_live_ins, remove_dead_writes
from polylab.storage.dead import restricted_dataflow
from polylab.storage.fold import constant_writers


def _same(a, b) -> None:
    """Two dataflows of one SCoP agree exactly: per read its sources, live-in part and constant; the last
    writes."""
    assert [(r.statement, r.access) for r in a.reads] == [(r.statement, r.access) for r in b.reads]
    for r, s in zip(a.reads, b.reads):
        assert [(x.statement, x.access) for x in r.sources] == [(x.statement, x.access) for x in s.sources], r
        assert all(x.relation.is_equal(y.relation) for x, y in zip(r.sources, s.sources)), r
        assert r.live_in.is_equal(s.live_in), r
        assert r.constant == s.constant, r
    assert [(w, k) for w, k, _ in a.last_writes] == [(w, k) for w, k, _ in b.last_writes]
    assert all(m.is_equal(n) for (_, _, m), (_, _, n) in zip(a.last_writes, b.last_writes))


@pytest.mark.parametrize("name", corpus())
def test_derived_dataflow_is_the_analysed_one(name):
    scop = scop_of(name)
    folded, frep = fold_live_ins(scop)
    assert frep.dataflow is not None and frep.dataflow.scop is folded
    _same(frep.dataflow, dataflow(folded))
    assert frep.dataflow.live.is_equal(dataflow(folded).live)
    cases = [remove_dead_writes(scop), remove_dead_writes(folded)]
    inits = list(constant_writers(folded))
    if inits:
        cases.append(remove_dead_writes(folded, statements=inits))
    for new, rep in cases:
        # dead-write removal keeps every source of a kept read and every live last write, so the
        # derivation always applies to what it made
        assert rep.dataflow is not None and rep.dataflow.scop is new
        _same(rep.dataflow, dataflow(new, live=rep.dataflow.live))


def test_a_restriction_that_removes_a_source_is_not_derived():
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "a[i]", "1.0")
    s1 = statement("S1", "[N] -> { S1[i] : 0 <= i < N }", "b[i]", "a[i] * 2.0")
    scop = make_scop("t", [s0, s1], arrays=[("a", "double", ("N",)), ("b", "double", ("N",))],
                     schedule="[N] -> { S0[i] -> [0, i]; S1[i] -> [1, i] }",
                     live_out="[N] -> { b[i] : 0 <= i < N }")
    flow = dataflow(scop)
    assert flow.read("S1", 1).constant is not None
    # S0[N - 1] writes the value S1[N - 1] reads: without it the read is partly live-in
    dom = isl.Set("[N] -> { S0[i] : 0 <= i < N - 1 }")
    s0 = scop.statements[0]
    cut = replace(s0, domain=dom, accesses=tuple(replace(a, relation=a.relation.intersect_domain(dom))
                                                 for a in s0.accesses))
    smaller = replace(scop, statements=(cut, scop.statements[1]))
    assert restricted_dataflow(flow, smaller) is None
    # the same statements, nothing removed: derived, and equal to the analysis
    _same(restricted_dataflow(flow, scop), flow)


def test_slicing_rounds_derive_the_dataflow_of_the_slice():
    """Several rounds cut statements down to the cone of the live-out element, kept reads included."""
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "a[i]", "1.0")
    s1 = statement("S1", "[N] -> { S1[i] : 0 <= i < N }", "b[i]", "a[i] * 2.0")
    s2 = statement("S2", "[N] -> { S2[i] : 0 <= i < N }", "c[i]", "b[i] + a[i]")
    scop = make_scop("t", [s0, s1, s2], arrays=[(x, "double", ("N",)) for x in "abc"],
                     schedule="[N] -> { S0[i] -> [0, i]; S1[i] -> [1, i]; S2[i] -> [2, i] }",
                     live_out="[N] -> { c[0] }")
    new, rep = remove_dead_writes(scop, rounds=3)
    assert new.statement("S1").domain.is_equal(isl.Set("[N] -> { S1[0] : N > 0 }"))
    _same(rep.dataflow, dataflow(new, live=rep.dataflow.live))


#: constant initialisations put before a random nest, so that some of its reads fold and some
#: initialisation instances are dead
PREAMBLES = (
    "for (i = 0; i < N + 3; i++)\n  C[i] = 1.0;\n",
    "for (i = 0; i < N + 2; i++)\n  for (j = 0; j < M + 2; j++)\n    A[i][j] = 0.5;\n",
    "for (i = 0; i < 2 * N + 1; i++)\n  C[2 * i] = 2.0;\nfor (i = 0; i < M + 1; i++)\n  B[i][i] = 0.5;\n",
)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(init=st.sampled_from(PREAMBLES), src=affine_nests(max_depth=2, max_statements=3))
def test_derived_dataflows_on_random_nests(init, src):
    """Random nests after constant initialisations: the folded SCoP's and the dead-write SCoP's derived
    dataflows are the analysed ones."""
    head = declarations()
    assert src.startswith(head)
    try:
        program = polylab.parse(head + "\n" + init + src[len(head):])
    except polylab.PolylabError:
        assume(False)
    assume(program.scops)
    scop = program.scop
    try:
        with small_budget():
            folded, frep = fold_live_ins(scop)
            _same(frep.dataflow, dataflow(folded))
            event(f"{len(frep.folded)} read(s) folded")
            inits = list(constant_writers(folded))
            cases = [remove_dead_writes(folded, statements=inits, flow=frep.dataflow),
                     remove_dead_writes(folded, rounds=2)]
            for new, rep in cases:
                assert rep.dataflow is not None
                _same(rep.dataflow, dataflow(new, live=rep.dataflow.live))
    except TooComplexError:   # the analysis layer's own limits are tested there
        assume(False)
    event("a statement restricted" if any(c.after is None or not c.removed().is_empty()
                                          for _, rep in cases for c in rep.changes) else "nothing restricted")
