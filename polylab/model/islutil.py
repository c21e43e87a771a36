"""Reading isl values: the coordinates of a point, the pieces of a union, parameters fixed to numbers.

These are the only places polylab takes an ``isl.Point`` apart or walks a union map / union set; every
layer above the model uses them (isl stays the arithmetic; nothing here computes anything).
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence, TypeVar

import islpy as isl

from polylab.errors import TooComplexError
from polylab.model.budget import isolated
from polylab.model.memo import memo

__all__ = ["constant_point", "equal_until", "fix_parameters", "has_large_coefficients", "has_local_variables",
           "in_child", "integer_val", "isl_identifier", "maps_of", "parameter_values", "point_coordinates",
           "point_set", "portable_text", "projection", "read_portable", "readable", "restore_identifiers",
           "sets_of", "union_all"]

_IslObject = TypeVar("_IslObject", isl.Set, isl.Map, isl.UnionSet, isl.UnionMap, isl.BasicSet, isl.BasicMap)
_Piece = TypeVar("_Piece", isl.Set, isl.Map)


def point_coordinates(point: isl.Point, start: int = 0, count: int | None = None, *,
                      dim_type: isl.dim_type = isl.dim_type.set) -> tuple[int, ...]:
    """The integer coordinates ``start .. start + count - 1`` of ``point`` (of its set dimensions by
    default; all of them from ``start`` when ``count`` is None)."""
    if count is None:
        count = point.get_space().dim(dim_type) - start
    return tuple(int(point.get_coordinate_val(dim_type, start + k).to_python()) for k in range(count))


def parameter_values(point: isl.Point) -> dict[str, int]:
    """The parameter values of ``point`` by name (``{'N': 3}``)."""
    space = point.get_space()
    names = [space.get_dim_name(isl.dim_type.param, k) for k in range(space.dim(isl.dim_type.param))]
    return dict(zip(names, point_coordinates(point, dim_type=isl.dim_type.param)))


def maps_of(umap: isl.UnionMap | isl.Map) -> list[isl.Map]:
    """The maps of a union map, one per pair of spaces (a map is its own single piece)."""
    if isinstance(umap, isl.Map):
        return [umap]
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


def sets_of(uset: isl.UnionSet | isl.Set) -> list[isl.Set]:
    """The sets of a union set, one per space (a set is its own single piece)."""
    if isinstance(uset, isl.Set):
        return [uset]
    out: list[isl.Set] = []
    uset.foreach_set(out.append)
    return out


def union_all(items: Sequence[isl.Set], empty: isl.Set) -> isl.Set:
    """The union of ``items`` (``empty`` when there are none), joined pairwise in a balanced tree: a
    left-to-right chain copies the growing list of disjuncts at every step (adi's time distances, 102
    sets: 10 ms as a chain, 2 ms as a tree)."""
    level = list(items)
    if not level:
        return empty
    while len(level) > 1:
        level = [level[k].union(level[k + 1]) if k + 1 < len(level) else level[k]
                 for k in range(0, len(level), 2)]
    return level[0]


#: seconds the simplification of one isl object for display may take (then its plain text is shown)
READABLE_SECONDS = 2.0


def has_local_variables(obj: isl.Set | isl.Map | isl.UnionSet | isl.UnionMap) -> bool:
    """Whether some piece of ``obj`` has existentially quantified (local) variables (from ``floor``,
    ``mod``, strides, projections): what makes isl's projections, simplifications and coalescing of it
    take long."""
    if isinstance(obj, isl.UnionSet):
        return any(has_local_variables(p) for p in sets_of(obj))
    if isinstance(obj, isl.UnionMap):
        return any(has_local_variables(p) for p in maps_of(obj))
    pieces = obj.get_basic_sets() if isinstance(obj, isl.Set) else obj.get_basic_maps()
    return any(b.dim(isl.dim_type.div) for b in pieces)


#: a coefficient or constant of at least this magnitude makes isl's integer programming slow (its numbers
#: grow past machine words in the eliminations): a source with ``0x7fffffff`` in its bounds and subscripts
#: kept the Pluto search's lexmin busy for minutes inside one call
LARGE_COEFFICIENT = 2 ** 20


def has_large_coefficients(obj: isl.Set, bound: int = LARGE_COEFFICIENT) -> bool:
    """Whether some constraint of ``obj`` has a coefficient or constant ``c`` with ``|c| >= bound``."""
    kinds = (isl.dim_type.param, isl.dim_type.set, isl.dim_type.div)
    for b in obj.get_basic_sets():
        for con in b.get_constraints():
            vals = [con.get_constant_val()] + [con.get_coefficient_val(kind, k)
                                               for kind in kinds for k in range(con.dim(kind))]
            if any(abs(int(v.to_python())) >= bound for v in vals):
                return True
    return False


def readable(obj: isl.Set | isl.Map | isl.UnionSet | isl.UnionMap) -> str:
    """isl text without the parameter-only constraints (they only say when the set is non-empty), coalesced.

    Simplifying is optional and, for an object with local variables, can take isl minutes in one call: such
    an object is simplified in a child process (:func:`polylab.model.budget.isolated`) given
    :data:`READABLE_SECONDS`, and shown as isl's plain text, exact too, when that is not enough."""
    def simplified() -> str:
        return str(obj.gist_params(obj.params()).coalesce())

    try:
        if not has_local_variables(obj):
            return simplified()
        return isolated(simplified, seconds=READABLE_SECONDS)
    except (isl.Error, TooComplexError):  # isl could not simplify (in time): its plain text is still exact
        return str(obj)


