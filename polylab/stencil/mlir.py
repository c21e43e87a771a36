"""A stencil program's lower forms: xDSL's loops (``scf.parallel`` over ``memref``), MLIR's GPU dialect in its
two forms, the program distributed over MPI ranks, and polylab's own code from the lowered model (C, OpenMP,
CUDA, MLIR affine loops). Building and running MLIR is the toolchain's (:mod:`polylab.toolchain.mlirbuild`).

* :func:`lowered_loops` (:data:`LOWER_SPEC`) and :func:`run_loops`, which builds and runs them.
* :func:`gpu_forms`: xDSL's lowered loops mapped to GPU processors by xDSL's ``gpu-map-parallel-loops``, and
  the inline and function forms ``mlir-opt`` makes of them (:func:`polylab.toolchain.mlirbuild.gpu_launch_forms`).
  polylab's own CUDA C from the model is the GPU code that runs and is timed (:func:`generate_code`).
* :func:`distribute`: xDSL's ``distribute-stencil`` (a 2d or 3d grid of ranks): the halo exchanges
  (``dmp.swap``) each rank performs, listed, and the MPI form (:func:`mpi_module`: the fields made the
  function's arguments, then :data:`MPI_SPEC`).
* :func:`run_mpi` runs the MPI form with ``mpirun -np R``. Each rank holds fields of the program's bounds in
  *its own* coordinates (rank ``r``'s point ``x`` is the global point ``x + r * L`` along ``i``, ``L`` the local
  extent), with the global values only on the rows it owns and on the global halo (outside the global
  domain); every other row is NaN, so a value the halo exchange does not bring makes the output wrong. The
  rows each rank owns of the stored fields are assembled (:func:`polylab.stencil.check.check_mpi` judges them
  against the reference interpreter's run of the whole program).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.experimental import dmp
from xdsl.dialects.func import FuncOp
from xdsl.dialects.stencil import CastOp
from xdsl.rewriter import Rewriter

from polylab import render
from polylab.codegen import GeneratedCode, generate
from polylab.errors import PolylabError
from polylab.experiment.schedules import legal_schedule, variant_scop
from polylab.stencil.errors import StencilError
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.passes import reparsed, run_passes
from polylab.stencil.program import Program, box_of
from polylab.toolchain.mlirbuild import gpu_launch_forms, mlir_tools, run_mlir

#: xDSL's lowering of the stencil dialect to scf.parallel loops over memrefs
LOWER_SPEC = "stencil-storage-materialization,shape-inference,convert-stencil-to-ll-mlir"
#: xDSL's passes from a program whose fields are arguments to loops with calls to MPICH (``{ranks}`` parts along
#: ``i``; the driver initialises MPI)
MPI_SPEC = ("distribute-stencil{{strategy=2d-grid slices={ranks},1}},shape-inference,canonicalize-dmp,"
            "stencil-bufferize,dmp-to-mpi{{mpi_init=false}},convert-stencil-to-ll-mlir,lower-mpi")


def generate_code(program: Program | Lowering, schedule: Any = None, target: str = "c") -> GeneratedCode:
    """The ``target`` code of the lowered model under ``schedule`` (None: its own loops; a
    :class:`~polylab.schedule.Schedule`, an isl schedule or a spec such as ``"tile(8,8); parallel"``; an
    illegal one is refused with the violated dependence)."""
    lowering = program if isinstance(program, Lowering) else lower(program)
    legal = legal_schedule(lowering.scop, schedule)
    return generate(variant_scop(lowering.scop, legal), legal, target)


def lowered_mlir(program: Program | Lowering, schedule: Any = None) -> str:
    """polylab's model printed as MLIR (``affine`` loops over ``memref``), under ``schedule``."""
    return generate_code(program, schedule, "mlir").kernel


def lowered_loops(program: Program) -> Program:
    """xDSL's lowering of the program to ``scf.parallel`` loops over ``memref`` (:data:`LOWER_SPEC`)."""
    return run_passes(program, LOWER_SPEC)


def run_loops(program: Program, fields: dict[str, Any]) -> dict[str, np.ndarray]:
    """The stored fields after xDSL's lowered loops of ``program``, compiled through ``mlir-opt`` and run on
    ``fields`` (:func:`polylab.toolchain.mlirbuild.run_mlir`)."""
    loops = lowered_loops(program)
    after = run_mlir(loops.text, loops.name, [fields[name] for name, _ in program.arguments()])
    return {name: a for (name, _), a in zip(program.arguments(), after) if name in program.output_fields()}


# -- GPU ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class GpuForms(render.TextDisplay):
    """The lowered loops in MLIR's GPU dialect: ``mapped`` (xDSL's processor mapping), ``launch`` (the inline
    form) and ``outlined`` (the function form), the last two None with the ``reason`` where mlir-opt is not."""

    mapped: str
    launch: str | None
    outlined: str | None
    reason: str = ""

    def __str__(self) -> str:
        if self.launch is None:
            return f"// {self.reason}\n{self.mapped}"
        return f"// inline form (gpu.launch)\n{self.launch}\n// function form (gpu.func, gpu.launch_func)\n" \
               f"{self.outlined}"


def gpu_forms(program: Program, tile: tuple[int, ...] = (1, 4, 32)) -> GpuForms:
    """The GPU dialect's two forms of the program's lowered loops (see the module); ``tile``: the block of
    threads, innermost dimension last."""
    loops = lowered_loops(program)
    mapped = run_passes(loops, "gpu-map-parallel-loops").text
    tools, reason = mlir_tools()
    if tools is None:
        return GpuForms(mapped, None, None, reason)
    try:
        return GpuForms(mapped, *gpu_launch_forms(loops.text, tile[-program.rank:]))
    except PolylabError as err:
        raise StencilError(f"mlir-opt refused the GPU forms: {err.message}") from None


