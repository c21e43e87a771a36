"""The fuzz suite: mutated inputs thrown at every door a person can type into, counting tracebacks.

polylab's promise for bad input is "a located error, never a Python traceback" (issue 15). This module
checks it mechanically. Each *case* is one input, derived deterministically from ``(seed, index)`` so any
finding can be replayed alone (``polylab fuzz --seed S --start I --count 1 --show``):

* ``source``   -- a shipped kernel mutated at the character, token and line level (keywords as names,
  extreme constants, deep nesting, truncation, ...), parsed; when it still has a static control part, its
  dependences are computed and a random schedule spec is read, checked and turned into C text;
* ``spec``     -- a random schedule spec (recipe steps with good and bad arguments, isl text, storage
  steps in any order) read on a shipped kernel, checked for legality and generated as code;
* ``magic``    -- a random option line (and sometimes cell) for ``%%scop``, ``%%schedule`` and ``%polyrun``
  run in an IPython shell; a magic must show an error box, never an internal error;
* ``cli``      -- a random argument vector for ``polylab analyze | deps | schedule | codegen``;
* ``file``     -- a mutated kernel written as *bytes* (with invalid UTF-8 now and then: a Latin-1 byte, a
  truncated multi-byte sequence, a byte-order mark, a NUL), given to the command line as a file, with
  options that include parameter values far beyond 64 bits.

A case *fails* when an exception other than :class:`~polylab.errors.PolylabError` escapes (for the magics:
when the magic records one), when it uses more than its CPU time (``hang``), or when it answers after more than
``POLYLAB_MAX_SECONDS`` + :data:`SLACK_SECONDS` of CPU time (``slow``: some computation ignored the budget
every analysis is bounded by; CPU time, since on a machine shared with other work the wall-clock time of a
case measures the other work too; the report gives the longest case in both). Only ``%polyrun`` cases
compile and run programs (through the build cache); the others exercise the reading, modelling, analysis,
scheduling and code generation, which is where user text goes; the toolchain's own robustness has its
tests. Every isl computation is bounded by
:mod:`polylab.model.budget`, so a case answers "too complex" rather than running forever.
"""

from __future__ import annotations

import contextlib
import io
import random
import resource
import signal
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator

from polylab.corpus import example_path, examples
from polylab.errors import PolylabError
from polylab.model.budget import limits
from polylab.processes import Terminated

__all__ = ["Case", "Finding", "FuzzReport", "KINDS", "case", "run_case", "run_campaign"]

#: the kinds of case, in the proportions a campaign draws them
KINDS = {"source": 20, "spec": 2, "magic": 1, "cli": 2, "file": 3}
#: seconds past ``POLYLAB_MAX_SECONDS`` after which a case that answered counts as slow
SLACK_SECONDS = 5.0
#: the kernels spec cases schedule (those whose searches take well under a second)
_SPEC_SEEDS = ("gemm.c", "jacobi2d.c", "mvt.c", "seidel2d.c", "shift.c", "sweep2d.c", "sl3.sy")
#: byte edits of a ``file`` case: invalid UTF-8 (a Latin-1 letter, a lone continuation byte, a truncated
#: sequence, an overlong form, a surrogate), a byte-order mark, a NUL, valid multi-byte text
_BYTES = [b"\xe9", b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80", b"\xef\xbb\xbf",
          b"\x00", "é".encode(), "∀".encode(), b"\r\n", b"\r"]
#: CPU seconds one case may take before it counts as a hang
CASE_SECONDS = 30.0

_KEYWORD_NAMES = ["max", "min", "mod", "floor", "floord", "ceil", "and", "or", "not", "exists", "infty",
                  "int", "double", "for", "while", "if", "return", "NaN", "true", "false", "polylab_imin"]
_CONSTANTS = ["0", "-1", "1", "2", "-5", "2147483647", "2147483648", "-2147483649", "4294967298",
              "9223372036854775807", "9223372036854775808", "9999999999999999999", "99999999999999999999999",
              "0x7fffffff", "010", "1e300", "0.5", "1.0/0.0", "'a'", "N", "-N", "N*N", "N/0", "N%0"]
