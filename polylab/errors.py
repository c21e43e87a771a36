"""The one error hierarchy of polylab.

Every error a user can cause derives from :class:`PolylabError`. An error carries a message, an optional
source location (line, column, the offending text and the whole source line, so a caret can be drawn under
it) and an optional hint. Notebooks render it without a traceback (IPython's ``_render_traceback_``); the
command line prints :meth:`PolylabError.render` and exits with status 2.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A place in a source text: 1-based line and column, the offending text, and the whole line."""

    line: int
    column: int
    text: str = ""
    source_line: str = ""

    @classmethod
    def at(cls, text: str, offset: int) -> SourceLocation:
        """The place of the character at ``offset`` in ``text`` (its token: up to the next space)."""
        start = text.rfind("\n", 0, offset) + 1
        end = text.find("\n", offset)
        source_line = text[start: end if end >= 0 else len(text)]
        return cls(text.count("\n", 0, offset) + 1, offset - start + 1, source_line[offset - start:].split(" ")[0],
                   source_line)

    def caret(self) -> str:
        """The source line with a caret (``^~~~``) under the offending text."""
        if not self.source_line:
            return ""
        width = max(1, min(len(self.text.splitlines()[0]) if self.text else 1,
                           len(self.source_line) - self.column + 1))
        pad = "".join(ch if ch == "\t" else " " for ch in self.source_line[: self.column - 1])
        return f"{self.source_line}\n{pad}^{'~' * (width - 1)}"

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


class PolylabError(Exception):
    """Base of every error polylab raises for a user's mistake or an impossible request."""

    kind = "error"

    def __init__(self, message: str, *, location: SourceLocation | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def render(self, filename: str | None = None) -> str:
        """The full human-readable text: where, what, the caret picture and the hint."""
        where = ""
        if self.location is not None:
            where = f"{filename + ':' if filename else ''}{self.location.line}:{self.location.column}: "
        elif filename:
            where = f"{filename}: "
        lines = [f"{where}{self.kind}: {self.message}"]
        if self.location is not None and self.location.source_line:
            lines.extend("    " + ln for ln in self.location.caret().splitlines())
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def _render_traceback_(self) -> list[str]:  # IPython: show this instead of a traceback
        return self.render().splitlines()

    def to_json(self) -> dict:
        """A JSON-ready dictionary (``line``/``column`` are null when there is no location)."""
        loc = self.location
        return {"kind": self.kind, "reason": self.message, "hint": self.hint,
                "line": loc.line if loc else None, "column": loc.column if loc else None,
                "text": loc.text if loc else None}


class FrontendError(PolylabError):
    """The input cannot be turned into a polyhedral model."""

    kind = "error"


class SourceSyntaxError(FrontendError):
    """The input is not valid C / SysY."""

    kind = "syntax error"


class SourceEncodingError(FrontendError):
    """A file of user text is not UTF-8: ``location`` is the first byte that is not, in the file
    ``filename`` (which the rendering names, whatever file the command was given)."""

    kind = "encoding error"

    def __init__(self, message: str, *, filename: str, location: SourceLocation | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, location=location, hint=hint)
        self.filename = filename

    def render(self, filename: str | None = None) -> str:
        return super().render(self.filename)


class NotAffineError(FrontendError):
    """A construct is valid C but not part of a static control part (the reason says which rule)."""

    kind = "not a static control part"


class ModelError(PolylabError):
    """A request that the polyhedral model cannot answer (unknown statement, array, parameter, ...)."""


class AnalysisError(PolylabError):
    """Dependence analysis could not be carried out as asked."""


class ScheduleError(PolylabError):
    """A schedule could not be parsed, built or applied."""

    kind = "schedule error"


class IllegalTransformationError(ScheduleError):
    """A transformation would change the program's result; the message names the violated dependence."""

    kind = "illegal transformation"


class StorageError(PolylabError):
    """A storage mapping (folding, contraction) would lose a value that is still needed."""

    kind = "storage error"


class TooComplexError(PolylabError):
    """An exact computation passed its bound (isl operations or seconds, :mod:`polylab.model.budget`):
    polylab stops rather than approximate; the message says which computation, the hint how to proceed."""

    kind = "stopped"


class CodegenError(PolylabError):
    """Code could not be generated for the requested target."""


class ToolchainError(PolylabError):
    """A compiler or a run failed."""

    kind = "toolchain error"


class CompileError(ToolchainError):
    """The compiler rejected a program; the message holds its diagnostics.

    ``origin`` says whose text the first error is in: ``'source'`` (the region's own text, the student's:
    ``location`` is in their source) or ``'generated'`` (code polylab generated: a polylab bug).
    ``diagnostics``: the parsed compiler messages (:class:`polylab.toolchain.Diagnostic` values; this
    base module imports no layer, so the field is typed by its role); ``compiler_output``: the raw text;
    ``source``: the program compiled; ``command``: the compiler invocation."""

    kind = "compile error"

    def __init__(self, message: str, *, location: SourceLocation | None = None, hint: str | None = None,
                 origin: str = "generated", diagnostics: tuple[object, ...] = (), compiler_output: str = "",
                 source: str = "", command: tuple[str, ...] = ()) -> None:
        super().__init__(message, location=location, hint=hint)
        self.origin = origin
        self.diagnostics = diagnostics
        self.compiler_output = compiler_output
        self.source = source
        self.command = command


class RunTimeout(ToolchainError):
    """A compiled program ran past its time limit and was stopped; ``result`` (a
    :class:`polylab.toolchain.RunResult`) holds what it printed."""

    kind = "timeout"

    def __init__(self, message: str, *, result: object | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.result = result


class RunFailure(ToolchainError):
    """A compiled program exited abnormally (non-zero status, signal, memory limit); ``result`` (a
    :class:`polylab.toolchain.RunResult`) holds its exit status and output."""

    kind = "run error"

    def __init__(self, message: str, *, result: object | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.result = result


class VerificationError(ToolchainError):
    """A variant was not verified: its output differs from the original program's (``array``, ``index``,
    ``expected`` -- the original's value -- and ``actual`` -- the variant's -- locate the first differing
    element), or the comparison was vacuous (``vacuous`` true, the message says why)."""

    kind = "verification failed"

    def __init__(self, message: str, *, array: str | None = None, index: tuple[int, ...] | None = None,
                 expected: float | int | None = None, actual: float | int | None = None, vacuous: bool = False,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.array = array
        self.index = index
        self.expected = expected
        self.actual = actual
        self.vacuous = vacuous
