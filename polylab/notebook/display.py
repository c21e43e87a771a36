"""Composite views for notebooks: error boxes with a caret under the cell's text, highlighted code,
figures as inline images, and the summary panels the magics show.

Each view is a small object with ``_repr_mimebundle_`` (always with ``text/plain``), so IPython's
``display`` and nbconvert render it, and tests can read what a student would see.
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from matplotlib.figure import Figure

from polylab.errors import PolylabError, SourceLocation
from polylab.render import esc

_STYLE = ("<style>.polylab-panel{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px}"
          ".polylab-panel table{border-collapse:collapse;margin:4px 0}"
          ".polylab-panel td,.polylab-panel th{border:1px solid #ddd;padding:2px 6px;text-align:left;"
          "vertical-align:top}.polylab-panel h4{margin:8px 0 4px 0}"
          ".polylab-error{border-left:4px solid #d62728;background:#fdf0f0;padding:6px 10px;margin:4px 0}"
          ".polylab-stderr{border-left:4px solid #e6a000;background:#fff8e6;padding:6px 10px;margin:4px 0}"
          ".polylab-ok{color:#1a7f37;font-weight:bold}.polylab-bad{color:#d62728;font-weight:bold}"
          ".polylab-warn{color:#b35900;font-weight:bold}</style>")


# -- figures -------------------------------------------------------------------------------------------

def figure_png(fig: Figure, dpi: int = 90, fast: bool = False) -> bytes:
    """The figure as PNG bytes (Agg, no pyplot state involved); ``fast`` trades size for speed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, pil_kwargs={"compress_level": 1} if fast else None)
    return buf.getvalue()


def figure_html(fig: Figure, dpi: int = 90, alt: str = "picture") -> str:
    data = base64.b64encode(figure_png(fig, dpi)).decode("ascii")
    return f"<img alt='{esc(alt)}' src='data:image/png;base64,{data}'/>"


# -- code ----------------------------------------------------------------------------------------------

