"""C code a student writes for a check: read it, build it into the reference program's harness, compile it,
run it and compare its outputs with the reference program's.

A construction question gives a reference program (a :class:`~polylab.model.Scop`: its arrays, parameters
and loop nest) and asks for code that computes the same outputs differently: the same nest scanned in
another order, with an OpenMP pragma, a hand-contracted array, a CUDA index mapping emulated on the CPU.

* :func:`read_code` parses the answer with pycparser as a block of statements and admits only what such
  answers need (loops, ``if``, assignments, local declarations, ``min``/``max``, OpenMP pragmas, and the CUDA
  index variables where a question allows them); anything else (``printf``, pointers, ``while``, calls to
  the C library) is refused with its line and column before anything is compiled. It lists the loops
  (iterator, depth, pragma) so that a check can judge a pragma's placement.
* :func:`candidate_program` puts the code in the reference program's harness (same arrays, same initial
  values, same output dump); the code's own lines are numbered from 1 in compiler messages.
* :func:`judge_student_code` is the **one** place where a check compiles and runs a student's code: both
  programs are built and run on the same inputs (the candidate once per thread count, in the grader's
  bubblewrap sandbox where namespaces exist), and the toolchain's one differential run judges them
  (:func:`polylab.toolchain.judge`: every output element, bit for bit, a vacuous comparison refused); the
  first difference is the feedback.
"""

from __future__ import annotations

import functools
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from pycparser import c_ast, c_parser

from polylab import toolchain as tc
from polylab.toolchain import sandbox
from polylab.codegen import original_program
from polylab.codegen.harness import SYSY_RUNTIME, c_program, kernel_signature
from polylab.experiment.verify import initial_of
from polylab.errors import CompileError, PolylabError, RunFailure, RunTimeout
from polylab.grading.answers import AnswerError, text
from polylab.grading.verdict import Verdict, right, wrong
from polylab.model import Scop

#: the functions an answer may call (defined by :data:`HELPERS_C`)
CALLS = frozenset({"min", "max", "floord", "ceild"})
#: the structure variables of a CUDA index mapping (``blockIdx.x``...)
CUDA_VARIABLES = frozenset({"blockIdx", "threadIdx", "blockDim", "gridDim"})
#: what a question's code may do at most (seconds per run, megabytes of memory)
RUN_SECONDS, RUN_MEMORY_MB = 20.0, 512

HELPERS_C = """\
static inline long long polylab_answer_min(long long a, long long b) { return a < b ? a : b; }
static inline long long polylab_answer_max(long long a, long long b) { return a > b ? a : b; }
static inline long long polylab_answer_floord(long long n, long long d) { return n >= 0 ? n / d : -((-n + d - 1) / d); }
#define min(a, b) polylab_answer_min((a), (b))
#define max(a, b) polylab_answer_max((a), (b))
#define floord(n, d) polylab_answer_floord((n), (d))
#define ceild(n, d) (-polylab_answer_floord(-(n), (d)))
"""

_ALLOWED = (c_ast.Compound, c_ast.For, c_ast.If, c_ast.Assignment, c_ast.ID, c_ast.Constant, c_ast.BinaryOp,
            c_ast.UnaryOp, c_ast.ArrayRef, c_ast.Decl, c_ast.DeclList, c_ast.TypeDecl, c_ast.ArrayDecl,
            c_ast.IdentifierType, c_ast.ExprList, c_ast.FuncCall, c_ast.Pragma, c_ast.TernaryOp,
            c_ast.EmptyStatement, c_ast.Cast, c_ast.Typename, c_ast.StructRef)
_NAMES = {c_ast.While: "a while loop", c_ast.DoWhile: "a do-while loop", c_ast.Goto: "goto",
          c_ast.Return: "return", c_ast.Switch: "switch", c_ast.PtrDecl: "a pointer", c_ast.FuncDef: "a function",
          c_ast.Label: "a label", c_ast.Break: "break", c_ast.Continue: "continue"}


