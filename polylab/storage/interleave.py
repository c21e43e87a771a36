"""Place producers next to their consumers: the schedule step that lets storage contraction succeed.

A *producer* is a statement none of whose reads has a source in the region (an initialisation such as
the nest that remains of ``sl3.sy``'s after folding and dead-write removal); the other statements are
*consumers*. Let ``o(c)`` be the outer time of a consumer instance ``c``: its first schedule dimension that
is not constant over the consumers (the sweep's ``i``), and ``r(c)`` its remaining dimensions. The step
builds the schedule

* fused (tried first): ``P[p] -> [p0, 0, p1, ...]`` and ``C[c] -> [o(c), 1, r(c)]``: the producer runs
  in the same outer iteration as the consumers, just before them; or
* first consumer (when fusion is illegal): ``P[p] -> [min { o(c) : p -> c is a flow }, 0, p]``: each
  producer instance runs in the outer iteration of its first consumer (producer instances that nobody in
  the region reads keep the first outer iteration).

Either is accepted only when it is legal: every memory dependence ``u -> v`` of the SCoP satisfies
``T(u) <lex T(v)`` (the schedule layer's exact check, :func:`polylab.schedule.check`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterable

import islpy as isl

from polylab.analysis import dataflow
from polylab.analysis.dataflow import Dataflow
from polylab.errors import IllegalTransformationError, ScheduleError
from polylab.model.budget import budgeted
from polylab.model.islutil import constant_point, in_child, maps_of, projection, sets_of
from polylab.model.scop import Scop
from polylab.schedule import Schedule, check
from polylab.schedule.legality import is_violated
from polylab.storage.islutil import pad_schedule, padded_map, schedule_of, schedule_on, time_dims
from polylab.render import Displayable, esc


@dataclass(frozen=True, eq=False, repr=False)
class InterleaveReport(Displayable):
    """Which statements were placed where, by which rule, and the legality verdict."""

    producers: tuple[str, ...]
    consumers: tuple[str, ...]
    rule: str
    schedule: isl.UnionMap
    legality: str
    tried: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0

    def text(self) -> str:
        lines = [f"interleave: producers {', '.join(self.producers)} placed next to consumers "
                 f"{', '.join(self.consumers)} ({self.rule})",
                 f"  schedule: {self.schedule}", f"  legal: {self.legality}"]
        lines += [f"  tried {rule}: {why}" for rule, why in self.tried]
        return "\n".join(lines)

    def html(self) -> str:
        tried = "".join(f"<li>tried {esc(r)}: {esc(w)}</li>" for r, w in self.tried)
        return (f"<div class='polylab-interleave'><b>interleave</b> ({esc(self.rule)}): producers "
                f"{esc(', '.join(self.producers))} next to consumers {esc(', '.join(self.consumers))}<br>"
                f"schedule <code>{esc(self.schedule)}</code><br>legal: {esc(self.legality)}"
                f"<ul>{tried}</ul></div>")


def _constant_dim(m: isl.Map, d: int) -> bool:
    """Is time dimension ``d`` of ``m`` one fixed value (for each parameter value)?"""
    proj = m.range().project_out(isl.dim_type.set, d + 1, m.dim(isl.dim_type.out) - d - 1) \
        .project_out(isl.dim_type.set, 0, d)
    return proj.lexmin().is_equal(proj.lexmax())


def _same_constant(T: isl.UnionMap, d: int) -> bool:
    """Is time dimension ``d`` the same constant for every statement of ``T``?"""
    vals = None
    for m in maps_of(T):
        if not _constant_dim(m, d):
            return False
        proj = m.range().project_out(isl.dim_type.set, d + 1, m.dim(isl.dim_type.out) - d - 1) \
            .project_out(isl.dim_type.set, 0, d)
        if vals is None:
            vals = proj
        elif not vals.is_equal(proj):
            return False
    return True


def _pieces(T: isl.UnionMap) -> dict[str, isl.Map]:
    return {m.get_tuple_name(isl.dim_type.in_): m for m in maps_of(T)}


def _select(m: isl.Map, dims: list[int]) -> isl.Map:
    """``{ S[x] -> [t_d for d in dims] }``."""
    proj = projection(m.get_ctx(), m.dim(isl.dim_type.out), dims).align_params(m.get_space())
    return m.apply_range(proj)


def _prefix(m: isl.Map, value: int) -> isl.Map:
    """``{ S[x] -> [t..., value] }`` inserted at position 1 (after the outer time)."""
    m = m.insert_dims(isl.dim_type.out, 1, 1)
    return m.fix_val(isl.dim_type.out, 1, isl.Val.int_from_si(m.get_ctx(), value))


def _first_consumer_map(p: str, it: str, dom: isl.Set, F: isl.UnionMap, outer_c: isl.UnionMap) -> isl.Map:
    """``P[p] -> [min { o(c) : p -> c is a flow }, 0, p]`` (producer instances nobody in the region reads:
    the first outer time of the consumers, or 0 for parameter values where the consumers never run)."""
    # (spaces are not aligned by isl's space functions: the one-dimensional range gets dom's parameters)
    none = isl.Map.empty(isl.Space.map_from_domain_and_range(
        dom.get_space(), isl.Space.set_alloc(dom.get_ctx(), 0, 1).align_params(dom.get_space())))

    def first() -> isl.Map:  # a lexmin over flows with integer divisions can take isl minutes: in_child
        fm = maps_of(F.intersect_domain(isl.UnionSet.from_set(dom)).apply_range(outer_c).lexmin())
        return fm[0] if fm else none

    m = in_child(first, none, dom, F, outer_c)
    unread = dom.subtract(m.domain())
    if not unread.is_empty():
        start = outer_c.range().lexmin()
        zero = constant_point(dom.get_ctx(), (0,)).align_params(dom.get_space())
        for st in sets_of(start):
            u1 = unread.intersect_params(st.params())
            for mm in maps_of(isl.UnionMap.from_domain_and_range(isl.UnionSet.from_set(u1),
                                                                 isl.UnionSet.from_set(st))):
                m = m.union(mm.reset_tuple_id(isl.dim_type.out)) if not m.is_empty() else mm
        rest_u = dom.subtract(m.domain())
        if not rest_u.is_empty():
            mz = isl.Map.from_domain_and_range(rest_u, zero)
            m = m.union(mz) if not m.is_empty() else mz
    ident = isl.Map.identity(dom.get_space().map_from_set()).reset_tuple_id(isl.dim_type.out)
    m = m.reset_tuple_id(isl.dim_type.out).range_product(ident).flatten_range()
    return _prefix(m, 0)


@budgeted("the interleaving (interleave)")
def interleave(scop: Scop, schedule: Schedule | None = None, *, producers: Iterable[str] | None = None,
               explain: bool = True, flow: Dataflow | None = None) -> tuple[Schedule, InterleaveReport]:
    """A legal schedule that runs each producer instance in the outer iteration that first needs it.

    See the module text for the maps. ``schedule``: the consumers' schedule to start from (default: the
    SCoP's own); ``producers``: statement names (default: the statements whose reads all come from
    before the region). Returns the new schedule (the steps of ``schedule`` followed by ``interleave``) and
    the report. Raises :class:`IllegalTransformationError` when neither placement is legal; with
    ``explain=False`` its message names no violating pair (the same exact check, without the search for a
    counterexample: for callers that only need to know, such as ``optimize``). ``flow``: the dataflow of
    ``scop`` when the caller has it (:func:`~polylab.storage.dead.remove_dead_writes` reports its new
    SCoP's); analysed here otherwise.
    """
    t0 = time.perf_counter()
    base = schedule_on(scop, schedule)
    T = padded_map(base)
    if flow is None or flow.scop is not scop:
        flow = dataflow(scop)   # exact value-based dataflow of the reads (only their sources are used)
    if producers is None:
        has_source = {rf.statement for rf in flow.reads if rf.sources}
        prods = [s.name for s in scop.statements if s.name not in has_source]
    else:
        prods = list(producers)
    cons = [s.name for s in scop.statements if s.name not in prods]
    if not prods or not cons:
        raise ScheduleError("interleave needs producers and consumers",
                            hint=f"producers: {prods or 'none'}; consumers: {cons or 'none'}")
    pieces = _pieces(T)
    n = time_dims(T)
    outer = next((d for d in range(n) if any(not _constant_dim(pieces[c], d) for c in cons
                                            if c in pieces)), None)
    if outer is None:
        raise ScheduleError("the consumers have no loop dimension to interleave with")
    # consumers: [o(c), 1, every other dimension]
    cons_T = isl.UnionMap.empty(scop.context.get_space())
    for c in cons:
        if c in pieces:
            cons_T = cons_T.union(isl.UnionMap.from_map(pieces[c]))
    rest = [d for d in range(n) if d > outer or (d < outer and not _same_constant(cons_T, d))]
    new_cons = {c: _prefix(_select(pieces[c], [outer] + rest), 1) for c in cons if c in pieces}
    width = len(rest) + 2
    tried: list[tuple[str, str]] = []
    F = flow.flow_map()
    outer_c = isl.UnionMap.empty(scop.context.get_space())
    for c, m_c in pieces.items():
        if c in cons:
            outer_c = outer_c.union(isl.UnionMap.from_map(_select(m_c, [outer])))
    result = None
    for rule in ("fused", "first consumer"):
        new_prod = {}
        for p in prods:
            s = scop.statement(p)
            dom = s.domain.intersect_params(scop.context)
            it = ", ".join(s.iterators)
            if rule == "fused":
                if not s.iterators:
                    break
                # { P[p0, p1, ...] -> [p0, 0, p1, ...] }, built with the API (iterators may be named max)
                m = isl.Map.identity(dom.get_space().map_from_set()).reset_tuple_id(isl.dim_type.out)
                m = _prefix(m, 0).intersect_domain(dom)
            else:
                m = _first_consumer_map(p, it, dom, F, outer_c)
            new_prod[p] = m
        if len(new_prod) != len(prods):
            tried.append((rule, "a producer has no loop"))
            continue
        w = max([width] + [m.dim(isl.dim_type.out) for m in new_prod.values()])
        um = isl.UnionMap.empty(scop.context.get_space())
        for m in list(new_cons.values()) + list(new_prod.values()):
            um = um.union(isl.UnionMap.from_map(m))
        um = pad_schedule(um, w).coalesce()
        candidate = schedule_of(scop, um, steps=base.steps + ("interleave",))
        if explain:
            verdict = check(candidate)
            legal = verdict.legal
            why = ("every dependence u -> v has T(u) <lex T(v)" if legal
                   else "violated: " + verdict.violations[0].message)
        else:
            # every dependence is checked when the candidate is legal; the producers' first, since the
            # placement moves them (a refused candidate is refused after fewer checks)
            deps = sorted(candidate.dependences, key=lambda d: d.source not in prods and d.sink not in prods)
            legal = not any(is_violated(candidate, d) for d in deps)
            why = ("every dependence u -> v has T(u) <lex T(v)" if legal
                   else "a dependence is violated (exact check; `interleave` alone shows a violating pair)")
        tried.append((rule, "legal" if legal else why))
        if legal:
            result = (rule, um, why, candidate)
            break
    if result is None:
        raise IllegalTransformationError(
            "no legal placement of the producers next to their consumers: " +
            "; ".join(f"{r}: {w}" for r, w in tried),
            hint="keep the original schedule (storage contraction may then need more storage)")
    rule, um, why, out = result
    report = InterleaveReport(tuple(prods), tuple(cons), rule, um, why, tuple(tried),
                              time.perf_counter() - t0)
    return out, report


fuse_producers = interleave
