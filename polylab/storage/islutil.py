"""isl helpers shared by the storage steps: schedules as maps, legality, examples.

Everything here is exact Presburger arithmetic done by isl; nothing is approximated. Dependences and the
value-based dataflow come from the analysis layer (:func:`polylab.analysis.compute_dependences`,
:func:`polylab.analysis.dataflow`); this module has no dataflow of its own.
"""

from __future__ import annotations

from typing import Any

import islpy as isl

from polylab.analysis.dependences import compute_dependences
from polylab.errors import ScheduleError
from polylab.model.scop import Scop


def maps(um: isl.UnionMap) -> list[isl.Map]:
    """The maps of a union map, one per pair of spaces."""
    out: list[isl.Map] = []
    um.foreach_map(out.append)
    return out


def sets(us: isl.UnionSet) -> list[isl.Set]:
    """The sets of a union set, one per space."""
    out: list[isl.Set] = []
    us.foreach_set(out.append)
    return out


# -- schedules ----------------------------------------------------------------------------------------
def schedule_tree(schedule: Any) -> isl.Schedule:
    """The isl schedule tree of ``schedule``: an ``isl.Schedule``, a wrapper with ``.tree``, or a map."""
    if isinstance(schedule, isl.Schedule):
        return schedule
    tree = getattr(schedule, "tree", None)
    if isinstance(tree, isl.Schedule):
        return tree
    if isinstance(schedule, (isl.UnionMap, isl.Map)):
        um = schedule if isinstance(schedule, isl.UnionMap) else isl.UnionMap.from_map(schedule)
        return schedule_from_map(um, um.domain())
    raise ScheduleError(f"not a schedule: {type(schedule).__name__}",
                        hint="pass an isl.Schedule, an isl.UnionMap or a polylab.schedule.Schedule")


def schedule_map(schedule: Any, domain: isl.UnionSet | None = None) -> isl.UnionMap:
    """The schedule as a union map ``{ S[x] -> [t0, t1, ...] }`` (restricted to ``domain`` if given)."""
    if isinstance(schedule, isl.UnionMap):
        um = schedule
    elif isinstance(schedule, isl.Map):
        um = isl.UnionMap.from_map(schedule)
    else:
        um = schedule_tree(schedule).get_map()
    return um.intersect_domain(domain) if domain is not None else um


def schedule_from_map(umap: isl.UnionMap, domain: isl.UnionSet) -> isl.Schedule:
    """A schedule tree with one band whose partial schedule is ``umap`` (every statement the same
    number of time dimensions)."""
    mupa = isl.MultiUnionPwAff.from_union_map(umap.intersect_domain(domain))
    return isl.Schedule.from_domain(domain).insert_partial_schedule(mupa)


def _schedule_class() -> Any:
    try:
        from polylab.schedule.core import Schedule
    except ImportError:  # the schedule layer is optional for this module
        return None
    return Schedule


def as_schedule_value(scop: Scop, umap: isl.UnionMap, *, steps: tuple[str, ...] = ()) -> Any:
    """``umap`` as the schedule layer's :class:`~polylab.schedule.core.Schedule` of ``scop`` (one map per
    statement), or as an isl schedule tree when that layer is absent."""
    cls = _schedule_class()
    if cls is not None:
        doms = {s.name: s.domain.intersect_params(scop.context) for s in scop.statements}
        per = {}
        for m in maps(umap):
            name = m.get_tuple_name(isl.dim_type.in_)
            m = m.reset_tuple_id(isl.dim_type.out).coalesce()
            if name in doms:   # the simplest function that agrees on the domain (what people write)
                m = simplest_function(m, doms[name])
            per[name] = m
        try:
            return cls.from_maps(scop, per, steps=steps)
        except Exception:  # noqa: BLE001 - fall back to the plain tree
            pass
    return schedule_from_map(umap, scop.domain)


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
    return m.gist_domain(domain).coalesce()


