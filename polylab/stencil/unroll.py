"""Unrolling: each apply's body computes ``factor`` neighbouring points along one dimension.

``unroll(p, factor, dim)`` copies every (not yet unrolled) apply's body ``factor`` times; copy ``c``
computes the point ``x + c e_dim`` (its accesses and ``stencil.index`` offsets shifted by ``c`` in
``dim``), and ``stencil.return unroll [1, .., factor, .., 1]`` returns the results of copy 0, then of copy
1, and so on. The body then runs at the points ``lb + factor t`` of the apply's box; the points and their
values are those of the original, provided the box's extent in ``dim`` is a multiple of ``factor``, which
the lowering checks (and refuses otherwise, naming the apply).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from polylab.stencil.errors import StencilError
from polylab.stencil.ops import Apply, Return
from polylab.stencil.program import Program
from polylab.stencil.rename import Fresh, all_names, clone, shifted_by
from polylab.stencil.resize import without_shapes


def unroll_apply(apply: Apply, factor: int, dim: int, rank: int, fresh: Fresh) -> Apply:
    """One apply unrolled (see the module)."""
    body = tuple(op for op in apply.body if not isinstance(op, Return))
    ops: list[Any] = []
    returned: list[str] = []
    for c in range(factor):
        offset = tuple(c if d == dim else 0 for d in range(rank))
        mapping: dict[str, str] = {a: a for a in apply.args}
        ops.extend(clone(body, mapping, fresh, shifted_by(offset)))
        returned.extend(mapping.get(v, v) for v in apply.ret.operands)
    ret = Return(tuple(returned), apply.ret.types * factor,
                 tuple(factor if d == dim else 1 for d in range(rank)), loc=apply.ret.loc)
    return replace(apply, body=tuple(ops) + (ret,))


def unroll(program: Program, factor: int, dim: int) -> Program:
    """Every apply not unrolled yet unrolled by ``factor`` in dimension ``dim`` (see the module); shapes
    are reset."""
    rank = program.rank
    if not 0 <= dim < rank:
        raise StencilError(f"cannot unroll in dimension {dim}: the program has {rank} (0 to {rank - 1})")
    if factor < 1:
        raise StencilError(f"the unroll factor must be at least 1, not {factor}")
    if factor == 1:
        return program
    fresh = Fresh(all_names(program), "u")
    ops = tuple(unroll_apply(op, factor, dim, rank, fresh) if isinstance(op, Apply) and op.unroll is None else op
                for op in without_shapes(program).ops)
    return replace(program, ops=ops)
