"""Array extents as exact integers, and as isl functions of the parameters.

An :class:`~polylab.model.scop.Array` carries its extents as C expressions (``"2 * N + 6"``, ``"400"``, or
an expression of isl's AST such as ``"max(N, M) + 1"`` for extents inferred from the accesses). The harness
allocates ``extent_0 * extent_1 * ...`` elements; before anything is built, the experiment layer needs the
same numbers exactly, and the symbolic extents to ask isl whether an access can leave its array.

* :func:`extent_values` evaluates the extents at concrete parameter values with C's integer semantics
  (``/`` and ``%`` truncate toward zero, comparisons give 0 or 1, ``floord(a, b)`` is
  :math:`\\lfloor a / b \\rfloor`), over Python integers, so nothing overflows;
* :func:`extent_functions` gives each extent as an isl piecewise quasi-affine function of the parameters
  (``[N] -> { [(6 + 2N)] }``) when it is one (sums, products by constants, ``max``, ``min``); ``None``
  when some extent is not (a product of two parameters, a division).

Names in an extent are the SCoP's parameters and its named constants (``Scop.constants``).
"""

from __future__ import annotations

from collections.abc import Mapping

import islpy as isl
from pycparser import c_ast
from pycparser.c_parser import CParser, ParseError

from polylab.errors import CodegenError
from polylab.model.scop import Array, Scop
from polylab.model.islutil import isl_identifier, restore_identifiers
from polylab.model.memo import memo

__all__ = ["extent_box", "extent_functions", "extent_values"]


@memo("codegen.extent_ast", maxsize=512, named=())
def _parse(text: str) -> c_ast.Node:
    try:
        unit = CParser().parse(f"int polylab_extent = ({text});", "<extent>")
    except ParseError as exc:
        raise CodegenError(f"the array extent {text!r} is not a C expression polylab can read ({exc})") from None
    decl = unit.ext[0]
    assert isinstance(decl, c_ast.Decl) and decl.init is not None
    return decl.init


def _int_literal(text: str) -> int:
    digits = text.rstrip("uUlL")
    if digits.startswith(("0x", "0X")):
        return int(digits, 16)
    if len(digits) > 1 and digits.startswith("0"):
        return int(digits, 8)
    return int(digits)


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _eval(node: c_ast.Node, names: Mapping[str, int], text: str) -> int:
    """The value of an integer C expression (Python integers: exact, never overflowing)."""

    def ev(n: c_ast.Node) -> int:
        return _eval(n, names, text)

    match node:
        case c_ast.Constant(type=t, value=v) if "int" in t or t in ("long", "unsigned"):
            return _int_literal(v)
        case c_ast.ID(name=n) if n in names:
            return names[n]
        case c_ast.UnaryOp(op="-", expr=e):
            return -ev(e)
        case c_ast.UnaryOp(op="+", expr=e):
            return ev(e)
        case c_ast.UnaryOp(op="!", expr=e):
            return int(ev(e) == 0)
        case c_ast.Cast(expr=e):
            return ev(e)
        case c_ast.TernaryOp(cond=c, iftrue=t, iffalse=f):
            return ev(t) if ev(c) != 0 else ev(f)
        case c_ast.FuncCall(name=c_ast.ID(name=fn), args=c_ast.ExprList(exprs=args)) if fn in _CALLS:
            return _CALLS[fn](*(ev(a) for a in args))
        case c_ast.BinaryOp(op=op, left=a, right=b) if op in _BINARY:
            x, y = ev(a), ev(b)
            if op in ("/", "%") and y == 0:
                raise CodegenError(f"the array extent {text!r} divides by zero at these parameter values")
            return _BINARY[op](x, y)
        case c_ast.ID(name=n):
            raise CodegenError(f"the array extent {text!r} uses {n!r}, which is neither a parameter nor a "
                               "named constant of the SCoP")
    raise CodegenError(f"the array extent {text!r} is not an integer expression polylab can evaluate")


