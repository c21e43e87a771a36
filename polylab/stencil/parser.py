"""A recursive-descent parser of the dialect's MLIR text (the Open Earth compiler's form).

``parse(text)`` returns a :class:`~polylab.stencil.program.Program`. It accepts the newest Open Earth form
(``!stencil.temp<?x?x?xf64>``, ``stencil.cast``, ``stencil.store_result``) with the standard dialect's
arithmetic as the examples write it (``addf``, ``constant``, ``cmpf "ogt"``), and the ``arith.``/``math.``
spellings and ``func.func`` of newer MLIR. Every error names the line and column of the offending token:
malformed text, an unknown operation or type, a value used before its definition (how a cycle shows in
SSA text), and constructs polylab does not support (``stencil.dyn_access``, sequential applies). The
checks of the whole program (a store, offsets of the right length, ...) follow in
:func:`polylab.stencil.checks.check_program`.
"""

from __future__ import annotations

from typing import Any

from polylab.stencil.arith import BINARY, CMPF, CMPI, MATH, Binary, Compare, Constant, MathCall, Negate, Select
from polylab.stencil.checks import check_program
from polylab.stencil.control import If, Yield
from polylab.stencil.errors import UnsupportedStencilError
from polylab.stencil.ops import (Access, Apply, Assert, Cast, Combine, FuncReturn, Index, Load, Return, Store,
                                 StoreResult)
from polylab.stencil.program import Program
from polylab.stencil.reader import Reader
from polylab.stencil.types import FieldType, ResultType, ScalarType, TempType, Type

#: operations polylab refuses, with the reason
UNSUPPORTED = {
    "stencil.dyn_access": "stencil.dyn_access reads at an offset computed at run time; polylab supports only "
                          "constant offsets (stencil.access), which keep the accesses affine",
    "stencil.depend": "stencil.depend reads a result of the same sequential apply; polylab does not support "
                      "sequential applies (seq(...))",
}
_FUNC = ("func", "func.func", "builtin.func")


def parse(text: str, *, filename: str | None = None) -> Program:
    """The stencil program of ``text``: ``module { func @name(...) attributes {stencil.program} {...} }``
    (the ``module`` is optional), checked by :func:`~polylab.stencil.checks.check_program`."""
    p = Reader(text)
    for tok in p.tokens:
        if tok.kind == "word" and tok.text in UNSUPPORTED:
            raise UnsupportedStencilError(f"{UNSUPPORTED[tok.text]} (line {tok.line})", location=p.loc(tok),
                                          hint="write the operator with constant offsets (stencil.access)")
    module = p.accept("module") or p.accept("builtin.module")
    if module:
        p.expect("{", "'{' after module")
    program = _function(p, text, filename)
    if module:
        p.expect("}", "'}' closing the module")
    if p.peek().kind != "end":
        raise p.error(f"unexpected {p.peek().text!r} after the stencil program",
                      hint="one stencil program (one func) per text")
    check_program(program)
    return program


def _function(p: Reader, text: str, filename: str | None) -> Program:
    tok = p.peek()
    if tok.text not in _FUNC:
        raise p.error(f"expected a function (func @name(...)), found {tok.text!r}" if tok.kind != "end"
                      else "expected a function (func @name(...)), found the end of the text")
    p.next()
    name = p.expect_kind("symbol", "the function's name (@name)").text[1:]
    p.expect("(")
    args: list[tuple[str, Type]] = []
    while not p.at(")"):
        if args:
            p.expect(",", "',' or ')'")
        vt = p.expect_kind("value", "an argument (%name)")
        p.expect(":")
        t = p.type()
        args.append((p.new_value(vt), t))
        p.define((vt.text,), (t,))
    p.expect(")")
    if p.accept("attributes"):
        _skip_braces(p)
    p.expect("{", "'{' opening the function's body")
    ops: list[Any] = []
    while not p.at("return"):
        if p.peek().kind == "end" or p.at("}"):
            raise p.error("the stencil program does not end with return")
        ops.append(_top_op(p))
    ops.append(FuncReturn(loc=p.loc(p.next())))
    p.expect("}", "'}' closing the function")
    return Program(name, tuple(args), tuple(ops), source=text, filename=filename)


