"""The comment that opens generated code: the schedule, the transformations that made it, its parallel
loops and its statements (the same for every target; MLIR gets ``//`` lines)."""

from __future__ import annotations

from polylab.codegen import ast as A
from polylab.model.scop import Scop

__all__ = ["comment", "describe", "header_lines"]


def comment(lines: list[str], mlir: bool = False) -> str:
    """``lines`` as one C block comment (MLIR: ``//`` lines); a ``*/`` inside a line cannot end it."""
    clean = [ln.replace("*/", "* /") for ln in lines]
    if mlir:
        return "\n".join("// " + ln if ln else "//" for ln in clean)
    return "/*\n" + "\n".join(" * " + ln if ln else " *" for ln in clean) + "\n */"


def describe(schedule) -> list[str]:
    """The transformations a schedule object records, as lines (empty when it records none)."""
    for attr in ("transformations", "steps", "history"):
        value = getattr(schedule, attr, None)
        if value:
            if isinstance(value, str):
                return [value]
            try:
                return [str(v) for v in value]
            except TypeError:
                return [str(value)]
    for attr in ("description", "name"):
        value = getattr(schedule, attr, None)
        if isinstance(value, str) and value:
            return [value]
    return []


def header_lines(scop: Scop, schedule, program: A.LoopProgram, target: str) -> list[str]:
    lines = [f"polylab: {target} code for the static control part {scop.name}",
             f"schedule: {program.schedule_text}"]
    steps = describe(schedule)
    if schedule is None or schedule is scop.schedule or (isinstance(schedule, str) and schedule == "original"):
        steps = steps or ["none (the original schedule)"]
    if steps:
        lines.append("transformations:")
        lines += [f"  {s}" for s in steps]
    if program.parallel_depths:
        lines.append("parallel loops (coincident schedule dimensions): "
                     + ", ".join(program.iterators[d] for d in program.parallel_depths))
    else:
        # a schedule chosen for one thread marks none of its exactly parallel dimensions (no thread team)
        exact = [program.iterators[d] if d < len(program.iterators) else f"dimension {d}"
                 for d in getattr(schedule, "parallel_dims", ())]
        lines.append("parallel loops: none" + (f" marked (exactly parallel, run in sequence: {', '.join(exact)})"
                                               if exact else ""))
    lines.append("statements:")
    for s in scop.statements:
        its = ", ".join(s.iterators)
        lines.append(f"  {s.name}[{its}]: {s.code()}")
    return lines
