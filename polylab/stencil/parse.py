"""Reading a stencil program: today's MLIR syntax through xDSL's parser and verifier, or Open Earth's 2020
syntax through :mod:`polylab.stencil.oec` first. Every mistake is a located error (line, column, caret,
hint), never a traceback."""

from __future__ import annotations

from itertools import accumulate

from polylab.stencil import oec
from polylab.stencil.errors import StencilSyntaxError, failing_op, from_xdsl, location_at
from polylab.stencil.program import Program, parse_module


def parse(text: str, filename: str | None = None) -> Program:
    """The program of ``text`` (today's syntax or Open Earth's 2020 syntax), parsed and verified by xDSL."""
    if not text.strip():
        raise StencilSyntaxError("the text is empty", hint="write a module with one func.func of the stencil "
                                 "dialect (docs/stencil.md)")
    modern = oec.upgrade(text, filename) if oec.is_2020(text) else text
    try:
        module, starts = parse_module(modern)
    except Exception as exc:  # xDSL's parse errors (ParseError and the exceptions of its verifiers)
        raise from_xdsl(exc, modern) from None
    program = Program(module, text, filename, _mapped(starts, modern, text))
    verify(program)
    return program


def _mapped(starts: dict[int, int], modern: str, source: str) -> dict[int, int]:
    """Start offsets in the upgraded text -> the same line and indentation in ``source`` (the upgrade keeps
    lines and indentation)."""
    if modern is source:
        return starts
    lines = source.split("\n")
    firsts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    out = {}
    for key, offset in starts.items():
        loc = location_at(modern, offset)
        n = loc.line - 1
        indent = len(lines[n]) - len(lines[n].lstrip()) if n < len(lines) else 0
        out[key] = firsts[n] + min(loc.column - 1, indent)
    return out


def verify(program: Program) -> None:
    """xDSL's verifier on the program; a failure names the innermost operation that does not verify."""
    try:
        program.module.verify()
    except Exception as exc:  # xDSL's verifiers raise VerifyException and, on malformed IR, others
        err = from_xdsl(exc, "")
        raise program.error(err.message, failing_op(program.module), hint=err.hint) from None
