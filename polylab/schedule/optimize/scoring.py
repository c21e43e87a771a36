"""How good a statement's loops are (:func:`statement_score`) and a whole schedule (:func:`program_score`),
as the named records of :mod:`polylab.schedule.optimize.records`, and which shapes the per-statement search
may skip once it has a good one (:func:`skips`).

Loops are counted by what they do for every parameter value (:func:`~polylab.schedule.optimize.loops.value_span`,
exact): a time dimension that takes one value is no loop; a parallel loop of fewer than
:data:`~polylab.schedule.tuning.MIN_PARALLEL_SPAN` iterations is not counted as parallel; loops of fewer
than :data:`~polylab.schedule.tuning.UNROLLED_SPAN` iterations inside are unrolled by the compiler, so
"innermost" means the last loop with more.
"""

from __future__ import annotations

from typing import Sequence

from polylab.model import Statement
from polylab.schedule.core import Schedule
from polylab.schedule.optimize.kinds import Innermost, ShapeKind
from polylab.schedule.optimize.loops import (Aff, accumulates_along, carries_chain, is_stride_one, iterator_of,
                                             loop_dims, parallel_loops, stride_score, value_span)
from polylab.schedule.optimize.records import ProgramScore, StatementChoice, StatementScore
from polylab.schedule.tuning import MIN_PARALLEL_SPAN, OUTER_ITERATIONS_PER_THREAD, UNROLLED_SPAN


def statement_score(vec: Sequence[Aff], marked: frozenset[int], stmt: Statement, tiled: bool = False,
                    schedule: Schedule | None = None, threads: int = 1) -> StatementScore:
    """The score of statement ``stmt`` with time vector ``vec`` and parallel dimensions ``marked``
    (``tiled``: its shape tiles it for the cache). A dimension of constant span 1 (:func:`value_span`) is
    not a loop, and a parallel loop counts as parallel only when its span grows with the parameters or is
    at least :data:`~polylab.schedule.tuning.MIN_PARALLEL_SPAN`: a loop of a few iterations gives no
    parallelism worth a thread team (inside a sequential loop, OpenMP would start it once per iteration of
    that loop for a handful of iterations' work: 250 times slower than the original on ``for (t = 0; t <
    10; t++) for (i ..; i += 2) c[i] += 0.25 * c[i - 2]`` under a tile-level wavefront). With ``threads``
    > 1 the statement's outermost loop counts from
    :data:`~polylab.schedule.tuning.OUTER_ITERATIONS_PER_THREAD` iterations per thread: a team started once
    shares its whole nest, and each thread gets a few of its iterations (a contraction ``O[p][q][r] +=
    I[p][q][s] * W[s][r]`` over 20 values of ``p`` keeps ``p`` outermost and its stride-1 ``r`` innermost
    on two threads, where ``r`` outermost, the only long parallel loop, left a strided innermost loop: 0.59x
    of one thread). The innermost
    loop counts as a vector loop (or as independent chains) when it is parallel, whatever its span: vectors
    need no thread team. ``schedule``: the schedule whose time vector ``vec`` is, with its dependences,
    to tell whether an innermost loop that is not parallel carries a chain
    (:func:`~polylab.schedule.optimize.loops.carries_chain`; without it, such a loop counts as one)."""
    span = {d: value_span(a, stmt.domain) for d, a in enumerate(vec) if not a.is_cst()}

    def at_least(d: int, bound: int) -> bool:  # unbounded (None) and empty (0) spans count as long
        return (span[d] or bound) >= bound

    dims = [d for d in span if span[d] != 1]
    outer = min(MIN_PARALLEL_SPAN, OUTER_ITERATIONS_PER_THREAD * threads) if threads > 1 else MIN_PARALLEL_SPAN
    scalable = {d for d in dims if d in marked and at_least(d, outer if d == dims[0] else MIN_PARALLEL_SPAN)}
    par = [k for k, d in enumerate(dims) if d in scalable]
    if not dims:
        return StatementScore(0, Innermost.NONE, 0, tiled, 0, 0)
    # loops of a few constant iterations inside are unrolled by the compiler (gcc -O3 peels them
    # completely): the loop that runs innermost in the machine code is the last one with more
    # (a 3x3 convolution keeps its 9-term sum in a register and vectorizes the column loop around it)
    long_dims = [d for d in dims if at_least(d, UNROLLED_SPAN)]
    last = long_dims[-1] if long_dims else dims[-1]
    k = iterator_of(vec[last], stmt)
    stride1 = is_stride_one(stmt, k)
    # vectors need no thread team: a parallel stride-1 loop of a few dozen iterations still vectorizes
    inner = (Innermost.VECTOR if last in marked and stride1 else Innermost.STRIDE_ONE if stride1
             else Innermost.PARALLEL if last in marked else Innermost.NONE)
    chain = last not in marked and (schedule is None or carries_chain(schedule, stmt.name, last))
    around = iterator_of(vec[long_dims[-2]], stmt) if len(long_dims) >= 2 else None
    reduction = accumulates_along(stmt, around)
    return StatementScore(par[0] if par else None, inner, stride_score(stmt, k), tiled, len(dims), len(par), chain,
                          reduction)


