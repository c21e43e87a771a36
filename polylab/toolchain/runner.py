"""Running a compiled program in a contained subprocess.

Generated and student-written code is untrusted: it may loop forever, allocate without bound, write out of
bounds or spawn children. :func:`run` therefore

* starts the program in its own session and process group, in a fresh temporary working directory that is
  removed afterwards (unless ``cwd=`` is given), with no standard input unless ``stdin=`` is given;
* limits its address space (``RLIMIT_AS``, :data:`DEFAULT_MEMORY_LIMIT_MB` by default) so that a runaway
  allocation fails inside the program instead of exhausting the machine, its CPU time (``RLIMIT_CPU``, a
  backstop of ``timeout`` times the usable cores, plus a second) and forbids core dumps;
* kills the whole process group with ``SIGKILL`` when the wall-clock ``timeout`` passes and raises
  :class:`~polylab.errors.RunTimeout`; on an interrupt (``KeyboardInterrupt``) it kills the group too and
  reaps the program before the interrupt propagates, so no child and no zombie is left behind;
* caps the captured standard output and error at :data:`OUTPUT_LIMIT_BYTES` each;
* turns a non-zero exit or a fatal signal into :class:`~polylab.errors.RunFailure` whose message names the
  signal in words (``SIGSEGV`` -> "segmentation fault: an out-of-bounds access?") or the harness's exit
  status (:data:`~polylab.toolchain.compare.EXIT_STATUS_MEANINGS`) and ends with the tail of the
  program's standard error.

It does not isolate the file system or the network; run only code that you would run yourself.

CUDA programs get no address-space limit by default: the CUDA runtime reserves a very large virtual
address range at start-up, so any useful ``RLIMIT_AS`` would stop every CUDA program.

Limits are applied in the child between ``fork`` and ``exec`` (``preexec_fn``), which calls only
``setrlimit``.
"""

from __future__ import annotations

import errno
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from polylab.errors import RunFailure, RunTimeout, ToolchainError
from polylab import processes
from polylab.toolchain.build import Binary
from polylab.toolchain.build import compile as _compile
from polylab.toolchain.compare import EXIT_OUT_OF_MEMORY, EXIT_STATUS_MEANINGS, parse_times

__all__ = ["DEFAULT_MEMORY_LIMIT_MB", "OUTPUT_DIR_VARIABLE", "OUTPUT_LIMIT_BYTES", "RunResult", "compile_and_run",
           "run", "signal_description"]

DEFAULT_MEMORY_LIMIT_MB = 4096
OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024
OUTPUT_DIR_VARIABLE = "POLYLAB_OUTPUT_DIR"
_TAIL_LINES = 15
_TAIL_CHARS = 2000

_SIGNALS = {
    "SIGSEGV": "segmentation fault: an out-of-bounds access?",
    "SIGBUS": "bus error: an access outside a mapped or aligned region (out of bounds?)",
    "SIGFPE": "arithmetic exception: an integer division by zero?",
    "SIGABRT": "aborted: an assertion failed, abort() was called, or the C library found heap corruption "
               "(often an out-of-bounds write)",
    "SIGILL": "illegal instruction: a binary built for another CPU (-march=native) or a __builtin_trap?",
    "SIGKILL": "killed from outside (the system may have run out of memory)",
    "SIGXCPU": "CPU time limit exceeded",
    "SIGXFSZ": "file size limit exceeded",
    "SIGPIPE": "broken pipe",
    "SIGTERM": "terminated",
    "SIGINT": "interrupted",
}
_MEMORY_WORDS = re.compile(r"out of memory|cannot allocate|bad_alloc|memory exhausted|enomem|"
                           r"failed to allocate|allocation failed", re.IGNORECASE)


