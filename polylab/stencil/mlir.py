"""MLIR text of a stencil program: the program itself (the stencil dialect) and its lowering (``affine``
loops over ``memref`` values, with ``arith``/``math`` operations: the code generator's MLIR target applied
to the lowered model), which ``mlir-opt`` can verify."""

from __future__ import annotations

from typing import Any

from polylab.codegen import generate
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.printer import print_program
from polylab.stencil.program import Program


def stencil_mlir(program: Program) -> str:
    """The program in the stencil dialect's text (the Open Earth form)."""
    return print_program(program)


def lowered_mlir(program: Program | Lowering, schedule: Any = None) -> str:
    """The lowered program as an MLIR module of ``func``, ``affine``, ``memref``, ``arith`` and ``math``
    operations (under ``schedule``, default the program's order)."""
    lowering = program if isinstance(program, Lowering) else lower(program)
    return generate(lowering.scop, schedule, "mlir").kernel
