"""Schedules given as text (the command line's ``--schedule SPEC``).

``SPEC`` is ``original`` (the program's own order), a recipe understood by the schedule layer's
``polylab.schedule.parse_schedule`` when that exists, or an isl union map such as
``{ S0[i, j] -> [i + j, i] }`` (a file holding one is read). A union map carries no parallelism, so
:func:`tree_from_map` adds it exactly: with ``theta`` the schedule and ``D`` the (memory-based)
dependences, the time pairs are ``P = theta^-1 . D . theta`` restricted to ``theta``'s domain. The
schedule is legal when every pair in ``P`` is lexicographically positive (``t_u <_lex t_v``); dimension
``d`` is parallel (coincident) when every pair of ``P`` that agrees on dimensions ``0..d-1`` also agrees
on ``d``.
"""

from __future__ import annotations

import os

import islpy as isl

from polylab.errors import IllegalTransformationError, ScheduleError
from polylab.model.scop import Scop


def _pad(umap: isl.UnionMap) -> tuple[isl.UnionMap, int]:
    """Every statement's time vector padded with zeros to the longest one."""
    maps: list[isl.Map] = []
    umap.foreach_map(maps.append)
    n = max((m.dim(isl.dim_type.out) for m in maps), default=0)
    out = None
    for m in maps:
        k = m.dim(isl.dim_type.out)
        if k < n:
            m = m.add_dims(isl.dim_type.out, n - k)
            for d in range(k, n):
                m = m.fix_val(isl.dim_type.out, d, isl.Val.int_from_si(m.get_ctx(), 0))
        m = m.set_tuple_name(isl.dim_type.out, None) if m.has_tuple_name(isl.dim_type.out) else m
        u = isl.UnionMap.from_map(m)
        out = u if out is None else out.union(u)
    return (out if out is not None else umap), n


def time_pairs(scop: Scop, umap: isl.UnionMap) -> isl.Map | None:
    """``{ t_u -> t_v }`` for every dependence ``u -> v`` (None when there are no dependences)."""
    from polylab.analysis import compute_dependences

    deps = compute_dependences(scop).union()
    if deps.is_empty():
        return None
    pairs = deps.apply_domain(umap).apply_range(umap)
    if pairs.is_empty():
        return None
    return isl.Map.from_union_map(pairs)


def tree_from_map(scop: Scop, umap: isl.UnionMap, *, check: bool = True) -> isl.Schedule:
    """An isl schedule tree for ``umap`` with the exactly parallel dimensions marked coincident.

    Raises :class:`~polylab.errors.IllegalTransformationError` (with a violated pair) when ``check`` and
    some dependence would run backwards."""
    umap = umap.intersect_domain(scop.domain)
    missing = scop.domain.subtract(umap.domain())
    if not missing.is_empty():
        raise ScheduleError(f"the schedule does not cover {missing}", hint="give every statement a time vector")
    padded, n = _pad(umap)
    pairs = time_pairs(scop, padded)
    coincident = [True] * n
    if pairs is not None:
        if check:
            ge = isl.Map.lex_ge(pairs.get_space().domain())
            bad = pairs.intersect(ge)
            if not bad.is_empty():
                from polylab.analysis import compute_dependences

                deps = compute_dependences(scop).union()
                wrong = deps.intersect(padded.apply_range(isl.UnionMap.from_map(ge)).apply_range(
                    padded.reverse()))
                found: list[isl.Map] = []
                wrong.foreach_map(found.append)
                example = str(found[0].sample()) if found else str(bad.sample())
                raise IllegalTransformationError(
                    f"the schedule runs a dependence backwards: {example}",
                    hint="the source instance must be scheduled strictly before the sink")
        for d in range(n):
            eq = pairs
            for k in range(d):
                eq = eq.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
            deltas = eq.deltas()
            if deltas.is_empty():
                continue
            fixed = deltas.fix_val(isl.dim_type.set, d, isl.Val.int_from_si(deltas.get_ctx(), 0))
            if not deltas.is_subset(fixed):
                coincident[d] = False
    sched = isl.Schedule.from_domain(scop.domain)
    if n == 0:
        return sched
    node = sched.get_root().child(0).insert_partial_schedule(isl.MultiUnionPwAff.from_union_map(padded))
    for d in range(n):
        node = node.band_member_set_coincident(d, 1 if coincident[d] else 0)
    return node.get_schedule()


def schedule_from_spec(scop: Scop, spec: str | None):
    """The schedule a ``--schedule`` argument names (None for ``original``)."""
    if spec is None or spec.strip() in ("", "original"):
        return None
    text = spec
    if os.path.isfile(spec):
        with open(spec) as fh:
            text = fh.read()
    try:
        from polylab.schedule import parse_schedule  # the schedule layer's recipes, when present
    except ImportError:
        parse_schedule = None
    if parse_schedule is not None:
        return parse_schedule(scop, text)
    stripped = text.strip()
    if not (stripped.startswith("{") or stripped.startswith("[")):
        raise ScheduleError(f"cannot read the schedule {spec!r}",
                            hint="write 'original' or an isl union map such as { S0[i, j] -> [i + j, i] }")
    try:
        umap = isl.UnionMap(stripped)
    except isl.Error:
        raise ScheduleError(f"not a valid isl union map: {stripped}",
                            hint="example: { S0[i, j] -> [i + j, i] }") from None
    names = {s.name for s in scop.statements}
    maps: list[isl.Map] = []
    umap.foreach_map(maps.append)
    for m in maps:
        name = m.get_tuple_name(isl.dim_type.in_)
        if name not in names:
            raise ScheduleError(f"the schedule names {name!r}, which is not a statement",
                                hint=f"the statements are {', '.join(sorted(names))}")
    return tree_from_map(scop, umap)
