"""Compiler diagnostics, parsed from gcc, clang and nvcc output and mapped back to the generated source.

gcc and clang write ``FILE:LINE:COLUMN: SEVERITY: MESSAGE`` (the column is sometimes missing); nvcc writes
``FILE(LINE): SEVERITY[ #NUMBER-D]: MESSAGE`` followed by the source line and a caret line, from which the
column is recovered; the linker writes ``FILE:(.text+0x..): undefined reference ...`` or
``/usr/bin/ld: ...`` and ``collect2: error: ...``, which carry no line. Each becomes a :class:`Diagnostic`;
those that point into the compiled source carry its text so a caret can be drawn under the column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from polylab.errors import SourceLocation

__all__ = ["Diagnostic", "parse_diagnostics", "render_diagnostics"]


@dataclass(frozen=True)
class Diagnostic:
    """One compiler message: where (1-based ``line``/``column``, ``None`` when unknown), how bad, what.

    ``severity`` is ``'error'``, ``'warning'`` or ``'note'`` (``fatal error`` counts as ``'error'``,
    nvcc's ``remark`` as ``'note'``). ``file`` is the file the compiler named; ``source_line`` is the text
    of that line of the compiled source when the diagnostic points into it.
    """

    line: int | None
    column: int | None
    severity: str
    message: str
    file: str | None = None
    source_line: str = ""

    @property
    def location(self) -> SourceLocation | None:
        """A :class:`~polylab.errors.SourceLocation` for the caret picture, when the line is known."""
        if self.line is None:
            return None
        column = self.column or 1
        match = re.match(r"[A-Za-z_]\w*|\S", self.source_line[column - 1:]) if self.source_line else None
        return SourceLocation(self.line, column, match.group(0) if match else "", self.source_line)

    def render(self) -> str:
        """``kernel.c:3:7: error: message`` followed by the source line with a caret under the column."""
        where = self.file or ""
        if self.line is not None:
            where += f":{self.line}" if where else f"line {self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where + ': ' if where else ''}{self.severity}: {self.message}"
        loc = self.location
        if loc is not None and loc.source_line:
            text += "\n" + "\n".join("    " + ln for ln in loc.caret().splitlines())
        return text

    def __str__(self) -> str:
        return self.render()


_GCC = re.compile(r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
                  r"(?P<sev>fatal error|error|warning|note):\s*(?P<msg>.*)$")
_NVCC = re.compile(r"^(?P<file>[^\s(][^(\n]*?)\((?P<line>\d+)\):\s*"
                   r"(?P<sev>catastrophic error|error|warning|remark)(?:\s*#[\w-]+)?:\s*(?P<msg>.*)$")
_LINK_REF = re.compile(r"^(?P<file>[^\s:][^:\n]*?):\(\.[\w.]+\+0x[0-9a-f]+\):\s*(?P<msg>.*)$")
_LINKER = re.compile(r"^(?:\S*/)?(?:ld|ld\.\w+|collect2|nvlink)(?:\.exe)?:\s*(?:(?P<sev>error|warning):\s*)?"
                     r"(?P<msg>.*)$")

_SEVERITY = {"fatal error": "error", "catastrophic error": "error", "remark": "note"}


def parse_diagnostics(output: str, *, source: str | None = None, source_names: tuple[str, ...] = (),
                      sources: Mapping[str, str] | None = None) -> tuple[Diagnostic, ...]:
    """Parse compiler output into diagnostics, in the order the compiler wrote them.

    ``sources`` maps file names to their text: a diagnostic in one of them gets the text of its line as
    ``source_line``. Otherwise, when ``source`` is given, diagnostics whose file is one of
    ``source_names`` (or any file, when ``source_names`` is empty) get their line of ``source``.
    Lines that are not diagnostics (gcc's ``In function`` context, caret pictures) are skipped.
    """
    lines = output.splitlines()
    src_lines = source.splitlines() if source is not None else []
    files = {name: text.splitlines() for name, text in (sources or {}).items()}
    result: list[Diagnostic] = []

    def text_of(file: str | None, line: int | None) -> str:
        known = files.get(file or "")
        if known is not None:
            return known[line - 1] if line is not None and 1 <= line <= len(known) else ""
        if line is None or not src_lines or not (1 <= line <= len(src_lines)):
            return ""
        if source_names and file not in source_names:
            return ""
        return src_lines[line - 1]

    for i, raw in enumerate(lines):
        ln = raw.rstrip()
        m = _GCC.match(ln)
        if m:
            line = int(m["line"])
            col = int(m["col"]) if m["col"] else None
            result.append(Diagnostic(line, col, _SEVERITY.get(m["sev"], m["sev"]), m["msg"].strip(),
                                     m["file"], text_of(m["file"], line)))
            continue
        m = _NVCC.match(ln)
        if m:
            line = int(m["line"])
            col = _nvcc_column(lines, i)
            result.append(Diagnostic(line, col, _SEVERITY.get(m["sev"], m["sev"]), m["msg"].strip(),
                                     m["file"], text_of(m["file"], line)))
            continue
        m = _LINK_REF.match(ln)
        if m:
            result.append(Diagnostic(None, None, "error", f"link: {m['msg'].strip()}", m["file"]))
            continue
        m = _LINKER.match(ln)
        if m and m["msg"].strip():
            msg = m["msg"].strip()
            if msg.startswith("ld returned") and any(d.severity == "error" for d in result):
                continue  # collect2's summary adds nothing to the linker's own message
            sev = m["sev"] or ("warning" if msg.startswith("warning") else "error")
            if re.match(r"^\S+: in function", msg):
                continue
            result.append(Diagnostic(None, None, sev, f"link: {msg}", None))
    return tuple(result)


def _nvcc_column(lines: list[str], i: int) -> int | None:
    """nvcc prints the source line indented by two spaces and a caret line under it."""
    if i + 2 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 2].strip() == "^":
        caret = lines[i + 2].index("^")
        return max(1, caret - 2 + 1)
    return None


def render_diagnostics(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic],
                       *, severities: tuple[str, ...] = ("error", "warning")) -> str:
    """The diagnostics of the given severities, each with its caret picture, separated by blank lines."""
    return "\n".join(d.render() for d in diagnostics if d.severity in severities)
