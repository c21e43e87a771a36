"""The fusion structures the search compares (:func:`bases`), and the facts about shared loops their
candidates are scored by.

The structures: the starting schedule's fusion; its statements distributed inside the outermost loop or
fully; and, for one thread, its sibling perfect nests fused with the smallest shifts that keep the
dependences, the innermost loop parallel and the members' inner ranges equal
(:mod:`polylab.schedule.shiftfuse`: jacobi2d's update and copy stream each array once per time step instead
of twice); and a shared loop strip-mined with its points sunk into each statement that shares it
(:func:`sinkable_loops`, :func:`polylab.schedule.transform.strip_sink`: deriche's column sweeps run along
rows, 32 columns at a time). A distribution only counts the vector loops it wins for statements it does
not take out of a dependence chain's *shadow* (:func:`chain_shadowed`: bicg's ``s[j] +=`` costs nothing
while it shares its loop with the chain ``q[i] +=``; split off, its vector loop adds its time to the
chain's).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polylab.schedule.core import Schedule, const_value
from polylab.schedule.legality import is_legal
from polylab.schedule.optimize.kinds import Structure
from polylab.schedule.optimize.loops import is_stride_one, iterator_of, loop_dims, private_start, subscripted, uses
from polylab.schedule.optimize.machine import Machine, fits_in_cache
from polylab.schedule.shiftfuse import fuse_with_shifts
from polylab.schedule.transform import distribute, strip_sink
from polylab.schedule.tuning import PAR_STRIP, SEPARATE_LIMIT


@dataclass(frozen=True)
class Base:
    """A fusion structure of the starting schedule: its kind, its schedule, and the values that name it
    (the distribution's level, or the dimension of a strip-mined shared loop; the shifts of a fusion, as
    :mod:`polylab.schedule.shiftfuse` writes them; the statements that share the strip-mined loop)."""

    structure: Structure
    schedule: Schedule
    level: int = 0
    shifts: tuple[str, ...] = ()
    members: tuple[str, ...] = ()


def fused_pairs(s: Schedule) -> set[tuple[str, str]]:
    """The pairs of statements that share at least one loop in ``s`` (a dimension that is a loop for
    both, with equal constants on every earlier dimension constant for both)."""
    out = set()
    names = [st.name for st in s.scop.statements]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for d in range(s.n_dims):
                x, y = s.affs[a][d], s.affs[b][d]
                if x.is_cst() and y.is_cst():
                    if const_value(x) != const_value(y):
                        break
                    continue
                if not x.is_cst() and not y.is_cst():
                    out.add((a, b))
                break
    return out


def _shared_dims(s: Schedule, a: str, b: str) -> list[int]:
    """The loop dimensions statements ``a`` and ``b`` share in ``s``: those of both before the first
    dimension where they part (a constant that differs, or a loop of only one)."""
    out = []
    for d, (x, y) in enumerate(zip(s.affs[a], s.affs[b])):
        if x.is_cst() and y.is_cst():
            if const_value(x) != const_value(y):
                break
        elif x.is_cst() or y.is_cst():
            break
        else:
            out.append(d)
    return out


def _shared_iterators(s: Schedule, a: str, b: str) -> list[set[int]]:
    """The iterators of ``a`` each shared loop dimension of ``a`` and ``b`` involves, outermost first."""
    st = s.scop.statement(a)
    return [{k for k in range(st.depth) if s.affs[a][d].involves_dims(isl.dim_type.in_, k, 1)}
            for d in _shared_dims(s, a, b)]


def shared_loops(s: Schedule, a: str, b: str) -> int:
    """How many loops statements ``a`` and ``b`` share in ``s`` (:func:`_shared_dims`), a loop counted once
    however many dimensions walk it (a strip's tiles and its points, :func:`_sunk`: the dimensions that
    involve no iterator of ``a`` that an outer shared dimension involves)."""
    n, seen = 0, set()
    for its in _shared_iterators(s, a, b):
        n += bool(its - seen)
        seen |= its
    return n


def reuse_gained(source: Schedule, s: Schedule) -> int:
    """Over the pairs of statements that access a common array, the loops they share in ``s`` beyond
    those they share in ``source`` (a fusion: each such loop keeps the common elements of one iteration
    in cache for both instead of streaming them once per statement)."""
    arrays = {st.name: {a.array for a in st.accesses} for st in s.scop.statements}
    names = [st.name for st in s.scop.statements]
    return sum(max(0, shared_loops(s, a, b) - shared_loops(source, a, b))
               for i, a in enumerate(names) for b in names[i + 1:] if arrays[a] & arrays[b])


def reuse_lost(source: Schedule, s: Schedule) -> int:
    """Pairs of the deepest statements (where the work is) that share a loop of ``source`` and in ``s``
    either share no loop at all though they read a common array (each such distribution streams that array
    once more, as much data as the work touches: bicg's two products of ``A``, both ``n^2``), or share
    fewer loops though they access the same elements (one array through the same subscripts, which use a
    loop they no longer share: gramschmidt's ``R[k][j] += Q[i][k] * A[i][j]`` and ``A[i][j] -= ..``,
    whose shared strip of columns ``j`` has the second read from the cache what the first read; split
    into two loops on ``j``, each pass over ``A`` streams it). A pair with a shallower statement is not
    counted: its extra stream is of a lower order than the work (trmm's scaling ``B[i][j] = alpha *
    B[i][j]``, ``m n`` reads, split from the ``m^2 n`` product; fused, it keeps the product's parallel
    loop inside the loop on ``i``, which at two threads starts a thread team per row)."""
    reads = {st.name: {a.array for a in st.reads} for st in s.scop.statements}
    deepest = max((st.depth for st in s.scop.statements), default=0)
    deep = {st.name for st in s.scop.statements if st.depth == deepest}
    kept = fused_pairs(s)
    lost = 0
    for a, b in fused_pairs(source):
        if a not in deep or b not in deep:
            continue
        if (a, b) not in kept and reads[a] & reads[b]:
            lost += 1
        elif shared_loops(s, a, b) < shared_loops(source, a, b) and _same_elements(s, a, b):
            lost += 1
    return lost


def _same_elements(s: Schedule, a: str, b: str) -> bool:
    """Statement ``b`` reads an element that ``a`` accesses, through the same subscripts (the same affine
    function of the same iterators), and they use every iterator of ``a`` that no loop the two share in
    ``s`` walks: the elements ``b`` reads again in one iteration of their shared loops are as many as
    their work there (gramschmidt's ``A[i][j]``, all of ``i`` and ``j`` inside the shared ``k``; not
    symm's ``A[i][k]``, one row for each ``i`` against its ``j k`` instances; not sl3's initialisation
    ``x[i][j][k] = 1.0``, whose elements its sweep writes but reads only through other subscripts)."""
    sa, sb = s.scop.statement(a), s.scop.statement(b)
    shared = set().union(*_shared_iterators(s, a, b))
    inner = set(range(sa.depth)) - shared
    return bool(inner) and sa.iterators == sb.iterators and any(
        x.array == y.array and x.matrix is not None and x.matrix == y.matrix and x.offset == y.offset
        and all(uses(x, k) for k in inner) for x in sa.accesses for y in sb.reads)


def innermost_pairs(s: Schedule) -> set[tuple[str, str]]:
    """The pairs of statements that run in one body of their innermost loop in ``s``: both have their
    last loop at the same dimension ``d`` and share it (:func:`fused_pairs`' condition on every
    dimension up to ``d``), so one iteration of that loop runs both."""
    out = set()
    last = {n: (loop_dims(s, n) or [None])[-1] for n in s.affs}
    names = [st.name for st in s.scop.statements]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            d = last[a]
            if d is None or last[b] != d:
                continue
            if all(const_value(s.affs[a][e]) == const_value(s.affs[b][e])
                   for e in range(d) if s.affs[a][e].is_cst() and s.affs[b][e].is_cst()):
                out.add((a, b))
    return out


def chain_shadowed(source: Schedule, s: Schedule) -> set[str]:
    """Statements whose work the source order hides behind a dependence chain and ``s`` no longer does.

    A statement ``X`` that shares its innermost loop with ``Y`` in ``source``, where ``Y``'s innermost
    loop in ``s`` is still sequential (a dependence chain: each iteration waits for the previous one's
    result, e.g. bicg's ``q[i] += A[i][j] * p[j]`` along ``j``): the loop's time is the chain's latency
    ``n * latency(+)``, and ``X``'s independent work runs in its shadow. Splitting ``X`` off gives it a
    vector loop but adds its time, ``n / vector width`` cycles, to the chain's, which does not shrink: a
    vector loop won that way is no gain (bicg distributed ran at 0.6x of its source order)."""
    split = innermost_pairs(source) - innermost_pairs(s)
    chain = {n for n in s.affs if loop_dims(s, n) and loop_dims(s, n)[-1] not in s.marked}
    return {x for a, b in split for x, y in ((a, b), (b, a)) if y in chain}


def sinkable_loops(s: Schedule) -> list[tuple[int, tuple[str, ...]]]:
    """The loops worth strip-mining with their points sunk into each statement
    (:func:`polylab.schedule.transform.strip_sink`): ``(d, statements)`` for each loop at dimension ``d``
    shared by two or more statements (the same constants before ``d``), a plain iterator of each, that is
    the stride-1 loop of one of them which runs a loop inside it that walks its arrays with another stride
    (:func:`~polylab.schedule.optimize.loops.is_stride_one`): gramschmidt's ``j``, around
    ``R[k][j] += Q[i][k] * A[i][j]`` and ``A[i][j] -= Q[i][k] * R[k][j]`` along ``i``; deriche's columns
    ``j`` around its recurrences along ``i``. A statement's private loops are permuted by the search; a
    shared loop only this way, which keeps it shared."""
    out = []
    for d in s.loop_dims:
        groups: dict[tuple, list] = {}
        for st in s.scop.statements:
            a = s.affs[st.name]
            if not a[d].is_cst():
                key = tuple(const_value(a[e]) if a[e].is_cst() else None for e in range(d))
                groups.setdefault(key, []).append(st)
        for members in groups.values():
            its = [iterator_of(s.affs[st.name][d], st) for st in members]
            if len(members) < 2 or any(k is None for k in its):
                continue
            if any(dims[-1] > d and is_stride_one(st, k) and subscripted(st, inner)
                   and not is_stride_one(st, inner)
                   for st, k in zip(members, its)
                   if (dims := loop_dims(s, st.name)) and (inner := iterator_of(s.affs[st.name][dims[-1]], st))
                   is not None):
                out.append((d, tuple(st.name for st in members)))
    return out


def bases(s: Schedule, machine: Machine) -> list[Base]:
    """The fusion structures tried: the starting schedule, its statements distributed just inside its
    outermost loop, and fully distributed (each a scalar dimension with the textual order,
    :func:`polylab.schedule.transform.distribute`), those that are legal (exact check); and its sibling
    perfect nests fused with shifts (:mod:`polylab.schedule.shiftfuse`: the nests' outer loops become
    sequential, their vector loops stay; with more than one thread :func:`optimize_schedule` keeps it
    only with time tiles, whose wave gives back a parallel loop), unless the data fits in cache
    (:func:`~polylab.schedule.optimize.machine.fits_in_cache`). Programs of more than
    :data:`~polylab.schedule.tuning.SEPARATE_LIMIT` statements keep their fusion (the search stays fast).
    Last, at any number of statements, the shared loops of :func:`sinkable_loops` strip-mined with their
    points sunk into each statement (:func:`_sunk`)."""
    out = [Base(Structure.KEPT, s)]
    if 2 <= len(s.scop.statements) <= SEPARATE_LIMIT and s.loop_dims:
        out += _fusions(s, machine)
    return out + _sunk(s)


def _sunk(s: Schedule) -> list[Base]:
    """The shared loops of :func:`sinkable_loops` strip-mined with their points sunk: all of them at once
    (deriche's two column sweeps), else each alone, where legal (exact check). Last among the structures:
    a tie goes to the others (a strip of 32 columns where whole rows score the same, 2mm's product after
    its initialisation, runs slower: 0.77x, measured)."""
    sinkable = sinkable_loops(s)
    sunk = s
    for d, members in sinkable:
        sunk = strip_sink(sunk, d, PAR_STRIP, members)
    if len(sinkable) > 1 and is_legal(sunk):
        return [Base(Structure.STRIP_SUNK, sunk, sinkable[0][0],
                     members=tuple(n for _, members in sinkable for n in members))]
    out = []
    for d, members in sinkable:
        one = strip_sink(s, d, PAR_STRIP, members)
        if is_legal(one):
            out.append(Base(Structure.STRIP_SUNK, one, d, members=members))
    return out


def _fusions(s: Schedule, machine: Machine) -> list[Base]:
    """The fusion with shifts and the distributions of :func:`bases`."""
    out = []
    # the fusion streams each array once per outer iteration instead of once per nest: nothing to gain
    # where the data stays in cache anyway (heat-3d at its small size: 0.51x of the original fused)
    fused = None if fits_in_cache(s.scop, machine) else fuse_with_shifts(s, {n: private_start(s, n) for n in s.affs})
    if fused is not None:
        out.append(Base(Structure.SHIFT_FUSED, fused[0], shifts=tuple(fused[1])))
    first = s.loop_dims[0]
    for level, kind in ((first + 1, Structure.DISTRIBUTED_INSIDE), (0, Structure.FULLY_DISTRIBUTED)):
        d = distribute(s, level)
        if is_legal(d):
            out.append(Base(kind, d, level))
    return out
