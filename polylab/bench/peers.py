"""Peers: other polyhedral optimizers measured as rows of the same benchmark, verified like any variant.

A *peer* is a tool found on this machine that optimizes loop nests on its own:

* ``pluto``: PLUTO's ``polycc --tile --parallel`` (``POLYCC`` or ``polycc`` on ``PATH``), a source-to-source
  compiler (diamond tiling is on by default in PLUTO 0.13); its output is compiled with polylab's C compiler
  and ``-fopenmp``, exactly like a polylab OpenMP variant;
* ``polly``: clang with Polly (``CLANG``, ``clang``, then ``clang-NN`` on ``PATH``; Polly built in, or loaded
  with ``-fplugin=LLVMPolly.so``): ``-mllvm -polly -mllvm -polly-parallel -lgomp``;
* ``graphite``: gcc with Graphite (polylab's C compiler when it is a gcc built with isl):
  ``-floop-nest-optimize -floop-parallelize-all -ftree-parallelize-loops=T``, where ``T`` is the case's
  thread count (gcc fixes it at compile time; ``T = 1`` parallelizes nothing).

Input. Every peer is given the *original program* of the kernel, the same harness text every polylab variant
is verified against (:func:`polylab.codegen.original_program`), with the kernel region wrapped in
``#pragma scop`` / ``#pragma endscop`` (compilers ignore the pragmas; PLUTO reads the region between them).
PLUTO's front end (clan) reads only ``for`` loops with affine bounds: when it rejects the region text (a
SysY ``while`` nest, say), it is given polylab's ``for``-loop form of the same original order (the code
generated for the original schedule) instead, and the row says so.

Flags and threads. A peer's program is compiled with the flags of polylab's variants plus the peer's own:
the timed build with ``-O3`` (:data:`polylab.experiment.TIMING_FLAGS`, then the case's ``flags``, e.g.
``-march=native``), the verification build with
``-O2 -ffp-contract=off -Wall`` (:data:`polylab.experiment.VERIFY_FLAGS`), and runs with the case's
``OMP_NUM_THREADS``, the repeats and warm-up runs of the sweep, under the same harness and timer.

Verification. The original program (``-O2 -ffp-contract=off``) and *both* builds of the peer (the
verification build, and the timed binary itself, since a compiler peer may transform differently at
``-O3``) run at the verification parameters; every live-out array must be equal bit for bit. A peer that
reorders floating-point operations of one element (reassociation, fused multiply-add) changes the rounding
and gets the status ``unverified``, with the first differing element, the count and the largest relative
error: never a time, never "verified". Without ``-ffast-math`` neither gcc nor clang reassociates, and PLUTO
only reorders whole statement instances, so a legal peer output is bit-identical.

Outcomes (the ``status`` of a :class:`PeerResult`): ``verified`` (timed); ``unverified`` (output differs);
``rejected`` (the peer produced no program: PLUTO refused the region, with its message); ``error`` (the
peer's program did not compile, crashed or timed out); ``not run`` (the peer is not on this machine). A
peer that compiles but leaves the kernel alone (Polly finds no SCoP, Graphite changes nothing) is timed and
verified, and its ``reason`` says what the compiler reported. A peer row never changes the exit status of
``polylab bench``: a peer's failure is the peer's.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from polylab import toolchain as tc
from polylab.bench.runner import ERROR, NOT_RUN, UNVERIFIED, VERIFIED, CaseResult, Retime, run_case as run_variant_case
from polylab.bench.sweep import Case, Kernel
from polylab.codegen import generate, original_program
from polylab.codegen.harness import original_kernel
from polylab.errors import PolylabError
from polylab.experiment import TIMING_FLAGS, VERIFY_FLAGS, check_params, time_program
from polylab.experiment.params import validate_params
from polylab.experiment.verify import compile_original, param_args, run_against_original
from polylab.model.scop import Scop

__all__ = ["PEER_NAMES", "PEER_PREFIX", "REJECTED", "Peer", "PeerResult", "Transformed", "available_peers",
           "find_peer", "for_loop_input", "is_peer", "measure_peer", "peer_input", "peer_name", "peer_status",
           "run_case", "run_peer_case", "select", "summary"]

#: the peers polylab knows, in the order their rows appear
PEER_NAMES: tuple[str, ...] = ("pluto", "polly", "graphite")
#: a variant spec ``peer:NAME`` names a peer instead of a schedule
PEER_PREFIX = "peer:"
#: the status of a peer that produced no program for a kernel
REJECTED = "rejected"

_PROBE_TIMEOUT = 60.0
_PLUTO_OPTIONS: tuple[str, ...] = ("--tile", "--parallel", "--time")
_POLLY_FLAGS: tuple[str, ...] = ("-mllvm", "-polly", "-mllvm", "-polly-parallel", "-lgomp")
_GRAPHITE_FLAGS: tuple[str, ...] = ("-floop-nest-optimize", "-floop-parallelize-all")
_GRAPHITE_THREADS = "-ftree-parallelize-loops={}"
_POLLY_REMARKS: tuple[str, ...] = ("-Rpass-analysis=polly-scops", "-Rpass-missed=polly-detect")
_GCC_REMARKS: tuple[str, ...] = ("-fopt-info-loop-all",)
#: an OpenMP runtime call in a binary: the peer made some loop parallel
_OPENMP_CALL = b"GOMP_parallel"


@dataclass(frozen=True)
class Peer:
    """A peer found on this machine: how it transforms a C program and how its output is compiled.

    ``transformer`` is the command that rewrites a C file (``polycc --tile --parallel --time``; it is run as
    ``TRANSFORMER IN.c -o OUT.c`` in a fresh directory), empty for a compiler peer. ``compiler`` builds the
    (transformed) program with polylab's flags plus ``flags`` and, where the thread count is fixed at compile
    time, ``threads_flag`` formatted with it; ``openmp`` adds ``-fopenmp``. ``remark_flags`` make the compiler
    say what it did to the kernel (clang's optimization remarks, gcc's ``-fopt-info``)."""

    name: str
    title: str
    version: str
    compiler: tc.Compiler
    transformer: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    threads_flag: str | None = None
    openmp: bool = False
    remark_flags: tuple[str, ...] = ()

    @property
    def spec(self) -> str:
        """The variant spec of this peer, labelled with its title (``"PLUTO 0.13.0: peer:pluto"``)."""
        return f"{self.title}: {PEER_PREFIX}{self.name}"

    def compile_flags(self, threads: int | None) -> tuple[str, ...]:
        """The peer's own compiler flags for ``threads`` OpenMP threads (None: every processor)."""
        if self.threads_flag is None:
            return self.flags
        return (*self.flags, self.threads_flag.format(threads or os.cpu_count() or 1))

    @property
    def command(self) -> str:
        """How the peer is run, in words (for reports)."""
        return self.timed_command()

    def timed_command(self, flags: Sequence[str] = ()) -> str:
        """How the peer is run when the timed builds get the extra compiler ``flags``, in words."""
        threads = [self.threads_flag.format("T")] if self.threads_flag else []
        compile_cmd = " ".join([Path(self.compiler.path).name, *TIMING_FLAGS, *flags, *self.flags, *threads]
                               + (["-fopenmp"] if self.openmp else []))
        if self.transformer:
            return f"{shlex.join(self.transformer)} IN.c -o OUT.c; {compile_cmd} OUT.c"
        return f"{compile_cmd} IN.c"

    def to_json(self, flags: Sequence[str] = ()) -> dict:
        """The peer as plain data; ``flags``: the extra flags of the timed builds (in ``command``)."""
        return {"name": self.name, "title": self.title, "version": self.version,
                "command": self.timed_command(flags), "compiler": str(self.compiler)}

    def transform(self, source: str, *, timeout: float) -> Transformed:
        """Run the transformer on ``source`` (a complete C program); a compiler peer returns it unchanged."""
        if not self.transformer:
            return Transformed(source, 0.0)
        with tempfile.TemporaryDirectory(prefix="polylab-peer-") as tmp:
            (Path(tmp) / "kernel.c").write_text(source)
            t0 = time.perf_counter()
            try:
                done = tc.run(self.transformer[0], [*self.transformer[1:], "kernel.c", "-o", "kernel.peer.c"],
                              timeout=timeout, cwd=tmp, check=False, memory_limit_mb=None)
            except PolylabError as err:  # RunTimeout: the tool ran past the time limit
                return Transformed(None, time.perf_counter() - t0, "", err.message)
            seconds = time.perf_counter() - t0
            log = done.stdout + done.stderr
            out = Path(tmp) / "kernel.peer.c"
            if done.returncode != 0 or not out.is_file():
                return Transformed(None, seconds, log, _failure_reason(log, done.returncode))
            return Transformed(out.read_text(), seconds, log)


