"""The C preprocessor of the front end: ``#include``, ``#define`` (object- and function-like), ``#undef``,
``#if`` / ``#ifdef`` / ``#elif`` / ``#else`` / ``#endif``, ``-DNAME=VALUE`` and ``-I DIR`` as a C compiler
takes them.

Why pcpp (a C99 preprocessor in pure Python) and not ``gcc -E``: the front end must work without a C
compiler (a notebook on a machine without one still analyses), and pycparser must never see the system
headers: glibc's are full of GNU extensions (``__attribute__``, ``__extension__``, ``__restrict``,
``__asm__``) that pycparser refuses. With pcpp the front end decides what an ``#include <...>`` means:

* a **system header** (``<stdio.h>``, ``<math.h>``, ``<omp.h>``, ...; found nowhere on the ``-I`` path) is not
  read; the short prelude ``polylab/frontend/prelude.h`` (typedef names such as ``size_t``, ``FILE``,
  ``int64_t``, and a few constants) takes its place once, so the declarations that use those names parse;
* a **local header** (``#include "polybench.h"``, searched in the including file's folder, then the ``-I``
  folders) is read and preprocessed like the file itself; one that cannot be found is a located error.

Object-like macros whose value is one integer literal (``#define N 400``, ``-DN=100``) are *kept as names*
in the code and returned in :attr:`Preprocessed.constants`: the model then shows ``i < N`` with the named
constant ``N = 100`` instead of ``i < 100`` (``#if`` lines still see their values). A name defined twice
with different values, or undefined, is expanded like any other macro instead.

The result is **line-aligned** with the file: line ``L`` of :attr:`Preprocessed.text` holds what line
``L`` of the file became after expansion (directive lines are blank, the text of a header sits on the line
of its ``#include``), so every coordinate pycparser reports is a line of the user's file; on a line
without macro expansion the columns are the file's too (comments are blanked in place first).
"""

from __future__ import annotations

import functools
import io
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from polylab.errors import PolylabError, SourceLocation, SourceSyntaxError
from polylab.frontend.affine import int_literal
from polylab.frontend.source import blank_comments, read_text_file

__all__ = ["Preprocessed", "needs_preprocessor", "parse_define", "preprocess",
           "SYSTEM_HEADERS"]

#: headers of the C library, POSIX and the usual runtimes: never read, replaced by the prelude
SYSTEM_HEADERS = frozenset("""
assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h setjmp.h
signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h stdnoreturn.h string.h
tgmath.h threads.h time.h uchar.h wchar.h wctype.h unistd.h strings.h fcntl.h sys/time.h sys/types.h
sys/stat.h sys/resource.h sys/mman.h sys/times.h omp.h pthread.h sched.h malloc.h alloca.h memory.h
cuda.h cuda_runtime.h immintrin.h xmmintrin.h emmintrin.h sylib.h
""".split())

#: a folder that does not exist: a system header "found" there is the prelude (see ``on_file_open``)
_SYSTEM_DIR = str(Path(__file__).resolve().parent / "system-headers")


def _is_system(name: str) -> bool:
    return name in SYSTEM_HEADERS or name.startswith(("sys/", "bits/", "linux/", "asm/"))


@dataclass(frozen=True)
class Preprocessed:
    """The line-aligned preprocessed text, the integer macros kept as names, the system headers replaced."""

    text: str
    constants: tuple[tuple[str, int], ...]
    system_headers: tuple[str, ...]


def parse_define(spec: str) -> tuple[str, str]:
    """``"N=100"`` -> ``("N", "100")``; ``"DEBUG"`` -> ``("DEBUG", "1")`` (as ``cc -DDEBUG``)."""
    name, eq, value = spec.partition("=")
    name = name.strip()
    head = name.split("(", 1)[0]
    if not head.isidentifier():
        raise PolylabError(f"bad -D option {spec!r}: {head!r} is not a macro name",
                           hint="write -DNAME or -DNAME=VALUE, e.g. -DN=100")
    return name, (value if eq else "1")


def _directive(line: str) -> str | None:
    s = line.lstrip(" \t")
    if not s.startswith("#"):
        return None
    words = s[1:].split()
    return words[0] if words else ""


def needs_preprocessor(text: str, defines=()) -> bool:
    """Whether the text needs more than the front end's own reading: a directive other than ``#pragma``
    (and an empty ``#``), or ``-D`` options."""
    if defines:
        return True
    for line in blank_comments(text).split("\n"):
        d = _directive(line)
        if d is not None and d not in ("", "pragma"):
            return True
    return False


def _prelude_path() -> str:
    return str(resources.files("polylab.frontend") / "prelude.h")


