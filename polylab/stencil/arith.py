"""Arithmetic inside an apply: ``constant``, ``addf subf mulf divf`` (and ``addi subi muli`` on indices),
``negf``, ``cmpf``/``cmpi``, ``select`` and math calls (``sqrt``, ``exp``, ``absf``, ...).

Every operation is elementwise on the apply's points: the value at a point depends only on the operands'
values at that point. Floating-point operations are IEEE double (or single) operations, rounded once each,
in the order written: lowering and the reference interpreter evaluate exactly these operations, so their
results agree bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

from polylab.errors import SourceLocation
from polylab.stencil.ir import define, location, use, uses
from polylab.stencil.types import ScalarType

#: binary operations: name -> C operator
BINARY = {"addf": "+", "subf": "-", "mulf": "*", "divf": "/", "addi": "+", "subi": "-", "muli": "*"}
#: ``cmpf`` predicates: name -> (C operator, unordered?) -- an unordered predicate is also true on NaN
CMPF = {"oeq": ("==", False), "ogt": (">", False), "oge": (">=", False), "olt": ("<", False),
        "ole": ("<=", False), "one": ("!=", False), "ueq": ("==", True), "ugt": (">", True),
        "uge": (">=", True), "ult": ("<", True), "ule": ("<=", True), "une": ("!=", True)}
#: ``cmpi`` predicates (signed) -> C operator
CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
#: math functions: the dialect's name (old standard dialect or ``math.``) -> the C function
MATH = {"sqrt": "sqrt", "exp": "exp", "log": "log", "absf": "fabs", "sin": "sin", "cos": "cos",
        "tanh": "tanh", "floorf": "floor", "ceilf": "ceil", "pow": "pow", "powf": "pow",
        "maxf": "fmax", "minf": "fmin"}


@dataclass(frozen=True)
class Constant:
    """``%c = constant 1.5 : f64``: the same value at every point."""

    OPNAME = "constant"
    result: str = define()
    value: float | int = 0.0
    type: ScalarType = ScalarType("f64")
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Binary:
    """``%r = addf %a, %b : f64`` (``op`` one of :data:`BINARY`)."""

    op: str
    result: str = define()
    lhs: str = use()
    rhs: str = use()
    type: ScalarType = ScalarType("f64")
    loc: SourceLocation | None = location()

    @property
    def opname(self) -> str:
        return self.op


@dataclass(frozen=True)
class Negate:
    """``%r = negf %a : f64``."""

    OPNAME = "negf"
    result: str = define()
    operand: str = use()
    type: ScalarType = ScalarType("f64")
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class Compare:
    """``%r = cmpf "ogt", %a, %b : f64`` (``op`` ``cmpf`` or ``cmpi``): an ``i1`` value."""

    op: str
    predicate: str
    result: str = define()
    lhs: str = use()
    rhs: str = use()
    type: ScalarType = ScalarType("f64")
    loc: SourceLocation | None = location()

    @property
    def opname(self) -> str:
        return self.op


@dataclass(frozen=True)
class Select:
    """``%r = select %c, %a, %b : f64``: ``a`` where ``c`` holds, else ``b``."""

    OPNAME = "select"
    result: str = define()
    cond: str = use()
    then: str = use()
    other: str = use()
    type: ScalarType = ScalarType("f64")
    loc: SourceLocation | None = location()


@dataclass(frozen=True)
class MathCall:
    """``%r = sqrt %a : f64`` (``func`` one of :data:`MATH`; written ``math.sqrt`` in newer MLIR)."""

    func: str
    result: str = define()
    args: tuple[str, ...] = uses()
    type: ScalarType = ScalarType("f64")
    loc: SourceLocation | None = location()

    @property
    def opname(self) -> str:
        return self.func