_SNIPPETS = ["(", ")", "{", "}", "[", "]", ";", ",", "+", "-", "*", "/", "%", "=", "==", "<", "<=", ">",
             ">=", "!", "&&", "||", "?", ":", "++", "--", "+=", "\"", "'", "#", "#pragma scop\n",
             "#pragma endscop\n", "\n", "\t", " ", "\\", "/*", "*/", "//", "\x00", "\u00e9", "i", "j", "k",
             "N", "a[i]", "a[i][j]", "for (int q = 0; q < N; q++) ", "while (1) ", "if (i > j) ",
             "a[i] = a[i] + 1.0;", "int", "double", "float", "const", "return 0;", "getint()", "putint(x);"]
_STEPS = ["original", "auto", "isl", "wavefront", "parallel", "interchange(0, 1)", "interchange(i, j)",
          "permute(1, 0)", "permute([1, 0, 2])", "skew(1, 0)", "skew(1, 0, 2)", "skew(2, 0, -1)", "shift(S0, 0, 1)",
          "shift(S1, 1, -2)", "reverse(0)", "reverse(1)", "scale(0, 2)", "fuse", "fuse(0)", "distribute",
          "distribute(1)", "tile(4)", "tile(4, 4)", "tile(2, 3, 4)", "tile(1)", "tile(0)", "tile(-3)",
          "tile_wavefront(4)", "tile_wavefront(8, 8)", "fold_live_ins", "remove_dead_writes", "interleave",
          "fuse_producers", "contract(x)", "contract(a)", "contract(x, 2)", "contract(A, 1)", "storage"]
_BAD_ARGS = ["a", "x", "N", "2**70", "1180591620717411303424", "-0", "[]", "[1, [2]]", "S9", "", " ", "(",
             "1.5", "0x10", "99999999999", "-2147483648", "i", "S0"]
_ISL_SPECS = ["{ S0[i, j] -> [i + j, j] }", "{ S0[i, j] -> [j, i] }", "[N] -> { S0[i, j] -> [i, j] }",
              "{ S0[i] -> [i] }", "{ S0[i, j] -> [i, j]; S1[i, j] -> [i, j] }", "{ S0[i, j, k] -> [i + j + k, i, j] }",
              "{ S0[i, j] -> [floor(i / 2), j] }", "{ S0[i, j] -> [i, j] : i > 3 }", "{ S0[i, j] -> [M, j] }",
              "{ S0[i, j] -> [i mod 0, j] }", "{ }", "{ S0[i, j] -> [i] ; S0[i, j] -> [j] }", "{ S0[i, j] -> }"]
_HUGE = ["99999999999999999999", "-99999999999999999999", "2147483648", "2147483647", "-2147483649",
         "9223372036854775808", "1", "0"]
_MAGIC_OPTIONS = ["--param N=8", "--param N=500", "--param N=-5", "--param N=0", "--param N=10**20",
                  "--param N=9999999999999999999", *(f"--param N={v}" for v in _HUGE),
                  *(f"--param n={v}" for v in _HUGE[:3]), "--param M=3", "--param N", "--param =3", "--param N=8,M=2",
                  "-p n=6", "--language c", "--language sysy", "--language fortran", "--value-based",
                  "--no-picture", "-q", "\"abc", "'unterminated", "--bogus", "name-with-dash", "s1", "1abc",
                  "--target openmp", "--target mlir", "--target cuda", "--repeat 0", "--repeat -1",
                  "--threads 0", "--timeout 0.5", "--timeout -1", "--timeout abc", "--force", "-o", "--", "\\"]
_CLI_COMMANDS = ["analyze", "deps", "schedule", "codegen"]
_CLI_OPTIONS = ["--json", "--param N=8", "--param N=-1", "--param N=10**20", "--param n=6", "--param X=1",
                *(f"--param N={v}" for v in _HUGE), *(f"--param n={v}" for v in _HUGE), "--param M=99999999999999999999",
                "--scop 0", "--scop 7", "--scop -1", "--scop x", "--target c", "--target openmp", "--target mlir",
                "--target cuda", "--target fortran", "--value-based", "--schedule auto", "--schedule wavefront",
                "--schedule tile(a, b)", "--schedule {", "-s original", "--help-not", "-D", "-DN=8"]


@dataclass(frozen=True)
class Case:
    """One fuzz input: its kind, the index it was derived from, and what is fed (a text and a spec, a
    magic name with its line and cell, or an argument vector)."""

    kind: str
    index: int
    text: str = ""
    spec: str = ""
    magic: str = ""
    argv: tuple[str, ...] = ()
    data: bytes = b""

    def describe(self) -> str:
        """The input, as a person would type it."""
        if self.kind == "cli":
            return "polylab " + " ".join(self.argv)
        if self.kind == "file":
            return f"polylab {' '.join(self.argv)}  (FILE: {self.data!r})"
        if self.kind == "magic":
            return f"%%{self.magic} {self.text}\n{self.spec}"
        return self.text + (f"\n--- schedule: {self.spec}" if self.spec else "")


