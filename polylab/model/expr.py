"""The statement body as a small expression tree.

The polyhedral model keeps, for each statement, its right-hand side and target as an immutable tree, so
later layers can rewrite it exactly (storage folding replaces a read by a constant, contraction rewrites a
subscript, code generation renames iterators) and print it back as C. Every array reference carries the
index of its :class:`~polylab.model.scop.Access` in the statement, which ties the text to the isl relation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, Union

# C operator precedence (higher binds tighter), used to print with the fewest parentheses.
_PRECEDENCE = {
    "?:": 1, "||": 2, "&&": 3, "|": 4, "^": 5, "&": 6, "==": 7, "!=": 7,
    "<": 8, "<=": 8, ">": 8, ">=": 8, "<<": 9, ">>": 9, "+": 10, "-": 10,
    "*": 11, "/": 11, "%": 11, "unary": 12, "postfix": 13, "atom": 14,
}


@dataclass(frozen=True)
class Const:
    """A literal as written (``1.0``, ``3``, ``0.5f``) with its C type."""

    text: str
    ctype: str = "int"


@dataclass(frozen=True)
class Name:
    """A scalar name: an iterator, a parameter or a read-only scalar defined outside the region."""

    name: str


@dataclass(frozen=True)
class ArrayRef:
    """``array[i0][i1]...``; a scalar written in the region is a 0-dimensional array (no indices).

    ``access`` is the position of the matching :class:`Access` in ``Statement.accesses``.
    """

    array: str
    indices: tuple["Expr", ...]
    access: int


@dataclass(frozen=True)
class Unary:
    op: str
    operand: "Expr"


@dataclass(frozen=True)
class Binary:
    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class Call:
    """A call of a pure math function (``sqrt``, ``fmax``, ...)."""

    func: str
    args: tuple["Expr", ...]


@dataclass(frozen=True)
class Cond:
    """``cond ? then : other``."""

    cond: "Expr"
    then: "Expr"
    other: "Expr"


@dataclass(frozen=True)
class Cast:
    ctype: str
    operand: "Expr"


Expr = Union[Const, Name, ArrayRef, Unary, Binary, Call, Cond, Cast]


@dataclass(frozen=True)
class Assignment:
    """``target op value`` with ``op`` one of ``=``, ``+=``, ``-=``, ``*=``, ``/=``."""

    target: ArrayRef
    op: str
    value: Expr

    def expressions(self) -> tuple[Expr, Expr]:
        return (self.target, self.value)


def children(e: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``e``."""
    match e:
        case ArrayRef(indices=idx):
            return idx
        case Unary(operand=o) | Cast(operand=o):
            return (o,)
        case Binary(left=a, right=b):
            return (a, b)
        case Call(args=args):
            return args
        case Cond(cond=c, then=t, other=o):
            return (c, t, o)
        case _:
            return ()


def walk(e: Expr):
    """All sub-expressions of ``e`` in pre-order, ``e`` first."""
    yield e
    for c in children(e):
        yield from walk(c)