@functools.cache
def _prelude_macros() -> frozenset[str]:
    """The names the prelude defines (expanded as usual, never kept as named constants)."""
    text = Path(_prelude_path()).read_text(encoding="utf-8")
    return frozenset(line.split()[1] for line in text.splitlines() if line.startswith("#define "))


def _is_int_literal(toks) -> int | None:
    vals = [t.value for t in toks if not t.value.isspace()]
    sign = 1
    if len(vals) == 4 and vals[0] == "(" and vals[-1] == ")":
        vals = vals[1:-1]
    if len(vals) == 3 and vals[0] == "(" and vals[-1] == ")":
        vals = vals[1:-1]
    if len(vals) == 2 and vals[0] == "-":
        sign, vals = -1, vals[1:]
    if len(vals) != 1 or not vals[0][:1].isdigit():
        return None
    v = int_literal(vals[0])
    return None if v is None else sign * v


def _make_preprocessor(main: str, include_dirs, keep: frozenset[str] | None):
    """A pcpp preprocessor whose hooks report errors, replace system headers, tag header text with the
    line of its ``#include`` and leave the macros in ``keep`` unexpanded outside ``#if`` (``None``: every
    macro whose current value is an integer literal)."""
    import pcpp

    class _Pre(pcpp.Preprocessor):
        def __init__(self) -> None:
            self.errors: list[tuple[str, int, str]] = []
            self.system: list[str] = []
            self.history: dict[str, set] = {}
            self.keepable: set[str] = set()
            self.prelude_served = False
            self.in_expr = 0
            super().__init__()
            self.line_directive = None

        def on_error(self, file, line, msg):
            self.errors.append((str(file), int(line or 0), str(msg)))
            self.return_code += 1

        def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
            name = str(includepath).strip()
            if not is_malformed and _is_system(name):
                return _SYSTEM_DIR  # searched next: on_file_open serves the prelude for it
            kind = f"<{name}>" if is_system_include else f'"{name}"'
            where = self.lastdirective
            self.errors.append((str(where.source) if where else main, int(where.lineno) if where else 0,
                                f"cannot find the header {kind}"))
            raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)

        def on_file_open(self, is_system_include, includepath):
            folder = os.path.abspath(_SYSTEM_DIR) + os.sep
            if str(includepath).startswith(folder):
                name = str(includepath)[len(folder):].replace(os.sep, "/")
                if not _is_system(name):
                    raise OSError(f"no such header: {name}")
                self.system.append(name)
                if self.prelude_served:  # its include guard would skip it: do not read it again
                    return io.StringIO("")
                self.prelude_served = True
                return open(_prelude_path(), encoding="utf-8")
            if not os.path.isfile(includepath):
                return super().on_file_open(is_system_include, includepath)  # OSError: pcpp looks further
            return io.StringIO(read_text_file(includepath, what="header"))  # UTF-8, or a located error

        def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
            if directive.value == "error":
                text = "".join(t.value for t in toks).strip()
                self.errors.append((str(directive.source), int(directive.lineno), f"#error {text}"))
                return True
            if directive.value == "warning":
                return True
            return None

        def define(self, tokens):
            super().define(tokens)
            toks = self.tokenize(tokens) if isinstance(tokens, str) else list(tokens)
            if toks:
                name = toks[0].value
                m = self.macros.get(name)
                value = None
                if m is not None and m.arglist is None and name not in _prelude_macros() \
                        and not name.startswith("__"):
                    value = _is_int_literal(m.value)
                self.history.setdefault(name, set()).add(value)
                if value is None:
                    self.keepable.discard(name)
                else:
                    self.keepable.add(name)

        def undef(self, tokens):
            toks = self.tokenize(tokens) if isinstance(tokens, str) else list(tokens)
            if toks:
                self.history.setdefault(toks[0].value, set()).add(None)
                self.keepable.discard(toks[0].value)
            super().undef(tokens)

        def evalexpr(self, tokens):
            self.in_expr += 1
            try:
                return super().evalexpr(tokens)
            finally:
                self.in_expr -= 1

        def expand_macros(self, tokens, expanding_from=[]):  # noqa: B006 - pcpp's signature
            names = self.keepable if keep is None else keep
            if self.in_expr or not names or expanding_from:
                return super().expand_macros(tokens, expanding_from)
            hidden = {k: self.macros.pop(k) for k in names if k in self.macros}
            try:
                return super().expand_macros(tokens, expanding_from)
            finally:
                self.macros.update(hidden)

        def include(self, tokens, original_line):
            line = original_line[0].lineno if original_line else 0
            for tok in super().include(tokens, original_line):
                tok.polylab_line = line
                yield tok

    pre = _Pre()
    for d in include_dirs:
        pre.add_path(str(d))
    return pre


