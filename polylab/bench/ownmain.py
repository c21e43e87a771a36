"""Benchmarks in the user's own harness: ``polylab bench FILE.c ... --own-main [--build CMD] [--peers]``.

polylab's harness mode (:mod:`polylab.bench.runner`) times the region's text in polylab's own harness,
whose kernel takes its arrays as ``restrict`` parameters: that baseline is not the user's program
(PolyBench's bicg: 16.95 ms as written, 4.24 ms with ``restrict``). Here the programs are the user's own,
each built with the same command and run with its own ``main``:

* ``original``: the file as written;
* polylab's: the file rewritten in place (:func:`polylab.experiment.rewrite.rewrite`), each ``#pragma
  scop`` region replaced by the OpenMP code of the optimizer's schedule for ``T`` threads (``optimize(T)``:
  one file per thread count, run with ``T`` threads) or of each ``--schedules`` spec (run with each ``T``);
* each peer that rewrites whole files: PLUTO's ``polycc --tile --parallel`` output (run with each ``T``).

Build. One command for every program: ``--build CMD``, a command line in which ``{src}`` is the C file and
``{exe}`` the program (without them, ``{src} -o {exe}`` is appended; default ``cc -O3 -lm``); polylab adds
the ``-D`` and ``-I`` options it read the file with, ``-I`` the file's own folder (the rewritten files are
written elsewhere and include the file's own headers) and ``-fopenmp`` (the original too: the same flags
for every program). The command runs in the current folder, without a shell.

Verification. Each program is built a second time with ``--verify-flags`` added (default
``-ffp-contract=off``, see :data:`NO_FMA`, and ``-DPOLYBENCH_DUMP_ARRAYS`` for a file that includes
``polybench.h``) and run once with each of its thread
counts; what it prints is compared with what the original prints by the toolchain's one differential run
(:func:`polylab.toolchain.printed_outputs` reads PolyBench's dump into arrays, anything else printed as
bytes; :func:`polylab.toolchain.judge` compares them and refuses a vacuous comparison). A program that
prints something else is ``unverified``, with the first difference, and never timed; one whose output
proves nothing (nothing printed, every number NaN) is ``not verified``.

Timing. The timed builds run ``repeat`` times each (after ``warmup`` untimed runs), in ``rounds``
interleaved rounds: each round runs every verified program of the file in turn with its share of the runs,
so a slow moment of a shared machine falls on all of them. A run's time is the program's own timer when its
standard output is one number (PolyBench's ``-DPOLYBENCH_TIME``), else the wall time of the process.
``vs original`` = median(original) / median(program); ``vs PLUTO`` = median(PLUTO, same threads) /
median(program); no ratio is given where a median is under a millisecond
(:data:`~polylab.experiment.MIN_TIMED_SECONDS`, as in the harness mode), and the geometric means leave
those files out.

CPU time (``clock="cpu"``, ``--cpu-time``). On a machine shared with other work a run's wall time counts
the moments its threads waited for a processor; its CPU time does not. A run's CPU time is what the kernel
charged to the process when it was reaped (``wait4``): user plus system time, summed over all its threads
(and over the children it waited for), every program the same way whether or not it prints a timer. It is
the time of the whole run: start, the program's own initialisation (PolyBench's ``init_array``, which for
lu and cholesky is a matrix product as costly as the kernel; its cache flush before the timer starts),
the regions, the output and the exit. So each file gets one more program, ``rest``: the file with every
region's lines left out (:func:`polylab.experiment.rewrite.without_regions`), built with the same command,
run with one thread, timed in the same rounds and never compared (it does not compute the same). The
*region CPU time* of a program is the median over its runs of ``c_i - r_i``, where ``c_i`` is its ``i``-th
run and ``r_i`` the rest's ``i``-th run, of the same round (every program of a file runs the same number of
times in each round, in the same order): the other code of all the programs is the same text, built the
same way (polylab's and PLUTO's files change only the regions, and add definitions), so the difference is
the regions' share. Pairing the runs of a round cancels what a round shares (measured here: the CPU time
of one program varied by 30 % from round to round on a loaded 2-core machine, every program of a round
alike, as caches and memory bandwidth are shared); it is still an estimate with the noise of two runs, not
a measurement of the regions alone, and where the region is small against the rest (PolyBench's 32 MB
cache flush alone takes about 17 ms of CPU time) a larger dataset says more. In this mode ``vs original``
and ``vs PLUTO`` are ratios of region CPU times, none where a region CPU time is under
:data:`~polylab.experiment.MIN_TIMED_SECONDS`; where ``rest`` could not be built or run, they are ratios
of whole runs' medians and the table says so.

CPU time sums the threads: a program at ``T`` threads that divides its work perfectly takes about the CPU
time it takes at one, so ``vs original`` of a ``T``-thread row measures the parallel code's work (its
overhead included), not its speedup, and rows of different thread counts are not speedups of one another.
``vs PLUTO`` compares the work of two programs at the same thread count. Threads that wait at a barrier
spin under ``OMP_WAIT_POLICY=active`` and the spinning is CPU time; the default here is ``passive``.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from polylab import toolchain as tc
from polylab.bench.machine import detect_machine
from polylab.bench.peers import Peer
from polylab.bench.runner import ERROR, NOT_RUN, UNVERIFIED, VERIFIED, machine_info, shares
from polylab.errors import PolylabError, ToolchainError
from polylab.experiment import MIN_TIMED_SECONDS
from polylab.frontend import parse, read_text_file
from polylab.model.scop import Program
from polylab.version import __version__

__all__ = ["CLOCKS", "DEFAULT_BUILD", "BuildCommand", "Contender", "OwnMainReport", "OwnMainResult", "contenders",
           "run_own_main", "verify_flags_for"]

#: the build command when none is given
DEFAULT_BUILD = "cc -O3 {src} -o {exe} -lm"
#: what a program that was not made (the peer refused the file, polylab's rewrite was refused) is
REJECTED = "rejected"
#: the status of the ``rest`` program (the file without its regions, ``clock="cpu"``): built and run, timed,
#: never compared with the original (it does not compute the same)
NOT_COMPARED = "not compared"
#: the clocks a run can be timed by: ``program`` (its own printed timer, else wall time), ``cpu`` (module text)
CLOCKS = ("program", "cpu")

Progress = Callable[[str], None]


#: the flags every verification build gets: no fused multiply-add, which rounds once where a multiply and an
#: add round twice; where the compiler fuses depends on the shape of the loops, so two builds that compute
#: every element in the same order would differ in the last bit (measured: PolyBench's trmm at MINI with
#: -O3 -march=native printed 6.33 in the original and 6.32 in PLUTO's and polylab's files)
NO_FMA = ("-ffp-contract=off",)


def verify_flags_for(text: str) -> tuple[str, ...]:
    """The flags of the verification build by default: :data:`NO_FMA`, and PolyBench's dump for a file that
    includes ``polybench.h`` (without it, what the program prints anyway is compared)."""
    dump = ("-DPOLYBENCH_DUMP_ARRAYS",) if re.search(r'#\s*include\s*[<"]polybench\.h[>"]', text) else ()
    return (*dump, *NO_FMA)


@dataclass(frozen=True)
class BuildCommand:
    """The user's build command (``template``, with ``{src}`` and ``{exe}``) and the options polylab adds
    (``extra``: the ``-D``/``-I`` options the file was read with, ``-fopenmp``)."""

    template: str = DEFAULT_BUILD
    extra: tuple[str, ...] = ()

    def argv(self, src: Path, exe: Path, more: Sequence[str] = (), home: Path | None = None) -> list[str]:
        """The command line that builds ``src`` into ``exe`` with ``more`` flags; ``home``: the folder of
        the file ``src`` was made from (its headers)."""
        words = shlex.split(self.template)
        if not any("{src}" in w for w in words):
            words += ["{src}", "-o", "{exe}"]
        folder = ["-I", str(home)] if home is not None else []
        out = [w.replace("{src}", str(src)).replace("{exe}", str(exe)) for w in words]
        flags = [*self.extra, *more, *folder]
        if "-fopenmp" not in out:
            flags.append("-fopenmp")
        return [out[0], *flags, *out[1:]]

    def text(self, more: Sequence[str] = ()) -> str:
        """The command line in words (``SRC`` and ``EXE`` for the files)."""
        return shlex.join(self.argv(Path("SRC.c"), Path("EXE"), more, Path("FILE_DIR")))


@dataclass(frozen=True)
class Contender:
    """One program of a file: its ``label``, ``kind`` (``original``, ``polylab``, ``peer``, ``rest``), its text (None
    when it could not be made: ``reason``), the thread counts it runs with, and a ``note`` (the sizes
    polylab's schedule was chosen for, the peer's command)."""

    label: str
    kind: str
    source: str | None
    threads: tuple[int, ...]
    reason: str | None = None
    note: str | None = None
    #: what the summary groups by: the spec a polylab file was made from (``optimize`` for every thread
    #: count's), the peer's title, ``original``
    group: str = ""


@dataclass(frozen=True)
class OwnMainResult:
    """One program of one file at one thread count: ``status`` (``verified``, ``unverified``, ``error``,
    ``rejected``, ``not run``, ``not compared``), its times (``runs``, seconds; ``timer``: ``program``,
    ``wall`` or ``cpu``; ``wall``: the wall times of the same runs, kept where ``timer`` is ``cpu``), the
    reason it was not timed, its first difference from the original's output."""

    kernel: str
    label: str
    kind: str
    threads: int
    status: str
    runs: tuple[float, ...] = ()
    timer: str = "program"
    reason: str | None = None
    first_difference: str | None = None
    note: str | None = None
    group: str = ""
    wall: tuple[float, ...] = ()
    binary: Path | None = field(default=None, compare=False, repr=False)

    @property
    def median(self) -> float | None:
        return statistics.median(self.runs) if self.runs else None

    @property
    def wall_median(self) -> float | None:
        return statistics.median(self.wall) if self.wall else None

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "program": self.label, "kind": self.kind, "threads": self.threads,
                "status": self.status, "median_s": self.median, "min_s": min(self.runs) if self.runs else None,
                "runs": list(self.runs), "timer": self.timer, "reason": self.reason,
                "first_difference": self.first_difference, "note": self.note, "group": self.group,
                **({"wall_runs": list(self.wall), "wall_median_s": self.wall_median} if self.wall else {})}


