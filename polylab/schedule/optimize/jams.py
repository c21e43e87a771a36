"""Unroll-and-jam after the fusion structure is chosen: rows around dependence chains, and reduction loops.

The rows of the loop around a *chain* (a statement that sums into one element along its innermost loop, or
a recurrence that reads what it wrote a few iterations before along it, adi's tridiagonal sweeps;
:func:`chain_loop`) are jammed: ``k`` rows run together, ``(.., floor(i / k), j, .., i)``
(:mod:`polylab.schedule.jam`, :func:`jam_rows`), where that is legal (exact), keeps the parallel loops and
breaks at least as many chains as it takes vector loops; the code generator isolates the full strips, whose
constant-bound row loop gcc unrolls: unroll-and-jam. A *reduction loop* around a vector loop (gemm's ``k``
around ``j``, :func:`reduction_loop`) is jammed the other way: 4 of its iterations run inside the vector
loop, so each element takes 4 updates between one load and one store, in the original order
(:func:`jam_reductions`). Each jam the model asks for is recorded (:class:`~polylab.schedule.optimize.records.Jam`),
done or refused.
"""

from __future__ import annotations

import islpy as isl

from polylab.model import Statement
from polylab.schedule.core import Schedule
from polylab.schedule.jam import group, jammed
from polylab.schedule.optimize.kinds import JamKind, JamOutcome
from polylab.schedule.optimize.loops import (accumulates_along, iterator_of, loop_dims, parallel_loops, uses,
                                             value_span, vector_innermost)
from polylab.schedule.optimize.records import Jam
from polylab.schedule.tuning import REDUCTION_ROWS, UNROLLED_SPAN


def chain_loop(s: Schedule, st: Statement) -> tuple[int, int] | None:
    """``(d, p)`` when statement ``st``'s innermost loop in ``s`` (dimension ``p``) is a chain with rows
    around it (:func:`chain_rows`), ``d`` the innermost of those rows' loops; None otherwise."""
    found = chain_rows(s, st)
    return (found[0][0], found[1]) if found else None


def chain_rows(s: Schedule, st: Statement) -> tuple[tuple[int, ...], int] | None:
    """``(ds, p)`` when statement ``st``'s innermost loop in ``s`` (dimension ``p``, the last one of at
    least :data:`UNROLLED_SPAN` iterations) is a *chain*: no write of ``st`` depends on its iterator and
    ``st`` reads the element it writes (an accumulation, ``q[i] = q[i] + A[i][j] * p[j]`` along ``j``:
    each iteration waits for the previous one's add), or ``p`` carries a dependence (it is not exactly
    parallel) and ``st`` reads what it wrote a constant distance along ``p`` (a recurrence,
    ``S[i][j] = S[i][j] + S[i][j - 1]``, :func:`_recurrence`), and ``ds`` are the loops outside ``p``
    whose iterator every write depends on, innermost first (the rows of each accumulate into different
    elements: independent chains); None otherwise (also when no loop has such rows). A syntactic
    cost-model fact: whether jamming the rows is legal is checked exactly
    (:func:`polylab.schedule.jam.jammed`)."""
    v = s.affs[st.name]
    domain = st.domain.intersect_params(s.scop.context)
    live = [e for e in loop_dims(s, st.name) if (value_span(v[e], domain) or UNROLLED_SPAN) >= UNROLLED_SPAN]
    if len(live) < 2 or not st.writes:
        return None
    p = live[-1]
    k = iterator_of(v[p], st)
    if k is None:
        return None
    if not accumulates_along(st, k) and not (p not in s.parallel_dims and any(_recurrence(w, r, k) for w in st.writes
                                                                  for r in st.reads)):
        return None
    rows = tuple(d for d in reversed(live[:-1]) if (kd := iterator_of(v[d], st)) is not None
                 and all(uses(w, kd) for w in st.writes))
    return (rows, p) if rows else None


def _recurrence(w, r, k: int) -> bool:
    """Read ``r`` sees the element write ``w`` wrote a constant number of iterations of iterator ``k``
    earlier or later, along ``k`` only: same array, same linear part ``F``, and the offsets differ only in
    subscripts that are ``k`` plus a constant (``S[i][j - 1]`` read by ``S[i][j] = ..`` along ``j``)."""
    F, G = w.matrix, r.matrix
    if r.array != w.array or F is None or G is None or F != G:
        return False
    diff = [r_ for r_ in range(F.rows) if w.offset[r_, 0] != r.offset[r_, 0]]
    return bool(diff) and all(int(F[r_, k]) == 1 and sum(abs(int(x)) for x in F.row(r_)) == 1 for r_ in diff)


