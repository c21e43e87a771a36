"""Source text handling: comment stripping, pycparser invocation, coordinates and exact source extents.

pycparser has no preprocessor. C text with directives goes through :mod:`polylab.frontend.preprocess`
first, whose output is line-aligned with the file (:func:`prepared`); other text only has its comments and
preprocessor lines (other than ``#pragma``) blanked by :func:`prepare`, character by character, so every
remaining character keeps its line and column (a SysY ``#define NAME <integer>`` is remembered as a
constant). A C fragment is wrapped in a function whose body starts with a ``#line 1`` marker, so the
coordinates pycparser reports are the user's. Text nested deeper than pycparser's recursion can take is
refused before parsing (:data:`MAX_NESTING`) and syntax trees deeper than the later passes can walk after it
(:data:`MAX_DEPTH`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pycparser import c_ast, c_generator
from pycparser.c_parser import CParser, ParseError

from polylab.errors import FrontendError, SourceEncodingError, SourceLocation, SourceSyntaxError

FRAGMENT_FUNCTION = "__polylab_fragment__"


def read_text_file(path: str | os.PathLike[str], *, what: str = "source file") -> str:
    """The text of a file a user gave (a C or SysY source, a header it includes, a schedule spec, a stencil
    program), read as UTF-8: the one way polylab opens user text.

    A file that cannot be read raises :class:`~polylab.errors.FrontendError`; one that is not UTF-8 raises
    :class:`~polylab.errors.SourceEncodingError` located at the first byte that is not (line, column, the
    line with that byte shown as ``\\xNN``), with a hint. No byte is guessed at or dropped: a wrong guess
    would change what polylab analyses without a word."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise FrontendError(f"cannot read {path}: {exc.strerror or exc}", hint="check the file name") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
        line_start = raw.rfind(b"\n", 0, start) + 1
        line_end = raw.find(b"\n", start)
        line_bytes = raw[line_start: len(raw) if line_end < 0 else line_end]
        shown = line_bytes.decode("utf-8", errors="backslashreplace")
        column = len(raw[line_start:start].decode("utf-8", errors="backslashreplace")) + 1
        bad = raw[start:exc.end]
        where = SourceLocation(raw.count(b"\n", 0, start) + 1, column, bad.decode("utf-8", "backslashreplace"),
                               shown)
        raise SourceEncodingError(f"not UTF-8 text: the byte{'s' if len(bad) > 1 else ''} "
                                  f"{' '.join(f'0x{b:02x}' for b in bad)} cannot be read",
                                  location=where, filename=str(path),
                                  hint=f"save the {what} as UTF-8 (an editor's 'save with encoding', or "
                                       "iconv -f latin1 -t utf-8), or remove the character") from None


@dataclass
class Prepared:
    """The text pycparser sees (comments and directives blanked), the original lines, ``#define`` ints."""

    original: str
    clean: str
    lines: list[str]
    defines: dict[str, int] = field(default_factory=dict)
    has_scop_pragma: bool = False


