"""An apply's body as expression trees of the model (:mod:`polylab.model.expr`), one per returned value.

The body is a data-flow graph in SSA form; a statement of the model is one assignment whose right-hand
side is a tree. Each returned value becomes the tree of the operations it depends on (a value used
twice appears twice: the operations are pure, so this changes no result, and the C compiler's common
subexpression elimination shares the work again). ``access %a [o]`` becomes a read of the array that
holds ``%a`` at the point plus ``o`` (minus the array's origin); ``stencil.index d [o]`` the iterator of
``d`` plus ``o_d``; ``select`` and ``scf.if`` become ``c ? a : b``; ``cmpf`` a C comparison (an
unordered predicate ``u..`` as the negation of the opposite ordered one, which is true on NaN as it
must be: ``ugt`` is ``!(a <= b)``, written ``(a <= b) ? 0 : 1``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from polylab.model.expr import ArrayRef, Binary as CBinary, Call, Cond, Const, Expr, Name, Unary, children
from polylab.stencil.arith import BINARY, CMPF, CMPI, MATH, Binary, Compare, Constant, MathCall, Negate, Select
from polylab.stencil.control import If, Yield
from polylab.stencil.errors import StencilError, located
from polylab.stencil.ir import loc_of, results_of
from polylab.stencil.ops import Access, Index, Return, StoreResult

__all__ = ["CTYPES", "MAX_NODES", "BodyTrees", "Storage", "comparison", "literal", "shifted", "tree_size"]

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
    """The trees of one apply's body for the points ``iterators`` (``storage``: block argument -> where
    its operand's values live)."""

    def __init__(self, body: tuple[Any, ...], storage: dict[str, Storage], iterators: tuple[str, ...]) -> None:
        self.storage = storage
        self.iterators = iterators
        self.memo: dict[tuple[int, str], Expr] = {}
        self.scopes: dict[int, dict[str, Any]] = {}
        self.root = self.scope_of(body)

    def scope_of(self, block: tuple[Any, ...]) -> dict[str, Any]:
        """The values a block defines (one dictionary per block, kept for the memo's keys)."""
        if id(block) not in self.scopes:
            self.scopes[id(block)] = _scope(block)
        return self.scopes[id(block)]

    def returned(self) -> list[Expr]:
        ret = self.root_ops[-1]
        assert isinstance(ret, Return)
        return [self.value(v, [self.root]) for v in ret.operands]

    @property
    def root_ops(self) -> tuple[Any, ...]:
        return self.root["__ops__"]  # type: ignore[return-value]

    def value(self, v: str, chain: list[dict[str, Any]]) -> Expr:
        for scope in reversed(chain):
            if v in scope:
                key = (id(scope), v)
                if key not in self.memo:
                    self.memo[key] = self.define(scope[v], v, chain[:chain.index(scope) + 1])
                return self.memo[key]
        raise StencilError(f"the value {v} has no definition in the apply's body")

    def define(self, op: Any, v: str, chain: list[dict[str, Any]]) -> Expr:
        val: Callable[[str], Expr] = lambda x: self.value(x, chain)  # noqa: E731
        match op:
            case Access():
                return self.storage[op.temp].ref(self.iterators, op.offset)
            case Index():
                return shifted(Name(self.iterators[op.dim]), op.offset[op.dim])
            case Constant():
                return literal(op.value, op.type.name)
            case Binary():
                return CBinary(BINARY[op.op], val(op.lhs), val(op.rhs))
            case Negate():
                return Unary("-", val(op.operand))
            case Compare():
                return comparison(op, val(op.lhs), val(op.rhs))
            case Select():
                return Cond(val(op.cond), val(op.then), val(op.other))
            case MathCall():
                return Call(MATH[op.func] + ("f" if op.type.name == "f32" else ""), tuple(val(a) for a in op.args))
            case StoreResult():
                return val(op.operand)
            case If():
                k = op.results.index(v)
                then = self._yielded(op.then, chain, k)
                other = self._yielded(op.other, chain, k)
                return Cond(val(op.cond), then, other)
        raise located(f"cannot lower {type(op).__name__} to an expression", loc_of(op))

    def _yielded(self, block: tuple[Any, ...], chain: list[dict[str, Any]], k: int) -> Expr:
        scope = self.scope_of(block)
        y = block[-1] if block else None
        if not isinstance(y, Yield):
            raise StencilError("a branch of scf.if does not end with scf.yield")
        return self.value(y.operands[k], chain + [scope])


def _scope(ops: tuple[Any, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"__ops__": ops}
    for op in ops:
        for r in results_of(op):
            out[r] = op
    return out


def comparison(op: Compare, a: Expr, b: Expr) -> Expr:
    """``cmpf``/``cmpi`` as a C condition (see the module's documentation for unordered predicates)."""
    if op.op == "cmpi":
        return CBinary(CMPI[op.predicate], a, b)
    c, unordered = CMPF[op.predicate]
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