def _spec_of(spec: str, threads: int, vector: int) -> str:
    from polylab.schedule.optimize import Machine, Settings, step_text

    return step_text(threads, Settings(Machine(threads=threads, vector_bytes=vector))) if spec == "optimize" else spec


def _polylab(program: Program | str, text: str, specs: Sequence[str], threads: Sequence[int],
             vector: int) -> list[Contender]:
    """polylab's rewritten files of ``program`` (or the reason the file was not read): ``optimize`` is one
    file per thread count, any other spec one file run with every thread count."""
    from polylab.experiment.rewrite import rewrite

    out: list[Contender] = []
    if isinstance(program, str):
        return [Contender(f"polylab {s}", "polylab", None, tuple(threads), reason=program, group=f"polylab {s}")
                for s in specs]
    for spec in specs:
        for t in (threads if spec == "optimize" else threads[:1]):
            concrete = _spec_of(spec, t, vector)
            label, group = f"polylab {concrete}", f"polylab {spec}"
            runs_with = (t,) if spec == "optimize" else tuple(threads)
            try:
                done = rewrite(program, text, concrete, "openmp", machine=detect_machine(t).with_vector(vector))
            except PolylabError as err:
                out.append(Contender(label, "polylab", None, runs_with, reason=f"{type(err).__name__}: {err.message}",
                                     group=group))
                continue
            except Exception as err:  # an internal error on one file is reported in its row; the sweep goes on
                out.append(Contender(label, "polylab", None, runs_with, group=group,
                                     reason=f"internal error {type(err).__name__}: {str(err)[:200]}"))
                continue
            chosen = "; ".join(f"{r.scop.name} chosen for {r.sizes}" for r in done.regions)
            out.append(Contender(label, "polylab", done.text, runs_with, note=chosen, group=group))
    return out


