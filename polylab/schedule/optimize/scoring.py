"""How good a statement's loops are, and a whole schedule (the scores compared by the search)."""

from __future__ import annotations

from typing import Sequence

from polylab.model import Statement
from polylab.schedule.core import Schedule
from polylab.schedule.optimize.loops import (Aff, is_stride_one, iterator_of, loop_dims, parallel_loops, stride_score,
                                             value_span)
from polylab.schedule.optimize.report import StatementChoice
from polylab.schedule.tuning import MIN_PARALLEL_SPAN, NO_PARALLEL, UNROLLED_SPAN


def statement_score(vec: Sequence[Aff], marked: frozenset[int], stmt: Statement) -> tuple:
    """The score of statement ``stmt`` with time vector ``vec`` and parallel dimensions ``marked``
    (larger is better; see the module text). A dimension of constant span 1 (:func:`value_span`) is not
    a loop, and a parallel loop counts as parallel only when its span grows with the parameters or is
    at least :data:`MIN_PARALLEL_SPAN`: a loop of a few iterations gives no parallelism worth a thread
    team (inside a sequential loop, OpenMP would start it once per iteration of that loop for a handful
    of iterations' work: 250 times slower than the original on ``for (t = 0; t < 10; t++) for (i ..;
    i += 2) c[i] += 0.25 * c[i - 2]`` under a tile-level wavefront). The innermost loop counts as a vector
    loop (or as independent chains) when it is parallel, whatever its span: vectors need no thread team."""
    span = {d: value_span(a, stmt.domain) for d, a in enumerate(vec) if not a.is_cst()}

    def at_least(d: int, bound: int) -> bool:  # unbounded (None) and empty (0) spans count as long
        return (span[d] or bound) >= bound

    dims = [d for d in span if span[d] != 1]
    scalable = {d for d in dims if d in marked and at_least(d, MIN_PARALLEL_SPAN)}
    par = [k for k, d in enumerate(dims) if d in scalable]
    if not dims:
        return (0, 0, 0, 0, 0)
    # loops of a few constant iterations inside are unrolled by the compiler (gcc -O3 peels them
    # completely): the loop that runs innermost in the machine code is the last one with more
    # (a 3x3 convolution keeps its 9-term sum in a register and vectorizes the column loop around it)
    long_dims = [d for d in dims if at_least(d, UNROLLED_SPAN)]
    last = long_dims[-1] if long_dims else dims[-1]
    inner = vec[last]
    k = iterator_of(inner, stmt)
    stride1 = is_stride_one(stmt, k)
    # vectors need no thread team: a parallel stride-1 loop of a few dozen iterations still vectorizes
    vector = last in marked and stride1
    inner = 3 if vector else (2 if stride1 else (1 if last in marked else 0))
    return (-(par[0]) if par else -100, inner, stride_score(stmt, k),
            -len(dims), len(par))


def statement_rank(key: tuple, threads: int) -> tuple:
    """The order of two scores (:func:`statement_score`): as they are with threads; with one thread a vector
    innermost loop comes first, before the depth of the outermost parallel loop, which no thread uses
    then (``S[i][j] += S[i - 1][j]`` interchanged to put the parallel ``j`` outside the recurrence along
    ``i``, or strip-mined along ``j``, only walks its rows worse: 0.57x of the source order, measured)."""
    return key if threads > 1 else (key[1] == 3,) + key


def good_enough(key: tuple, best_kind: str, first_private: int, next_kind: str) -> bool:
    """Skip the next shape: the best so far has a parallel loop at the first private depth (or outside)
    and a vectorizable innermost loop (nothing scores higher), or it has a parallel loop and the next
    shapes are the strips, which are only for statements with no parallel loop (a parallel innermost loop
    of any span counts); or the best is the strips'
    time wavefront without a time skew and the next is one with it; or the next is the best's kind of
    strips with a larger skew ``f`` while the best's innermost loop is already parallel (only ``f`` differs,
    and the score does not depend on it then). The tiling shape (only offered when the
    cache model asks for it) is always tried."""
    if next_kind.endswith("tile"):
        return False
    if next_kind == "strips+skewed-time-wave" and best_kind == "strips+time-wave":
        return True   # the time skew only where the plain rectangle is illegal
    if next_kind == best_kind and best_kind.startswith("strips") and key[1] >= 1:
        return True   # a larger skew of the same strips scores the same once the innermost loop is parallel
    if -key[0] <= first_private and key[1] == 3:
        return True
    # a parallel innermost loop (key[1] 1 or 3) is a parallel loop too, however short: no chains to overlap
    return (key[0] > -100 or key[1] in (1, 3)) and next_kind.startswith("strips") \
        and not best_kind.startswith("strips")


def program_key(s: Schedule, choices: Sequence[StatementChoice], threads: int, lost: int = 0,
                shadowed: frozenset[str] = frozenset(), gained: int = 0, time_tiles: bool = False) -> tuple:
    """How good a whole schedule is (larger is better), compared in this order: the number of the
    deepest statements (where the work is) whose innermost loop is vectorizable, not counting those a
    distribution took out of a dependence chain's shadow (``shadowed``, :func:`chain_shadowed`); the
    number of statements tiled for the cache (all the deepest ones under time tiles of the outer band,
    ``time_tiles``, :mod:`polylab.schedule.timetile`); the reuse a distribution loses (``lost``,
    :func:`reuse_lost`: fewer is better); the loops a fusion adds to statements that share an array
    (``gained``, :func:`reuse_gained`); with more than one thread, the number of statements that have a
    parallel loop, again not counting the shadowed ones (the chain still runs alone after them); the loops
    outside the deepest statements' outermost parallel loops (:func:`first_parallel_depth`: fewer is
    better; a shadowed statement counts as having none). On a tie the earlier fusion structure of
    :func:`bases` wins (no distribution that buys nothing)."""
    par = parallel_loops(s)
    with_par = sum(1 for n, v in par.items() if v and n not in shadowed) if threads > 1 else 0
    deepest = max((st.depth for st in s.scop.statements), default=0)
    deep = {st.name for st in s.scop.statements if st.depth == deepest}
    vector = sum(1 for c in choices if c.vector and c.statement in deep and c.statement not in shadowed)
    starts = sum(NO_PARALLEL if n in shadowed else first_parallel_depth(s, n) for n in deep)
    tiled = len(deep) if time_tiles else sum(1 for c in choices if c.shape.endswith("tile"))
    return (vector, tiled, -lost, gained, with_par, -starts)


def first_parallel_depth(s: Schedule, name: str) -> int:
    """How many of statement ``name``'s loops in ``s`` run outside its outermost marked parallel loop
    (:data:`NO_PARALLEL` when it has none): each of them starts the parallel loop again, so fewer is
    better (the wavefront of sl3's time tiles is started once per wave, the per-plane one once per
    wave of every plane)."""
    dims = loop_dims(s, name)
    return next((k for k, d in enumerate(dims) if d in s.marked), NO_PARALLEL)
