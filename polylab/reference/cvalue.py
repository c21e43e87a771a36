"""C arithmetic on Python values, the way a C compiler evaluates a statement body.

Used by the storage layer to decide whether an expression is a constant (and which value it stores into an
element of a given type) and by the reference interpreter (:mod:`polylab.reference.interpret`), so both
evaluate exactly alike. :func:`parse_expr` reads a C-like expression (the test builder's statement bodies,
the initial values given to ``fold_live_ins``). Types follow C's usual
arithmetic conversions: ``int`` values are Python ints (C division and remainder truncate toward zero),
``float`` values are ``numpy.float32`` and ``double`` values ``numpy.float64``, so float arithmetic is
rounded exactly as in single precision. Nothing is reassociated: the tree is evaluated as written.
"""

from __future__ import annotations

import ast
import math
from typing import Callable, Mapping

import numpy as np

from polylab.errors import ModelError
from polylab.model.expr import ArrayRef, Binary, Call, Cast, Cond, Const, Expr, Name, Unary, transform

FLOAT_TYPES = {"float": np.float32, "double": np.float64, "long double": np.float64}
INT_TYPES = {"int", "long", "long long", "short", "char", "unsigned", "unsigned int", "size_t",
             "long int", "unsigned long", "bool", "_Bool"}


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}


def parse_expr(text: str) -> Expr:
    """A C-like expression (the common subset of C and Python) as an expression tree."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ModelError(f"cannot parse the expression {text!r}: {exc.msg}") from None

    def conv(n: ast.AST) -> Expr:
        match n:
            case ast.Constant(value=bool()):
                raise ModelError(f"unsupported constant in {text!r}")
            case ast.Constant(value=int() as v):
                return Const(str(v), "int")
            case ast.Constant(value=float() as v):
                return Const(repr(v), "double")
            case ast.Name(id=i):
                return Name(i)
            case ast.UnaryOp(op=ast.USub(), operand=o):
                return Unary("-", conv(o))
            case ast.UnaryOp(op=ast.UAdd(), operand=o):
                return conv(o)
            case ast.BinOp(op=op, left=a, right=b) if type(op) in _BINOPS:
                return Binary(_BINOPS[type(op)], conv(a), conv(b))
            case ast.Call(func=ast.Name(id="f32"), args=[a]):
                return transform(conv(a), lambda x: Const(f"{float(x.text)!r}f", "float")
                                 if isinstance(x, Const) else None)
            case ast.Call(func=ast.Name(id=("float" | "double" | "int") as t), args=[a]):
                return Cast(t, conv(a))
            case ast.Call(func=ast.Name(id=f), args=args):
                return Call(f, tuple(conv(a) for a in args))
            case ast.Subscript():
                idx: list[Expr] = []
                cur: ast.AST = n
                while isinstance(cur, ast.Subscript):
                    sl = cur.slice
                    parts = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
                    idx = [conv(p) for p in parts] + idx
                    cur = cur.value
                if not isinstance(cur, ast.Name):
                    raise ModelError(f"unsupported array reference in {text!r}")
                return ArrayRef(cur.id, tuple(idx), -1)
        raise ModelError(f"unsupported construct in {text!r}: {ast.dump(n)[:60]}")

    return conv(node)


class NotConstant(Exception):
    """The expression reads something that is not a constant (an array element, an iterator, ...)."""


def convert(value, ctype: str):
    """``(ctype) value`` as C converts on assignment."""
    ctype = ctype.replace("const ", "").strip()
    if ctype in FLOAT_TYPES:
        return FLOAT_TYPES[ctype](value)
    if isinstance(value, (np.floating, float)):
        return int(math.trunc(float(value)))
    return int(value)


def const_value(c: Const):
    """The value of a literal, typed by its ``ctype`` (``1.0f``: float, ``1.0``: double, ``3``: int)."""
    text = c.text.strip()
    low = text.lower()
    hexa = low.lstrip("+-").startswith("0x")
    if c.ctype in FLOAT_TYPES or (not hexa and ("." in low or "e" in low or low.endswith("f"))):
        body = text.rstrip("fFlL") if not hexa else text
        ctype = c.ctype if c.ctype in FLOAT_TYPES else ("float" if low.endswith("f") else "double")
        return FLOAT_TYPES[ctype](body)
    body = text.rstrip("uUlL")
    if len(body) > 1 and body.startswith("0") and body.isdigit():
        return int(body, 8)
    return int(body, 0)


def _is_float(v) -> bool:
    return isinstance(v, (np.floating, float))


def _promote(a, b):
    if _is_float(a) or _is_float(b):
        wide = np.float64 if (isinstance(a, np.float64) or isinstance(b, np.float64)
                              or isinstance(a, float) or isinstance(b, float)) else np.float32
        return wide(a), wide(b)
    return int(a), int(b)


def binary(op: str, a, b):
    """``a op b`` with C's usual arithmetic conversions."""
    if op in ("&&", "||"):
        return int(bool(a) and bool(b)) if op == "&&" else int(bool(a) or bool(b))
    a, b = _promote(a, b)
    match op:
        case "+":
            return a + b
        case "-":
            return a - b
        case "*":
            return a * b
        case "/":
            if _is_float(a):
                with np.errstate(all="ignore"):
                    return a / b
            if b == 0:
                raise ZeroDivisionError("integer division by zero")
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        case "%":
            if b == 0:
                raise ZeroDivisionError("integer remainder by zero")
            r = abs(a) % abs(b)
            return r if a >= 0 else -r
        case "<":
            return int(a < b)
        case "<=":
            return int(a <= b)
        case ">":
            return int(a > b)
        case ">=":
            return int(a >= b)
        case "==":
            return int(a == b)
        case "!=":
            return int(a != b)
        case "<<":
            return a << b
        case ">>":
            return a >> b
        case "&":
            return a & b
        case "|":
            return a | b
        case "^":
            return a ^ b
    raise NotConstant(f"operator {op!r}")


