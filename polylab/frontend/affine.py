"""C expressions to exact isl objects: quasi-affine expressions to ``PwAff``, conditions to ``Set``.

Every expression lives on one space: the parameters of the region and the iterators of the enclosing loops
(outermost first). The translation is exact:

* ``a + b``, ``a - b``, ``-a``, ``c * a`` (one factor constant);
* ``a / c`` and ``a % c`` for an integer constant ``c != 0`` follow C's truncation:
  ``tdiv_q(a, |c|) * sign(c)`` and ``tdiv_r(a, |c|)`` (the remainder has the sign of ``a``);
* ``cond ? a : b`` with an affine ``cond`` is the piecewise expression ``a`` on ``cond`` and ``b`` elsewhere;
  ``min``/``max``/``MIN``/``MAX`` calls are the piecewise minimum/maximum, ``floord``/``ceild`` floor and
  ceiling division by a positive constant;
* conditions: comparisons become ``lt_set``/``le_set``/``eq_set``/``ne_set``..., ``&&`` intersection,
  ``||`` union, ``!`` complement; an expression ``e`` used as a condition means ``e != 0``.
"""

from __future__ import annotations

from typing import Callable

import islpy as isl
from pycparser import c_ast

from polylab.errors import NotAffineError

#: resolve(name, node) -> ("iter", position) | ("param", position) | ("const", value); raises otherwise
Resolver = Callable[[str, c_ast.Node], tuple[str, int]]

_COMPARE = {"<": "lt_set", "<=": "le_set", ">": "gt_set", ">=": "ge_set", "==": "eq_set", "!=": "ne_set"}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
MINMAX_FUNCS = {"min": "min", "MIN": "min", "max": "max", "MAX": "max", "floord": "floord",
                "ceild": "ceild", "ceil_div": "ceild", "floor_div": "floord"}


def int_literal(text: str) -> int | None:
    """The value of a C integer literal (decimal, hex, octal, with suffixes), or None."""
    t = text.rstrip("uUlL")
    try:
        if t.lower().startswith("0x"):
            return int(t, 16)
        if len(t) > 1 and t.startswith("0") and t.isdigit():
            return int(t, 8)
        return int(t)
    except ValueError:
        return None


#: the range of C's ``long long``: an integer constant outside it is refused (C has no wider integer type)
LONG_LONG_MIN, LONG_LONG_MAX = -2 ** 63, 2 ** 63 - 1


def int_val(v: int, ctx: isl.Context = isl.DEFAULT_CONTEXT) -> isl.Val:
    """The exact isl value of a Python integer of any size (``int_from_si`` stops at 64 bits)."""
    return isl.Val.read_from_str(ctx, str(int(v)))


