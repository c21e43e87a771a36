"""Tiles across the outer (time) loop of a candidate: the time tiles of its outer band
(:func:`polylab.schedule.timetile.time_tiled`) and the time strips of a one-dimensional stencil
(:func:`polylab.schedule.timetile.time_strips`), each where the outer loop is a time loop that runs long
enough and the region's data does not fit in cache anyway.
"""

from __future__ import annotations

from polylab.schedule.core import Schedule
from polylab.schedule.optimize.cachemodel import strip_width
from polylab.schedule.optimize.loops import iterator_of, uses, value_span
from polylab.schedule.optimize.machine import Machine, fits_in_cache
from polylab.schedule.timetile import time_strips, time_tiled
from polylab.schedule.transform import mark_parallel
from polylab.schedule.tuning import STRIP_MIN_STEPS, STRIP_MIN_VECTOR


def with_time_tiles(result: Schedule, size: int, machine: Machine) -> tuple[Schedule, str] | None:
    """The time tiles of ``result``'s outer band (:mod:`polylab.schedule.timetile`), parallel loops marked
    exactly, and their explanation; None when the outer loop is not a time loop (a plain loop of every
    statement that no subscript of an array written in the region uses), is already parallel, runs fewer
    than ``size`` steps for every parameter value, or cannot be tiled, and where the region's data fits in
    cache."""
    if not _tileable_time_loop(result, size, machine):
        return None
    tiled = time_tiled(result, size)
    return None if tiled is None else (mark_parallel(tiled[0]), tiled[1])


def with_time_strips(result: Schedule, machine: Machine) -> tuple[Schedule, str] | None:
    """The time strips of a one-dimensional stencil, parallel loops marked exactly, and their explanation;
    None with more than one thread (the strips run one after the other), for builds with vectors narrower
    than :data:`~polylab.schedule.tuning.STRIP_MIN_VECTOR` bytes, where the outer loop is not a time loop
    (as for :func:`with_time_tiles`), runs fewer than :data:`~polylab.schedule.tuning.STRIP_MIN_STEPS`
    steps for every parameter value, or the region's data fits in cache."""
    if machine.threads != 1 or machine.vector_bytes < STRIP_MIN_VECTOR or not _tileable_time_loop(
            result, STRIP_MIN_STEPS, machine):
        return None
    strips = time_strips(result, strip_width(result.scop, machine))
    return None if strips is None else (mark_parallel(strips[0]), strips[1])


def _tileable_time_loop(result: Schedule, steps: int, machine: Machine) -> bool:
    """Tiles across the outer loop of ``result`` (time tiles, time strips) can keep data in cache: it is a
    time loop (:func:`_time_loop`) that runs at least ``steps`` steps for some parameter value, and the
    region's data does not fit in cache anyway."""
    if not _time_loop(result):
        return False
    context = result.scop.context
    spans = [value_span(result.affs[n][0], result.scop.statement(n).domain.intersect_params(context))
             for n in result.affs]
    return not all(x is not None and x < steps for x in spans) and not fits_in_cache(result.scop, machine)


def _time_loop(result: Schedule) -> bool:
    """The outermost dimension of ``result`` is a time loop: a plain loop of every statement, not already
    parallel, that no subscript of an array written in the region uses (fdtd2d's input ``fict[t]`` may)."""
    dims0 = [result.affs[n][0] for n in result.affs]
    if 0 in result.marked or not dims0 or any(a.is_cst() for a in dims0):
        return False
    written = {w.array for st in result.scop.statements for w in st.writes}
    for n, a in zip(result.affs, dims0):
        stmt = result.scop.statement(n)
        k = iterator_of(a, stmt)
        if k is None or any(acc.array in written and uses(acc, k) for acc in stmt.accesses):
            return False
    return True