def signal_description(signum: int) -> str:
    """``SIGSEGV (segmentation fault: an out-of-bounds access?)`` and the like, for a signal number."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
    words = _SIGNALS.get(name)
    return f"{name} ({words})" if words else name


@dataclass(frozen=True)
class RunResult:
    """What a finished run produced.

    ``returncode`` is the exit status, or minus the signal number when a signal ended the program (as in
    :mod:`subprocess`); ``seconds`` is the wall-clock time from start to exit; ``max_rss_mb`` the peak
    resident memory as the kernel reports it (``wait4``), which on Linux is at least the resident size
    of the launching process when it forked, so it is an upper bound for the program's own peak;
    ``cpu_seconds`` the processor time the kernel charged to the program, user plus system
    (``ru_utime + ru_stime`` of ``wait4``): the sum over all its threads, and over the children it waited
    for, of the time they ran on a processor (waits for the processor, the disk or a sleep excluded);
    ``output_dir`` the directory given to the program in ``$POLYLAB_OUTPUT_DIR``.
    """

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    args: tuple[str, ...] = ()
    threads: int | None = None
    max_rss_mb: float | None = None
    output_dir: Path | None = None
    cpu_seconds: float | None = None
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def times(self) -> list[float]:
        """Kernel times the harness reported (``polylab-time`` lines), in seconds."""
        return parse_times(self.stdout)

    @property
    def signal(self) -> str | None:
        """The name of the signal that ended the program (``'SIGSEGV'``), or ``None``."""
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


class _Reader(threading.Thread):
    """Drains one pipe into memory, keeping at most ``limit`` bytes."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.limit = stream, limit
        self.data = bytearray()
        self.truncated = False

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(65536):  # type: ignore[attr-defined]
                room = self.limit - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                if len(chunk) > room:
                    self.truncated = True
        except (OSError, ValueError):
            pass


def _clamp_limit(which: int, wanted: int) -> tuple[int, int]:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    return wanted, hard


def _limiter(memory_bytes: int | None, cpu_seconds: int | None):  # noqa: ANN202 - a preexec_fn
    limits: list[tuple[int, tuple[int, int]]] = [(resource.RLIMIT_CORE, (0, 0))]
    if memory_bytes is not None:
        soft, hard = _clamp_limit(resource.RLIMIT_AS, memory_bytes)
        limits.append((resource.RLIMIT_AS, (soft, hard)))
    if cpu_seconds is not None:
        soft, hard = _clamp_limit(resource.RLIMIT_CPU, cpu_seconds)
        limits.append((resource.RLIMIT_CPU, (soft, hard)))

    def apply() -> None:
        processes.unhold()
        for which, pair in limits:
            resource.setrlimit(which, pair)

    return apply


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()[-_TAIL_LINES:]
    tail = "\n".join(lines)
    return tail[-_TAIL_CHARS:]