def in_child(compute: Callable[[], _Piece], like: _Piece,
             *operands: isl.Set | isl.Map | isl.UnionSet | isl.UnionMap, when: bool | None = None) -> _Piece:
    """``compute()``, one isl call whose result lies in the space of ``like`` (a subtraction, a coalescing,
    ...), run where the time budget and an interrupt can stop it when ``like`` or ``operands`` have local
    variables: such a call can run for minutes (the ``subtract_domain`` of a dataflow relation with integer
    divisions, 20 s), where isl's operation limit comes late and :func:`~polylab.model.budget.tick` is not
    called, so it runs in a child process
    (:func:`polylab.model.budget.isolated`) and comes back as isl text, exact, with ``like``'s names and
    parameter order. Without local variables it runs here (isl answers at once, and no fork is paid).
    ``when``: the caller's own reason to run it in a child (or not), instead of the local variables."""
    if when is None:
        when = has_local_variables(like) or any(has_local_variables(o) for o in operands)
    if not when:
        return compute()
    kinds = (isl.dim_type.param,) + ((isl.dim_type.in_, isl.dim_type.out) if isinstance(like, isl.Map)
                                     else (isl.dim_type.set,))

    def text() -> str:
        obj = compute()
        for kind in kinds:  # names isl's parser could misread (keywords) travel as stand-ins
            for k in range(obj.dim(kind)):
                name = (isl_identifier(obj.get_dim_name(kind, k)) if kind == isl.dim_type.param
                        else f"polylab_{kind.name}_{k}")  # (one name in and out would read as equal)
                obj = obj.set_dim_name(kind, k, name)
        return str(obj)

    got = restore_identifiers(type(like)(isolated(text))).align_params(like.get_space())
    if got.dim(isl.dim_type.param) != like.dim(isl.dim_type.param):  # parameters ``like`` lacks: keep its own
        return got
    if isinstance(like, isl.Map):
        return got.wrap().reset_space(like.wrap().get_space()).unwrap()
    return got.reset_space(like.get_space())


def fix_parameters(obj: _IslObject, values: Mapping[str, int]) -> _IslObject:
    """``obj`` with each named parameter it has fixed to its value (names it lacks are ignored)."""
    for name, v in values.items():
        if isinstance(obj, (isl.UnionSet, isl.UnionMap)):
            space = obj.get_space()
            if space.find_dim_by_name(isl.dim_type.param, name) < 0:
                continue
            ctx = isl.Set.universe(isl.Space.params_alloc(obj.get_ctx(), 0)).align_params(space)
            k = ctx.find_dim_by_name(isl.dim_type.param, name)
            obj = obj.intersect_params(ctx.fix_val(isl.dim_type.param, k,
                                                   integer_val(obj.get_ctx(), v)))
            continue
        k = obj.find_dim_by_name(isl.dim_type.param, name)
        if k >= 0:
            obj = obj.fix_val(isl.dim_type.param, k, integer_val(obj.get_ctx(), v))
    return obj


#: the prefix of the stand-in a name gets in isl text when isl's parser reads the name as a keyword
STAND_IN = "polylab_kw_"


@memo("model.reads_as_name", maxsize=None, named=())
def _reads_as_name(name: str) -> bool:
    try:
        s = isl.Set(f"[{name}] -> {{ [x] : x = {name} }}")
    except isl.Error:
        return False
    return s.get_dim_name(isl.dim_type.param, 0) == name


def isl_identifier(name: str) -> str:
    """``name`` as it may appear in isl text: itself, or a stand-in when isl's parser reads it as a keyword
    (a C parameter or iterator named ``max``, ``mod``, ``floord``, ``exists``, ``infty``, ...). Text that
    uses stand-ins is read and then given back its names with :func:`restore_identifiers`; where it can,
    polylab builds isl objects with the API instead, which needs neither."""
    return name if _reads_as_name(name) else STAND_IN + name


