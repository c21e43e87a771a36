"""MLIR ``affine`` dialect text for a loop program.

The kernel becomes one ``func.func @kernel`` taking the parameters as ``index`` values (affine
*symbols*), the read-only scalars as floats and every array as a ``memref`` (dynamic extents as ``?``).

* A sequential ``for`` becomes ``affine.for %c = max map(...) to min map(...) step s``: isl's lower bound
  ``max(l1, l2, ...)`` is the list of results of the lower-bound map; its condition ``c <= min(u1, ...)``
  becomes the exclusive upper bound map ``(u1 + 1, ...)``.
* A parallel ``for`` (a coincident schedule dimension) becomes ``affine.parallel`` with the same bounds.
* An ``if`` becomes ``affine.if`` on an integer set (a disjunction is split into nested ``affine.if``).
* A statement instance loads its operands with ``affine.load`` (subscripts composed with the AST's
  iterator expressions), computes with ``arith``/``math`` operations following C's usual arithmetic
  conversions, and writes with ``affine.store``.

Integer division and remainder print as ``floordiv`` and ``mod``: isl's ``fdiv_q`` is exactly
``floordiv``; ``pdiv_q``/``pdiv_r`` have non-negative dividends, where C and affine division agree; C's
``/`` and ``%`` in a subscript are printed the same way (correct for the non-negative subscripts of
in-bounds accesses). Anything else that is not affine (a ``min`` nested inside an expression, a
conditional expression in a bound) raises :class:`~polylab.errors.CodegenError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from polylab.codegen import ast as A
from polylab.errors import CodegenError
from polylab.model.expr import ArrayRef, Binary, Call, Cast, Cond, Const, Expr, Name, Unary
from polylab.model.scop import Array, Scop

_TYPES = {"double": "f64", "float": "f32", "long double": "f64", "int": "i32", "long": "i64",
          "long long": "i64", "short": "i16", "char": "i8", "unsigned": "i32", "unsigned int": "i32"}
_MATH = {"sqrt": "math.sqrt", "sqrtf": "math.sqrt", "exp": "math.exp", "expf": "math.exp",
         "log": "math.log", "logf": "math.log", "sin": "math.sin", "cos": "math.cos", "tanh": "math.tanh",
         "fabs": "math.absf", "fabsf": "math.absf", "floor": "math.floor", "ceil": "math.ceil",
         "pow": "math.powf", "powf": "math.powf", "fmax": "arith.maxnumf", "fmin": "arith.minnumf",
         "fmaxf": "arith.maxnumf", "fminf": "arith.minnumf"}


def mlir_type(ctype: str) -> str:
    words = " ".join(w for w in ctype.split() if w not in ("const", "volatile", "signed", "static"))
    if words not in _TYPES:
        raise CodegenError(f"no MLIR type for the C type {ctype!r}")
    return _TYPES[words]


def _is_float(t: str) -> bool:
    return t.startswith("f")


def _float_literal(text: str) -> str:
    value = float(text.rstrip("fFlL"))
    if math.isinf(value) or math.isnan(value):
        raise CodegenError(f"cannot write the literal {text} in MLIR")
    s = repr(value)
    if "e" in s and "." not in s.split("e")[0]:
        mant, exp = s.split("e")
        s = f"{mant}.0e{exp}"
    return s


# -- affine expressions -----------------------------------------------------------------------------------
@dataclass
class _Operands:
    """Dimensions and symbols of one affine map, in order of first use."""

    dims: list[str] = field(default_factory=list)
    syms: list[str] = field(default_factory=list)

    def dim(self, ssa: str) -> str:
        if ssa not in self.dims:
            self.dims.append(ssa)
        return f"d{self.dims.index(ssa)}"

    def sym(self, ssa: str) -> str:
        if ssa not in self.syms:
            self.syms.append(ssa)
        return f"s{self.syms.index(ssa)}"

    def header(self) -> str:
        return f"({', '.join(f'd{k}' for k in range(len(self.dims)))})" + (
            f"[{', '.join(f's{k}' for k in range(len(self.syms)))}]" if self.syms else "")

    def operands(self) -> str:
        return f"({', '.join(self.dims)})" + (f"[{', '.join(self.syms)}]" if self.syms else "")


class _Env:
    """Iterator name -> loop SSA value (a dimension) or an expression (a one-iteration loop); params."""

    def __init__(self, params: tuple[str, ...]) -> None:
        self.params = params
        self.ivs: dict[str, str] = {}
        self.subst: dict[str, A.AExpr] = {}

    def child(self) -> "_Env":
        e = _Env(self.params)
        e.ivs, e.subst = dict(self.ivs), dict(self.subst)
        return e


def _aff(e: A.AExpr, env: _Env, ops: _Operands | None) -> str:
    """An affine expression; with ``ops`` in map form (d0, s0), else in SSA form (``%c0``, ``symbol(%N)``)."""
    match e:
        case A.Int(value=v):
            return str(v)
        case A.Id(name=n):
            if n in env.subst:
                return f"({_aff(env.subst[n], env, ops)})"
            if n in env.ivs:
                return ops.dim(env.ivs[n]) if ops else env.ivs[n]
            if n in env.params:
                return ops.sym(f"%{n}") if ops else f"symbol(%{n})"
            raise CodegenError(f"unknown name {n} in an affine expression")
        case A.Op(op="add", args=(a, b)):
            return f"({_aff(a, env, ops)} + {_aff(b, env, ops)})"
        case A.Op(op="sub", args=(a, b)):
            return f"({_aff(a, env, ops)} - {_aff(b, env, ops)})"
        case A.Op(op="minus", args=(a,)):
            return f"({_aff(a, env, ops)} * -1)"
        case A.Op(op="mul", args=(a, b)):
            if not (isinstance(a, A.Int) or isinstance(b, A.Int)):
                raise CodegenError("a product of two variables is not affine")
            return f"({_aff(a, env, ops)} * {_aff(b, env, ops)})"
        case A.Op(op=("fdiv_q" | "pdiv_q" | "div"), args=(a, b)) if isinstance(b, A.Int) and b.value > 0:
            return f"({_aff(a, env, ops)} floordiv {b.value})"
        case A.Op(op=("pdiv_r" | "zdiv_r"), args=(a, b)) if isinstance(b, A.Int) and b.value > 0:
            return f"({_aff(a, env, ops)} mod {b.value})"
    raise CodegenError(f"the expression {e} cannot be written as an MLIR affine expression",
                       hint="use the c, openmp or cuda target for this schedule")


def _map(results: list[A.AExpr], env: _Env) -> str:
    ops = _Operands()
    body = ", ".join(_aff(r, env, ops) for r in results)
    return f"affine_map<{ops.header()} -> ({body})>{ops.operands()}"


def _plus1(e: A.AExpr) -> A.AExpr:
    return A.offset(e, 1)


def _bounds(f: A.For) -> tuple[list[A.AExpr], list[A.AExpr]]:
    lower = list(f.init.args) if isinstance(f.init, A.Op) and f.init.op == "max" else [f.init]
    c = f.cond
    if not (isinstance(c, A.Op) and c.op in ("le", "lt") and c.args[0] == A.Id(f.iterator)):
        raise CodegenError(f"the loop condition {c} is not an upper bound of {f.iterator}")
    ub = c.args[1]
    upper = list(ub.args) if isinstance(ub, A.Op) and ub.op == "min" else [ub]
    if c.op == "le":
        upper = [_plus1(u) for u in upper]
    return lower, upper


def _dnf(c: A.AExpr) -> list[list[A.AExpr]]:
    """A condition as a disjunction of conjunctions of comparisons."""
    if isinstance(c, A.Op) and c.op in ("or", "or_else"):
        return _dnf(c.args[0]) + _dnf(c.args[1])
    if isinstance(c, A.Op) and c.op in ("and", "and_then"):
        return [x + y for x in _dnf(c.args[0]) for y in _dnf(c.args[1])]
    return [[c]]


def _constraint(c: A.AExpr, env: _Env, ops: _Operands) -> str:
    if not (isinstance(c, A.Op) and c.op in ("eq", "le", "lt", "ge", "gt")):
        raise CodegenError(f"the condition {c} is not an affine constraint")
    a, b = (_aff(x, env, ops) for x in c.args)
    return {"eq": f"{a} - {b} == 0", "ge": f"{a} - {b} >= 0", "gt": f"{a} - {b} - 1 >= 0",
            "le": f"{b} - {a} >= 0", "lt": f"{b} - {a} - 1 >= 0"}[c.op]


# -- the printer ------------------------------------------------------------------------------------------
class _Printer:
    def __init__(self, scop: Scop) -> None:
        self.scop = scop
        self.lines: list[str] = []
        self.n = 0
        self.arrays = {a.name: a for a in scop.arrays}
        self.scalars = {s.name: mlir_type(s.ctype) for s in scop.scalars}

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def memref(self, a: Array) -> str:
        dims = "".join(f"{e}x" if str(e).isdigit() else "?x" for e in a.extents)
        return f"memref<{dims}{mlir_type(a.ctype)}>"

    # statements of the loop program
    def node(self, n: A.Node, env: _Env, depth: int) -> None:
        match n:
            case A.Block(children=cs):
                for c in cs:
                    self.node(c, env, depth)
            case A.User():
                self.user(n, env, depth)
            case A.For(degenerate=True):
                inner = env.child()
                inner.subst[n.iterator] = _resolve(n.init, env)
                self.node(n.body, inner, depth)
            case A.For():
                lower, upper = _bounds(n)
                inner = env.child()
                iv = f"%{n.iterator}"
                inner.ivs[n.iterator] = iv
                step = f" step {n.inc}" if n.inc != 1 else ""
                if n.parallel:
                    lo = ", ".join(_aff(x, env, None) for x in lower)
                    hi = ", ".join(_aff(x, env, None) for x in upper)
                    lo = f"max({lo})" if len(lower) > 1 else lo
                    hi = f"min({hi})" if len(upper) > 1 else hi
                    pstep = f" step ({n.inc})" if n.inc != 1 else ""
                    self.emit(depth, f"affine.parallel ({iv}) = ({lo}) to ({hi}){pstep} {{")
                else:
                    lo = ("max " if len(lower) > 1 else "") + _map(lower, env)
                    hi = ("min " if len(upper) > 1 else "") + _map(upper, env)
                    self.emit(depth, f"affine.for {iv} = {lo} to {hi}{step} {{")
                self.node(n.body, inner, depth + 1)
                self.emit(depth, "}")
            case A.If(cond=c, then=t, other=o):
                self.branch(_dnf(c), t, o, env, depth)

    def branch(self, disjuncts: list[list[A.AExpr]], then: A.Node, other: A.Node | None, env: _Env,
               depth: int) -> None:
        ops = _Operands()
        cons = ", ".join(_constraint(c, env, ops) for c in disjuncts[0])
        self.emit(depth, f"affine.if affine_set<{ops.header()} : ({cons})>{ops.operands()} {{")
        self.node(then, env, depth + 1)
        rest = disjuncts[1:]
        if rest or other is not None:
            self.emit(depth, "} else {")
            if rest:
                self.branch(rest, then, other, env, depth + 1)
            else:
                self.node(other, env, depth + 1)  # type: ignore[arg-type]
        self.emit(depth, "}")

    # one statement instance
    def user(self, u: A.User, env: _Env, depth: int) -> None:
        stmt = self.scop.statement(u.statement)
        binding = {it: _resolve(arg, env) for it, arg in zip(stmt.iterators, u.args)}
        self.emit(depth, f"// {stmt.name}: {stmt.code()}")
        body = stmt.body
        target = body.target
        arr = self.arrays[target.array]
        ttype = mlir_type(arr.ctype)
        value, vtype = self.value(body.value, binding, env, depth)
        if body.op != "=":
            old, otype = self.value(target, binding, env, depth)
            value, vtype = self.binary(body.op[0], old, otype, value, vtype, depth)
        value = self.convert(value, vtype, ttype, depth)
        idx = self.subscripts(target, binding, env)
        self.emit(depth, f"affine.store {value}, %{target.array}[{idx}] : {self.memref(arr)}")

    def subscripts(self, ref: ArrayRef, binding: dict[str, A.AExpr], env: _Env) -> str:
        return ", ".join(_aff(_to_aexpr(i, binding, self.scop), env, None) for i in ref.indices)

    def value(self, e: Expr, binding: dict[str, A.AExpr], env: _Env, depth: int) -> tuple[str, str]:
        match e:
            case Const(text=t, ctype=ct):
                ty = mlir_type(ct)
                v = self.fresh()
                lit = _float_literal(t) if _is_float(ty) else str(int(t.rstrip("uUlL"), 0))
                self.emit(depth, f"{v} = arith.constant {lit} : {ty}")
                return v, ty
            case Name(name=n) if n in self.scalars:
                return f"%{n}", self.scalars[n]
            case Name():
                ae = _to_aexpr(e, binding, self.scop)
                ops = _Operands()
                body = _aff(ae, env, ops)
                v = self.fresh()
                self.emit(depth, f"{v} = affine.apply affine_map<{ops.header()} -> ({body})>{ops.operands()}")
                return v, "index"
            case ArrayRef(array=a):
                arr = self.arrays[a]
                v = self.fresh()
                idx = self.subscripts(e, binding, env)
                self.emit(depth, f"{v} = affine.load %{a}[{idx}] : {self.memref(arr)}")
                return v, mlir_type(arr.ctype)
            case Binary(op=op, left=l, right=r):
                lv, lt = self.value(l, binding, env, depth)
                rv, rt = self.value(r, binding, env, depth)
                return self.binary(op, lv, lt, rv, rt, depth)
            case Unary(op="-", operand=o):
                ov, ot = self.value(o, binding, env, depth)
                if ot == "index":
                    ov, ot = self.convert(ov, ot, "i64", depth), "i64"
                v = self.fresh()
                if _is_float(ot):
                    self.emit(depth, f"{v} = arith.negf {ov} : {ot}")
                else:
                    z = self.fresh()
                    self.emit(depth, f"{z} = arith.constant 0 : {ot}")
                    self.emit(depth, f"{v} = arith.subi {z}, {ov} : {ot}")
                return v, ot
            case Unary(op="+", operand=o):
                return self.value(o, binding, env, depth)
            case Cast(ctype=ct, operand=o):
                ov, ot = self.value(o, binding, env, depth)
                ty = mlir_type(ct)
                return self.convert(ov, ot, ty, depth), ty
            case Call(func=f, args=args) if f in _MATH:
                vals = [self.value(a, binding, env, depth) for a in args]
                ty = "f32" if f in ("sqrtf", "expf", "logf", "fabsf", "powf", "fmaxf", "fminf") else "f64"
                conv = [self.convert(v, t, ty, depth) for v, t in vals]
                v = self.fresh()
                self.emit(depth, f"{v} = {_MATH[f]} {', '.join(conv)} : {ty}")
                return v, ty
            case Cond(cond=c, then=t, other=o):
                cv = self.truth(c, binding, env, depth)
                tv, tt = self.value(t, binding, env, depth)
                ov, ot = self.value(o, binding, env, depth)
                ty = _common(tt, ot)
                tv, ov = self.convert(tv, tt, ty, depth), self.convert(ov, ot, ty, depth)
                v = self.fresh()
                self.emit(depth, f"{v} = arith.select {cv}, {tv}, {ov} : {ty}")
                return v, ty
        raise CodegenError(f"cannot write {e} in MLIR", hint="use the c, openmp or cuda target")

    def truth(self, e: Expr, binding: dict[str, A.AExpr], env: _Env, depth: int) -> str:
        v, t = self.value(e, binding, env, depth)
        return self.truth_of(v, t, depth)

    def binary(self, op: str, lv: str, lt: str, rv: str, rt: str, depth: int) -> tuple[str, str]:
        if lt == "index":
            lv, lt = self.convert(lv, lt, "i64", depth), "i64"
        if rt == "index":
            rv, rt = self.convert(rv, rt, "i64", depth), "i64"
        if op in ("&&", "||"):
            a = self.truth_of(lv, lt, depth)
            b = self.truth_of(rv, rt, depth)
            v = self.fresh()
            self.emit(depth, f"{v} = arith.{'andi' if op == '&&' else 'ori'} {a}, {b} : i1")
            return v, "i1"
        ty = _common(lt, rt)
        lv, rv = self.convert(lv, lt, ty, depth), self.convert(rv, rt, ty, depth)
        v = self.fresh()
        f = _is_float(ty)
        cmp = {"<": ("olt", "slt"), "<=": ("ole", "sle"), ">": ("ogt", "sgt"), ">=": ("oge", "sge"),
               "==": ("oeq", "eq"), "!=": ("une", "ne")}
        if op in cmp:
            pred = cmp[op][0 if f else 1]
            self.emit(depth, f"{v} = arith.cmp{'f' if f else 'i'} {pred}, {lv}, {rv} : {ty}")
            return v, "i1"
        table = {"+": ("addf", "addi"), "-": ("subf", "subi"), "*": ("mulf", "muli"), "/": ("divf", "divsi"),
                 "%": (None, "remsi")}
        if op not in table or table[op][0 if f else 1] is None:
            raise CodegenError(f"the operator {op} has no MLIR arith equivalent here")
        self.emit(depth, f"{v} = arith.{table[op][0 if f else 1]} {lv}, {rv} : {ty}")
        return v, ty

    def truth_of(self, v: str, t: str, depth: int) -> str:
        if t == "i1":
            return v
        z, out = self.fresh(), self.fresh()
        if _is_float(t):
            self.emit(depth, f"{z} = arith.constant 0.0 : {t}")
            self.emit(depth, f"{out} = arith.cmpf une, {v}, {z} : {t}")
        else:
            self.emit(depth, f"{z} = arith.constant 0 : {t}")
            self.emit(depth, f"{out} = arith.cmpi ne, {v}, {z} : {t}")
        return out

    def convert(self, v: str, frm: str, to: str, depth: int) -> str:
        if frm == to:
            return v
        if frm == "index":
            mid = self.fresh()
            self.emit(depth, f"{mid} = arith.index_cast {v} : index to i64")
            return self.convert(mid, "i64", to, depth)
        if frm == "i1":
            mid = self.fresh()
            self.emit(depth, f"{mid} = arith.extui {v} : i1 to i32")
            return self.convert(mid, "i32", to, depth)
        out = self.fresh()
        bits = lambda t: int(t[1:])  # noqa: E731
        if _is_float(frm) and _is_float(to):
            self.emit(depth, f"{out} = arith.{'extf' if bits(to) > bits(frm) else 'truncf'} {v} : {frm} to {to}")
        elif _is_float(to):
            self.emit(depth, f"{out} = arith.sitofp {v} : {frm} to {to}")
        elif _is_float(frm):
            self.emit(depth, f"{out} = arith.fptosi {v} : {frm} to {to}")
        elif to == "index":
            self.emit(depth, f"{out} = arith.index_cast {v} : {frm} to index")
        else:
            self.emit(depth, f"{out} = arith.{'extsi' if bits(to) > bits(frm) else 'trunci'} {v} : {frm} to {to}")
        return out


def _common(a: str, b: str) -> str:
    """C's usual arithmetic conversions on MLIR types."""
    for t in ("f64", "f32"):
        if t in (a, b):
            return t
    ints = [t for t in (a, b) if t.startswith("i") and t != "index"]
    return max(ints, key=lambda t: int(t[1:])) if ints else "i64"


