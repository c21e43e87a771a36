"""Structured control inside an apply: ``scf.if`` with ``scf.yield``.

``%r = scf.if %c -> (f64) { ... scf.yield %a : f64 } else { ... scf.yield %b : f64 }`` is, at every point,
the value the taken branch yields. Both branches are pure, so evaluating both and choosing (the reference
interpreter) and evaluating only the taken one (the generated C's ``c ? a : b``) give the same value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from polylab.errors import SourceLocation
from polylab.stencil.ir import defines, location, region, use, uses
from polylab.stencil.types import ScalarType


@dataclass(frozen=True)
class Yield:
    """``scf.yield %a, %b : f64, f64``: the values a branch of ``scf.if`` gives."""

    OPNAME = "scf.yield"
    operands: tuple[str, ...] = uses()
    types: tuple[ScalarType, ...] = ()
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class If:
    """``scf.if``: ``then`` and ``other`` are regions ending with a :class:`Yield`."""

    OPNAME = "scf.if"
    results: tuple[str, ...] = defines()
    cond: str = use()
    then: tuple[Any, ...] = region()
    other: tuple[Any, ...] = region()
    types: tuple[ScalarType, ...] = ()
    loc: SourceLocation | None = location()