@dataclass(frozen=True)
class Transformed:
    """What a transformer made of a program: the new program (None when it failed), its wall time, its
    log, and the reason of a failure."""

    program: str | None
    seconds: float
    log: str = ""
    reason: str | None = None


@dataclass(frozen=True)
class PeerResult(CaseResult):
    """A :class:`~polylab.bench.runner.CaseResult` of a peer, with what the peer said.

    ``transform_seconds``: the wall time of the transformer (PLUTO), ``tool_times``: the times the tool
    reports itself (PLUTO's ``--time`` lines: dependence analysis, auto-transformation, code generation, ...),
    ``input``: ``"region"`` (the original region text) or ``"polylab for-loop form"``; ``reason`` holds the
    note of a verified row (what the compiler reported) or why the row was not timed."""

    peer: Peer | None = None
    transform_seconds: float | None = None
    tool_times: tuple[tuple[str, float], ...] = ()
    input: str = "region"

    def to_json(self) -> dict:
        out = super().to_json()
        out["peer"] = {**(self.peer.to_json(self.case.flags) if self.peer else {"name": peer_name(self.case.spec)}),
                       "transform_seconds": self.transform_seconds, "tool_times": dict(self.tool_times),
                       "input": self.input}
        return out


# ---- finding the peers ---------------------------------------------------------------------------------