def blank_comments(text: str) -> str:
    """The text with every comment replaced by spaces (new lines kept), strings and characters untouched."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(c if c == "\n" else " " for c in text[i:j]))
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
        else:
            j = i + 1
            out.append(ch)
        i = j
    return "".join(out)


def _refuse_inner_pragma(line: str, number: int) -> None:
    """A ``#pragma`` after other text on its line (outside a string) is refused where it stands: C reads a
    directive only at the start of a line, and the region it would close or open cannot be placed."""
    m = re.search(r"#\s*pragma\b", line)
    if m is not None and line[:m.start()].count('"') % 2 == 0:
        raise SourceSyntaxError("a #pragma must begin its line", location=SourceLocation(
            number, m.start() + 1, line[m.start():].strip(), line), hint="put the #pragma on a line of its own")


def prepare(text: str) -> Prepared:
    """Blank comments and preprocessor lines (other than ``#pragma``) while keeping every line and column
    in place; ``#define NAME <integer>`` is remembered (the SysY reading, which has no preprocessor)."""
    out: list[str] = []
    defines: dict[str, int] = {}
    has_pragma = False
    for number, line in enumerate(blank_comments(text).split("\n"), 1):
        words = line.lstrip(" \t")[1:].split() if line.lstrip(" \t").startswith("#") else None
        if words is None:
            _refuse_inner_pragma(line, number)
        if words is None or words[:1] == ["pragma"]:
            has_pragma = has_pragma or (words is not None and words[1:2] in (["scop"], ["endscop"]))
            out.append(line)
            continue
        if len(words) == 3 and words[0] == "define" and words[1].isidentifier():
            try:
                defines[words[1]] = int(words[2].rstrip("uUlL"), 0)
            except ValueError:
                pass
        out.append(" " * len(line))
    return Prepared(text, "\n".join(out), text.splitlines(), defines, has_pragma)


def prepared(original: str, pre) -> Prepared:
    """The :class:`Prepared` form of a preprocessed text (:class:`~polylab.frontend.preprocess.Preprocessed`,
    line-aligned with ``original``): pycparser reads the expanded text; a line shows as the user wrote it
    when expansion left it unchanged (so its columns are the file's), else as expanded."""
    from_pp = prepare(pre.text)
    blanked = prepare(original).clean.split("\n")
    orig = original.split("\n")
    shown = []
    for k, line in enumerate(pre.text.split("\n")):
        same = k < len(orig) and blanked[k].rstrip() == line.rstrip()
        shown.append(orig[k] if same else line)
    while shown and not shown[-1] and len(shown) > len(original.splitlines()):
        shown.pop()
    return Prepared(original, from_pp.clean, shown, dict(pre.constants), from_pp.has_scop_pragma)


def _current_token(parser: CParser, line_offset: int) -> tuple[int, int, str] | None:
    """Where pycparser stopped, for the messages that carry no coordinate."""
    try:
        tok = parser._peek()  # noqa: SLF001 - pycparser exposes no public accessor
    except Exception:  # pragma: no cover - defensive: a private API
        return None
    if tok is None or not getattr(tok, "lineno", None):
        return None
    return tok.lineno - line_offset, tok.column or 1, str(tok.value)


def _ends_early(prep: Prepared, what: str) -> SourceSyntaxError:
    """The text stops in the middle of a construct: the error is at its last character (an unclosed
    ``/*`` comment, which hides everything after it, is named)."""
    opened = prep.original.rfind("/*")
    if opened >= 0 and prep.original.find("*/", opened + 2) < 0:
        line = prep.original.count("\n", 0, opened) + 1
        src = prep.lines[line - 1] if line <= len(prep.lines) else ""
        col = opened - (prep.original.rfind("\n", 0, opened) + 1) + 1
        return SourceSyntaxError(f"the {what} is not valid C: this comment is never closed, so the rest of "
                                 "the text is part of it", location=SourceLocation(line, col, "/*", src),
                                 hint="close the comment with */")
    last = max(1, len(prep.lines))
    while last > 1 and not prep.lines[last - 1].strip():
        last -= 1
    src = prep.lines[last - 1] if prep.lines else ""
    return SourceSyntaxError(f"the {what} is not valid C: it ends too early",
                             location=SourceLocation(last, max(1, len(src)), src[-1:] if src else "", src),
                             hint="a closing '}' or ')' is probably missing")


def _syntax_error(exc: ParseError, prep: Prepared, what: str,
                  where: tuple[int, int, str] | None = None) -> SourceSyntaxError:
    msg = str(exc)
    if (where is not None and where[0] > len(prep.lines) and msg.count(":") < 3) or "end of input" in msg.lower():
        return _ends_early(prep, what)
    if where is not None and where[0] >= 1 and msg.count(":") < 3:
        line, col, token = where
        reason = msg.split(":", 1)[-1].strip().lower() if ":" in msg else msg
        src = prep.lines[line - 1] if line <= len(prep.lines) else ""
        return SourceSyntaxError(
            f"the {what} is not valid C: {reason} before {token!r}",
            location=SourceLocation(line, col, token, src),
            hint="check for a missing ')', ']', '}' or ';' or a missing operand just before the marked place")
    line, col, reason = 0, 0, msg
    parts = msg.split(":", 3)
    if len(parts) >= 3:
        try:
            line = int(parts[1])
            rest = parts[2:]
            try:
                col = int(rest[0])
                reason = ":".join(rest[1:]).strip()
            except ValueError:
                col = 1
                reason = ":".join(rest).strip()
        except ValueError:
            pass
    if line < 1 or line > max(1, len(prep.lines)):
        line = max(1, min(line or len(prep.lines), len(prep.lines)))
        col = col or 1
    src = prep.lines[line - 1] if prep.lines else ""
    col = max(1, col or 1)
    token = ""
    if reason.startswith("before:"):
        token = reason[len("before:"):].strip()
        reason = f"unexpected {token!r}"
    else:
        token = src[col - 1: col] if col <= len(src) else ""
    return SourceSyntaxError(
        f"the {what} is not valid C: {reason}",
        location=SourceLocation(line, col, token or src[col - 1: col], src),
        hint="check for a missing ')', ']', '}' or ';' just before the marked place")


#: brackets ``( [ {`` open at once: pycparser parses recursively (about 8 Python frames per parenthesis),
#: so deeper text would exhaust Python's stack; no hand-written loop nest comes near it
MAX_NESTING = 60
#: depth of the syntax tree (a sum of n terms is n - 1 nested additions): the front end and the layers
#: below walk expressions recursively
MAX_DEPTH = 250


def _check_brackets(prep: Prepared, what: str) -> None:
    """A ``}`` that closes nothing (pycparser fails on it with an internal assertion), and brackets nested
    deeper than :data:`MAX_NESTING` (pycparser would run out of Python stack)."""
    braces = depth = 0
    for ln, line in enumerate(prep.clean.split("\n"), start=1):
        quote = ""
        for col, ch in enumerate(line, start=1):
            if quote:
                if ch == quote:
                    quote = ""
                continue
            if ch in "\"'":
                quote = ch
            elif ch in "([{":
                depth += 1
                braces += ch == "{"
                if depth > MAX_NESTING:
                    src = prep.lines[ln - 1] if ln <= len(prep.lines) else line
                    raise SourceSyntaxError(f"the {what} nests brackets more than {MAX_NESTING} deep",
                                            location=SourceLocation(ln, col, ch, src),
                                            hint="remove redundant parentheses or braces, or split the "
                                                 "statement into several")
            elif ch in ")]}":
                depth = max(0, depth - 1)
                if ch == "}":
                    braces -= 1
                    if braces < 0:
                        src = prep.lines[ln - 1] if ln <= len(prep.lines) else line
                        raise SourceSyntaxError(f"the {what} is not valid C: this '}}' closes no block",
                                                location=SourceLocation(ln, col, "}", src),
                                                hint="remove it, or add the '{' it should close")


def check_depth(ast: c_ast.Node, prep: Prepared, what: str) -> None:
    """Refuse a syntax tree deeper than :data:`MAX_DEPTH` (walked without recursion), at the node where it
    gets too deep: every later pass may then walk it recursively."""
    stack = [(ast, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            coord = getattr(node, "coord", None)
            line = coord.line if coord is not None and coord.line else 1
            col = (coord.column or 1) if coord is not None else 1
            src = prep.lines[line - 1] if 0 < line <= len(prep.lines) else ""
            raise SourceSyntaxError(
                f"the {what} nests expressions or statements more than {MAX_DEPTH} levels deep (a sum of n "
                "terms is n - 1 nested additions)",
                location=SourceLocation(line, col, src[col - 1:col], src),
                hint="split the long expression into several statements, e.g. accumulate partial sums in a "
                     "temporary")
        stack.extend((child, depth + 1) for _, child in node.children())


def _run_parser(parser: CParser, text: str, filename: str | None, prep: Prepared, what: str):
    try:
        return parser.parse(text, filename or "<input>")
    except ParseError as exc:
        raise _syntax_error(exc, prep, what, _current_token(parser, 0)) from None
    except RecursionError:
        where = _current_token(parser, 0)
        line, col, tok = where if where else (1, 1, "")
        src = prep.lines[line - 1] if 0 < line <= len(prep.lines) else ""
        raise SourceSyntaxError(f"the {what} is nested too deeply for the C parser",
                                location=SourceLocation(line, col, tok, src),
                                hint="remove redundant parentheses or braces, or split long statements") from None
    except (AssertionError, IndexError, AttributeError, TypeError, ValueError) as exc:  # pycparser internals
        where = _current_token(parser, 0)
        line, col, tok = where if where else (1, 1, "")
        src = prep.lines[line - 1] if 0 < line <= len(prep.lines) else ""
        raise SourceSyntaxError(f"the {what} is not valid C ({type(exc).__name__} in the C parser)",
                                location=SourceLocation(line, col, tok, src),
                                hint="check the marked place for unbalanced brackets") from None


def parse_fragment(prep: Prepared, filename: str | None) -> c_ast.FuncDef:
    """Parse a fragment (declarations and statements at top level) as the body of a function."""
    text = f"void {FRAGMENT_FUNCTION}(void) {{\n#line 1\n{prep.clean}\n}}\n"
    _check_brackets(prep, "fragment")
    ast = _run_parser(CParser(), text, filename, prep, "fragment")
    check_depth(ast, prep, "fragment")
    return ast.ext[0]


def parse_unit(prep: Prepared, filename: str | None) -> c_ast.FileAST:
    """Parse a whole translation unit (a C file or a SysY program)."""
    _check_brackets(prep, "program")
    ast = _run_parser(CParser(), prep.clean, filename, prep, "program")
    check_depth(ast, prep, "program")
    return ast


class Source:
    """Coordinates and exact text extents over the original source."""

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.clean_lines = prep.clean.split("\n")
        self._gen = c_generator.CGenerator()

    def line(self, n: int) -> str:
        return self.prep.lines[n - 1] if 0 < n <= len(self.prep.lines) else ""

    def show(self, node: c_ast.Node) -> str:
        """The node printed as C (compact, used for the offending text of a message)."""
        try:
            return self._gen.visit(node)
        except Exception:  # pragma: no cover - the generator handles every expression node
            return type(node).__name__

    def location(self, node: c_ast.Node, text: str | None = None) -> SourceLocation:
        coord = getattr(node, "coord", None)
        line = coord.line if coord else 1
        col = (coord.column or 1) if coord else 1
        return SourceLocation(line, col, text if text is not None else self.show(node), self.line(line))

    # -- exact extents --------------------------------------------------------------------------------
    def _scan_to(self, line: int, col: int, stop: str) -> tuple[int, int]:
        """The (line, column) of the first ``stop`` character at bracket depth 0 from (line, col)."""
        depth = 0
        ln, c = line, col - 1
        while ln <= len(self.clean_lines):
            s = self.clean_lines[ln - 1]
            while c < len(s):
                ch = s[c]
                if ch in "([{":
                    depth += 1
                elif ch in ")]}":
                    depth -= 1
                    if depth < 0:
                        return ln, c + 1
                    if depth == 0 and stop == "}" and ch == "}":
                        return ln, c + 1
                elif ch == stop and depth == 0:
                    return ln, c + 1
                c += 1
            ln, c = ln + 1, 0
        last = len(self.clean_lines)
        return last, len(self.clean_lines[last - 1]) if last else 0

    def end(self, node: c_ast.Node) -> tuple[int, int]:
        """The (line, column) of the last character of a statement."""
        match node:
            case c_ast.Compound():
                return self._scan_to(node.coord.line, node.coord.column, "}")
            case c_ast.For() | c_ast.While():
                return self.end(node.stmt)
            case c_ast.DoWhile():
                return self._scan_to(self.end(node.stmt)[0], self.end(node.stmt)[1] + 1, ";")
            case c_ast.If():
                return self.end(node.iffalse if node.iffalse is not None else node.iftrue)
            case c_ast.Pragma():
                return node.coord.line, len(self.line(node.coord.line))
            case _:
                coord = node.coord
                return self._scan_to(coord.line, coord.column, ";")

    def start(self, node: c_ast.Node) -> tuple[int, int]:
        if isinstance(node, c_ast.Decl) and node.coord is not None:
            # pycparser places a declaration at its name; the extent starts at the type
            return self._decl_start(node)
        return node.coord.line, node.coord.column or 1

    def _decl_start(self, node: c_ast.Decl) -> tuple[int, int]:
        ln, col = node.coord.line, node.coord.column or 1
        s = self.clean_lines[ln - 1]
        k = col - 1
        # walk back over the type words and qualifiers on the same line
        while k > 0 and s[k - 1] not in ";{}":
            k -= 1
        while k < col - 1 and s[k] in " \t":
            k += 1
        return ln, k + 1

    def text(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        """The original text from ``start`` to ``end`` inclusive (1-based line, column)."""
        (l0, c0), (l1, c1) = start, end
        lines = self.prep.lines
        if l0 == l1:
            return lines[l0 - 1][c0 - 1:c1]
        parts = [lines[l0 - 1][c0 - 1:]] + lines[l0:l1 - 1] + [lines[l1 - 1][:c1]]
        return "\n".join(parts)

    def node_text(self, node: c_ast.Node) -> str:
        return self.text(self.start(node), self.end(node))
