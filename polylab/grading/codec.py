"""Answers carried out of a student's kernel, decoded in the grader's own process.

:mod:`polylab.grading.kernel_side` encodes the answer variables inside the kernel; :func:`decode` turns
the encoding back into values the checks read: Python containers and numbers, ``Fraction``, numpy arrays,
sympy matrices, isl objects (parsed again from their text), polylab SCoPs (parsed again from their source)
and schedules (rebuilt from their isl maps on that SCoP). Decoding never raises: what cannot be rebuilt
becomes an :class:`~polylab.grading.answers.Opaque` with the reason, which the answer readers refuse with
feedback. Nothing the student wrote is ever evaluated here (no ``eval``, no sympify of text).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

import islpy as isl
import numpy as np
import sympy

from polylab.errors import PolylabError
from polylab.frontend import parse
from polylab.grading import kernel_side
from polylab.grading.answers import Opaque
from polylab.grading.lab import Call, Calls, Case
from polylab.model import Scop
from polylab.schedule import Schedule

_ISL_TYPES: dict[str, Callable[[str], Any]] = {
    "Set": isl.Set, "BasicSet": isl.BasicSet, "Map": isl.Map, "BasicMap": isl.BasicMap,
    "UnionSet": isl.UnionSet, "UnionMap": isl.UnionMap, "Aff": isl.Aff, "PwAff": isl.PwAff,
    "MultiAff": isl.MultiAff, "PwMultiAff": isl.PwMultiAff, "Val": isl.Val,
}

#: what an answer that is a function looks like when a value was expected
FUNCTION_TYPE = "function"


def encode_args(args: Sequence[Any]) -> list[Any]:
    """A case's arguments, encoded for the kernel (the instructor's data: containers, numbers, text)."""
    return [kernel_side.encode(a) for a in args]


def decode(e: Any) -> Any:
    """The value encoded by the kernel side (see the module text)."""
    if not isinstance(e, dict):
        return e
    kind, v = e.get("$"), e.get("v")
    try:
        return _DECODERS[kind](e, v) if kind in _DECODERS else Opaque(str(kind), repr(e)[:200], "unknown encoding")
    except (PolylabError, isl.Error, ValueError, TypeError, KeyError, IndexError, ZeroDivisionError) as exc:
        return Opaque(str(kind), str(v)[:200], f"could not be rebuilt: {exc}")


def _isl(e: dict, v: Any) -> Any:
    parse_text = _ISL_TYPES.get(e.get("type", ""))
    if parse_text is None:
        return Opaque(f"isl.{e.get('type')}", str(v)[:200], "an isl object of a kind the grader does not read")
    return parse_text(str(v))


def _scop(e: dict, _: Any) -> Any:
    try:
        program = parse(e["source"], language=e.get("language", "c"))
    except PolylabError:
        return Opaque("polylab.Scop", e.get("name", "?"), "its source text does not parse alone (a region of a "
                      "whole program?); give the program's text as a string instead")
    found = [s for s in program.scops if s.name == e.get("name")] or list(program.scops[:1])
    if not found:
        return Opaque("polylab.Scop", e.get("name", "?"), "its source has no static control part")
    scop = found[0]
    context = e.get("context")
    if context:
        ctx = isl.Set(context)
        if ctx.get_space().is_equal(scop.context.get_space()):
            scop = replace(scop, context=ctx)
    return scop


def _schedule(e: dict, _: Any) -> Any:
    scop = decode(e["scop"])
    if not isinstance(scop, Scop):
        why = scop.reason if isinstance(scop, Opaque) else "not a SCoP"
        return Opaque("polylab.Schedule", "; ".join(e.get("steps", [])), f"its program could not be rebuilt: {why}")
    maps = {name: isl.Map(text) for name, text in dict(e["maps"]).items()}
    if set(maps) != {s.name for s in scop.statements}:
        return Opaque("polylab.Schedule", "; ".join(e.get("steps", [])),
                      "it schedules a transformed program; give its recipe as text instead")
    return Schedule.from_maps(scop, maps, steps=tuple(e.get("steps", ())))


def _matrix(_: dict, v: Any) -> Any:
    rows = [[decode(x) for x in row] for row in v]
    cells = [[sympy.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else x for x in row]
             for row in rows]
    if any(isinstance(x, Opaque) for row in cells for x in row):
        return Opaque("sympy.Matrix", str(rows)[:200], "it holds symbolic entries")
    return sympy.Matrix(cells) if cells else sympy.Matrix(0, 0, [])


_DECODERS: dict[str, Callable[[dict, Any], Any]] = {
    "tuple": lambda e, v: tuple(decode(x) for x in v),
    "list": lambda e, v: [decode(x) for x in v],
    "set": lambda e, v: set(decode(x) for x in v),
    "frozenset": lambda e, v: frozenset(decode(x) for x in v),
    "dict": lambda e, v: {decode(k): decode(x) for k, x in v},
    "int": lambda e, v: int(v),
    "float": lambda e, v: float(v),
    "fraction": lambda e, v: Fraction(int(decode(v[0])), int(decode(v[1]))),
    "ndarray": lambda e, v: np.array(decode(v)),
    "matrix": _matrix,
    "isl": _isl,
    "scop": _scop,
    "program": lambda e, v: parse(e["source"], language=e.get("language", "c")),
    "schedule": _schedule,
    "sympy": lambda e, v: Opaque(f"sympy.{e.get('type')}", str(v)[:200], "a symbolic expression, not a number"),
    "function": lambda e, v: Opaque(FUNCTION_TYPE, f"<function {e.get('name')}>", "a function"),
    "opaque": lambda e, v: Opaque(str(e.get("type")), str(e.get("repr")), ""),
}


def decode_calls(function: str, cases: Sequence[tuple[Case, bool]], encoded: Sequence[Mapping[str, Any]]) -> Calls:
    """The kernel's record of calling ``function`` on ``cases`` (``(case, hidden)`` in the order sent)."""
    calls = []
    for (case, hidden), got in zip(cases, encoded):
        if "error" in got:
            calls.append(Call(case, None, str(got["error"]), hidden))
        else:
            calls.append(Call(case, decode(got.get("value")), None, hidden))
    return Calls(function, tuple(calls), in_notebook=False)


__all__ = ["FUNCTION_TYPE", "decode", "decode_calls", "encode_args"]
