"""The search: every fusion structure's candidates (:mod:`polylab.schedule.optimize.candidates`), the best one
that the check of the whole schedule accepts, then the jams (:mod:`polylab.schedule.optimize.jams`) and the
OpenMP loops (:mod:`polylab.schedule.optimize.openmp`); and the ``optimize`` recipe step.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Sequence

from polylab.errors import ScheduleError
from polylab.model.budget import budgeted
from polylab.schedule.core import Schedule
from polylab.schedule.legality import is_legal
from polylab.schedule.optimize.cachemodel import band_tile_size, time_tile_size
from polylab.schedule.optimize.candidates import Candidate, band_candidate, structure_candidates
from polylab.schedule.optimize.explain import COMPARED, jam_line, score_text, serial_line, structure_reason
from polylab.schedule.optimize.jams import jam_reductions, jam_rows
from polylab.schedule.optimize.kinds import TimeTiling
from polylab.schedule.optimize.loops import parallel_loops
from polylab.schedule.optimize.machine import DEFAULT_VECTOR_BYTES, Machine
from polylab.schedule.optimize.openmp import openmp_dims
from polylab.schedule.optimize.records import Jam
from polylab.schedule.optimize.report import Compared, OptimizeReport, frozen_counts
from polylab.schedule.optimize.shapes import Settings
from polylab.schedule.optimize.structures import bases
from polylab.schedule.transform import mark_parallel
from polylab.schedule.tuning import STRIP_ROWS, WAVE_TILE


def settings_of(machine: Machine, threads: int | None = None, rows: int = STRIP_ROWS,
                wave: int | Sequence[int] = WAVE_TILE, tile: bool | int = False, vector: int | None = None
                ) -> Settings:
    """The settings of one search on ``machine``: ``threads`` (None: the machine's; at least 1), ``rows``
    of the strips, ``wave`` the tile sizes of the strips' wavefront (one number for both; 0: from the cache
    model), ``tile`` to offer cache tiling, ``vector`` the vector width in bytes of the build (None or 0:
    the machine's). Refuses negative sizes."""
    wave_t = (int(wave), int(wave)) if isinstance(wave, int) else (int(wave[0]), int(wave[1]))
    if min(wave_t) < 0:
        raise ScheduleError(f"the tile size of optimize must be 0 (from the cache model) or positive, not "
                            f"{min(wave_t)}", hint="for example optimize(2, 8, 64), or optimize(2) for the model's")
    if vector is not None and vector < 0:
        raise ScheduleError(f"the vector width of optimize is a number of bytes (16, 32, 64) or 0 for the "
                            f"build's, not {vector}", hint="for example optimize(1, 8, 0, 0, 32) for AVX2")
    if threads is not None:
        machine = machine.with_threads(max(1, int(threads)))
    if vector:
        machine = machine.with_vector(int(vector))
    return Settings(machine, max(1, int(rows)), wave_t, bool(tile))


@budgeted("the optimizer (optimize)")
def optimize_schedule(s: Schedule, settings: Settings, step: str | None = None) -> Schedule:
    """The optimizer on schedule ``s`` (see :mod:`polylab.schedule.optimize`): the optimized schedule (legal,
    parallel dimensions marked exactly), its report in ``provenance.optimize`` and its explanation in its
    notes; ``step``: the recipe step recorded (default: the one that reproduces the choice,
    :func:`step_text`)."""
    t0 = time.perf_counter()
    threads = settings.threads
    source = mark_parallel(s)
    source_par = parallel_loops(source)
    lines = [f"optimize ({threads} thread{'s' if threads != 1 else ''}): starting from "
             + ("the source order" if not s.steps else "; ".join(s.steps))]
    deepest = max((st.depth for st in s.scop.statements), default=0)
    given = settings.wave[0] if all(settings.wave) else 0
    ranked: list[Candidate] = []
    for order, base in enumerate(bases(s, settings.machine)):
        ranked += structure_candidates(s, source, base, order, settings, given or time_tile_size(deepest))
    band = band_candidate(s, ranked, settings, source_par, given or band_tile_size(s.scop, settings.machine))
    if band is not None:
        ranked.append(band)
    best, refused = _first_legal(ranked)
    compared = tuple(Compared(c.label, c.structure, c.timing, c.score, c.label in refused) for c in ranked)
    jams: list[Jam] = []
    if best is None:
        final, choices = source, ()
        lines.append("no rewriting kept every parallel loop: the starting schedule, parallel loops marked")
    else:
        final, choices = best.schedule, best.choices
        lines.append(f"fusion: {best.label} ({structure_reason(best.structure, best.timing, settings.machine)})")
        if len(compared) > 1:
            lines.append(COMPARED + "; ".join(f"{c.label}: {score_text(c.score)}"
                                              + (" (refused by the check of the whole schedule)" if c.refused else "")
                                              for c in compared))
        lines += best.lines
        floor = source_par if threads == 1 else parallel_loops(final)
        chains = jam_rows(final, settings.rows, floor, jams)
        final = jam_reductions(chains, floor, jams)
        lines += [jam_line(j) for j in jams]
    final = final.relabelled(steps=s.steps + (step or step_text(threads, settings),))
    lines.append(f"result: {final.text()}")
    lines.append(f"parallel loops per statement: {parallel_loops(final)} (starting schedule with "
                 f"parallel: {source_par})")
    openmp, serial = openmp_dims(final, threads, settings.machine.vector_bytes)
    if openmp != final.marked:
        final = final.relabelled(marked=openmp)
        lines += [serial_line(x) for x in serial]
    report = OptimizeReport(tuple(lines), tuple(choices), frozen_counts(source_par), time.perf_counter() - t0,
                            settings.machine, best.structure if best else None,
                            best.timing if best else TimeTiling.NONE, best.score if best else None, compared,
                            tuple(jams), tuple(serial))
    return final.relabelled(notes=report.lines, provenance=replace(final.provenance, optimize=report))


def _first_legal(ranked: Sequence[Candidate]) -> tuple[Candidate | None, set[str]]:
    """The best candidate (the earlier structure on a tie) whose whole schedule is legal and whose parallel
    dimensions, marked anew on all dependences, are those found for it; and the labels of the better ones
    refused by that check."""
    refused: set[str] = set()
    for cand in sorted(ranked, key=Candidate.rank, reverse=True):
        whole = cand.schedule if cand.on_whole else mark_parallel(cand.schedule)
        if is_legal(whole) and whole.marked == cand.schedule.marked:
            return replace(cand, schedule=whole), refused
        refused.add(cand.label)
    return None, refused


def step_text(threads: int | None, settings: Settings | None = None) -> str:
    """``optimize``, ``optimize(2)``, ``optimize(2, 16, 128)``, ``optimize(1, 8, 0, 0, 32)``: the step that
    reproduces a choice (the vector width is written where it is not the default build's)."""
    if settings is None or (settings.rows == STRIP_ROWS and settings.wave == WAVE_TILE and not settings.tile
                            and settings.machine.vector_bytes == DEFAULT_VECTOR_BYTES):
        return "optimize" if threads is None else f"optimize({threads})"
    wave = settings.wave[0] if settings.wave[0] == settings.wave[1] else f"({settings.wave[0]}, {settings.wave[1]})"
    vector = settings.machine.vector_bytes
    tile = f", {int(settings.tile)}, {vector}" if vector != DEFAULT_VECTOR_BYTES else (", 1" if settings.tile else "")
    return f"optimize({threads if threads is not None else settings.threads}, {settings.rows}, {wave}{tile})"


def optimize(s: Schedule, threads: int | None = None, rows: int = STRIP_ROWS, wave: int = WAVE_TILE[0],
             tile: int = 0, vector: int = 0, *, machine: Machine = Machine()) -> Schedule:
    """The ``optimize`` step (``optimize``, ``optimize(threads)``, ``optimize(threads, rows, wave[, tile[,
    vector]]])`` with cache tiling offered when ``tile`` is 1 and ``vector`` the vector width in bytes of the
    build, 0 for the machine's): keep the fusion of the schedule, rewrite each statement's private loops by
    the best legal affine map among interchange, parallel strip-mining, strips of independent chains (with
    a tile-level wavefront when threads > 1) and tiling (see :mod:`polylab.schedule.optimize`). ``machine``:
    what the code is chosen for (a step table binds it, :func:`polylab.schedule.recipe.schedule_steps`);
    ``threads`` and ``vector`` override its threads and vector width.

    Affine map per statement: ``t' = (prefix_S(x), 0.., rho_S(l_1(x), .., l_m(x)), 0..)`` where ``rho_S`` is
    the chosen rewriting. Legal: every candidate is checked exactly; parallel dimensions are marked
    exactly; no statement ends with fewer parallel loops than the starting schedule with ``parallel``.
    """
    return optimize_schedule(s, settings_of(machine, threads, rows, wave, tile, vector))