@dataclass(frozen=True)
class Loop:
    """One ``for`` loop of an answer: its iterator, its depth (0: outermost), the OpenMP pragma written
    right before it (its text after ``#pragma``, or None), whether the iterator is declared in the loop
    (``for (int j = ...)``: private to each thread), the names of the loops around it, and its line."""

    iterator: str
    depth: int
    pragma: str | None
    declared: bool
    outer: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class StudentCode:
    """An answer's C statements: the text as given, its loops in source order, the names it declares and
    the number of its ``if`` statements (``tests``)."""

    text: str
    loops: tuple[Loop, ...]
    declared: frozenset[str]
    tests: int = 0

    @property
    def iterators(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(lp.iterator for lp in self.loops))

    def pragmas(self) -> tuple[Loop, ...]:
        return tuple(lp for lp in self.loops if lp.pragma is not None)

    def without_pragmas(self) -> str:
        """The text with its ``#pragma`` lines removed."""
        return "\n".join(ln for ln in self.text.splitlines() if not ln.lstrip().startswith("#pragma"))


def _where(node: c_ast.Node) -> str:
    c = node.coord
    return f"line {c.line - 1}, column {c.column}" if c and c.line else "your code"


def _parse(src: str, what: str) -> c_ast.Compound:
    try:
        unit = c_parser.CParser().parse(f"void __polylab_answer(void) {{\n{src}\n}}")
    except Exception as exc:  # pycparser raises ParseError and assorted plain errors on bad text
        msg = re.sub(r"^[^:]*:(\d+):(\d+)", lambda m: f"line {int(m.group(1)) - 1}, column {m.group(2)}", str(exc))
        raise AnswerError(f"{what} is not valid C: {msg}", hint="check the brackets and semicolons") from None
    return unit.ext[0].body


def _vet(node: c_ast.Node, what: str, cuda: bool) -> None:
    """Refuse what an answer of this kind never needs (see the module text)."""
    if not isinstance(node, _ALLOWED):
        kind = _NAMES.get(type(node), type(node).__name__)
        raise AnswerError(f"{what} uses {kind} at {_where(node)}",
                          hint="write loops, ifs and assignments only (min and max are defined)")
    if isinstance(node, c_ast.FuncCall):
        name = node.name.name if isinstance(node.name, c_ast.ID) else "?"
        if name not in CALLS:
            raise AnswerError(f"{what} calls {name} at {_where(node)}",
                              hint="only " + ", ".join(sorted(CALLS)) + " may be called")
    if isinstance(node, c_ast.StructRef) and not (
            cuda and isinstance(node.name, c_ast.ID) and node.name.name in CUDA_VARIABLES and node.type == "."):
        raise AnswerError(f"{what} uses a structure member at {_where(node)}",
                          hint="blockIdx.x and friends only in a CUDA index mapping" if cuda else
                          "write loops, ifs and assignments on the arrays only")
    if isinstance(node, c_ast.Pragma) and not node.string.strip().startswith("omp"):
        raise AnswerError(f"{what} has '#pragma {node.string.strip()}' at {_where(node)}",
                          hint="only OpenMP pragmas (#pragma omp ...) are read")
    for _, child in node.children():
        _vet(child, what, cuda)


def _iterator(loop: c_ast.For, what: str) -> tuple[str, bool]:
    init = loop.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        return init.decls[0].name, True
    if isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
        return init.lvalue.name, False
    raise AnswerError(f"the loop at {_where(loop)} of {what} does not start by setting one iterator",
                      hint="write for (i = 0; i < N; i++)")


def _loops(block: c_ast.Node, what: str, outer: tuple[str, ...] = ()) -> list[Loop]:
    out: list[Loop] = []
    items = block.block_items or [] if isinstance(block, c_ast.Compound) else [block]
    pending: str | None = None
    for item in items:
        if isinstance(item, c_ast.Pragma):
            if pending is not None:
                raise AnswerError(f"two pragmas in a row at {_where(item)} of {what}",
                                  hint="one #pragma omp ... line right before the loop it parallelises")
            pending = item.string.strip()
            continue
        if pending is not None and not isinstance(item, c_ast.For):
            raise AnswerError(f"the pragma before {_where(item)} of {what} is not followed by a for loop",
                              hint="#pragma omp parallel for goes on the line right before a for")
        if isinstance(item, c_ast.For):
            it, declared = _iterator(item, what)
            out.append(Loop(it, len(outer), pending, declared, outer, item.coord.line - 1 if item.coord else 0))
            out += _loops(item.stmt, what, (*outer, it))
        elif isinstance(item, c_ast.If):
            out += _loops(item.iftrue, what, outer) + (_loops(item.iffalse, what, outer) if item.iffalse else [])
        elif isinstance(item, c_ast.Compound):
            out += _loops(item, what, outer)
        pending = None
    if pending is not None:
        raise AnswerError(f"{what} ends with a pragma that no loop follows", hint="put it right before a for")
    return out


