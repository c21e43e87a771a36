"""The candidate rewritings of one statement's private loops (the shapes)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

from polylab.model import Statement
from polylab.schedule.core import floor_div, skewed
from polylab.schedule.optimize.cachemodel import cache_tile_sizes, stream_tile_sizes, wave_tile_sizes
from polylab.schedule.optimize.loops import Aff, is_stride_one, iterator_of, stride_score, uses
from polylab.schedule.optimize.machine import cache_sizes
from polylab.schedule.target import DEFAULT_VECTOR_BYTES
from polylab.schedule.tuning import MAX_SKEW, PAR_STRIP, STRIP_ROWS, TIME_TILE, WAVE_TILE


@dataclass(frozen=True)
class Shape:
    """One statement's rewriting: its new private loops and the words that explain them."""

    kind: str
    loops: tuple[Aff, ...]
    text: str


@dataclass(frozen=True)
class Sizes:
    """The sizes the optimizer uses: threads, strip rows, wavefront tile (rows, skewed columns), and
    whether cache tiling is offered (off by default: on the 2-core development machine, whose 32 MiB L3
    holds the reused slices of PolyBench sizes, tiled gemm was slower than the source order; ``--tune``
    times it)."""

    threads: int
    rows: int = STRIP_ROWS
    wave: tuple[int, int] = WAVE_TILE
    tile: bool = False
    #: the vector width in bytes of the build chosen for (:mod:`polylab.schedule.target`)
    vector: int = DEFAULT_VECTOR_BYTES


def shapes(stmt: Statement, loops: Sequence[Aff], names: Sequence[str], sizes: Sizes,
           point_bytes: int = 8, element: int = 8) -> list[Shape]:
    """The candidate rewritings of a statement's private loops (see the module text), identity first.
    ``point_bytes``: the bytes of one element of each array the statement accesses, summed (the cache
    model of :func:`wave_tile_sizes`); ``element``: the largest of them (:func:`stream_tile_sizes`)."""
    m = len(loops)
    out = [Shape("keep", tuple(loops), "source order")]
    if m == 0:
        return out
    for perm in itertools.permutations(range(m)):
        if list(perm) != list(range(m)) and m <= 4:
            out.append(Shape("interchange", tuple(loops[p] for p in perm),
                             "interchange to (" + ", ".join(names[p] for p in perm) + ")"))
    for p in range(m):
        if is_stride_one(stmt, iterator_of(loops[p], stmt)) and m >= 2:
            rest = [loops[q] for q in range(m) if q != p]
            if sizes.threads == 1 and not _reused_across(stmt, rest):
                continue   # one thread: the tile loop's parallelism is unused, the strip walk only costs
            out.append(Shape("strip", (floor_div(loops[p], PAR_STRIP), *rest, loops[p]),
                             f"strip-mine {names[p]} by {PAR_STRIP}: tiles of {names[p]} outside, "
                             f"{names[p]} innermost"))
    order = _tiling_order(stmt, loops)
    if order is not None and sizes.tile and sizes.threads == 1:
        tj, tk = stream_tile_sizes(element)
        rest, mid, inner = [loops[p] for p in order[:-2]], loops[order[-2]], loops[order[-1]]
        out.append(Shape("stream-tile", (floor_div(inner, tj), floor_div(mid, tk), *rest, mid, inner),
                         f"tiles {tk}x{tj} of ({names[order[-2]]}, {names[order[-1]]}) outside "
                         f"{', '.join(names[p] for p in order[:-2])}: the array read again in every "
                         f"iteration of the outer loop stays in the L2 cache ({cache_sizes()[1] // 1024} "
                         f"KiB, cache model) while the vector loop {names[order[-1]]} stays long"))
    if order is not None and sizes.tile:
        tsz = cache_tile_sizes(m, len({acc.array for acc in stmt.accesses}))
        tl = [loops[p] for p in order]
        out.append(Shape("tile", tuple(floor_div(x, t) for x, t in zip(tl, tsz)) + tuple(tl),
                         f"tiles {'x'.join(map(str, tsz))} of ({', '.join(names[p] for p in order)}): an "
                         f"array reused across the outer loop would leave the cache (L2 "
                         f"{cache_sizes()[1] // 1024} KiB)"))
    if m >= 2:
        a, b = loops[-2], loops[-1]
        an, bn = names[-2], names[-1]
        for f in range(MAX_SKEW + 1):
            skew = skewed(b, a, f)
            sk = f"{bn} + {f}{an}" if f > 1 else (f"{bn} + {an}" if f == 1 else bn)
            head = tuple(loops[:-2])
            rows = sizes.rows
            out.append(Shape("strips", head + (floor_div(a, rows), skew, a),
                             f"strips of {rows} rows of {an} along {sk} ({rows} independent chains in flight)"))
            # also for one thread: the strips' only parallel loop is their innermost one, under
            # sequential loops, and OpenMP would start it once per column (seidel2d: 0.15x of the
            # source order); the wave's parallel tile loop gives it one start per wave instead
            A, B = sizes.wave if all(sizes.wave) else wave_tile_sizes(point_bytes, rows)
            wave = floor_div(a, A).add(floor_div(skew, B))
            out.append(Shape("strips+wave", head + (wave, floor_div(a, A), floor_div(a, rows), skew, a),
                             f"tile-level wavefront of {A}x{B} tiles over ({an}, {sk}), strips of "
                             f"{rows} rows inside" + ("" if all(sizes.wave) else
                                                      f" (tile size from the cache model: L2 "
                                                      f"{cache_sizes()[1] // 1024} KiB)")))
        if m >= 3:
            out += _time_tiled_strips(loops, names, sizes)
    return out