class AffineBuilder:
    """Builds ``PwAff`` / ``Set`` objects on ``space`` (a set space: parameters and iterators)."""

    def __init__(self, space: isl.Space, resolve: Resolver, show: Callable[[c_ast.Node], str],
                 locate: Callable[[c_ast.Node, str], object]) -> None:
        self.space = space
        self.ls = isl.LocalSpace.from_space(space)
        self.resolve = resolve
        self.show = show
        self.locate = locate

    # -- helpers -----------------------------------------------------------------------------------------
    def error(self, node: c_ast.Node, reason: str, hint: str | None = None) -> NotAffineError:
        return NotAffineError(reason, location=self.locate(node, self.show(node)), hint=hint)

    def const(self, v: int) -> isl.PwAff:
        aff = isl.Aff.zero_on_domain(self.ls).set_constant_val(int_val(v, self.space.get_ctx()))
        return isl.PwAff.from_aff(aff)

    def var(self, kind: str, pos: int) -> isl.PwAff:
        t = isl.dim_type.set if kind == "iter" else isl.dim_type.param
        return isl.PwAff.from_aff(isl.Aff.var_on_domain(self.ls, t, pos))

    def universe(self) -> isl.Set:
        return isl.Set.universe(self.space)

    @staticmethod
    def constant_value(pa: isl.PwAff) -> int | None:
        """The integer value of a constant expression, else None."""
        if not pa.is_cst():
            return None
        vals: list = []
        pa.foreach_piece(lambda _s, aff: vals.append(aff.get_constant_val()))
        if len(vals) != 1 or not vals[0].is_int():
            return None
        return int(vals[0].to_python())

    # -- expressions -------------------------------------------------------------------------------------
    def expr(self, node: c_ast.Node) -> isl.PwAff:
        match node:
            case c_ast.Constant(type=t, value=v):
                val = int_literal(v) if t in ("int", "long", "unsigned int", "long int") or t.endswith("int") \
                    else None
                if t == "char":
                    val = None
                if val is None:
                    raise self.error(node, f"{v} is not an integer constant",
                                     hint="bounds, conditions and subscripts must be integer expressions")
                if not LONG_LONG_MIN <= val <= LONG_LONG_MAX:
                    raise self.error(node, f"the integer constant {v} does not fit in 64 bits (C's long long "
                                           f"holds at most {LONG_LONG_MAX})",
                                     hint="use a smaller bound or step")
                return self.const(val)
            case c_ast.ID(name=name):
                kind, pos = self.resolve(name, node)
                if kind == "const":
                    return self.const(pos)
                return self.var(kind, pos)
            case c_ast.UnaryOp(op="-", expr=e):
                return self.expr(e).neg()
            case c_ast.UnaryOp(op="+", expr=e):
                return self.expr(e)
            case c_ast.Cast(to_type=tt, expr=e):
                names = type_names(tt)
                if names and not any(x in ("float", "double") for x in names) and "*" not in names:
                    return self.expr(e)
                raise self.error(node, "a cast to a non-integer type is not affine")
            case c_ast.BinaryOp(op="+", left=a, right=b):
                return self.expr(a).add(self.expr(b))
            case c_ast.BinaryOp(op="-", left=a, right=b):
                return self.expr(a).sub(self.expr(b))
            case c_ast.BinaryOp(op="*", left=a, right=b):
                pa, pb = self.expr(a), self.expr(b)
                if not pa.is_cst() and not pb.is_cst():
                    raise self.error(node, f"the product {self.show(node)} of two variables is not affine",
                                     hint="subscripts, bounds and conditions may multiply a variable only "
                                          "by a constant")
                return pa.mul(pb)
            case c_ast.BinaryOp(op=("/" | "%") as op, left=a, right=b):
                pa, pb = self.expr(a), self.expr(b)
                c = self.constant_value(pb)
                if c is None:
                    raise self.error(node, f"division by the non-constant {self.show(b)} is not affine",
                                     hint="integer division and modulo are affine only by a constant")
                if c == 0:
                    raise self.error(node, "division by zero")
                cabs = self.const(abs(c))
                if op == "/":
                    q = pa.tdiv_q(cabs)
                    return q if c > 0 else q.neg()
                return pa.tdiv_r(cabs)
            case c_ast.TernaryOp(cond=c, iftrue=t, iffalse=f):
                s = self.cond(c)
                return self.select(s, self.expr(t), self.expr(f))
            case c_ast.FuncCall(name=c_ast.ID(name=fname)) if fname in MINMAX_FUNCS:
                args = node.args.exprs if node.args is not None else []
                if len(args) != 2:
                    raise self.error(node, f"{fname} takes two arguments")
                pa, pb = self.expr(args[0]), self.expr(args[1])
                kind = MINMAX_FUNCS[fname]
                if kind == "min":
                    return pa.min(pb)
                if kind == "max":
                    return pa.max(pb)
                c = self.constant_value(pb)
                if c is None or c <= 0:
                    raise self.error(node, f"{fname} needs a positive constant divisor")
                q = pa.scale_down_val(int_val(c, self.space.get_ctx()))
                return q.floor() if kind == "floord" else q.ceil()
            case c_ast.FuncCall(name=c_ast.ID(name=fname)):
                raise self.error(node, f"the call {fname}(...) is not an affine expression",
                                 hint="bounds, conditions and subscripts may use only iterators, parameters, "
                                      "constants, + - * (by a constant) / % (by a constant), min, max and ?:")
            case c_ast.ArrayRef():
                raise self.error(node, f"{self.show(node)} reads array data: a data-dependent (indirect) "
                                       "subscript, bound or condition",
                                 hint="a static control part may not use array elements in subscripts, "
                                      "bounds or conditions (indirect access)")
            case c_ast.BinaryOp(op=op) if op in _COMPARE or op in ("&&", "||"):
                s = self.cond(node)
                return self.select(s, self.const(1), self.const(0))
            case c_ast.UnaryOp(op="!"):
                s = self.cond(node)
                return self.select(s, self.const(1), self.const(0))
            case c_ast.UnaryOp(op=("p++" | "p--" | "++" | "--")):
                raise self.error(node, "an increment inside an expression has a side effect",
                                 hint="write the increment as its own statement")
            case c_ast.UnaryOp(op=("*" | "&")):
                raise self.error(node, "pointer operations are not allowed in a static control part")
            case c_ast.Assignment():
                raise self.error(node, "an assignment inside an expression has a side effect")
            case _:
                raise self.error(node, f"{self.show(node)} is not an affine expression")

    def select(self, s: isl.Set, a: isl.PwAff, b: isl.PwAff) -> isl.PwAff:
        """``s ? a : b`` as one piecewise quasi-affine expression."""
        return a.intersect_domain(s).union_add(b.intersect_domain(s.complement())).coalesce()

    # -- conditions --------------------------------------------------------------------------------------
    def cond(self, node: c_ast.Node) -> isl.Set:
        match node:
            case c_ast.BinaryOp(op="&&", left=a, right=b):
                return self.cond(a).intersect(self.cond(b))
            case c_ast.BinaryOp(op="||", left=a, right=b):
                return self.cond(a).union(self.cond(b)).coalesce()
            case c_ast.UnaryOp(op="!", expr=e):
                return self.cond(e).complement()
            case c_ast.BinaryOp(op=op, left=a, right=b) if op in _COMPARE:
                pa, pb = self.expr(a), self.expr(b)
                return getattr(pa, _COMPARE[op])(pb)
            case c_ast.Constant() | c_ast.ID() | c_ast.BinaryOp() | c_ast.UnaryOp() | c_ast.TernaryOp() \
                    | c_ast.Cast() | c_ast.FuncCall():
                return self.expr(node).non_zero_set()
            case _:
                raise self.error(node, f"{self.show(node)} is not an affine condition")


def type_names(node: c_ast.Node) -> list[str]:
    """The type words of a ``Typename`` / ``TypeDecl`` (``*`` for a pointer)."""
    out: list[str] = []
    while node is not None:
        match node:
            case c_ast.Typename() | c_ast.TypeDecl():
                node = node.type
            case c_ast.PtrDecl():
                out.append("*")
                node = node.type
            case c_ast.IdentifierType(names=names):
                out.extend(names)
                node = None
            case _:
                out.append("?")
                node = None
    return out