def wrap_schedule(template: Any, tree: isl.Schedule, scop: Scop, *, steps: tuple[str, ...] = ()) -> Any:
    """The schedule ``tree`` of ``scop`` as the kind of value the caller passed (``template``): a polylab
    Schedule when the caller passed one (or nothing), else the isl tree."""
    if isinstance(template, (isl.Schedule, isl.UnionMap, isl.Map)):
        return tree
    if template is not None and hasattr(template, "steps"):
        steps = tuple(template.steps) + steps
    out = as_schedule_value(scop, tree.get_map().intersect_domain(scop.domain), steps=steps)
    return out


def time_dims(umap: isl.UnionMap) -> int:
    """The number of time dimensions of a schedule map (the largest over its pieces)."""
    out = 0
    for m in maps(umap):
        out = max(out, m.dim(isl.dim_type.out))
    return out


def pad_schedule(umap: isl.UnionMap, n: int) -> isl.UnionMap:
    """Every piece of ``umap`` padded with zeros to ``n`` time dimensions, all in one anonymous space."""
    out = None
    for m in maps(umap):
        k = m.dim(isl.dim_type.out)
        m = m.reset_tuple_id(isl.dim_type.out)
        if k < n:
            m = m.add_dims(isl.dim_type.out, n - k)
            for d in range(k, n):
                m = m.fix_val(isl.dim_type.out, d, isl.Val.zero(m.get_ctx()))
        um = isl.UnionMap.from_map(m)
        out = um if out is None else out.union(um)
    return out if out is not None else umap


