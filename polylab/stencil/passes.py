"""xDSL's passes on stencil programs: ``run_passes(program, "shape-inference,stencil-inlining")``.

The pipeline is xDSL's pass-pipeline syntax (``stencil-unroll{unroll-factor=1,2,1}``, ``canonicalize``,
``cse``, ``stencil-inlining``, ``shape-inference``, ``convert-stencil-to-ll-mlir``, ``distribute-stencil
{strategy=2d-grid slices=2,1 restrict_domain=false}``, ...); every pass xDSL registers is available. Each
pass runs on a clone (a :class:`~polylab.stencil.program.Program` never changes), xDSL's verifier runs after
it, and a failure is a located error naming the pass and, where the operation survived the pass, its line.

:func:`polylab.stencil.check.check_passes` checks every pass independently: the reference interpreter's
outputs after it must equal those before it, bit for bit; a failure names the pass
(:class:`~polylab.stencil.errors.PassVerificationError` from ``raise_if_failed``).

One pass is polylab's: ``polylab-unroll{unroll-factor=...}`` is xDSL's ``stencil-unroll`` followed by
putting the returned values in the dialect's result-major order and forgetting the inferred shapes (an
unrolled apply reads more; run ``shape-inference`` after it) (xDSL 0.74's unroll appends them copy-major,
which its own lowering and Open Earth read result-major: a two-result apply unrolled by xDSL alone computes
the wrong values, and the pass check says so, see tests/test_stencil_semantics.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, Callable

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import IntAttr
from xdsl.dialects.stencil import ApplyOp, ReturnOp, StencilBoundsAttr, TempType
from xdsl.rewriter import Rewriter
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes
from xdsl.transforms.stencil_unroll import StencilUnrollPass

from polylab.stencil.errors import StencilError, failing_op, from_xdsl
from polylab.stencil.program import Program, context, parse_module, print_module


class PassRefusal(Exception):
    """A pass that refuses an operation (``op``), with the reason."""

    def __init__(self, message: str, op: Any) -> None:
        super().__init__(message)
        self.op = op


@dataclass(frozen=True)
class ResultMajorUnroll(ModulePass):
    """xDSL's ``stencil-unroll``, then each unrolled return reordered from copy-major to result-major. An apply
    with accesses inside a nested region (``scf.if``) is refused: xDSL 0.74 shifts only the accesses at the top
    of the body, so the copies would read the first copy's points there."""

    name = "polylab-unroll"
    unroll_factor: tuple[int, ...] = (1,)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for apply in op.walk():
            if isinstance(apply, ApplyOp):
                nested = [inner for top in apply.region.block.ops for r in top.regions for inner in r.walk()
                          if inner.name in ("stencil.access", "stencil.dyn_access", "stencil.index")]
                if nested:
                    raise PassRefusal(f"{nested[0].name} inside {nested[0].parent_op().name} is not shifted by "
                                      "xDSL's stencil-unroll: unrolling this apply would compute wrong values",
                                      nested[0])
        before = {id(a) for a in op.walk() if isinstance(a, ApplyOp)}
        StencilUnrollPass(self.unroll_factor).apply(ctx, op)
        for apply in op.walk():
            if isinstance(apply, ApplyOp) and id(apply) not in before:
                ret = apply.region.block.last_op
                assert isinstance(ret, ReturnOp)
                if ret.unroll is None:
                    continue
                n, u = len(apply.results), prod(ret.unroll)
                args = list(ret.arg)
                ret.operands = [args[c * n + r] for r in range(n) for c in range(u)]
        forget_shapes(op)


def forget_shapes(module: builtin.ModuleOp) -> None:
    """Every inferred temp bound back to ``?`` (an unrolled apply reads more than before: the shapes inferred
    for it no longer hold; ``shape-inference`` computes them again)."""
    for op in list(module.walk()):
        values = list(op.results) + [a for r in op.regions for b in r.blocks for a in b.args]
        for v in values:
            if isinstance(v.type, TempType) and isinstance(v.type.bounds, StencilBoundsAttr):
                Rewriter.replace_value_with_new_type(v, TempType(IntAttr(v.type.get_num_dims()), v.type.element_type))


def available() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass: xDSL's, and polylab's ``polylab-unroll``."""
    return {**get_all_passes(), ResultMajorUnroll.name: lambda: ResultMajorUnroll}


def pipeline(spec: str) -> tuple[ModulePass, ...]:
    """The passes of a pipeline spec (an unknown pass or a malformed spec is a located error)."""
    try:
        return PassPipeline.parse_spec(available(), spec).passes
    except Exception as exc:  # xDSL's spec parser raises ValueError, ArgSpecParseError and others
        text = str(exc).strip()
        known = sorted(n for n in available() if "stencil" in n or n in ("canonicalize", "cse", "shape-inference"))
        raise StencilError(f"the pass pipeline {spec!r} cannot be read: {text.splitlines()[-1] if text else exc}",
                           hint="passes are separated by commas, options in braces: "
                                "shape-inference,stencil-unroll{unroll-factor=1,2}; stencil passes: "
                                + ", ".join(known)) from None


def pass_text(p: ModulePass) -> str:
    """The pass as written in a pipeline (``stencil-unroll{unroll-factor=1,2}``)."""
    try:
        return p.pipeline_pass_spec().__str__()
    except Exception:  # a pass whose options xDSL cannot print back: its name
        return p.name


def apply_pass(program: Program, p: ModulePass, ctx: Context | None = None) -> Program:
    """``program`` after the pass ``p`` (run on a clone, then verified by xDSL)."""
    ctx = ctx or context()
    module = program.module.clone()
    origin = {id(new): program.starts.get(id(old)) for old, new in zip(program.module.walk(), module.walk())}
    try:
        p.apply(ctx, module)
        module.verify()
    except Exception as exc:  # a pass or xDSL's verifier failing: a located error naming the pass
        op = getattr(exc, "op", None) or failing_op(module)
        err = from_xdsl(exc, "", what=f"the program after the pass {pass_text(p)}")
        if isinstance(exc, PassRefusal):
            err = StencilError(f"the pass {pass_text(p)} refuses this program: {exc}")
        loc = program.location_offset(origin.get(id(op))) if op is not None else None
        where = f" (line {loc.line}, {op.name})" if loc else (f" ({op.name})" if op is not None else "")
        hint = err.hint or f"the pass {p.name} cannot transform this program"
        if "too big" in err.message and any(o.name == "stencil.return" and o.unroll is not None for o in module.walk()):
            hint = ("xDSL's shape inference gives an unrolled apply's accesses the whole box shifted by each copy's "
                    "offset (u - 1 points more than the copies read): give the field u - 1 more points of halo")
        raise StencilError(err.message + where, location=loc, hint=hint) from None
    return reparsed(module, program.filename)


def reparsed(module: builtin.ModuleOp, filename: str | None = None) -> Program:
    """A program of ``module`` whose source is xDSL's printed text (so its operations have lines)."""
    text = print_module(module)
    fresh, starts = parse_module(text)
    return Program(fresh, text, filename, starts)


def run_passes(program: Program, spec: str) -> Program:
    """``program`` after the pipeline ``spec`` (see the module; :func:`polylab.stencil.check.check_passes` runs
    the same pipeline with every pass checked by the reference interpreter)."""
    ctx = context()
    for p in pipeline(spec):
        program = apply_pass(program, p, ctx)
    return program