# -- distribution over MPI ranks -------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class Distribution(render.TextDisplay):
    """The program decomposed over a grid of ranks: ``text`` (after distribute-stencil and shape inference),
    its halo ``exchanges`` (one line each), and ``mpi`` (the MPI lowering, or None with ``reason``)."""

    grid: tuple[int, ...]
    text: str
    exchanges: tuple[str, ...]
    mpi: str | None
    reason: str = ""

    def __str__(self) -> str:
        lines = [f"distributed over a {'x'.join(map(str, self.grid))} grid of ranks: "
                 f"{len(self.exchanges)} halo exchanges per rank"]
        lines += [f"  {e}" for e in self.exchanges]
        lines.append("MPI lowering: " + (f"done (dmp-to-mpi, lower-mpi: {self.mpi.count('MPI_Isend')} MPI_Isend calls "
                                         "in the loops' module)" if self.mpi is not None else self.reason))
        return "\n".join(lines) + "\n\n" + self.text


def distribute(program: Program, grid: str | tuple[int, ...]) -> Distribution:
    """The program on ``grid`` ranks (``"2x1"``: two along the first dimension), see the module."""
    if isinstance(grid, str):
        try:
            grid = tuple(int(x) for x in grid.lower().split("x"))
        except ValueError:
            raise StencilError(f"--distribute {grid!r} is not a grid such as 2x1", hint="for example 2x1 or 2x2") \
                from None
    if len(grid) not in (2, 3) or any(g < 1 for g in grid):
        raise StencilError(f"a grid of ranks has 2 or 3 positive extents, not {'x'.join(map(str, grid))}",
                           hint="for example 2x1, 2x2 or 2x2x1")
    strategy = f"{len(grid)}d-grid"
    spec = f"distribute-stencil{{strategy={strategy} slices={','.join(map(str, grid))}}},shape-inference"
    distributed = run_passes(program, spec)
    exchanges = tuple(f"send {list(ex.offset)} + {list(ex.size)} to the neighbour at {list(ex.neighbor)}; receive "
                      f"into the halo at {list(ex.offset)}" for op in distributed.walk() if isinstance(op, dmp.SwapOp)
                      for ex in op.swaps)
    if any(g != 1 for g in grid[1:]):
        return Distribution(grid, distributed.text, exchanges, None,
                            "the MPI build splits the domain along i only (a grid such as 2x1 or 4x1)")
    try:
        return Distribution(grid, distributed.text, exchanges, mpi_module(program, grid[0]))
    except PolylabError as err:
        return Distribution(grid, distributed.text, exchanges, None, err.message)


def fields_as_arguments(program: Program) -> Program:
    """The program with each ``stencil.cast`` folded into its argument's type (xDSL's distribution works on
    functions whose arguments are fields with bounds)."""
    module = program.module.clone()
    for func in [op for op in module.walk() if isinstance(op, FuncOp)]:
        for cast in [op for op in func.walk() if isinstance(op, CastOp)]:
            new_arg = Rewriter.replace_value_with_new_type(cast.field, cast.result.type)
            cast.result.replace_all_uses_with(new_arg)
            cast.detach()
            cast.erase()
        func.update_function_type()
    return reparsed(module, program.filename)


def mpi_module(program: Program, ranks: int) -> str:
    """The MLIR text of the program distributed over ``ranks`` ranks along ``i``, with MPICH calls."""
    try:
        return run_passes(fields_as_arguments(program), MPI_SPEC.format(ranks=ranks)).text
    except StencilError as err:
        raise StencilError(f"xDSL's MPI pipeline refused the program: {err.message}",
                           hint="the distribution handles programs whose domain splits evenly along i") from None


def run_mpi(program: Program, ranks: int, fields: dict[str, Any], *, timeout: float = 300.0) -> dict[str, np.ndarray]:
    """The stored fields after the program distributed over ``ranks`` ranks and run with ``mpirun`` (see the
    module)."""
    (lo, *_), (hi, *_) = box_of(program.stores[0].bounds)
    if (hi - lo) % ranks:
        raise StencilError(f"the domain's {hi - lo} points along i do not split evenly over {ranks} ranks",
                           hint=f"choose a number of ranks that divides {hi - lo}")
    local, text = (hi - lo) // ranks, mpi_module(program, ranks)
    arguments = fields_as_arguments(program).arguments()
    if (name := next((n for n, v in arguments if box_of(v.type) is None), None)) is not None:
        raise StencilError(f"the argument {name} is not a field with bounds: the MPI build supports fields only")
    first = {n: box_of(v.type)[0][0] for n, v in arguments}     # the first row of each field

    def on_rank(name: str, r: int) -> np.ndarray:
        g = np.asarray(fields[name], dtype=np.float64)
        x = first[name] + np.arange(len(g))                  # the rank's own rows, at the global rows x + r L
        keep = (x + r * local - first[name] < len(g)) & ((x >= lo) & (x < lo + local) | (x + r * local < lo) |
                                                         (x + r * local >= hi))
        a = np.full_like(g, np.nan)
        a[keep] = g[x[keep] + r * local - first[name]]
        return a

    after = run_mlir(text, program.name, [[on_rank(n, r) for n, _ in arguments] for r in range(ranks)], ranks=ranks,
                     timeout=timeout)
    result = {}
    for k, (name, _) in enumerate(arguments):
        if name in program.output_fields():
            result[name] = np.array(fields[name], dtype=np.float64, copy=True)
            for r in range(ranks):
                start = lo - first[name]
                result[name][start + r * local:start + (r + 1) * local] = after[r][k][start:start + local]
    return result
