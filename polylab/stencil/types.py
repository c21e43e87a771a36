"""Types and boxes of the stencil dialect.

* ``!stencil.field<72x72x72xf64>``: a stored array (``?``: an extent not known yet; ``0``: a dimension
  the field does not have, so ``!stencil.field<0x?x0xf64>`` is a one-dimensional field along ``j``);
* ``!stencil.temp<?x?x?xf64>``: values on a box, never stored (value semantics);
* ``!stencil.result<f64>``: what ``stencil.store_result`` gives ``stencil.return``;
* scalar types ``f64``, ``f32``, ``index``, ``i1``, ``i32``, ``i64``.

A :class:`Box` is the half-open integer box ``{ x : lb <= x < ub }`` (``[lb] : [ub]`` in the text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

#: scalar element and value types the dialect uses
SCALARS = ("f64", "f32", "index", "i1", "i32", "i64")
FLOATS = ("f64", "f32")


@dataclass(frozen=True)
class Box:
    """The integer box ``{ x : lb <= x < ub }`` (half-open in every dimension)."""

    lb: tuple[int, ...]
    ub: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.lb)

    @property
    def extent(self) -> tuple[int, ...]:
        return tuple(u - lo for lo, u in zip(self.lb, self.ub))

    @property
    def size(self) -> int:
        n = 1
        for e in self.extent:
            n *= max(0, e)
        return n

    def contains(self, other: "Box") -> bool:
        """``other`` is a subset of this box (an empty box is a subset of any box)."""
        if other.size == 0:
            return True
        return all(a <= b and d <= c for a, b, c, d in zip(self.lb, other.lb, self.ub, other.ub))

    def hull(self, other: "Box") -> "Box":
        """The smallest box holding both (what shape inference takes over the uses of a temp)."""
        return Box(tuple(map(min, self.lb, other.lb)), tuple(map(max, self.ub, other.ub)))

    def shifted(self, offset: tuple[int, ...]) -> "Box":
        """``{ x + offset : x in box }``."""
        return Box(tuple(a + o for a, o in zip(self.lb, offset)), tuple(b + o for b, o in zip(self.ub, offset)))

    def text(self) -> str:
        return f"[{', '.join(map(str, self.lb))}] : [{', '.join(map(str, self.ub))}]"

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class FieldType:
    """``!stencil.field<shape x element>``; ``shape[d]`` is None for ``?`` and 0 for an absent dimension."""

    shape: tuple[int | None, ...]
    element: str = "f64"

    @property
    def present(self) -> tuple[bool, ...]:
        """Which dimensions the field has (``0`` marks one it does not have)."""
        return tuple(s != 0 for s in self.shape)

    def text(self) -> str:
        return f"!stencil.field<{shape_text(self.shape)}x{self.element}>"


@dataclass(frozen=True)
class TempType:
    """``!stencil.temp<shape x element>`` (shape as for :class:`FieldType`)."""

    shape: tuple[int | None, ...]
    element: str = "f64"

    @property
    def present(self) -> tuple[bool, ...]:
        return tuple(s != 0 for s in self.shape)

    def text(self) -> str:
        return f"!stencil.temp<{shape_text(self.shape)}x{self.element}>"


@dataclass(frozen=True)
class ResultType:
    """``!stencil.result<element>``."""

    element: str = "f64"

    def text(self) -> str:
        return f"!stencil.result<{self.element}>"


@dataclass(frozen=True)
class ScalarType:
    """A scalar type: ``f64``, ``f32``, ``index``, ``i1``, ``i32``, ``i64``."""

    name: str

    def text(self) -> str:
        return self.name


Type = Union[FieldType, TempType, ResultType, ScalarType]

F64 = ScalarType("f64")
INDEX = ScalarType("index")
I1 = ScalarType("i1")


def shape_text(shape: tuple[int | None, ...]) -> str:
    return "x".join("?" if s is None else str(s) for s in shape)


def temp_of(shape: tuple[int | None, ...], element: str = "f64") -> TempType:
    return TempType(tuple(shape), element)


def dynamic_temp(rank: int, element: str = "f64", present: tuple[bool, ...] | None = None) -> TempType:
    """``!stencil.temp<?x?x?xf64>`` (absent dimensions as ``0``)."""
    present = present or (True,) * rank
    return TempType(tuple(None if p else 0 for p in present), element)