def code_html(code: str, language: str = "c") -> str:
    """``code`` highlighted with pygments when it is installed, else a plain ``<pre>``."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        lexer = get_lexer_by_name({"mlir": "text"}.get(language, language))
        fmt = HtmlFormatter(noclasses=True, style="default", nowrap=False)
        return f"<div class='polylab-code'>{highlight(code, lexer, fmt)}</div>"
    except Exception:  # pygments missing or no lexer: plain text is still correct
        return f"<pre class='polylab-code'>{esc(code)}</pre>"


@dataclass(frozen=True)
class Code:
    """Source text that displays highlighted (``text/html``) and plain (``text/plain``)."""

    text: str
    language: str = "c"
    title: str = ""

    def _repr_mimebundle_(self, include=None, exclude=None):
        head = f"<h4>{esc(self.title)}</h4>" if self.title else ""
        return {"text/plain": self.text,
                "text/html": f"<div class='polylab-panel'>{head}{code_html(self.text, self.language)}</div>"}


# -- errors --------------------------------------------------------------------------------------------

def locate_in_cell(err: PolylabError, cell: str | None, first_line: int = 1) -> PolylabError:
    """``err`` with its location expressed in the lines of ``cell`` (the text the student typed).

    An error from the cell's own text keeps its line and gets the cell's line as ``source_line`` when it
    has none. When the error's line holds different text (the layer numbered lines of another text),
    the line of the cell that holds the error's ``source_line`` is used instead. ``first_line`` is the
    cell line on which the parsed text starts.
    """
    loc = err.location
    if loc is None or cell is None:
        return err
    lines = cell.splitlines()
    line = loc.line + first_line - 1
    src = loc.source_line
    if src and not (1 <= line <= len(lines) and lines[line - 1].rstrip() == src.rstrip()):
        hits = [k + 1 for k, ln in enumerate(lines) if ln.rstrip() == src.rstrip()]
        if not hits and loc.text:
            hits = [k + 1 for k, ln in enumerate(lines) if loc.text in ln]
            if hits:
                col = lines[hits[0] - 1].index(loc.text) + 1
                new = replace(loc, line=hits[0], column=col, source_line=lines[hits[0] - 1])
                return _with_location(err, new)
        if hits:
            line = min(hits, key=lambda h: abs(h - line))
            return _with_location(err, replace(loc, line=line))
        return err
    if 1 <= line <= len(lines):
        return _with_location(err, replace(loc, line=line, source_line=src or lines[line - 1]))
    return err


_QUOTED = re.compile(r"'([A-Za-z_]\w*)'")
_STATEMENT = re.compile(r"\b(S\d+)\b")


def locate_schedule_error(err: PolylabError, cell: str | None) -> PolylabError:
    """``err`` (raised while reading the schedule written in ``cell``) with its caret on the part of the
    cell it is about.

    A recipe step error already carries the line and column of the step and is returned unchanged. An
    error about isl text is located by the schedule layer at the whole text (its first character); when
    its message names a statement (``S5``, ``the schedule of S0 ...``) or a quoted name (``unknown
    parameter 'M'``) that the cell holds, the caret moves to that piece (``S5[i] -> [i]``) or name.
    """
    loc = err.location
    if loc is None or not cell:
        return err
    first = len(cell) - len(cell.lstrip())
    if not cell[first:].startswith(("{", "[")):
        return err  # a recipe: the step's own column is right
    start_line = cell.count("\n", 0, first) + 1
    start_col = first - (cell.rfind("\n", 0, first) + 1) + 1
    if (loc.line, loc.column) != (start_line, start_col):
        return err  # already points somewhere specific
    names = _QUOTED.findall(err.message) + _STATEMENT.findall(err.message)
    for name in names:
        m = None
        if _STATEMENT.fullmatch(name):
            pieces = list(re.finditer(rf"\b{re.escape(name)}\s*\[([^\]]*)\]", cell))
            arity = re.search(r"gives it (\d+)\b", err.message)  # "S0 has 2 iterators, ... gives it 1"
            if arity:
                n = int(arity.group(1))
                pieces = [p for p in pieces if len([x for x in p.group(1).split(",") if x.strip()]) == n] or pieces
            m = pieces[0] if pieces else None
        if m is not None:  # a statement's piece: up to the next ';' or '}' on that line
            end = len(cell)
            for stop in (";", "}", "\n"):
                k = cell.find(stop, m.start())
                if k >= 0:
                    end = min(end, k)
            text = cell[m.start():end].rstrip()
        else:
            m = re.search(rf"(?<![\w']){re.escape(name)}(?![\w'])", cell)
            text = name
        if m is None:
            continue
        line = cell.count("\n", 0, m.start()) + 1
        line_start = cell.rfind("\n", 0, m.start()) + 1
        line_end = cell.find("\n", m.start())
        source_line = cell[line_start: line_end if line_end >= 0 else len(cell)]
        return _with_location(err, SourceLocation(line, m.start() - line_start + 1, text, source_line))
    return err


def _with_location(err: PolylabError, loc: SourceLocation) -> PolylabError:
    new = err.__class__.__new__(err.__class__)
    new.__dict__.update(err.__dict__)
    new.args = err.args
    new.location = loc
    return new


@dataclass(frozen=True)
class ErrorBox:
    """A user error shown in the cell: ``cell:LINE:COL: kind: message``, the caret picture and the hint,
    plus anything isl wrote on stderr. Never a traceback."""

    error: PolylabError
    stderr: str = ""
    where: str = "cell"

    @classmethod
    def of(cls, err: PolylabError, cell: str | None = None, stderr: str = "", first_line: int = 1
           ) -> "ErrorBox":
        """The box for ``err`` raised while running ``cell``; a location in another text (generated code,
        a compiler's input) keeps its own numbering and is not called ``cell``."""
        located = locate_in_cell(err, cell, first_line)
        loc = located.location
        lines = (cell or "").splitlines()
        in_cell = loc is not None and 1 <= loc.line <= len(lines) and (
            not loc.source_line or lines[loc.line - 1].rstrip() == loc.source_line.rstrip())
        return cls(located, stderr, "cell" if in_cell else "")

    @property
    def text(self) -> str:
        out = self.error.render(self.where if self.error.location is not None and self.where else None)
        if self.stderr.strip():
            out += "\nisl/stderr:\n" + self.stderr.rstrip()
        return out

    def _repr_mimebundle_(self, include=None, exclude=None):
        err = self.error
        loc = err.location
        where = (f"{self.where + ', ' if self.where else ''}line {loc.line}, column {loc.column}: "
                 if loc is not None else "")
        caret = ""
        if loc is not None and loc.source_line:
            caret = f"<pre style='margin:4px 0'>{esc(loc.caret())}</pre>"
        hint = f"<div><i>hint:</i> {esc(err.hint)}</div>" if err.hint else ""
        std = (f"<div class='polylab-stderr'><b>isl / stderr</b><pre style='margin:2px 0'>"
               f"{esc(self.stderr.rstrip())}</pre></div>") if self.stderr.strip() else ""
        body = (f"{_STYLE}<div class='polylab-panel polylab-error'><b>{esc(where)}{esc(err.kind)}:</b> "
                f"{esc(err.message)}{caret}{hint}</div>{std}")
        return {"text/plain": self.text, "text/html": body}


@dataclass(frozen=True)
class InternalErrorBox:
    """An unexpected exception inside polylab (a bug, not the student's mistake): one line saying so, the
    traceback folded away in the HTML view (``<details>``) for whoever reports it."""

    error: BaseException
    stderr: str = ""

    @property
    def text(self) -> str:
        return (f"internal error in polylab: {type(self.error).__name__}: {self.error}\n"
                "(this is a bug in polylab, not in your cell; please report it with the cell's text)")

    def _repr_mimebundle_(self, include=None, exclude=None):
        import traceback

        tb = "".join(traceback.format_exception(type(self.error), self.error, self.error.__traceback__))
        std = f"<pre>{esc(self.stderr)}</pre>" if self.stderr.strip() else ""
        return {"text/plain": self.text,
                "text/html": f"{_STYLE}<div class='polylab-panel polylab-error'><b>internal error in polylab:</b> "
                             f"{esc(type(self.error).__name__)}: {esc(self.error)}<br><i>this is a bug in "
                             f"polylab, not in your cell; please report it with the cell's text</i>"
                             f"<details><summary>details</summary><pre>{esc(tb)}</pre>{std}</details></div>"}


@dataclass(frozen=True)
class StderrBox:
    """Text a C library printed on stderr while the cell ran (shown, never lost)."""

    text: str

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": "isl/stderr:\n" + self.text.rstrip(),
                "text/html": f"{_STYLE}<div class='polylab-panel polylab-stderr'><b>isl / stderr</b>"
                             f"<pre style='margin:2px 0'>{esc(self.text.rstrip())}</pre></div>"}