_MATH = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "fabs": np.abs, "floor": np.floor, "ceil": np.ceil, "pow": np.power, "fmax": np.fmax,
         "fmin": np.fmin, "tanh": np.tanh, "atan": np.arctan}


def evaluate(e: Expr, names: Callable[[str], object] | Mapping[str, object] | None = None,
             load: Callable[[ArrayRef, list], object] | None = None,
             element_type: Callable[[ArrayRef], str] | None = None):
    """The value of ``e``; ``names(n)`` gives a scalar's value and ``load(ref, indices)`` an element's.

    Without them, any name or array reference raises :class:`NotConstant`. As in C, only the arm of
    ``c ? t : f`` that ``c`` selects is evaluated, and ``&&`` / ``||`` evaluate their right operand only
    when the left one does not decide: an element the program does not read is not loaded, and an
    arithmetic error in an arm that does not run does not happen. The value of ``?:`` has the type of
    both arms after C's usual arithmetic conversions; the other arm's type is found without evaluating it
    (:func:`static_type`, with ``element_type(ref)``: the C type of an array's elements).
    """
    def name_value(n: str):
        if names is None:
            raise NotConstant(f"the name {n!r}")
        if callable(names):
            return names(n)
        if n not in names:
            raise NotConstant(f"the name {n!r}")
        return names[n]

    def ev(x: Expr):
        match x:
            case Const():
                return const_value(x)
            case Name(name=n):
                return name_value(n)
            case ArrayRef():
                if load is None:
                    raise NotConstant(f"the array element {x.array}[...]")
                return load(x, [ev(i) for i in x.indices])
            case Unary(op=op, operand=o):
                v = ev(o)
                if op == "-":
                    return -v
                if op == "+":
                    return v
                if op == "!":
                    return int(not v)
                if op == "~":
                    return ~int(v)
                raise NotConstant(f"operator {op!r}")
            case Cast(ctype=t, operand=o):
                return convert(ev(o), t)
            case Binary(op=op, left=a, right=b):
                if op == "&&":
                    return int(bool(ev(a)) and bool(ev(b)))
                if op == "||":
                    return int(bool(ev(a)) or bool(ev(b)))
                return binary(op, ev(a), ev(b))
            case Cond(cond=c, then=t, other=o):
                value = ev(t) if ev(c) else ev(o)
                common = _wider(static_type(t, name_value, element_type), static_type(o, name_value, element_type))
                return convert(value, common)
            case Call(func=f, args=args):
                vals = [ev(a) for a in args]
                single = f.endswith("f") and f[:-1] in _MATH
                fn = _MATH.get(f[:-1] if single else f)
                if fn is None:
                    raise NotConstant(f"the call {f}()")
                typ = np.float32 if single else np.float64
                with np.errstate(all="ignore"):
                    return typ(fn(*[typ(v) for v in vals]))
        raise NotConstant(repr(x))

    return ev(e)