def _skip_braces(p: Reader) -> None:
    p.expect("{")
    depth = 1
    while depth:
        tok = p.next()
        if tok.kind == "end":
            raise p.error("unclosed '{' in the attributes")
        depth += {"{": 1, "}": -1}.get(tok.text, 0)


def _top_op(p: Reader) -> Any:
    results, _ = p.results()
    tok = p.expect_kind("word", "an operation")
    loc = p.loc(tok)
    match tok.text:
        case "stencil.cast":
            field = p.value(FieldType)
            box = p.box()
            from_type, to_type = _function_type(p)
            op: Any = Cast(_one(p, results, tok), field, box, from_type, to_type, loc=loc)
        case "stencil.assert":
            field = p.value(FieldType)
            box = p.box()
            p.expect(":")
            op = Assert(field, box, _typed(p, p.type(), FieldType), loc=loc)
        case "stencil.load":
            field = p.value(FieldType)
            box = p.box() if p.at("(") else None
            from_type, to_type = _function_type(p)
            op = Load(_one(p, results, tok), field, _typed(p, from_type, FieldType), _typed(p, to_type, TempType),
                      box, loc=loc)
        case "stencil.apply":
            op = _apply(p, results, tok)
        case "stencil.store":
            temp = p.value(TempType)
            p.expect("to")
            field = p.value(FieldType)
            box = p.box()
            p.expect(":")
            tt = _typed(p, p.type(), TempType)
            p.expect("to")
            op = Store(temp, field, box, tt, _typed(p, p.type(), FieldType), loc=loc)
        case "stencil.combine":
            op = _combine(p, results, tok)
        case _:
            raise p.error(f"unknown operation {tok.text!r} in the body of a stencil program", tok,
                          hint="the program's body holds stencil.cast, stencil.load, stencil.apply, "
                               "stencil.combine and stencil.store")
    types = _result_types(op)
    if len(types) != len(results):
        raise p.error(f"{tok.text} has {len(types)} result(s), {len(results)} named", tok)
    p.define(results, types)
    return op


def _result_types(op: Any) -> tuple[Type, ...]:
    match op:
        case Cast():
            return (op.to_type,)
        case Load():
            return (op.to_type,)
        case Apply() | Combine():
            return tuple(op.result_types)
    return ()


def _one(p: Reader, results: tuple[str, ...], tok: Any) -> str:
    if len(results) != 1:
        raise p.error(f"{tok.text} has one result", tok)
    return results[0]


def _typed(p: Reader, t: Type, cls: type) -> Any:
    if not isinstance(t, cls):
        raise p.error(f"expected a {cls.__name__.replace('Type', '').lower()} type, found {t.text()}")
    return t


def _function_type(p: Reader) -> tuple[Any, Any]:
    """``: (T) -> U``."""
    p.expect(":")
    p.expect("(")
    a = p.type()
    p.expect(")")
    p.expect("->")
    return a, p.type()


