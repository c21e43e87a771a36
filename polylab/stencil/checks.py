"""The checks a stencil program must pass before any pass or lowering (parsed or built in Python).

:func:`check_program` refuses, naming the operation and its line:

* a program with no ``stencil.store`` (nothing would be computed);
* an apply whose body does not end with ``stencil.return``, or returns a number of values other than
  its results times its unroll factor, or reads with ``stencil.access`` something other than one of its
  temp block arguments, or at an offset of the wrong length;
* a store of something other than an apply's or a combine's result, into something other than a field
  with bounds, on a box that does not fit the field's bounds, or a temp stored twice;
* a field that is both loaded and stored (its values before and after would both be needed);
* a value used before its definition (a cycle);
* scalar function arguments (not supported by the lowering).
"""

from __future__ import annotations

from dataclasses import fields
from math import prod
from typing import Any

from polylab.stencil.errors import StencilError, UnsupportedStencilError, located
from polylab.stencil.ir import loc_of, op_name, results_of, uses_of, walk_ops
from polylab.stencil.ops import Access, Apply, Cast, Combine, Index, Return, Store
from polylab.stencil.types import FieldType, TempType


def check_program(program: Any) -> None:
    """Raise a :class:`~polylab.stencil.errors.StencilError` for the first problem found (see the module)."""
    rank = program.rank
    if not program.stores:
        raise StencilError(f"the stencil program {program.name} has no stencil.store: it computes nothing",
                           hint="store a result: stencil.store %t to %field([lb] : [ub])")
    defined = {n for n, _ in program.arguments}
    for n, t in program.arguments:
        if not isinstance(t, FieldType):
            raise UnsupportedStencilError(f"the argument {n} is a {t.text()}: polylab supports field arguments only")
        if len(t.shape) != rank:
            raise StencilError(f"the field argument {n} has {len(t.shape)} dimensions, the program {rank}")
    for op in walk_ops(program.ops):
        _check_types(op, rank)
    for op in program.ops:
        for v in uses_of(op):
            if v not in defined:
                raise located(f"{op_name(op)} uses {v} before it is defined (a cycle?)", loc_of(op))
        defined.update(results_of(op))
        if isinstance(op, Apply):
            _check_apply(op, rank)
        elif isinstance(op, Combine):
            if not 0 <= op.dim < rank:
                raise located(f"stencil.combine splits dimension {op.dim}, the program has {rank}", loc_of(op))
        elif isinstance(op, Store):
            _check_store(program, op, rank)
        elif isinstance(op, Cast):
            _check_cast(program, op, rank)
    stored = [program.field_argument(s.field) for s in program.stores]
    loaded = set(program.input_fields())
    for f in stored:
        if f in loaded:
            raise UnsupportedStencilError(f"the field {f} is both loaded and stored; polylab needs inputs and "
                                          f"outputs to be different fields")
    temps = [s.temp for s in program.stores]
    for t in temps:
        if temps.count(t) > 1:
            raise StencilError(f"the temp {t} is stored twice")


def _check_apply(op: Apply, rank: int) -> None:
    if not op.body or not isinstance(op.body[-1], Return):
        raise located("the body of stencil.apply does not end with stencil.return", loc_of(op))
    ret = op.body[-1]
    factor = prod(ret.unroll) if ret.unroll is not None else 1
    if ret.unroll is not None and (len(ret.unroll) != rank or min(ret.unroll) < 1):
        raise located(f"stencil.return unroll {list(ret.unroll)} needs {rank} factors of at least 1", loc_of(ret))
    if len(ret.operands) != len(op.results) * factor:
        raise located(f"stencil.return returns {len(ret.operands)} values; the apply has {len(op.results)} "
                      f"result(s){f' unrolled {factor} times' if factor > 1 else ''}", loc_of(ret))
    temps = {a for a, t in zip(op.args, op.arg_types) if isinstance(t, TempType)}
    for inner in walk_ops(op.body):
        if isinstance(inner, Access):
            if inner.temp not in temps:
                raise located(f"stencil.access reads {inner.temp}, which is not a temp argument of the apply",
                              loc_of(inner))
            if len(inner.offset) != rank:
                raise located(f"stencil.access {inner.temp} {list(inner.offset)}: the offset needs {rank} "
                              f"entries", loc_of(inner))
        elif isinstance(inner, Index) and (not 0 <= inner.dim < rank or len(inner.offset) != rank):
            raise located(f"stencil.index {inner.dim} {list(inner.offset)} does not fit the program's {rank} "
                          f"dimensions", loc_of(inner))
        elif isinstance(inner, Return) and inner is not ret:
            raise located("stencil.return may only end the apply's body", loc_of(inner))


def _check_types(op: Any, rank: int) -> None:
    """Every field and temp type of ``op`` has the program's rank."""
    for f in fields(op):
        value = getattr(op, f.name)
        for t in value if isinstance(value, tuple) else (value,):
            if isinstance(t, (FieldType, TempType)) and len(t.shape) != rank:
                raise located(f"{op_name(op)}: the type {t.text()} has {len(t.shape)} dimensions, the program "
                              f"{rank}", loc_of(op))


def _check_cast(program: Any, op: Cast, rank: int) -> None:
    if op.box.rank != rank:
        raise located(f"stencil.cast gives {op.field} {op.box.rank}-dimensional bounds, the program has "
                      f"{rank} dimensions", loc_of(op))
    if any(e < 1 for e, p in zip(op.box.extent, op.to_type.present) if p):
        raise located(f"stencil.cast gives {op.field} the empty bounds {op.box}", loc_of(op))
    arg = program.argument_type(op.field)
    if isinstance(arg, FieldType) and arg.present != op.to_type.present:
        raise located(f"stencil.cast changes which dimensions {op.field} has ({arg.text()} -> {op.to_type.text()})",
                      loc_of(op))
    for s, e, p in zip(op.to_type.shape, op.box.extent, op.to_type.present):
        if p and s is not None and s != e:
            raise located(f"stencil.cast: the type {op.to_type.text()} does not match the bounds {op.box} "
                          f"(extents {list(op.box.extent)})", loc_of(op))


def _check_store(program: Any, op: Store, rank: int) -> None:
    producer = program.producer(op.temp)
    if not isinstance(producer, (Apply, Combine)):
        raise located(f"stencil.store writes {op.temp}, which is not the result of a stencil.apply or "
                      f"stencil.combine", loc_of(op))
    if op.box.rank != rank:
        raise located(f"the store range {op.box} has {op.box.rank} dimensions, the program {rank}", loc_of(op))
    if op.box.size == 0:
        raise located(f"the store range {op.box} is empty", loc_of(op), hint="give an upper bound above the lower one")
    bounds = program.bounds(op.field)
    present = program.field_type(op.field).present
    fits = all(not p or (b0 <= s0 and s1 <= b1)
               for p, s0, s1, b0, b1 in zip(present, op.box.lb, op.box.ub, bounds.lb, bounds.ub))
    if not fits:
        raise located(f"the store range {op.box} does not fit the field {program.field_argument(op.field)}, "
                      f"whose bounds are {bounds}", loc_of(op),
                      hint="store a smaller range, or give the field larger bounds in its stencil.cast")
