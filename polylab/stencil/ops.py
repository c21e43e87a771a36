"""The stencil operations.

Outside an apply (the program's body):

* ``%f = stencil.cast %arg([lb] : [ub]) : (...) -> !stencil.field<72x72x72xf64>``: gives a field argument
  its bounds, the box of indices it holds;
* ``stencil.assert %arg([lb] : [ub])``: the older spelling of the same fact (the field keeps its name);
* ``%t = stencil.load %f`` (after shape inference ``stencil.load %f([lb] : [ub])``): the field's values
  as a temp;
* ``%r = stencil.apply (%a = %t : T, ...) -> T { body } [to ([lb] : [ub])]``: a temp computed point by
  point by ``body``, which reads its block arguments with ``stencil.access`` at constant offsets;
* ``stencil.store %r to %f([lb] : [ub])``: writes the temp's values on that box into the field;
* ``%r:2 = stencil.combine 2 at 11 lower = (...) upper = (...)``: the lower temps below index 11 of
  dimension 2, the upper ones from there on.

Inside an apply: ``stencil.access``, ``stencil.index``, ``stencil.store_result`` and ``stencil.return``
(``unroll [1, 2, 1]``: the body computes 2 points along ``j``; it returns the results of the first point,
then of the second, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from polylab.errors import SourceLocation
from polylab.stencil.ir import define, defines, location, region, use, uses
from polylab.stencil.types import Box, FieldType, ScalarType, TempType, Type


@dataclass(frozen=True)
class Cast:
    """``stencil.cast``: the field argument ``field`` seen as a field with bounds ``box``."""

    OPNAME = "stencil.cast"
    result: str = define()
    field: str = use()
    box: Box = Box((), ())
    from_type: FieldType = FieldType(())
    to_type: FieldType = FieldType(())
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Assert:
    """``stencil.assert %arg([lb] : [ub]) : T``: the field argument has bounds ``box``."""

    OPNAME = "stencil.assert"
    field: str = use()
    box: Box = Box((), ())
    type: FieldType = FieldType(())
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Load:
    """``stencil.load``: a field's values as a temp (``box``: set by shape inference)."""

    OPNAME = "stencil.load"
    result: str = define()
    field: str = use()
    from_type: FieldType = FieldType(())
    to_type: TempType = TempType(())
    box: Box | None = None
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Access:
    """``stencil.access %a [1, 0, -1]``: the block argument's value at the current point plus ``offset``."""

    OPNAME = "stencil.access"
    result: str = define()
    temp: str = use()
    offset: tuple[int, ...] = ()
    temp_type: TempType = TempType(())
    type: ScalarType = ScalarType("f64")
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Index:
    """``stencil.index 2 [0, 0, 0] : index``: coordinate ``dim`` of the current point plus ``offset[dim]``."""

    OPNAME = "stencil.index"
    result: str = define()
    dim: int = 0
    offset: tuple[int, ...] = ()
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class StoreResult:
    """``stencil.store_result %v``: the value ``%v`` as one of the apply's results at this point."""

    OPNAME = "stencil.store_result"
    result: str = define()
    operand: str = use()
    type: ScalarType = ScalarType("f64")
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Return:
    """``stencil.return [unroll [u]] %r0, %r1 : T0, T1``: ends the body (unrolled: ``prod(u)`` points,
    each point's results in turn)."""

    OPNAME = "stencil.return"
    operands: tuple[str, ...] = uses()
    types: tuple[Type, ...] = ()
    unroll: tuple[int, ...] | None = None
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Apply:
    """``stencil.apply``: ``results`` (temps) computed on ``box`` by ``body``, whose block arguments
    ``args`` are bound to the ``operands`` (temps, or scalars of the function)."""

    OPNAME = "stencil.apply"
    results: tuple[str, ...] = defines()
    args: tuple[str, ...] = defines()
    operands: tuple[str, ...] = uses()
    body: tuple[Any, ...] = region()
    arg_types: tuple[Type, ...] = ()
    result_types: tuple[TempType, ...] = ()
    box: Box | None = None
    loc: SourceLocation | None = location()

    @property
    def ret(self) -> Return:
        last = self.body[-1]
        assert isinstance(last, Return)
        return last

    @property
    def unroll(self) -> tuple[int, ...] | None:
        return self.ret.unroll

    def arg_of(self, operand: str) -> tuple[str, ...]:
        """The block arguments bound to ``operand``."""
        return tuple(a for a, o in zip(self.args, self.operands) if o == operand)


@dataclass(frozen=True)
class Store:
    """``stencil.store %t to %f([lb] : [ub])``: the temp's values on ``box`` written into the field."""

    OPNAME = "stencil.store"
    temp: str = use()
    field: str = use()
    box: Box = Box((), ())
    temp_type: TempType = TempType(())
    field_type: FieldType = FieldType(())
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Combine:
    """``stencil.combine dim at index lower = (...) upper = (...)``: result ``r`` is ``lower[r]`` where
    coordinate ``dim`` is below ``index`` and ``upper[r]`` from ``index`` on."""

    OPNAME = "stencil.combine"
    results: tuple[str, ...] = defines()
    lower: tuple[str, ...] = uses()
    upper: tuple[str, ...] = uses()
    dim: int = 0
    index: int = 0
    lower_types: tuple[TempType, ...] = ()
    upper_types: tuple[TempType, ...] = ()
    result_types: tuple[TempType, ...] = ()
    box: Box | None = None
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class FuncReturn:
    """``return``: the end of the stencil program."""

    OPNAME = "return"
    loc: SourceLocation | None = location()
