"""Concrete pictures of polyhedral objects: points and pairs of points at fixed, small parameter values.

A picture is an *instance* of the model: the parameters are fixed (``N = 8``) and isl enumerates the integer
points of an iteration domain (``Set.foreach_point``) or the pairs of a dependence relation (the points of
the wrapped map ``{ [u -> v] }``). Nothing here approximates: every point drawn is a point isl returned.

The functions also build the small affine schedules the explorers use, ``theta(x) = a . x``; their
legality is decided by the schedule layer's one check (:func:`polylab.schedule.check`).
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Mapping, Sequence

import islpy as isl
import numpy as np

from polylab.errors import ModelError
from polylab.model import Scop
from polylab.model.islutil import fix_parameters, maps_of, point_coordinates

#: parameter value used for pictures when the user gives none
DEFAULT_PICTURE_SIZE = 8


def _param_names(obj) -> list[str]:
    return [obj.get_dim_name(isl.dim_type.param, k) for k in range(obj.dim(isl.dim_type.param))]


def picture_params(scop: Scop, given: Mapping[str, int] | None = None, size: int = DEFAULT_PICTURE_SIZE
                   ) -> dict[str, int]:
    """Parameter values for a picture of ``scop``: the given ones, the others set to ``size``.

    When the context forbids ``size`` (``N >= 10``, say), the smallest admissible value above it is used.
    Unknown names are a user error.
    """
    given = dict(given or {})
    params = scop.parameters
    for name in given:
        if name not in params:
            raise ModelError(f"no parameter named {name!r}",
                             hint=f"the parameters are {', '.join(params) or 'none'}")
    out = dict(given)
    for name in params:
        if name in out:
            continue
        out[name] = size
        if fix_parameters(scop.context, out).is_empty():
            for v in list(range(size, size + 64)) + list(range(size - 1, -1, -1)):
                if not fix_parameters(scop.context, {**out, name: v}).is_empty():
                    out[name] = v
                    break
    return out


def points(domain: isl.Set, values: Mapping[str, int] | None = None, limit: int = 200_000) -> np.ndarray:
    """The integer points of ``domain`` at the given parameter values, as an ``(n, dim)`` int array.

    The set must be bounded once the parameters are fixed; an unbounded or huge set is a user error.
    """
    s = fix_parameters(domain, values or {})
    n = s.dim(isl.dim_type.set)
    n_p = s.dim(isl.dim_type.param)
    whole = s.move_dims(isl.dim_type.set, n, isl.dim_type.param, 0, n_p) if n_p else s
    if not s.is_empty() and not whole.is_bounded():
        raise ModelError(f"cannot draw {s}: it is unbounded at these parameter values",
                         hint="give every parameter a value, e.g. --param N=8")
    if _box_volume(whole) > limit and _more_points_than(whole, limit):
        raise ModelError(f"the domain has more than {limit:,} points at these parameter values: too many to "
                         "draw (the model is stored; only the picture is left out)",
                         hint="draw it with smaller parameter values, e.g. --param N=8")
    out: list[list[int]] = []
    s.foreach_point(lambda pt: out.append(list(point_coordinates(pt))))
    if not out:
        return np.zeros((0, n), dtype=int)
    arr = np.array(out, dtype=int)
    return arr[np.lexsort(arr.T[::-1])] if len(arr) > 1 else arr


def _more_points_than(s: isl.Set, limit: int) -> bool:
    """Does ``s`` have more than ``limit`` points? isl enumerates them and is stopped at the first one past
    ``limit`` (its own count, ``count_val``, would enumerate them all: for ever at N = 10**19). islpy
    reports a callback that stops the scan on standard output and through ``sys.excepthook``; both are
    silenced here, since stopping is what is meant."""
    seen = [0]

    def count(_pt: isl.Point) -> None:
        seen[0] += 1
        if seen[0] > limit:
            raise _Enough()

    hook = sys.excepthook
    sys.excepthook = lambda *exc: None
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            s.foreach_point(count)
    except (_Enough, isl.Error):
        if seen[0] <= limit:
            raise
    finally:
        sys.excepthook = hook
    return seen[0] > limit


class _Enough(Exception):
    """More points than the limit: stop the scan."""


def _box_volume(s: isl.Set) -> int:
    """The number of integer points of the bounding box of the bounded set ``s`` (no parameters): an
    upper bound of its number of points, known without enumerating any (0 for the empty set)."""
    if s.is_empty():
        return 0
    volume = 1
    for k in range(s.dim(isl.dim_type.set)):
        volume *= int(s.dim_max_val(k).sub(s.dim_min_val(k)).to_python()) + 1
    return volume


def pairs(relation: isl.Map, values: Mapping[str, int] | None = None, limit: int = 200_000
          ) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(u, v)`` of ``relation`` at the given parameter values: two ``(n, dim)`` arrays."""
    r = fix_parameters(relation, values or {})
    n_in = r.dim(isl.dim_type.in_)
    n_out = r.dim(isl.dim_type.out)
    w = points(r.wrap(), None, limit)
    if len(w) == 0:
        return np.zeros((0, n_in), dtype=int), np.zeros((0, n_out), dtype=int)
    return w[:, :n_in], w[:, n_in:]


