"""Finding the tools: the C compiler, OpenMP support, nvcc, an NVIDIA GPU and mlir-opt.

Each finder returns a frozen :class:`Compiler` value (or a :class:`Tool` for mlir-opt) or ``None``; the
``*_status`` functions return an :class:`Availability` that says *why* something is missing, in words a
student can act on ("nvcc not found: CUDA code is shown but not compiled; install the CUDA toolkit").

Search order
------------
* C compiler: the ``CC`` environment variable (a name or a path, optionally with a launcher such as
  ``ccache gcc``), then ``gcc``, then ``clang`` on ``PATH``.
* CUDA compiler: the ``NVCC`` environment variable, ``nvcc`` on ``PATH``, then ``/usr/local/cuda/bin/nvcc``.
* GPU: ``nvidia-smi -L`` lists at least one GPU, or ``/dev/nvidia0`` exists.
* MLIR: ``mlir-opt``, ``mlir-opt-19`` on ``PATH``, then ``/usr/lib/llvm-19/bin/mlir-opt``.

The version string (the first line of ``--version``, the ``release`` line for nvcc) enters the build cache
key, so upgrading a compiler never reuses stale binaries. Probes run once per process (``functools.cache``).
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Availability", "Compiler", "Tool", "ToolchainReport", "report", "c_compiler", "c_compiler_status", "cuda_compiler",
    "cuda_compiler_status", "gpu_status", "has_gpu", "mlir_opt", "mlir_opt_status", "openmp_status",
    "supports_openmp",
]

_PROBE_TIMEOUT = 30.0


@dataclass(frozen=True)
class Compiler:
    """A compiler found on this machine.

    ``path`` is the executable, ``kind`` one of ``'gcc'``, ``'clang'``, ``'nvcc'`` or ``'cc'`` (unknown but
    gcc-compatible), ``version`` the first line of its ``--version`` output and ``launcher`` any words that
    precede it in ``CC`` (e.g. ``('ccache',)``).
    """

    path: str
    kind: str
    version: str
    launcher: tuple[str, ...] = ()

    @property
    def command(self) -> tuple[str, ...]:
        """The words that start a compiler invocation."""
        return (*self.launcher, self.path)

    def __str__(self) -> str:
        return f"{self.kind} ({self.version}) at {self.path}"


@dataclass(frozen=True)
class Tool:
    """An auxiliary program (such as ``mlir-opt``) with its version line."""

    path: str
    version: str


@dataclass(frozen=True)
class Availability:
    """Whether a capability is available, and a plain-language reason when it is not."""

    available: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.available

    def __str__(self) -> str:
        return "available" if self.available else self.reason


def _run_quiet(argv: list[str] | tuple[str, ...], **kwargs) -> subprocess.CompletedProcess[str] | None:
    """Run a probe command, returning ``None`` when it cannot be started or hangs."""
    env = dict(os.environ, LC_ALL="C", LANG="C")
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=_PROBE_TIMEOUT,
                              env=env, stdin=subprocess.DEVNULL, **kwargs)
    except (OSError, subprocess.SubprocessError):
        return None


def _version_line(command: tuple[str, ...]) -> str | None:
    done = _run_quiet([*command, "--version"])
    if done is None or done.returncode != 0:
        return None
    lines = [ln.strip() for ln in (done.stdout or done.stderr).splitlines() if ln.strip()]
    return lines[0] if lines else "unknown version"


def _classify(version_text: str, path: str) -> str:
    text = version_text.lower()
    name = Path(path).name.lower()
    if "clang" in text or "clang" in name:
        return "clang"
    if "nvcc" in name or "cuda compilation tools" in text:
        return "nvcc"
    if "gcc" in text or "free software foundation" in text or name.startswith("gcc"):
        return "gcc"
    return "cc"


def _resolve(word: str) -> str | None:
    if os.sep in word:
        return word if os.access(word, os.X_OK) and os.path.isfile(word) else None
    return shutil.which(word)


@functools.cache
def _c_compiler_search(cc_env: str | None, path_env: str | None) -> tuple[Compiler | None, str]:
    candidates: list[tuple[tuple[str, ...], str]] = []
    if cc_env and cc_env.strip():
        words = tuple(shlex.split(cc_env))
        candidates.append((words, "the CC environment variable"))
    candidates.append((("gcc",), "PATH"))
    candidates.append((("clang",), "PATH"))
    problems: list[str] = []
    for words, origin in candidates:
        *launcher, exe = words
        path = _resolve(exe)
        if path is None:
            if origin != "PATH":
                problems.append(f"CC={cc_env!r} names no executable program")
            continue
        version = _version_line((*launcher, path))
        if version is None:
            problems.append(f"{path} (from {origin}) does not answer --version")
            continue
        return Compiler(path=path, kind=_classify(version, path), version=version,
                        launcher=tuple(launcher)), ""
    reason = "no C compiler found: generated code is shown but not compiled or run; install gcc " \
             "(e.g. `apt-get install gcc`) or set CC"
    if problems:
        reason += " (" + "; ".join(problems) + ")"
    return None, reason


def c_compiler() -> Compiler | None:
    """The C compiler to use (``CC``, then gcc, then clang), or ``None``; see :func:`c_compiler_status`."""
    return _c_compiler_search(os.environ.get("CC"), os.environ.get("PATH"))[0]


def c_compiler_status() -> Availability:
    """Whether a C compiler is available, with the reason when it is not."""
    found, reason = _c_compiler_search(os.environ.get("CC"), os.environ.get("PATH"))
    return Availability(True) if found else Availability(False, reason)


_OPENMP_PROBE = """\
#include <omp.h>
#include <stdio.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    printf("%d %d\\n", n, omp_get_max_threads());
    return n > 0 ? 0 : 1;
}
"""


@functools.cache
def _openmp_probe(compiler: Compiler) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="polylab-omp-") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text(_OPENMP_PROBE)
        done = _run_quiet([*compiler.command, "-fopenmp", str(src), "-o", str(Path(tmp) / "probe")],
                          cwd=tmp)
        if done is not None and done.returncode == 0:
            return True, ""
        detail = (done.stderr.strip().splitlines() or [""])[0] if done is not None else "did not run"
    if compiler.kind == "clang":
        hint = "install the LLVM OpenMP runtime (e.g. `apt-get install libomp-dev`) or use gcc (CC=gcc)"
    else:
        hint = "use a compiler with OpenMP support such as gcc"
    return False, (f"{compiler.kind} cannot compile OpenMP programs ({detail}): OpenMP code is shown and "
                   f"runs sequentially only if compiled without -fopenmp; {hint}")


def supports_openmp(compiler: Compiler | None = None) -> bool:
    """Whether ``compiler`` (default: :func:`c_compiler`) compiles and links ``-fopenmp`` programs.

    Probed once per compiler by building a small ``#pragma omp parallel`` program.
    """
    return bool(openmp_status(compiler))


def openmp_status(compiler: Compiler | None = None) -> Availability:
    """Whether OpenMP programs can be built, with the reason when they cannot."""
    compiler = compiler or c_compiler()
    if compiler is None:
        return Availability(False, c_compiler_status().reason)
    if compiler.kind == "nvcc":
        return Availability(True)  # nvcc passes -fopenmp to its host compiler (gcc)
    ok, reason = _openmp_probe(compiler)
    return Availability(ok, reason)


_CUDA_DIRS = ("/usr/local/cuda/bin",)


def _nvcc_version(path: str) -> str | None:
    done = _run_quiet([path, "--version"])
    if done is None or done.returncode != 0:
        return None
    lines = [ln.strip() for ln in done.stdout.splitlines() if ln.strip()]
    for ln in lines:
        if "release" in ln:
            return ln
    return lines[-1] if lines else "unknown version"


@functools.cache
def _cuda_search(nvcc_env: str | None, path_env: str | None) -> tuple[Compiler | None, str]:
    candidates = []
    if nvcc_env:
        candidates.append(nvcc_env)
    candidates.append("nvcc")
    candidates.extend(str(Path(d) / "nvcc") for d in _CUDA_DIRS)
    for cand in candidates:
        path = _resolve(cand)
        if path is None:
            continue
        version = _nvcc_version(path)
        if version is not None:
            return Compiler(path=path, kind="nvcc", version=version), ""
    return None, ("nvcc not found: CUDA code is shown but not compiled; install the CUDA toolkit "
                  "(nvcc on PATH or in /usr/local/cuda/bin) or set NVCC")


def cuda_compiler() -> Compiler | None:
    """nvcc (``NVCC``, ``PATH``, ``/usr/local/cuda/bin``), or ``None``; see :func:`cuda_compiler_status`."""
    return _cuda_search(os.environ.get("NVCC"), os.environ.get("PATH"))[0]


def cuda_compiler_status() -> Availability:
    """Whether CUDA code can be compiled, with the reason when it cannot."""
    found, reason = _cuda_search(os.environ.get("NVCC"), os.environ.get("PATH"))
    return Availability(True) if found else Availability(False, reason)


@functools.cache
def _gpu_probe() -> tuple[bool, str]:
    smi = shutil.which("nvidia-smi")
    if smi is not None:
        done = _run_quiet([smi, "-L"])
        if done is not None and done.returncode == 0 and "GPU" in done.stdout:
            return True, ""
    if os.path.exists("/dev/nvidia0"):
        return True, ""
    return False, ("no NVIDIA GPU found (nvidia-smi lists none and /dev/nvidia0 is absent): CUDA code is "
                   "compiled when nvcc is present but not run")


def has_gpu() -> bool:
    """Whether an NVIDIA GPU is present (``nvidia-smi -L`` lists one, or ``/dev/nvidia0`` exists)."""
    return _gpu_probe()[0]


def gpu_status() -> Availability:
    """Whether CUDA programs can run here, with the reason when they cannot."""
    ok, reason = _gpu_probe()
    return Availability(ok, reason)


_MLIR_CANDIDATES = ("mlir-opt", "mlir-opt-19", "/usr/lib/llvm-19/bin/mlir-opt")


@functools.cache
def _mlir_search(path_env: str | None) -> tuple[Tool | None, str]:
    for cand in _MLIR_CANDIDATES:
        path = _resolve(cand)
        if path is None:
            continue
        done = _run_quiet([path, "--version"])
        if done is not None and done.returncode == 0:
            lines = [ln.strip() for ln in done.stdout.splitlines() if ln.strip()]
            version = next((ln for ln in lines if "version" in ln.lower()), lines[0] if lines else "unknown")
            return Tool(path=path, version=version), ""
    return None, ("mlir-opt not found: MLIR text is shown but not verified; install Debian's "
                  "mlir-19-tools (`apt-get install mlir-19-tools`)")


def mlir_opt() -> Tool | None:
    """``mlir-opt`` (``mlir-opt``, ``mlir-opt-19``, ``/usr/lib/llvm-19/bin/mlir-opt``), or ``None``."""
    return _mlir_search(os.environ.get("PATH"))[0]


def mlir_opt_status() -> Availability:
    """Whether MLIR text can be verified, with the reason when it cannot."""
    found, reason = _mlir_search(os.environ.get("PATH"))
    return Availability(True) if found else Availability(False, reason)


@dataclass(frozen=True)
class ToolchainReport:
    """What this machine can do: compile C, OpenMP, CUDA; run CUDA; verify MLIR; with reasons."""

    c: Availability
    openmp: Availability
    cuda: Availability
    gpu: Availability
    mlir: Availability
    c_compiler: Compiler | None
    cuda_compiler: Compiler | None
    mlir_opt: Tool | None

    def __str__(self) -> str:
        rows = [("C compiler", self.c, self.c_compiler), ("OpenMP", self.openmp, None),
                ("CUDA compiler", self.cuda, self.cuda_compiler), ("NVIDIA GPU", self.gpu, None),
                ("mlir-opt", self.mlir, self.mlir_opt)]
        out = []
        for label, avail, tool in rows:
            if avail:
                out.append(f"{label}: yes" + (f" - {tool.path} ({tool.version})" if tool else ""))
            else:
                out.append(f"{label}: no - {avail.reason}")
        return "\n".join(out)

    def to_json(self) -> dict:
        return {name: {"available": bool(a), "reason": a.reason or None}
                for name, a in (("c", self.c), ("openmp", self.openmp), ("cuda", self.cuda), ("gpu", self.gpu),
                                ("mlir", self.mlir))}


def report() -> ToolchainReport:
    """Probe every tool once and say what is available (and why not)."""
    return ToolchainReport(c=c_compiler_status(), openmp=openmp_status(), cuda=cuda_compiler_status(),
                           gpu=gpu_status(), mlir=mlir_opt_status(), c_compiler=c_compiler(),
                           cuda_compiler=cuda_compiler(), mlir_opt=mlir_opt())
