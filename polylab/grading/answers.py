"""Reading a student's answer: normalise what is fair to normalise, refuse the rest with feedback.

Each reader takes the raw value from the student's namespace and returns a canonical Python value, or
raises :class:`AnswerError` with a message that says what was expected and what was given. A check calls
the readers first; the question runner turns an :class:`AnswerError` into a zero verdict with its message,
so a malformed answer never produces a traceback (nor a ``ValueError`` from deep inside a check).

What is normalised (fair: the same answer written differently):

* tuples, lists, sympy and numpy vectors are the same vector; sets, lists and tuples of vectors are the
  same set; ``2``, ``2.0``, ``sympy.Integer(2)`` and ``numpy.int64(2)`` are the same integer;
* whitespace and redundant parentheses in C text (``x[i+1][j][k]`` is ``x[i + 1][j][k]``): both sides are
  parsed with pycparser and printed back;
* isl text: compared as sets or maps with isl (``{ [i] : 0 <= i < 4 }`` equals ``{ [i] : i >= 0 and i <= 3 }``).

What is refused (a different kind of answer, even if it looks alike): a string where a number, a vector or
a set is expected (``"(1, 0)"`` is text, not a tuple), a bool where a number is expected, a single vector
where a set of vectors is expected, vectors of the wrong length.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

import islpy as isl
import sympy
from pycparser import c_ast, c_generator, c_parser

from polylab.errors import PolylabError


class AnswerError(PolylabError):
    """The answer has the wrong form (a string where a tuple is expected, a vector of the wrong length...)."""

    kind = "answer"


@dataclass(frozen=True)
class Opaque:
    """A value the batch grader could not carry out of the student's kernel as itself (an object of a type
    it does not know, a schedule of a transformed program...): its type, its ``repr`` and why."""

    type: str
    text: str
    reason: str = ""

    def __repr__(self) -> str:
        return self.text


def describe(value: Any, limit: int = 80) -> str:
    """A short ``repr`` of ``value`` for feedback (sets sorted when they can be, long text cut)."""
    if isinstance(value, (set, frozenset)):
        try:
            text = "{" + ", ".join(repr(v) for v in sorted(value)) + "}"
        except TypeError:
            text = repr(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_name(value: Any) -> str:
    if isinstance(value, Opaque):
        return f"a {value.type} value" + (f" ({value.reason})" if value.reason else "")
    return {str: "text (a string)", bool: "True/False", dict: "a dictionary", type(None): "None"}.get(
        type(value), type(value).__name__)


def _refuse_text(value: str, what: str, example: str) -> AnswerError:
    inner = value.strip()
    return AnswerError(f"{what} is the text {describe(value)}, not a Python value",
                       hint=f"remove the quotes: write {inner if inner else example}, e.g. {example}")


# -- numbers ---------------------------------------------------------------------------------------------

def integer(value: Any, what: str = "the answer") -> int:
    """``value`` as an int: ints, integral floats, sympy and numpy integers, isl integer values (what
    ``count_val()`` returns); refuses text and bools."""
    if isinstance(value, isl.Val):
        value = _isl_val(value, what)
    if isinstance(value, bool):
        raise AnswerError(f"{what} is {value}, not a number", hint="write an integer such as 2")
    if isinstance(value, str):
        raise _refuse_text(value, what, "2")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, sympy.Integer):
        return int(value)
    if isinstance(value, (numbers.Real, sympy.Rational, sympy.Float)):
        f = Fraction(str(value)) if isinstance(value, (sympy.Rational, sympy.Float)) else Fraction(float(value))
        if f.denominator == 1:
            return int(f)
        raise AnswerError(f"{what} is {describe(value)}, not an integer", hint="the answer is a whole number")
    raise AnswerError(f"{what} is {_type_name(value)} {describe(value)}, not an integer",
                      hint="write an integer such as 2")


def rational(value: Any, what: str = "the answer") -> Fraction:
    """``value`` as an exact Fraction (ints, floats, sympy rationals, numpy numbers, isl values); refuses
    text."""
    if isinstance(value, isl.Val):
        value = _isl_val(value, what)
    if isinstance(value, bool) or isinstance(value, str) or value is None:
        if isinstance(value, str):
            raise _refuse_text(value, what, "1/2 or 0.5")
        raise AnswerError(f"{what} is {describe(value)}, not a number", hint="write a number such as 3 or 1/2")
    if isinstance(value, (sympy.Rational, sympy.Float)):
        return Fraction(str(value))
    if isinstance(value, numbers.Rational):
        return Fraction(value.numerator, value.denominator)
    if isinstance(value, numbers.Real):
        return Fraction(float(value)).limit_denominator(10**9)
    raise AnswerError(f"{what} is {_type_name(value)} {describe(value)}, not a number",
                      hint="write a number such as 3 or 1/2")


def _isl_val(value: isl.Val, what: str) -> int | Fraction:
    """An isl value as an exact Python number (isl's infinities and NaN are refused)."""
    if value.is_nan() or value.is_infty() or value.is_neginfty():
        raise AnswerError(f"{what} is the isl value {value}, not a number",
                          hint="count a bounded set: fix its parameters first (intersect_params)")
    py = value.to_python()
    return py if isinstance(py, int) else Fraction(str(value))


# -- vectors and sets of vectors ------------------------------------------------------------------------------

def _items(value: Any) -> list[Any] | None:
    """The entries of a vector-like value (tuple, list, sympy matrix with one row or column, 1-D numpy
    array), or None when ``value`` is not vector-like."""
    if isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, sympy.MatrixBase):
        if value.rows == 1 or value.cols == 1:
            return list(value)
        return None
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "tolist") and len(shape) == 1:
        return list(value.tolist())
    return None


