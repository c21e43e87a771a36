"""The search: fusion structures, each statement's shapes, time tiles and strips, the band, jams."""

from __future__ import annotations

import time
from types import MappingProxyType
from typing import Sequence

from polylab.errors import ScheduleError
from polylab.schedule.core import Schedule
from polylab.schedule.legality import is_legal
from polylab.schedule.optimize.band import band_tile_candidate
from polylab.schedule.optimize.cachemodel import band_tile_size, time_tile_size
from polylab.schedule.optimize.jams import jam_reductions, jam_rows
from polylab.schedule.optimize.loops import keeps_vectors, parallel_loops, vector_floor
from polylab.schedule.optimize.machine import available_threads
from polylab.schedule.optimize.openmp import openmp_dims
from polylab.schedule.optimize.report import OptimizeReport
from polylab.schedule.optimize.scoring import program_key
from polylab.schedule.optimize.shapes import Sizes
from polylab.schedule.optimize.statements import from_base
from polylab.schedule.optimize.structures import bases, chain_shadowed, reuse_gained, reuse_lost
from polylab.schedule.optimize.timed import time_strip_candidates, time_tile_candidates
from polylab.schedule.target import DEFAULT_VECTOR_BYTES, vector_bytes
from polylab.schedule.transform import mark_parallel
from polylab.schedule.tuning import SHIFT_FUSED, STRIP_ROWS, WAVE_TILE


def optimize_schedule(s: Schedule, threads: int | None = None, rows: int = STRIP_ROWS,
                      wave: int | Sequence[int] = WAVE_TILE, tile: bool | int = False,
                      vector: int = 0) -> OptimizeReport:
    """Run the optimizer on schedule ``s`` (see the module text) and return its report; the optimized
    schedule is ``report.schedule`` (legal, parallel dimensions marked, explanation in its notes).
    ``threads``: the threads the code will run on (default :func:`available_threads`); ``rows``: rows of
    the strips; ``wave``: the tile sizes of the strips' wavefront (one number for both; 0: from the cache
    model, :func:`wave_tile_sizes`); ``tile``: offer
    cache tiling; ``vector``: the vector width in bytes of the build (0: the build in effect,
    :func:`polylab.schedule.target.vector_bytes`)."""
    t0 = time.perf_counter()
    threads = available_threads() if threads is None else max(1, int(threads))
    wave_t = (int(wave), int(wave)) if isinstance(wave, int) else (int(wave[0]), int(wave[1]))
    if min(wave_t) < 0:
        raise ScheduleError(f"the tile size of optimize must be 0 (from the cache model) or positive, not "
                            f"{min(wave_t)}", hint="for example optimize(2, 8, 64), or optimize(2) for the model's")
    if vector < 0:
        raise ScheduleError(f"the vector width of optimize is a number of bytes (16, 32, 64) or 0 for the "
                            f"build's, not {vector}", hint="for example optimize(1, 8, 0, 0, 32) for AVX2")
    sizes = Sizes(threads, max(1, int(rows)), wave_t, bool(tile), vector_bytes(vector))
    source = mark_parallel(s)
    source_par = parallel_loops(source)
    lines = [f"optimize ({threads} thread{'s' if threads != 1 else ''}): starting from "
             + ("the source order" if not s.steps else "; ".join(s.steps))]
    best = None
    tried, ranked = [], []
    deepest = max((st.depth for st in s.scop.statements), default=0)
    size = sizes.wave[0] if all(sizes.wave) else time_tile_size(deepest)
    for order, (label, base) in enumerate(bases(s, threads)):
        log: list[str] = []
        fused = label.startswith(SHIFT_FUSED)
        # with threads, a fusion with shifts is only kept with time tiles (their wave is parallel)
        floor = vector_floor(source) if fused and threads == 1 else source_par
        result, choices, on_whole = from_base(base, sizes, floor, log)
        plain = [] if fused and threads > 1 else [(result, label, log, on_whole, False)]
        for cand, cand_label, cand_log, whole, timed in (plain + time_tile_candidates(result, size, label, log)
                                                         + time_strip_candidates(result, sizes, label, log)):
            if any(parallel_loops(cand)[n] < v for n, v in floor.items()) or (
                    fused and not keeps_vectors(source, cand)) or (timed and not keeps_vectors(result, cand)):
                continue
            key = program_key(cand, choices, threads, reuse_lost(s, base),
                              frozenset(chain_shadowed(source, cand)), reuse_gained(s, base), timed)
            tried.append(f"{cand_label}: score {key}")
            ranked.append((key, -order, cand_label, cand, choices, cand_log, whole))
    band = band_tile_candidate(s, ranked, threads, source_par, len(ranked),
                       sizes.wave[0] if all(sizes.wave) else band_tile_size(s.scop))
    if band is not None:
        tried.append(f"{band[2]}: score {band[0]}")
        ranked.append(band)
    # the best first (the earlier structure on a tie); the whole schedule is checked exactly and its
    # parallel dimensions marked anew on all dependences before it is kept
    for key, _, label, result, choices, log, on_whole in sorted(ranked, key=lambda r: r[:2], reverse=True):
        whole = result if on_whole else mark_parallel(result)
        if is_legal(whole) and whole.marked == result.marked:
            best = (key, label, whole, choices, log)
            break
        tried.append(f"{label}: refused by the check of the whole schedule")
    if best is None:
        final, choices = source, []
        lines.append("no rewriting kept every parallel loop: the starting schedule, parallel loops marked")
    else:
        _, label, final, choices, log = best
        why = ("the time loop and the rows are tiled: a tile keeps its rows in cache for its steps, the "
               "tiles of a wave run in parallel, the vector loops stay" if label.endswith("time tiles") else
               f"one thread and {sizes.vector}-byte vectors: the rows stay in the L1 cache for every step "
               f"of a strip, the vector loops stay" if label.endswith("time strips") else
               "a statement had no parallel loop in the other structures: the Pluto-style search's permutable "
               "band gives every statement the tiles of a wave as its parallel loop"
               if label.startswith("the Pluto-style band") else
               "one thread: the nests' vector loops stay, their outer loops now carry the dependences "
               "between them, and each array is streamed once per outer iteration instead of once per nest"
               if label.startswith(SHIFT_FUSED) else
               "loops shared by statements stay shared, so none of their parallel loops is lost; "
               "distribution only when it scores better")
        lines.append(f"fusion: {label} ({why})")
        if len(tried) > 1:
            lines.append("  fusion structures compared (deepest statements with a vectorizable innermost loop "
                         "not taken out of a dependence chain's shadow, tiled statements, minus shared reads "
                         "split apart, loops fused onto shared arrays, statements with a parallel loop when "
                         "threads > 1): " + "; ".join(tried))
        lines += log
    if best is not None:
        floor = source_par if threads == 1 else parallel_loops(final)
        chains = jam_rows(final, sizes.rows, floor, lines)
        # the code generator isolates the full strips of one depth per band, so a reduction jam at another
        # depth would run with min() bounds: none after a chain's jam (see jam_reductions)
        final = chains if chains is not final else jam_reductions(final, floor, lines)
    final = final.relabelled(steps=s.steps + (step_text(threads, sizes),))
    lines.append(f"result: {final.text()}")
    lines.append(f"parallel loops per statement: {parallel_loops(final)} (starting schedule with "
                 f"parallel: {source_par})")
    openmp, why = openmp_dims(final, threads)
    if openmp != final.marked:
        final = final.relabelled(marked=openmp)
        lines += why
    final = final.relabelled(notes=tuple(lines))
    return OptimizeReport(final, tuple(lines), tuple(choices), MappingProxyType(source_par),
                          time.perf_counter() - t0)