@dataclass(frozen=True)
class Finding:
    """A case that produced a traceback (or ran past its limit): the exception and where it was raised."""

    case: Case
    error: str
    where: str
    trace: str

    @property
    def signature(self) -> str:
        """What makes two findings the same bug: the exception type and the innermost polylab frame."""
        return f"{self.error.split(':', 1)[0]} at {self.where}"


@dataclass
class FuzzReport:
    """What a campaign did: cases per kind, findings, seconds."""

    seed: int
    start: int
    count: int
    cases: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    slow: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    #: the longest case, in wall-clock and in CPU seconds
    longest_wall: float = 0.0
    longest_cpu: float = 0.0

    @property
    def tracebacks(self) -> int:
        return len(self.findings)

    def text(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.cases.items()))
        outs = ", ".join(f"{k} {n}" for k, n in sorted(self.outcomes.items()))
        lines = [f"fuzz: seed {self.seed}, cases {self.start}..{self.start + self.count - 1} ({kinds}) in "
                 f"{self.seconds:.0f} s",
                 f"  outcomes: {outs}", f"  tracebacks: {self.tracebacks}",
                 f"  slow (past POLYLAB_MAX_SECONDS + {SLACK_SECONDS:g} s of CPU time): {len(self.slow)}; "
                 f"longest case {self.longest_cpu:.1f} s CPU, {self.longest_wall:.1f} s wall-clock"]
        by_sig: dict[str, list[Finding]] = {}
        for f in self.findings + self.slow:
            by_sig.setdefault(f.signature, []).append(f)
        for sig, fs in sorted(by_sig.items(), key=lambda kv: -len(kv[1])):
            first = fs[0]
            lines.append(f"  [{len(fs)}x] {sig}: {first.error[:200]}")
            lines.append(f"      replay: polylab fuzz --seed {self.seed} --start {first.case.index} --count 1 "
                         f"--show")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"seed": self.seed, "start": self.start, "count": self.count, "cases": dict(self.cases),
                "outcomes": dict(self.outcomes), "tracebacks": self.tracebacks, "slow": len(self.slow),
                "seconds": self.seconds, "longest_cpu": self.longest_cpu, "longest_wall": self.longest_wall,
                "findings": [{"index": f.case.index, "kind": f.case.kind, "error": f.error, "where": f.where,
                              "input": f.case.describe()[:4000]} for f in self.findings + self.slow]}


# -- making cases -----------------------------------------------------------------------------------------
_SEEDS: list[tuple[str, str]] = []


def _seeds() -> list[tuple[str, str]]:
    """``(name, text)`` of the shipped kernels (those that parse and those that must be refused)."""
    if not _SEEDS:
        names = examples() + [f"reject/{p}" for p in ("call.c", "datawhile.c", "indirect.c", "nonlinear.c",
                                                       "syntax.c")]
        for n in names:
            try:
                _SEEDS.append((n, example_path(n).read_text()))
            except (PolylabError, OSError):  # an example missing from this installation: fuzz the others
                continue
    return _SEEDS


def _tokens(text: str) -> list[str]:
    """A rough split into identifiers, numbers, blanks and single characters (no C is interpreted)."""
    out, cur = [], ""
    for ch in text:
        if ch.isalnum() or ch == "_":
            cur += ch
            continue
        if cur:
            out.append(cur)
            cur = ""
        out.append(ch)
    if cur:
        out.append(cur)
    return out


def mutate(text: str, rng: random.Random) -> str:
    """``text`` after 1 to 4 random edits (characters, tokens, lines, nesting, truncation)."""
    for _ in range(rng.randint(1, 4)):
        text = rng.choice(_MUTATORS)(text, rng)
    return text


def _m_char(text: str, rng: random.Random) -> str:
    if not text:
        return rng.choice(_SNIPPETS)
    k = rng.randrange(len(text))
    op = rng.randrange(3)
    if op == 0:
        return text[:k] + text[k + 1:]
    if op == 1:
        return text[:k] + rng.choice(_SNIPPETS) + text[k:]
    return text[:k] + rng.choice(_SNIPPETS) + text[k + 1:]


