"""Code of a stencil program: MLIR text of the program itself (the stencil dialect), and the code generator's
targets applied to its lowering: C, OpenMP, CUDA, or MLIR (``affine`` loops over ``memref`` values with
``arith``/``math`` operations, which ``mlir-opt`` verifies), under any legal schedule of the lowered model."""

from __future__ import annotations

from typing import Any

from polylab.codegen import GeneratedCode, generate
from polylab.experiment.schedules import legal_schedule, variant_scop
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.printer import print_program
from polylab.stencil.program import Program


def stencil_mlir(program: Program) -> str:
    """The program in the stencil dialect's text (the Open Earth form)."""
    return print_program(program)


def generate_code(program: Program | Lowering, schedule: Any = None, target: str = "c") -> GeneratedCode:
    """The ``target`` code of the lowered program under ``schedule`` (None: its own loops; a
    :class:`~polylab.schedule.Schedule`, an isl schedule or a spec such as ``"tile(8,8); parallel"``; an
    illegal one is refused with the violated dependence). After a storage step (``contract(t)``) the code
    is that of the transformed model."""
    lowering = program if isinstance(program, Lowering) else lower(program)
    legal = legal_schedule(lowering.scop, schedule)
    return generate(variant_scop(lowering.scop, legal), legal, target)


def lowered_mlir(program: Program | Lowering, schedule: Any = None) -> str:
    """The lowered program as an MLIR module of ``func``, ``affine``, ``memref``, ``arith`` and ``math``
    operations (under ``schedule``, default the program's order)."""
    return generate_code(program, schedule, "mlir").kernel
