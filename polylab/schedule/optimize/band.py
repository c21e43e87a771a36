"""The Pluto-style band tiled as a wavefront, as a candidate of the search."""

from __future__ import annotations

from polylab.errors import PolylabError
from polylab.schedule.bandtile import BAND_TILE, tiled_band
from polylab.schedule.core import Schedule
from polylab.schedule.optimize.loops import exact_parallel_loops, is_stride_one, parallel_loops, uses, vector_innermost
from polylab.schedule.optimize.report import StatementChoice
from polylab.schedule.optimize.scoring import program_key
from polylab.schedule.pluto import pluto_schedule
from polylab.schedule.tuning import SEPARATE_LIMIT


def band_tile_candidate(s: Schedule, ranked: list[tuple], threads: int, floor: dict[str, int], order: int,
                size: int = BAND_TILE) -> tuple | None:
    """The Pluto-style band tiled as a wavefront (:mod:`polylab.schedule.bandtile`), as one more ranked
    candidate, when the best candidate so far leaves a deepest statement without any exactly parallel
    loop (lu's lower part) and inside the tiles every deepest statement gets a vector loop (a parallel,
    stride-1 innermost loop); None otherwise, or when the search's band cannot be tiled. ``size``: the
    tile size of every row (:data:`polylab.schedule.bandtile.BAND_TILE`, or the wavefront size given to
    ``optimize``)."""
    if not ranked or len(s.scop.statements) > SEPARATE_LIMIT:
        return None
    best = max(ranked, key=lambda r: r[:2])[3]
    deepest = max(st.depth for st in s.scop.statements)
    deep = [st for st in s.scop.statements if st.depth == deepest]
    if all(exact_parallel_loops(best)[st.name] for st in deep) or deepest < 3:
        return None
    # a vector loop in the tiles needs, for each deepest statement, a stride-1 iterator that its write
    # depends on (along an iterator the write does not depend on, the statement is a reduction: that
    # loop carries the statement's own dependence and is never parallel); cheap, and it spares the search
    if not all(any(is_stride_one(st, k) and all(uses(w, k) for w in st.writes) for k in range(st.depth))
               for st in deep):
        return None
    try:
        searched = pluto_schedule(s.scop, s.deps, fallback=False).schedule
    except PolylabError:   # no Pluto-style schedule (or over the search's budget): nothing to tile
        return None

    def vectors(c: Schedule) -> int:
        return sum(1 for st in deep if vector_innermost(c, st))

    tiled = tiled_band(searched, size, vectors)
    if tiled is None:
        return None
    cand, perm = tiled
    # every deepest statement must get a vector loop inside the tiles (bicg's tiles keep the chain
    # q[i] += A[i][j] * p[j] innermost: 0.4x of the original, measured)
    if vectors(cand) < len(deep) or any(parallel_loops(cand)[n] < v for n, v in floor.items()):
        return None
    choices = [StatementChoice(st.name, "band-tile", "the Pluto-style band tiled", parallel_loops(cand)[st.name],
                               vector_innermost(cand, st)) for st in s.scop.statements]
    label = (f"the Pluto-style band tiled {size}x.. as a wavefront, points in the order "
             f"({', '.join(f'row {p + 1}' for p in perm)})")
    key = program_key(cand, choices, threads, 0, frozenset(), 0, True)
    log = [f"{label}: {searched.text()} tiled"]
    return key, -order, label, cand, choices, log, True
