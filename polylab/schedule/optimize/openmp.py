"""Which exactly parallel dimensions keep their OpenMP loop (:func:`openmp_dims`); the others stay exactly
parallel (the vectorizer's, or sequential), each with a :class:`~polylab.schedule.optimize.records.SerialLoop`
record saying why."""

from __future__ import annotations

from typing import Sequence

import islpy as isl

from polylab.model import Statement
from polylab.schedule.core import Schedule, map_from_affs
from polylab.schedule.optimize.kinds import SerialReason
from polylab.schedule.optimize.loops import local_span, loop_dims, subscripted
from polylab.schedule.optimize.machine import (DEFAULT_VECTOR_BYTES, at_sizes, context_sizes, countable,
                                              declared_sizes)
from polylab.schedule.optimize.records import SerialLoop
from polylab.schedule.tuning import MIN_TEAM_WORK, UNROLLED_SPAN


def openmp_dims(s: Schedule, threads: int = 2, vector_bytes: int = DEFAULT_VECTOR_BYTES
                ) -> tuple[frozenset[int], list[SerialLoop]]:
    """The parallel dimensions of ``s`` that keep their OpenMP loop, and a record for each one left out.

    A marked dimension inside a marked dimension of every statement that runs it gets no OpenMP loop: the
    outer one is the parallel loop (a wave of time tiles may hold a single tile, and isl then drops the
    tile loop, which would leave the inner loop as an OpenMP loop started once per row).

    A marked dimension ``d`` is left to the vectorizer (unmarked; it stays exactly parallel) when, for
    every statement with a loop at ``d``, ``d`` is its innermost loop (:func:`_innermost_long`: only
    loops of a few constant iterations, which the compiler unrolls, may run inside it, such as the rows
    of a jam), no loop around it is marked, and a
    loop around it walks the arrays (a plain iterator that some access of the statement is subscripted
    by): OpenMP would start the loop once per row of that walk, each start with one row of work (atax's
    ``y[j] += A[i][j] * tmp[i]``, parallel in ``j`` inside the sequential ``i``: 0.36x of the original
    on two threads, 4000 starts of 4000 iterations). A loop around it that no subscript uses (a time
    loop, jacobi-1d's ``t``) repeats a whole sweep per start: kept.

    With one thread no dimension keeps its OpenMP loop: there is no team to share it, and the loop
    OpenMP outlines runs in a function of its own, where the compiler no longer sees the sizes the kernel
    was called with nor, once it inlines the body, always its ``restrict`` arrays (PolyBench's heat-3d at
    MEDIUM, one thread: 4.9 ms with its OpenMP loops, 4.4 ms without; jacobi-1d's inner loop: 0.72x of the
    original with one). The dimensions stay exactly parallel."""
    names = [st.name for st in s.scop.statements]
    if threads == 1:
        return frozenset(), [SerialLoop(d, SerialReason.ONE_THREAD) for d in sorted(s.marked)
                             if any(not s.affs[n][d].is_cst() for n in names)]
    keep = set(s.marked)
    why = []
    for d in sorted(s.marked):
        users = [n for n in names if not s.affs[n][d].is_cst()]
        if not users:
            continue
        if all(any(e in keep for e in loop_dims(s, n) if e < d) for n in users):
            keep.discard(d)
            why.append(SerialLoop(d, SerialReason.INSIDE_PARALLEL))
            continue
        rows = []
        for n in users:
            dims = loop_dims(s, n)
            stmt = s.scop.statement(n)
            outer = [e for e in dims if e < d]
            walks = [e for e in outer if any(subscripted(stmt, k) for k in range(stmt.depth)
                                             if s.affs[n][e].involves_dims(isl.dim_type.in_, k, 1))]
            if not _innermost_long(s, stmt, d) or any(e in keep for e in outer) or not walks:
                break
            rows.append(f"{n}: {s.expressions(n)[walks[-1]]}")
        else:
            keep.discard(d)
            why.append(SerialLoop(d, SerialReason.PER_ROW, tuple(rows)))
            continue
        work = team_work(s, d, users)
        bounded = work is None
        if bounded:   # too many instances to count: their bounding boxes bound them from above
            work = team_work_bound(s, d, users)
        least = team_least(vector_bytes)
        if work is not None and work[1] < least * work[0]:
            keep.discard(d)
            sizes = declared_sizes(s.scop) if context_sizes(s.scop) is None else None
            why.append(SerialLoop(d, SerialReason.LITTLE_WORK, starts=work[0], instances=work[1],
                                  sizes=tuple(sizes.items()) if sizes else (), least=least, bounded=bounded))
    return frozenset(keep), why