def _probe(argv: Sequence[str], *, cwd: str | None = None) -> subprocess.CompletedProcess[str] | None:
    """Run a probe command (no input, C locale); None when it cannot start or hangs."""
    try:
        return subprocess.run(list(argv), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=_PROBE_TIMEOUT, cwd=cwd, env=dict(os.environ, LC_ALL="C", LANG="C"))
    except (OSError, subprocess.SubprocessError):
        return None


def _version_number(text: str) -> str:
    m = re.search(r"\d+\.\d+(?:\.\d+)?", text)
    return m.group(0) if m else "?"


_PROBE_LOOP = "void f(int n, double *a) { for (int i = 1; i < n; i++) a[i] = a[i - 1] + 1.0; }\n"


@functools.cache
def _find_pluto(polycc_env: str | None, path_env: str | None) -> tuple[Peer | None, str]:
    exe = shutil.which(polycc_env or "polycc")
    if exe is None:
        where = f"POLYCC={polycc_env!r} names no program" if polycc_env else "polycc is not on PATH"
        return None, (f"{where}: build PLUTO 0.13.0 from its public sources (github.com/bondhugula/pluto) and "
                      "put polycc on PATH, or set POLYCC")
    done = _probe([exe, "--version"])
    if done is None or "PLUTO" not in done.stdout + done.stderr:
        return None, f"{exe} does not answer --version like PLUTO's polycc"
    cc = tc.c_compiler()
    if cc is None or not tc.openmp_status(cc):
        return None, f"PLUTO's OpenMP output cannot be compiled here: {tc.openmp_status(cc)}"
    version = _version_number(done.stdout + done.stderr)
    return Peer("pluto", f"PLUTO {version}", version, cc, transformer=(exe, *_PLUTO_OPTIONS), openmp=True), ""


def _clang_candidates(clang_env: str | None) -> list[str]:
    names = [clang_env] if clang_env else []
    names += ["clang"] + [f"clang-{v}" for v in range(30, 10, -1)]
    found: list[str] = []
    for name in names:
        exe = shutil.which(name)
        if exe is not None and os.path.realpath(exe) not in map(os.path.realpath, found):
            found.append(exe)
    return found