def vector(value: Any, length: int | None = None, what: str = "the vector", *, entry: str = "loop"
           ) -> tuple[int, ...]:
    """``value`` as a tuple of ints (from a tuple, list, sympy or numpy vector); ``length`` checked, and
    named in the hint by what one ``entry`` stands for (``"loop"``, ``"subscript"``...)."""
    example = "(" + ", ".join(["1"] + ["0"] * ((length or 2) - 1)) + ")" if (length or 2) > 1 else "(1,)"
    if isinstance(value, str):
        raise _refuse_text(value, what, example)
    items = _items(value)
    if items is None:
        raise AnswerError(f"{what} is {_type_name(value)} {describe(value)}, not a vector",
                          hint=f"write a tuple of integers such as {example}")
    out = tuple(integer(x, f"entry {k + 1} of {what}") for k, x in enumerate(items))
    if length is not None and len(out) != length:
        raise AnswerError(f"{what} {describe(out)} has {len(out)} entries, not {length}",
                          hint=f"one entry per {entry}: {example}")
    return out


def vector_set(value: Any, length: int | None = None, what: str = "the set") -> frozenset[tuple[int, ...]]:
    """``value`` as a set of int tuples (from a set, list or tuple of vectors). A single vector (a tuple of
    numbers) is refused: it is not a set of vectors."""
    example = "{" + "(" + ", ".join(["1"] + ["0"] * ((length or 2) - 1)) + ")}"
    if isinstance(value, str):
        raise _refuse_text(value, what, example)
    if isinstance(value, dict):
        raise AnswerError(f"{what} is a dictionary", hint=f"write a set of tuples such as {example}")
    if isinstance(value, (set, frozenset)):
        items = list(value)
    else:
        items = _items(value)
        if items is None and isinstance(value, Iterable):
            items = list(value)
        if items is None:
            raise AnswerError(f"{what} is {_type_name(value)} {describe(value)}, not a set of vectors",
                              hint=f"write a set of tuples such as {example}")
        if items and all(isinstance(x, numbers.Number) or isinstance(x, sympy.Basic) for x in items):
            raise AnswerError(f"{what} {describe(value)} is one vector, not a set of vectors",
                              hint=f"put it in a set: {{{tuple(items)!r}}}")
    return frozenset(vector(v, length, f"the vector {describe(v, 30)} in {what}") for v in items)


