"""Schedules given as text (``--schedule SPEC``, ``%%schedule``, ``polylab bench --schedules``) and the gate
every compiled variant passes.

``SPEC`` is ``original`` (the program's own order), or what :func:`polylab.schedule.parse_schedule` reads
(recipe steps and isl text in any order; a file holding a spec is read) with the step table
:func:`polylab.storage.recipe_steps`, so the storage steps (``fold_live_ins; remove_dead_writes;
interleave; contract(x)``) are known, and ``optimize`` chooses for the
:class:`~polylab.schedule.optimize.Machine` given (the reference machine when none is). ``polylab run``, ``codegen``, ``bench`` and the magics all read specs
here, so they accept and refuse exactly the same ones.

Every schedule that becomes a compiled variant passes :func:`polylab.schedule.require_legal` (the schedule
layer's one legality gate, re-exported here) on the *final* schedule, against the exact dependences of its
own SCoP (after storage steps, the rewritten one): ``theta(u) <lex theta(v)`` for every dependent pair
``u -> v``, else :class:`~polylab.errors.IllegalTransformationError` with the violated dependence and its
smallest violating pair. A raw ``isl.Schedule``/``isl.UnionMap`` is read into a
:class:`~polylab.schedule.Schedule` first (:func:`polylab.schedule.as_schedule`), so there is one legality
path and one rule for parallel loops.
"""

from __future__ import annotations

import os

import islpy as isl

from polylab.errors import ScheduleError
from polylab.frontend import read_text_file
from polylab.model.scop import Scop
from polylab.schedule import Machine, Schedule, as_schedule, parse_schedule, require_legal
from polylab.storage import recipe_steps

__all__ = ["as_schedule", "is_original", "legal_schedule", "require_legal", "schedule_from_spec", "variant_scop"]


def is_original(spec: str | None) -> bool:
    """True for the spec of the program's own order (None, blank, ``original``)."""
    return spec is None or spec.strip() in ("", "original")


def schedule_from_spec(scop: Scop, spec: str | None, *, check_legal: bool = True,
                       machine: Machine | None = None) -> Schedule | None:
    """The schedule a spec describes (None for ``original``); see the module text. ``machine``: what
    ``optimize`` chooses for.

    With ``check_legal`` (the default) an illegal final schedule raises
    :class:`~polylab.errors.IllegalTransformationError` (:func:`require_legal`)."""
    if is_original(spec):
        return None
    text = spec
    if os.path.isfile(spec):
        text = read_text_file(spec, what="schedule spec file")
    sched = parse_schedule(scop, text, steps=recipe_steps(machine or Machine()))
    if check_legal:
        require_legal(sched)
    return sched


def legal_schedule(scop: Scop, schedule: Schedule | isl.Schedule | isl.UnionMap | isl.Map | str | None, *,
                   machine: Machine | None = None) -> Schedule | None:
    """What the experiment layer compiles: None (the original order) stays None, a spec is read by
    :func:`schedule_from_spec` (``optimize`` choosing for ``machine``), an isl schedule by
    :func:`polylab.schedule.as_schedule`; the result must pass :func:`require_legal`."""
    if isinstance(schedule, str):
        return schedule_from_spec(scop, schedule, machine=machine)
    return None if schedule is None else require_legal(as_schedule(scop, schedule))


def variant_scop(scop: Scop, schedule: Schedule | None) -> Scop:
    """The SCoP a schedule's code is generated from: the schedule's own (``schedule.scop``, which a storage
    step replaces with the transformed SCoP), or ``scop`` for the original order."""
    if schedule is None:
        return scop
    own = schedule.scop
    if own is not scop and own.source != scop.source:
        raise ScheduleError(f"the schedule belongs to another program ({own.name}), not to {scop.name}",
                            hint="pass the SCoP the schedule was made for (or the one it was derived from)")
    return own
