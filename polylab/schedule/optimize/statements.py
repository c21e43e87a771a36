"""The per-statement search: the best legal shape of each statement's private loops."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from polylab.schedule.core import Schedule
from polylab.schedule.legality import is_legal, is_violated
from polylab.schedule.optimize.layout import Layout
from polylab.schedule.optimize.loops import Aff, is_stride_one, iterator_of, loop_dims, loop_names, parallel_loops
from polylab.schedule.optimize.machine import element_bytes
from polylab.schedule.optimize.report import StatementChoice
from polylab.schedule.optimize.scoring import good_enough, statement_rank, statement_score
from polylab.schedule.optimize.shapes import Sizes, shapes
from polylab.schedule.transform import mark_parallel
from polylab.schedule.tuning import SEPARATE_LIMIT


def _pick(layout: Layout, rows: dict[str, list[Aff]], n: str, sizes: Sizes, floor_par: int,
          prefix_marked: frozenset[int], open_deps: Sequence, log: list[str]
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
    for shape in shapes(stmt, layout.private[n], names, sizes, point_bytes, element):
        if best is not None and good_enough(best[0], best[1].kind, first_private, shape.kind):
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
        if n_par < floor_par:
            continue
        key = statement_score(vec, cand.marked, stmt)
        key = key[:3] + (1 if shape.kind.endswith("tile") else 0,) + key[3:]
        if best is None or statement_rank(key, sizes.threads) > statement_rank(best[0], sizes.threads):
            best = (key, shape, cand)
    if best is None:
        return None
    key, shape, cand = best
    rows = dict(rows)
    rows[n] = list(shape.loops)
    own = frozenset(cand.marked - prefix_marked) if layout.separate else frozenset()
    choice = StatementChoice(n, shape.kind, shape.text, key[-1], key[1] == 3)
    log.append(f"{n} ({stmt.code()}): {shape.text}; {choice.parallel} parallel loop"
               f"{'s' if choice.parallel != 1 else ''}"
               + ("" if key[0] <= -100 else f", outermost parallel at loop depth {-key[0]}")
               + (", innermost loop parallel and stride-1 (vectorizable)" if choice.vector else "")
               + f"  [{tried} shapes tried, legality exact]")
    return rows, choice, own


def from_base(base: Schedule, sizes: Sizes, floor_par: dict[str, int], lines: list[str]
               ) -> tuple[Schedule, list[StatementChoice], bool]:
    """Rewrite each statement's private loops in ``base`` (keeping its fusion); ``floor_par``: the parallel
    loops each statement must keep.

    With separate blocks the marked dimensions of the result are the prefix's and each block's, as
    :func:`_pick` found them: exact, since a block's coincidence depends only on the dimensions up to its
    end (the prefix and the earlier blocks, final when it is chosen) and on the dependences of its
    statement (the others are constant there). Otherwise they are marked on the whole (the third value
    says so). The caller checks the legality of the schedule it keeps (:func:`optimize_schedule`)."""
    layout = Layout(base)
    loops_of = {n: list(layout.private[n]) for n in layout.names}
    if not layout.separate:
        lines.append(f"over {SEPARATE_LIMIT} statements: private loops share schedule dimensions")
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
            choices.append(StatementChoice(n, "shared", "all its loops are shared", parallel_loops(start)[n],
                                           vector))
            continue
        picked = _pick(layout, loops_of, n, sizes, floor_par[n], prefix_marked, open_deps, lines)
        if picked is None:
            exact = False
            continue
        loops_of, choice, own = picked
        choices.append(choice)
        marked |= own
    result = layout.build(loops_of, base.steps)
    if exact:
        return result.relabelled(marked=frozenset(marked)), choices, False
    if not layout.separate:
        return result.relabelled(marked=layout.whole_marks(loops_of)), choices, True
    return mark_parallel(result), choices, True