def _count_ifs(node: c_ast.Node) -> int:
    return int(isinstance(node, c_ast.If)) + sum(_count_ifs(child) for _, child in node.children())


def _declared(node: c_ast.Node) -> set[str]:
    names = {node.name} if isinstance(node, c_ast.Decl) and node.name else set()
    for _, child in node.children():
        names |= _declared(child)
    return names


def read_code(value: Any, what: str = "your code", *, cuda: bool = False) -> StudentCode:
    """``value`` (C statements as text) read and vetted (see the module text)."""
    if not isinstance(value, str):
        text(value, what)  # raises the reader's error for a value that is not text
    src = value.expandtabs(4).strip("\n")
    if not src.strip():
        raise AnswerError(f"{what} is empty", hint="write the loop nest as C text in a string")
    body = _parse(src, what)
    _vet(body, what, cuda)
    return StudentCode(src, tuple(_loops(body, what)), frozenset(_declared(body)), _count_ifs(body))


def candidate_program(reference: Scop, code: StudentCode, *, extra: str = "") -> str:
    """The reference program's harness with ``code`` as its kernel (iterators not declared by the code are
    declared ``int`` at the top of the kernel; ``extra`` C text, e.g. a CUDA emulation's helpers, comes
    before it). The code's lines are numbered from 1 in the compiler's messages (``#line``)."""
    its = [it for it in code.iterators if it not in code.declared]
    decl = f"  int {', '.join(its)};\n" if its else ""
    kernel = f"{kernel_signature(reference)}\n{{\n{decl}#line 1 \"your code\"\n{code.text}\n}}\n"
    header = "/* polylab: a student's code in the harness of the reference program */"
    return c_program(reference, header, kernel, helpers=SYSY_RUNTIME + HELPERS_C + extra, kernel_last=True)


def _compile_error(err: CompileError, what: str) -> str:
    for d in err.diagnostics:
        if getattr(d, "severity", "error") == "error" and "your code" in str(getattr(d, "file", "")):
            return f"{what} does not compile: line {d.line}, column {d.column}: {d.message}"
    first = next((d for d in err.diagnostics if getattr(d, "severity", "") == "error"), None)
    return f"{what} does not compile: {first.message if first is not None else err.message}"


@functools.cache
def _sandbox_works() -> bool:
    """Whether a program runs in a bubblewrap sandbox here: namespaces exist (:func:`sandbox.unavailable`)
    and a trivial program runs in one (inside a submission's own sandbox bwrap is found, but a nested one
    cannot mount its /proc)."""
    if sandbox.unavailable() is not None:
        return False
    with tempfile.TemporaryDirectory(prefix="polylab-probe-") as tmp:
        try:
            done = sandbox.run(sandbox.Sandbox(workdir=Path(tmp), timeout=30, python=False), ["true"])
        except PolylabError:
            return False
    return done.returncode == 0


