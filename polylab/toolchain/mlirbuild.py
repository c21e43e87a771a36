"""Building MLIR text into a program: ``mlir-opt`` (lowering to the LLVM dialect), ``mlir-translate`` (LLVM IR),
``llc`` of the same LLVM (an object file) and the C compiler (linking with a C driver). Knows nothing of
stencils: it compiles text and says why it cannot.

:func:`mlir_tools` finds the tools (Debian: ``mlir-19-tools`` and ``llvm-19``); :func:`mlir_opt_run` runs
``mlir-opt`` with a list of passes and returns its output or its diagnostics; :func:`build_mlir` lowers a
module of ``func``/``scf``/``memref``/``arith``/``math`` operations to an object and links it with C sources.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from polylab.errors import ToolchainError
from polylab.toolchain.compilers import mlir_opt

#: mlir-opt passes that take scf/memref/arith/math to the LLVM dialect
TO_LLVM = ("--convert-scf-to-cf", "--expand-strided-metadata", "--lower-affine", "--convert-math-to-llvm",
           "--convert-arith-to-llvm", "--finalize-memref-to-llvm", "--convert-func-to-llvm",
           "--convert-cf-to-llvm", "--reconcile-unrealized-casts")


@dataclass(frozen=True)
class MlirTools:
    """Paths of ``mlir-opt``, ``mlir-translate``, ``llc`` and the C compiler."""

    opt: str
    translate: str
    llc: str
    cc: str


def _which(*names: str) -> str | None:
    for n in names:
        found = shutil.which(n) or (n if Path(n).is_file() else None)
        if found:
            return found
    return None


def mlir_tools() -> tuple[MlirTools | None, str]:
    """The tools, or None and what is missing (with the Debian packages to install)."""
    opt = mlir_opt()
    translate = _which("mlir-translate", "mlir-translate-19", "/usr/lib/llvm-19/bin/mlir-translate")
    llc = _which("llc-19", "/usr/lib/llvm-19/bin/llc")
    cc = _which("gcc", "cc", "clang")
    missing = [n for n, t in (("mlir-opt", opt), ("mlir-translate", translate), ("llc-19", llc), ("a C compiler", cc))
               if t is None]
    if missing:
        return None, f"{', '.join(missing)} not found (Debian: apt-get install mlir-19-tools llvm-19)"
    return MlirTools(opt.path, translate, llc, cc), ""  # type: ignore[union-attr, arg-type]


def mlir_opt_run(text: str, passes: tuple[str, ...] | list[str], *, timeout: float = 120.0) -> str:
    """``mlir-opt PASSES`` on ``text``: its output, or a :class:`ToolchainError` with its diagnostics."""
    tool = mlir_opt()
    if tool is None:
        raise ToolchainError("mlir-opt is not installed", hint="apt-get install mlir-19-tools")
    done = subprocess.run([tool.path, *passes], input=text, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise ToolchainError(f"mlir-opt {' '.join(passes)} refused the text: {done.stderr.strip()[:2000]}")
    return done.stdout


def build_mlir(text: str, c_sources: dict[str, str], out_dir: Path, *, cc: tuple[str, ...] = (),
               timeout: float = 300.0) -> Path:
    """The executable of ``text`` (lowered to LLVM) linked with ``c_sources`` (name -> text) in ``out_dir``;
    ``cc``: the C compiler command to link with (default gcc; ``("mpicc",)`` for MPI programs)."""
    tools, reason = mlir_tools()
    if tools is None:
        raise ToolchainError(reason)
    llvm_dialect = mlir_opt_run(text, TO_LLVM, timeout=timeout)
    done = subprocess.run([tools.translate, "--mlir-to-llvmir"], input=llvm_dialect, capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise ToolchainError(f"mlir-translate refused the lowered module: {done.stderr.strip()[:2000]}")
    ll = out_dir / "kernel.ll"
    ll.write_text(done.stdout)
    obj = out_dir / "kernel.o"
    _run([tools.llc, "-O1", "-relocation-model=pic", "-filetype=obj", str(ll), "-o", str(obj)], timeout)
    sources = []
    for name, body in c_sources.items():
        path = out_dir / name
        path.write_text(body)
        sources.append(str(path))
    exe = out_dir / "program"
    _run([*(cc or (tools.cc,)), "-O1", "-ffp-contract=off", *sources, str(obj), "-o", str(exe), "-lm"], timeout)
    return exe


def _run(cmd: list[str], timeout: float) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise ToolchainError(f"{Path(cmd[0]).name} failed: {done.stderr.strip()[:2000]}")
