"""``generate(scop, schedule, target)``: one entry point for every target.

The schedule (an ``isl.Schedule`` tree, an ``isl.UnionMap`` or an object with a ``.tree``) is turned into a
loop program by isl's AST generator (:mod:`polylab.codegen.ast`); a printer per target writes it out:

* ``'c'``: plain C (:mod:`polylab.codegen.c`);
* ``'openmp'``: C with ``#pragma omp parallel for`` on the outermost parallel loop of each nest;
* ``'cuda'``: host loops for the sequential dimensions, one ``__global__`` kernel per parallel nest
  (:mod:`polylab.codegen.cuda`);
* ``'mlir'``: ``affine`` dialect text (:mod:`polylab.codegen.mlir`).

C, OpenMP and CUDA come with a complete program (:mod:`polylab.codegen.harness`); MLIR is a function.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polylab.codegen import ast as A
from polylab.codegen.c import kernel_c
from polylab.codegen.cexpr import C_HELPERS
from polylab.codegen.harness import c_program, kernel_signature
from polylab.errors import CodegenError
from polylab.model.scop import Scop

TARGETS = ("c", "openmp", "cuda", "mlir")


@dataclass(frozen=True)
class GeneratedCode:
    """Code for one SCoP, one schedule and one target.

    ``kernel``: the kernel (C/OpenMP: one function; CUDA: the ``__global__`` kernels and the host function
    that launches them; MLIR: a ``func.func`` in a module). ``program``: the complete program with the
    harness (``None`` for MLIR). ``header``: the comment that opens both, stating the schedule and the
    transformations. ``schedule``: the schedule as an isl union map (text). ``parallel_loops``: how many
    loops of the kernel are parallel. ``notes``: what the target's mapping says about the code (CUDA: the
    grid of each kernel and why thread x is where it is, or that the schedule has no parallel loop).
    """

    target: str
    kernel: str
    program: str | None
    header: str
    schedule: str
    parallel_loops: int = 0
    language: str = "c"
    notes: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        """What a person reads: the program, or the kernel when there is no program."""
        return self.program if self.program is not None else self.kernel

    def __str__(self) -> str:
        return self.source

    def _repr_markdown_(self) -> str:
        lang = {"mlir": "mlir", "cuda": "cuda"}.get(self.target, "c")
        return f"```{lang}\n{self.kernel}\n```"


def _comment(lines: list[str], mlir: bool = False) -> str:
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
        lines.append("parallel loops: none")
    lines.append("statements:")
    for s in scop.statements:
        its = ", ".join(s.iterators)
        lines.append(f"  {s.name}[{its}]: {s.code()}")
    return lines


def generate(scop: Scop, schedule=None, target: str = "c") -> GeneratedCode:
    """Generate ``target`` code for ``scop`` under ``schedule`` (None or ``"original"``: its own schedule).

    Raises :class:`~polylab.errors.CodegenError` for an unknown target or a schedule isl cannot scan.
    """
    if target not in TARGETS:
        raise CodegenError(f"unknown target {target!r}", hint=f"the targets are {', '.join(TARGETS)}")
    gpu_notes: tuple[str, ...] = ()
    if target == "cuda":
        schedule, gpu_notes = gpu_schedule(schedule)
    program = A.build(scop, schedule)
    header = _comment(header_lines(scop, schedule, program, target) + list(gpu_notes), mlir=target == "mlir")
    if target in ("c", "openmp"):
        kernel = kernel_c(scop, program, kernel_signature(scop), openmp=target == "openmp")
        full = c_program(scop, header, kernel, helpers=C_HELPERS,
                         extra_includes="#include <omp.h>\n" if target == "openmp" else "")
        return GeneratedCode(target, kernel, full, header, program.schedule_text, program.n_parallel, "c")
    if target == "cuda":
        from polylab.codegen.cuda import cuda_program

        kernel, full, notes = cuda_program(scop, program, header)
        return GeneratedCode(target, kernel, full, header, program.schedule_text, program.n_parallel, "cuda",
                             gpu_notes + notes)
    from polylab.codegen.mlir import mlir_module

    kernel = mlir_module(scop, program, header)
    return GeneratedCode(target, kernel, None, header, program.schedule_text, program.n_parallel, "mlir")


def cuda_emulation(scop: Scop, schedule=None) -> GeneratedCode:
    """The CUDA code of ``scop`` under ``schedule`` run on the CPU: the same kernels, host function, index
    arithmetic and block shapes as ``generate(scop, schedule, "cuda")``, compiled as C with every thread
    of every launch run in turn (see :mod:`polylab.codegen.cuda`). A C program (``target`` ``'c'``), so
    :func:`polylab.experiment.verify` checks the GPU mapping against the original program without a GPU."""
    from polylab.codegen.cuda import cuda_emulation_program

    schedule, gpu_notes = gpu_schedule(schedule)
    program = A.build(scop, schedule)
    header = _comment(header_lines(scop, schedule, program, "cuda (emulated on the CPU)") + list(gpu_notes))
    kernel, full, notes = cuda_emulation_program(scop, program, header)
    return GeneratedCode("c", kernel, full, header, program.schedule_text, program.n_parallel, "c",
                         gpu_notes + notes)


def gpu_schedule(schedule):
    """The schedule the GPU code is generated from: a polylab :class:`~polylab.schedule.Schedule` with the
    points of its tiles scanned as wavefronts (:func:`polylab.codegen.gpuschedule.wave_inside_tiles`) and
    its parallel dimensions re-based for coalesced accesses (:func:`~polylab.codegen.gpuschedule.coalesce`),
    each exactly checked, and the notes saying so; any other schedule object unchanged."""
    from polylab.codegen.gpuschedule import coalesce, wave_inside_tiles
    from polylab.schedule import Schedule

    if isinstance(schedule, Schedule):
        tiled, first = wave_inside_tiles(schedule)
        out, second = coalesce(tiled)
        return out, first + second
    return schedule, ()


def as_isl_schedule(scop: Scop, schedule) -> isl.Schedule | isl.UnionMap:
    """The isl object behind ``schedule`` (see :func:`polylab.codegen.ast.schedule_tree`)."""
    return A.schedule_tree(scop, schedule)