def _run(text: str, main: str, defines, include_dirs, keep: frozenset[str] | None):
    pre = _make_preprocessor(main, include_dirs, keep)
    for name, value in defines:
        pre.define(f"{name} {value}")
        pre.macros[name.split("(", 1)[0]].source = "<command line>"
    pre.parse(text, main)
    toks = []
    while True:
        try:
            tok = pre.token()
        except RecursionError:
            pre.errors.append((main, 0, "the macros expand too deeply"))
            break
        except (IndexError, KeyError, AttributeError, TypeError, ValueError, AssertionError) as exc:
            # pcpp's own failure on a malformed directive (``#define`` without a name, ...)
            where = pre.lastdirective
            pre.errors.append((str(where.source) if where else main, int(where.lineno) if where else 0,
                               f"a malformed #{where.value if where else 'directive'} "
                               f"({type(exc).__name__} in the preprocessor)"))
            break
        if tok is None:
            break
        toks.append(tok)
    return pre, toks


def preprocess(text: str, *, filename: str | None = None, defines=(), include_dirs=()) -> Preprocessed:
    """Run the preprocessor over ``text`` (see the module docstring). ``defines`` are ``(name, value)``
    pairs (``-D``), ``include_dirs`` the ``-I`` folders; the file's own folder is searched first for
    ``#include "..."``. Errors are :class:`~polylab.errors.SourceSyntaxError` at the directive's line."""
    main = str(filename) if filename else "<input>"
    dirs = [str(Path(filename).resolve().parent)] if filename else []
    dirs += [str(d) for d in include_dirs]
    clean = blank_comments(text)
    defines = tuple(defines)
    # one pass keeps every integer macro as a name; a name later redefined or undefined was kept where it
    # meant another value: a second pass expands those names everywhere
    pre, toks = _run(clean, main, defines, dirs, None)
    _raise_errors(pre.errors, text, main)
    stable = {name for name, values in pre.history.items() if len(values) == 1 and None not in values}
    if any(values - {None} for name, values in pre.history.items() if name not in stable):
        pre, toks = _run(clean, main, defines, dirs, frozenset(stable))
        _raise_errors(pre.errors, text, main)
    keep = sorted(n for n in stable if n in pre.macros)
    constants = tuple((n, _is_int_literal(pre.macros[n].value)) for n in keep)
    return Preprocessed(_aligned(toks, len(text.split("\n")), pre), constants, tuple(pre.system))


def _aligned(toks, nlines: int, pre) -> str:
    """Each token on the line of the file it came from (header text on the line of its ``#include``; every
    token of a header carries that line, see ``include``, so an untagged token is the file's own)."""
    lines: list[list[str]] = [[] for _ in range(nlines + 1)]
    ws = set(pre.t_WS) | set(getattr(pre, "t_LINECONT", ()))
    for tok in toks:
        header_line = getattr(tok, "polylab_line", None)
        line = tok.lineno if header_line is None else header_line
        value = tok.value
        if tok.type in ws:
            value = value.replace("\\\n", "").replace("\n", " " if header_line is not None else "")
        k = max(1, min(int(line or 1), nlines))
        lines[k].append(value)
    return "\n".join(s if (s := "".join(lines[k])).strip() else "" for k in range(1, nlines + 1))


def _same_file(a: str, b: str) -> bool:
    """Whether pcpp's name of a file (made relative to the working folder) is the file ``b``."""
    try:
        return a == b or Path(a).resolve() == Path(b).resolve()
    except (OSError, ValueError):  # a name that is no path (``<input>``)
        return False


def _raise_errors(errors, text: str, main: str) -> None:
    if not errors:
        return
    file, line, msg = errors[0]
    lines = text.split("\n")
    if not _same_file(file, main) and line > 0 and file != "<command line>":
        where = f" (in {file}, line {line})"
        line = 0
    else:
        where = ""
    line = line if 0 < line <= len(lines) else 1
    src = lines[line - 1] if lines else ""
    hint = "check the preprocessor directives (#include, #define, #if ... #endif)"
    if msg.startswith("cannot find the header"):
        hint = "give the folder that holds it with -I DIR (a command-line option and a %%scop option)"
    elif "Unterminated" in msg:
        msg = f"{msg.replace('Unterminated ', 'this ')} has no matching #endif"
        hint = "add the missing #endif"
    col = len(src) - len(src.lstrip(" \t")) + 1
    raise SourceSyntaxError(f"preprocessor: {msg}{where}", location=SourceLocation(line, col, src.strip(), src),
                            hint=hint)
