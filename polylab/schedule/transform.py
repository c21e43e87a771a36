"""Unimodular and statement-order transformations of a schedule, each a pure function.

Every function takes a :class:`Schedule` and returns a new one; it never checks legality itself (so a
student can build an illegal schedule and see why it is wrong): call
:func:`polylab.schedule.legality.check` on the result. Dimensions are numbered from 0 (outermost).
Notation: ``t = theta_S(x)`` is a statement's current time vector, ``t'`` the new one.
"""

from __future__ import annotations

from typing import Sequence

import islpy as isl

from polylab.errors import ScheduleError
from polylab.model.budget import budgeted
from polylab.schedule.core import Schedule, const_aff, const_value, floor_div


def resolve_dim(s: Schedule, d: int | str) -> int:
    """A dimension given by number, or by an iterator name: the outermost dimension that is exactly that
    iterator for every statement that has it."""
    if isinstance(d, int):
        return d
    for k in range(s.n_dims):
        have = [st for st in s.scop.statements if d in st.iterators]
        if have and all(s.expressions(st.name)[k] == d for st in have):
            return k
    raise ScheduleError(f"no schedule dimension is the iterator {d!r}",
                        hint=f"use dimension numbers 0..{s.n_dims - 1}; the schedule is {s.text()}")


def _check_dim(s: Schedule, d: int, what: str = "dimension") -> int:
    if not isinstance(d, int) or not 0 <= d < s.n_dims:
        raise ScheduleError(f"{what} {d!r} does not exist",
                            hint=f"this schedule has dimensions 0..{s.n_dims - 1}: {s.text()}")
    return d


def _val(s: Schedule, v: int) -> isl.Val:
    return isl.Val.int_from_si(s.scop.context.get_ctx(), int(v))


def _fmt(name: str, *args) -> str:
    return f"{name}({', '.join(str(a) for a in args)})"


def permute(s: Schedule, *order: int | str | list[int | str]) -> Schedule:
    """Reorder the dimensions: ``t'_k = t_{order[k]}`` for every statement.

    A permutation matrix is unimodular, so the new schedule runs the same instances; it is legal when
    every dependence's time distance stays lexicographically positive after reordering (always true
    inside a permutable band).
    """
    if len(order) == 1 and isinstance(order[0], (list, tuple)):
        order = tuple(order[0])
    order = tuple(resolve_dim(s, d) for d in order)
    if sorted(order) != list(range(s.n_dims)):
        raise ScheduleError(f"permute needs a permutation of 0..{s.n_dims - 1}, got {list(order)}",
                            hint=f"for example permute({', '.join(map(str, reversed(range(s.n_dims))))})")
    affs = {n: [a[k] for k in order] for n, a in s.affs.items()}
    return s.with_affs(affs, _fmt("permute", *order))


def interchange(s: Schedule, a: int | str, b: int | str) -> Schedule:
    """Swap dimensions ``a`` and ``b``: ``t'_a = t_b``, ``t'_b = t_a``.

    Legal when no dependence has a time distance that becomes lexicographically non-positive, e.g. when
    both dimensions lie in one permutable band (all distances >= 0 there).
    """
    a, b = resolve_dim(s, a), resolve_dim(s, b)
    _check_dim(s, a), _check_dim(s, b)
    order = list(range(s.n_dims))
    order[a], order[b] = order[b], order[a]
    out = permute(s, *order)
    return s.with_maps(out.maps, _fmt("interchange", a, b))


def skew(s: Schedule, target: int | str, source: int | str, factor: int = 1) -> Schedule:
    """Skew dimension ``target`` by ``source``: ``t'_target = t_target + factor * t_source``.

    Unimodular (a unit triangular matrix). When ``source`` is outside ``target`` (``source < target``), it
    never changes the order of a legal schedule: a distance with ``d_source > 0`` stays carried by the
    outer dimension, and with ``d_source = 0`` the target distance is unchanged. Skewing is what makes the
    time-iterated stencils tilable: with ``factor`` at least the largest backward distance, every
    distance in ``target`` becomes non-negative.
    """
    target, source = resolve_dim(s, target), resolve_dim(s, source)
    _check_dim(s, target, "target dimension"), _check_dim(s, source, "source dimension")
    if target == source:
        raise ScheduleError("skew needs two different dimensions", hint="skew(target, source, factor)")
    affs = {}
    for n, a in s.affs.items():
        new = list(a)
        new[target] = a[target].add(a[source].scale_val(_val(s, factor)))
        affs[n] = new
    return s.with_affs(affs, _fmt("skew", target, source, factor))


