"""Legality checker vs a brute-force oracle that never looks at polylab's dependences.

The oracle runs the kernel in source order with the independent interpreter (``oracle_interp``), records
every access, forms every dependent pair of instances (same element, at least one write, first one
earlier) and asks, with Python tuple comparison, whether the schedule runs the second strictly after the
first. The checker must agree exactly at the same parameter values: no illegal schedule accepted, no
legal one refused, and each counterexample it reports must be a pair the oracle finds.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import islpy as isl
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import polylab
from polylab.errors import AnalysisError, IllegalTransformationError, ScheduleError
from polylab.schedule import check, original, parse_schedule
from polylab.schedule.deps import dependences
from polylab.schedule.tiling import tiled

sys.path.insert(0, str(Path(__file__).parent))
from oracle_interp import model_accesses, run_fragment, run_program  # noqa: E402
from strategies import affine_nests, bounded_draw  # noqa: E402

CORPUS_PARAMS = {
    "sweep2d.c": {"N": 5}, "shift.c": {"N": 4, "M": 3}, "jacobi2d.c": {"N": 5, "T": 2},
    "seidel2d.c": {"N": 5, "T": 2}, "gemm.c": {"NI": 3, "NJ": 3, "NK": 3}, "lu.c": {"N": 4},
    "mvt.c": {"N": 3}, "fdtd2d.c": {"T": 2, "NX": 3, "NY": 3}, "heat3d.c": {"N": 4, "T": 2},
    "sl3.sy": {"n": 4},
}


# -- the oracle -------------------------------------------------------------------------------------------
def _points(s: isl.Set) -> list[tuple[int, ...]]:
    out: list = []
    n = s.dim(isl.dim_type.set)
    s.foreach_point(lambda p: out.append(
        tuple(int(p.get_coordinate_val(isl.dim_type.set, k).to_python()) for k in range(n))))
    return out


def trace_of(name: str, source: str, params: dict):
    if name.endswith(".sy"):
        return run_program(source, {"__input__": [params["n"]]})
    return run_fragment(source, params)


def oracle_violations(scop, trace, schedule, time_pairs: set | None = None) -> list[tuple]:
    """Dependent pairs (first, second) in source order that the schedule does not run in that order.
    ``time_pairs`` (when given) receives the time vectors of every dependent pair."""
    fixed = schedule.union_map.intersect_params(scop.context)
    times: dict = {}
    maps: list = []
    fixed.foreach_map(maps.append)
    for m in maps:
        name, n = m.get_tuple_name(isl.dim_type.in_), m.dim(isl.dim_type.in_)
        for p in _points(m.wrap()):
            assert (name, p[:n]) not in times, "schedule is not a function"
            times[(name, p[:n])] = p[n:]
    line2name = {st.line: st.name for st in scop.statements}
    order = {}
    for pos, (line, it) in enumerate(trace.instances):
        if line in line2name:
            order[(line2name[line], tuple(it))] = pos
    cells: dict = defaultdict(list)
    for line, it, kind, array, idx in trace.accesses:
        if line in line2name:
            inst = (line2name[line], tuple(it))
            cells[(array, idx)].append((order[inst], kind, inst))
    bad = []
    for lst in cells.values():
        lst.sort()
        for a in range(len(lst)):
            pa, ka, ia = lst[a]
            for b in range(a + 1, len(lst)):
                pb, kb, ib = lst[b]
                if ia == ib or (ka == "read" and kb == "read"):
                    continue
                if time_pairs is not None:
                    time_pairs.add((times[ia], times[ib]))
                if not times[ia] < times[ib]:
                    bad.append((ia, ib))
    return bad


def agree(scop_fixed, trace, schedule) -> bool:
    """Assert checker == oracle on ``schedule`` (a schedule of the fixed-parameter SCoP)."""
    report = check(schedule)
    pairs: set = set()
    bad = oracle_violations(scop_fixed, trace, schedule, pairs)
    assert report.legal == (not bad), (schedule.text(), report.legal, bad[:3])
    # parallel loops and permutable bands, decided on the same pairs
    for d in range(schedule.n_dims):
        par = all(u[d] == v[d] for u, v in pairs if u[:d] == v[:d])
        assert schedule.is_coincident(d) == par, (schedule.text(), d)
    for b in schedule.bands:
        perm = all(all(v[k] >= u[k] for k in b.dims) for u, v in pairs if u[:b.start] == v[:b.start])
        assert b.permutable == perm, (schedule.text(), b)
        if b.size > 1:
            assert perm
    badset = set(bad)
    for v in report.violations:
        pair = ((v.dependence.source, v.source_instance), (v.dependence.sink, v.sink_instance))
        assert pair in badset, (schedule.text(), v.message)
    return report.legal


# -- corpus -----------------------------------------------------------------------------------------------
def corpus_specs(s) -> list[str]:
    loops = list(s.loop_dims)
    specs = ["original", "wavefront", "auto", "isl", "auto; tile_wavefront(2, 2)", "wavefront; parallel",
             "distribute(0)", "fuse", "auto; interchange(0, 1)"]
    for a in loops:
        specs.append(f"reverse({a})")
        for b in loops:
            if a < b:
                specs += [f"interchange({a}, {b})", f"skew({b}, {a}, 1)", f"skew({a}, {b}, 1)",
                          f"skew({b}, {a}, -1)"]
    return specs


@pytest.mark.parametrize("name", sorted(CORPUS_PARAMS))
def test_checker_agrees_with_oracle_on_corpus(name):
    path = polylab.example_path(name)
    source = path.read_text()
    params = CORPUS_PARAMS[name]
    scop = polylab.parse_file(path).scop.with_parameters(params)
    trace = trace_of(name, source, params)
    assert model_accesses(scop, params) <= trace.accesses | model_accesses(scop, params)
    base = original(scop)
    verdicts = {True: 0, False: 0}
    for spec in corpus_specs(base):
        try:
            s = parse_schedule(scop, spec)
        except IllegalTransformationError:
            continue  # tile refusing an illegal tiling: checked below on the unchecked tiling
        except ScheduleError:
            continue  # not applicable to this kernel (no wavefront, nothing to fuse)
        verdicts[agree(scop, trace, s)] += 1
    if len(base.loop_dims) >= 2:
        verdicts[agree(scop, trace, tiled(base, [2, 2])[0])] += 1
    assert verdicts[True] >= 3
    if name != "mvt.c":
        assert verdicts[False] >= 1, "the corpus schedules should include illegal ones"


def test_original_schedules_are_legal_parametrically():
    for name in CORPUS_PARAMS:
        scop = polylab.parse_file(polylab.example_path(name)).scop
        assert check(original(scop)).legal, name


def test_violation_reports_smallest_pair_and_message():
    scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    r = check(parse_schedule(scop, "{ S0[i, j] -> [j, -i] }"))
    assert not r.legal
    v = r.violations[0]
    assert v.dependence.kind == "flow" and v.dependence.array == "a"
    assert v.params == {"N": 3}
    assert (v.source_instance, v.sink_instance) == ((1, 1), (2, 1))
    assert "S0[2, 1]" in v.message and "a[1][1]" in v.message
    js = r.to_json()
    assert js["violations"][0]["source_instance"] == [1, 1]


# -- random nests, random schedules -------------------------------------------------------------------------
@st.composite
def random_recipe(draw, n_dims: int, statements: list[str]) -> str:
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["interchange", "reverse", "skew", "shift", "fuse", "distribute",
                                     "wavefront", "auto", "tile"]))
        d = draw(st.integers(0, max(n_dims - 1, 0)))
        e = draw(st.integers(0, max(n_dims - 1, 0)))
        if kind == "interchange":
            steps.append(f"interchange({d}, {e})")
        elif kind == "reverse":
            steps.append(f"reverse({d})")
        elif kind == "skew" and d != e:
            steps.append(f"skew({d}, {e}, {draw(st.sampled_from([-1, 1, 2]))})")
        elif kind == "shift":
            steps.append(f"shift({draw(st.sampled_from(statements))}, {d}, {draw(st.integers(-2, 2))})")
        elif kind == "distribute":
            steps.append(f"distribute({d})")
        elif kind == "tile":
            steps.append("tile(2)")
        elif kind in ("fuse", "wavefront", "auto"):
            steps.append(kind)
    return "; ".join(steps)


@st.composite
def random_isl(draw, scop) -> str:
    parts = []
    n = draw(st.integers(1, 3))
    for s in scop.statements:
        rows = []
        for _ in range(n):
            terms = [f"{draw(st.integers(-1, 1))}*{x}" for x in s.iterators]
            rows.append(" + ".join(terms + [str(draw(st.integers(0, 1)))]))
        parts.append(f"{s.name}[{', '.join(s.iterators)}] -> [{', '.join(rows)}]")
    return "{ " + "; ".join(parts) + " }"


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(src=affine_nests(max_depth=2, max_statements=3), data=st.data(),
       n=st.integers(1, 4), m=st.integers(1, 3))
def test_checker_agrees_with_oracle_on_random_nests(src, data, n, m):
    try:
        program = polylab.parse(src)
    except polylab.PolylabError:
        assume(False)
    assume(program.scops)
    params = {"N": n, "M": m}
    scop = program.scop
    # a statement that can never run trips the analysis layer's loop view (reported to its owner)
    assume(all(not st.domain.is_empty() for st in scop.statements))
    fixed = scop.with_parameters({k: v for k, v in params.items() if k in scop.parameters})
    trace = run_fragment(src, params)
    assume(model_accesses(fixed, params) == trace.accesses)
    try:
        dependences(fixed)
    except AnalysisError:  # the analysis layer's own limits are tested (and reported) there
        event("analysis refused")
        assume(False)
    base = original(fixed)
    if data.draw(st.booleans()):
        spec = data.draw(random_recipe(base.n_dims, [s.name for s in scop.statements]))
    else:
        spec = data.draw(random_isl(scop))
    try:
        s = parse_schedule(fixed, spec)
    except IllegalTransformationError:
        return
    except ScheduleError:
        assume(False)
    legal_fixed = agree(fixed, trace, s)
    event(f"legal={legal_fixed}")
    # the parametric verdict (for all parameter values) implies the verdict at these values
    if spec.startswith("{"):
        if check(parse_schedule(scop, spec)).legal:
            assert legal_fixed


def analysable_scop(src: str):
    """The SCoP of a random nest whose statements all run and whose dependences the analysis computes;
    any other draw is discarded (``assume``)."""
    try:
        program = polylab.parse(src)
    except polylab.PolylabError:
        assume(False)
    assume(program.scops)
    scop = program.scop
    assume(all(not st.domain.is_empty() for st in scop.statements))
    try:
        dependences(scop)
    except AnalysisError:  # the analysis layer's own limits are tested (and reported) there
        event("analysis refused")
        assume(False)
    return scop


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(src=affine_nests(max_depth=2, max_statements=3))
def test_searches_always_return_legal_schedules(src):
    """auto (Pluto-style), isl, wavefront and the tile-level wavefront never return an illegal schedule
    (checked parametrically: for every parameter value)."""
    from polylab.schedule import isl_schedule, pluto_schedule, tile_wavefront, wavefront

    scop = analysable_scop(src)
    with bounded_draw():
        res = pluto_schedule(scop)
        p = res.schedule
        event("pluto fell back" if not res.rows else "pluto answered")
        assert check(p).legal, p.text()
        try:
            assert check(isl_schedule(scop)).legal
        except ScheduleError:  # isl's scheduler may give up ("unable to carry dependences"): a clean error
            event("isl gave up")
        loops = set(p.loop_dims)
        if any(b.permutable and len([d for d in b.dims if d in loops]) >= 2 for b in p.bands):
            tw = tile_wavefront(p, 2, 2)   # tiles a permutable band: never refused
            assert check(tw).legal
        try:
            w = wavefront(original(scop))
        except ScheduleError:
            return
        assert check(w).legal, w.text()


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(src=affine_nests(max_depth=2, max_statements=3), data=st.data())
def test_distance_test_agrees_with_violating_pairs(src, data):
    """``is_violated`` (the test on time distances, ``theta_T(y) - theta_S(x) <=lex 0``) says a dependence
    is broken exactly when ``violating_pairs`` (pairs with ``theta_T(y) <=lex theta_S(x)``) is not empty,
    parametrically, for random affine schedules (legal or not)."""
    from polylab.schedule.legality import is_violated, violating_pairs

    scop = analysable_scop(src)
    try:
        s = parse_schedule(scop, data.draw(random_isl(scop)))   # not checked for legality here
    except ScheduleError:
        assume(False)
    broken = [is_violated(s, d) for d in s.dependences]
    assert broken == [not violating_pairs(s, d).is_empty() for d in s.dependences]
    event(f"broken={any(broken)}")