def jam_rows(s: Schedule, rows: int, floor: dict[str, int], jams: list[Jam]) -> Schedule:
    """``s`` with ``rows`` rows jammed (:mod:`polylab.schedule.jam`) around every chain
    (:func:`chain_rows`: the rows of the innermost loop around it whose jam is legal), where that is
    legal, keeps the parallel loops ``floor`` asks for, and the group
    has at least as many chains as statements whose vector loop it takes away (the row loop becomes
    the innermost loop of those with a vector loop inside it; one whose innermost loop is the row loop
    keeps it, in strips: bicg's ``s[j] += r[i] * A[i][j]`` loses its vector loop, ``q[i]``'s chain of
    4-cycle adds becomes 8 chains in flight; 1.95x of the source order, measured). Each jam asked for is
    appended to ``jams``."""
    if rows < 2:
        return s
    done: set[str] = set()
    for st in s.scop.statements:
        found = chain_rows(s, st) if st.name not in done else None
        if found is None:
            continue
        # the rows of the innermost loop around the chain whose jam is legal: an outer loop's rows only
        # where the inner one's jam is illegal (cholesky's rows of j inside the tiles of its Pluto-style
        # band; its rows of i are legal there)
        for d in found[0]:
            names = group(s, st.name, d)
            chains = sorted(n for n in names if d in (chain_rows(s, s.scop.statement(n)) or ((),))[0])
            # a statement whose innermost loop is the row loop itself keeps it (in strips of ``rows``)
            lost = sorted(n for n in names if vector_innermost(s, s.scop.statement(n))
                          and loop_dims(s, n)[-1] != d)
            if len(chains) < len(lost):
                jams.append(Jam(JamKind.CHAINS, JamOutcome.VECTORS_LOST, rows, d, tuple(sorted(names)),
                                tuple(chains), tuple(lost)))
                break
            cand, outcome = _kept_jam(s, d, names, rows, floor)
            if outcome is JamOutcome.ILLEGAL and d != found[0][-1]:
                continue
            jams.append(Jam(JamKind.CHAINS, outcome, rows, d, tuple(sorted(names)), tuple(chains), tuple(lost)))
            if cand is not None:
                s = cand
            break
        done |= names
    return s


def reduction_loop(s: Schedule, st: Statement) -> int | None:
    """The dimension ``d`` of statement ``st``'s loop just outside its innermost one in ``s`` when the
    innermost loop is a vector loop (exactly parallel, stride-1) and ``d`` is a *reduction* loop around it:
    ``st`` accumulates into the element it writes (it reads it with the same subscripts) and no write
    subscript uses ``d``'s iterator (gemm's ``C[i][j] += alpha * A[i][k] * B[k][j]`` in the order
    ``(i, k, j)``: ``k`` around the vector loop ``j``); both loops of at least :data:`UNROLLED_SPAN`
    iterations. A strip of the vector loop does not keep its sums in registers across ``d`` (gcc loads and
    stores each element of a 32-wide strip at every iteration of ``d``): the jam goes inside it too (trmm's
    tiles of ``j``: 1.5x at two threads, measured; gramschmidt's ``R[k][j] +=``). None otherwise. A
    syntactic cost-model fact; legality is checked exactly."""
    v = s.affs[st.name]
    domain = st.domain.intersect_params(s.scop.context)
    live = [e for e in loop_dims(s, st.name) if (value_span(v[e], domain) or UNROLLED_SPAN) >= UNROLLED_SPAN]
    if len(live) < 2 or not st.writes or live[-1] != loop_dims(s, st.name)[-1] or not vector_innermost(s, st):
        return None
    d, p = live[-2], live[-1]
    k, kp = iterator_of(v[d], st), iterator_of(v[p], st)
    # k must be the loop itself (no tile or strip division in its dimension)
    if kp is None or v[d].get_pieces()[0][1].dim(isl.dim_type.div):
        return None
    return d if accumulates_along(st, k) else None


def _kept_jam(s: Schedule, d: int, names: frozenset[str], rows: int,
              floor: dict[str, int]) -> tuple[Schedule | None, JamOutcome]:
    """:func:`polylab.schedule.jam.jammed` when it is legal and keeps the parallel loops ``floor`` asks
    for; else None; and the outcome."""
    cand = jammed(s, d, names, rows)
    if cand is None:
        return None, JamOutcome.ILLEGAL
    if any(parallel_loops(cand)[n] < v for n, v in floor.items()):
        return None, JamOutcome.PARALLEL_LOST
    return cand, JamOutcome.DONE


def jam_reductions(s: Schedule, floor: dict[str, int], jams: list[Jam]) -> Schedule:
    """``s`` with :data:`REDUCTION_ROWS` iterations of each group's reduction loop (:func:`reduction_loop`)
    jammed into the vector loop inside it (:func:`polylab.schedule.jam.jammed`): ``(.., floor(k / R), j, ..,
    k)``, where that is legal (exact) and keeps the parallel loops ``floor`` asks for, group by group, the
    deepest statements first. Each element of the vector loop then takes ``R`` updates in a register
    between one load and one store, in the order of ``k`` (the sums are bit for bit those of the
    original); the code generator isolates the full strips of every jammed depth
    (:func:`polylab.codegen.ast.full_strips`), whose constant-bound ``k`` loop gcc unrolls inside the
    vector loop. gemm (800^3, one thread): 1.15-1.32x of the ``(i, k, j)`` order with ``R = 4``, slower
    with 8 (SSE2 runs out of registers); 2mm's and 3mm's later products, jammed too since the code
    generator isolates a band's strips at several depths, at PolyBench's LARGE size: 2.0x and 1.3x with
    their stream tiles (docs/performance.md); after a chain's jam too (mvt)."""
    done: set[str] = set()
    for st in sorted(s.scop.statements, key=lambda st: -st.depth):
        if st.name in done:
            continue
        d = reduction_loop(s, st)
        if d is None:
            continue
        names = group(s, st.name, d)
        done |= names
        # every statement of the group must be such a reduction around its vector loop at d
        if any(reduction_loop(s, s.scop.statement(n)) != d for n in names):
            continue
        cand, outcome = _kept_jam(s, d, names, REDUCTION_ROWS, floor)
        jams.append(Jam(JamKind.REDUCTION, outcome, REDUCTION_ROWS, d, tuple(sorted(names))))
        if cand is not None:
            s = cand
    return s
