"""The Pluto-style band tiled, its tiles run as a wavefront, their points in the order that vectorizes.

Where the source order leaves a statement without any parallel loop (lu's row-by-row elimination: each
``A[i][j]`` of the lower part waits for ``A[i][k]``, ``k < j``, of its own row), PLUTO's answer is the
permutable band of the Pluto-style search (:mod:`polylab.schedule.pluto`: lu's ``(i, j, k)``, with the
division embedded as ``(i, j, j)``), tiled, the tiles of each wave in parallel. The map, for every
statement with band rows ``(b_1, .., b_m)`` (``m >= 2``) and the rest of its vector ``r``::

    theta'_S = (floor(b_1 / T) + floor(b_2 / T), floor(b_2 / T), floor(b_3 / T), .., floor(b_m / T),
                b_p(1), .., b_p(m-1), pos_S, b_p(m), r)

The first dimension is the wavefront of the tiles of ``(b_1, b_2)`` (legal for a permutable band: every
dependence has non-negative distances on its rows, so on the tile coordinates too, and the wave
increases or the tile stays), the tiles of ``b_3 .. b_m`` run in order inside a tile of the wave, and
the points of a tile run in the permuted order ``p``: the permutation (among those that keep the
schedule legal, checked exactly) that makes the innermost loop of the most deepest statements parallel
and stride-1, a vector loop (lu: ``(i, k, j)``, the right-looking update of a row, ``j`` innermost).

The tile size comes from a cache model (:func:`polylab.schedule.optimize.band_tile_size`: the
tile's slices of the arrays in half the L2 cache; 64 for lu here). Measured (lu, N = 800, medians of 8
runs, each in its own process, interleaved): the source order with its parallel loops 0.89x of the
original, this 2.08x at one thread and 2.49x at two (PLUTO, whose tiles are also unrolled and jammed by
8 rows, 1.57x and 2.56x in the same run). The optimizer (:mod:`polylab.schedule.optimize`) offers
it only where another structure leaves a deepest statement without a parallel loop and the tiles give
every deepest statement a vector loop (bicg's tiles keep a reduction chain innermost: 0.4x).
"""

from __future__ import annotations

import itertools
from graphlib import CycleError, TopologicalSorter

from polylab.schedule.core import Schedule, const_aff, floor_div
from polylab.schedule.legality import is_legal, is_violated
from polylab.schedule.transform import mark_parallel


def tiled_band(s: Schedule, size: int, inner_score) -> tuple[Schedule, tuple[int, ...]] | None:
    """The tiled wavefront of ``s``'s outermost band (module text) with the best point order, parallel
    dimensions marked exactly, and that order (positions in the band); None when the outermost band is
    not permutable, has fewer than two rows, or no point order is legal. ``inner_score(schedule)``
    scores a candidate's innermost loops (larger is better). Where the statements that meet at equal
    outer dimensions depend on each other both ways there (nussinov's ``table[i][j]``, written by each
    statement of the point ``(i, j)`` and read by the next point's), every point row comes first and the
    statements keep their order within each point.

    Before the innermost point row a constant dimension orders the statements that meet at equal outer
    dimensions, in an order of the dependences between them there (lu's division ``A[i][k] /= A[k][k]``
    at ``(i, k)`` before the updates of row ``i`` that use it, whose innermost loop ``j`` is then free of
    the division and parallel); no point order is tried whose statements depend on each other both
    ways there."""
    if not s.bands:
        return None
    band = s.bands[0]
    if not band.permutable or band.size < 2 or band.start != 0:
        return None
    m = band.size
    pspace = s.scop.context.get_space()
    best = None
    for perm in itertools.permutations(range(m)):
        outer = {}
        for st in s.scop.statements:
            v = list(s.affs[st.name])
            rows = v[:m]
            tiles = [floor_div(r, size) for r in rows]
            outer[st.name] = [tiles[0].add(tiles[1]), *tiles[1:], *(rows[p] for p in perm[:-1])]
        pos = _order_at_equal(s, outer)
        # statements that depend on each other both ways there (pos None): every point row first, then theirs
        cand = s.with_affs({st.name: [*outer[st.name], *([] if pos is None else [const_aff(st, pspace, pos[st.name])]),
                                      s.affs[st.name][perm[-1]], *s.affs[st.name][m:]]
                            for st in s.scop.statements}, None)
        if not is_legal(cand):
            continue
        cand = mark_parallel(cand)
        score = inner_score(cand)
        if best is None or score > best[0]:
            best = (score, cand, perm)
    return None if best is None else (best[1], best[2])


def _order_at_equal(s: Schedule, outer: dict[str, list]) -> dict[str, int] | None:
    """Positions of the statements (a topological order of the dependences between different statements
    whose instances meet at equal ``outer`` dimensions, textual order among the free ones); None when
    such dependences form a cycle."""
    prefix = s.with_affs(outer, None)
    names = [st.name for st in s.scop.statements]
    preds: dict[str, set[str]] = {n: set() for n in names}
    for d in s.dependences:
        if d.source != d.sink and is_violated(prefix, d):
            preds[d.sink].add(d.source)
    sorter = TopologicalSorter(preds)
    try:
        sorter.prepare()
    except CycleError:
        return None
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=names.index)
        order += ready
        sorter.done(*ready)
    return {n: k for k, n in enumerate(order)}
