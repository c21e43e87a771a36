"""Programs without their inferred shapes, and programs on another domain.

``without_shapes(p)`` forgets every box and temp extent (what passes that change the data flow do before
shape inference runs again). ``with_domain(p, (32, 32, 32))`` runs the same operators on another domain:
the largest store range gets the new extents ``n``; with ``delta = n - `` its old extents, every store
range keeps its lower corner and moves its upper corner by ``delta`` (at least one point stays), and every
field's upper bounds move by ``delta`` (its halo below and above the stored range stays), so a program
written for 64^3 runs at 32^3.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from polylab.stencil.errors import StencilError
from polylab.stencil.ir import rebuild
from polylab.stencil.ops import Access, Apply, Cast, Combine, Load, Store
from polylab.stencil.program import Program
from polylab.stencil.types import Box, FieldType, TempType


def _dynamic(t: Any) -> Any:
    if isinstance(t, TempType):
        return TempType(tuple(0 if s == 0 else None for s in t.shape), t.element)
    return t


def _body(op: Any) -> Any:
    if isinstance(op, Access):
        return replace(op, temp_type=_dynamic(op.temp_type))
    return rebuild(op, region_fn=lambda r: tuple(_body(o) for o in r))


def without_shapes(program: Program) -> Program:
    """The program with no box on its loads, applies and combines and ``?`` extents in its temp types."""
    ops = []
    for op in program.ops:
        match op:
            case Load():
                op = replace(op, box=None, to_type=_dynamic(op.to_type))
            case Apply():
                op = replace(op, box=None, arg_types=tuple(map(_dynamic, op.arg_types)),
                             result_types=tuple(map(_dynamic, op.result_types)),
                             body=tuple(_body(o) for o in op.body))
            case Combine():
                op = replace(op, box=None, lower_types=tuple(map(_dynamic, op.lower_types)),
                             upper_types=tuple(map(_dynamic, op.upper_types)),
                             result_types=tuple(map(_dynamic, op.result_types)))
            case Store():
                op = replace(op, temp_type=_dynamic(op.temp_type))
        ops.append(op)
    return replace(program, ops=tuple(ops))


def with_domain(program: Program, extents: tuple[int, ...]) -> Program:
    """The program on a domain of ``extents`` (see the module); shapes are reset."""
    rank = program.rank
    if len(extents) != rank or any(e < 1 for e in extents):
        raise StencilError(f"the domain {','.join(map(str, extents))} needs {rank} positive extents",
                           hint=f"for example --domain {','.join(['64'] * rank)}")
    old = [max(s.box.extent[d] for s in program.stores) for d in range(rank)]
    delta = tuple(e - o for e, o in zip(extents, old))
    ops = []
    for op in without_shapes(program).ops:
        if isinstance(op, Store):
            op = replace(op, box=Box(op.box.lb, tuple(max(lo + 1, u + d) for lo, u, d in
                                                      zip(op.box.lb, op.box.ub, delta))))
        elif isinstance(op, Cast):
            ub = tuple(u + d for u, d in zip(op.box.ub, delta))
            op = replace(op, box=Box(op.box.lb, ub), to_type=FieldType(
                tuple(0 if s == 0 else (u - lo) for s, lo, u in zip(op.to_type.shape, op.box.lb, ub)),
                op.to_type.element))
        ops.append(op)
    casts = {op.result: op.to_type for op in ops if isinstance(op, Cast)}
    ops = [replace(op, from_type=casts.get(op.field, op.from_type)) if isinstance(op, Load)
           else replace(op, field_type=casts.get(op.field, op.field_type)) if isinstance(op, Store) else op
           for op in ops]
    return replace(program, ops=tuple(ops))
