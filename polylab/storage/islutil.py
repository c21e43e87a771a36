"""isl helpers shared by the storage steps: schedules as padded maps, time orders, readable examples.

Everything here is exact Presburger arithmetic done by isl; nothing is approximated. Dependences and the
value-based dataflow come from the analysis layer (:func:`polylab.analysis.compute_dependences`,
:func:`polylab.analysis.dataflow`), legality and the small examples from the schedule layer
(:func:`polylab.schedule.check`, :func:`polylab.schedule.smallest_example`); this module has no dataflow,
legality check or counterexample search of its own. The storage steps take and return the schedule layer's
:class:`~polylab.schedule.Schedule` values (None: the SCoP's source order).
"""

from __future__ import annotations

import islpy as isl

from polylab.model.budget import isolated
from polylab.model.islutil import (maps_of, parameter_values, point_coordinates, portable_text, read_portable,
                                     sets_of)
from polylab.model.scop import Scop
from polylab.schedule import Schedule, from_union_map, original, smallest_example


# -- schedules ----------------------------------------------------------------------------------------
def schedule_on(scop: Scop, schedule: Schedule | None) -> Schedule:
    """The schedule a storage step works under: the SCoP's source order when ``schedule`` is None, else
    ``schedule`` (its time vectors read for ``scop``'s statements when it was made for an equal SCoP)."""
    if schedule is None:
        return original(scop)
    if schedule.scop is scop:
        return schedule
    return Schedule.from_maps(scop, schedule.maps, steps=schedule.steps, marked=schedule.marked,
                              notes=schedule.notes, provenance=schedule.provenance)


def padded_map(schedule: Schedule) -> isl.UnionMap:
    """``{ S[x] -> [t] }`` on the iteration domains within the context (every piece of one width)."""
    return schedule.union_map.intersect_params(schedule.scop.context)


def schedule_tree(umap: isl.UnionMap, domain: isl.UnionSet) -> isl.Schedule:
    """A schedule tree with one band whose partial schedule is ``umap`` (every statement the same number
    of time dimensions): the ``Scop.schedule`` of a SCoP a storage step rewrote."""
    mupa = isl.MultiUnionPwAff.from_union_map(umap.intersect_domain(domain))
    return isl.Schedule.from_domain(domain).insert_partial_schedule(mupa)


def schedule_of(scop: Scop, umap: isl.UnionMap, *, steps: tuple[str, ...] = ()) -> Schedule:
    """``umap`` as a :class:`Schedule` of ``scop``, each statement's time vector written as the simplest
    function that agrees with ``umap`` on its domain (what people write)."""
    doms = {s.name: s.domain.intersect_params(scop.context) for s in scop.statements}
    out = isl.UnionMap.empty(scop.context.get_space())
    for m in maps_of(umap):
        name = m.get_tuple_name(isl.dim_type.in_)
        m = m.reset_tuple_id(isl.dim_type.out).coalesce()
        if name in doms:
            m = simplest_function(m, doms[name])
        out = out.union(isl.UnionMap.from_map(m))
    return from_union_map(scop, out, steps=steps)


def simplest_function(m: isl.Map, domain: isl.Set) -> isl.Map:
    """One affine piece of ``m`` that equals ``m`` on ``domain`` (``S0[i, j, k] -> [i, 0, j, k]`` rather
    than one piece per face), else ``m`` simplified on ``domain``."""
    exact = m.intersect_domain(domain)
    pieces: list = []
    try:
        isl.PwMultiAff.from_map(m).foreach_piece(lambda _s, ma: pieces.append(ma))
    except isl.Error:
        pieces = []
    for ma in pieces:
        cand = isl.Map.from_multi_aff(ma)
        if cand.intersect_domain(domain).is_equal(exact):
            return cand
    simple = m.gist_domain(domain).coalesce()
    # the gist may give points outside ``domain`` several images; the restriction is exact and a function
    return simple if simple.is_single_valued() else exact.coalesce()


def time_dims(umap: isl.UnionMap) -> int:
    """The number of time dimensions of a schedule map (the largest over its pieces)."""
    out = 0
    for m in maps_of(umap):
        out = max(out, m.dim(isl.dim_type.out))
    return out


def pad_schedule(umap: isl.UnionMap, n: int) -> isl.UnionMap:
    """Every piece of ``umap`` padded with zeros to ``n`` time dimensions, all in one anonymous space."""
    out = None
    for m in maps_of(umap):
        k = m.dim(isl.dim_type.out)
        m = m.reset_tuple_id(isl.dim_type.out)
        if k < n:
            m = m.add_dims(isl.dim_type.out, n - k)
            for d in range(k, n):
                m = m.fix_val(isl.dim_type.out, d, isl.Val.zero(m.get_ctx()))
        um = isl.UnionMap.from_map(m)
        out = um if out is None else out.union(um)
    return out if out is not None else umap


def after_writers(umap: isl.UnionMap, copies) -> isl.UnionMap:
    """``umap`` (``{ S[x] -> [t] }``, every statement one width) with one more, innermost dimension: 0 for
    its statements, and 1 for each copy ``(writer, domain)``, a statement on ``domain`` (a subset of the
    writer's instances, its tuple the copy's name) timed as the writer's instance it copies from: each copy
    runs right after that instance (the copy-outs of a contraction, the copy-backs of a scalar's
    expansion)."""
    out = extend_schedule(umap, 0)
    for writer, domain in copies:
        timed = next(m for m in maps_of(umap) if m.get_tuple_name(isl.dim_type.in_) == writer)
        timed = timed.intersect_domain(domain.set_tuple_name(writer)).set_tuple_name(
            isl.dim_type.in_, domain.get_tuple_name())
        out = out.union(extend_schedule(isl.UnionMap.from_map(timed), 1))
    return out