def team_least(vector_bytes: int = DEFAULT_VECTOR_BYTES) -> int:
    """The fewest statement instances a team start must get on average: :data:`MIN_TEAM_WORK` for the
    default build's vectors (SSE2, 16 bytes, where it was measured), and as many more as wider vectors
    run at once, since a start's cost is fixed while an instance's shrinks (PolyBench's gramschmidt at
    MEDIUM on two threads with 32-byte vectors: 239 starts of 48,000 instances each ran 3 to 9 ms under
    ``OMP_WAIT_POLICY=passive``, 1.0 ms on one thread)."""
    return MIN_TEAM_WORK * max(1, vector_bytes // DEFAULT_VECTOR_BYTES)


def team_work(s: Schedule, d: int, users: Sequence[str]) -> tuple[int, int] | None:
    """``(starts, instances)`` of an OpenMP loop at dimension ``d`` run by the statements ``users``:
    ``starts = |{ theta_{<d}(x) : x in D_n, n in users }|`` is the number of distinct values of the
    dimensions around ``d`` (each starts a team), ``instances = sum_n |D_n|`` the statement instances they
    share (exact counts). Where the program has parameters, both are counted at the largest sizes the
    arrays' declarations allow (:func:`~polylab.schedule.optimize.machine.declared_sizes`; PolyBench's
    ludcmp at MEDIUM: ``n = 400``, 399 starts of about ``n^2 / 6`` instances each). None where no such
    sizes are known (the sizes are known only when it runs) or where a set is too large to count
    (:func:`~polylab.schedule.optimize.machine.countable`)."""
    try:
        sets = _team_sets(s, d, users)
        if sets is None or not all(countable(domain) and countable(prefix) for domain, prefix in sets):
            return None
        return _starts(sets, d), sum(int(domain.count_val().to_python()) for domain, _ in sets)
    except isl.Error:  # isl could not count a set: unknown, as with unknown sizes
        return None


def team_work_bound(s: Schedule, d: int, users: Sequence[str]) -> tuple[int, int] | None:
    """``(starts, bound)`` for an OpenMP loop at dimension ``d`` whose statement instances are too many
    to count (:func:`team_work` gives None): ``starts`` counted exactly as there (the dimensions around
    ``d`` are fewer points), and ``bound >= sum_n |D_n|``, each domain's bounding box at the declared
    sizes (the product over its dimensions of ``max - min + 1``, isl's ``dim_max`` and ``dim_min``, never
    enumerated). A bound below the work a start needs proves the loop's starts too small (PolyBench's
    doitgen at LARGE on two threads: 21,000 starts of at most 25,760 instances, 0.27x of the original with
    them); None where the starts cannot be counted either, or a domain is unbounded."""
    try:
        sets = _team_sets(s, d, users)
        if sets is None or not all(countable(prefix) for _, prefix in sets):
            return None
        boxes = [_box_points(domain) for domain, _ in sets if not domain.is_empty()]
        if any(b is None for b in boxes):
            return None
        return _starts(sets, d), sum(boxes)
    except isl.Error:
        return None


def _team_sets(s: Schedule, d: int, users: Sequence[str]) -> list[tuple[isl.Set, isl.Set]] | None:
    """For each statement of ``users``, its domain and the values of the dimensions around ``d`` (the
    team's starts), both at the largest sizes the arrays' declarations allow; None where those are not
    known."""
    sizes = declared_sizes(s.scop)
    if sizes is None:
        return None
    out = []
    for n in users:
        stmt = s.scop.statement(n)
        around = map_from_affs(stmt, stmt.domain.get_space(), list(s.affs[n][:d]))
        out.append((at_sizes(stmt.domain, sizes), at_sizes(around.intersect_domain(stmt.domain).range(), sizes)))
    return out


def _starts(sets: Sequence[tuple[isl.Set, isl.Set]], d: int) -> int:
    """The team's starts: the distinct values of the dimensions around ``d`` over all statements (one for
    the outermost dimension, at least one)."""
    if not d or not sets:
        return 1
    starts = sets[0][1]
    for _, prefix in sets[1:]:
        starts = starts.union(prefix)
    return max(int(starts.count_val().to_python()), 1)


def _box_points(domain: isl.Set) -> int | None:
    """The points of ``domain``'s bounding box (a set without parameters): the product over its dimensions
    of ``max - min + 1`` (isl's ``dim_max`` and ``dim_min``, never enumerated); None where a dimension is
    unbounded."""
    box = 1
    for k in range(domain.dim(isl.dim_type.set)):
        hi, lo = domain.dim_max(k), domain.dim_min(k)
        if not (hi.is_cst() and lo.is_cst()):
            return None
        box *= (int(hi.get_pieces()[0][1].get_constant_val().to_python())
                - int(lo.get_pieces()[0][1].get_constant_val().to_python()) + 1)
    return box


def _innermost_long(s: Schedule, stmt: Statement, d: int) -> bool:
    """Dimension ``d`` is a loop of ``stmt`` in ``s`` and every loop of ``stmt`` inside it runs at most
    :data:`UNROLLED_SPAN` iterations for all parameter values (the rows of a jam; the compiler unrolls
    them completely: ``d`` is the innermost loop of the machine code)."""
    domain = stmt.domain.intersect_params(s.scop.context)
    dims = loop_dims(s, stmt.name)
    v = s.affs[stmt.name]
    return d in dims and all((local_span(stmt, v[:e], v[e], domain) or UNROLLED_SPAN + 1) <= UNROLLED_SPAN
                             for e in dims if e > d)
