"""Writing a stencil program in Python.

    >>> b = Builder("laplace", rank=3)
    >>> inp = b.field("inp", lb=(-4, -4, -4), ub=(68, 68, 68))
    >>> out = b.field("out", lb=(-4, -4, -4), ub=(68, 68, 68))
    >>> t = b.load(inp)
    >>> lap = b.apply([t], lambda a: a[-1, 0, 0] + a[1, 0, 0] + a[0, 1, 0] + a[0, -1, 0] - 4.0 * a[0, 0, 0])
    >>> b.store(lap, out, lb=(0, 0, 0), ub=(64, 64, 64))
    >>> program = b.build()

Inside ``apply``, the function receives one :class:`Arg` per operand: ``a[i, j, k]`` is
``stencil.access`` at that constant offset, and :class:`Val` values combine with ``+ - * /``, unary
``-``, comparisons (``cmpf``, ordered), :func:`select`, :func:`sqrt` and :func:`index`. It returns one
value (one result) or a tuple (several). The program is built exactly as the parser would build it from
its text (``parse(print_program(p)) == p``) and checked the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from polylab.stencil.arith import Binary, Compare, Constant, MathCall, Negate, Select
from polylab.stencil.checks import check_program
from polylab.stencil.errors import StencilError
from polylab.stencil.ops import Access, Apply, Cast, FuncReturn, Index, Load, Return, Store, StoreResult
from polylab.stencil.program import Program
from polylab.stencil.types import F64, I1, INDEX, Box, FieldType, ResultType, ScalarType, TempType, dynamic_temp


class _Body:
    """The operations of the body being built, with a counter for value names."""

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.ops: list[Any] = []
        self.n = 0

    def name(self) -> str:
        self.n += 1
        return f"%{self.n}"

    def add(self, op: Any) -> "Val":
        self.ops.append(op)
        kind = I1 if isinstance(op, Compare) else INDEX if isinstance(op, Index) else getattr(op, "type", F64)
        return Val(self, op.result, kind)


@dataclass(frozen=True)
class Val:
    """A value of the body (an ``f64``, an ``index`` or an ``i1``)."""

    body: _Body
    name: str
    type: ScalarType

    def _lift(self, x: Any) -> "Val":
        if isinstance(x, Val):
            return x
        if isinstance(x, (int, float)):
            return self.body.add(Constant(self.body.name(), float(x) if self.type.name != "index" else int(x),
                                          self.type))
        raise StencilError(f"cannot use {x!r} in a stencil expression")

    def _bin(self, op: str, other: Any, swap: bool = False) -> "Val":
        a, b = (self._lift(other), self) if swap else (self, self._lift(other))
        kind = {"add": "addf", "sub": "subf", "mul": "mulf", "div": "divf"}[op]
        if self.type.name == "index":
            kind = {"addf": "addi", "subf": "subi", "mulf": "muli"}.get(kind, kind)
        return self.body.add(Binary(kind, self.body.name(), a.name, b.name, self.type))

    def __add__(self, o: Any) -> "Val":
        return self._bin("add", o)

    def __radd__(self, o: Any) -> "Val":
        return self._bin("add", o, True)

    def __sub__(self, o: Any) -> "Val":
        return self._bin("sub", o)

    def __rsub__(self, o: Any) -> "Val":
        return self._bin("sub", o, True)

    def __mul__(self, o: Any) -> "Val":
        return self._bin("mul", o)

    def __rmul__(self, o: Any) -> "Val":
        return self._bin("mul", o, True)

    def __truediv__(self, o: Any) -> "Val":
        return self._bin("div", o)

    def __rtruediv__(self, o: Any) -> "Val":
        return self._bin("div", o, True)

    def __neg__(self) -> "Val":
        return self.body.add(Negate(self.body.name(), self.name, self.type))

    def _cmp(self, pred: str, o: Any) -> "Val":
        other = self._lift(o)
        if self.type.name == "index":
            return self.body.add(Compare("cmpi", {"ogt": "sgt", "oge": "sge", "olt": "slt", "ole": "sle",
                                                  "oeq": "eq", "one": "ne"}[pred], self.body.name(), self.name,
                                         other.name, self.type))
        return self.body.add(Compare("cmpf", pred, self.body.name(), self.name, other.name, self.type))

    def __gt__(self, o: Any) -> "Val":
        return self._cmp("ogt", o)

    def __ge__(self, o: Any) -> "Val":
        return self._cmp("oge", o)

    def __lt__(self, o: Any) -> "Val":
        return self._cmp("olt", o)

    def __le__(self, o: Any) -> "Val":
        return self._cmp("ole", o)


@dataclass(frozen=True)
class Arg:
    """A temp operand inside an apply: ``a[i, j, k]`` reads it at that offset."""

    body: _Body
    name: str
    type: TempType

    def __getitem__(self, offset: Any) -> Val:
        off = tuple(offset) if isinstance(offset, tuple) else (offset,)
        if len(off) != self.body.rank or not all(isinstance(o, int) for o in off):
            raise StencilError(f"an access needs {self.body.rank} constant integer offsets, not {offset!r}")
        return self.body.add(Access(self.body.name(), self.name, off, self.type, F64))


def select(cond: Val, a: Any, b: Any) -> Val:
    """``a`` where ``cond`` holds, else ``b`` (``select``)."""
    ref = a if isinstance(a, Val) else b if isinstance(b, Val) else None
    if ref is None:
        raise StencilError("select needs a stencil value among its two choices")
    x, y = ref._lift(a), ref._lift(b)
    return cond.body.add(Select(cond.body.name(), cond.name, x.name, y.name, x.type))


def sqrt(x: Val) -> Val:
    """The square root (``sqrt``, correctly rounded)."""
    return x.body.add(MathCall("sqrt", x.body.name(), (x.name,), x.type))


def index(a: Arg, dim: int, offset: int = 0) -> Val:
    """The coordinate ``dim`` of the current point plus ``offset`` (``stencil.index``)."""
    off = tuple(offset if d == dim else 0 for d in range(a.body.rank))
    return a.body.add(Index(a.body.name(), dim, off))


class Builder:
    """Builds one stencil program (see the module)."""

    def __init__(self, name: str, rank: int = 3) -> None:
        if not name.isidentifier():
            raise StencilError(f"the program name {name!r} is not an identifier")
        self.name = name
        self.rank = rank
        self.arguments: list[tuple[str, Any]] = []
        self.ops: list[Any] = []
        self.n = 0

    def _value(self, stem: str = "") -> str:
        self.n += 1
        return f"%{stem}{self.n - 1}"

    def field(self, name: str, lb: Sequence[int], ub: Sequence[int], present: Sequence[bool] | None = None) -> str:
        """A field argument ``%name`` with bounds ``[lb, ub)`` (``present``: the dimensions it has)."""
        if len(lb) != self.rank or len(ub) != self.rank:
            raise StencilError(f"the bounds of {name} need {self.rank} entries")
        pres = tuple(present) if present is not None else (True,) * self.rank
        arg = f"%{name}"
        self.arguments.append((arg, FieldType(tuple(None if p else 0 for p in pres))))
        box = Box(tuple(lb), tuple(ub))
        cast = Cast(self._value(), arg, box, FieldType(tuple(None if p else 0 for p in pres)),
                    FieldType(tuple(e if p else 0 for e, p in zip(box.extent, pres))))
        self.ops.append(cast)
        return cast.result

    def _field_type(self, value: str) -> FieldType:
        for op in self.ops:
            if isinstance(op, Cast) and op.result == value:
                return op.to_type
        raise StencilError(f"{value} is not a field of this program (use the value field() returned)")

    def load(self, field: str) -> str:
        """``stencil.load`` of a field: its values as a temp."""
        ft = self._field_type(field)
        op = Load(self._value(), field, ft, dynamic_temp(self.rank, present=ft.present))
        self.ops.append(op)
        return op.result

    def apply(self, operands: Sequence[str], fn: Callable[..., Any], results: int | None = None) -> Any:
        """``stencil.apply`` over ``operands`` (temps): ``fn(*args)`` returns the value(s) of a point.
        Returns the result (or a tuple of results)."""
        body = _Body(self.rank)
        types = {op.result: op.to_type if isinstance(op, Load) else dynamic_temp(self.rank) for op in self.ops
                 if isinstance(op, Load)}
        args = [Arg(body, f"%a{k}", types.get(o, dynamic_temp(self.rank))) for k, o in enumerate(operands)]
        out = fn(*args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if not outs or not all(isinstance(v, Val) for v in outs):
            raise StencilError("the function of an apply must return stencil values (from its arguments)")
        stored = [body.add(StoreResult(body.name(), v.name, v.type)).name for v in outs]
        body.ops.append(Return(tuple(stored), tuple(ResultType(v.type.name) for v in outs)))
        n = len(outs)
        group = self._value("r")
        names = (group,) if n == 1 else tuple(f"{group}#{k}" for k in range(n))
        self.ops.append(Apply(names, tuple(a.name for a in args), tuple(operands), tuple(body.ops),
                              tuple(a.type for a in args), tuple(dynamic_temp(self.rank) for _ in outs)))
        return names[0] if n == 1 else names

    def store(self, temp: str, field: str, lb: Sequence[int], ub: Sequence[int]) -> None:
        """``stencil.store`` of a temp into a field on ``[lb, ub)``."""
        self.ops.append(Store(temp, field, Box(tuple(lb), tuple(ub)), dynamic_temp(self.rank),
                              self._field_type(field)))

    def build(self) -> Program:
        """The program (checked as a parsed one is)."""
        program = Program(self.name, tuple(self.arguments), tuple(self.ops) + (FuncReturn(),))
        check_program(program)
        return program


__all__ = ["Arg", "Builder", "Val", "index", "select", "sqrt"]