def _rest(program: Program | str, text: str) -> Contender:
    """The ``rest`` program: the file without its regions (module text)."""
    from polylab.experiment.rewrite import without_regions

    if isinstance(program, str):
        return Contender("rest", "rest", None, (1,), reason=program, group="rest")
    try:
        return Contender("rest", "rest", without_regions(program, text), (1,), group="rest",
                         note="the file with its regions left out")
    except PolylabError as err:
        return Contender("rest", "rest", None, (1,), reason=err.message, group="rest")


def contenders(file: Path, text: str, options: Mapping[str, Any], *, specs: Sequence[str] = ("optimize",),
               threads: Sequence[int] = (1,), peers: Sequence[Peer] = (), vector: int = 16,
               timeout: float = 300.0, rest: bool = False) -> list[Contender]:
    """The programs of ``file`` (its ``text``, read with the front end's ``options``): the original,
    polylab's rewritten files, each peer's, and with ``rest`` the file without its regions (module text)."""
    try:
        program: Program | str = parse(text, filename=str(file), **options)
    except PolylabError as err:
        program = err.message
    out = [Contender("original", "original", text, (1,), group="original")]
    if rest:
        out.append(_rest(program, text))
    out += _polylab(program, text, specs, threads, vector)
    for peer in peers:
        if not peer.transformer:
            continue
        made = peer.transform(text, timeout=timeout)
        out.append(Contender(peer.title, "peer", made.program, tuple(threads), reason=made.reason,
                             note=" ".join(peer.transformer), group=peer.title))
    return out


