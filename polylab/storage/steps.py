"""The storage steps as recipe steps, and the full step table of the spec readers above this layer.

A recipe step takes a :class:`~polylab.schedule.Schedule` (which knows its SCoP, ``schedule.scop``) and
returns a new one. The storage steps change the SCoP as well, so each returns a schedule of the *new*
SCoP: ``fold_live_ins``, ``remove_dead_writes``, ``home_scalars``, ``interleave`` (alias ``fuse_producers``),
``split`` (index-set splitting), ``contract(x)`` (``contract(x, 2)`` fixes the modulus), ``storage`` (the
whole automatic chain) and
``optimize`` (the loop optimizer with the storage steps that apply, :mod:`polylab.storage.optimize`). Their
reports are attached to the returned schedule's ``provenance.storage``.

Nothing is registered anywhere: :func:`storage_steps` is a table (:data:`STORAGE_STEPS` for the default
machine), and :func:`recipe_steps` the schedule layer's steps together with these, both choosing for the
:class:`~polylab.schedule.optimize.Machine` they are given, which the readers of the layers above
(``polylab run``/``codegen``/``bench``, the magics) pass to :func:`polylab.schedule.parse_schedule`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from polylab.schedule import Machine, Schedule, StepTable, make_step, schedule_steps
from polylab.schedule.recipe import OPTIMIZE_USAGE, bound_step, table, with_steps
from polylab.storage.contract import contract
from polylab.storage.dead import remove_dead_writes
from polylab.storage.fold import constant_writers, fold_live_ins
from polylab.storage.homes import home_scalars
from polylab.storage.interleave import interleave
from polylab.storage.optimize import step_optimize
from polylab.storage.pipeline import storage_pipeline
from polylab.storage.split import split_index_sets


def _with_report(value: Schedule, name: str, report: Any, before: Schedule) -> Schedule:
    """``value`` with the storage reports of ``before`` (the step's input) and ``(name, report)`` in
    ``provenance.storage``."""
    storage = before.provenance.storage + ((name, report),)
    return replace(value, provenance=replace(value.provenance, storage=storage))


def _same_times(schedule: Schedule, scop, step: str, keep_marks: bool = True) -> Schedule:
    """The time vectors of ``schedule`` for the statements of ``scop`` (a SCoP that a storage step rewrote
    without changing its statements' instances' order); the parallel marks stay (``keep_marks``), since
    folding and dead-write removal only remove dependences; scalar homes may add some on the home
    elements, so their step drops the marks."""
    maps = {s.name: schedule.maps[s.name] for s in scop.statements}
    return Schedule.from_maps(scop, maps, steps=schedule.steps + (step,),
                              marked=schedule.marked if keep_marks else frozenset(), notes=schedule.notes,
                              provenance=schedule.provenance)


def step_fold_live_ins(schedule: Schedule, **initial_values: Any) -> Schedule:
    """Recipe step ``fold_live_ins``: the schedule of the folded SCoP (same time vectors)."""
    scop, rep = fold_live_ins(schedule.scop, initial_values=initial_values or None)
    return _with_report(_same_times(schedule, scop, "fold_live_ins"), "fold_live_ins", rep, schedule)


def step_remove_dead_writes(schedule: Schedule, *statements: str) -> Schedule:
    """Recipe step ``remove_dead_writes`` (or ``remove_dead_writes(S0, S2)``): the same time vectors on
    the restricted domains. Without names it restricts the statements that store constants (the
    initialisations), as the automatic chain does; name statements to restrict others too."""
    names = list(statements) if statements else list(constant_writers(schedule.scop))
    scop, rep = remove_dead_writes(schedule.scop, statements=names)
    return _with_report(_same_times(schedule, scop, "remove_dead_writes"), "remove_dead_writes", rep, schedule)


def step_home_scalars(schedule: Schedule) -> Schedule:
    """Recipe step ``home_scalars``: each scalar's live ranges kept in the array elements they end in.

    Only where that keeps the dataflow exactly (:mod:`polylab.storage.homes`); the same time vectors for
    the statements that remain, unmarked (a later ``parallel`` or ``optimize`` marks the parallel loops)."""
    scop, rep = home_scalars(schedule.scop)
    return _with_report(_same_times(schedule, scop, "home_scalars", keep_marks=False), "home_scalars", rep,
                        schedule)


def step_interleave(schedule: Schedule) -> Schedule:
    """Recipe step ``interleave``: producers next to the consumer iteration that first reads them."""
    out, rep = interleave(schedule.scop, schedule)
    return _with_report(out, "interleave", rep, schedule)


def step_contract(schedule: Schedule, array: str, modulus: int | None = None) -> Schedule:
    """Recipe step ``contract(x)``: the schedule of the contracted SCoP (with its copy-outs)."""
    _, out, rep = contract(schedule.scop, schedule, str(array),
                           modulus=int(modulus) if modulus is not None else None)
    return _with_report(out, f"contract({array})", rep, schedule)


def step_split(schedule: Schedule) -> Schedule:
    """Recipe step ``split``: index-set splitting (:func:`polylab.storage.split.split_index_sets`), each
    loop that carries dependences only from or to one hyperplane cut there; the schedule unchanged (the
    step recorded) where none does."""
    out, rep = split_index_sets(schedule)
    return _with_report(out.relabelled(steps=schedule.steps + ("split",)), "split", rep, schedule)


def step_storage(schedule: Schedule) -> Schedule:
    """Recipe step ``storage``: the automatic chain of :func:`polylab.storage.storage_pipeline`."""
    plan = storage_pipeline(schedule.scop, schedule)
    return _with_report(plan.schedule, "storage", plan, schedule)


_PLAIN_STEPS = (
    make_step("fold_live_ins", step_fold_live_ins),
    make_step("remove_dead_writes", step_remove_dead_writes),
    make_step("home_scalars", step_home_scalars),
    make_step("interleave", step_interleave),
    make_step("fuse_producers", step_interleave),
    make_step("contract", step_contract),
    make_step("split", step_split),
    make_step("storage", step_storage),
)


def storage_steps(machine: Machine = Machine()) -> StepTable:
    """The recipe steps of the storage layer, ``optimize`` (with its storage steps) choosing for
    ``machine``."""
    return table(*_PLAIN_STEPS, bound_step("optimize", step_optimize, machine, usage=OPTIMIZE_USAGE))


#: the recipe steps of the storage layer for the default machine
STORAGE_STEPS: StepTable = storage_steps()


def recipe_steps(machine: Machine = Machine()) -> StepTable:
    """The step table of every spec reader above this layer: the schedule layer's steps and the storage
    steps, ``optimize`` (the storage layer's) choosing for ``machine`` (the default: the reference machine
    of :class:`~polylab.schedule.optimize.Machine`; the command line, the notebook and the benchmark pass
    the one they run on)."""
    return with_steps(schedule_steps(machine), *storage_steps(machine).values())
