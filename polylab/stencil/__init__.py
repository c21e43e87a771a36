"""The stencil chapter on xDSL: the Open Earth stencil dialect, its passes, and polylab's engine under it.

    >>> from polylab import stencil
    >>> p = stencil.parse(text)                                            # doctest: +SKIP
    >>> q = stencil.run_passes(p, "shape-inference,stencil-inlining")      # doctest: +SKIP
    >>> stencil.check_passes(p, "stencil-inlining,shape-inference")        # doctest: +SKIP (per pass)
    >>> low = stencil.lower(q)                                             # doctest: +SKIP (low.scop: a Scop)
    >>> stencil.check(low, target="openmp")                                # doctest: +SKIP (bit for bit)

The dialect, its parser, printer, verifier and passes are xDSL's; polylab adds the 2020 reader, the reference
interpreter (the independent check of every pass), the lowering to a :class:`polylab.model.Scop`, the displays
and the MLIR views (lowered loops, the GPU dialect's two forms, MPI). See docs/stencil.md.
"""

from polylab.stencil import display
from polylab.stencil.check import StencilCheck, check, check_loops, check_mpi, check_passes
from polylab.stencil.errors import PassVerificationError, StencilError, StencilSyntaxError, UnsupportedStencilError
from polylab.stencil.interpret import interpret
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.mlir import generate_code, gpu_forms, lowered_loops, lowered_mlir
from polylab.stencil.oec import upgrade
from polylab.stencil.passes import pipeline, run_passes, with_domain
from polylab.stencil.program import Program, example, examples, parse

__all__ = ["Lowering", "PassVerificationError", "Program", "StencilCheck", "StencilError",
           "StencilSyntaxError", "UnsupportedStencilError", "check", "check_loops", "check_mpi", "check_passes",
           "display", "example", "examples", "generate_code", "gpu_forms", "interpret", "lower", "lowered_loops",
           "lowered_mlir", "parse", "pipeline", "run_passes", "upgrade", "with_domain"]
