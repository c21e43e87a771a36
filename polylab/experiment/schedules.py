"""Schedules given as text (the command line's ``--schedule SPEC``), and the one legality gate.

``SPEC`` is ``original`` (the program's own order), a recipe of the schedule layer
(``wavefront; tile(32, 32); parallel``), including the storage layer's steps (``fold_live_ins;
remove_dead_writes; interleave; contract(x)``: importing this module imports :mod:`polylab.storage`, which
registers them), or isl text such as ``{ S0[i, j] -> [i + j, i] }`` (a file holding one is read). Both are
read by :func:`polylab.schedule.parse_schedule`, which marks coincident in isl text exactly the dimensions
``d`` on which every dependent pair whose times agree on ``0..d-1`` also agrees (isl text cannot say
``parallel`` itself).

Every schedule that becomes a compiled variant passes :func:`polylab.schedule.require_legal` (the schedule
layer's one legality gate, re-exported here), which asks :func:`polylab.schedule.legality.check` whether ``theta(u) <lex theta(v)`` for every dependent pair
``u -> v`` (exact, isl) and refuses with :class:`~polylab.errors.IllegalTransformationError` naming the
violated dependence and its smallest violating pair. A raw ``isl.Schedule``/``isl.UnionMap`` is read into
the schedule layer's :class:`~polylab.schedule.Schedule` first (its per-statement maps), so there is one
legality path and one rule for parallel loops.
"""

from __future__ import annotations

import os
from typing import Any

import islpy as isl

import polylab.storage  # noqa: F401  - registers the storage recipe steps with the schedule layer
from polylab.errors import ScheduleError
from polylab.model.scop import Scop
from polylab.schedule import Schedule, parse_schedule, require_legal

__all__ = ["as_schedule", "legal_schedule", "require_legal", "schedule_from_spec", "variant_scop"]


def schedule_from_spec(scop: Scop, spec: str | None, *, check_legal: bool = True) -> Schedule | None:
    """The schedule a ``--schedule`` argument names (None for ``original``).

    isl text gets its exactly parallel dimensions marked (by :func:`polylab.schedule.parse_schedule`). With
    ``check_legal`` (the default) an illegal schedule raises
    :class:`~polylab.errors.IllegalTransformationError` (see :func:`require_legal`)."""
    if spec is None or spec.strip() in ("", "original"):
        return None
    text = spec
    if os.path.isfile(spec):
        with open(spec) as fh:
            text = fh.read()
    sched = parse_schedule(scop, text)
    if check_legal:
        require_legal(sched)
    return sched


def as_schedule(scop: Scop, schedule: Any) -> Schedule | None:
    """The schedule layer's value for what a caller passed: None (the original order) stays None; a
    :class:`~polylab.schedule.Schedule` stays itself; an ``isl.Schedule`` tree or an ``isl.UnionMap``/
    ``isl.Map`` ``{ S[x] -> [t] }`` becomes a Schedule of ``scop`` (its per-statement time vectors, read by
    :func:`polylab.schedule.parse_schedule` from isl text, which marks its exactly parallel dimensions;
    a tree's own coincident flags are not trusted); text is read by
    :func:`schedule_from_spec` (without checking)."""
    if schedule is None or isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, str):
        return schedule_from_spec(scop, schedule, check_legal=False)
    if isinstance(schedule, isl.Schedule):
        umap = schedule.get_map()
    elif isinstance(schedule, isl.UnionMap):
        umap = schedule
    elif isinstance(schedule, isl.Map):
        umap = isl.UnionMap.from_map(schedule)
    else:
        raise ScheduleError(f"not a schedule: {type(schedule).__name__}",
                            hint="pass a polylab.schedule.Schedule, an isl.Schedule or an isl.UnionMap")
    # through the schedule layer's isl-text reader: the same checks (every statement, functions defined
    # on the whole domain, known parameters) as --schedule "{ ... }"
    return parse_schedule(scop, str(umap.intersect_domain(scop.domain).coalesce()))


def legal_schedule(scop: Scop, schedule: Any) -> Schedule | None:
    """:func:`as_schedule` then :func:`require_legal`: what the experiment layer compiles."""
    sched = as_schedule(scop, schedule)
    return None if sched is None else require_legal(sched)


def variant_scop(scop: Scop, schedule: Any) -> Scop:
    """The SCoP a schedule's code is generated from: the schedule's own (``schedule.scop``, which a storage
    step replaces with the transformed SCoP) when it carries one, else ``scop``."""
    own = getattr(schedule, "scop", None)
    if not isinstance(own, Scop):
        return scop
    if own is not scop and own.source != scop.source:
        raise ScheduleError(f"the schedule belongs to another program ({own.name}), not to {scop.name}",
                            hint="pass the SCoP the schedule was made for (or the one it was derived from)")
    return own
