"""A stencil program: one function of the dialect, its arguments and its operations.

A :class:`Program` is an immutable value; every pass returns a new one. Lookups (:meth:`Program.producer`,
:meth:`Program.consumers`, :meth:`Program.bounds`) are derived from the operations, never stored beside
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from polylab import render
from polylab.stencil.errors import StencilError
from polylab.stencil.ir import results_of, uses_of
from polylab.stencil.ops import Apply, Assert, Cast, Combine, Load, Store
from polylab.stencil.types import Box, FieldType, Type


@dataclass(frozen=True, eq=True)
class Program:
    """``func @name(arguments) attributes {stencil.program} { ops; return }``.

    ``arguments``: ``(name, type)`` pairs (fields, and scalars an apply may read); ``ops``: the top-level
    operations in order (casts, loads, applies, combines, stores). ``source`` and ``filename`` say where
    the text came from (not part of the value)."""

    name: str
    arguments: tuple[tuple[str, Type], ...]
    ops: tuple[Any, ...]
    source: str = field(default="", compare=False, repr=False)
    filename: str | None = field(default=None, compare=False, repr=False)

    # -- lookups ------------------------------------------------------------------------------------------
    @cached_property
    def rank(self) -> int:
        """The number of dimensions of the program's index space (that of its fields)."""
        for _, t in self.arguments:
            if isinstance(t, FieldType):
                return len(t.shape)
        for op in self.ops:
            if isinstance(op, Store):
                return op.box.rank
        return 0

    @cached_property
    def _producers(self) -> dict[str, Any]:
        out = {}
        for op in self.ops:
            for r in results_of(op):
                out[r] = op
        return out

    def producer(self, value: str) -> Any | None:
        """The top-level operation that defines ``value`` (None for a function argument)."""
        return self._producers.get(value)

    def consumers(self, value: str) -> tuple[Any, ...]:
        """The top-level operations that read ``value``."""
        return tuple(op for op in self.ops if value in uses_of(op))

    @property
    def applies(self) -> tuple[Apply, ...]:
        return tuple(op for op in self.ops if isinstance(op, Apply))

    @property
    def stores(self) -> tuple[Store, ...]:
        return tuple(op for op in self.ops if isinstance(op, Store))

    @property
    def loads(self) -> tuple[Load, ...]:
        return tuple(op for op in self.ops if isinstance(op, Load))

    @property
    def combines(self) -> tuple[Combine, ...]:
        return tuple(op for op in self.ops if isinstance(op, Combine))

    def argument_type(self, name: str) -> Type | None:
        for n, t in self.arguments:
            if n == name:
                return t
        return None

    def field_argument(self, value: str) -> str:
        """The function argument behind a field value (through ``stencil.cast``)."""
        op = self.producer(value)
        return op.field if isinstance(op, Cast) else value

    def bounds(self, value: str) -> Box:
        """The bounds of a field value: those of its ``stencil.cast`` (or ``stencil.assert``)."""
        arg = self.field_argument(value)
        for op in self.ops:
            if isinstance(op, (Cast, Assert)) and op.field == arg:
                return op.box
        raise StencilError(f"the field {arg} has no bounds",
                           hint="give it bounds with stencil.cast %arg([lb] : [ub]) before loading or storing it")

    def field_type(self, value: str) -> FieldType:
        op = self.producer(value)
        t = op.to_type if isinstance(op, Cast) else self.argument_type(value)
        assert isinstance(t, FieldType)
        return t

    def input_fields(self) -> tuple[str, ...]:
        """The function arguments that are loaded, in argument order."""
        loaded = {self.field_argument(op.field) for op in self.loads}
        return tuple(n for n, _ in self.arguments if n in loaded)

    def output_fields(self) -> tuple[str, ...]:
        """The function arguments that are stored to, in argument order."""
        stored = {self.field_argument(op.field) for op in self.stores}
        return tuple(n for n, _ in self.arguments if n in stored)

    def __str__(self) -> str:
        return render.text(self)

    def _repr_html_(self) -> str:
        return render.html(self)
