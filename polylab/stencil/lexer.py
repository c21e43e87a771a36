"""Tokens of the dialect's MLIR text, each with its line and column (for error messages).

Kinds: ``value`` (``%3``, ``%arg0``, ``%5#1``), ``symbol`` (``@name``), ``type`` (``!stencil.temp<...>``,
angle brackets balanced), ``word`` (``stencil.apply``, ``f64``, ``to``), ``number`` (``-4``,
``4.8828125E-4``), ``string`` (``"ogt"``), ``punct`` (``( ) [ ] { } , : = -> < > ?``) and ``end``.
``//`` comments are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from polylab.errors import SourceLocation
from polylab.stencil.errors import StencilSyntaxError

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+|//[^\n]*)
  | (?P<value>%[A-Za-z0-9_$.\-]+(?:\#[0-9]+)?)
  | (?P<symbol>@[A-Za-z_$.][A-Za-z0-9_$.]*)
  | (?P<type>![A-Za-z_][A-Za-z0-9_.]*)
  | (?P<number>[-+]?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+|0x[0-9A-Fa-f]+|[0-9]+))
  | (?P<word>[A-Za-z_][A-Za-z0-9_.$]*)
  | (?P<string>"[^"\n]*")
  | (?P<punct>->|[()\[\]{},:=<>?*+-])
""", re.VERBOSE)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    line: int
    column: int
    offset: int


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text`` (a ``type`` token runs to its balanced closing ``>``)."""
    tokens: list[Token] = []
    pos, line, line_start = 0, 1, 0
    lines = text.splitlines() or [""]
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        col = pos - line_start + 1
        if m is None:
            raise StencilSyntaxError(f"unexpected character {text[pos]!r}",
                                     location=location(lines, line, col, text[pos]))
        kind = m.lastgroup or ""
        end = m.end()
        if kind == "type" and end < len(text) and text[end] == "<":
            depth, k = 0, end
            while k < len(text):
                depth += {"<": 1, ">": -1}.get(text[k], 0)
                if text[k] == "\n" or depth == 0:
                    break
                k += 1
            if k >= len(text) or text[k] != ">":
                raise StencilSyntaxError("unclosed '<' in a type", location=location(lines, line, col, text[pos:k]))
            end = k + 1
        if kind != "space":
            tokens.append(Token(kind, text[pos:end], line, col, pos))
        newlines = text.count("\n", pos, end)
        if newlines:
            line += newlines
            line_start = text.rindex("\n", pos, end) + 1
        pos = end
    tokens.append(Token("end", "", line, pos - line_start + 1, pos))
    return tokens


def location(lines: list[str], line: int, column: int, text: str) -> SourceLocation:
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    return SourceLocation(line, column, text, src)