def _polly_flags(exe: str) -> tuple[str, ...] | None:
    """The flags that run Polly in this clang: built in, else the LLVMPolly.so plugin of its LLVM."""
    with tempfile.TemporaryDirectory(prefix="polylab-polly-") as tmp:
        (Path(tmp) / "probe.c").write_text(_PROBE_LOOP)
        builtin = _probe([exe, "-O2", "-mllvm", "-polly", "-c", "probe.c", "-o", "probe.o"], cwd=tmp)
        if builtin is not None and builtin.returncode == 0:
            return _POLLY_FLAGS
        resource = _probe([exe, "-print-resource-dir"])
        if resource is None or resource.returncode != 0:
            return None
        plugin = Path(resource.stdout.strip()).parent.parent / "LLVMPolly.so"   # <llvm>/lib/clang/N -> <llvm>/lib
        if not plugin.is_file():
            return None
        flags = (f"-fplugin={plugin}", *_POLLY_FLAGS)
        loaded = _probe([exe, "-O2", *flags[:-1], "-c", "probe.c", "-o", "probe.o"], cwd=tmp)
        return flags if loaded is not None and loaded.returncode == 0 else None


@functools.cache
def _find_polly(clang_env: str | None, path_env: str | None) -> tuple[Peer | None, str]:
    candidates = _clang_candidates(clang_env)
    if not candidates:
        return None, ("no clang on PATH: install clang with Polly (Debian: `apt-get install clang-19 "
                      "libpolly-19-dev`) or set CLANG")
    for exe in candidates:
        flags = _polly_flags(exe)
        if flags is None:
            continue
        done = _probe([exe, "--version"])
        line = (done.stdout.splitlines() or ["clang"])[0] if done is not None else "clang"
        version = _version_number(line)
        compiler = tc.Compiler(path=exe, kind="clang", version=line)
        return Peer("polly", f"clang {version} Polly", version, compiler, flags=flags,
                    remark_flags=_POLLY_REMARKS), ""
    return None, (f"no clang here runs Polly ({', '.join(candidates)}): install it (Debian: `apt-get install "
                  "clang-19 libpolly-19-dev`) or set CLANG")


@functools.cache
def _find_graphite(cc_env: str | None, path_env: str | None) -> tuple[Peer | None, str]:
    cc = tc.c_compiler()
    if cc is None or cc.kind != "gcc":
        return None, f"polylab's C compiler is not gcc ({cc}): Graphite is a part of gcc"
    with tempfile.TemporaryDirectory(prefix="polylab-graphite-") as tmp:
        (Path(tmp) / "probe.c").write_text(_PROBE_LOOP)
        done = _probe([*cc.command, "-O2", *_GRAPHITE_FLAGS, "-c", "probe.c", "-o", "probe.o"], cwd=tmp)
    if done is None or done.returncode != 0 or "cannot be used" in done.stderr:
        detail = (done.stderr.strip().splitlines() or [""])[0] if done is not None else "did not run"
        return None, f"{cc.path} has no Graphite ({detail}): use a gcc built with isl"
    version = _version_number(cc.version.split(")")[-1]) if ")" in cc.version else _version_number(cc.version)
    return Peer("graphite", f"gcc {version} Graphite", version, cc, flags=_GRAPHITE_FLAGS,
                threads_flag=_GRAPHITE_THREADS, remark_flags=_GCC_REMARKS), ""


def _search(name: str) -> tuple[Peer | None, str]:
    """The peer ``name`` or the reason it is absent. The finders are cached on the environment variables
    they read (and ``PATH``), so a changed environment is probed anew."""
    env, path = os.environ.get, os.environ.get("PATH")
    match name:
        case "pluto":
            return _find_pluto(env("POLYCC"), path)
        case "polly":
            return _find_polly(env("CLANG"), path)
        case "graphite":
            return _find_graphite(env("CC"), path)
    raise PolylabError(f"no peer named {name!r}", hint=f"the peers are {', '.join(PEER_NAMES)}")


def find_peer(name: str) -> Peer | None:
    """The peer ``name`` (``pluto``, ``polly``, ``graphite``) when it is on this machine, else None
    (:func:`peer_status` says why). Probed once per process and environment."""
    return _search(name)[0]


def peer_status(name: str) -> tc.Availability:
    """Whether the peer ``name`` is on this machine, with the reason and what to install when it is not."""
    peer, reason = _search(name)
    return tc.Availability(True) if peer is not None else tc.Availability(False, reason)


def available_peers() -> list[Peer]:
    """Every peer found on this machine, in :data:`PEER_NAMES` order."""
    return [p for p in (find_peer(n) for n in PEER_NAMES) if p is not None]


