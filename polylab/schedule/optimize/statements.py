"""The per-statement search: the best legal shape of each statement's private loops, the fusion of the
starting schedule kept.

Each statement's *private* loops (those no other statement shares,
:func:`~polylab.schedule.optimize.loops.private_start`) are rewritten, statement by statement, by the
legal shape (:mod:`polylab.schedule.optimize.shapes`) with the best score
(:func:`~polylab.schedule.optimize.scoring.statement_score`). Every candidate is checked exactly
(:func:`polylab.schedule.legality.is_legal`: ``theta(u) <lex theta(v)`` for every dependence) and its
parallel dimensions are marked exactly. Private loops of different statements get separate schedule
dimensions (up to :data:`~polylab.schedule.tuning.SEPARATE_LIMIT` statements,
:class:`~polylab.schedule.optimize.layout.Layout`), so a loop that is parallel for one statement is not
reported sequential because another statement's loop at the same depth carries a dependence (isl's
coincidence is per band member, i.e. per dimension).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from polylab.schedule.core import Schedule
from polylab.schedule.legality import is_legal, is_violated
from polylab.schedule.optimize.explain import shape_text
from polylab.schedule.optimize.kinds import ShapeKind
from polylab.schedule.optimize.layout import Layout
from polylab.schedule.optimize.loops import Aff, is_stride_one, iterator_of, loop_dims, loop_names, parallel_loops
from polylab.schedule.optimize.machine import element_bytes
from polylab.schedule.optimize.records import ShapeFacts, StatementChoice
from polylab.schedule.optimize.scoring import skips, statement_score
from polylab.schedule.optimize.shapes import Settings, shapes
from polylab.schedule.transform import mark_parallel


@dataclass(frozen=True)
class Rewritten:
    """A fusion structure with each statement's private loops rewritten: the schedule, the choices, whether
    its parallel dimensions were marked on the whole schedule (``on_whole``; else per block, exact) and
    whether its statements share their private dimensions (over
    :data:`~polylab.schedule.tuning.SEPARATE_LIMIT` statements)."""

    schedule: Schedule
    choices: tuple[StatementChoice, ...]
    on_whole: bool
    shared_blocks: bool


def _rows_parallel(vec: Sequence[Aff], marked: frozenset[int], rows: Sequence[Aff]) -> bool:
    """Some loop ``rows`` (a stream tile's :attr:`~polylab.schedule.optimize.shapes.Shape.rows`, gemm's and
    trmm's ``i``) is a marked parallel dimension of the time vector ``vec``. With threads, the stream
    tiles' parallel loop is their column tiles, and each thread walks every row for its columns. Where the
    reused slice fits in half the L2 cache (the only case in which a stream tile has ``rows``), that is
    for a statement whose row loop is sequential; where the rows are parallel, the untiled rows share
    them among the threads without streaming the rows once per column tile (PolyBench at MEDIUM, two
    threads, measured: 3mm 0.76x, 2mm 0.99x with the column tiles, covariance 1.18x). Beyond half the L2
    cache the column tiles keep their slice in L1 where the band's tiles of rows keep theirs in L2, and
    they are offered whether the rows are parallel or not (at LARGE, two threads: 2mm 2.30x, correlation
    1.64x, covariance 1.33x, gemm 1.21x faster than with the band's tiles)."""
    return any(d in marked and any(a.is_equal(r) for r in rows) for d, a in enumerate(vec) if not a.is_cst())


def _pick(layout: Layout, rows: dict[str, list[Aff]], n: str, settings: Settings, floor_par: int,
          prefix_marked: frozenset[int], open_deps: Sequence
          ) -> tuple[dict[str, list[Aff]], StatementChoice, frozenset[int]] | None:
    """The best legal shape of statement ``n``'s private loops, the others as in ``rows``.

    Only the dependences into or out of ``n`` are checked: the others keep their time vectors, so they
    stay satisfied. With separate blocks the coincidence of ``n``'s block is exact on those dependences
    too (the other statements are constant there), and that of the prefix dimensions does not change
    (``prefix_marked``, computed once); a dependence whose every pair the prefix dimensions already
    order strictly cannot be affected by any block and is skipped (``open_deps`` are the others). The
    whole schedule is checked exactly at the end. Returns the new rows, the choice, and the marked
    (exactly parallel) dimensions of ``n``'s block (with separate blocks; else empty)."""
    stmt = layout.scop.statement(n)
    names = loop_names(stmt, layout.private[n])
    mine = tuple(d for d in open_deps if n in (d.source, d.sink))
    best = None
    tried = 0
    first_private = len(loop_dims(layout.base, n)) - len(layout.private[n])
    sizes_of = element_bytes(layout.scop)
    touched = {acc.array for acc in stmt.accesses}
    point_bytes = sum(sizes_of.get(x, 8) for x in touched)
    element = max((sizes_of.get(x, 8) for x in touched), default=8)
    threads = settings.threads
    for shape in shapes(stmt, layout.private[n], names, settings, point_bytes, element, layout.scop):
        if best is not None and skips(best[0], best[1].kind, first_private, shape.kind, threads):
            continue
        trial = dict(rows)
        trial[n] = list(shape.loops)
        cand = replace(layout.build(trial, layout.base.steps), deps=mine)
        tried += 1
        if not is_legal(cand):
            continue
        vec = layout.vectors(trial)[n]
        if layout.separate:
            start = layout.offsets(trial)[n]
            block = range(start, start + len(shape.loops))
            marked = prefix_marked | {d for d in block if not vec[d].is_cst() and cand.is_coincident(d)}
            cand = cand.relabelled(marked=frozenset(marked))
        else:
            cand = cand.relabelled(marked=layout.whole_marks(trial))
        n_par = sum(1 for d, a in enumerate(vec) if not a.is_cst() and d in cand.marked)
        if n_par < floor_par or (threads > 1 and shape.kind is ShapeKind.STREAM_TILE
                                 and _rows_parallel(vec, cand.marked, shape.rows)):
            continue
        # the chains decide whether the strips are tried (:func:`skips`)
        score = statement_score(vec, cand.marked, stmt, shape.kind.tiled, cand, threads)
        if best is None or score.key(threads) > best[0].key(threads):
            best = (score, shape, cand)
    if best is None:
        return None
    score, shape, cand = best
    rows = dict(rows)
    rows[n] = list(shape.loops)
    own = frozenset(cand.marked - prefix_marked) if layout.separate else frozenset()
    shown = shape.facts
    choice = StatementChoice(n, shown, shape_text(shown, settings.machine), score.parallel, score.vector, score,
                             tried, stmt.code())
    return rows, choice, own


def from_base(base: Schedule, settings: Settings, floor_par: dict[str, int]) -> Rewritten:
    """Rewrite each statement's private loops in ``base`` (keeping its fusion); ``floor_par``: the parallel
    loops each statement must keep.

    With separate blocks the marked dimensions of the result are the prefix's and each block's, as
    :func:`_pick` found them: exact, since a block's coincidence depends only on the dimensions up to its
    end (the prefix and the earlier blocks, final when it is chosen) and on the dependences of its
    statement (the others are constant there). Otherwise they are marked on the whole (``on_whole``).
    The search checks the legality of the schedule it keeps
    (:func:`~polylab.schedule.optimize.search.optimize_schedule`)."""
    layout = Layout(base)
    loops_of = {n: list(layout.private[n]) for n in layout.names}
    choices = []
    start = layout.build(loops_of, base.steps)
    prefix_marked = frozenset(d for d in range(layout.width) if not start.is_scalar(d) and start.is_coincident(d))
    start = start.relabelled(marked=prefix_marked)
    marked, exact = set(prefix_marked), layout.separate
    prefix_only = layout.build({n: [] for n in layout.names}, base.steps)
    open_deps = [d for d in base.dependences if is_violated(prefix_only, d)]
    for n in layout.names:
        if not layout.private[n]:
            dims = loop_dims(start, n)
            stmt = layout.scop.statement(n)
            vector = bool(dims) and dims[-1] in start.marked and is_stride_one(
                stmt, iterator_of(start.affs[n][dims[-1]], stmt))
            shown = ShapeFacts(ShapeKind.SHARED)
            choices.append(StatementChoice(n, shown, shape_text(shown, settings.machine), parallel_loops(start)[n],
                                           vector, code=stmt.code()))
            continue
        picked = _pick(layout, loops_of, n, settings, floor_par[n], prefix_marked, open_deps)
        if picked is None:
            exact = False
            continue
        loops_of, choice, own = picked
        choices.append(choice)
        marked |= own
    result = layout.build(loops_of, base.steps)
    shared = not layout.separate
    if exact:
        return Rewritten(result.relabelled(marked=frozenset(marked)), tuple(choices), False, shared)
    if shared:
        return Rewritten(result.relabelled(marked=layout.whole_marks(loops_of)), tuple(choices), True, shared)
    return Rewritten(mark_parallel(result), tuple(choices), True, shared)