def shift(s: Schedule, stmt: str, dim: int | str, amount: int) -> Schedule:
    """Shift (retime) one statement: ``t'_dim = t_dim + amount`` for statement ``stmt`` only.

    Legal when every dependence into or out of ``stmt`` keeps a lexicographically positive distance
    (for example: shifting the consumer of a producer-consumer pair later by the producer's reach).
    """
    dim = resolve_dim(s, dim)
    _check_dim(s, dim)
    if stmt not in s.maps:
        raise ScheduleError(f"no statement named {stmt!r}", hint="the statements are " + ", ".join(s.maps))
    affs = {n: list(a) for n, a in s.affs.items()}
    affs[stmt][dim] = affs[stmt][dim].add_constant_val(_val(s, amount))
    return s.with_affs(affs, _fmt("shift", stmt, dim, amount))


def reverse(s: Schedule, dim: int | str) -> Schedule:
    """Reverse a dimension: ``t'_dim = -t_dim`` (run that loop backwards).

    Legal only when no dependence is carried by ``dim`` (its distance is 0 whenever the outer dimensions
    agree), i.e. when the loop is parallel.
    """
    dim = resolve_dim(s, dim)
    _check_dim(s, dim)
    affs = {n: [x.neg() if k == dim else x for k, x in enumerate(a)] for n, a in s.affs.items()}
    return s.with_affs(affs, _fmt("reverse", dim))


def scale(s: Schedule, dim: int, factor: int) -> Schedule:
    """Scale a dimension: ``t'_dim = factor * t_dim`` with ``factor > 0``.

    Always legal: it keeps the order of any two time vectors (it only leaves gaps between time steps).
    """
    _check_dim(s, dim)
    if factor <= 0:
        raise ScheduleError("scale needs a positive factor", hint="use reverse(dim) to run backwards")
    affs = {n: [x.scale_val(_val(s, factor)) if k == dim else x for k, x in enumerate(a)]
            for n, a in s.affs.items()}
    return s.with_affs(affs, _fmt("scale", dim, factor))


@budgeted("the step distribute")
def distribute(s: Schedule, dim: int = 0, order: Sequence[str] | None = None) -> Schedule:
    """Loop distribution (fission) at level ``dim``: insert a scalar dimension before ``dim`` whose value is
    the statement's position in ``order`` (default: textual order), ``t' = (t_0..t_{dim-1}, pos_S, t_dim..)``.

    All instances of an earlier statement then run before any instance of a later one that agrees on
    the outer ``dim`` dimensions. Legal when no dependence goes from a later statement to an earlier one
    inside a common iteration of the outer dimensions (no dependence cycle between them there).
    """
    if not 0 <= dim <= s.n_dims:
        raise ScheduleError(f"level {dim} does not exist", hint=f"use a level in 0..{s.n_dims}")
    names = list(order) if order else [st.name for st in s.scop.statements]
    if sorted(names) != sorted(st.name for st in s.scop.statements):
        raise ScheduleError("distribute needs an order of all statements",
                            hint=", ".join(st.name for st in s.scop.statements))
    pspace = s.scop.context.get_space()
    affs = {}
    for st in s.scop.statements:
        a = list(s.affs[st.name])
        affs[st.name] = a[:dim] + [const_aff(st, pspace, names.index(st.name))] + a[dim:]
    return s.with_affs(affs, _fmt("distribute", dim))


