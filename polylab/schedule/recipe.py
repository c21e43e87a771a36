"""Recipe steps: named functions ``step(schedule, *args) -> Schedule`` that a schedule spec can call.

A *step table* maps step names to :class:`Step` values; the spec reader (:mod:`polylab.schedule.spec`)
is given one. This layer's own steps are :data:`SCHEDULE_STEPS` (``original``, ``auto``, ``isl``,
``wavefront``, ``tile``, ``skew``, ``parallel``, ...). Later layers do not register theirs here: the
storage layer builds the full table, :func:`polylab.storage.recipe_steps` (this layer's steps and the
storage steps), and the readers of the layers above pass it explicitly, so the schedule layer never
imports the storage layer and nothing depends on what happened to be imported. :func:`register_step`
adds a step of the user's own (a notebook exercise) to the table :func:`steps` returns, and
:func:`register_steps` a whole table (``%load_ext polylab`` adds the storage steps that way, explicitly).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

from polylab.schedule import isl_scheduler, optimize, pluto, tiling, transform, wavefront
from polylab.schedule.core import Schedule, original

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


#: the steps of the schedule layer
SCHEDULE_STEPS: StepTable = table(
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
    make_step("optimize", optimize.optimize, usage="optimize([threads], [rows], [wave], [tile], [vector])"),
)

_USER_STEPS: dict[str, Step] = {}


def register_step(name: str, fn: StepFn, *, usage: str | None = None) -> None:
    """Make ``fn(schedule, *args) -> Schedule`` available as step ``name`` in :func:`steps` (and so in
    every table built from it, :func:`polylab.storage.recipe_steps` included)."""
    _USER_STEPS[name] = make_step(name, fn, usage=usage)


def register_steps(step_table: StepTable) -> None:
    """Add every step of ``step_table`` to the table :func:`steps` returns (a layer above calls this
    explicitly: the notebook extension adds the storage steps; nothing registers on import)."""
    _USER_STEPS.update(step_table)


def steps() -> dict[str, Step]:
    """The schedule layer's steps and those added with :func:`register_step`, by name."""
    return {**SCHEDULE_STEPS, **_USER_STEPS}
