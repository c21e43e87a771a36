"""The value-keyed caches of the analysis and the schedule layer (ordered pairs, value-based pairs, time
distances, legality verdicts): isl hashes and compares maps by content but not by the names of their
dimensions, so the caches add the names to their keys; a result they return is the one a new computation
gives, names included, and clearing them changes no result."""

from __future__ import annotations

import islpy as isl
from hypothesis import given, settings, strategies as st

import polylab
from polylab.analysis import compute_dependences
from polylab.model.memo import names_of
from polylab.schedule import parse_schedule
from polylab.schedule.core import original
from polylab.model.memo import clear_all as clear_caches
from polylab.schedule.legality import is_legal

PROGRAM = """
double A[N][N];
for (int {i} = 1; {i} < N; {i}++)
  for (int {j} = 1; {j} < N; {j}++)
    A[{i}][{j}] = A[{i} - 1][{j}] + A[{i}][{j} - 1];
"""


def test_isl_equality_ignores_dimension_names_and_names_of_tells_them_apart():
    a, b = isl.Map("[N] -> { S[i] -> A[i + 1] }"), isl.Map("[N] -> { S[k] -> A[k + 1] }")
    assert a == b and hash(a) == hash(b)          # why the caches need more than the isl value
    assert names_of(a) != names_of(b)
    assert names_of((a, isl.Set("{ [x, y] }"))) == (("i", None), ("x", "y"))


def _relations(scop, value_based):
    graph = compute_dependences(scop, value_based=value_based, kinds=("flow", "anti", "output"))
    return [(d.kind, d.source, d.sink, str(d.relation)) for d in graph.dependences]


def test_a_program_that_only_renames_its_loops_gets_its_own_names():
    first = polylab.parse(PROGRAM.format(i="i", j="j")).scop
    second = polylab.parse(PROGRAM.format(i="row", j="col")).scop
    for value_based in (False, True):
        a, b = _relations(first, value_based), _relations(second, value_based)
        assert len(a) == len(b) > 0
        assert all("S0[i, j] -> S0[" in r and "row" not in r for *_, r in a)
        assert all("S0[row, col] -> S0[" in r for *_, r in b)
        clear_caches()
        assert _relations(second, value_based) == b   # cached and new results print alike


@settings(max_examples=15, deadline=None)
@given(st.integers(-2, 2), st.integers(-2, 2), st.booleans())
def test_verdicts_and_distances_are_the_same_with_or_without_the_caches(a, b, swap):
    scop = polylab.parse(PROGRAM.format(i="i", j="j")).scop
    text = f"[N] -> {{ S0[i, j] -> [{'j' if swap else 'i'} + {a} * i, {'i' if swap else 'j'} + {b} * j] }}"
    sched = parse_schedule(scop, text)
    warm = (is_legal(sched), sched.deltas)
    clear_caches()
    cold = parse_schedule(scop, text)
    assert is_legal(cold) == warm[0]
    assert cold.deltas.is_equal(warm[1])
    assert is_legal(original(scop))


def _deltas_by_union_map(s):
    # the definition: theta restricted to the domains, applied to both ends of every dependence
    from polylab.model.islutil import maps_of
    from polylab.schedule.deps import union
    theta = s.union_map
    pairs = union(s.dependences, s.scop).apply_domain(theta).apply_range(theta)
    space = isl.Space.set_alloc(s.scop.context.get_ctx(), 0, s.n_dims).align_params(s.scop.context.get_space())
    out = isl.Set.empty(space)
    for m in maps_of(pairs):
        out = out.union(m.deltas().align_params(space))
    return out.intersect_params(s.scop.context)


def test_deltas_keep_to_the_domains_when_the_dependences_given_do_not():
    scop = polylab.parse(PROGRAM.format(i="i", j="j")).scop
    loose = isl.UnionMap("[N] -> { S0[i, j] -> S0[i + 1, j - 5] }")    # no domain: pairs outside it too
    s = parse_schedule(scop, "[N] -> { S0[i, j] -> [i, j] }", deps=loose)
    assert s.deltas.is_equal(_deltas_by_union_map(s))
    assert s.deltas.is_equal(isl.Set("[N] -> { [1, -5] : N >= 7 }"))
    for spec in ("optimize(1)", "wavefront", "[N] -> { S0[i, j] -> [i + j, j] }"):
        t = parse_schedule(scop, spec)
        assert t.deltas.is_equal(_deltas_by_union_map(t)), spec


def test_relabelled_keeps_the_facts_of_the_maps_and_not_those_of_the_marks():
    """``Schedule.relabelled`` (marks, steps, notes) carries the cached facts that depend on the maps and
    dependences only; the tree, whose coincident flags are the marks, is built anew."""
    import pytest

    from polylab.schedule.core import MAP_FACTS
    from polylab.schedule.transform import mark_parallel

    scop = polylab.parse(PROGRAM.format(i="i", j="j")).scop
    s = parse_schedule(scop, "wavefront; sequential")
    fresh = parse_schedule(scop, "wavefront")
    assert not s.marked
    facts = {name: getattr(s, name) for name in MAP_FACTS}
    tree_before = s.tree
    marked = mark_parallel(s)
    assert marked.marked == frozenset(fresh.parallel_dims) and marked.marked
    for name in MAP_FACTS:   # the very objects: not computed again
        assert marked.__dict__[name] is facts[name]
    assert marked.deltas.is_equal(fresh.deltas) and marked.bands == fresh.bands
    assert "tree" not in marked.__dict__ and str(marked.tree) != str(tree_before)
    with pytest.raises(ValueError):
        s.relabelled(maps=s.maps)
