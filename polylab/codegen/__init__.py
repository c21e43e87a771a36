"""Code generation: isl AST -> C, C+OpenMP, CUDA and MLIR affine text, with a harness around the kernel.

    >>> code = generate(scop, schedule, target="openmp")   # doctest: +SKIP
    >>> print(code.kernel)                                  # doctest: +SKIP
    >>> binary = code.target.compile(code, flags)           # doctest: +SKIP

Targets are values (:mod:`polylab.codegen.targets`): :data:`C`, :data:`OPENMP`, :data:`CUDA`, :data:`MLIR`,
also named by strings (``TARGETS``). ``original_program(scop)`` is the untransformed program in the same
harness, the reference for verification.
"""

from polylab.codegen.harness import original_program
from polylab.codegen.targets import (C, CUDA, MLIR, OPENMP, PROGRAM_TARGETS, TARGETS, GeneratedCode, Target, as_target,
                                     cuda_emulation, generate)

__all__ = ["C", "CUDA", "MLIR", "OPENMP", "PROGRAM_TARGETS", "TARGETS", "GeneratedCode", "Target", "as_target", "cuda_emulation",
           "generate", "original_program"]
