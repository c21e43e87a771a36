"""An apply's body as expression trees of the model (:mod:`polylab.model.expr`), one per returned value.

The body is a data-flow graph in SSA form; a statement of the model is one assignment whose right-hand
side is a tree. :class:`Trees` reads the body with the interpreter's :class:`~polylab.stencil.interpret.Body`
(the same structure, another algebra): each returned value becomes the tree of the operations it depends on (a
value used twice appears twice: the operations are pure, so this changes no result, and the C compiler's
common subexpression elimination shares the work again). ``access %a [o]`` becomes a read of the array that
holds ``%a`` at the point plus ``o`` (minus the array's origin); ``stencil.index d <o>`` the iterator of
``d`` plus ``o_d``; ``arith.select`` and ``scf.if`` become ``c ? a : b``; ``arith.cmpf`` a C comparison (an
unordered predicate ``u..`` as the negation of the opposite ordered one, which is true on NaN as it
must be: ``ugt`` is ``!(a <= b)``, written ``(a <= b) ? 0 : 1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.stencil import AccessOp, ApplyOp
from xdsl.ir import Operation, SSAValue

from polylab.model.expr import ArrayRef, Binary as CBinary, Call, Cast, Cond, Const, Expr, Name, Unary, children
from polylab.reference.cvalue import literal
from polylab.stencil.interpret import Body, predicate
from polylab.stencil.program import Program

_BINARY = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/", "arith.addi": "+",
           "arith.subi": "-", "arith.muli": "*"}
_MATH = {"math.sqrt": "sqrt", "math.absf": "fabs", "math.exp": "exp", "math.log": "log", "math.sin": "sin",
         "math.cos": "cos", "math.tanh": "tanh", "math.floor": "floor", "math.ceil": "ceil", "math.powf": "pow",
         "arith.maximumf": "fmax", "arith.minimumf": "fmin"}
#: a cmpf predicate without its o/u prefix, or a signed cmpi predicate without its s -> the C comparison
_CMP = {"eq": "==", "ne": "!=", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}
_CASTS = ("arith.index_cast", "arith.sitofp", "arith.fptosi", "arith.extf", "arith.truncf")
_OPPOSITE = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}

#: the C type of each scalar type of the dialect
CTYPES = {"f64": "double", "f32": "float", "index": "int", "i64": "long long", "i32": "int", "i1": "int"}
#: the largest expression tree one statement may hold (a body whose values are reused very often could
#: grow exponentially when written as a tree)
MAX_NODES = 200_000


@dataclass(frozen=True)
class Storage:
    """Where a temp's values live: ``array[x - origin]`` in the ``present`` dimensions."""

    array: str
    origin: tuple[int, ...]
    present: tuple[bool, ...]

    def ref(self, iterators: tuple[str, ...], offset: tuple[int, ...]) -> ArrayRef:
        """The element of the point ``iterators + offset`` (the access number is set later)."""
        idx = tuple(shifted(Name(it), off - o)
                    for it, off, o, p in zip(iterators, offset, self.origin, self.present) if p)
        return ArrayRef(self.array, idx, -1)


def shifted(e: Expr, c: int) -> Expr:
    """``e + c`` (``e - |c|`` for a negative ``c``; ``e`` for 0)."""
    if c == 0:
        return e
    return CBinary("+", e, Const(str(c))) if c > 0 else CBinary("-", e, Const(str(-c)))


def type_name(t: Any) -> str:
    return str(t) if str(t) in CTYPES else "f64"


class Trees(Body):
    """The trees of one apply's body at the points ``iterators`` (``storage``: where each operand's values
    live)."""

    def __init__(self, program: Program, apply: ApplyOp, storage: dict[SSAValue, Storage],
                 iterators: tuple[str, ...]) -> None:
        super().__init__(program, apply)
        self.storage, self.iterators = storage, iterators

    def argument(self, operand: SSAValue) -> Expr:
        raise self.refuse("a scalar argument of an apply is not lowered to the model", self.apply)

    def access(self, operand: SSAValue, dims: list[int], offsets: list[int], op: AccessOp) -> Expr:
        full = [0] * self.rank
        for d, o in zip(dims, offsets):
            full[d] = o
        return self.storage[operand].ref(self.iterators, tuple(full))

    def index(self, dim: int, offset: int) -> Expr:
        return shifted(Name(self.iterators[dim]), offset)

    def constant(self, value: float | int, kind: str) -> Expr:
        """The exact C literal (:func:`polylab.reference.cvalue.literal`; infinities and NaN as in math.h)."""
        ctype = CTYPES[type_name(kind)]
        if math.isfinite(value):
            return literal(value, ctype)
        return Const({"inf": "HUGE_VAL", "-inf": "-HUGE_VAL"}.get(repr(float(value)), "NAN"), ctype)

    def choose(self, cond: Expr, then: Expr, other: Expr) -> Expr:
        return Cond(cond, then, other)

    def operation(self, op: Operation, args: list[Expr]) -> Expr:
        name = op.name
        if name in _BINARY:
            return CBinary(_BINARY[name], *args)
        if name == "arith.negf":
            return Unary("-", args[0])
        if name in _MATH:
            return Call(_MATH[name] + ("f" if type_name(op.results[0].type) == "f32" else ""), tuple(args))
        if name == "arith.cmpi" and predicate(op).lstrip("s") in _CMP:
            return CBinary(_CMP[predicate(op).lstrip("s")], *args)
        if name == "arith.cmpf" and predicate(op)[1:] in _CMP:
            return comparison(predicate(op), *args)
        if name in _CASTS:
            return Cast(CTYPES[type_name(op.results[0].type)], args[0])
        raise self.refuse(f"{name} is not lowered to the model's expressions", op)


def comparison(pred: str, a: Expr, b: Expr) -> Expr:
    """``cmpf`` with predicate ``pred`` as a C condition (see the module's documentation)."""
    c, unordered = _CMP[pred[1:]], pred[0] == "u"
    if c == "!=" and not unordered:      # one: ordered and different
        return CBinary("||", CBinary("<", a, b), CBinary(">", a, b))
    if c == "==" and unordered:          # ueq: unordered or equal
        return Cond(CBinary("||", CBinary("<", a, b), CBinary(">", a, b)), Const("0"), Const("1"))
    if not unordered or c == "!=":
        return CBinary(c, a, b)
    return Cond(CBinary(_OPPOSITE[c], a, b), Const("0"), Const("1"))


def tree_size(e: Expr) -> int:
    """The number of nodes of ``e`` written as a tree (shared subtrees counted each time)."""
    memo: dict[int, int] = {}

    def size(x: Any) -> int:
        if id(x) not in memo:
            memo[id(x)] = 1 + sum(size(c) for c in children(x))
        return memo[id(x)]

    return size(e)
