"""The fusion structures the search compares (:func:`bases`), and the facts about shared loops their
candidates are scored by.

The structures: the starting schedule's fusion; its statements distributed inside the outermost loop or
fully; and, for one thread, its sibling perfect nests fused with the smallest shifts that keep the
dependences, the innermost loop parallel and the members' inner ranges equal
(:mod:`polylab.schedule.shiftfuse`: jacobi2d's update and copy stream each array once per time step instead
of twice). A distribution only counts the vector loops it wins for statements it does not take out of a
dependence chain's *shadow* (:func:`chain_shadowed`: bicg's ``s[j] +=`` costs nothing while it shares its
loop with the chain ``q[i] +=``; split off, its vector loop adds its time to the chain's).
"""

from __future__ import annotations

from dataclasses import dataclass

from polylab.schedule.core import Schedule, const_value
from polylab.schedule.legality import is_legal
from polylab.schedule.optimize.kinds import Structure
from polylab.schedule.optimize.loops import loop_dims, private_start
from polylab.schedule.optimize.machine import Machine, fits_in_cache
from polylab.schedule.shiftfuse import fuse_with_shifts
from polylab.schedule.transform import distribute
from polylab.schedule.tuning import SEPARATE_LIMIT


@dataclass(frozen=True)
class Base:
    """A fusion structure of the starting schedule: its kind, its schedule, and the values that name it
    (the distribution's level; the shifts of a fusion, as :mod:`polylab.schedule.shiftfuse` writes them)."""

    structure: Structure
    schedule: Schedule
    level: int = 0
    shifts: tuple[str, ...] = ()


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


def shared_loops(s: Schedule, a: str, b: str) -> int:
    """How many loops statements ``a`` and ``b`` share in ``s`` (the loop dimensions of both before the
    first dimension where they part: a constant that differs, or a loop of only one)."""
    n = 0
    for x, y in zip(s.affs[a], s.affs[b]):
        if x.is_cst() and y.is_cst():
            if const_value(x) != const_value(y):
                break
        elif x.is_cst() or y.is_cst():
            break
        else:
            n += 1
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
    """Pairs of the deepest statements (where the work is) that read a common array inside a shared loop
    of ``source`` and no longer share a loop in ``s``: each such distribution streams that array once more,
    as much data as the work touches (bicg's two products of ``A``, both ``n^2``). A pair with a shallower
    statement is not counted: its extra stream is of a lower order than the work (trmm's scaling
    ``B[i][j] = alpha * B[i][j]``, ``m n`` reads, split from the ``m^2 n`` product; fused, it keeps the
    product's parallel loop inside the loop on ``i``, which at two threads starts a thread team per row)."""
    reads = {st.name: {a.array for a in st.reads} for st in s.scop.statements}
    deepest = max((st.depth for st in s.scop.statements), default=0)
    deep = {st.name for st in s.scop.statements if st.depth == deepest}
    kept = fused_pairs(s)
    return sum(1 for a, b in fused_pairs(source)
               if (a, b) not in kept and reads[a] & reads[b] and a in deep and b in deep)


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


def bases(s: Schedule, machine: Machine) -> list[Base]:
    """The fusion structures tried: the starting schedule, its statements distributed just inside its
    outermost loop, and fully distributed (each a scalar dimension with the textual order,
    :func:`polylab.schedule.transform.distribute`), those that are legal (exact check); and its sibling
    perfect nests fused with shifts (:mod:`polylab.schedule.shiftfuse`: the nests' outer loops become
    sequential, their vector loops stay; with more than one thread :func:`optimize_schedule` keeps it
    only with time tiles, whose wave gives back a parallel loop), unless the data fits in cache
    (:func:`~polylab.schedule.optimize.machine.fits_in_cache`). Programs of more than
    :data:`~polylab.schedule.tuning.SEPARATE_LIMIT` statements keep their fusion (the search stays fast)."""
    out = [Base(Structure.KEPT, s)]
    if not 2 <= len(s.scop.statements) <= SEPARATE_LIMIT or not s.loop_dims:
        return out
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