def _build(command: BuildCommand, source: str, folder: Path, name: str, more: Sequence[str],
           timeout: float, home: Path) -> Path:
    src, exe = folder / f"{name}.c", folder / name
    src.write_text(source)
    argv = command.argv(src, exe, more, home)
    program = shutil.which(argv[0])
    if program is None:
        raise ToolchainError(f"the build command's program {argv[0]!r} is not found", hint="check --build")
    done = tc.run(program, argv[1:], timeout=timeout, cwd=os.getcwd(), memory_limit_mb=None, check=False)
    if done.returncode != 0 or not exe.is_file():
        lines = [ln for ln in (done.stderr + done.stdout).splitlines() if "error" in ln.lower()]
        raise ToolchainError(f"the build failed: {'; '.join(lines[:2]) or done.stderr.strip()[-300:]}",
                             hint=f"the command: {shlex.join(argv)}")
    return exe


def _run(exe: Path, threads: int, timeout: float) -> tc.RunResult:
    return tc.run(exe, [], timeout=timeout, threads=threads, memory_limit_mb=None, check=True)


@dataclass
class _Kernel:
    """The builds of one file while it is measured."""

    name: str
    home: Path
    results: list[OwnMainResult]
    reference: tc.Outputs | None = None


def _verify(kernel: _Kernel, c: Contender, command: BuildCommand, flags: Sequence[str], folder: Path, k: int,
            timeout: float) -> list[OwnMainResult]:
    """Build and verify one program at each of its thread counts, keeping its timed build when verified.
    The original's output (its verification build, one thread) is the reference of the others."""
    rows = [OwnMainResult(kernel.name, c.label, c.kind, t, REJECTED if c.kind == "peer" else ERROR,
                          reason=c.reason, note=c.note, group=c.group) for t in c.threads]
    if c.source is None:
        return rows
    if c.kind != "original" and kernel.reference is None:
        return [replace(r, status=NOT_RUN, reason="the original program did not build or run") for r in rows]
    try:
        if c.kind == "rest":   # timed, never compared: built and run once to see that it runs
            timed = _build(command, c.source, folder, f"p{k}", (), timeout, kernel.home)
            _run(timed, 1, timeout)
            return [replace(r, status=NOT_COMPARED, reason=None, binary=timed) for r in rows]
        checked = _build(command, c.source, folder, f"p{k}_verify", flags, timeout, kernel.home)
        timed = _build(command, c.source, folder, f"p{k}", (), timeout, kernel.home)
        out = []
        for row in rows:
            done = _run(checked, row.threads, timeout)
            printed = tc.printed_outputs(done.stdout, done.stderr, truncated=done.truncated)
            if c.kind == "original":
                kernel.reference = printed
                out.append(replace(row, status=VERIFIED, reason=None, binary=timed))
                continue
            verdict = tc.judge(kernel.reference, printed)
            if verdict.verified is False:
                out.append(replace(row, status=UNVERIFIED, reason="its output differs from the original's",
                                   first_difference=verdict.first_difference))
            elif verdict.verified is None:
                out.append(replace(row, status=NOT_RUN, reason=verdict.reason))
            else:
                out.append(replace(row, status=VERIFIED, reason=None, binary=timed))
        return out
    except PolylabError as err:
        return [replace(r, status=ERROR, reason=f"{type(err).__name__}: {' '.join(err.message.splitlines()[:2])}")
                for r in rows]