def select(names: Iterable[str] | None = None) -> tuple[list[Peer], dict[str, str]]:
    """The peers ``names`` (default: all of :data:`PEER_NAMES`) that are here, and ``{name: reason}`` for
    the ones that are not. An unknown name is a :class:`~polylab.errors.PolylabError`."""
    wanted = list(dict.fromkeys(n.strip().lower() for n in (names or PEER_NAMES) if n.strip()))
    unknown = [n for n in wanted if n not in PEER_NAMES]
    if unknown:
        raise PolylabError(f"no peer named {unknown[0]!r}", hint=f"the peers are {', '.join(PEER_NAMES)}")
    found, absent = [], {}
    for n in wanted:
        peer, reason = _search(n)
        if peer is None:
            absent[n] = reason
        else:
            found.append(peer)
    return found, absent


# ---- specs ----------------------------------------------------------------------------------------------

def peer_name(spec: str) -> str | None:
    """``"peer:pluto"`` -> ``"pluto"``; None for a spec that is not a peer."""
    text = spec.strip()
    return text[len(PEER_PREFIX):].strip().lower() if text.startswith(PEER_PREFIX) else None


def is_peer(spec: str) -> bool:
    """Whether a variant spec names a peer (``peer:NAME``)."""
    return peer_name(spec) is not None


# ---- the input of a peer --------------------------------------------------------------------------------

def peer_input(scop: Scop) -> str:
    """The original program of ``scop`` (the verification reference) with its region between
    ``#pragma scop`` and ``#pragma endscop``."""
    return original_program(scop, scop_pragmas=True)


def for_loop_input(scop: Scop) -> str:
    """The original program of ``scop`` with its kernel replaced by polylab's code for the *original*
    schedule (``for`` loops, the same order as the region), the body between ``#pragma scop`` and
    ``#pragma endscop``: the input of PLUTO when its front end rejects the region text. (The code's
    ``min``/``max``/``floord`` calls, where its bounds need them, are defined by the macros PLUTO writes at
    the top of its output.)"""
    code = generate(scop, None, "c")
    head, sep, body = code.kernel.partition("\n{\n")
    body = body.rstrip()
    program, region = peer_input(scop), original_kernel(scop, scop_pragmas=True)
    if not sep or not body.endswith("}") or region not in program:
        raise PolylabError("polylab's code for the original schedule has no kernel function body to wrap")
    return program.replace(region, f"{head}\n{{\n#pragma scop\n{body[:-1].rstrip()}\n#pragma endscop\n}}\n")


# ---- running a peer case --------------------------------------------------------------------------------

def run_case(kernel: Kernel, case: Case, baseline: tc.Timing | None, *, repeat: int, warmup: int,
             timeout: float, progress: Callable[[str], None] | None = None) -> CaseResult:
    """:func:`run_peer_case` for a peer spec, else polylab's own :func:`polylab.bench.runner.run_case`: pass
    it to :func:`polylab.bench.run_bench` as ``run_one`` to measure peers in the same sweep."""
    runner = run_peer_case if is_peer(case.spec) else run_variant_case
    return runner(kernel, case, baseline, repeat=repeat, warmup=warmup, timeout=timeout, progress=progress)


def run_peer_case(kernel: Kernel, case: Case, baseline: tc.Timing | None, *, repeat: int, warmup: int,
                  timeout: float, progress: Callable[[str], None] | None = None) -> PeerResult:
    """The peer that ``case.spec`` names (``peer:NAME``), measured by :func:`measure_peer`; a peer that is not
    on this machine gives a ``not run`` result with the reason."""
    name = peer_name(case.spec) or ""
    if name not in PEER_NAMES:
        return PeerResult(case, NOT_RUN, reason=f"no peer named {name!r}: the peers are {', '.join(PEER_NAMES)}")
    peer, reason = _search(name)
    if peer is None:
        return PeerResult(case, NOT_RUN, reason=reason)
    return measure_peer(peer, kernel, case, baseline, repeat=repeat, warmup=warmup, timeout=timeout,
                        progress=progress)