def extend_schedule(umap: isl.UnionMap, value: int) -> isl.UnionMap:
    """``{ S[x] -> [t, value] }`` for ``{ S[x] -> [t] }`` (one more, constant, innermost dimension)."""
    out = None
    for m in maps(umap):
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

    Restricting a given relation is much cheaper than building the whole order ``{ a -> b : T(a) < T(b) }``.
    """
    f = T if isinstance(T, isl.MultiUnionPwAff) else time_function(T)
    if order == "<":
        return rel.lex_lt_at_multi_union_pw_aff(f)
    if order == "<=":
        return rel.lex_le_at_multi_union_pw_aff(f)
    if order == "=":
        return rel.eq_at_multi_union_pw_aff(f)
    raise ValueError(order)


def before(T: isl.UnionMap) -> isl.UnionMap:
    """``{ a -> b : T(a) <lex T(b) }``."""
    return T.lex_lt_union_map(T)


def before_or_same_time(T: isl.UnionMap) -> isl.UnionMap:
    """``{ a -> b : T(a) <=lex T(b) }``."""
    return T.lex_le_union_map(T)


def identity(domain: isl.UnionSet) -> isl.UnionMap:
    """``{ a -> a : a in domain }``."""
    return domain.identity()


# -- dependences ------------------------------------------------------------------------------------
def writes_map(scop: Scop, array: str | None = None) -> isl.UnionMap:
    """``{ S[x] -> A[e] }``: every write access of ``scop`` (of ``array`` when given)."""
    out = isl.UnionMap.empty(scop.context.get_space())
    for s in scop.statements:
        for a in s.writes:
            if array is None or a.array == array:
                out = out.union(isl.UnionMap.from_map(a.relation))
    return out


def check_legal(scop: Scop, schedule: Any) -> tuple[bool, str]:
    """Is ``schedule`` legal for ``scop`` (every memory dependence u -> v has T(u) <lex T(v))?

    Decided exactly here (isl); when the schedule layer exists its checker must agree too, and its
    explanation (the violated dependence with a concrete pair of instances) is used. Returns
    ``(legal, explanation)``.
    """
    T = schedule_map(schedule, scop.domain).intersect_params(scop.context)
    T = pad_schedule(T, time_dims(T))
    missing = scop.domain.intersect_params(scop.context).subtract(T.domain())
    if not missing.is_empty():
        return False, "the schedule gives no time to " + set_example_text(missing)
    deps = compute_dependences(scop).union()   # memory-based flow, anti and output, exact
    bad = deps.subtract(restrict_order(deps, T, "<"))
    legal = bad.is_empty()
    why = ("every dependence u -> v has T(u) <lex T(v)" if legal
           else "violated dependence pair: " + example_text(bad))
    cls = _schedule_class()
    if cls is not None:
        try:
            from polylab.schedule.legality import check
            value = as_schedule_value(scop, T)
            if isinstance(value, cls):
                rep = check(value)
                if not rep.legal:
                    return False, str(rep)
        except Exception:  # noqa: BLE001 - the direct check above stands
            pass
    return legal, why


# -- examples -----------------------------------------------------------------------------------------
def _point_text(p: isl.Point, space_name: str | None, dims: int, start: int = 0) -> str:
    vals = [str(p.get_coordinate_val(isl.dim_type.set, start + k).to_python()) for k in range(dims)]
    return f"{space_name or ''}[{', '.join(vals)}]"


def param_text(p: isl.Point) -> str:
    sp = p.get_space()
    n = sp.dim(isl.dim_type.param)
    return ", ".join(f"{sp.get_dim_name(isl.dim_type.param, k)} = "
                     f"{p.get_coordinate_val(isl.dim_type.param, k).to_python()}" for k in range(n))


def small_point(s: isl.Set) -> isl.Point:
    """A point of ``s`` at small parameter values: the parameters fixed to a sample, then lexmin."""
    p = s.sample_point()
    sp = s.get_space()
    fixed = s
    for k in range(sp.dim(isl.dim_type.param)):
        fixed = fixed.fix_val(isl.dim_type.param, k, p.get_coordinate_val(isl.dim_type.param, k))
    # try smaller parameter values first (students read small examples more easily)
    smaller = _smallest_params(s)
    if smaller is not None:
        fixed = smaller
    try:
        lm = fixed.lexmin()
    except isl.Error:   # unbounded: keep the sample
        return p
    return lm.sample_point() if not lm.is_empty() else p


def _smallest_params(s: isl.Set) -> isl.Set | None:
    params = s.params()
    n = params.dim(isl.dim_type.param)
    if n == 0:
        return None
    ps = isl.Set.from_params(params) if hasattr(isl.Set, "from_params") else None
    if ps is None:
        return None
    ps = ps.move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, n)
    nonneg = ps
    for k in range(n):   # prefer non-negative parameter values (sizes), smallest first
        nonneg = nonneg.lower_bound_val(isl.dim_type.set, k, isl.Val.zero(ps.get_ctx()))
    try:
        lm = (nonneg if not nonneg.is_empty() else ps).lexmin()
    except isl.Error:   # unbounded below: any sample will do
        return None
    if lm.is_empty():
        return None
    pt = lm.sample_point()
    fixed = s
    for k in range(n):
        fixed = fixed.fix_val(isl.dim_type.param, k, pt.get_coordinate_val(isl.dim_type.set, k))
    return fixed if not fixed.is_empty() else None


def example_text(um: isl.UnionMap | isl.Map) -> str:
    """One element of a relation ``{ a -> b }`` as ``a -> b (params)``."""
    pieces = maps(um) if isinstance(um, isl.UnionMap) else [um]
    for m in pieces:
        if m.is_empty():
            continue
        p = small_point(m.wrap())
        n_in, n_out = m.dim(isl.dim_type.in_), m.dim(isl.dim_type.out)
        a = _point_text(p, m.get_tuple_name(isl.dim_type.in_), n_in)
        b = _point_text(p, m.get_tuple_name(isl.dim_type.out), n_out, n_in)
        pt = param_text(p)
        return f"{a} -> {b}" + (f" ({pt})" if pt else "")
    return "(none)"


def set_example_text(us: isl.UnionSet | isl.Set) -> str:
    pieces = sets(us) if isinstance(us, isl.UnionSet) else [us]
    for s in pieces:
        if s.is_empty():
            continue
        p = small_point(s)
        pt = param_text(p)
        return _point_text(p, s.get_tuple_name(), s.dim(isl.dim_type.set)) + (f" ({pt})" if pt else "")
    return "(none)"