def _time(rows: list[OwnMainResult], repeat: int, warmup: int, rounds: int, timeout: float,
          progress: Progress, clock: str = "program") -> list[OwnMainResult]:
    """Time every verified row (and ``rest``), ``repeat`` runs in interleaved rounds, by ``clock`` (module
    text)."""
    out = list(rows)
    for r, share in enumerate(shares(repeat, rounds)):
        for i, row in enumerate(out):
            if row.status not in (VERIFIED, NOT_COMPARED) or row.binary is None:
                continue
            progress(f"{row.kernel} [{row.label} x{row.threads}]: round {r + 1}")
            try:
                for _ in range(warmup if r == 0 else 0):
                    _run(row.binary, row.threads, timeout)
                times, walls, timer = [], [], "program"
                for _ in range(share):
                    done = _run(row.binary, row.threads, timeout)
                    if clock == "cpu":
                        timer = "cpu"
                        times.append(done.cpu_seconds)
                        walls.append(done.seconds)
                        continue
                    own = tc.printed_time(done.stdout)
                    timer = "program" if own is not None else "wall"
                    times.append(own if own is not None else done.seconds)
                out[i] = replace(row, runs=row.runs + tuple(times), timer=timer, wall=row.wall + tuple(walls))
            except PolylabError as err:
                out[i] = replace(row, status=ERROR, runs=(), reason=f"round {r + 1}: {err.message}")
    return out


def measure_file(file: Path, options: Mapping[str, Any], command: BuildCommand, *, verify: Sequence[str] | None,
                 specs: Sequence[str], threads: Sequence[int], peers: Sequence[Peer], repeat: int, warmup: int,
                 rounds: int, timeout: float, vector: int, progress: Progress,
                 clock: str = "program") -> list[OwnMainResult]:
    """Every program of one file, verified and timed (module text)."""
    text = read_text_file(file)
    name = file.name
    progress(f"{name}: rewriting")
    progs = contenders(file, text, options, specs=specs, threads=threads, peers=peers, vector=vector,
                       timeout=timeout, rest=clock == "cpu")
    flags = tuple(verify) if verify is not None else verify_flags_for(text)
    kernel = _Kernel(name, file.resolve().parent, [])
    with tempfile.TemporaryDirectory(prefix="polylab-own-main-") as tmp:
        for k, c in enumerate(progs):
            progress(f"{name} [{c.label}]: building and verifying")
            kernel.results += _verify(kernel, c, command, flags, Path(tmp), k, timeout)
        return _time(kernel.results, repeat, warmup, rounds, timeout, progress, clock)