# -- names and choices ------------------------------------------------------------------------------------------

def text(value: Any, what: str = "the answer") -> str:
    """``value`` as text with whitespace collapsed to single spaces and trimmed."""
    if not isinstance(value, str):
        raise AnswerError(f"{what} is {_type_name(value)} {describe(value)}, not text",
                          hint="write it in quotes, e.g. \"wavefront\"")
    return " ".join(value.split())


def choice(value: Any, options: Sequence[str], what: str = "the answer", *, case_sensitive: bool = False) -> str:
    """``value`` as one of ``options`` (whitespace trimmed; case ignored unless ``case_sensitive``)."""
    t = text(value, what)
    for o in options:
        if t == o or (not case_sensitive and t.lower() == o.lower()):
            return o
    raise AnswerError(f"{what} is {describe(value)}, which is not one of {', '.join(map(repr, options))}",
                      hint=f"answer with one of {', '.join(map(repr, options))}")


def name_set(value: Any, options: Sequence[str] | None = None, what: str = "the answer", *,
             case_sensitive: bool = True) -> frozenset[str]:
    """``value`` (a set, list or tuple of strings; a single string is refused) as a set of names, each one
    of ``options`` when given."""
    if isinstance(value, str):
        raise AnswerError(f"{what} is the single text {describe(value)}, not a collection of names",
                          hint=f"write a list or a set, e.g. [{value.strip()!r}] (or [] for none)")
    if isinstance(value, dict) or not isinstance(value, Iterable):
        raise AnswerError(f"{what} is {_type_name(value)} {describe(value)}, not a collection of names",
                          hint="write a list or a set of strings, e.g. ['i'] (or [] for none)")
    out = set()
    for k, v in enumerate(value):
        label = f"entry {describe(v, 30)} of {what}"
        out.add(choice(v, options, label, case_sensitive=case_sensitive) if options is not None else text(v, label))
    return frozenset(out)


# -- matrices --------------------------------------------------------------------------------------------------

def matrix(value: Any, shape: tuple[int, int] | None = None, what: str = "the matrix"
           ) -> tuple[tuple[Fraction, ...], ...]:
    """``value`` (nested lists or tuples, a sympy Matrix, a 2-D numpy array) as rows of exact numbers.
    ``shape = (rows, cols)`` is checked and named in the feedback."""
    if isinstance(value, str):
        raise _refuse_text(value, what, "[[1, 0], [0, 1]]")
    if isinstance(value, sympy.MatrixBase):
        rows = [list(value.row(r)) for r in range(value.rows)]
    elif hasattr(value, "tolist") and len(getattr(value, "shape", ())) == 2:
        rows = value.tolist()
    elif isinstance(value, (list, tuple)) and all(isinstance(r, (list, tuple)) for r in value):
        rows = [list(r) for r in value]
    elif isinstance(value, (list, tuple)):
        raise AnswerError(f"{what} {describe(value)} is one row, not a matrix",
                          hint="write a list of rows, e.g. [[1, 0]] for one row")
    else:
        raise AnswerError(f"{what} is {_type_name(value)} {describe(value)}, not a matrix",
                          hint="write a list of rows, e.g. [[1, 0], [0, 1]], or a sympy Matrix")
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise AnswerError(f"the rows of {what} have different lengths {sorted(widths)}",
                          hint="every row has one entry per iterator")
    out = tuple(tuple(rational(x, f"entry ({r + 1}, {c + 1}) of {what}") for c, x in enumerate(row))
                for r, row in enumerate(rows))
    if shape is not None:
        have = (len(out), len(out[0]) if out else 0)
        if have != shape:
            raise AnswerError(f"{what} is {have[0]} x {have[1]}, not {shape[0]} x {shape[1]}",
                              hint=f"{shape[0]} row(s) (one per subscript or inequality), {shape[1]} column(s) "
                                   "(one per iterator)")
    return out


# -- C text ----------------------------------------------------------------------------------------------------

_GENERATOR = c_generator.CGenerator()