def measure_peer(peer: Peer, kernel: Kernel, case: Case, baseline: tc.Timing | None, *, repeat: int,
                 warmup: int, timeout: float, progress: Callable[[str], None] | None = None) -> PeerResult:
    """Transform, build, verify (bit for bit) and, when verified, time ``peer`` on one case (module text):
    ``case`` gives the kernel's parameters, verification parameters and thread count (its spec is not read)."""
    say = progress or (lambda _m: None)
    say(f"running {peer.title}" if peer.transformer else f"compiling with {peer.title}")
    made = _transform_kernel(peer, kernel.scop, timeout=timeout)
    row = PeerResult(case, REJECTED, reason=made.reason, schedule=made.schedule, build_seconds=made.seconds,
                     peer=peer, transform_seconds=made.seconds if peer.transformer else None,
                     tool_times=made.tool_times, input=made.input)
    if made.program is None:
        return row
    try:
        verify_values = check_params(kernel.scop, case.verify_params)
        values = check_params(kernel.scop, case.params)
        flags = peer.compile_flags(case.threads)
        say("compiling the peer's program")
        checked = tc.compile(made.program, flags=(*VERIFY_FLAGS, *flags), compiler=peer.compiler,
                             openmp=peer.openmp)
        timed = tc.compile(made.program, flags=(*TIMING_FLAGS, *case.flags, *flags), compiler=peer.compiler,
                           openmp=peer.openmp)
        row = replace(row, parallel=_parallel(peer, timed, case.threads))
        say("verifying the peer's output against the original program")
        diff = _verify(kernel.scop, [("verification build", checked), ("timed build", timed)], verify_values,
                       threads=case.threads, timeout=timeout)
        said = _remarks(peer, kernel.scop, made.program, case.threads, case.flags)
        note = "; ".join(x for x in (made.note, said) if x)
        if diff is not None:
            return replace(row, status=UNVERIFIED, reason="; ".join(x for x in (diff[0], note) if x),
                           first_difference=diff[1])
        say(f"timing ({warmup} warm-up, {repeat} runs)")
        seconds = time_program(timed, param_args(kernel.scop, values), repeat=repeat, warmup=warmup,
                               threads=case.threads, timeout=timeout)
    except PolylabError as err:   # the peer's program did not compile, crashed or ran too long
        return replace(row, status=ERROR, reason=f"{type(err).__name__}: {' '.join(err.message.splitlines()[:3])}")
    return replace(row, status=VERIFIED, seconds=seconds, baseline=baseline, reason=note or None,
                   retime=Retime(timed, tuple(param_args(kernel.scop, values)), case.threads, timeout))


@dataclass(frozen=True)
class _Made:
    """The program a peer made for a kernel, with what it said."""

    program: str | None
    seconds: float
    input: str
    reason: str | None = None
    note: str | None = None
    schedule: str | None = None
    tool_times: tuple[tuple[str, float], ...] = field(default=())


def _transform_kernel(peer: Peer, scop: Scop, *, timeout: float) -> _Made:
    """The peer's program for ``scop``: from the region text, else (a transformer that rejects it) from
    polylab's for-loop form of the original order."""
    first = _transform(peer, peer_input(scop), timeout)
    if first.program is not None or not peer.transformer:
        return _made(first, "region", None)
    try:
        source = for_loop_input(scop)
    except PolylabError as err:
        return _Made(None, first.seconds, "region", f"{first.reason} (and {err.message})")
    second = _transform(peer, source, timeout)
    why = f"{peer.title} rejected the region text ({first.reason}); given polylab's for-loop form of the " \
          "original order"
    if second.program is None:
        return _Made(None, first.seconds + second.seconds, "polylab for-loop form",
                     f"{peer.title} rejected the region text ({first.reason}) and polylab's for-loop form of "
                     f"the original order ({second.reason})")
    return _made(second, "polylab for-loop form", why)


@functools.lru_cache(maxsize=64)
def _transform(peer: Peer, source: str, timeout: float) -> Transformed:
    """:meth:`Peer.transform`, once per program in a process (the cases of one kernel with other thread
    counts reuse it: a transformer's output does not depend on the thread count)."""
    return peer.transform(source, timeout=timeout)