_BINARY = {
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
    "/": _c_div, "%": lambda x, y: x - _c_div(x, y) * y,
    "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y), ">": lambda x, y: int(x > y),
    ">=": lambda x, y: int(x >= y), "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
    "&&": lambda x, y: int(x != 0 and y != 0), "||": lambda x, y: int(x != 0 or y != 0),
}
_CALLS = {"max": max, "min": min, "floord": lambda a, b: a // b}


def extent_values(scop: Scop, array: Array, values: Mapping[str, int]) -> tuple[int, ...]:
    """The extents of ``array`` at the parameter ``values`` (exact integers; may be negative).

    Raises :class:`~polylab.errors.CodegenError` when an extent uses a name without a value or an
    operation outside integer C arithmetic."""
    names = {**dict(scop.constants), **{k: int(v) for k, v in values.items()}}
    return tuple(_eval(_parse(e), names, e) for e in array.extents)


def _isl_text(node: c_ast.Node, params: frozenset[str], constants: Mapping[str, int]) -> str | None:
    """``node`` in isl's syntax when it is quasi-affine in ``params`` (None otherwise)."""

    def sub(n: c_ast.Node) -> str | None:
        return _isl_text(n, params, constants)

    match node:
        case c_ast.Constant(type=t, value=v) if "int" in t or t in ("long", "unsigned"):
            return str(_int_literal(v))
        case c_ast.ID(name=n) if n in params:
            return isl_identifier(n)
        case c_ast.ID(name=n) if n in constants:
            return str(constants[n])
        case c_ast.UnaryOp(op="-", expr=e):
            inner = sub(e)
            return None if inner is None else f"(-({inner}))"
        case c_ast.UnaryOp(op="+", expr=e) | c_ast.Cast(expr=e):
            return sub(e)
        case c_ast.FuncCall(name=c_ast.ID(name=("max" | "min") as fn), args=c_ast.ExprList(exprs=[a, b])):
            x, y = sub(a), sub(b)
            return None if x is None or y is None else f"{fn}({x}, {y})"
        case c_ast.BinaryOp(op=("+" | "-") as op, left=a, right=b):
            x, y = sub(a), sub(b)
            return None if x is None or y is None else f"({x}) {op} ({y})"
        case c_ast.BinaryOp(op="*", left=a, right=b):
            x, y = sub(a), sub(b)
            if x is None or y is None:
                return None
            if x.lstrip("-").isdigit() or y.lstrip("-").isdigit():  # a product by a constant stays affine
                return f"({x}) * ({y})"
    return None


def _extent_texts(scop: Scop, array: Array) -> list[str] | None:
    out = []
    for e in array.extents:
        try:
            text = _isl_text(_parse(e), frozenset(scop.parameters), dict(scop.constants))
        except CodegenError:
            return None
        if text is None:
            return None
        out.append(text)
    return out


def extent_functions(scop: Scop, array: Array) -> tuple[isl.PwAff, ...] | None:
    """The extents of ``array`` as isl functions of the SCoP's parameters, or None when one of them is not
    quasi-affine (then only :func:`extent_values` at concrete values can be used)."""
    texts = _extent_texts(scop, array)
    if texts is None:
        return None
    prefix = f"[{', '.join(map(isl_identifier, scop.parameters))}] -> " if scop.parameters else ""
    try:
        return tuple(restore_identifiers(isl.PwAff(f"{prefix}{{ [({t})] }}")) for t in texts)
    except isl.Error:
        return None


def extent_box(scop: Scop, array: Array) -> isl.Set | None:
    """``[params] -> { A[e_0, ...] : 0 <= e_k < extent_k }``: the elements ``array`` has, as a function of
    the parameters; None when an extent is not quasi-affine."""
    texts = _extent_texts(scop, array)
    if texts is None or not texts:
        return None
    prefix = f"[{', '.join(map(isl_identifier, scop.parameters))}] -> " if scop.parameters else ""
    names = [f"e{k}" for k in range(len(texts))]
    cond = " and ".join(f"0 <= {n} < ({t})" for n, t in zip(names, texts))
    try:
        return restore_identifiers(isl.Set(f"{prefix}{{ {array.name}[{', '.join(names)}] : {cond} }}"))
    except isl.Error:
        return None
