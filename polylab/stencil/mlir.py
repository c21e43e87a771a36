"""A stencil program's lower forms: xDSL's loops (``scf.parallel`` over ``memref``), MLIR's GPU dialect in its
two forms, the MPI-distributed program, and polylab's own code from the lowered model (C, OpenMP, CUDA, MLIR
affine loops).

* :func:`lowered_loops`: xDSL's ``stencil-storage-materialization,shape-inference,convert-stencil-to-ll-mlir``;
  :func:`run_loops` compiles that module with ``mlir-opt``/``mlir-translate``/``clang`` and a C driver and runs
  it (:func:`polylab.stencil.check.check_loops` judges its fields against the reference interpreter's).
* :func:`gpu_forms`: xDSL's lowered loops mapped to GPU processors by xDSL's ``gpu-map-parallel-loops``
  (every loop to blocks: shown as ``mapped``); for the launch, ``mlir-opt`` tiles the loops into blocks of
  threads (``--scf-parallel-loop-tiling`` with guarded, constant tile bounds), maps them
  (``--gpu-map-parallel-loops``) and converts them (``--convert-parallel-loops-to-gpu``: the inline form,
  ``gpu.launch`` with the body inside), then ``--gpu-kernel-outlining`` (the function form: a ``gpu.module``
  with a ``gpu.func`` and a ``gpu.launch_func`` call); ``mlir-opt`` parses and verifies both. polylab's own
  CUDA C from the model is the GPU code that runs and is timed (:func:`generate_code`).
* :func:`distribute`: xDSL's ``distribute-stencil`` (a 2d or 3d grid of ranks) and ``shape-inference``: the
  halo exchanges (``dmp.swap``) each rank performs, listed; then xDSL's MPI lowering
  (:func:`polylab.stencil.mpi.mpi_module`; :func:`polylab.stencil.check.check_mpi` builds and runs it).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from polylab import render
from polylab.codegen import GeneratedCode, generate
from polylab.errors import PolylabError
from polylab.experiment.schedules import legal_schedule, variant_scop
from polylab.stencil.errors import StencilError
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.program import Program

#: xDSL's lowering of the stencil dialect to scf.parallel loops over memrefs
LOWER_SPEC = "stencil-storage-materialization,shape-inference,convert-stencil-to-ll-mlir"


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
    from polylab.stencil.passes import run_passes

    return run_passes(program, LOWER_SPEC)


# -- running the lowered loops ----------------------------------------------------------------------------------
def _driver(program: Program, loops: Program, fields: dict[str, Any]) -> str:
    """A C main that reads each field, calls the lowered function with memref descriptors, writes the fields."""
    lines = ["#include <stdio.h>", "#include <stdlib.h>", ""]
    params, args, setup, dump = [], [], [], []
    for k, (name, value) in enumerate(program.arguments()):
        data = fields[name]
        if np.ndim(data) == 0:
            params.append("double")
            args.append(repr(float(data)))
            continue
        shape = np.shape(data)
        strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
        n = int(np.prod(shape))
        params.append(", ".join(["double*", "double*", "long"] + ["long"] * (2 * len(shape))))
        args.append(", ".join([f"a{k}", f"a{k}", "0"] + [str(s) for s in shape] + [str(s) for s in strides]))
        setup.append(f"  double *a{k} = malloc(sizeof(double) * {n}); FILE *f{k} = fopen(\"{name}.bin\", \"rb\");\n"
                     f"  if (!f{k} || fread(a{k}, sizeof(double), {n}, f{k}) != {n}) return 2; fclose(f{k});")
        dump.append(f"  f{k} = fopen(\"{name}.out\", \"wb\"); fwrite(a{k}, sizeof(double), {n}, f{k}); fclose(f{k});")
    lines.append(f"void {loops.name}({', '.join(params)});")
    lines.append("int main(void) {")
    lines += setup
    lines.append(f"  {loops.name}({', '.join(args)});")
    lines += dump
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def run_loops(program: Program, fields: dict[str, Any], *, loops: Program | None = None) -> dict[str, np.ndarray]:
    """The stored fields after xDSL's lowered loops of ``program``, compiled through ``mlir-opt`` and run."""
    from polylab.toolchain.mlirbuild import build_mlir

    loops = loops or lowered_loops(program)
    with tempfile.TemporaryDirectory(prefix="polylab-mlir-") as tmp:
        out = Path(tmp)
        for name, data in fields.items():
            if np.ndim(data):
                np.ascontiguousarray(data, dtype=np.float64).tofile(out / f"{name}.bin")
        exe = build_mlir(loops.text, {"driver.c": _driver(program, loops, fields)}, out)
        import subprocess

        done = subprocess.run([str(exe)], cwd=tmp, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise StencilError(f"the lowered program failed with status {done.returncode}: {done.stderr[:500]}")
        return {name: np.fromfile(out / f"{name}.out", dtype=np.float64).reshape(np.shape(fields[name]))
                for name in program.output_fields()}


# -- GPU ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class GpuForms(render.TextDisplay):
    """The lowered loops in MLIR's GPU dialect: ``mapped`` (xDSL: scf.parallel with GPU processor mapping),
    ``launch`` (inline form: gpu.launch) and ``outlined`` (function form: gpu.func + gpu.launch_func), the last
    two from ``mlir-opt`` (None with ``reason`` when it is not installed)."""

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
    from polylab.stencil.passes import run_passes
    from polylab.toolchain.mlirbuild import mlir_opt_run, mlir_tools

    sizes = ",".join(map(str, tile[-program.rank:]))
    loops = lowered_loops(program)
    mapped = run_passes(loops, "gpu-map-parallel-loops").text
    tools, reason = mlir_tools()
    if tools is None:
        return GpuForms(mapped, None, None, reason)
    try:
        launch = mlir_opt_run(loops.text, [f"--scf-parallel-loop-tiling=parallel-loop-tile-sizes={sizes} "
                                           "no-min-max-bounds=true", "--gpu-map-parallel-loops",
                                           "--convert-parallel-loops-to-gpu", "--canonicalize"])
        outlined = mlir_opt_run(launch, ["--gpu-kernel-outlining"])
    except PolylabError as err:
        raise StencilError(f"mlir-opt refused the GPU forms: {err.message}") from None
    return GpuForms(mapped, launch, outlined)


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
    from xdsl.dialects.experimental import dmp

    from polylab.stencil.passes import run_passes

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
    exchanges = []
    for op in distributed.walk():
        if isinstance(op, dmp.SwapOp):
            for ex in op.swaps:
                exchanges.append(f"send {list(ex.offset)} + {list(ex.size)} to the neighbour at "
                                 f"{list(ex.neighbor)}; receive into the halo at {list(ex.offset)}")
    from polylab.stencil.mpi import mpi_module

    if any(g != 1 for g in grid[1:]):
        return Distribution(grid, distributed.text, tuple(exchanges), None,
                            "the MPI build splits the domain along i only (a grid such as 2x1 or 4x1)")
    try:
        mpi, reason = mpi_module(program, grid[0]), ""
    except PolylabError as err:
        mpi, reason = None, err.message
    return Distribution(grid, distributed.text, tuple(exchanges), mpi, reason)