def skips(best: StatementScore, best_kind: ShapeKind, first_private: int, next_kind: ShapeKind,
          threads: int = 1) -> bool:
    """The per-statement search skips the next shape: the best so far has a parallel loop at the first
    private depth (or outside) and a vectorizable innermost loop (nothing scores higher), or it has a
    parallel loop and the next shapes are the strips, which are only for statements with no parallel loop
    (a parallel innermost loop of any span counts); or, with one thread or for the strips without a wave,
    the next shapes are the strips and the best so far's innermost loop carries no chain (the strips
    overlap chains: with one thread, or without the wave's parallel tile loop, that is all they do, and
    where there is none they only walk the rows across, floyd-warshall's
    ``path[i][j]`` along ``j``, whose one dependence inside a row comes from the instance ``j = k``: 0.51x
    of the source order with the strips' tile wavefront, measured); or the best is the strips' time wavefront without a
    time skew and the next is one with it; or the next is the best's kind of strips with a larger skew
    ``f`` while the best's innermost loop is already parallel (only ``f`` differs, and the score does not
    depend on it then). The tiling shapes (only offered when the cache model asks for them) are always
    tried."""
    if next_kind.tiled:
        return False
    if next_kind is ShapeKind.STRIPS_SKEWED_TIME_WAVE and best_kind is ShapeKind.STRIPS_TIME_WAVE:
        return True   # the time skew only where the plain rectangle is illegal
    if next_kind is best_kind and best_kind.strips and best.innermost >= Innermost.PARALLEL:
        return True   # a larger skew of the same strips scores the same once the innermost loop is parallel
    if best.outermost_parallel is not None and best.outermost_parallel <= first_private and best.vector:
        return True
    # a parallel innermost loop is a parallel loop too, however short: no chains to overlap
    parallel = best.outermost_parallel is not None or best.innermost in (Innermost.PARALLEL, Innermost.VECTOR)
    # the strips alone (no wave around them) have no parallel loop but their innermost one, which OpenMP
    # would start once per row: with threads too they only overlap chains
    alone = threads == 1 or next_kind is ShapeKind.STRIPS
    return next_kind.strips and not best_kind.strips and (parallel or (alone and not best.chain))


def program_score(s: Schedule, choices: Sequence[StatementChoice], threads: int, lost: int = 0,
                  shadowed: frozenset[str] = frozenset(), gained: int = 0, time_tiles: bool = False
                  ) -> ProgramScore:
    """How good a whole schedule is (:class:`~polylab.schedule.optimize.records.ProgramScore`): the deepest
    statements (where the work is) whose innermost loop is vectorizable, not counting those a distribution
    took out of a dependence chain's shadow (``shadowed``,
    :func:`~polylab.schedule.optimize.structures.chain_shadowed`); the statements tiled for the cache (all
    the deepest ones under tiles across the outer loop, ``time_tiles``); the reuse a distribution loses
    (``lost``, :func:`~polylab.schedule.optimize.structures.reuse_lost`); the loops a fusion adds to
    statements that share an array (``gained``); with more than one thread, the statements that have a
    parallel loop, again not counting the shadowed ones (the chain still runs alone after them); the
    deepest statements without a parallel loop (a shadowed one counts as having none) and, with more than
    one thread, the loops outside the others' outermost parallel loops (:func:`first_parallel_depth`). On
    a tie the earlier fusion structure wins (no distribution that buys nothing)."""
    par = parallel_loops(s)
    with_par = sum(1 for n, v in par.items() if v and n not in shadowed) if threads > 1 else 0
    deepest = max((st.depth for st in s.scop.statements), default=0)
    deep = {st.name for st in s.scop.statements if st.depth == deepest}
    vector = sum(1 for c in choices if c.vector and c.statement in deep and c.statement not in shadowed)
    depths = [None if n in shadowed else first_parallel_depth(s, n) for n in deep]
    tiled = len(deep) if time_tiles else sum(1 for c in choices if c.kind.tiled)
    # with one thread no loop starts a team: the loops outside the parallel ones cost nothing
    outer = sum(d for d in depths if d is not None) if threads > 1 else 0
    return ProgramScore(vector, tiled, lost, gained, with_par, sum(1 for d in depths if d is None), outer)


def first_parallel_depth(s: Schedule, name: str) -> int | None:
    """How many of statement ``name``'s loops in ``s`` run outside its outermost marked parallel loop
    (None when it has none): each of them starts the parallel loop again, so fewer is better (the
    wavefront of sl3's time tiles is started once per wave, the per-plane one once per wave of every
    plane)."""
    dims = loop_dims(s, name)
    return next((k for k, d in enumerate(dims) if d in s.marked), None)
