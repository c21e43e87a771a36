"""The textual MLIR form of a stencil program, as the Open Earth compiler writes it.

``print_program(parse(text))`` is a canonical text of the program, and ``parse(print_program(p)) == p``
for every program ``p`` (the round trip the tests check): every field of every operation is printed.
Results that form a group (``%5#0``, ``%5#1``) print as ``%5:2 = ...``.
"""

from __future__ import annotations

from typing import Any

from polylab.stencil.arith import Binary, Compare, Constant, MathCall, Negate, Select
from polylab.stencil.control import If, Yield
from polylab.stencil.errors import StencilError
from polylab.stencil.ops import (Access, Apply, Assert, Cast, Combine, FuncReturn, Index, Load, Return, Store,
                                 StoreResult)
from polylab.stencil.types import Box

INDENT = "  "


def results_prefix(results: tuple[str, ...]) -> str:
    """``%r = `` or ``%g:n = `` (a group of ``n`` results named ``%g#0`` ... ``%g#n-1``)."""
    if not results:
        return ""
    if len(results) == 1 and "#" not in results[0]:
        return f"{results[0]} = "
    group = results[0].split("#")[0]
    if all(r == f"{group}#{k}" for k, r in enumerate(results)):
        return f"{group}:{len(results)} = "
    raise StencilError(f"the results {', '.join(results)} do not form a group %g#0, %g#1, ...")


def float_text(v: float | int, type_name: str) -> str:
    """A literal of ``type_name`` (floats keep every bit: Python's shortest round-trip form)."""
    if type_name in ("f64", "f32"):
        s = repr(float(v))
        return s if ("." in s or "e" in s or "n" in s) else s + ".0"
    return str(int(v))


def offset_text(offset: tuple[int, ...]) -> str:
    return f"[{', '.join(map(str, offset))}]"


def box_text(box: Box) -> str:
    return f"({box.text()})"


def _types(ts: tuple[Any, ...]) -> str:
    return ", ".join(t.text() for t in ts)


def _body_op(op: Any, depth: int) -> list[str]:
    pad = INDENT * depth
    r = results_prefix(getattr(op, "results", None) or ((op.result,) if hasattr(op, "result") else ()))
    match op:
        case Access():
            return [f"{pad}{r}stencil.access {op.temp} {offset_text(op.offset)} : ({op.temp_type.text()}) -> "
                    f"{op.type.text()}"]
        case Index():
            return [f"{pad}{r}stencil.index {op.dim} {offset_text(op.offset)} : index"]
        case StoreResult():
            return [f"{pad}{r}stencil.store_result {op.operand} : ({op.type.text()}) -> "
                    f"!stencil.result<{op.type.text()}>"]
        case Return():
            unroll = f"unroll {offset_text(op.unroll)} " if op.unroll is not None else ""
            return [f"{pad}stencil.return {unroll}{', '.join(op.operands)} : {_types(op.types)}"]
        case Constant():
            return [f"{pad}{r}constant {float_text(op.value, op.type.name)} : {op.type.text()}"]
        case Binary():
            return [f"{pad}{r}{op.op} {op.lhs}, {op.rhs} : {op.type.text()}"]
        case Negate():
            return [f"{pad}{r}negf {op.operand} : {op.type.text()}"]
        case Compare():
            return [f"{pad}{r}{op.op} \"{op.predicate}\", {op.lhs}, {op.rhs} : {op.type.text()}"]
        case Select():
            return [f"{pad}{r}select {op.cond}, {op.then}, {op.other} : {op.type.text()}"]
        case MathCall():
            return [f"{pad}{r}{op.func} {', '.join(op.args)} : {op.type.text()}"]
        case If():
            lines = [f"{pad}{r}scf.if {op.cond} -> ({_types(op.types)}) {{"]
            lines += [ln for o in op.then for ln in _body_op(o, depth + 1)]
            lines.append(f"{pad}}} else {{")
            lines += [ln for o in op.other for ln in _body_op(o, depth + 1)]
            return lines + [f"{pad}}}"]
        case Yield():
            return [f"{pad}scf.yield {', '.join(op.operands)} : {_types(op.types)}"]
    raise StencilError(f"cannot print {type(op).__name__} inside an apply")


def _apply(op: Apply, depth: int) -> list[str]:
    pad = INDENT * depth
    args = ", ".join(f"{a} = {o} : {t.text()}" for a, o, t in zip(op.args, op.operands, op.arg_types))
    rt = op.result_types[0].text() if len(op.result_types) == 1 else f"({_types(op.result_types)})"
    lines = [f"{pad}{results_prefix(op.results)}stencil.apply ({args}) -> {rt} {{"]
    lines += [ln for o in op.body for ln in _body_op(o, depth + 1)]
    return lines + [f"{pad}}}" + (f" to {box_text(op.box)}" if op.box is not None else "")]


def _top_op(op: Any, depth: int) -> list[str]:
    pad = INDENT * depth
    match op:
        case Cast():
            return [f"{pad}{op.result} = stencil.cast {op.field}{box_text(op.box)} : ({op.from_type.text()}) -> "
                    f"{op.to_type.text()}"]
        case Assert():
            return [f"{pad}stencil.assert {op.field}{box_text(op.box)} : {op.type.text()}"]
        case Load():
            box = box_text(op.box) if op.box is not None else ""
            return [f"{pad}{op.result} = stencil.load {op.field}{box} : ({op.from_type.text()}) -> "
                    f"{op.to_type.text()}"]
        case Apply():
            return _apply(op, depth)
        case Store():
            return [f"{pad}stencil.store {op.temp} to {op.field}{box_text(op.box)} : {op.temp_type.text()} to "
                    f"{op.field_type.text()}"]
        case Combine():
            lower = f"({', '.join(op.lower)} : {_types(op.lower_types)})"
            upper = f"({', '.join(op.upper)} : {_types(op.upper_types)})"
            box = f" to {box_text(op.box)}" if op.box is not None else ""
            return [f"{pad}{results_prefix(op.results)}stencil.combine {op.dim} at {op.index} lower = {lower} "
                    f"upper = {upper} : {_types(op.result_types)}{box}"]
        case FuncReturn():
            return [f"{pad}return"]
    raise StencilError(f"cannot print {type(op).__name__} in the body of a stencil program")


def print_program(program: Any) -> str:
    """The program as MLIR text: ``module { func @name(...) attributes {stencil.program} { ... } }``."""
    args = ", ".join(f"{n}: {t.text()}" for n, t in program.arguments)
    lines = ["module {", f"{INDENT}func @{program.name}({args}) attributes {{stencil.program}} {{"]
    for op in program.ops:
        lines += _top_op(op, 2)
    if not program.ops or not isinstance(program.ops[-1], FuncReturn):
        lines.append(INDENT * 2 + "return")
    lines += [f"{INDENT}}}", "}"]
    return "\n".join(lines) + "\n"