def c_expression(value: Any, what: str = "the expression") -> str:
    """C expression text in canonical form: parsed with pycparser and printed back, so spacing and
    redundant parentheses do not matter (``x[i+1][j][k]`` -> ``x[i + 1][j][k]``)."""
    src = text(value, what)
    try:
        unit = c_parser.CParser().parse(f"void __polylab_answer(void) {{ {src}; }}")
        body = unit.ext[0].body.block_items or []
    except Exception as exc:  # pycparser raises ParseError and assorted plain errors on bad text
        reason = re.sub(r"^[^:]*:\d+:\d+:[\s:]*", "", str(exc)).strip(" :") or "it does not parse"
        raise AnswerError(f"{what} {describe(src)} is not a C expression ({reason})",
                          hint="write it as C, e.g. x[i + 1][j][k]") from None
    if len(body) != 1 or isinstance(body[0], (c_ast.Decl, c_ast.Compound)):
        raise AnswerError(f"{what} {describe(src)} is not one C expression", hint="write one expression")
    return _canonical(body[0])


def c_statements(value: Any, what: str = "the code") -> str:
    """C statements (loops, assignments) in canonical form, one statement per line, braces and spacing
    normalised by pycparser's printer."""
    src = value if isinstance(value, str) else text(value, what)
    try:
        unit = c_parser.CParser().parse(f"void __polylab_answer(void) {{\n{src}\n}}")
    except Exception as exc:  # pycparser raises ParseError and assorted plain errors on bad text
        msg = re.sub(r"^<string>:(\d+):(\d+)", lambda m: f"line {int(m.group(1)) - 1}, column {m.group(2)}",
                     str(exc))
        raise AnswerError(f"{what} is not valid C: {msg}", hint="check the brackets and semicolons") from None
    return _canonical(unit.ext[0].body)


def _canonical(node: c_ast.Node) -> str:
    return _GENERATOR.visit(node).strip()


# -- isl text ----------------------------------------------------------------------------------------------------

def _isl(value: Any, parse: Callable[[str], Any], kinds: tuple[type, ...], what: str, example: str) -> Any:
    if isinstance(value, kinds):
        return value
    src = text(value, what)
    try:
        return parse(src)
    except isl.Error as exc:
        raise AnswerError(f"isl cannot read {what} {describe(src)}: {exc}",
                          hint=f"write isl text such as {example}") from None


def isl_set(value: Any, what: str = "the set") -> isl.Set:
    """isl text or an ``isl.Set`` as an ``isl.Set`` (compare with ``is_equal``, so equivalent texts match)."""
    return _isl(value, isl.Set, (isl.Set, isl.BasicSet), what, "[N] -> { [i, j] : 0 <= i < N and 0 <= j <= i }")


def isl_map(value: Any, what: str = "the map") -> isl.Map:
    """isl text or an ``isl.Map`` as an ``isl.Map``."""
    return _isl(value, isl.Map, (isl.Map, isl.BasicMap), what, "{ S0[i, j] -> [i + j, j] }")


def isl_union_map(value: Any, what: str = "the map") -> isl.UnionMap:
    """isl text (several pieces ``{ S0[i] -> [i]; S1[i] -> [i + 1] }``) or an isl map as an ``isl.UnionMap``."""
    if isinstance(value, (isl.Map, isl.BasicMap)):
        return isl.UnionMap.from_map(value)
    return _isl(value, isl.UnionMap, (isl.UnionMap,), what, "{ S0[i] -> [i]; S1[i] -> [i + 1] }")


# -- functions ---------------------------------------------------------------------------------------------------

def function(value: Any, what: str = "the function") -> Callable[..., Any]:
    """``value`` when it is callable (a ``def`` or a lambda)."""
    if not callable(value):
        raise AnswerError(f"{what} is {_type_name(value)} {describe(value)}, not a function",
                          hint="define it with def NAME(...): ... and return the result")
    return value


__all__ = ["AnswerError", "Opaque", "c_expression", "c_statements", "choice", "describe", "function", "integer", "isl_map",
           "isl_set", "isl_union_map", "matrix", "name_set", "rational", "text", "vector", "vector_set"]