# -- affine hyperplanes and small schedules --------------------------------------------------------------

def linear_aff(space: isl.Space, coefficients: Sequence[int], constant: int = 0) -> isl.Aff:
    """The affine function ``x -> a . x + c`` on the set space ``space``."""
    aff = isl.Aff.zero_on_domain(isl.LocalSpace.from_space(space))
    for k, a in enumerate(coefficients):
        aff = aff.set_coefficient_val(isl.dim_type.in_, k, int(a))
    return aff.set_constant_val(int(constant))


def linear_text(coefficients: Sequence[int], names: Sequence[str]) -> str:
    """``a . x`` as text (``i + 2*j``, ``-k``, ``0``), readable by isl and by people."""
    out = ""
    for c, v in zip(coefficients, names):
        c = int(c)
        if c == 0:
            continue
        mag = "" if abs(c) == 1 else f"{abs(c)}*"
        if not out:
            out = ("-" if c < 0 else "") + mag + v
        else:
            out += (" - " if c < 0 else " + ") + mag + v
    return out or "0"


def schedule_map(domain: isl.Set, rows: Sequence[Sequence[int]], keep_original: bool = True) -> isl.Map:
    """``{ S[x] -> [R x, x] }`` (or ``[R x]``): the rows of ``R`` first, the original order as tie-break."""
    n = domain.dim(isl.dim_type.set)
    name = domain.get_tuple_name()
    it = [domain.get_dim_name(isl.dim_type.set, k) or f"x{k}" for k in range(n)]
    exprs = [linear_text(row, it) for row in rows]
    if keep_original:
        exprs += it
    params = _param_names(domain)
    text = f"[{', '.join(params)}] -> {{ {name}[{', '.join(it)}] -> [{', '.join(exprs)}] }}"
    return isl.Map.read_from_str(domain.get_ctx(), text).intersect_domain(domain)


def anonymous_deltas(relation: isl.Map) -> isl.Set:
    """``{ v - u : u -> v in relation }`` for statements of equal depth (tuple names dropped), so a
    hyperplane ``a . d`` can be minimised over it with :meth:`isl.Set.min_val`."""
    r = relation.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
    return r.deltas()


def statement_schedule(scop: Scop, name: str) -> isl.Map:
    """The original schedule of one statement, ``{ S[x] -> [t] }``."""
    for m in maps_of(scop.schedule_map):
        if m.get_tuple_name(isl.dim_type.in_) == name:
            return m
    raise ModelError(f"no statement named {name!r} in the schedule")


def same_nest(scop: Scop, a: str, b: str) -> bool:
    """True when statements ``a`` and ``b`` share their outermost loop in the original schedule (the first
    time dimension is not two different constants)."""
    ma, mb = statement_schedule(scop, a), statement_schedule(scop, b)

    def first(m: isl.Map) -> isl.Set:
        r = m.range().project_out(isl.dim_type.set, 1, m.dim(isl.dim_type.out) - 1)
        return r.project_out(isl.dim_type.param, 0, r.dim(isl.dim_type.param))

    fa, fb = first(ma), first(mb)
    if fa.is_singleton() and fb.is_singleton():
        return not fa.intersect(fb).is_empty()
    return True


def prefixed_schedule(domain: isl.Set, exprs: Sequence[str], original: isl.Map) -> isl.Map:
    """``{ S[x] -> [e_1(x), ..., e_k(x), original(x)] }``: new outer dimensions, the original order as the
    tie-break (``exprs`` are isl expressions in the statement's iterators, ``floor(i/4)`` allowed)."""
    n = domain.dim(isl.dim_type.set)
    name = domain.get_tuple_name()
    it = [domain.get_dim_name(isl.dim_type.set, k) or f"x{k}" for k in range(n)]
    params = _param_names(domain)
    text = f"[{', '.join(params)}] -> {{ {name}[{', '.join(it)}] -> [{', '.join(exprs)}] }}"
    head = isl.Map.read_from_str(domain.get_ctx(), text).intersect_domain(domain)
    return head.flat_range_product(original.intersect_domain(domain))
