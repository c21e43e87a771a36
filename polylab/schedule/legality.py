"""Legality of a schedule, with a concrete counterexample for every violated dependence.

A schedule ``theta`` is legal when every dependent pair of instances ``u -> v`` (``v`` must see what ``u``
did) keeps its order: ``theta(u) <lex theta(v)``. For a dependence ``D = { S[x] -> T[y] }`` the violating
pairs are, exactly,

    V = { (S[x], T[y]) in D : theta_T(y) <=lex theta_S(x) }

(computed by isl). When ``V`` is not empty, polylab picks small parameter values for which it is not empty
(the smallest sum of parameters, then lexicographically smallest) and reports the lexicographically
smallest pair of ``V`` at those values: a pair of iterations a student can check by hand.

Parallelism is checked exactly too: dimension ``d`` is coincident (may run in parallel) when every
dependent pair whose times agree on dimensions ``0..d-1`` also agrees on ``d``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

import islpy as isl

from polylab import render
from polylab.analysis import DependenceGraph
from polylab.errors import IllegalTransformationError, ModelError
from polylab.model.budget import bounded, budgeted
from polylab.model import Scop
from polylab.model.islutil import fix_parameters, parameter_values, point_coordinates, point_set, union_all
from polylab.model.memo import ObjectMemo, memo
from polylab.schedule.core import Schedule, first_nonzero, lexmin_point, on_domains, pair_deltas, zero_before
from polylab.schedule.deps import Dep, dependences


def small_parameters(params_set: isl.Set) -> dict[str, int] | None:
    """Small parameter values inside ``params_set`` (a parameter-only set): non-negative ones with the
    smallest sum, then lexicographically smallest (any values when no non-negative ones exist); None when
    the set is empty."""
    if params_set.is_empty():
        return None
    np = params_set.dim(isl.dim_type.param)
    if np == 0:
        return {}
    as_set = isl.Set.from_params(params_set).move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, np)
    pnames = [params_set.get_dim_name(isl.dim_type.param, k) for k in range(np)]
    v = isl.make_zero_and_vars([f"p{k}" for k in range(np)])
    coords = [v[f"p{k}"] for k in range(np)]
    total = coords[0]
    for c in coords[1:]:
        total = total.add(c)
    summ = isl.Map.from_pw_aff(total)          # { [p] -> [p_0 + .. + p_{n-1}, p] }
    for c in coords:
        summ = summ.flat_range_product(isl.Map.from_pw_aff(c))
    nonneg = as_set
    for c in coords:
        nonneg = nonneg.intersect(c.ge_set(v[0]))
    for candidate in (nonneg, as_set):
        if candidate.is_empty():
            continue
        try:
            pt = lexmin_point(candidate.apply(summ))
        except isl.Error:  # unbounded below (no smallest sum): try the next candidate
            continue
        if pt.is_void():
            continue
        return dict(zip(pnames, point_coordinates(pt, 1, np)))
    return None


@budgeted("the smallest counterexample")
def smallest_example(s: isl.Set) -> isl.Point:
    """The one counterexample search of polylab: a point of the non-empty set ``s`` that a person can
    check by hand. The parameters are fixed to :func:`small_parameters` (the smallest non-negative sum,
    then lexicographically smallest; any values that have a point when those do not), then the
    lexicographically smallest point at those values is taken (any point when isl finds no minimum)."""
    values = small_parameters(s.params()) or {}
    fixed = fix_parameters(s, values)
    if fixed.is_empty():
        fixed = fix_parameters(s, parameter_values(s.params().sample_point()))
    pt = lexmin_point(fixed)
    return pt if not pt.is_void() else fixed.sample_point()


@dataclass(frozen=True)
class Violation:
    """A violated dependence with its lexicographically smallest violating pair at small parameters."""

    dependence: Dep
    source_instance: tuple[int, ...]
    sink_instance: tuple[int, ...]
    params: Mapping[str, int]
    source_time: tuple[int, ...]
    sink_time: tuple[int, ...]
    element: str
    pairs: isl.Map = field(repr=False)

    @property
    def source(self) -> str:
        return f"{self.dependence.source}[{', '.join(map(str, self.source_instance))}]"

    @property
    def sink(self) -> str:
        return f"{self.dependence.sink}[{', '.join(map(str, self.sink_instance))}]"

    @property
    def message(self) -> str:
        d = self.dependence
        verbs = {"flow": ("writes", "reads"), "anti": ("reads", "overwrites"),
                 "output": ("writes", "overwrites")}.get(d.kind, ("accesses", "accesses"))
        at = f" (with {', '.join(f'{k}={v}' for k, v in self.params.items())})" if self.params else ""
        order = "at the same time as" if self.source_time == self.sink_time else "before"
        return (f"{d.kind} dependence {d.source} -> {d.sink} on {d.array}{at}: {self.source} {verbs[0]} "
                f"{self.element or d.array}, which {self.sink} later {verbs[1]}; the schedule runs {self.sink} "
                f"at time ({', '.join(map(str, self.sink_time))}), {order} {self.source} at time "
                f"({', '.join(map(str, self.source_time))})")

    def to_json(self) -> dict:
        d = self.dependence
        return {"dependence": {"kind": d.kind, "source": d.source, "sink": d.sink, "array": d.array},
                "source_instance": list(self.source_instance), "sink_instance": list(self.sink_instance),
                "params": dict(self.params), "source_time": list(self.source_time),
                "sink_time": list(self.sink_time), "message": self.message}

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, eq=False)
class LegalityReport(render.Rendered):
    """The verdict on a schedule: ``legal``, the violations, and the parallel (coincident) dimensions."""

    schedule: Schedule
    legal: bool
    violations: tuple[Violation, ...]
    parallel: tuple[int, ...]

    def __bool__(self) -> bool:
        return self.legal

    def to_json(self) -> dict:
        s = self.schedule
        return {"legal": self.legal, "violations": [v.to_json() for v in self.violations],
                "schedule": s.text(), "parallel": list(self.parallel),
                "marked_parallel": sorted(s.marked), "kinds": list(s.kinds),
                "bands": [{"dims": list(b.dims), "permutable": b.permutable} for b in s.bands],
                "steps": list(s.steps)}


def _element(scop: Scop, dep: Dep, src: tuple[int, ...], snk: tuple[int, ...], params: dict) -> str:
    """``x[1][2]``: an element the source accesses as the dependence's kind says (writes for flow and output,
    reads for anti) and the sink accesses as its kind says (reads for flow, writes for anti and output)
    (decoration for the message; "" when none is found)."""
    writes_first = {"flow": (True, False), "anti": (False, True), "output": (True, True)}.get(dep.kind)

    def elements(name: str, inst: tuple[int, ...], writes: bool | None) -> isl.Set | None:
        out = None
        st = scop.statement(name)
        for a in st.accesses if writes is None else (st.writes if writes else st.reads):
            if a.array != dep.array:
                continue
            point = point_set(a.relation.get_space().domain(), inst)
            img = fix_parameters(a.relation, params).intersect_domain(point).range()
            out = img if out is None else out.union(img)
        return out

    try:
        roles = writes_first or (None, None)
        s, t = elements(dep.source, src, roles[0]), elements(dep.sink, snk, roles[1])
    except (ModelError, isl.Error):  # a dependence of other statements or arrays than the SCoP's
        return ""
    if s is None or t is None:
        return ""
    pt = s.intersect(t).sample_point()
    if pt.is_void():
        return ""
    return dep.array + "".join(f"[{v}]" for v in point_coordinates(pt))


def violating_pairs(schedule: Schedule, dep: Dep) -> isl.Map:
    """``{ S[x] -> T[y] in dep : theta_T(y) <=lex theta_S(x) }`` (exact)."""
    scop = schedule.scop
    pspace = scop.context.get_space()
    ts = schedule.maps[dep.source].intersect_domain(scop.statement(dep.source).domain.align_params(pspace))
    tt = schedule.maps[dep.sink].intersect_domain(scop.statement(dep.sink).domain.align_params(pspace))
    return dep.relation.align_params(pspace).intersect(ts.lex_ge_map(tt)).intersect_params(scop.context)


@memo("legality.lex_nonpositive", maxsize=None, named=())
def _lex_nonpositive(n: int) -> isl.Set:
    """``{ delta in Z^n : delta <=lex 0 }``: ``delta = 0``, or ``delta_0 = .. = delta_{k-1} = 0 > delta_k``
    for some ``k`` (``n + 1`` disjuncts, no parameters)."""
    return union_all([first_nonzero(n, k, "<") for k in range(n)] + [zero_before(n, n)], zero_before(n, n))


def is_violated(schedule: Schedule, dep: Dep) -> bool:
    """True when ``schedule`` breaks ``dep``: some pair ``x -> y`` of it has ``theta_T(y) <=lex theta_S(x)``
    (exact; :func:`violating_pairs` is that set of pairs).

    Lexicographic order is invariant under translation (``a <=lex b`` iff ``a - b <=lex 0``), so the test
    runs on the time distances ``{ theta_T(y) - theta_S(x) : x -> y in dep }`` (an exact projection
    of the pairs, parameters kept) against ``{ delta <=lex 0 }``: a pair violates exactly when its distance
    lies there. This avoids building the lexicographic order between two schedule maps per dependence,
    which costs about twice as much."""
    return pair_broken(schedule, dep.source, dep.sink,
                       on_domains(dep.relation, schedule.scop, dep.source, dep.sink))


def pair_broken(schedule: Schedule, source: str, sink: str, relation: isl.Map) -> bool:
    """:func:`is_violated` for ``relation``, pairs ``source[x] -> sink[y]`` on the two domains: one
    dependence, or the union of those from ``source`` to ``sink``
    (:func:`~polylab.schedule.core.pair_relations`), which is broken exactly when one of them is. The
    union's time distances are those :attr:`Schedule.deltas` unions (one cache entry serves both)."""
    pspace = schedule.scop.context.get_space()
    return _breaks(relation, schedule.maps[source].align_params(pspace),
                   schedule.maps[sink].align_params(pspace), schedule.scop.context)


