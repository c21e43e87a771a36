"""The stencil programs shipped with polylab (``polylab/examples/stencil``), by name, and a program moved to
another domain.

``with_domain(p, (32, 32, 32))`` runs the same operators on another domain: the largest store range gets
the new extents ``n``; with ``delta = n -`` its old extents, every store range keeps its lower corner and
moves its upper corner by ``delta`` (at least one point stays), and every field's upper bounds move by
``delta`` (its halo below and above the stored range stays); inferred shapes are forgotten (run
``shape-inference`` again). A program written for 64^3 runs at 16^3.
"""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects.stencil import CastOp, FieldType, StencilBoundsAttr, StoreOp
from xdsl.rewriter import Rewriter

from polylab.corpus import example_path
from polylab.stencil.errors import StencilError
from polylab.stencil.passes import forget_shapes, reparsed
from polylab.stencil.program import Program, box_of, parse


def examples() -> list[str]:
    """The names of the shipped stencil programs (``laplace3d.mlir``, ``diffusion.mlir``, ...)."""
    root = Path(example_path("stencil/laplace3d.mlir")).parent
    return sorted(p.name for p in root.glob("*.mlir"))


def example(name: str) -> Program:
    """A shipped stencil program, parsed (``example("diffusion")`` or ``example("diffusion.mlir")``)."""
    file = name if name.endswith(".mlir") else f"{name}.mlir"
    path = example_path(f"stencil/{file}")
    return parse(path.read_text(), filename=str(path))


def with_domain(program: Program, extents: tuple[int, ...]) -> Program:
    """The program on a domain of ``extents`` (see the module)."""
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
