"""The stencil dialect (the Open Earth compiler's MLIR dialect) on polylab's engine.

    >>> from polylab import stencil
    >>> p = stencil.parse(text)                              # doctest: +SKIP
    >>> q = stencil.run_passes(p, "inline,cse,shape")        # doctest: +SKIP
    >>> low = stencil.lower(q)                               # doctest: +SKIP  (low.scop: a model Scop)
    >>> stencil.check(low, target="openmp")                  # doctest: +SKIP  (bit for bit vs interpret)

Programs are immutable values (:class:`Program`); passes are functions from program to program
(:func:`infer_shapes`, :func:`inline`, :func:`unroll`, :func:`cse`, :func:`dce`, :func:`cleanup`); the
lowering gives a :class:`polylab.model.Scop` that every other layer accepts; :func:`interpret` is the
numpy reference. See docs/stencil.md.
"""

from polylab.stencil import display
from polylab.stencil.builder import Arg, Builder, Val, index, select, sqrt
from polylab.stencil.check import StencilCheck, check, reference, run_lowered
from polylab.stencil.cleanup import cleanup, cse, dce
from polylab.stencil.errors import StencilError, StencilSyntaxError, UnsupportedStencilError
from polylab.stencil.examples import example, examples
from polylab.stencil.inline import inline
from polylab.stencil.interpret import interpret
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.mlir import generate_code, lowered_mlir, stencil_mlir
from polylab.stencil.parser import parse
from polylab.stencil.passes import PASSES, parse_passes, run_passes
from polylab.stencil.printer import print_program
from polylab.stencil.program import Program
from polylab.stencil.resize import with_domain, without_shapes
from polylab.stencil.shapes import infer_shapes
from polylab.stencil.unroll import unroll

__all__ = ["PASSES", "Arg", "Builder", "Lowering", "Program", "StencilCheck", "StencilError", "StencilSyntaxError",
           "UnsupportedStencilError", "Val", "check", "cleanup", "cse", "dce", "display", "example", "examples", "generate_code", "index",
           "infer_shapes",
           "inline", "interpret", "lower", "lowered_mlir", "parse", "parse_passes", "print_program", "reference",
           "run_lowered", "run_passes", "select", "sqrt", "stencil_mlir", "unroll", "with_domain", "without_shapes"]
