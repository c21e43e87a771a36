"""The user's file rewritten: every ``#pragma scop`` region of a program replaced in place by the code of a
schedule (:mod:`polylab.codegen.inplace`), as ``polylab codegen FILE -o OUT.c`` and ``polylab optimize
FILE -o OUT.c`` write it.

One schedule per choice. The spec (a recipe such as ``tile(32, 32); parallel``, isl text, or the
optimizer's step ``optimize(T, ...)``) is read on the region as the file states it, its parameters free,
so the schedule chosen does not depend on the values a user fixes with ``--param``: those values fix the
parameters for code generation only (specialised code, run when the parameters have them, next to the
general code) and are checked first (integers in C's ``int`` range, inside the region's context).
``specialize=True`` reads the spec on the region with the values fixed instead, so that the optimizer
chooses for those sizes; that schedule is proved legal for those values only, so other values run the
source order. :class:`RegionRewrite` ``sizes`` says which sizes each schedule was chosen for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from polylab.codegen import Target, as_target
from polylab.errors import CodegenError
from polylab.codegen.inplace import RegionCode, region_code, whole_file
from polylab.experiment.params import validate_params
from polylab.experiment.schedules import schedule_from_spec, variant_scop
from polylab.model.scop import Program, Scop
from polylab.schedule import Machine

__all__ = ["RegionRewrite", "Rewrite", "chosen_for", "rewrite", "without_regions"]


def chosen_for(scop: Scop, fixed: Mapping[str, int] | None) -> str:
    """The sizes a schedule of ``scop`` was chosen for, in words: the parameters' fixed values, or that
    they were free (any value), then the integer macros the region's sizes use (``N = 2000``)."""
    if scop.parameters:
        if fixed:
            sizes = ", ".join(f"{p} = {fixed[p]}" for p in scop.parameters if p in fixed)
            free = [p for p in scop.parameters if p not in fixed]
            text = sizes + (f" ({', '.join(free)} any value)" if free else "")
        else:
            text = f"any value of {', '.join(scop.parameters)}"
    else:
        text = "the file's own sizes"
    if scop.constants:
        text += " with " + ", ".join(f"{n} = {v}" for n, v in scop.constants)
    return text


@dataclass(frozen=True)
class RegionRewrite:
    """One region of the file: its SCoP (``scop``, the original), the lines replaced, the schedule's map
    (``schedule``: isl text; None for the original order), and the sizes it was chosen for (``sizes``)."""

    scop: Scop
    lines: tuple[int, int]
    schedule: str | None
    sizes: str

    def to_json(self) -> dict:
        return {"region": self.scop.name, "lines": list(self.lines), "schedule": self.schedule,
                "chosen_for": self.sizes}


@dataclass(frozen=True)
class Rewrite:
    """The rewritten file (``text``) and what replaced each of its regions."""

    text: str
    regions: tuple[RegionRewrite, ...]
    target: str
    spec: str

    def to_json(self) -> dict:
        return {"target": self.target, "spec": self.spec, "regions": [r.to_json() for r in self.regions]}


def _params_of(scop: Scop, params: Mapping[str, int]) -> dict[str, int]:
    """The values of ``params`` that name parameters of ``scop``, checked."""
    mine = {p: v for p, v in params.items() if p in scop.parameters}
    if not mine:
        return {}
    return dict(validate_params(scop, mine, complete=False, memory_limit_mb=None).values)


def rewrite(program: Program, text: str, spec: str | None, target: Target | str = "openmp", *,
            params: Mapping[str, int] | None = None, specialize: bool = False,
            machine: Machine | None = None) -> Rewrite:
    """``text`` (the file of ``program`` as read, line ends untranslated) with every region replaced by the
    code of ``spec`` (None or ``original``: the source order) for ``target`` (C or OpenMP). An illegal
    schedule is refused (:class:`~polylab.errors.IllegalTransformationError`), so is a region the code
    cannot replace in place (:class:`~polylab.errors.CodegenError`, see :mod:`polylab.codegen.inplace`).
    ``machine``: what ``optimize`` chooses for."""
    kind = as_target(target)
    codes, done = [], []
    for scop in program.scops:
        fixed = _params_of(scop, params or {})
        chosen_on = scop.with_parameters(fixed) if specialize and fixed else scop
        schedule = schedule_from_spec(chosen_on, spec, machine=machine)
        variant = variant_scop(chosen_on, schedule)
        # chosen for the fixed values, the schedule is legal for them only: other values run the source order
        otherwise = (scop, None) if chosen_on is not scop else None
        codes.append(region_code(variant, schedule, kind, original=scop, params=fixed or None, otherwise=otherwise))
        place = codes[-1].placement
        done.append(RegionRewrite(scop, (place.first_line, place.last_line),
                                  schedule.union_map.to_str() if schedule is not None else None,
                                  chosen_for(scop, fixed if specialize else None)))
    return Rewrite(whole_file(text, codes), tuple(done), kind.name, spec or "original")


#: what stands in place of each region in :func:`without_regions`
LEFT_OUT = "/* polylab: the region is left out (the rest of the program, for bench --cpu-time) */"


def without_regions(program: Program, text: str) -> str:
    """``text`` (the file of ``program`` as read) with the lines of every region, from ``#pragma scop`` to
    ``#pragma endscop``, replaced by a comment: the rest of the program (its start, initialisation, output
    and exit), whose time ``polylab bench --own-main --cpu-time`` subtracts from each program's. Every other
    byte is unchanged. Not a program that computes the same: it is timed, never verified."""
    codes = []
    for scop in program.scops:
        if scop.placement is None:
            raise CodegenError(f"the region {scop.name} is not delimited by #pragma scop / #pragma endscop",
                               hint="put #pragma scop before the region's first statement and #pragma endscop "
                                    "after its last")
        pad = " " * max((scop.location.column if scop.location else 1) - 1, 0)
        codes.append(RegionCode(scop, scop.placement, pad + LEFT_OUT))
    return whole_file(text, codes)