@memo("legality.breaks", named=())
def _breaks(relation: isl.Map, theta_s: isl.Map, theta_t: isl.Map, context: isl.Set) -> bool:
    """:func:`is_violated` on its values (remembered by content, a verdict shows no names: a search checks
    the same dependence under the same two time maps many times, each candidate changing a few
    statements' maps)."""
    delta = pair_deltas(relation, theta_s, theta_t)
    bad = _lex_nonpositive(delta.dim(isl.dim_type.set)).align_params(delta.get_space())
    return not delta.intersect(bad).intersect_params(context).is_empty()


def counterexample(schedule: Schedule, dep: Dep, pairs: isl.Map) -> Violation:
    """The violating pair of ``pairs`` (non-empty) that :func:`smallest_example` picks, with its times."""
    pt = smallest_example(pairs.wrap())
    params = parameter_values(pt)
    n_in = pairs.dim(isl.dim_type.in_)
    src = point_coordinates(pt, 0, n_in)
    snk = point_coordinates(pt, n_in, pairs.dim(isl.dim_type.out))

    def time_of(name: str, inst: tuple[int, ...]) -> tuple[int, ...]:
        m = fix_parameters(schedule.maps[name], params)
        dom = point_set(m.get_space().domain(), inst)
        return point_coordinates(m.intersect_domain(dom).range().sample_point())

    return Violation(dep, src, snk, params, time_of(dep.source, src), time_of(dep.sink, snk),
                     _element(schedule.scop, dep, src, snk, params), pairs)


