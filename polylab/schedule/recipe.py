"""Recipe steps: named functions ``step(schedule, *args) -> Schedule`` that a schedule spec can call.

A *step table* maps step names to :class:`Step` values; the spec reader (:mod:`polylab.schedule.spec`)
is given one. This layer's own steps are :func:`schedule_steps` (``original``, ``auto``, ``isl``,
``wavefront``, ``tile``, ``skew``, ``parallel``, ``optimize``, ...), their ``optimize`` bound to the
:class:`~polylab.schedule.optimize.Machine` the code is chosen for; :data:`SCHEDULE_STEPS` is that table for
the default machine, and the reader's default. Later layers do not register theirs here: the storage
layer builds the full table, :func:`polylab.storage.recipe_steps` (this layer's steps and the storage
steps), and the readers of the layers above pass it explicitly. Tables are values: nothing changes one
after it is made, so a spec means the same wherever it is read; a step of the user's own (a notebook
exercise) goes into a new table, :func:`with_steps`.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

from polylab.schedule import isl_scheduler, optimize, pluto, tiling, transform, wavefront
from polylab.schedule.core import Schedule, original
from polylab.schedule.optimize import Machine

StepFn = Callable[..., Schedule]


@dataclass(frozen=True)
class Step:
    """A recipe step: its name, the function, the usage line of the hints and the first doc line."""

    name: str
    fn: StepFn
    usage: str
    summary: str


#: what a spec reader is given: step name -> step
StepTable = Mapping[str, Step]


def make_step(name: str, fn: StepFn, *, usage: str | None = None) -> Step:
    """``fn(schedule, *args) -> Schedule`` as the step ``name``; the usage line is derived from the
    signature of ``fn`` (its arguments after the schedule) unless given."""
    if usage is None:
        shown = []
        for p in list(inspect.signature(fn).parameters.values())[1:]:
            if p.kind is p.VAR_POSITIONAL:
                shown.append(f"{p.name}...")
            elif p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD):
                continue
            elif p.default is p.empty:
                shown.append(p.name)
            else:
                shown.append(f"[{p.name}]")
        usage = f"{name}({', '.join(shown)})" if shown else name
    doc = (inspect.getdoc(fn) or "").strip().splitlines()
    return Step(name, fn, usage, doc[0] if doc else "")


def table(*step_list: Step) -> StepTable:
    """A read-only step table of ``step_list`` (a later step of the same name wins)."""
    return MappingProxyType({s.name: s for s in step_list})


def original_step(s: Schedule) -> Schedule:
    """Go back to the source order (the original schedule); always legal."""
    o = original(s.scop, s.deps)
    return o.with_maps(o.maps, "original")


#: the usage line of the ``optimize`` steps
OPTIMIZE_USAGE = "optimize([threads], [rows], [wave], [tile], [vector])"


def bound_step(name: str, fn: StepFn, machine: Machine, *, usage: str | None = None) -> Step:
    """The step ``name`` of ``fn(schedule, *args, machine=...)`` with the machine bound (its signature,
    usage line and summary are ``fn``'s)."""

    @functools.wraps(fn)
    def bound(schedule: Schedule, *args: object) -> Schedule:
        return fn(schedule, *args, machine=machine)

    return make_step(name, bound, usage=usage)


def schedule_steps(machine: Machine = Machine()) -> StepTable:
    """The steps of the schedule layer, ``optimize`` choosing for ``machine``."""
    return table(*_PLAIN_STEPS, bound_step("optimize", optimize.optimize, machine, usage=OPTIMIZE_USAGE))


_PLAIN_STEPS = (
    make_step("original", original_step),
    make_step("auto", pluto.auto),
    make_step("isl", isl_scheduler.isl_step),
    make_step("wavefront", wavefront.wavefront),
    make_step("interchange", transform.interchange),
    make_step("permute", transform.permute, usage="permute(d0, d1, ...)"),
    make_step("skew", transform.skew, usage="skew(target, source, [factor])"),
    make_step("shift", transform.shift),
    make_step("reverse", transform.reverse),
    make_step("scale", transform.scale),
    make_step("fuse", transform.fuse),
    make_step("distribute", transform.distribute, usage="distribute([level])"),
    make_step("tile", tiling.tile, usage="tile(size, ...)"),
    make_step("tile_wavefront", tiling.tile_wavefront, usage="tile_wavefront(size, ...)"),
    make_step("parallel", transform.parallel),
    make_step("sequential", transform.sequential),
)

#: the steps of the schedule layer for the default :class:`~polylab.schedule.optimize.Machine` (the spec
#: reader's default table)
SCHEDULE_STEPS: StepTable = schedule_steps()


def with_steps(base: StepTable, *steps: Step) -> StepTable:
    """A new table: ``base`` and ``steps`` (a step of the same name replaces the base's); ``base`` is
    unchanged. ``with_steps(recipe_steps(), make_step("twice_skew", fn))`` adds a step of the user's own."""
    return table(*base.values(), *steps)