def restore_identifiers(obj):
    """``obj`` (a set, map or piecewise affine function read from text written with
    :func:`isl_identifier`) with every stand-in parameter and dimension name replaced by the real one."""
    kinds = [isl.dim_type.param] + ([isl.dim_type.in_, isl.dim_type.out] if isinstance(obj, isl.Map) else
                                    [isl.dim_type.set] if isinstance(obj, isl.Set) else [isl.dim_type.in_])
    for kind in kinds:
        for k in range(obj.dim(kind)):
            name = obj.get_dim_name(kind, k)
            if name and name.startswith(STAND_IN):  # the identifier isl's parser would give the name
                # (``isl.Id(name)`` would carry a user object and be a *different* parameter)
                obj = obj.set_dim_id(kind, k, isl.Id.read_from_str(obj.get_ctx(), name[len(STAND_IN):]))
    return obj


def portable_text(umap: isl.UnionMap) -> str:
    """``umap`` as isl text that reads back as the same relation whatever the program called its names:
    parameters written through :func:`isl_identifier`, input and output dimensions renamed to stand-ins
    (dimension names are labels; isl identifies dimensions by position and parameters by name). Read it
    with :func:`read_portable`. For relations between flat tuples (no wrapped pairs)."""
    pieces = []
    for m in maps_of(umap):
        for k in range(m.dim(isl.dim_type.param)):
            m = m.set_dim_name(isl.dim_type.param, k, isl_identifier(m.get_dim_name(isl.dim_type.param, k)))
        for kind, tag in ((isl.dim_type.in_, "a"), (isl.dim_type.out, "b")):
            for k in range(m.dim(kind)):
                m = m.set_dim_name(kind, k, f"{STAND_IN}{tag}{k}")
        pieces.append(str(m))
    return "\n".join(pieces)


def read_portable(text: str, space: isl.Space) -> isl.UnionMap:
    """The relation written by :func:`portable_text` (``space``: the parameter space of an empty result)."""
    out = isl.UnionMap.empty(space)
    for line in text.splitlines():
        out = out.union(isl.UnionMap.from_map(restore_identifiers(isl.Map(line))))
    return out


def integer_val(ctx: isl.Context, value: int | str) -> isl.Val:
    """The integer ``value`` as an isl value, of any size (``int_from_si`` stops at 64 bits)."""
    return isl.Val.read_from_str(ctx, str(int(value)))


#: the most points :func:`count_points` enumerates
COUNT_LIMIT = 10 ** 6


def count_points(s: isl.Set, *, limit: int = COUNT_LIMIT) -> int | None:
    """The exact number of integer points of ``s`` (a set whose parameters are fixed), or None when it is
    not found within a bound. isl counts by enumerating the points, which takes time in proportion to
    their number; so the points are enumerated only when the set's bounding box (``dim_min_val`` ..
    ``dim_max_val`` in each dimension, a linear program each) holds at most ``limit`` points, and a set that
    is a box (``is_box``) is counted as the product of its extents. Unbounded sets, sets with free
    parameters and larger non-box sets give None."""
    if s.is_empty():
        return 0
    box = 1
    for k in range(s.dim(isl.dim_type.set)):
        lo, hi = s.dim_min_val(k), s.dim_max_val(k)
        if not (lo.is_int() and hi.is_int()):
            return None
        box *= int(hi.to_python()) - int(lo.to_python()) + 1
    if box <= limit:
        return int(s.count_val().to_python())
    return box if s.is_box() else None


# -- sets and maps built with isl's API (no text, so no name is ever read as a keyword) ----------------------
def point_set(space: isl.Space, coords: Sequence[int]) -> isl.Set:
    """``{ S[coords] }`` in the set space ``space`` (its tuple and parameters; the parameters stay free)."""
    out = isl.Set.universe(space)
    for k, v in enumerate(coords):
        out = out.fix_val(isl.dim_type.set, k, integer_val(space.get_ctx(), v))
    return out


def constant_point(ctx: isl.Context, coords: Sequence[int]) -> isl.Set:
    """``{ [coords] }``: one point of an anonymous space, no parameters."""
    return point_set(isl.Space.set_alloc(ctx, 0, len(coords)), coords)


def equal_until(ctx: isl.Context, n: int, stop: int, differ: bool = False) -> isl.Map:
    """``{ [a] -> [b] : a_k = b_k for k < stop }`` on ``n`` coordinates, and ``a_stop != b_stop`` when
    ``differ`` (the pairs a dimension ``stop`` orders first); no parameters."""
    out = isl.Map.universe(isl.Space.map_from_set(isl.Space.set_alloc(ctx, 0, n)))
    for k in range(stop):
        out = out.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
    if differ:
        out = (out.order_lt(isl.dim_type.in_, stop, isl.dim_type.out, stop)
               .union(out.order_gt(isl.dim_type.in_, stop, isl.dim_type.out, stop)))
    return out


def projection(ctx: isl.Context, n: int, dims: Sequence[int]) -> isl.Map:
    """``{ [t_0, .., t_{n-1}] -> [t_d for d in dims] }``; no parameters."""
    space = isl.Space.alloc(ctx, 0, n, len(dims))
    out = isl.Map.universe(space)
    for j, d in enumerate(dims):
        out = out.equate(isl.dim_type.in_, d, isl.dim_type.out, j)
    return out