@budgeted("the legality check")
def violations(schedule: Schedule, deps: DependenceGraph | Iterable[Dep] | isl.UnionMap | None = None
               ) -> tuple[Violation, ...]:
    """Every dependence ``u -> v`` (of ``schedule.scop``, or ``deps`` when given) that ``schedule`` breaks,
    ``theta(v) <=lex theta(u)`` for some pair (exact), each with its :func:`counterexample`; the smallest
    parameter values first. Empty when the schedule is legal."""
    if deps is not None:
        schedule = replace(schedule, deps=dependences(schedule.scop, deps))
    found = []
    for dep in schedule.dependences:
        if is_violated(schedule, dep):
            found.append(counterexample(schedule, dep, violating_pairs(schedule, dep)))
    found.sort(key=lambda v: (sum(v.params.values()), v.source_instance, v.sink_instance))
    return tuple(found)


def check(schedule: Schedule, deps: DependenceGraph | Iterable[Dep] | isl.UnionMap | None = None
          ) -> LegalityReport:
    """Check ``schedule`` against the exact memory-based dependences (or ``deps`` when given).

    Returns a :class:`LegalityReport`: ``legal`` is True when ``theta(u) <lex theta(v)`` for every
    dependent pair ``u -> v``; otherwise ``violations`` holds, per violated dependence, its smallest
    violating pair of instances at small parameter values (:func:`violations`).
    """
    with bounded("the legality check"):
        if deps is not None:
            schedule = replace(schedule, deps=dependences(schedule.scop, deps))
        found = violations(schedule)
        return LegalityReport(schedule, not found, found, schedule.parallel_dims)


