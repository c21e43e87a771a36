"""Code generation: isl AST -> C, C+OpenMP, CUDA and MLIR affine text, with a harness around the kernel.

    >>> code = generate(scop, schedule, target="openmp")   # doctest: +SKIP
    >>> print(code.kernel)                                  # doctest: +SKIP

``original_program(scop)`` is the untransformed program in the same harness, the reference for
verification.
"""

from polylab.codegen.generate import TARGETS, GeneratedCode, cuda_emulation, generate
from polylab.codegen.harness import original_program

__all__ = ["TARGETS", "GeneratedCode", "cuda_emulation", "generate", "original_program"]
