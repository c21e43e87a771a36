"""An apply's body as expression trees of the model (:mod:`polylab.model.expr`), one per returned value.

The body is a data-flow graph in SSA form; a statement of the model is one assignment whose right-hand
side is a tree. Each returned value becomes the tree of the operations it depends on (a value used
twice appears twice: the operations are pure, so this changes no result, and the C compiler's common
subexpression elimination shares the work again). ``access %a [o]`` becomes a read of the array that
holds ``%a`` at the point plus ``o`` (minus the array's origin); ``stencil.index d <o>`` the iterator of
``d`` plus ``o_d``; ``arith.select`` and ``scf.if`` become ``c ? a : b``; ``arith.cmpf`` a C comparison (an
unordered predicate ``u..`` as the negation of the opposite ordered one, which is true on NaN as it
must be: ``ugt`` is ``!(a <= b)``, written ``(a <= b) ? 0 : 1``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.dialects.stencil import AccessOp, IndexOp, StoreResultOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from polylab.model.expr import ArrayRef, Binary as CBinary, Call, Cast, Cond, Const, Expr, Name, Unary, children
from polylab.stencil.errors import UnsupportedStencilError

__all__ = ["CTYPES", "MAX_NODES", "BodyTrees", "Storage", "comparison", "literal", "shifted", "tree_size"]

_BINARY = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/", "arith.addi": "+",
           "arith.subi": "-", "arith.muli": "*"}
_MATH = {"math.sqrt": "sqrt", "math.absf": "fabs", "math.exp": "exp", "math.log": "log", "math.sin": "sin",
         "math.cos": "cos", "math.tanh": "tanh", "math.floor": "floor", "math.ceil": "ceil", "math.powf": "pow",
         "arith.maximumf": "fmax", "arith.minimumf": "fmin"}
#: cmpf predicate -> (C comparison, unordered); cmpi predicate -> C comparison
_CMPF = {"oeq": ("==", False), "ogt": (">", False), "oge": (">=", False), "olt": ("<", False),
         "ole": ("<=", False), "one": ("!=", False), "ueq": ("==", True), "ugt": (">", True), "uge": (">=", True),
         "ult": ("<", True), "ule": ("<=", True), "une": ("!=", True)}
_CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}

#: the C type of each scalar type of the dialect
CTYPES = {"f64": "double", "f32": "float", "index": "int", "i64": "long long", "i32": "int", "i1": "int"}
#: the largest expression tree one statement may hold (a body whose values are reused very often could
#: grow exponentially when written as a tree)
MAX_NODES = 200_000

_OPPOSITE = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}


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


def literal(value: float | int, type_name: str) -> Const:
    """A C literal of exactly ``value`` (floats: Python's shortest round-trip form)."""
    if type_name in ("f64", "f32"):
        text = repr(float(value))
        if text in ("inf", "-inf", "nan"):
            text = {"inf": "HUGE_VAL", "-inf": "-HUGE_VAL", "nan": "NAN"}[text]
        elif "." not in text and "e" not in text:
            text += ".0"
        return Const(text + ("f" if type_name == "f32" else ""), CTYPES[type_name])
    return Const(str(int(value)), CTYPES[type_name])


class BodyTrees:
    """The trees of one apply's body for the points ``iterators`` (``storage``: block argument index -> where
    its operand's values live; ``located``: makes a located error for an operation)."""

    def __init__(self, storage: dict[int, Storage], iterators: tuple[str, ...], located: Any) -> None:
        self.storage = storage
        self.iterators = iterators
        self.located = located
        self.memo: dict[SSAValue, Expr] = {}

    def value(self, v: SSAValue) -> Expr:
        if v not in self.memo:
            if isinstance(v, BlockArgument):
                raise self.located("a scalar argument of an apply is not lowered to the model", None)
            self.memo[v] = self.define(v.owner, v)
        return self.memo[v]

    def define(self, op: Any, v: SSAValue) -> Expr:
        val: Callable[[SSAValue], Expr] = self.value
        name = op.name
        if isinstance(op, AccessOp):
            rank = len(self.iterators)
            dims = list(op.offset_mapping) if op.offset_mapping is not None else list(range(rank))
            full = [0] * rank
            for d, o in zip(dims, op.offset):
                full[d] = o
            return self.storage[op.temp.index].ref(self.iterators, tuple(full))
        if isinstance(op, IndexOp):
            d = op.dim.value.data
            return shifted(Name(self.iterators[d]), list(op.offset)[d])
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(value, (FloatAttr, IntegerAttr)):
                return literal(value.value.data, _type_name(value.type))
        if isinstance(op, StoreResultOp) and op.arg is not None:
            return val(op.arg)
        if name in _BINARY:
            return CBinary(_BINARY[name], val(op.operands[0]), val(op.operands[1]))
        if name == "arith.negf":
            return Unary("-", val(op.operands[0]))
        if name in _MATH:
            suffix = "f" if _type_name(op.results[0].type) == "f32" else ""
            return Call(_MATH[name] + suffix, tuple(val(a) for a in op.operands))
        if name in ("arith.cmpf", "arith.cmpi"):
            return comparison(name, _predicate(op), val(op.operands[0]), val(op.operands[1]))
        if name == "arith.select":
            return Cond(val(op.operands[0]), val(op.operands[1]), val(op.operands[2]))
        if name in ("arith.index_cast", "arith.sitofp", "arith.fptosi", "arith.extf", "arith.truncf"):
            return Cast(CTYPES[_type_name(op.results[0].type)], val(op.operands[0]))
        if isinstance(op, scf.IfOp):
            k = list(op.results).index(v)
            return Cond(val(op.cond), self._yielded(op.true_region, k), self._yielded(op.false_region, k))
        raise self.located(f"{name} is not lowered to the model's expressions", op if isinstance(op, Operation)
                           else None)

    def _yielded(self, region: Any, k: int) -> Expr:
        y = region.block.last_op
        assert isinstance(y, scf.YieldOp)
        return self.value(y.operands[k])


def _type_name(t: Any) -> str:
    text = str(t)
    return text if text in CTYPES else "f64"


def _predicate(op: Any) -> str:
    code = op.predicate.value.data
    table = arith.CMPF_COMPARISON_OPERATIONS if op.name == "arith.cmpf" else arith.CMPI_COMPARISON_OPERATIONS
    return table[code]


def comparison(kind: str, predicate: str, a: Expr, b: Expr) -> Expr:
    """``cmpf``/``cmpi`` as a C condition (see the module's documentation for unordered predicates)."""
    if kind == "arith.cmpi":
        if predicate not in _CMPI:
            raise UnsupportedStencilError(f"arith.cmpi {predicate} is not lowered to the model")
        return CBinary(_CMPI[predicate], a, b)
    if predicate not in _CMPF:
        raise UnsupportedStencilError(f"arith.cmpf {predicate} is not lowered to the model")
    c, unordered = _CMPF[predicate]
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
        key = id(x)
        if key not in memo:
            memo[key] = 1 + sum(size(c) for c in children(x))
        return memo[key]

    return size(e)