class IllegalScheduleError(IllegalTransformationError):
    """:func:`require_legal` refused a schedule: ``report`` is its :class:`LegalityReport`;
    ``violation`` the first violation (the violated dependence and its smallest violating pair)."""

    def __init__(self, message: str, *, report: LegalityReport, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.report: LegalityReport = report
        self.violation: Violation = report.violations[0]

    @property
    def violations(self) -> tuple[Violation, ...]:
        return self.report.violations

    @property
    def dependence(self) -> Dep:
        return self.violation.dependence

    @property
    def source_instance(self) -> tuple[int, ...]:
        return self.violation.source_instance

    @property
    def sink_instance(self) -> tuple[int, ...]:
        return self.violation.sink_instance


#: the verdict on each Schedule value already checked by :func:`require_legal` (a Schedule is immutable and
#: hashed by identity, so its report never goes stale; the entry goes when the schedule does)
_VERDICTS: ObjectMemo[Schedule, LegalityReport] = ObjectMemo("legality.verdicts")


def require_legal(schedule: Schedule, what: str = "the schedule", *,
                  consequence: str = "so it is not compiled or run",
                  hint: str | None = None) -> Schedule:
    """The one legality gate: ``schedule`` itself when it respects every dependence of its own SCoP
    (``schedule.scop``; after a storage step, the transformed one), i.e. ``theta(u) <lex theta(v)`` for
    every dependent pair ``u -> v`` (exact, :func:`check`).

    Otherwise raises :class:`IllegalScheduleError` (an :class:`~polylab.errors.IllegalTransformationError`)
    whose message is ``"<what> is illegal, <consequence>: <first violation>"``: the violated dependence and
    its smallest violating pair of instances (and how many more dependences are violated). The error
    carries the :class:`LegalityReport` as ``report`` and the first :class:`Violation` as ``violation``
    (``dependence``, ``source_instance`` and ``sink_instance`` are that violation's). The verdict is cached
    per Schedule value."""
    report = _VERDICTS.get(schedule, lambda: check(schedule))
    if report.legal:
        return schedule
    first = report.violations[0]
    more = len(report.violations) - 1
    raise IllegalScheduleError(
        f"{what} is illegal{', ' + consequence if consequence else ''}: {first.message}"
        + (f" (and {more} more violated dependence{'s' if more > 1 else ''})" if more > 0 else ""),
        report=report,
        hint=hint or ("the source instance must run strictly before the sink; change the schedule "
                      "(polylab schedule FILE --schedule SPEC shows every violation)"))


def is_legal(schedule: Schedule) -> bool:
    """True when ``schedule`` respects every dependence (exact, no counterexample computed)."""
    return not any(is_violated(schedule, dep) for dep in schedule.dependences)


@budgeted("the legality check")
def coincident_members(schedule: Schedule) -> list[tuple[bool, ...]]:
    """Per band of the schedule, which members are coincident (may run in parallel), exactly."""
    return [tuple(schedule.is_coincident(d) for d in b.dims) for b in schedule.bands]
