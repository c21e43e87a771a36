"""Targets as values: what code to print for a schedule, how to build it, and what a run of it needs.

``generate(scop, schedule, target)`` is the one entry point: isl's AST generator turns the schedule into a
loop program (:mod:`polylab.codegen.ast`) and the :class:`Target` prints it, with the same header comment
for every target (:mod:`polylab.codegen.header`). The four targets:

* :data:`C` (``'c'``): plain C (:mod:`polylab.codegen.c`) in polylab's harness
  (:mod:`polylab.codegen.harness`);
* :data:`OPENMP` (``'openmp'``): the same C with ``#pragma omp parallel for`` on the outermost parallel loop
  of each nest, its body outlined into a function that keeps the ``restrict`` of the arrays; built with
  ``-fopenmp``;
* :data:`CUDA` (``'cuda'``): host loops for the sequential dimensions, one ``__global__`` kernel per
  parallel nest (:mod:`polylab.codegen.cuda`), from the schedule with its tiles scanned as wavefronts and
  its parallel dimensions re-based for coalescing (:func:`gpu_schedule`); built with nvcc, run only where
  a GPU is, without the CPU programs' memory limit (the CUDA runtime reserves a large address range);
* :data:`MLIR` (``'mlir'``): ``affine`` dialect text (:mod:`polylab.codegen.mlir`), a function and not a
  program, so it is read (or checked with ``mlir-opt``), never compiled and run here.

Every function that takes a target takes a :class:`Target` or its name (:func:`as_target`); the code a
target printed (:class:`GeneratedCode`) carries its target, so whoever holds the code can build it
(``code.target.compile(code, flags)``) and knows what its runs need, without a chain of name tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from polylab import toolchain as tc
from polylab.codegen import ast as A
from polylab.codegen.c import kernel_c
from polylab.codegen.cexpr import C_HELPERS
from polylab.codegen.harness import c_program, kernel_signature
from polylab.codegen.header import comment, header_lines
from polylab.errors import CodegenError, ToolchainError
from polylab.model.budget import budgeted
from polylab.model.scop import Scop

__all__ = ["C", "CUDA", "CUDA_EMULATION", "MLIR", "OPENMP", "PROGRAM_TARGETS", "TARGETS", "GeneratedCode", "Target", "as_target",
           "cuda_emulation", "generate", "gpu_schedule"]


@dataclass(frozen=True)
class Target:
    """A code-generation target (see the module text). ``name``: what the command line and the reports
    call it; ``language``: the language of its text (``c``, ``cuda``, ``mlir``: the toolchain's language of
    a program, the highlighter's of the text); ``parallel``: whether its code runs the schedule's parallel
    loops in parallel (OpenMP threads, CUDA blocks and threads); ``openmp``: built with ``-fopenmp``;
    ``program``: its code is a complete program (with polylab's harness) that can be built and run."""

    name: str
    language: str = "c"
    parallel: bool = False
    openmp: bool = False
    program: bool = True

    def __str__(self) -> str:
        return self.name

    # -- generating -----------------------------------------------------------------------------------------
    def prepare(self, schedule):
        """The schedule this target's code is generated from, and notes on how it was derived (none here)."""
        return schedule, ()

    def print(self, scop: Scop, program: A.LoopProgram, header: str) -> tuple[str, str | None, tuple[str, ...]]:
        """``(kernel, complete program or None, notes)`` for the loop program: C in the harness here."""
        kernel = kernel_c(scop, program, kernel_signature(scop), openmp=self.openmp)
        full = c_program(scop, header, kernel, helpers=C_HELPERS,
                         extra_includes="#include <omp.h>\n" if self.openmp else "")
        return kernel, full, ()

    def generate(self, scop: Scop, schedule=None) -> GeneratedCode:
        """This target's code for ``scop`` under ``schedule`` (None or ``"original"``: its own schedule);
        :class:`~polylab.errors.CodegenError` for a schedule isl cannot scan."""
        schedule, derived = self.prepare(schedule)
        program = A.build(scop, schedule)
        header = comment(header_lines(scop, schedule, program, self.name) + list(derived),
                         mlir=self.language == "mlir")
        kernel, full, notes = self.print(scop, program, header)
        return GeneratedCode(self, kernel, full, header, program.schedule_text, program.n_parallel,
                             derived + notes)

    # -- building and running -------------------------------------------------------------------------------
    def build_status(self) -> tc.Availability:
        """Whether this target's programs can be compiled here, with the reason when they cannot."""
        return tc.openmp_status() if self.openmp else tc.c_compiler_status()

    def run_status(self) -> tc.Availability:
        """Whether this target's programs can run here (a CPU program can wherever it compiles)."""
        return tc.Availability(True)

    @property
    def memory_limit_mb(self) -> int | None:
        """The memory limit (MB) of a run of this target's programs (the toolchain's default for CPU code)."""
        return tc.DEFAULT_MEMORY_LIMIT_MB

    def compile(self, code: GeneratedCode | str, flags: tuple[str, ...] = (), *, force: bool = False,
                user_sources: dict[str, str] | None = None) -> tc.Binary:
        """Compile this target's program (a :class:`GeneratedCode` or its text) with ``flags``;
        ``force=True`` rebuilds instead of reusing the toolchain's cached build."""
        text = code.program if isinstance(code, GeneratedCode) else code
        if text is None:
            raise ToolchainError(f"{self.name} code is not a program and cannot be compiled here")
        return tc.compile(text, language=self.language, flags=flags, openmp=self.openmp, force=force,
                          user_sources=user_sources)


@dataclass(frozen=True)
class CudaTarget(Target):
    """CUDA: kernels mapped by :mod:`polylab.codegen.gpumap`, built with nvcc, run where a GPU is."""

    def prepare(self, schedule):
        return gpu_schedule(schedule)

    def print(self, scop: Scop, program: A.LoopProgram, header: str) -> tuple[str, str | None, tuple[str, ...]]:
        from polylab.codegen.cuda import cuda_program

        return cuda_program(scop, program, header)

    def build_status(self) -> tc.Availability:
        return tc.cuda_compiler_status()

    def run_status(self) -> tc.Availability:
        return tc.gpu_status()

    @property
    def memory_limit_mb(self) -> int | None:
        return None


@dataclass(frozen=True)
class CudaEmulationTarget(Target):
    """The CUDA kernels, host function, index arithmetic and block shapes of :data:`CUDA`, compiled as C
    with every thread of every launch run in turn (see :mod:`polylab.codegen.cuda`): the GPU mapping
    verified against the original program without a GPU."""

    def prepare(self, schedule):
        return gpu_schedule(schedule)

    def print(self, scop: Scop, program: A.LoopProgram, header: str) -> tuple[str, str | None, tuple[str, ...]]:
        from polylab.codegen.cuda import cuda_emulation_program

        return cuda_emulation_program(scop, program, header)


@dataclass(frozen=True)
class MlirTarget(Target):
    """MLIR ``affine`` text: a function, not a program."""

    def print(self, scop: Scop, program: A.LoopProgram, header: str) -> tuple[str, str | None, tuple[str, ...]]:
        from polylab.codegen.mlir import mlir_module

        return mlir_module(scop, program, header), None, ()

    def build_status(self) -> tc.Availability:
        return tc.Availability(False, "MLIR text is a function, not a program: polylab prints it (and checks "
                                      "it with mlir-opt when present) but does not build it")

    def run_status(self) -> tc.Availability:
        return self.build_status()


C = Target("c")
OPENMP = Target("openmp", parallel=True, openmp=True)
CUDA = CudaTarget("cuda", language="cuda", parallel=True)
MLIR = MlirTarget("mlir", language="mlir", program=False)
CUDA_EMULATION = CudaEmulationTarget("cuda (emulated on the CPU)")

#: the targets by name (what ``--target`` accepts)
TARGETS: dict[str, Target] = {t.name: t for t in (C, OPENMP, CUDA, MLIR)}

#: the names of the targets whose code is a program that can be built and run (``polylab run --target``)
PROGRAM_TARGETS: tuple[str, ...] = tuple(name for name, t in TARGETS.items() if t.program)


def as_target(target: Target | str) -> Target:
    """The :class:`Target` named ``target`` (a target is returned as it is);
    :class:`~polylab.errors.CodegenError` for an unknown name."""
    if isinstance(target, Target):
        return target
    found = TARGETS.get(target) if isinstance(target, str) else None
    if found is None:
        raise CodegenError(f"unknown target {target!r}", hint=f"the targets are {', '.join(TARGETS)}")
    return found


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

    target: Target
    kernel: str
    program: str | None
    header: str
    schedule: str
    parallel_loops: int = 0
    notes: tuple[str, ...] = ()

    @property
    def language(self) -> str:
        """The language of the text (``c``, ``cuda``, ``mlir``)."""
        return self.target.language

    @property
    def source(self) -> str:
        """What a person reads: the program, or the kernel when there is no program."""
        return self.program if self.program is not None else self.kernel

    def __str__(self) -> str:
        return self.source

    def _repr_markdown_(self) -> str:
        return f"```{self.language}\n{self.kernel}\n```"


@budgeted("code generation")
def generate(scop: Scop, schedule=None, target: Target | str = "c") -> GeneratedCode:
    """Generate ``target`` code for ``scop`` under ``schedule`` (None or ``"original"``: its own schedule).

    Raises :class:`~polylab.errors.CodegenError` for an unknown target or a schedule isl cannot scan.
    """
    return as_target(target).generate(scop, schedule)


def cuda_emulation(scop: Scop, schedule=None) -> GeneratedCode:
    """The CUDA code of ``scop`` under ``schedule`` run on the CPU (:data:`CUDA_EMULATION`): a C program, so
    :func:`polylab.experiment.verify` checks the GPU mapping against the original program without a GPU."""
    return CUDA_EMULATION.generate(scop, schedule)


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