def _made(t: Transformed, input_: str, note: str | None) -> _Made:
    times = _tool_times(t.log)
    schedule = _pluto_schedule(t.log)
    timing = ", ".join(f"{k} {v:.3g} s" for k, v in times if k in ("auto-transformation", "total"))
    notes = [x for x in (note, f"PLUTO's own times: {timing}" if timing else None) if x]
    return _Made(t.program, t.seconds, input_, t.reason, "; ".join(notes) or None, schedule, times)


_TOOL_TIME = re.compile(r"^\[pluto\]\s+(?P<what>[^:\[\]]*?)\s*time:\s*(?P<s>[0-9.]+)s\s*$", re.IGNORECASE)
_TRANSFORM = re.compile(r"^T\((?P<stmt>S\d+)\):\s*(?P<map>\(.*\))\s*$")


def _tool_times(log: str) -> tuple[tuple[str, float], ...]:
    """PLUTO's ``--time`` lines (``[pluto] Auto-transformation time: 0.0193s``) as (what, seconds)."""
    out = []
    for line in log.splitlines():
        m = _TOOL_TIME.match(line.strip())
        if m:
            what = re.sub(r"\s+", " ", m["what"].strip().lower().replace(" time", ""))
            out.append((what, float(m["s"])))
    return tuple(out)


def _pluto_schedule(log: str) -> str | None:
    """PLUTO's final affine transformation, one ``T(Sk): (...)`` per statement (the last group printed)."""
    last: dict[str, str] = {}
    for line in log.splitlines():
        m = _TRANSFORM.match(line.strip())
        if m:
            last[m["stmt"]] = m["map"]
    return "; ".join(f"T({s}): {t}" for s, t in last.items()) or None


