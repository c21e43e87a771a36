"""Rectangular tiling of a permutable band, and the tile-level wavefront.

Tiling dimensions ``d_1..d_k`` of a band with sizes ``T_1..T_k`` maps a time vector to

    t' = (t_0..t_{s-1},  floor(t_{d_1} / T_1), .., floor(t_{d_k} / T_k),  t_s..t_{e-1},  t_e..)

(tile loops, then the original band as point loops). It is legal when the band is permutable: every
dependence not carried before the band has non-negative distances on all of its dimensions, so the tile
distances ``floor(t'/T) - floor(t/T)`` are non-negative too and the tiles can run in lexicographic order.
The result is always re-checked exactly; an illegal tiling is refused with a violating pair.

The tile-level wavefront replaces the tile loops by ``(w = sum of tile coordinates, the tile coordinates
but the first)``: inside a permutable band a dependence between two tiles has non-negative tile distances,
not all zero, so its wave distance is at least 1; the tiles of one wave are independent and run in
parallel (the inner tile dimensions are coincident).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from polylab.errors import IllegalTransformationError, ScheduleError
from polylab.model.budget import budgeted
from polylab.schedule.core import Schedule, Tiles, floor_div
from polylab.schedule.legality import check
from polylab.schedule.transform import mark_parallel


def _choose(s: Schedule, k: int, start: int | None) -> tuple[int, int, list[int]]:
    """(band start, band stop, dimensions to tile)."""
    if start is not None:
        if not 0 <= start <= s.n_dims - k:
            raise ScheduleError(f"cannot tile {k} dimensions from dimension {start}",
                                hint=f"the schedule has dimensions 0..{s.n_dims - 1}")
        band = next((b for b in s.bands if b.start <= start < b.start + b.size), None)
        stop = max(start + k, band.start + band.size) if band else start + k
        return start, stop, list(range(start, start + k))
    loops = set(s.loop_dims)
    for b in s.bands:
        dims = [d for d in b.dims if d in loops]
        if len(dims) >= k and b.permutable:
            first = dims[0]
            return first, b.start + b.size, dims[:k]
    if len(loops) >= k:
        dims = sorted(loops)[:k]
        return dims[0], dims[-1] + 1, dims
    raise ScheduleError(f"the schedule has no {k} loop dimensions to tile",
                        hint=f"give at most {len(loops)} tile sizes: {s.text()}")


def tiled(s: Schedule, sizes: Sequence[int], start: int | None = None, *, label: str | None = None
          ) -> tuple[Schedule, int, int]:
    """The tiled schedule (unchecked), the position of the first tile dimension and their number."""
    sizes = [int(x) for x in sizes]
    if not sizes or any(x <= 0 for x in sizes):
        raise ScheduleError("tile sizes must be positive integers", hint="for example tile(32, 32)")
    k = len(sizes)
    b0, b1, dims = _choose(s, k, start)
    affs = {}
    for n, t in s.affs.items():
        tiles = [floor_div(t[d], T) for d, T in zip(dims, sizes)]
        affs[n] = list(t[:b0]) + tiles + list(t[b0:])
    step = label or f"tile({', '.join(map(str, sizes))})"
    out = s.with_affs(affs, step, provenance=replace(s.provenance, tiles=Tiles(
        tuple(range(b0, b0 + k)), tuple(d + k for d in dims), tuple(sizes))))
    return out, b0, k


def _refuse_if_illegal(out: Schedule, what: str) -> None:
    report = check(out)
    if not report.legal:
        v = report.violations[0]
        raise IllegalTransformationError(
            f"{what} is illegal: {v.message}",
            hint="tiling needs a permutable band (all dependence distances >= 0 on the tiled dimensions); "
                 "skew first (auto finds the skewing) or tile fewer dimensions")


@budgeted("tiling")
def tile(s: Schedule, *sizes: int, start: int | None = None) -> Schedule:
    """Rectangular tiling: ``t' = (.., floor(t_d1/T1), .., floor(t_dk/Tk), t_band.., ..)``.

    Tiles the first ``len(sizes)`` loop dimensions of the outermost permutable band that has that many
    (or the dimensions ``start..start+k-1``). Legal when those dimensions form a permutable band; the
    tiled schedule is checked exactly and refused (IllegalTransformationError) with a violating pair.
    """
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    out, _, _ = tiled(s, sizes, start)
    _refuse_if_illegal(out, f"tile({', '.join(map(str, sizes))})")
    return out


@budgeted("tiling")
def tile_wavefront(s: Schedule, *sizes: int, start: int | None = None) -> Schedule:
    """Tiling followed by a wavefront over the tiles:
    ``t' = (.., w = sum_k floor(t_dk/Tk), floor(t_d2/T2), .., floor(t_dk/Tk), point loops..)``.

    Legal when the tiled dimensions form a permutable band (a dependence between tiles then has
    non-negative tile distances, not all zero, so its wave distance is >= 1); the tiles of one wave run in
    parallel: the inner tile dimensions are marked coincident. Checked exactly.
    """
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    label = f"tile_wavefront({', '.join(map(str, sizes))})"
    out, p, k = tiled(s, sizes, start, label=label)
    affs = {}
    for n, t in out.affs.items():
        wave = t[p]
        for d in range(p + 1, p + k):
            wave = wave.add(t[d])
        affs[n] = list(t[:p]) + [wave] + list(t[p + 1:])
    waved = replace(out.with_affs(affs, None, provenance=out.provenance), steps=out.steps)
    _refuse_if_illegal(waved, label)
    return mark_parallel(waved)


@budgeted("tiling")
def band_is_tilable(s: Schedule, start: int, stop: int) -> bool:
    """True when dimensions ``start..stop-1`` form a permutable band (exact)."""
    return s.is_permutable(start, stop)