def fresh_statement_names(scop: Scop, count: int) -> list[str]:
    """``count`` statement names ``S<n>`` that ``scop`` does not use, numbered after its largest."""
    first = max([int(s.name[1:]) for s in scop.statements if s.name[1:].isdigit()] + [-1]) + 1
    return [f"S{first + k}" for k in range(count)]


def extend_schedule(umap: isl.UnionMap, value: int) -> isl.UnionMap:
    """``{ S[x] -> [t, value] }`` for ``{ S[x] -> [t] }`` (one more, constant, innermost dimension)."""
    out = None
    for m in maps_of(umap):
        k = m.dim(isl.dim_type.out)
        m = m.add_dims(isl.dim_type.out, 1).fix_val(isl.dim_type.out, k,
                                                    isl.Val.int_from_si(m.get_ctx(), value))
        um = isl.UnionMap.from_map(m)
        out = um if out is None else out.union(um)
    return out if out is not None else umap


def time_function(T: isl.UnionMap) -> isl.MultiUnionPwAff:
    """The schedule map ``T`` (all pieces padded to one width) as a multi union piecewise affine function."""
    return isl.MultiUnionPwAff.from_union_map(pad_schedule(T, time_dims(T)).coalesce())


def restrict_order(rel: isl.UnionMap, T: isl.UnionMap | isl.MultiUnionPwAff, order: str) -> isl.UnionMap:
    """The pairs ``a -> b`` of ``rel`` with ``T(a) order T(b)`` (``order`` one of ``<``, ``<=``, ``=``).

    Restricting a given relation is much cheaper than building the whole order ``{ a -> b : T(a) < T(b) }``,
    but under a fused or tiled schedule (many pieces, integer divisions in ``T``) it is still one isl call
    that can run for many seconds. So it runs in a child process (:func:`~polylab.model.budget.isolated`,
    a few milliseconds per call): the time budget and an interrupt stop it, and the relation comes back as
    exact isl text.
    """
    f = T if isinstance(T, isl.MultiUnionPwAff) else time_function(T)
    if order not in _ORDERS:
        raise ValueError(order)
    return read_portable(isolated(lambda: portable_text(_ORDERS[order](rel, f))), rel.get_space())


_ORDERS = {
    "<": lambda rel, f: rel.lex_lt_at_multi_union_pw_aff(f),
    "<=": lambda rel, f: rel.lex_le_at_multi_union_pw_aff(f),
    "=": lambda rel, f: rel.eq_at_multi_union_pw_aff(f),
}


# -- dependences ------------------------------------------------------------------------------------
def writes_map(scop: Scop, array: str | None = None) -> isl.UnionMap:
    """``{ S[x] -> A[e] }``: every write access of ``scop`` (of ``array`` when given)."""
    out = isl.UnionMap.empty(scop.context.get_space())
    for s in scop.statements:
        for a in s.writes:
            if array is None or a.array == array:
                out = out.union(isl.UnionMap.from_map(a.relation))
    return out


# -- examples -----------------------------------------------------------------------------------------
def _point_text(p: isl.Point, space_name: str | None, dims: int, start: int = 0) -> str:
    return f"{space_name or ''}[{', '.join(map(str, point_coordinates(p, start, dims)))}]"


def param_text(p: isl.Point) -> str:
    """``N = 3, M = 2``: the parameter values of a point."""
    return ", ".join(f"{k} = {v}" for k, v in parameter_values(p).items())


def example_text(um: isl.UnionMap | isl.Map) -> str:
    """One element of a relation ``{ a -> b }`` as ``a -> b (params)`` (the schedule layer's smallest
    example: small parameter values, then the lexicographically smallest pair)."""
    for m in maps_of(um):
        if m.is_empty():
            continue
        p = smallest_example(m.wrap())
        n_in, n_out = m.dim(isl.dim_type.in_), m.dim(isl.dim_type.out)
        a = _point_text(p, m.get_tuple_name(isl.dim_type.in_), n_in)
        b = _point_text(p, m.get_tuple_name(isl.dim_type.out), n_out, n_in)
        pt = param_text(p)
        return f"{a} -> {b}" + (f" ({pt})" if pt else "")
    return "(none)"


def set_example_text(us: isl.UnionSet | isl.Set) -> str:
    """One element of a set as ``S[1, 2] (params)`` (the schedule layer's smallest example)."""
    for s in sets_of(us):
        if s.is_empty():
            continue
        p = smallest_example(s)
        pt = param_text(p)
        return _point_text(p, s.get_tuple_name(), s.dim(isl.dim_type.set)) + (f" ({pt})" if pt else "")
    return "(none)"


def extent_text(scop: Scop, elements: isl.Set, d: int) -> str | None:
    """A C expression for the extent of dimension ``d`` of ``elements`` (its largest index + 1 within the
    SCoP's context), one affine piece that bounds it everywhere; None where there is none."""
    try:
        pa = elements.intersect_params(scop.context).dim_max(d).add_constant_val(
            isl.Val.one(elements.get_ctx())).coalesce()
        pieces: list = []
        pa.foreach_piece(lambda _set, aff: pieces.append(aff))
        build = isl.AstBuild.from_context(scop.context)
        for aff in pieces:   # one piece that bounds all the others: max index + 1 <= it everywhere
            cand = isl.PwAff.from_aff(aff).intersect_domain(pa.domain())
            if pa.domain().is_subset(cand.ge_set(pa)):
                text = build.expr_from_pw_aff(cand).to_C_str()
                if "?" not in text and "min" not in text and "max" not in text:
                    return text
    except isl.Error:  # isl cannot express the bound as one piece
        pass
    return None