def step_text(threads: int | None, sizes: Sizes | None = None) -> str:
    """``optimize``, ``optimize(2)``, ``optimize(2, 16, 128)``, ``optimize(1, 8, 0, 0, 32)``: the step that
    reproduces a choice (the vector width is written where it is not the default build's)."""
    if sizes is None or (sizes.rows == STRIP_ROWS and sizes.wave == WAVE_TILE and not sizes.tile
                         and sizes.vector == DEFAULT_VECTOR_BYTES):
        return "optimize" if threads is None else f"optimize({threads})"
    wave = sizes.wave[0] if sizes.wave[0] == sizes.wave[1] else f"({sizes.wave[0]}, {sizes.wave[1]})"
    tile = f", {int(sizes.tile)}, {sizes.vector}" if sizes.vector != DEFAULT_VECTOR_BYTES else (
        ", 1" if sizes.tile else "")
    return f"optimize({threads if threads is not None else sizes.threads}, {sizes.rows}, {wave}{tile})"


def optimize(s: Schedule, threads: int | None = None, rows: int = STRIP_ROWS, wave: int = WAVE_TILE[0],
             tile: int = 0, vector: int = 0) -> Schedule:
    """The ``optimize`` step (``optimize``, ``optimize(threads)``, ``optimize(threads, rows, wave[, tile[,
    vector]]])`` with cache tiling offered when ``tile`` is 1 and ``vector`` the vector width in bytes of the
    build, 0 for the build in effect, :mod:`polylab.schedule.target`): keep the fusion of the schedule,
    rewrite each statement's private loops by the best legal affine map among interchange, parallel
    strip-mining, strips of independent chains (with a tile-level wavefront when threads > 1) and tiling
    (see :mod:`polylab.schedule.optimize`).

    Affine map per statement: ``t' = (prefix_S(x), 0.., rho_S(l_1(x), .., l_m(x)), 0..)`` where ``rho_S`` is
    the chosen rewriting. Legal: every candidate is checked exactly; parallel dimensions are marked
    exactly; no statement ends with fewer parallel loops than the starting schedule with ``parallel``.
    """
    return optimize_schedule(s, threads, rows, wave, tile, vector).schedule