def transform(e: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rewrite bottom-up: children first, then ``fn(node)``; ``fn`` returns a replacement or None."""
    match e:
        case ArrayRef():
            new: Expr = replace(e, indices=tuple(transform(i, fn) for i in e.indices))
        case Unary() | Cast():
            new = replace(e, operand=transform(e.operand, fn))
        case Binary():
            new = replace(e, left=transform(e.left, fn), right=transform(e.right, fn))
        case Call():
            new = replace(e, args=tuple(transform(a, fn) for a in e.args))
        case Cond():
            new = replace(e, cond=transform(e.cond, fn), then=transform(e.then, fn),
                          other=transform(e.other, fn))
        case _:
            new = e
    out = fn(new)
    return new if out is None else out


def negated(e: Expr) -> Expr:
    """``-e`` without a double negation: ``-(-x)`` is ``x`` and ``-(+x)`` is ``-x`` (exact: negation only
    flips the sign, in integer and in IEEE floating-point arithmetic)."""
    match e:
        case Unary(op="-", operand=o):
            return o
        case Unary(op="+", operand=o):
            return negated(o)
        case Binary(op="*", left=Unary(op="-", operand=k), right=x):
            return Binary("*", k, x)
    return Unary("-", e)


def without_double_signs(e: Expr) -> Expr | None:
    """The rewrite of one node that removes a sign meeting a sign (None: nothing to rewrite), for
    :func:`transform`: ``-(-x)`` -> ``x``, ``+x`` -> ``x`` under a sign, ``a + (-b)`` -> ``a - b``,
    ``a - (-b)`` -> ``a + b``, ``a + (-k) * x`` -> ``a - k * x``. Each is exact (IEEE defines ``a - b`` as ``a + (-b)``); code generation
    applies it after putting loop counters such as ``-c0`` in place of a statement's iterators, so that
    ``-i`` with ``i = -c0`` prints as ``c0``, never as C's decrement ``--c0``."""
    out = None
    while True:
        match e:
            case Unary(op="-", operand=Unary(op="-" | "+") | Binary(op="*", left=Unary(op="-"))):
                e = negated(e.operand)
            case Unary(op="+", operand=Unary(op="-" | "+") as o):
                e = o
            case Binary(op="+" | "-", left=a, right=Unary(op="-", operand=b)):
                e = Binary("-" if e.op == "+" else "+", a, b)
            case Binary(op="+" | "-", left=a, right=Binary(op="*", left=Unary(op="-", operand=k), right=x)):
                e = Binary("-" if e.op == "+" else "+", a, Binary("*", k, x))
            case _:
                return out
        out = e


def _prec(e: Expr) -> int:
    match e:
        case Binary(op=op):
            return _PRECEDENCE[op]
        case Cond():
            return _PRECEDENCE["?:"]
        case Unary() | Cast():
            return _PRECEDENCE["unary"]
        case ArrayRef() | Call():
            return _PRECEDENCE["postfix"]
        case _:
            return _PRECEDENCE["atom"]


def to_c(e: Expr, names: Mapping[str, str] | None = None,
         array_ref: Callable[[ArrayRef, Callable[[Expr], str]], str | None] | None = None) -> str:
    """Print ``e`` as C.

    A sign before a signed operand is parenthesised (``-(-x)``), so the text never holds C's ``--`` or
    ``++``. ``names`` renames scalar names (iterators to generated code's expressions: a replacement that is not a
    plain identifier is parenthesised). ``array_ref(ref, print)`` may return the text for an array
    reference (storage contraction uses it to print ``xbuf[(i) % 2][j][k]``); None keeps the default.
    """
    names = names or {}

    def p(x: Expr) -> str:
        match x:
            case Const(text=t):
                return t
            case Name(name=n):
                r = names.get(n, n)
                return r if r.isidentifier() or _is_number(r) else f"({r})"
            case ArrayRef(array=a, indices=idx):
                if array_ref is not None:
                    custom = array_ref(x, p)
                    if custom is not None:
                        return custom
                return a + "".join(f"[{p(i)}]" for i in idx)
            case Unary(op=op, operand=o):
                inner = wrap(o, _PRECEDENCE["unary"], False)
                if op in ("-", "+") and inner.startswith(("-", "+")):
                    inner = f"({inner})"  # never the tokens -- or ++ (a decrement, an increment)
                return f"{op}{inner}"
            case Cast(ctype=t, operand=o):
                return f"({t}){wrap(o, _PRECEDENCE['unary'], False)}"
            case Binary(op=op, left=a, right=b):
                pr = _PRECEDENCE[op]
                return f"{wrap(a, pr, False)} {op} {wrap(b, pr, True)}"
            case Call(func=f, args=args):
                return f"{f}({', '.join(p(a) for a in args)})"
            case Cond(cond=c, then=t, other=o):
                pr = _PRECEDENCE["?:"]
                return f"{wrap(c, pr + 1, False)} ? {p(t)} : {wrap(o, pr, False)}"
        raise TypeError(f"not an expression: {x!r}")

    def wrap(x: Expr, outer: int, right: bool) -> str:
        s = p(x)
        inner = _prec(x)
        if inner < outer or (right and inner == outer):
            return f"({s})"
        if isinstance(x, Const) and x.text.startswith("-") and outer >= _PRECEDENCE["unary"]:
            return f"({s})"
        return s

    return p(e)


def assignment_to_c(a: Assignment, names: Mapping[str, str] | None = None,
                    array_ref: Callable[[ArrayRef, Callable[[Expr], str]], str | None] | None = None
                    ) -> str:
    """``target op value;`` as C, with the same renaming options as :func:`to_c`."""
    return f"{to_c(a.target, names, array_ref)} {a.op} {to_c(a.value, names, array_ref)};"


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return not s.startswith("-")