def run(binary: Binary | str | os.PathLike[str], args: Sequence[str | int | float] = (), *,
        timeout: float = 60.0, memory_limit_mb: int | None | str = "auto",
        env: Mapping[str, str] | None = None, threads: int | None = None,
        stdin: str | bytes | None = None, cwd: str | os.PathLike[str] | None = None,
        output_dir: str | os.PathLike[str] | None = None, check: bool = True) -> RunResult:
    """Run ``binary`` with ``args`` and wait for it, within a time and a memory limit.

    ``threads`` sets ``OMP_NUM_THREADS``; ``env`` adds to (and overrides) the current environment;
    ``output_dir`` (created if needed) is passed to the program as ``$POLYLAB_OUTPUT_DIR``, where a
    harness writes its live-out arrays (see :mod:`polylab.toolchain.compare`). ``memory_limit_mb='auto'``
    means :data:`DEFAULT_MEMORY_LIMIT_MB` for CPU programs and no limit for CUDA programs; ``None`` means
    no limit. Raises :class:`~polylab.errors.RunTimeout` after ``timeout`` seconds and, when ``check``,
    :class:`~polylab.errors.RunFailure` on a non-zero exit or a signal; both carry the partial
    :class:`RunResult` as ``.result``.
    """
    path = Path(binary.path if isinstance(binary, Binary) else binary)
    if not path.is_file():
        raise ToolchainError(f"no program at {path}", hint="compile it first with polylab.toolchain.compile")
    language = binary.language if isinstance(binary, Binary) else "c"
    if memory_limit_mb == "auto":
        limit_mb: int | None = None if language == "cuda" else DEFAULT_MEMORY_LIMIT_MB
    elif memory_limit_mb is None or isinstance(memory_limit_mb, int):
        limit_mb = memory_limit_mb
    else:
        raise ToolchainError(f"memory_limit_mb={memory_limit_mb!r} is not a number of megabytes, "
                             "'auto' or None")
    if timeout <= 0:
        raise ToolchainError(f"timeout={timeout} must be positive")
    argv = [str(path.resolve()), *(str(a) for a in args)]
    full_env = dict(os.environ)
    if threads is not None:
        if threads < 1:
            raise ToolchainError(f"threads={threads} must be at least 1")
        full_env["OMP_NUM_THREADS"] = str(threads)
    out_path: Path | None = None
    if output_dir is not None:
        out_path = Path(output_dir).resolve()
        out_path.mkdir(parents=True, exist_ok=True)
        full_env[OUTPUT_DIR_VARIABLE] = str(out_path)
    if env:
        full_env.update({str(k): str(v) for k, v in env.items()})
    cores = threads or os.cpu_count() or 1
    cpu_limit = int(math.ceil(timeout * max(1, cores))) + 1
    preexec = _limiter(limit_mb * 1024 * 1024 if limit_mb else None, cpu_limit)

    workdir = Path(cwd) if cwd is not None else Path(tempfile.mkdtemp(prefix="polylab-run-"))
    try:
        return _run_in(argv, workdir, full_env, preexec, timeout, stdin, limit_mb, threads, out_path, check)
    finally:
        if cwd is None:
            shutil.rmtree(workdir, ignore_errors=True)


def _run_in(argv: list[str], workdir: Path, env: dict[str, str], preexec, timeout: float,  # noqa: ANN001
            stdin: str | bytes | None, limit_mb: int | None, threads: int | None, out_path: Path | None,
            check: bool) -> RunResult:
    start = time.perf_counter()
    try:
        with processes.held():  # started and recorded before a signal can ask for its end
            proc = subprocess.Popen(argv, cwd=workdir, env=env, preexec_fn=preexec, start_new_session=True,
                                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            processes.started(proc.pid)
    except OSError as exc:
        if exc.errno == errno.ENOEXEC:
            raise ToolchainError(f"{argv[0]} is not a program this machine can run ({exc.strerror}): a damaged "
                                 "or truncated build?", hint="rebuild it (force=True, or --force on the command "
                                                             "line)") from None
        raise ToolchainError(f"could not start {argv[0]}: {exc.strerror}") from None
    try:
        return _wait(proc, argv, start, timeout, stdin, limit_mb, threads, out_path, check)
    finally:
        processes.ended(proc.pid)


def _wait(proc: subprocess.Popen, argv: list[str], start: float, timeout: float, stdin: str | bytes | None,
          limit_mb: int | None, threads: int | None, out_path: Path | None, check: bool) -> RunResult:
    """Wait for the started program within ``timeout`` (see :func:`run`)."""
    assert proc.stdout is not None and proc.stderr is not None  # both are pipes
    readers = [_Reader(proc.stdout, OUTPUT_LIMIT_BYTES), _Reader(proc.stderr, OUTPUT_LIMIT_BYTES)]
    for r in readers:
        r.start()
    if stdin is not None:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True).start()

    lock = threading.Lock()
    state = {"reaped": False, "timed_out": False}

    def kill_group() -> None:
        with lock:
            if state["reaped"]:
                return
            state["timed_out"] = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

    timer = threading.Timer(timeout, kill_group)
    timer.daemon = True
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:  # an interrupt or a terminating signal: stop the whole group, reap it, propagate
        kill_group()
        _reap(proc, readers)
        raise
    finally:
        with lock:
            state["reaped"] = True
        timer.cancel()
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # tell Popen the child is reaped
    for r in readers:
        r.join(timeout=2.0)
    if any(r.is_alive() for r in readers):
        # a child of the program still holds the pipes open: stop the rest of the group
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        for r in readers:
            r.join(timeout=2.0)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()

    result = RunResult(
        returncode=proc.returncode,
        stdout=readers[0].data.decode("utf-8", errors="replace"),
        stderr=readers[1].data.decode("utf-8", errors="replace"),
        seconds=seconds, args=tuple(argv[1:]), threads=threads,
        max_rss_mb=usage.ru_maxrss / 1024.0, output_dir=out_path, cpu_seconds=usage.ru_utime + usage.ru_stime,
        timed_out=state["timed_out"], truncated=any(r.truncated for r in readers))

    if result.timed_out:
        raise RunTimeout(f"stopped after {timeout:.1f} s: the program did not finish (an infinite loop?)",
                         result=result, hint="if the problem is simply large, pass a larger timeout= (or "
                                             "--timeout) or smaller parameters")
    if check and result.returncode != 0:
        raise _failure(result, limit_mb)
    return result