def _time_tiled_strips(loops: Sequence[Aff], names: Sequence[str], sizes: Sizes) -> list[Shape]:
    """The strips inside a tile-level wavefront over the *outer* two of the last three loops
    ``(t, a, b)``: ``(.., floor(t / T) + floor(a' / T), floor(a' / T), t, floor(a' / S), b' + f a', a')``
    with ``a' = a + g t`` and ``b' = b + g t`` (``g`` in 0, 1: the time skew that makes the ``(t, a')``
    rectangle legal where the dependences go back in ``a``) and the strips' skew ``f``. A ``T x T``
    tile of ``(t, a')`` runs ``T`` steps of ``t`` over ``T`` rows of ``a'`` (every ``b``), so each step
    re-reads the rows the step before it wrote while they are in cache, and one OpenMP start runs a whole
    wave of such tiles: ``O(n / T)`` starts instead of the per-step wavefront's ``O(n)`` per step of
    ``t`` (sl3 on two threads: 3.3x of the original against 1.5x, measured). ``T``: :data:`TIME_TILE`,
    or the wavefront size when one is given."""
    t, a, b = loops[-3], loops[-2], loops[-1]
    tn, an, bn = names[-3], names[-2], names[-1]
    head = tuple(loops[:-3])
    size = sizes.wave[0] if all(sizes.wave) else TIME_TILE
    rows = sizes.rows
    out = []
    for g in (0, 1):
        ag, bg = skewed(a, t, g), skewed(b, t, g)
        agn = f"{an} + {tn}" if g else an
        bgn = f"{bn} + {tn}" if g else bn
        for f in range(MAX_SKEW + 1):
            skew = skewed(bg, ag, f)
            sk = f"{bgn} + {f}({agn})" if f > 1 else (f"{bgn} + {agn}" if f == 1 else bgn)
            wave = floor_div(t, size).add(floor_div(ag, size))
            out.append(Shape("strips+skewed-time-wave" if g else "strips+time-wave",
                             head + (wave, floor_div(ag, size), t, floor_div(ag, rows), skew, ag),
                             f"tile-level wavefront of {size}x{size} tiles over ({tn}, {agn}), each running "
                             f"its {size} steps of {tn} with strips of {rows} rows of {agn} along {sk} inside"))
    return out


def _tiling_order(stmt: Statement, loops: Sequence[Aff]) -> tuple[int, ...] | None:
    """The loop order to tile in, when the cache model says tiling pays: at least three private loops,
    all plain iterators, ordered with the best stride-1 loop innermost, and an access that does not
    depend on the outermost of them but on the two innermost (its reuse across the outer loop is a whole
    two-dimensional slice away: gemm's ``B[k][j]`` across ``i``). None otherwise."""
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
        uses = [any(int(F[r, k]) for r in range(F.rows)) for k in range(len(stmt.iterators))]
        if not uses[outer] and uses[mid] and uses[its[inner]]:
            return order
    return None


def _reused_across(stmt: Statement, loops: Sequence[Aff]) -> bool:
    """Some write of ``stmt`` is the same element for every value of one of ``loops`` (a plain iterator
    none of its subscripts uses): a strip of it stays in registers across that loop (mvt's
    ``x2[i] += A[j][i] * y2[j]`` strip-mined along ``i`` with ``j`` inside: 32 sums kept over all of ``j``);
    without such a write a strip-mined loop only walks the arrays in narrower strips (``S[i][j] +=
    S[i - 1][j]`` by strips of ``j``: 0.57x of the source order's row walk on one thread, measured)."""
    its = [iterator_of(a, stmt) for a in loops]
    return any(k is not None and not uses(w, k) for w in stmt.writes for k in its)
