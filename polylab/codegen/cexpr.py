"""Printing isl AST expressions as C with the fewest parentheses.

Integer division follows isl's meaning of each operation: ``fdiv_q`` (floor of ``a / b``, ``b > 0``) is
printed as ``polylab_ifloord(a, b)``, defined in the prelude as a branch on the sign of ``a`` (``min`` and ``max``
as ``polylab_imin`` / ``polylab_imax``: the helpers of generated bounds carry polylab's prefix, so a program's
parameter or array named ``max``, ``min`` or ``floord`` cannot hide them); ``pdiv_q``/``pdiv_r``
(non-negative dividend) and ``div`` (exact) are C's ``/`` and ``%``; ``zdiv_r`` is C's ``%`` (isl only
compares it with zero, where C's truncating remainder gives the same answer).
"""

from __future__ import annotations

from typing import Mapping

from polylab.codegen.ast import AExpr, Id, Int, Op

_BINARY = {"add": ("+", 10), "sub": ("-", 10), "mul": ("*", 11), "div": ("/", 11), "pdiv_q": ("/", 11),
           "pdiv_r": ("%", 11), "zdiv_r": ("%", 11), "and": ("&&", 3), "and_then": ("&&", 3),
           "or": ("||", 2), "or_else": ("||", 2), "eq": ("==", 7), "le": ("<=", 8), "lt": ("<", 8),
           "ge": (">=", 8), "gt": (">", 8)}
_ATOM, _UNARY, _COND = 14, 12, 1

def _source_helpers(names: tuple[str, ...]) -> str:
    """Guarded C macros for ``names`` among :data:`SOURCE_CALLS`."""
    out = [("/* polylab: the functions a loop nest may call in its bounds and statements, which C does not define"
            " (each argument is read twice: a static control part's expressions have no side effects) */")]
    for name in names:
        args, body = SOURCE_CALLS[name]
        out += [f"#ifndef {name}", f"#define {name}({args}) ({body})", "#endif"]
    return "\n".join(out) + "\n"


#: the functions a loop nest's own text may call (:data:`polylab.frontend.affine.MINMAX_FUNCS`), as C
#: macros: ``min`` and ``max`` type-generic as a reader of the source expects (of two ``double`` values a
#: ``double``, of two ``int`` values an ``int``: C's usual arithmetic conversions), ``floord``/``ceild``
#: (and ``floor_div``/``ceil_div``) the integer floor and ceiling of ``a / b`` for ``b > 0``
_MIN, _MAX = ("a, b", "(a) < (b) ? (a) : (b)"), ("a, b", "(a) > (b) ? (a) : (b)")
_FLOOR = ("a, b", "(a) >= 0 ? (a) / (b) : -((-(a) + (b) - 1) / (b))")
_CEIL = ("a, b", "(a) >= 0 ? ((a) + (b) - 1) / (b) : -(-(a) / (b))")
SOURCE_CALLS = {"min": _MIN, "max": _MAX, "MIN": _MIN, "MAX": _MAX, "floord": _FLOOR, "floor_div": _FLOOR,
                "ceild": _CEIL, "ceil_div": _CEIL}

#: :data:`SOURCE_CALLS` as C text, for the original program and every variant (a program's own macro of
#: the same name wins: each is guarded)
SOURCE_HELPERS = _source_helpers(tuple(SOURCE_CALLS))

#: C definitions of the helper functions the printed expressions use: the loop nest's own
#: (:data:`SOURCE_HELPERS`) and those of the generated bounds (``polylab_i*``, integer arguments)
C_HELPERS = SOURCE_HELPERS + """\
static inline int polylab_imin(int a, int b) { return a < b ? a : b; }
static inline int polylab_imax(int a, int b) { return a > b ? a : b; }
static inline int polylab_ifloord(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
"""

#: the same helpers for CUDA, whose headers already define ``min`` and ``max`` on host and device
CUDA_HELPERS = _source_helpers(tuple(n for n in SOURCE_CALLS if n not in ("min", "max"))) + """\
#define polylab_ifloord(a, b) ((a) >= 0 ? (a) / (b) : -((-(a) + (b) - 1) / (b)))
#define polylab_imin(a, b) ((a) < (b) ? (a) : (b))
#define polylab_imax(a, b) ((a) > (b) ? (a) : (b))
"""