def _reap(proc: subprocess.Popen, readers: list[_Reader]) -> None:
    """Wait for a killed program (so it leaves no zombie) and close its pipes; a second interrupt while
    waiting does not stop the wait."""
    while True:
        try:
            os.waitpid(proc.pid, 0)
            break
        except (KeyboardInterrupt, processes.Terminated):
            continue  # a second signal while reaping: finish reaping first
        except ChildProcessError:
            break  # already reaped
    proc.returncode = -signal.SIGKILL
    for r in readers:
        r.join(timeout=2.0)
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream is not None:
            stream.close()


def _feed(pipe: IO[bytes] | None, data: bytes) -> None:
    if pipe is None:
        return
    try:
        pipe.write(data)
        pipe.close()
    except OSError:
        pass


def _failure(result: RunResult, limit_mb: int | None) -> RunFailure:
    rc = result.returncode
    memory_hit = bool(_MEMORY_WORDS.search(result.stderr)) or (
        limit_mb is not None and result.max_rss_mb is not None and result.max_rss_mb >= 0.9 * limit_mb)
    if rc < 0:
        what = f"the program was stopped by {signal_description(-rc)}"
        sig = result.signal or ""
        if limit_mb is not None and sig in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGKILL"):
            what += (f"; it ran under a {limit_mb} MB memory limit, and a malloc that failed there ends the "
                     "same way")
        elif sig == "SIGXCPU":
            what += " (the backstop for a program that does not finish)"
    elif rc == EXIT_OUT_OF_MEMORY and memory_hit:
        what = "the program ran out of memory"
        if limit_mb is not None:
            what += f" (its memory limit is {limit_mb} MB)"
    elif rc in EXIT_STATUS_MEANINGS:
        what = f"{EXIT_STATUS_MEANINGS[rc]} (exit status {rc})"
    else:
        what = f"the program exited with status {rc}"
    if memory_hit and rc != EXIT_OUT_OF_MEMORY:
        what += "; it reports running out of memory"
        if limit_mb is not None:
            what += f" (limit {limit_mb} MB)"
    tail = _tail(result.stderr)
    message = what + (f"\nlast lines of its error output:\n{tail}" if tail else "")
    hint = None
    if memory_hit:
        hint = "pass a larger memory_limit_mb= (or smaller parameters) if the arrays are meant to be this big"
    elif rc < 0 and limit_mb is not None and "memory limit" in what:
        hint = ("check the array extents and the loop bounds; if the arrays are large, retry with a larger "
                "memory_limit_mb=")
    return RunFailure(message, result=result, hint=hint)


def compile_and_run(source: str, args: Sequence[str | int | float] = (), *, language: str = "c",
                    flags: Sequence[str] | None = None, openmp: bool = False,
                    cache_dir: str | os.PathLike[str] | None = None, **run_options) -> RunResult:  # noqa: ANN003
    """:func:`~polylab.toolchain.build.compile` ``source``, then :func:`run` it with ``args``.

    ``run_options`` are those of :func:`run` (``timeout``, ``threads``, ``output_dir``, ...).
    """
    binary = _compile(source, language=language, flags=flags, openmp=openmp, cache_dir=cache_dir)
    return run(binary, args, **run_options)
