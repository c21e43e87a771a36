"""The notebook layer's single door to the engine: parse, dependences, schedules, code, experiments.

The magics and explorers call these functions only, so each engine interface is used in exactly one
place, with its real signature. Schedules are read by the one spec reader with the storage layer's step
table (:func:`polylab.storage.recipe_steps`), exactly as ``polylab run`` and ``polylab bench`` read them,
``optimize`` choosing for the machine the notebook runs on (:func:`notebook_steps`; the magics keep their own
table). Nothing here changes a table anyone else reads.
"""

from __future__ import annotations

from functools import cache
from typing import Iterable, Mapping

from polylab.analysis import DependenceGraph, compute_dependences
from polylab.bench.machine import detect_machine
from polylab.codegen import GeneratedCode
from polylab.codegen import generate as _generate
from polylab.errors import PolylabError
from polylab.experiment import RunReport, measure
from polylab.experiment.schedules import variant_scop
from polylab.frontend import parse as _parse
from polylab.model import Program, Scop
from polylab.schedule import LegalityReport, Schedule, StepTable, check
from polylab.schedule import parse_schedule as _parse_schedule
from polylab.schedule import require_legal as _require_legal
from polylab.storage import recipe_steps


def parse(text: str, *, language: str | None = None, filename: str | None = None, defines=(),
          include_dirs=()) -> Program:
    """The cell's text as a :class:`polylab.model.Program` (``defines``/``include_dirs``: ``-D``/``-I``)."""
    return _parse(text, filename=filename, language=language, defines=defines, include_dirs=include_dirs)


def as_scop(obj: Scop | Program | Schedule) -> Scop:
    """A Scop from a Scop, a Program (its single, or first, static control part) or a Schedule (its scop)."""
    if isinstance(obj, Scop):
        return obj
    if isinstance(obj, Program):
        return obj.scop
    if isinstance(obj, Schedule):
        return obj.scop
    raise PolylabError(f"expected a SCoP, found a {type(obj).__name__}",
                       hint="store one with %%scop NAME, then pass NAME")


def dependences(scop: Scop, *, value_based: bool = False,
                kinds: Iterable[str] = ("flow", "anti", "output")) -> DependenceGraph:
    """The exact dependence graph of ``scop`` (memory-based unless ``value_based``)."""
    return compute_dependences(scop, value_based=value_based, kinds=kinds)


@cache
def notebook_steps() -> StepTable:
    """The step table of the notebook: the schedule and storage steps, ``optimize`` choosing for the machine
    the kernel runs on (read once, :func:`polylab.bench.machine.detect_machine`)."""
    return recipe_steps(detect_machine())


def parse_schedule(scop: Scop, spec: str, steps: StepTable | None = None) -> Schedule:
    """A :class:`polylab.schedule.Schedule` from a spec: isl text and recipe steps, storage steps included
    (``fold_live_ins; remove_dead_writes; interleave; contract(x)``), read with the table ``steps``
    (default :func:`notebook_steps`). Not checked for legality here."""
    return _parse_schedule(scop, spec, steps=steps if steps is not None else notebook_steps())


def legality(schedule: Schedule) -> LegalityReport:
    """The legality report of ``schedule`` (``.legal``, ``.violations``)."""
    return check(schedule)


def require_legal(schedule: Schedule, what: str = "the schedule", *, consequence: str = "so it is not run",
                  hint: str | None = None) -> Schedule:
    """``schedule`` when it is legal, else the schedule layer's
    :class:`~polylab.errors.IllegalTransformationError` (the one gate,
    :func:`polylab.schedule.require_legal`: the violated dependence and a violating pair)."""
    return _require_legal(schedule, what, consequence=consequence, hint=hint)


def generate(scop: Scop, schedule: Schedule | None, target: str = "c") -> GeneratedCode:
    """The code of ``schedule`` for ``target``, generated from the schedule's own SCoP (the transformed one
    after a storage step; ``scop`` for the original order)."""
    return _generate(variant_scop(scop, schedule), schedule, target)


def experiment(scop: Scop, schedule: Schedule | None, *, target: str = "c",
               params: Mapping[str, int] | None = None, threads: int | None = None, repeat: int = 3,
               force: bool = False, verify_params: Mapping[str, int] | None = None,
               timeout: float = 300.0) -> RunReport:
    """Compile, verify and time ``schedule`` against the original program (:func:`polylab.experiment.measure`);
    ``force`` rebuilds instead of reusing cached binaries; ``timeout``: seconds allowed for each run (the
    toolchain kills the program's process group after it)."""
    return measure(scop, schedule, target, params=dict(params or {}), threads=threads, repeat=repeat,
                   force=force, verify_params=dict(verify_params) if verify_params else None, timeout=timeout)