# -- panels ---------------------------------------------------------------------------------------------

@dataclass
class Panel:
    """A titled sequence of sections; each section has a plain-text and an HTML form."""

    title: str
    sections: list[tuple[str, str, str]] = field(default_factory=list)  # (heading, text, html)
    figures: list[tuple[str, Figure]] = field(default_factory=list)
    dpi: int = 90

    def add(self, heading: str, text: str, html_: str | None = None) -> "Panel":
        self.sections.append((heading, text, html_ if html_ is not None else f"<pre>{esc(text)}</pre>"))
        return self

    def add_figure(self, caption: str, fig: Figure) -> "Panel":
        self.figures.append((caption, fig))
        return self

    @property
    def text(self) -> str:
        out = [self.title, "=" * len(self.title)]
        for heading, text, _ in self.sections:
            out.append(f"{heading}:" if heading else "")
            out.extend("  " + ln for ln in text.splitlines())
        for caption, _ in self.figures:
            out.append(f"[figure: {caption}]")
        return "\n".join(out)

    def html(self) -> str:
        parts = [f"{_STYLE}<div class='polylab-panel'><h3 style='margin:4px 0'>{esc(self.title)}</h3>"]
        for heading, _, h in self.sections:
            parts.append((f"<h4>{esc(heading)}</h4>" if heading else "") + h)
        if self.figures:
            parts.append("<div style='display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start'>")
            for caption, fig in self.figures:
                parts.append(f"<figure style='margin:0'>{figure_html(fig, self.dpi, caption)}"
                             f"<figcaption style='font-size:11px;color:#555'>{esc(caption)}</figcaption></figure>")
            parts.append("</div>")
        parts.append("</div>")
        return "".join(parts)

    def _repr_mimebundle_(self, include=None, exclude=None):
        key = (len(self.sections), len(self.figures))
        if getattr(self, "_cache", (None, None))[0] != key:  # pictures are rendered once per content
            self._cache = (key, self.html())
        return {"text/plain": self.text, "text/html": self._cache[1]}


def verdict_html(ok: bool, text: str, warn: bool = False) -> str:
    cls = "polylab-ok" if ok and not warn else ("polylab-warn" if warn else "polylab-bad")
    mark = "\u2714" if ok and not warn else ("\u26a0" if warn else "\u2718")
    return f"<span class='{cls}'>{mark} {esc(text)}</span>"


def table_html(header: Sequence[str], rows: Sequence[Sequence[Any]], code_cols: Sequence[int] = ()) -> str:
    def cell(k, v):
        return f"<td><code>{esc(v)}</code></td>" if k in code_cols else f"<td>{esc(v)}</td>"

    return ("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"
            + "".join("<tr>" + "".join(cell(k, v) for k, v in enumerate(r)) + "</tr>" for r in rows)
            + "</table>")


def table_text(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cols = [list(map(str, c)) for c in zip(header, *rows)] if rows else [[h] for h in header]
    widths = [max(len(x) for x in c) for c in cols]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths))]
    for r in rows:
        lines.append("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))
    return "\n".join(ln.rstrip() for ln in lines)