def literal(value, ctype: str) -> Const:
    """A C literal whose value, stored in an element of type ``ctype``, is exactly ``value``.

    ``float``: the shortest decimal that rounds to the same single-precision number, with suffix ``f``;
    ``double``: the shortest round-tripping decimal; integers: the decimal integer.
    """
    ctype = ctype.replace("const ", "").strip()
    if ctype == "float":
        v = np.float32(value)
        text = np.format_float_positional(v, unique=True, trim="0") if abs(v) < 1e16 and (
            v == 0 or abs(v) >= 1e-5) else np.format_float_scientific(v, unique=True, trim="0")
        return Const(text + "f", "float")
    if ctype in FLOAT_TYPES:
        v = np.float64(value)
        text = np.format_float_positional(v, unique=True, trim="0") if abs(v) < 1e16 and (
            v == 0 or abs(v) >= 1e-5) else np.format_float_scientific(v, unique=True, trim="0")
        return Const(text, "double")
    return Const(str(int(value)), "int")


def literal_value(c: Const) -> float:
    """The numeric value of a literal (for tests and displays)."""
    return float(const_value(c))


def bits(value: object) -> object:
    """The bit pattern of a value (floats compared bit for bit, so -0.0 != 0.0 and NaN == NaN)."""
    if isinstance(value, np.floating):
        return value.tobytes()
    return value


def _type_of_value(v) -> str:
    if isinstance(v, np.float32):
        return "float"
    return "double" if _is_float(v) else "int"


def _wider(a: str, b: str) -> str:
    """The type of ``a op b`` after C's usual arithmetic conversions (among int, float and double)."""
    return "double" if "double" in (a, b) else "float" if "float" in (a, b) else "int"


def static_type(e: Expr, names: Callable[[str], object] | None = None,
                element_type: Callable[[ArrayRef], str] | None = None) -> str:
    """The C type of ``e`` (``int``, ``float`` or ``double``) without evaluating it (a name's type is its
    value's, an element's ``element_type(ref)``; without it, an element counts as ``double``)."""
    def ty(x: Expr) -> str:
        match x:
            case Const():
                return _type_of_value(const_value(x))
            case Name(name=n):
                return _type_of_value(names(n)) if names is not None else "int"
            case ArrayRef():
                t = element_type(x).replace("const ", "").strip() if element_type is not None else "double"
                return t if t in ("float", "double") else "double" if t in FLOAT_TYPES else "int"
            case Unary(op="!" | "~"):
                return "int"
            case Unary(operand=o):
                return ty(o)
            case Cast(ctype=t):
                t = t.replace("const ", "").strip()
                return t if t in ("float", "double") else "double" if t in FLOAT_TYPES else "int"
            case Binary(op="+" | "-" | "*" | "/" | "%", left=a, right=b):
                return _wider(ty(a), ty(b))
            case Binary():
                return "int"  # comparisons, logic, shifts and bit operations of integers
            case Cond(then=t, other=o):
                return _wider(ty(t), ty(o))
            case Call(func=f):
                return "float" if f.endswith("f") and f[:-1] in _MATH else "double"
        return "double"

    return ty(e)