def _m_token(text: str, rng: random.Random) -> str:
    toks = _tokens(text)
    idx = [k for k, t in enumerate(toks) if t[:1].isalnum() or t[:1] == "_"]
    if not idx:
        return text
    k = rng.choice(idx)
    old = toks[k]
    if old[:1].isdigit():
        new = rng.choice(_CONSTANTS)
    else:
        new = rng.choice(_KEYWORD_NAMES + _CONSTANTS[:4] + [t for t in toks if t[:1].isalpha()][:40])
    if rng.random() < 0.5:  # rename every occurrence: a parameter or iterator named like a keyword
        toks = [new if t == old else t for t in toks]
    else:
        toks[k] = new
    return "".join(toks)


def _m_line(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    k = rng.randrange(len(lines))
    op = rng.randrange(4)
    if op == 0:
        del lines[k]
    elif op == 1:
        lines.insert(k, lines[rng.randrange(len(lines))])
    elif op == 2:
        j = rng.randrange(len(lines))
        lines[k], lines[j] = lines[j], lines[k]
    else:
        lines = lines[:k]
    return "".join(lines)


def _m_nest(text: str, rng: random.Random) -> str:
    """Deep nesting, long sums, loops that never run or never end, huge bounds."""
    n = rng.choice([2, 10, 50, 200, 300])
    piece = rng.choice([
        "(" * n + "i" + ")" * n, "{" * n + "}" * n, " + ".join(["a[i]"] * n), "-" * n + "1",
        "for (i = 1; i > 2; i++) a[i] = 1.0;", "for (i = 0; i >= 0; i++) a[i] = 1.0;",
        "for (i = 0; i < 9999999999999999999; i++) a[i] = 1.0;", "for (i = N; i > 0; i -= 0) a[i] = 1.0;",
        "for (i = 0; i < N; i += 3) a[3 * i + 1] = a[i] * 2.0;", "a[i0+i1+i2+i3+i4] = 1.0;"])
    k = rng.randrange(len(text) + 1)
    return text[:k] + piece + text[k:]


def _m_blank(text: str, rng: random.Random) -> str:
    return rng.choice(["", " ", "\n\n\t ", "#pragma scop\n#pragma endscop\n", "\x00", text[: len(text) // 2]])


_MUTATORS: list[Callable[[str, random.Random], str]] = [_m_char, _m_char, _m_token, _m_token, _m_line,
                                                        _m_nest, _m_blank]


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """``data`` with 1 to 3 bytes sequences from :data:`_BYTES` inserted or put in place of a byte."""
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(len(data) + 1)
        data = data[:k] + rng.choice(_BYTES) + data[k + rng.randrange(2):]
    return data


def random_spec(rng: random.Random) -> str:
    """A schedule spec of 1 to 4 parts: steps (sometimes with bad arguments) and isl text."""
    parts = []
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.6:
            parts.append(rng.choice(_STEPS))
        elif r < 0.8:
            step = rng.choice(_STEPS).split("(")[0]
            args = ", ".join(rng.choice(_BAD_ARGS + ["0", "1", "2", "4"]) for _ in range(rng.randint(0, 3)))
            parts.append(f"{step}({args})")
        elif r < 0.95:
            parts.append(rng.choice(_ISL_SPECS))
        else:
            parts.append(mutate(rng.choice(_STEPS), rng))
    return rng.choice(["; ", "\n", ";"]).join(parts)


def case(seed: int, index: int) -> Case:
    """Case number ``index`` of the campaign with ``seed`` (the same pair always gives the same case)."""
    rng = random.Random(seed * 1_000_003 + index)
    kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
    name, text = rng.choice(_seeds())
    if kind == "source":
        return Case(kind, index, text=mutate(text, rng), spec=random_spec(rng) if rng.random() < 0.3 else "")
    if kind == "spec":
        light = [t for n, t in _seeds() if n in _SPEC_SEEDS] or [text]
        return Case(kind, index, text=rng.choice(light), spec=random_spec(rng))
    if kind == "magic":
        magic = rng.choice(["scop", "schedule", "polyrun"])
        line = " ".join(rng.choice(_MAGIC_OPTIONS) for _ in range(rng.randint(0, 3)))
        cell = (text if rng.random() < 0.7 else mutate(text, rng)) if magic == "scop" else random_spec(rng)
        if rng.random() < 0.1:
            cell = rng.choice(["", "   \n\t\n", "\n"])
        return Case(kind, index, text=line, spec=cell, magic=magic)
    options = []
    for _ in range(rng.randint(0, 3)):
        options += rng.choice(_CLI_OPTIONS).split(" ", 1)
    if kind == "file":
        data = (mutate(text, rng) if rng.random() < 0.5 else text).encode()
        data = mutate_bytes(data, rng) if rng.random() < 0.8 else data
        suffix = ".sy" if name.endswith(".sy") else ".c"
        return Case(kind, index, argv=(rng.choice(_CLI_COMMANDS), f"FILE{suffix}", *options), data=data)
    argv = [rng.choice(_CLI_COMMANDS), rng.choice([name, name, "no-such-file.c", "", "/", "reject"])]
    return Case(kind, index, argv=tuple(argv + options))


# -- running cases ----------------------------------------------------------------------------------------
class _Hang(BaseException):
    """The case ran past :data:`CASE_SECONDS` (a BaseException, so no handler in polylab swallows it)."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`_Hang` in this thread after ``seconds`` of this process's CPU time (SIGPROF, so a
    machine shared with other work does not turn a slow case into a hang; only in the main thread of a
    process, elsewhere no limit). Compilers and programs run in child processes under the toolchain's
    own time limits."""
    def on_alarm(signum, frame):
        raise _Hang()
    try:
        old = signal.signal(signal.SIGPROF, on_alarm)
    except ValueError:  # not the main thread: no alarm
        yield
        return
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _source_case(c: Case) -> str:
    from polylab.notebook import backend

    program = backend.parse(c.text)
    if not program.scops:
        return "refused"
    scop = program.scops[0]
    backend.dependences(scop)
    if not c.spec:
        return "analysed"
    sched = backend.parse_schedule(scop, c.spec)
    if not backend.legality(sched).legal:
        return "illegal"
    backend.generate(scop, sched, "c")
    return "generated"


_SHELL: list = []


def _shell():
    """One IPython shell per process with the extension loaded (pictures drawn with Agg)."""
    if not _SHELL:
        import matplotlib

        matplotlib.use("Agg")
        from IPython.core.interactiveshell import InteractiveShell

        from polylab.notebook.magics import load_ipython_extension

        shell = InteractiveShell.instance()
        load_ipython_extension(shell)
        _SHELL.append(shell)
    return _SHELL[0]


def _magic_case(c: Case) -> str:
    import matplotlib.pyplot as plt
    from IPython.core.error import UsageError

    shell = _shell()
    magics = shell.magics_manager.registry["PolylabMagics"]
    try:
        if c.magic != "scop":  # a SCoP (and for %polyrun a schedule) to work on
            shell.run_cell_magic("scop", "-q", _seeds()[c.index % len(examples())][1])
        if c.magic == "polyrun":
            shell.run_cell_magic("schedule", "-q", c.spec)
        if c.magic == "polyrun":
            shell.run_line_magic("polyrun", c.text)
        else:
            shell.run_cell_magic(c.magic, c.text, c.spec)
    except UsageError:  # IPython's own one-line message (an unknown option, an empty cell): no traceback
        return "usage"
    finally:
        plt.close("all")
    err = magics.last_error
    if err is not None and not isinstance(err, PolylabError):
        raise err
    return "error box" if err is not None else "shown"


def _cli_case(c: Case, cli: Callable[[list[str]], int]) -> str:
    argv = list(c.argv)
    with contextlib.ExitStack() as stack:
        if c.kind == "file":  # the bytes go to a file of their own, named as the command expects
            import tempfile
            from pathlib import Path

            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="polylab-fuzz-")))
            path = folder / argv[1].replace("FILE", "input")
            path.write_bytes(c.data)
            argv[1] = str(path)
        try:
            status = cli(argv)
        except SystemExit as exc:  # argparse: a usage error (2) or --help (0)
            return f"exit {exc.code}"
    return f"exit {status}"




def _where(tb) -> str:
    """The innermost frame in polylab's code (else the innermost frame) as ``module:line (function)``."""
    frames = traceback.extract_tb(tb)
    mine = [f for f in frames if "/polylab/" in f.filename.replace("\\", "/")
            and not f.filename.endswith("fuzz.py")]
    f = (mine or frames or [None])[-1]
    if f is None:
        return "?"
    path = f.filename.replace("\\", "/")
    short = path[path.rfind("/polylab/") + 1:] if "/polylab/" in path else path
    return f"{short}:{f.lineno} ({f.name})"


def run_case(c: Case, *, seconds: float = CASE_SECONDS,
             cli: Callable[[list[str]], int] | None = None) -> tuple[str, Finding | None]:
    """Run one case; ``(outcome, None)`` when it behaved, ``("traceback", finding)`` when it did not.
    ``cli``: the command line's entry point (``polylab.cli.main``, which passes itself: this module sits
    beside the CLI and does not import it); without it a ``cli`` case is ``"skipped"``."""
    if c.kind in ("cli", "file") and cli is None:
        return "skipped", None
    out, err = io.StringIO(), io.StringIO()
    start = _clock()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _time_limit(seconds):
            if c.kind in ("cli", "file"):
                assert cli is not None
                outcome = _cli_case(c, cli)
            else:
                outcome = _magic_case(c) if c.kind == "magic" else _source_case(c)
        return outcome, _slow(c, start)
    except PolylabError:
        return "error", _slow(c, start)
    except _Hang:
        return "traceback", Finding(c, f"Hang: more than {seconds:g} s of CPU time", "?", "")
    except (KeyboardInterrupt, Terminated):  # the person (Ctrl-C) or the system (SIGTERM, SIGHUP) ends the campaign
        raise
    except BaseException as exc:  # the point of fuzzing: anything else that escapes is a finding
        return "traceback", Finding(c, f"{type(exc).__name__}: {exc}"[:2000], _where(exc.__traceback__),
                                    "".join(traceback.format_exception(exc))[-6000:])


def _clock() -> tuple[float, float]:
    """(wall-clock seconds, CPU seconds of this process and its finished children)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic(), time.process_time() + children.ru_utime + children.ru_stime


def _slow(c: Case, start: tuple[float, float]) -> Finding | None:
    """A finding when the case took more CPU time than the analyses' budget allows (its wall-clock time
    is reported too: on a machine shared with other work it measures the other work as well)."""
    wall, cpu = (now - then for now, then in zip(_clock(), start))
    budget = limits().seconds
    _SLOWEST[0] = max(_SLOWEST[0], wall)
    _SLOWEST[1] = max(_SLOWEST[1], cpu)
    if not budget or cpu <= budget + SLACK_SECONDS:
        return None
    return Finding(c, f"Slow: answered after {cpu:.1f} s of CPU time ({wall:.1f} s of wall-clock time), past "
                      f"POLYLAB_MAX_SECONDS = {budget:g} s + {SLACK_SECONDS:g} s", "?", "")


#: the longest wall-clock and CPU times of a case in this process (for the report)
_SLOWEST = [0.0, 0.0]


def run_campaign(seed: int, count: int, *, start: int = 0, kinds: tuple[str, ...] | None = None,
                 progress: bool = False, seconds: float = CASE_SECONDS,
                 cli: Callable[[list[str]], int] | None = None) -> FuzzReport:
    """Cases ``start .. start + count - 1`` of campaign ``seed`` (only those of ``kinds`` when given);
    ``cli``: the command line's entry point for the ``cli`` cases (see :func:`run_case`)."""
    from tqdm import tqdm

    report = FuzzReport(seed, start, count)
    t0 = time.perf_counter()
    _SLOWEST[:] = [0.0, 0.0]
    with _analysis_budget(seconds):
        for index in tqdm(range(start, start + count), disable=not progress, desc="fuzz", unit="case",
                          file=sys.stderr):
            c = case(seed, index)
            if kinds and c.kind not in kinds:
                continue
            report.cases[c.kind] += 1
            outcome, finding = run_case(c, seconds=seconds, cli=cli)
            report.outcomes[outcome] += 1
            if finding is not None and finding.error.startswith("Slow:"):
                report.slow.append(finding)
            elif finding is not None:
                report.findings.append(finding)
    report.seconds = time.perf_counter() - t0
    report.longest_wall, report.longest_cpu = _SLOWEST
    return report


@contextlib.contextmanager
def _analysis_budget(seconds: float) -> Iterator[None]:
    """polylab's own bound on an isl computation (``POLYLAB_MAX_SECONDS``, when the user set none) at half
    a case's limit: an expensive case must answer "too complex" (a located error) before it counts as a
    hang; a computation that ignores the bound still does."""
    import os

    if os.environ.get("POLYLAB_MAX_SECONDS"):
        yield
        return
    os.environ["POLYLAB_MAX_SECONDS"] = f"{seconds / 2:g}"
    try:
        yield
    finally:
        os.environ.pop("POLYLAB_MAX_SECONDS", None)
