"""The candidate rewritings of one statement's private loops (the shapes), each an affine map of those loops
``(l_1, .., l_m)``:

* :attr:`~ShapeKind.KEEP`, the source order, and :attr:`~ShapeKind.INTERCHANGE`, a permutation;
* :attr:`~ShapeKind.STRIP`, parallel strip-mining ``(floor(l_p / T), the other loops, l_p)`` of a parallel
  loop ``l_p`` whose accesses are stride-1: the tile loop runs in parallel, the point loop is innermost and
  vectorizable;
* :attr:`~ShapeKind.STREAM_TILE` and :attr:`~ShapeKind.TILE`, tiles for the cache, where an array is reused
  across the outer loop a whole slice away (:func:`tiling_order`; trmm's and gemm's ``B[k][j]`` across
  ``i``, covariance's ``data[k][j]``): each outer iteration reads the slice at one element per
  multiply-add of the vector loop, which only L1 feeds at the loop's speed. The stream tiles keep a tile
  of it in L1 for every outer iteration, offered where the slice does not fit in three quarters of L1; the
  cache tiles of the whole band keep slices in L2, offered where it does not fit in half the L2 cache
  (both whenever asked); with more than one thread also
  :attr:`~ShapeKind.TILE_OUTER`, the same tiles with one tile loop moved outermost, so that a tile loop
  that is parallel (the exact marking decides) runs outside the sequential ones (trmm's tiles of ``j``:
  one thread team instead of one per tile of ``i``);
* :attr:`~ShapeKind.STRIPS` of the last two loops ``(a, b)``: ``(.., floor(a / S), b + f a, a)``, ``S``
  independent chains in flight, and :attr:`~ShapeKind.STRIPS_WAVE`, those strips inside a tile-level
  wavefront ``floor(a / A) + floor((b + f a) / B)`` whose tiles come from a cache model;
* :attr:`~ShapeKind.STRIPS_TIME_WAVE` / :attr:`~ShapeKind.STRIPS_SKEWED_TIME_WAVE` of the last three loops
  ``(t, a, b)``: the strips inside a tile-level wavefront over ``(t, a + g t)``.

A :class:`Shape` holds the new loops and the values that explain them; the words are
:func:`polylab.schedule.optimize.explain.shape_text`'s.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import islpy as isl

from polylab.model import Access, Scop, Statement
from polylab.schedule.core import floor_div, map_from_affs, skewed
from polylab.schedule.optimize.cachemodel import (cache_tile_sizes, parallel_stream_tile_sizes, stream_tile_budget,
                                                  stream_tile_sizes, wave_tile_sizes)
from polylab.schedule.optimize.kinds import ShapeKind
from polylab.schedule.optimize.loops import (Aff, declared_span, is_stride_one, iterator_of, reads_own_array,
                                             stride_score, uses)
from polylab.schedule.optimize.machine import Machine, at_sizes, countable, declared_sizes, read_bytes
from polylab.schedule.optimize.records import ShapeFacts
from polylab.schedule.tuning import (MAX_PERMUTED_LOOPS, MAX_SKEW, PAR_STRIP, STRIP_ROWS, TIME_TILE, TIME_WAVE_SKEWS,
                                     WAVE_TILE)


@dataclass(frozen=True)
class Shape:
    """One statement's rewriting: what it is (:class:`~polylab.schedule.optimize.records.ShapeFacts`: its
    kind and the values that explain it) and its new private loops; ``rows``: for a stream tile whose
    reused slice fits in half the L2 cache, the loops its tiles walk every row of for their columns (gemm's
    and trmm's ``i``), else empty (:func:`polylab.schedule.optimize.statements._rows_parallel`)."""

    facts: ShapeFacts
    loops: tuple[Aff, ...]
    rows: tuple[Aff, ...] = ()

    @property
    def kind(self) -> ShapeKind:
        return self.facts.kind


@dataclass(frozen=True)
class Settings:
    """What one search is asked for: the machine, the strips' rows, the strips' wavefront tile (rows,
    skewed columns; 0: from the cache model), and whether cache tiling is offered (off by default: on the
    2-core development machine, whose 32 MiB L3 holds the reused slices of PolyBench sizes, tiled gemm was
    slower than the source order; ``--tune`` times it)."""

    machine: Machine
    rows: int = STRIP_ROWS
    wave: tuple[int, int] = WAVE_TILE
    tile: bool = False

    @property
    def threads(self) -> int:
        return self.machine.threads


def shapes(stmt: Statement, loops: Sequence[Aff], names: Sequence[str], settings: Settings,
           point_bytes: int = 8, element: int = 8, scop: Scop | None = None) -> list[Shape]:
    """The candidate rewritings of a statement's private loops (see the module text), identity first.
    ``point_bytes``: the bytes of one element of each array the statement accesses, summed (the cache
    model of :func:`~polylab.schedule.optimize.cachemodel.wave_tile_sizes`); ``element``: the largest of
    them (:func:`~polylab.schedule.optimize.cachemodel.stream_tile_sizes`); ``scop``: the statement's SCoP
    (the sizes of its arrays, for the reuse model of the cache tiles)."""
    m = len(loops)
    out = [Shape(ShapeFacts(ShapeKind.KEEP), tuple(loops))]
    if m == 0:
        return out
    for perm in itertools.permutations(range(m)):
        if list(perm) != list(range(m)) and m <= MAX_PERMUTED_LOOPS:
            out.append(Shape(ShapeFacts(ShapeKind.INTERCHANGE, tuple(names[p] for p in perm)),
                             tuple(loops[p] for p in perm)))
    for p in range(m):
        if is_stride_one(stmt, iterator_of(loops[p], stmt)) and m >= 2:
            rest = [loops[q] for q in range(m) if q != p]
            if settings.threads == 1 and (not reused_across(stmt, rest) or reads_own_array(stmt)):
                continue   # one thread: the tile loop's parallelism is unused, the strip walk only costs
            out.append(Shape(ShapeFacts(ShapeKind.STRIP, (names[p],), (PAR_STRIP,)),
                             (floor_div(loops[p], PAR_STRIP), *rest, loops[p])))
    out += _cache_tiles(stmt, loops, names, settings, element, scop)
    if m >= 2:
        out += _strips(loops, names, settings, point_bytes, stmt, scop)
        if m >= 3:
            out += _time_tiled_strips(loops, names, settings)
    return out


def _cache_tiles(stmt: Statement, loops: Sequence[Aff], names: Sequence[str], settings: Settings,
                 element: int, scop: Scop | None) -> list[Shape]:
    """The stream tiles and the cache tiles of a band whose reuse the cache model asks to keep
    (:func:`tiling_order`), when cache tiling is offered or the slice read again in every outer iteration
    (:func:`~polylab.schedule.optimize.machine.read_bytes`: exact, or bounded by the array's declared
    size) does not fit in the cache that the tiles keep it in.

    - The stream tiles keep it in L1 (:func:`~polylab.schedule.optimize.cachemodel.stream_tile_sizes`):
      the slice is read at one element per multiply-add, as fast as the vector loop runs, which only L1
      serves. They are offered where the slice does not fit in the stream tile's budget
      (:func:`~polylab.schedule.optimize.cachemodel.stream_tile_budget`, three quarters of L1). PolyBench
      at MEDIUM, one thread, on a machine of 48 KiB L1 and 1 MiB L2 (whole files, measured): gemm, whose
      ``B`` of 422 KB fits in L2, 1.76x faster with them, 2mm 1.56x, covariance 1.54x, trmm 1.63x.
    - The cache tiles of the whole band keep two-dimensional slices of every array in L2
      (:func:`~polylab.schedule.optimize.cachemodel.cache_tile_sizes`). They are offered where the slice
      does not fit in half the L2 cache: below that, syrk and syr2k at MEDIUM ran 0.92x and 0.98x with
      them.

    With threads the stream tiles' column tiles are their parallel loop, as narrow as it takes to give
    every thread several
    (:func:`~polylab.schedule.optimize.cachemodel.parallel_stream_tile_sizes`); where the slice fits in
    half the L2 cache, the search keeps them only for a statement whose rows are sequential
    (:func:`polylab.schedule.optimize.statements._rows_parallel`, :attr:`Shape.rows`). A single row loop
    is also offered strip-mined by :data:`~polylab.schedule.tuning.PAR_STRIP` outside the one-thread
    stream tiles (a :attr:`~ShapeKind.TILE_OUTER`, ``(floor(i / 32), floor(k / T_k), floor(j / T_j), i,
    k, j)``): where the rows are parallel each thread takes whole strips of rows and reads every tile
    from L1 for all the rows of its strip (PolyBench at MEDIUM, two threads, whole files against the
    untiled parallel rows: gemm 1.24x, correlation 1.29x, covariance 1.20x, 3mm 1.16x, 2mm 1.11x)."""
    plan = tiling_order(stmt, loops)
    if plan is None:
        return []
    order, reused = plan
    size = read_bytes(scop, stmt, reused) if scop is not None and not settings.tile else None
    if not settings.tile and (size is None or size <= stream_tile_budget(settings.machine)):
        return []
    out = []
    tiled = tuple(names[p] for p in order)
    rest, mid, inner = [loops[p] for p in order[:-2]], loops[order[-2]], loops[order[-1]]
    if settings.threads == 1:
        tj, tk = stream_tile_sizes(element, settings.machine)
    else:     # the column tiles are the parallel loop: enough of them for the threads
        tj, tk = parallel_stream_tile_sizes(declared_span(scop, stmt, inner) if scop is not None else None,
                                            element, settings.machine)
    in_l2 = size is not None and size <= settings.machine.l2_bytes // 2     # size is None when tiling is asked
    out.append(Shape(ShapeFacts(ShapeKind.STREAM_TILE, tiled, (tk, tj), modelled=True),
                     (floor_div(inner, tj), floor_div(mid, tk), *rest, mid, inner), tuple(rest) if in_l2 else ()))
    if settings.threads > 1 and len(rest) == 1:
        # the rows strip-mined outermost, the one-thread stream tiles inside each strip: a thread's strip of
        # rows reads each tile from L1 (gemm at MEDIUM on two threads: 1.24x its untiled parallel rows)
        tj1, tk1 = stream_tile_sizes(element, settings.machine)
        out.append(Shape(ShapeFacts(ShapeKind.TILE_OUTER, (tiled[0],) + tiled, (PAR_STRIP, tk1, tj1), modelled=True),
                         (floor_div(rest[0], PAR_STRIP), floor_div(mid, tk1), floor_div(inner, tj1),
                          rest[0], mid, inner)))
    if in_l2:
        return out
    tsz = cache_tile_sizes(len(loops), len({acc.array for acc in stmt.accesses}), 8, settings.machine)
    tl = [loops[p] for p in order]
    tiles = [floor_div(x, t) for x, t in zip(tl, tsz)]
    out.append(Shape(ShapeFacts(ShapeKind.TILE, tiled, tsz, modelled=True), tuple(tiles) + tuple(tl)))
    if settings.threads > 1:
        # the loop moved outermost is tiled as the parallel strip-mining tiles (PAR_STRIP): enough tiles
        # for the threads (trmm at N = 1200: 38 tiles of 32 columns, against 3 of the band's 512)
        for q in range(1, len(tl)):
            rest = [r for r in range(len(tl)) if r != q]
            out.append(Shape(ShapeFacts(ShapeKind.TILE_OUTER, (tiled[q],) + tiled,
                                        (PAR_STRIP,) + tuple(tsz[r] for r in rest), modelled=True),
                             (floor_div(tl[q], PAR_STRIP), *(tiles[r] for r in rest), *tl)))
    return out


def _strips(loops: Sequence[Aff], names: Sequence[str], settings: Settings, point_bytes: int,
            stmt: Statement | None = None, scop: Scop | None = None) -> list[Shape]:
    """The strips of the last two loops ``(a, b)`` for each skew ``f``, alone and inside a tile-level
    wavefront (also for one thread: the strips' only parallel loop is their innermost one, under sequential
    loops, and OpenMP would start it once per column, seidel2d: 0.15x of the source order; the wave's
    parallel tile loop gives it one start per wave instead). With more than one thread, a wavefront of the
    cache model's tiles is left out where its waves hold fewer tiles than threads on average
    (:func:`wave_width`): the threads wait at each wave's end for little work (floyd-warshall at
    PolyBench's MEDIUM size, 256 x 256 tiles of 500 x 500 points: 6 tiles in 5 waves, 0.59x of the source
    order on two threads, measured)."""
    a, b = loops[-2], loops[-1]
    head = tuple(loops[:-2])
    rows = settings.rows
    modelled = not all(settings.wave)
    A, B = wave_tile_sizes(point_bytes, rows, settings.machine) if modelled else settings.wave
    out = []
    for f in range(MAX_SKEW + 1):
        skew = skewed(b, a, f)
        out.append(Shape(ShapeFacts(ShapeKind.STRIPS, tuple(names[-2:]), (rows,), f),
                         head + (floor_div(a, rows), skew, a)))
        if modelled and settings.threads > 1 and stmt is not None and scop is not None:
            width = wave_width(stmt, scop, floor_div(a, A), floor_div(skew, B))
            if width is not None and width < settings.threads:
                continue
        wave = floor_div(a, A).add(floor_div(skew, B))
        out.append(Shape(ShapeFacts(ShapeKind.STRIPS_WAVE, tuple(names[-2:]), (rows, A, B), f, modelled=modelled),
                         head + (wave, floor_div(a, A), floor_div(a, rows), skew, a)))
    return out


def wave_width(stmt: Statement, scop: Scop, row: Aff, column: Aff) -> float | None:
    """The tiles of a tile-level wavefront per wave, on average: ``|T| / |{ r + c : (r, c) in T }|`` where
    ``T = { (row(x), column(x)) : x in D }`` are the tiles of the statement's domain ``D`` (``row`` and
    ``column`` its tile coordinates), counted at the largest sizes the arrays' declarations allow
    (:func:`~polylab.schedule.optimize.machine.declared_sizes`); None where those are unknown or the sets
    too large to count."""
    sizes = declared_sizes(scop)
    if sizes is None:
        return None
    tiles = map_from_affs(stmt, stmt.domain.get_space(), [row, column]).intersect_domain(stmt.domain).range()
    tiles = at_sizes(tiles, sizes)
    waves = tiles.apply(isl.Map("{ [r, c] -> [r + c] }"))
    try:
        if not (countable(tiles) and countable(waves)):
            return None
        n_tiles, n_waves = (int(x.count_val().to_python()) for x in (tiles, waves))
    except isl.Error:  # isl could not count a set: unknown
        return None
    return n_tiles / n_waves if n_waves else None


def _time_tiled_strips(loops: Sequence[Aff], names: Sequence[str], settings: Settings) -> list[Shape]:
    """The strips inside a tile-level wavefront over the *outer* two of the last three loops
    ``(t, a, b)``: ``(.., floor(t / T) + floor(a' / T), floor(a' / T), t, floor(a' / S), b' + f a', a')``
    with ``a' = a + g t`` and ``b' = b + g t`` (``g`` in 0, 1: the time skew that makes the ``(t, a')``
    rectangle legal where the dependences go back in ``a``) and the strips' skew ``f``. A ``T x T``
    tile of ``(t, a')`` runs ``T`` steps of ``t`` over ``T`` rows of ``a'`` (every ``b``), so each step
    re-reads the rows the step before it wrote while they are in cache, and one OpenMP start runs a whole
    wave of such tiles: ``O(n / T)`` starts instead of the per-step wavefront's ``O(n)`` per step of
    ``t`` (sl3 on two threads: 3.3x of the original against 1.5x, measured). ``T``:
    :data:`~polylab.schedule.tuning.TIME_TILE`, or the wavefront size when one is given."""
    t, a, b = loops[-3], loops[-2], loops[-1]
    head = tuple(loops[:-3])
    size = settings.wave[0] if all(settings.wave) else TIME_TILE
    rows = settings.rows
    out = []
    for g in TIME_WAVE_SKEWS:
        ag, bg = skewed(a, t, g), skewed(b, t, g)
        kind = ShapeKind.STRIPS_SKEWED_TIME_WAVE if g else ShapeKind.STRIPS_TIME_WAVE
        for f in range(MAX_SKEW + 1):
            skew = skewed(bg, ag, f)
            wave = floor_div(t, size).add(floor_div(ag, size))
            out.append(Shape(ShapeFacts(kind, tuple(names[-3:]), (rows, size), f, g),
                             head + (wave, floor_div(ag, size), t, floor_div(ag, rows), skew, ag)))
    return out


def tiling_order(stmt: Statement, loops: Sequence[Aff]) -> tuple[tuple[int, ...], Access] | None:
    """The loop order to tile in, and the access whose reuse tiling keeps, when tiling can pay: at least
    three private loops, all plain iterators, ordered with the best stride-1 loop innermost, and an access
    that does not depend on the outermost of them but on the two innermost (its reuse across the outer loop
    is a whole two-dimensional slice away: gemm's ``B[k][j]`` across ``i``). None otherwise."""
    its = [iterator_of(x, stmt) for x in loops]
    if len(loops) < 3 or any(k is None for k in its):
        return None
    inner = max(range(len(loops)), key=lambda p: (stride_score(stmt, its[p]), p))
    if not is_stride_one(stmt, its[inner]):
        return None
    order = tuple(p for p in range(len(loops)) if p != inner) + (inner,)
    outer, mid = its[order[0]], its[order[-2]]
    for acc in stmt.accesses:
        F = acc.matrix
        if F is None:
            continue
        used = [any(int(F[r, k]) for r in range(F.rows)) for k in range(len(stmt.iterators))]
        if not used[outer] and used[mid] and used[its[inner]]:
            return order, acc
    return None


def reused_across(stmt: Statement, loops: Sequence[Aff]) -> bool:
    """Some write of ``stmt`` is the same element for every value of one of ``loops`` (a plain iterator
    none of its subscripts uses): a strip of it stays in registers across that loop (mvt's
    ``x2[i] += A[j][i] * y2[j]`` strip-mined along ``i`` with ``j`` inside: 32 sums kept over all of ``j``);
    without such a write a strip-mined loop only walks the arrays in narrower strips (``S[i][j] +=
    S[i - 1][j]`` by strips of ``j``: 0.57x of the source order's row walk on one thread, measured)."""
    its = [iterator_of(a, stmt) for a in loops]
    return any(k is not None and not uses(w, k) for w in stmt.writes for k in its)