def _failure_reason(log: str, returncode: int) -> str:
    """The lines of a tool's log that say why it failed (errors first), shortened."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    keys = ("error", "not supported", "assertion", "unsupported", "abort")
    picked = list(dict.fromkeys(ln for ln in lines if any(k in ln.lower() for k in keys)))
    text = "; ".join(picked[:3] or lines[-2:]) or f"exit status {returncode}"
    return text if len(text) <= 300 else text[:297] + "..."


def _parallel(peer: Peer, binary: tc.Binary, threads: int | None) -> bool | None:
    """Whether the timed binary calls the OpenMP runtime (a loop made parallel). None for Graphite at one
    thread, which never parallelizes (its parallel loops depend on the compile-time thread count)."""
    if peer.threads_flag is not None and (threads or os.cpu_count() or 1) <= 1:
        return None
    return _OPENMP_CALL in Path(binary.path).read_bytes()


def _verify(scop: Scop, builds: Sequence[tuple[str, tc.Binary]], values: Mapping[str, int], *,
            threads: int | None, timeout: float) -> tuple[str, str | None] | None:
    """Run the original program and each build at ``values`` (the toolchain's differential run, through
    :func:`polylab.experiment.verify.run_against_original`); None when every live-out element is equal bit
    for bit and the comparison is not vacuous, else (why not, the first differing element or None)."""
    check = validate_params(scop, values)
    reference = compile_original(scop, VERIFY_FLAGS)
    for label, binary in builds:
        run = run_against_original(scop, reference, binary, check, threads=threads, timeout=timeout)
        if run.verified is None:
            return f"the {label}'s output cannot be verified: {run.reason}", None
        if run.verified:
            continue
        if run.difference is None:
            return f"the {label}'s output is not the original's: {run.first_difference}", None
        cmp = run.comparison
        return (f"the {label}'s output differs from the original's in {cmp.mismatches} element(s), largest "
                f"relative error {cmp.max_rel_error:.3g} (a peer is verified only when bit-identical; "
                f"reordered or fused floating-point operations change the rounding)", str(run.difference))
    return None


# ---- what a compiler peer reports -----------------------------------------------------------------------

_REMARK = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):(?:\d+:)?\s*(?P<kind>remark|optimized|missed|note):\s*"
                     r"(?P<msg>.*?)(?:\s*\[-R[^\]]*\])?\s*$")


def _remarks(peer: Peer, scop: Scop, program: str, threads: int | None,
             extra: Sequence[str] = ()) -> str | None:
    """What the compiler reports it did to the kernel function (Polly's SCoPs, or why it found none;
    Graphite's optimized loop nests and parallelized loops) when it compiles like the timed build (``extra``:
    the case's flags), in one line; None for a transformer peer."""
    if not peer.remark_flags:
        return None
    with tempfile.TemporaryDirectory(prefix="polylab-peer-remarks-") as tmp:
        (Path(tmp) / "kernel.c").write_text(program)
        flags = [f for f in peer.compile_flags(threads) if not f.startswith("-l")]
        done = _probe([*peer.compiler.command, *TIMING_FLAGS, *extra, *flags, *peer.remark_flags, "-c",
                       "kernel.c", "-o", "kernel.o"], cwd=tmp)
    if done is None:
        return None
    first, last = _kernel_lines(program, original_kernel(scop, scop_pragmas=True))
    found = []
    for line in (done.stdout + done.stderr).splitlines():
        m = _REMARK.match(line.strip())
        if m and m["file"].endswith("kernel.c") and first <= int(m["line"]) <= last:
            found.append((int(m["line"]), m["msg"].strip()))
    return _polly_note(found) if peer.name == "polly" else _graphite_note(found)


def _kernel_lines(program: str, kernel: str) -> tuple[int, int]:
    """The first and last line (1-based) of the kernel function's text in a harness program (the whole
    program when it is not there)."""
    at = program.find(kernel)
    if at < 0:
        return 1, program.count("\n") + 1
    first = program.count("\n", 0, at) + 1
    return first, first + kernel.count("\n")


_POLLY_BOILERPLATE = ("The following errors keep this region from being a Scop", "Invalid Scop candidate ends here",
                      "SCoP ends here")


def _polly_note(found: list[tuple[int, str]]) -> str:
    scops = sorted({ln for ln, msg in found if msg.startswith("SCoP begins here")})
    if scops:
        return f"Polly modelled {len(scops)} SCoP(s) in the kernel"
    why = list(dict.fromkeys(msg for _, msg in found if not msg.startswith(_POLLY_BOILERPLATE)
                             and not msg.startswith(("Inbounds", "Signed-unsigned", "Possibly aliasing"))))
    return ("Polly modelled no SCoP of the kernel, so this row is plain clang -O3 code"
            + (f" ({'; '.join(why[:3])})" if why else ""))


def _graphite_note(found: list[tuple[int, str]]) -> str:
    nests = {ln for ln, msg in found if msg.startswith("loop nest optimized")}
    loops = {ln for ln, msg in found if msg.startswith("parallelizing")}
    if not nests and not loops:
        return "Graphite optimized no loop nest of the kernel and no loop was parallelized: plain gcc -O3 code"
    return f"Graphite optimized {len(nests)} loop nest(s) of the kernel; gcc parallelized {len(loops)} loop(s)"


# ---- a report's peer rows in words ----------------------------------------------------------------------

def summary(results: Iterable[CaseResult], absent: Mapping[str, str] | None = None) -> list[str]:
    """Lines for a person, to print under the table: each peer's command; per kernel, the transformer's
    time (PLUTO's own times of its search and code generation); what a compiler peer reported for a
    verified row (the table's notes give the reasons of the rows that were not timed); the peers that were
    asked for but are not here, with the reason."""
    by_peer: dict[str, list[PeerResult]] = {}
    for r in results:
        if isinstance(r, PeerResult) and r.peer is not None:
            by_peer.setdefault(r.peer.name, []).append(r)
    lines: list[str] = []
    for rows in by_peer.values():
        peer = rows[0].peer
        assert peer is not None
        lines.append(f"peer {peer.title}: {peer.timed_command(rows[0].case.flags)}")
        timed: set[str] = set()
        for r in rows:
            if peer.transformer and r.transform_seconds is not None and r.case.kernel not in timed:
                timed.add(r.case.kernel)
                own = ", ".join(f"{k} {v:.3g} s" for k, v in r.tool_times)
                lines.append(f"  {r.case.kernel}: {peer.title} took {r.transform_seconds:.2f} s"
                             + (f" ({own})" if own else "") + (f"; input: {r.input}" if r.input != "region" else ""))
            if r.status == VERIFIED and r.reason and not peer.transformer:
                lines.append(f"  {r.case.kernel} x{r.case.threads or 'default'}: {r.reason}")
    for name, reason in (absent or {}).items():
        lines.append(f"peer {name}: not measured: {reason}")
    return lines