def _resolve(e: A.AExpr, env: _Env) -> A.AExpr:
    """Substitute one-iteration loop iterators (so later scopes need not know them)."""
    match e:
        case A.Id(name=n) if n in env.subst:
            return env.subst[n]
        case A.Op(op=op, args=args):
            return A.Op(op, tuple(_resolve(a, env) for a in args))
    return e


def _to_aexpr(e: Expr, binding: dict[str, A.AExpr], scop: Scop) -> A.AExpr:
    """A subscript (statement iterators, parameters, integer constants) as an AST expression."""
    match e:
        case Const(text=t):
            try:
                return A.Int(int(t.rstrip("uUlL"), 0))
            except ValueError:
                raise CodegenError(f"the subscript constant {t} is not an integer") from None
        case Name(name=n):
            if n in binding:
                return binding[n]
            if n in scop.parameters:
                return A.Id(n)
            consts = dict(scop.constants)
            if n in consts:
                return A.Int(int(consts[n]))
            raise CodegenError(f"the subscript uses {n}, which is neither an iterator nor a parameter")
        case Unary(op="-", operand=o):
            return A.Op("minus", (_to_aexpr(o, binding, scop),))
        case Unary(op="+", operand=o):
            return _to_aexpr(o, binding, scop)
        case Binary(op=op, left=l, right=r) if op in ("+", "-", "*", "/", "%"):
            name = {"+": "add", "-": "sub", "*": "mul", "/": "pdiv_q", "%": "pdiv_r"}[op]
            return A.Op(name, (_to_aexpr(l, binding, scop), _to_aexpr(r, binding, scop)))
    raise CodegenError(f"the subscript {e} is not affine", hint="use the c, openmp or cuda target")


def mlir_module(scop: Scop, program: A.LoopProgram, header: str) -> str:
    """The kernel as an MLIR module (``func.func @kernel``) in the affine, arith and math dialects."""
    p = _Printer(scop)
    env = _Env(scop.parameters)
    p.node(program.root, env, 2)
    args = [f"%{n}: index" for n in scop.parameters]
    args += [f"%{s.name}: {mlir_type(s.ctype)}" for s in scop.scalars]
    args += [f"%{a.name}: {p.memref(a)}" for a in scop.arrays]
    return "\n".join([header, "module {", f"  func.func @kernel({', '.join(args)}) {{", *p.lines,
                      "    return", "  }", "}", ""])