def strip_sink(s: Schedule, dim: int | str, size: int, names: Sequence[str] | None = None) -> Schedule:
    """Strip-mine loop dimension ``dim`` by ``size`` and sink the strip's point loop into every statement of
    ``names`` (default: all that have a loop at ``dim``), innermost: with ``p`` the dimension after the
    deepest loop of those statements, for such a statement ``S``
    ``t'_S = (t_0..t_{dim-1}, floor(t_dim / size), t_{dim+1}..t_{p-1}, t_dim, t_p..)``, and
    ``t'_S = (t_0..t_{p-1}, 0, t_p..)`` for the others. The tile loop stays where the loop was, shared as
    the loop was; inside one tile each statement runs its own loops with the tile's points innermost, and
    the statements that share their deepest loop share the points loop too, in their order
    (gramschmidt's ``R[k][j] +=`` and ``A[i][j] -=`` share the tiles of ``j`` and each walks its rows
    ``i`` with ``j`` inside: the tile's columns are read from the cache by the second; deriche's column
    sweep runs its four statements along each row of a strip of columns). Legal when no dependence between
    two instances of one tile goes back in the new order: the caller checks it exactly."""
    d = _check_dim(s, resolve_dim(s, dim), "loop dimension")
    if size < 2:
        raise ScheduleError(f"strip_sink needs a strip of at least 2 iterations, not {size}", hint="size >= 2")
    group = {st.name for st in s.scop.statements
             if not s.affs[st.name][d].is_cst() and (names is None or st.name in names)}
    if not group:
        raise ScheduleError(f"no statement has a loop at dimension {d}", hint=f"the schedule is {s.text()}")
    p = 1 + max(e for n in group for e, a in enumerate(s.affs[n]) if not a.is_cst())
    pspace = s.scop.context.get_space()
    affs = {}
    for st in s.scop.statements:
        a = list(s.affs[st.name])
        if st.name in group:
            affs[st.name] = a[:d] + [floor_div(a[d], size)] + a[d + 1:p] + [a[d]] + a[p:]
        else:
            affs[st.name] = a[:p] + [const_aff(st, pspace, 0)] + a[p:]
    return s.with_affs(affs, _fmt("strip_sink", d, size))


@budgeted("the step fuse")
def fuse(s: Schedule, dim: int | None = None) -> Schedule:
    """Loop fusion: move the scalar (statement-ordering) dimension ``dim`` to the innermost position,
    ``t' = (t_0..t_{dim-1}, t_{dim+1}.., t_dim)``, so the loops that followed it are shared.

    With ``dim`` omitted, the outermost scalar dimension that separates statements is used. Legal when
    every dependence between the fused statements has a lexicographically positive distance in the
    shared loops or is loop-independent in textual order (the ordering dimension, now innermost, keeps
    producers before consumers in one iteration).
    """
    if dim is None:
        cands = [d for d in range(s.n_dims) if s.is_scalar(d)
                 and len({const_value(a[d]) for a in s.affs.values()}) > 1]
        if not cands:
            raise ScheduleError("there is no statement-ordering dimension to fuse",
                                hint=f"the schedule is {s.text()}")
        dim = cands[0]
    _check_dim(s, dim)
    if not s.is_scalar(dim):
        raise ScheduleError(f"dimension {dim} is a loop, not a statement order",
                            hint="fuse(dim) takes a dimension that is constant for every statement")
    order = [k for k in range(s.n_dims) if k != dim] + [dim]
    return s.with_maps(permute(s, *order).maps, _fmt("fuse", dim))


@budgeted("the step parallel")
def parallel(s: Schedule) -> Schedule:
    """Mark every loop dimension that may run in parallel as coincident (a ``space`` dimension).

    Dimension ``d`` is marked exactly when every dependent pair of instances whose times agree on
    dimensions ``0..d-1`` also agrees on ``d`` (distance 0): then the iterations of loop ``d`` inside one
    iteration of the outer loops touch no common element in a conflicting way. Always legal; it changes
    no order, only what code generation may run at once.
    """
    return s.relabelled(steps=s.steps + ("parallel",), marked=frozenset(s.parallel_dims))


def sequential(s: Schedule) -> Schedule:
    """Run every loop in order: no dimension is marked, so code generation emits no OpenMP loop.

    The order of the instances is unchanged (always legal) and :attr:`Schedule.parallel_dims` still says
    which loops *could* run in parallel. Use it to time what a schedule does to locality alone, e.g.
    ``{ S0[t, i] -> [...] }; sequential``: isl text marks every exactly parallel dimension, and at one
    thread each OpenMP loop still costs a team start per execution and an outlined body.
    """
    return s.relabelled(steps=s.steps + ("sequential",), marked=frozenset())


def mark_parallel(s: Schedule) -> Schedule:
    """Like :func:`parallel` but without recording a step (used by searches)."""
    return s.relabelled(marked=frozenset(s.parallel_dims))
