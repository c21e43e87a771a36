"""xDSL's passes on stencil programs: ``run_passes(program, "shape-inference,stencil-inlining")``.

The pipeline is xDSL's pass-pipeline syntax (``stencil-unroll{unroll-factor=1,2,1},cse``); every pass xDSL
registers is available. Each pass runs on a clone, xDSL's verifier runs after it, and a failure is a located
error naming the pass and, where the operation survived the pass, its line
(:func:`polylab.stencil.check.check_passes` checks each pass with the reference interpreter).

One pass is polylab's: ``polylab-unroll{unroll-factor=...}`` is xDSL's ``stencil-unroll`` with the returned
values put in the dialect's result-major order (xDSL 0.74's appends them copy-major, which its own lowering
and Open Earth read result-major) and the inferred shapes forgotten (run ``shape-inference`` after it).
:func:`with_domain` is polylab's too: the program moved to another domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, Callable

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import IntAttr
from xdsl.dialects.stencil import ApplyOp, CastOp, FieldType, ReturnOp, StencilBoundsAttr, StoreOp, TempType
from xdsl.rewriter import Rewriter
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes
from xdsl.transforms.stencil_unroll import StencilUnrollPass

from polylab.stencil.errors import StencilError, failing_op, from_xdsl
from polylab.stencil.program import Program, box_of, context, parse_module, print_module


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
    module = program.module.clone()
    clone = Program(module, program.source, program.filename, {id(new): program.starts[id(old)] for old, new in
                                                               zip(program.module.walk(), module.walk())
                                                               if id(old) in program.starts})
    try:
        p.apply(ctx or context(), module)
        module.verify()
    except Exception as exc:  # a pass or xDSL's verifier failing: a located error naming the pass
        err = from_xdsl(exc, "", what=f"the program after the pass {pass_text(p)}")
        if isinstance(exc, PassRefusal):
            err = StencilError(f"the pass {pass_text(p)} refuses this program: {exc}")
        hint = err.hint or f"the pass {p.name} cannot transform this program"
        if "too big" in err.message and any(o.name == "stencil.return" and o.unroll is not None for o in module.walk()):
            hint = ("xDSL's shape inference gives an unrolled apply's accesses the whole box shifted by each copy's "
                    "offset (u - 1 points more than the copies read): give the field u - 1 more points of halo")
        op = getattr(exc, "op", None) or failing_op(module)
        loc = clone.location(op)
        where = f" (line {loc.line}, {op.name})" if loc else (f" ({op.name})" if op is not None else "")
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


def with_domain(program: Program, extents: tuple[int, ...]) -> Program:
    """The program on a domain of ``extents``, the same operators: the largest store range gets the new extents
    ``n``; with ``delta = n -`` its old extents, every store range keeps its lower corner and moves its upper
    corner by ``delta`` (at least one point stays), and every field's upper bounds move by ``delta`` (its halo
    below and above the stored range stays); inferred shapes are forgotten (run ``shape-inference`` again)."""
    rank = program.rank
    if len(extents) != rank or any(e < 1 for e in extents):
        raise StencilError(f"the domain {','.join(map(str, extents))} needs {rank} positive extents",
                           hint=f"for example --domain {','.join(['64'] * rank)}")
    stored = [[hi - lo for lo, hi in zip(*box_of(s.bounds))] for s in program.stores]
    delta = [e - max(s[d] for s in stored) for d, e in enumerate(extents)]
    dims = program.field_dims()
    module = program.module.clone()
    forget_shapes(module)
    for before, op in zip(program.module.walk(), module.walk()):
        if isinstance(op, StoreOp):
            lb, ub = box_of(op.bounds)
            op.bounds = StencilBoundsAttr.from_bounds(zip(lb, [max(lo + 1, u + d) for lo, u, d in zip(lb, ub, delta)]))
        elif isinstance(op, CastOp) and (box := box_of(op.result.type)) is not None:
            mapped = dims.get(program.argument(before.result), range(rank))
            bounds = StencilBoundsAttr.from_bounds(zip(box[0], [u + delta[d] for u, d in zip(box[1], mapped)]))
            Rewriter.replace_value_with_new_type(op.result, FieldType(bounds, op.result.type.element_type))
    return reparsed(module, program.filename)