#: the name each helper of the generated bounds is printed with
HELPER_NAMES = {"min": "polylab_imin", "max": "polylab_imax", "fdiv_q": "polylab_ifloord"}


def c_expr(e: AExpr, names: Mapping[str, str] | None = None) -> str:
    """``e`` as C; ``names`` renames identifiers (for example host iterators passed to a kernel).

    Signs are normalised first (:func:`signs_normalised`) and a sign before a signed operand is
    parenthesised, so the text never holds C's ``--`` or ``++`` nor a negation of a negation."""
    return _p(signs_normalised(e), names or {})[0]


def signs_normalised(e: AExpr) -> AExpr:
    """``e`` with no sign meeting a sign (integer arithmetic, so each rewrite is exact): ``-(-x)`` -> ``x``,
    ``-(k)`` -> ``-k`` for a literal, ``-(a + b)`` -> ``-a - b``, ``-(a - b)`` -> ``b - a``, ``-(k * x)`` ->
    ``(-k) * x``, ``a + (-b)`` -> ``a - b``, ``a - (-b)`` -> ``a + b``, ``a + (-k)`` -> ``a - k`` and
    ``a - (-k)`` -> ``a + k`` for a negative literal, and ``a + (-k) * x`` -> ``a - k * x``."""
    if not isinstance(e, Op):
        return e
    args = tuple(signs_normalised(a) for a in e.args)
    match e.op, args:
        case "minus", (Op(op="minus", args=(x,)),):
            return x
        case "minus", (Int(value=v),):
            return Int(-v)
        case "minus", (Op(op="add", args=(a, b)),):
            return signs_normalised(Op("sub", (Op("minus", (a,)), b)))
        case "minus", (Op(op="sub", args=(a, b)),):
            return Op("sub", (b, a))
        case "minus", (Op(op="mul", args=(Int(value=k), x)),):
            return Op("mul", (Int(-k), x))
        case ("add" | "sub") as op, (a, Op(op="minus", args=(b,))):
            return Op("sub" if op == "add" else "add", (a, b))
        case ("add" | "sub") as op, (a, Int(value=v)) if v < 0:
            return Op("sub" if op == "add" else "add", (a, Int(-v)))
        case ("add" | "sub") as op, (a, Op(op="mul", args=(Int(value=k), x))) if k < 0:
            return Op("sub" if op == "add" else "add", (a, Op("mul", (Int(-k), x))))
    return Op(e.op, args)


def _p(e: AExpr, names: Mapping[str, str]) -> tuple[str, int]:
    match e:
        case Int(value=v):
            return (str(v), _ATOM) if v >= 0 else (str(v), _UNARY)
        case Id(name=n):
            return names.get(n, n), _ATOM
        case Op(op="minus", args=(a,)):
            s, pa = _p(a, names)
            return "-" + (s if pa > _UNARY and not s.startswith(("-", "+")) else f"({s})"), _UNARY
        case Op(op=("min" | "max") as f, args=args):
            out = _p(args[-1], names)[0]
            for a in reversed(args[:-1]):
                out = f"{HELPER_NAMES[f]}({_p(a, names)[0]}, {out})"
            return out, _ATOM
        case Op(op="fdiv_q", args=(a, b)):
            return f"{HELPER_NAMES['fdiv_q']}({_p(a, names)[0]}, {_p(b, names)[0]})", _ATOM
        case Op(op=("cond" | "select"), args=(c, t, o)):
            sc, pc = _p(c, names)
            st = _p(t, names)[0]
            so, po = _p(o, names)
            return (f"{sc if pc > _COND else '(' + sc + ')'} ? {st} : "
                    f"{so if po >= _COND else '(' + so + ')'}"), _COND
        case Op(op=op, args=(a, b)) if op in _BINARY:
            sym, prec = _BINARY[op]
            sa, pa = _p(a, names)
            sb, pb = _p(b, names)
            if pa < prec:
                sa = f"({sa})"
            if pb <= prec:
                sb = f"({sb})"
            if op in ("add", "sub") and sb.startswith("-"):
                sb = f"({sb})"
            if op in ("or", "or_else"):   # a && b || c is C, but gcc -Wall asks for the parentheses
                sa = f"({sa})" if pa == _BINARY["and"][1] else sa
                sb = f"({sb})" if pb == _BINARY["and"][1] and not sb.startswith("(") else sb
            return f"{sa} {sym} {sb}", prec
    raise ValueError(f"cannot print {e!r} as C")