@dataclass(frozen=True)
class OwnMainReport:
    """Every file's programs: the results, the settings and the machine (:meth:`table`, :meth:`to_json`)."""

    results: tuple[OwnMainResult, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    machine: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def original(self, kernel: str) -> OwnMainResult | None:
        return next((r for r in self.results if r.kernel == kernel and r.kind == "original"), None)

    def peer(self, kernel: str, threads: int) -> OwnMainResult | None:
        return next((r for r in self.results if r.kernel == kernel and r.kind == "peer" and r.threads == threads),
                    None)

    @property
    def clock(self) -> str:
        """``program`` (each program's own timer, else wall time) or ``cpu`` (module text)."""
        return self.settings.get("clock", "program")

    def rest(self, kernel: str) -> tuple[float, ...]:
        """The CPU times of ``kernel``'s ``rest`` program, round by round (``clock="cpu"``); () where not
        timed."""
        return next((r.runs for r in self.results if r.kernel == kernel and r.kind == "rest"), ())

    def region(self, r: OwnMainResult) -> float | None:
        """The time a ratio compares: the median; under ``clock="cpu"``, where the rest was timed as often,
        the region CPU time ``median(c_i - r_i)`` over the runs ``c_i`` of ``r`` and ``r_i`` of the rest in the
        same rounds (module text)."""
        rest = self.rest(r.kernel) if self.clock == "cpu" and r.kind != "rest" else ()
        if r.median is None or len(rest) != len(r.runs):
            return r.median
        return statistics.median(c - o for c, o in zip(r.runs, rest))

    def ratio(self, r: OwnMainResult, base: OwnMainResult | None) -> float | None:
        """region(base) / region(r) (:meth:`region`: the medians, or under ``clock="cpu"`` the region CPU
        times), both verified and timed, and neither shorter than
        :data:`~polylab.experiment.MIN_TIMED_SECONDS` (a ratio of such times measures the noise); None
        otherwise."""
        if base is None:
            return None
        b, t = self.region(base), self.region(r)
        if b is None or t is None or min(b, t) < MIN_TIMED_SECONDS:
            return None
        return b / t

    def summary(self) -> list[tuple[str, int, float | None, float | None, int, int]]:
        """Per program (its ``group``: polylab's spec, the peer) and thread count: the geometric means of ``vs
        original`` and, for polylab's, ``vs PLUTO``, over the files where both were timed, and over how many
        files each."""
        out = []
        for group, threads in dict.fromkeys((r.group, r.threads) for r in self.results
                                            if r.kind not in ("original", "rest")):
            rows = [r for r in self.results if r.group == group and r.threads == threads]
            vs_o = [x for x in (self.ratio(r, self.original(r.kernel)) for r in rows) if x]
            vs_p = [x for x in (self.ratio(r, self.peer(r.kernel, threads)) for r in rows) if x]
            mine = bool(rows) and rows[0].kind == "polylab"
            out.append((group, threads, _geomean(vs_o), _geomean(vs_p) if mine else None, len(vs_o), len(vs_p)))
        return out

    def _row(self, r: OwnMainResult) -> list[str]:
        from polylab.bench.report import format_seconds

        vs_o = self.ratio(r, self.original(r.kernel)) if r.kind not in ("original", "rest") else None
        vs_o = 1.0 if r.kind == "original" and r.runs else vs_o
        vs_p = self.ratio(r, self.peer(r.kernel, r.threads)) if r.kind == "polylab" else None
        threads = "1 (seq)" if r.kind in ("original", "rest") else str(r.threads)
        times = [format_seconds(r.median), format_seconds(min(r.runs)) if r.runs else "-"]
        if self.clock == "cpu":
            region = self.region(r) if r.kind != "rest" else None
            times += [format_seconds(region) if region is not None and region > 0 else "-",
                      format_seconds(r.wall_median)]
        verified = {VERIFIED: "yes", NOT_COMPARED: "- (not compared)"}.get(r.status, r.status)
        return [r.kernel, r.label, threads, *times, _x(vs_o), _x(vs_p), verified]

    def table(self) -> str:
        from polylab.render import text_table

        cpu = self.clock == "cpu"
        head = (["CPU median", "CPU min", "region CPU", "wall median"] if cpu else ["median", "min"])
        lines = (["clock: CPU time of each run, user + system, of the process and all its threads (wait4); "
                 "region CPU = median over the rounds of (CPU time - the rest's CPU time in the same round)"]
                 if cpu else [])
        lines.append(text_table(["file", "program", "threads", *head, "vs original", "vs PLUTO", "verified"],
                                [self._row(r) for r in self.results]))
        lines += [f"{r.kernel} [{r.label} x{r.threads}]: {r.status}: {r.reason or ''}"
                  + (f" (first difference: {r.first_difference})" if r.first_difference else "")
                  for r in self.results if r.status not in (VERIFIED, NOT_COMPARED)]
        lines += self._notes()
        for label, threads, vs_o, vs_p, n, m in self.summary():
            lines.append(f"geomean{' (region CPU)' if cpu else ''}, {label} x{threads}: {_x(vs_o)} the original "
                         f"over {n} file(s)" + (f", {_x(vs_p)} PLUTO over {m}" if vs_p is not None else ""))
        flags = self.settings.get("verify_flags")
        lines.append(f"built with: {self.settings.get('build', '')}; verified with "
                     + (" ".join(flags) if flags is not None else "-ffp-contract=off, and -DPOLYBENCH_DUMP_ARRAYS "
                        "where the file includes polybench.h") + "; times: "
                     + ("CPU time (user + system) of each run, median" if cpu
                        else "the program's own timer (else wall time), median")
                     + (f"; OpenMP programs run with OMP_WAIT_POLICY={policy} (--wait-policy)"
                        if (policy := self.settings.get("omp_wait_policy")) else ""))
        return "\n".join(lines)

    def _notes(self) -> list[str]:
        """The lines under the table that say where a ratio is missing and what the CPU ratios mean."""
        short = sorted({r.kernel for r in self.results if r.kind != "rest" and (t := self.region(r)) is not None
                        and t < MIN_TIMED_SECONDS})
        what = "region CPU time" if self.clock == "cpu" else "median"
        out = [f"no ratio where a {what} is under {MIN_TIMED_SECONDS * 1e3:g} ms (the timer's noise on a shared "
               f"machine): {', '.join(short)}; measure them at a larger dataset"] if short else []
        if self.clock != "cpu":
            return out
        out.append("the rest: the same file with its regions left out (start, initialisation, output), built and "
                   "timed alike; the ratios are of region CPU times")
        whole = sorted({r.kernel for r in self.results if r.kind != "rest" and r.runs
                        and len(self.rest(r.kernel)) != len(r.runs)})
        if whole:
            out.append(f"the rest was not timed for {', '.join(whole)}: their ratios are of whole runs' CPU times")
        if any(r.threads > 1 for r in self.results if r.runs):
            out.append("CPU time sums all threads: a row with more threads shows the work its threads did, not "
                       "the time it took; its ratios are not speedups across thread counts")
        return out

    def __str__(self) -> str:
        return self.table()

    def to_json(self) -> dict:
        results = [r.to_json() | ({"region_cpu_s": self.region(r) if r.kind != "rest" else None}
                                  if self.clock == "cpu" else {}) for r in self.results]
        return {"polylab": __version__, "mode": "own-main", "clock": self.clock, "machine": dict(self.machine),
                "settings": dict(self.settings), "results": results,
                "summary": [{"program": label, "threads": t, "geomean_vs_original": o, "geomean_vs_pluto": p,
                             "files": n, "files_vs_pluto": m} for label, t, o, p, n, m in self.summary()],
                "seconds": round(self.seconds, 2)}


def _geomean(xs: Sequence[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def run_own_main(files: Sequence[Path], options: Mapping[str, Any], command: BuildCommand, *,
                 verify: Sequence[str] | None = None, specs: Sequence[str] = ("optimize",),
                 threads: Sequence[int] = (1,), peers: Sequence[Peer] = (), repeat: int = 3, warmup: int = 1,
                 rounds: int = 3, timeout: float = 600.0, vector: int = 16,
                 progress: Progress | None = None, on_file: Callable[[str], None] | None = None,
                 settings: Mapping[str, Any] | None = None, clock: str = "program") -> OwnMainReport:
    """Measure every file (module text) by ``clock`` (:data:`CLOCKS`); ``on_file`` is called with each
    file's name when it is done."""
    if clock not in CLOCKS:
        raise PolylabError(f"no clock {clock!r}", hint=f"one of {', '.join(CLOCKS)}")
    t0 = time.perf_counter()
    say = progress or (lambda _m: None)
    results: list[OwnMainResult] = []
    for f in files:
        results += measure_file(Path(f), options, command, verify=verify, specs=specs, threads=threads,
                                peers=peers, repeat=repeat, warmup=warmup, rounds=rounds, timeout=timeout,
                                vector=vector, progress=say, clock=clock)
        if on_file:
            on_file(Path(f).name)
    return OwnMainReport(tuple(results), {**(settings or {}), "clock": clock}, machine_info(),
                         time.perf_counter() - t0)