def _apply(p: Reader, results: tuple[str, ...], tok: Any) -> Apply:
    if p.at("seq"):
        raise UnsupportedStencilError(f"a sequential apply (seq(...)) computes its points in order along a "
                                      f"dimension; polylab does not support it (line {p.peek().line})",
                                      location=p.loc(p.peek()))
    p.expect("(", "'(' opening the apply's operands")
    args, operands, arg_types = [], [], []
    body_scope: dict[str, Type] = {}
    while not p.at(")"):
        if args:
            p.expect(",", "',' or ')'")
        at = p.expect_kind("value", "a block argument (%name)")
        p.expect("=")
        operands.append(p.value())
        p.expect(":")
        t = p.type()
        if at.text in body_scope:
            raise p.error(f"the block argument {at.text} is defined twice", at)
        args.append(at.text)
        arg_types.append(t)
        body_scope[at.text] = t
    p.expect(")")
    p.expect("->")
    rtypes = p.types() if not p.accept("(") else _close(p, p.types())
    result_types = tuple(_typed(p, t, TempType) for t in rtypes)
    p.expect("{", "'{' opening the apply's body")
    outer, p.scopes = p.scopes, [body_scope]   # the body sees only its block arguments
    body = _block(p)
    p.scopes = outer
    box = None
    if p.accept("to"):
        box = p.box()
    return Apply(results, tuple(args), tuple(operands), body, tuple(arg_types), result_types, box,
                 loc=p.loc(tok))


def _close(p: Reader, value: Any) -> Any:
    p.expect(")")
    return value


def _combine(p: Reader, results: tuple[str, ...], tok: Any) -> Combine:
    dim = p.integer("a dimension")
    p.expect("at")
    index = p.integer("an index")
    sides = {}
    for side in ("lower", "upper"):
        p.expect(side)
        p.expect("=")
        p.expect("(")
        vals = p.values()
        p.expect(":")
        types = p.types()
        p.expect(")")
        if len(vals) != len(types):
            raise p.error(f"the {side} operands of stencil.combine have {len(vals)} values and "
                          f"{len(types)} types", tok)
        sides[side] = (vals, tuple(_typed(p, t, TempType) for t in types))
    if p.at("lowerext") or p.at("upperext"):
        raise UnsupportedStencilError(f"stencil.combine with extra operands (lowerext/upperext) is not "
                                      f"supported (line {tok.line})", location=p.loc(p.peek()))
    p.expect(":")
    rtypes = tuple(_typed(p, t, TempType) for t in p.types())
    box = p.box() if p.accept("to") else None
    return Combine(results, sides["lower"][0], sides["upper"][0], dim, index, sides["lower"][1],
                   sides["upper"][1], rtypes, box, loc=p.loc(tok))


def _block(p: Reader) -> tuple[Any, ...]:
    """Operations up to the closing ``}`` (consumed)."""
    ops = []
    while not p.at("}"):
        if p.peek().kind == "end":
            raise p.error("unexpected end of the text: a '}' is missing")
        ops.append(_body_op(p))
    p.expect("}")
    return tuple(ops)


def _strip(name: str) -> str:
    """``arith.addf`` -> ``addf``, ``math.sqrt`` -> ``sqrt``, ``std.constant`` -> ``constant``."""
    for prefix in ("arith.", "math.", "std."):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _body_op(p: Reader) -> Any:
    results, _ = p.results()
    tok = p.expect_kind("word", "an operation")
    name = _strip(tok.text)
    if name.startswith("stencil."):
        op = _stencil_body_op(p, name, results, tok)
    elif name == "scf.if":
        op = _if(p, results, tok)
    elif name == "scf.yield":
        vals = p.values()
        p.expect(":")
        op = Yield(vals, (p.scalar_type(), *_more_types(p)), loc=p.loc(tok))
    else:
        op = _arith(p, name, results, tok)
    types = _body_result_types(op)
    if len(types) != len(results):
        raise p.error(f"{tok.text} has {len(types)} result(s), {len(results)} named", tok)
    p.define(results, types)
    return op


def _more_types(p: Reader) -> list[ScalarType]:
    out = []
    while p.accept(","):
        out.append(p.scalar_type())
    return out


def _body_result_types(op: Any) -> tuple[Type, ...]:
    match op:
        case Access() | Constant() | Binary() | Negate() | Select() | MathCall():
            return (op.type,)
        case Compare():
            return (ScalarType("i1"),)
        case Index():
            return (ScalarType("index"),)
        case StoreResult():
            return (ResultType(op.type.name),)
        case If():
            return tuple(op.types)
    return ()


