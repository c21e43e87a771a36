"""The wavefront integer program of the labs, solved exactly with isl.

Given a band of dimensions ``[s, e)`` of a legal schedule and the time distances ``d`` of the
dependences not yet carried before ``s`` (and not entirely carried after ``e``), find the smallest
non-negative integer hyperplane

    theta(x) = a . x      with   a . d >= 1   for every such distance vector d.

For uniform dependences the distances are a finite list and the constraints are the inequalities
``a . d >= 1`` shown one by one. In general the distances form a polyhedron ``Delta``; the condition
``a . d - 1 >= 0 on Delta`` is turned into linear constraints on ``a`` by the affine form of the Farkas
lemma (isl's ``coefficients``: the set of all ``(c0, c)`` with ``c0 + c . d >= 0`` on ``Delta``; we need
``c0 = -1, c = a``). The objective is lexicographic: the smallest sum ``a_1 + ... + a_m`` (the shortest
wavefront), then the smallest coefficients of the inner dimensions (prefer outer loops). isl's ``lexmin``
solves it exactly; the answer is then re-checked exactly: ``{ d in Delta : a . d <= 0 }`` is empty.

The new schedule is ``(t_0..t_{s-1}, a . (t_s..t_{e-1}), t_s..t_{e-1} without one t_k, t_e..)`` where
``t_k`` is the first dimension with ``a_k = 1`` (or the first with ``a_k != 0``): every dependence of the
band is carried by the wavefront, so all the dimensions inside it are parallel.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import islpy as isl

from polylab import render
from polylab.errors import ScheduleError
from polylab.model.budget import budgeted
from polylab.model.islutil import point_coordinates
from polylab.schedule.core import Schedule, aff_text, farkas_coefficients, lexmin_point
from polylab.schedule.transform import mark_parallel


@dataclass(frozen=True, eq=False)
class WavefrontSolution(render.Rendered):
    """The solved wavefront program: the hyperplane ``a`` over schedule dimensions ``start..stop-1``."""

    hyperplane: tuple[int, ...]
    start: int
    stop: int
    distances: tuple[tuple[int, ...], ...] | None
    constraints: tuple[str, ...]
    solutions: isl.Set = field(repr=False)
    distance_set: isl.Set = field(repr=False)
    schedule: Schedule = field(repr=False)
    theta: dict[str, str] = field(default_factory=dict)


def _default_band(s: Schedule) -> tuple[int, int]:
    loops = set(s.loop_dims)
    runs, d = [], 0
    while d < s.n_dims:
        if d in loops:
            e = d
            while e < s.n_dims and e in loops:
                e += 1
            runs.append((d, e))
            d = e
        else:
            d += 1
    if not runs:
        raise ScheduleError("the schedule has no loop to turn into a wavefront", hint=s.text())

    def open_deps(r):
        return not s.open_deltas(r[0]).is_empty()

    for r in runs:
        if r[1] - r[0] >= 2 and open_deps(r):
            return r
    for r in runs:
        if r[1] - r[0] >= 2:
            return r
    return runs[0]


def _band_distances(s: Schedule, start: int, stop: int) -> isl.Set:
    """``{ (d_start..d_{stop-1}) != 0 : d in Delta, d_0 = .. = d_{start-1} = 0 }``."""
    n = s.n_dims
    z = s.open_deltas(start)
    z = z.project_out(isl.dim_type.set, stop, n - stop).project_out(isl.dim_type.set, 0, start)
    m = stop - start
    zero = isl.Set("{ [" + ", ".join("0" for _ in range(m)) + "] }").align_params(z.get_space())
    return z.subtract(zero).coalesce()


#: distance sets with at most this many vectors are listed, one constraint a . d >= 1 per vector
MAX_LISTED_DISTANCES = 24


def _points(s: isl.Set, limit: int = MAX_LISTED_DISTANCES) -> tuple[tuple[int, ...], ...] | None:
    """The vectors of ``s`` (parameters projected out) when there are at most ``limit``, else None."""
    if s.dim(isl.dim_type.param):
        s = s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param))
    if not s.is_bounded():
        return None
    try:
        if s.count_val().to_python() > limit:
            return None
    except isl.Error:  # isl cannot count this set: describe it as a set instead of listing it
        return None
    pts: list[tuple[int, ...]] = []
    s.foreach_point(lambda p: pts.append(point_coordinates(p)))
    return tuple(sorted(pts))


@budgeted("the wavefront search")
def find_wavefront(s: Schedule, start: int | None = None, stop: int | None = None) -> WavefrontSolution:
    """Solve the wavefront program on dimensions ``start..stop-1`` of ``s`` (default: the first run of
    consecutive loop dimensions that still has dependences to order); see the module docstring."""
    if start is None or stop is None:
        ds, de = _default_band(s)
        start = ds if start is None else start
        stop = de if stop is None else stop
    if not 0 <= start < stop <= s.n_dims:
        raise ScheduleError(f"bad wavefront dimensions {start}..{stop - 1}",
                            hint=f"the schedule has dimensions 0..{s.n_dims - 1}")
    m = stop - start
    delta = _band_distances(s, start, stop)
    a = [f"a{k}" for k in range(m)]
    base = f"{{ [{', '.join(a)}] : {' and '.join(f'{x} >= 0' for x in a)} and {' + '.join(a)} >= 1 }}"
    sols = isl.Set(base)
    np_ = delta.dim(isl.dim_type.param)
    if not delta.is_empty():
        flat = farkas_coefficients(delta)
        # flat = [c_cst, c_params..., c_d...]; we need c_cst = -1, c_params = 0, c_d = a
        zeros = ", ".join(["0"] * np_)
        to_coeff = isl.Map(f"{{ [{', '.join(a)}] -> [-1{', ' + zeros if np_ else ''}, {', '.join(a)}] }}")
        sols = sols.intersect(flat.apply(to_coeff.reverse()).reset_tuple_id())
    names = ", ".join(a)
    objective = isl.Map(f"{{ [{names}] -> [s, {', '.join(reversed(a))}] : s = {' + '.join(a)} }}")
    best = sols.apply(objective)
    if best.is_empty():
        raise ScheduleError(
            f"no non-negative hyperplane a with a . d >= 1 for every distance d of dimensions "
            f"{start}..{stop - 1} exists",
            hint="some dependence would need a negative coefficient; try reverse(...) or auto")
    pt = lexmin_point(best)
    hyper = tuple(reversed(point_coordinates(pt, 1, m)))
    # exact re-check on the integer distances
    cond = " + ".join(f"{c} * d{k}" for k, c in enumerate(hyper))
    bad = isl.Set(f"{{ [{', '.join(f'd{k}' for k in range(m))}] : {cond} <= 0 }}").align_params(delta.get_space())
    if not delta.intersect(bad).is_empty():  # pragma: no cover - Farkas is a sufficient condition
        raise ScheduleError("the wavefront found does not order every dependence", hint=str(delta))
    pts = _points(delta)
    if pts is not None:
        constraints = tuple(
            " + ".join(f"{d} a{k}" for k, d in enumerate(p) if d) + " >= 1" + f"    (d = {p})" for p in pts)
    else:
        constraints = (f"a . d >= 1 for every d in {delta}",
                       f"Farkas: the admissible a form {sols.coalesce()}")
    constraints = constraints + tuple(f"a{k} >= 0" for k in range(m))
    new = apply_wavefront(s, hyper, start, stop)
    theta = {st.name: aff_text(new.affs[st.name][start], st) for st in s.scop.statements}
    return WavefrontSolution(hyper, start, stop, pts, constraints, sols.coalesce(), delta, new, theta)


def apply_wavefront(s: Schedule, a: tuple[int, ...], start: int, stop: int) -> Schedule:
    """``t' = (t_0..t_{start-1}, a . (t_start..t_{stop-1}), the band without t_k, t_stop..)``, parallel
    dimensions marked. Legal when ``a . d >= 1`` for every distance ``d`` of the band (see module)."""
    m = stop - start
    if len(a) != m or not any(a):
        raise ScheduleError("the wavefront hyperplane needs one coefficient per band dimension, not all 0")
    drop = next((k for k in range(m) if abs(a[k]) == 1), next(k for k in range(m) if a[k]))
    ctx = s.scop.context.get_ctx()
    affs = {}
    for n, t in s.affs.items():
        theta = None
        for k in range(m):
            if a[k]:
                term = t[start + k].scale_val(isl.Val.int_from_si(ctx, a[k]))
                theta = term if theta is None else theta.add(term)
        band = [t[start + k] for k in range(m) if k != drop]
        affs[n] = list(t[:start]) + [theta] + band + list(t[stop:])
    label = f"wavefront({', '.join(map(str, a))})"
    return mark_parallel(s.with_affs(affs, label))


@budgeted("the wavefront search")
def wavefront(s: Schedule, start: int | None = None, stop: int | None = None) -> Schedule:
    """The wavefront step: solve the wavefront program (:func:`find_wavefront`) and apply it.

    Affine map: ``t' = (.., a . (t_start..t_{stop-1}), t without t_k, ..)`` with the smallest
    non-negative ``a`` such that ``a . d >= 1`` for every dependence distance ``d`` of the band. Legal by
    construction whenever ``s`` is legal; all dimensions inside the wavefront are parallel.
    """
    sol = find_wavefront(s, start, stop)
    out = sol.schedule
    theta = " + ".join((f"{c}*" if c != 1 else "") + f"t{sol.start + k}"
                       for k, c in enumerate(sol.hyperplane) if c)
    notes = ((f"wavefront theta = {theta} on dimensions {sol.start}..{sol.stop - 1}",)
             + tuple("  " + c for c in sol.constraints))
    return replace(out, steps=s.steps + ("wavefront",), notes=notes)