def _run_untrusted(binary: tc.Binary, args: Sequence[int], threads: int | None) -> tc.Outputs:
    """Run a program built from a student's code and read its outputs: every run of student code in a check
    goes through here. Where a bubblewrap sandbox works (:func:`_sandbox_works`) the program runs in a
    sandbox of its own: a copy of the binary in a private folder, no network, the
    system read-only, nothing else of the grader's machine visible, every process it starts gone when it
    ends; its outputs are read back from that folder as data. Elsewhere (a machine without user namespaces,
    or the student's own kernel, itself sandboxed by the batch grader) it runs as the toolchain runs every
    program: in its own session, under a time and a memory limit."""
    if not _sandbox_works():
        return tc.run_outputs(binary, args, threads=threads, timeout=RUN_SECONDS)
    with tempfile.TemporaryDirectory(prefix="polylab-student-") as tmp:
        work = Path(tmp)
        shutil.copy(binary.path, work / "program")
        (work / "out").mkdir()
        env = {tc.OUTPUT_DIR_VARIABLE: f"{sandbox.INSIDE}/out"}
        if threads:
            env["OMP_NUM_THREADS"] = str(threads)
        box = sandbox.Sandbox(workdir=work, timeout=RUN_SECONDS, memory_mb=RUN_MEMORY_MB, env=env, python=False,
                              output_bytes=1 << 16)
        done = sandbox.run(box, ["./program", *(str(a) for a in args)])
        if done.timed_out:
            raise RunTimeout(f"it ran past {RUN_SECONDS:g} s and was stopped",
                             hint="a loop that never ends, or far more iterations than the original's")
        if done.returncode != 0:
            signum = -done.returncode if done.returncode < 0 else done.returncode - 128  # bwrap's init: 128 + signal
            how = tc.signal_description(signum) if 0 < signum < 65 else f"exit status {done.returncode}"
            raise RunFailure(f"it stopped with {how}", hint="an access outside an array, or a division by zero")
        return tc.read_run(work / "out")


def _picked(outputs: tc.Outputs, arrays: Sequence[str] | None) -> tc.Outputs:
    if arrays is None:
        return outputs
    return tc.Outputs({n: a for n, a in outputs.arrays.items() if n in arrays},
                      {n: i for n, i in outputs.indices.items() if n in arrays})


def _difference(run: tc.DifferentialRun, what: str, threads: int | None) -> str:
    with_threads = f" with {threads} thread(s)" if threads else ""
    if run.difference is not None:
        d = run.difference
        idx = "".join(f"[{i}]" for i in d.index)
        n = run.comparison.mismatches
        more = f" ({n} elements differ)" if n > 1 else ""
        return (f"{what}{with_threads} changes the output: the first element that differs is {d.array}{idx}: "
                f"the original program leaves {d.expected!r}, yours {d.actual!r}{more}")
    return f"{what}{with_threads} does not write the same arrays: {'; '.join(run.comparison.problems)}"


def judge_student_code(reference: Scop, candidate_source: str, *, params: Mapping[str, int],
                     threads: Sequence[int | None] = (None,), arrays: Sequence[str] | None = None,
                     what: str = "your code") -> Verdict:
    """Right when the program ``candidate_source`` (built with :func:`candidate_program`) writes exactly the
    reference program's outputs (``arrays``: only these) at ``params``, run once per thread count of
    ``threads`` (OpenMP on when any is given), as judged by the toolchain's one differential run
    (:func:`polylab.toolchain.judge`: every element, a vacuous comparison refused); otherwise the first
    element that differs, a compile error at the student's line, or why it could not run."""
    args = [int(params[p]) for p in reference.parameters]
    openmp = any(t is not None for t in threads)
    try:
        ref_bin = tc.compile(original_program(reference), flags=tc.VERIFY_FLAGS)
        cand_bin = tc.compile(candidate_source, flags=tc.VERIFY_FLAGS, openmp=openmp)
    except CompileError as err:
        return wrong(_compile_error(err, what))
    except PolylabError as err:
        return wrong(f"{what} could not be built: {err.message}")
    ref = _picked(tc.run_outputs(ref_bin, args, timeout=RUN_SECONDS), arrays)
    values = {p: int(params[p]) for p in reference.parameters}
    where = " at " + ", ".join(f"{k} = {v}" for k, v in values.items()) if values else ""
    for t in threads:
        try:
            cand = _picked(_run_untrusted(cand_bin, args, t), arrays)
        except PolylabError as err:
            return wrong(f"{what} failed when it ran" + (f" with {t} thread(s)" if t else "") + f": {err.message}")
        run = tc.judge(ref, cand, initial=initial_of(reference, values), where=where)
        if run.verified is None:
            return wrong(f"{what} could not be judged: {run.reason} (a bug in this question's check)")
        if not run.verified:
            return wrong(_difference(run, what, t))
    return right()


__all__ = ["CALLS", "CUDA_VARIABLES", "HELPERS_C", "Loop", "StudentCode", "candidate_program",
           "judge_student_code", "read_code"]