def _stencil_body_op(p: Reader, name: str, results: tuple[str, ...], tok: Any) -> Any:
    loc = p.loc(tok)
    match name:
        case "stencil.access":
            temp = p.value(TempType)
            offset = p.int_list()
            tt, rt = _function_type(p)
            return Access(_one(p, results, tok), temp, offset, _typed(p, tt, TempType), _typed(p, rt, ScalarType),
                          loc=loc)
        case "stencil.index":
            dim = p.integer("a dimension")
            offset = p.int_list()
            p.expect(":")
            p.expect("index")
            return Index(_one(p, results, tok), dim, offset, loc=loc)
        case "stencil.store_result":
            operand = p.value(ScalarType)
            st, _ = _function_type(p)
            return StoreResult(_one(p, results, tok), operand, _typed(p, st, ScalarType), loc=loc)
        case "stencil.return":
            unroll = None
            if p.accept("unroll"):
                unroll = p.int_list()
            vals = p.values()
            p.expect(":")
            return Return(vals, p.types(), unroll, loc=loc)
    raise p.error(f"unknown operation {name!r} inside a stencil.apply", tok,
                  hint="an apply's body holds stencil.access, stencil.index, arithmetic, scf.if, "
                       "stencil.store_result and stencil.return")


def _if(p: Reader, results: tuple[str, ...], tok: Any) -> If:
    cond = p.value(ScalarType)
    types: tuple[ScalarType, ...] = ()
    if p.accept("->"):
        p.expect("(")
        types = (p.scalar_type(), *_more_types(p))
        p.expect(")")
    p.expect("{")
    p.scopes.append({})
    then = _block(p)
    p.scopes.pop()
    other: tuple[Any, ...] = ()
    if p.accept("else"):
        p.expect("{")
        p.scopes.append({})
        other = _block(p)
        p.scopes.pop()
    return If(results, cond, then, other, types, loc=p.loc(tok))


def _arith(p: Reader, name: str, results: tuple[str, ...], tok: Any) -> Any:
    loc = p.loc(tok)
    if name == "constant":
        vt = p.expect_kind("number", "a number")
        p.expect(":")
        t = p.scalar_type()
        value: float | int = float(vt.text) if t.name in ("f64", "f32") else int(vt.text, 0)
        return Constant(_one(p, results, tok), value, t, loc=loc)
    if name in BINARY:
        a = p.value(ScalarType)
        p.expect(",")
        b = p.value(ScalarType)
        p.expect(":")
        return Binary(name, _one(p, results, tok), a, b, p.scalar_type(), loc=loc)
    if name == "negf":
        a = p.value(ScalarType)
        p.expect(":")
        return Negate(_one(p, results, tok), a, p.scalar_type(), loc=loc)
    if name in ("cmpf", "cmpi"):
        pt = p.next()
        pred = pt.text.strip('"')
        if pred not in (CMPF if name == "cmpf" else CMPI):
            raise p.error(f"unknown {name} predicate {pred!r}", pt)
        p.expect(",")
        a = p.value(ScalarType)
        p.expect(",")
        b = p.value(ScalarType)
        p.expect(":")
        return Compare(name, pred, _one(p, results, tok), a, b, p.scalar_type(), loc=loc)
    if name == "select":
        c = p.value(ScalarType)
        p.expect(",")
        a = p.value(ScalarType)
        p.expect(",")
        b = p.value(ScalarType)
        p.expect(":")
        return Select(_one(p, results, tok), c, a, b, p.scalar_type(), loc=loc)
    if name in MATH:
        args = p.values()
        p.expect(":")
        return MathCall(name, _one(p, results, tok), args, p.scalar_type(), loc=loc)
    raise p.error(f"unknown operation {tok.text!r} inside a stencil.apply", tok,
                  hint="the arithmetic polylab knows: constant, " + ", ".join(BINARY) +
                       ", negf, cmpf, cmpi, select, " + ", ".join(MATH))
