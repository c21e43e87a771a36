"""Building MLIR text into a program and running it: ``mlir-opt`` (lowering to the LLVM dialect),
``mlir-translate`` (LLVM IR), ``llc`` of the same LLVM (an object file) and the C compiler or ``mpicc``
(linking with a C driver), then the program, or ``mpirun``. Knows nothing of stencils: it compiles text, runs
it on arrays and says why it cannot.

:func:`mlir_tools` finds the tools (Debian: ``mlir-19-tools`` and ``llvm-19``), :func:`mpi_tools` MPI's
(``mpich libmpich-dev``); :func:`mlir_opt_run` runs ``mlir-opt`` with a list of passes and returns its output
or its diagnostics (:func:`gpu_launch_forms`: the GPU dialect's two forms of parallel loops); :func:`build_mlir` lowers a module of ``func``/``scf``/``memref``/``arith``/``math``
operations to an object and links it with C sources; :func:`run_mlir` calls one function of such a module
on numpy arrays (each passed as a memref: MLIR's C calling convention expands a ``memref<...xf64>`` argument
into its descriptor ``allocated, aligned, offset, sizes..., strides...``) in one process or in each of
``mpirun``'s ranks, and returns the arrays after the call. The driver also supplies MLIR's runtime
``memrefCopy`` (:data:`MEMREF_COPY`: the lowered MPI halo exchanges call it), so MLIR's C runner library is not
needed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

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


def mpi_tools() -> tuple[bool, str]:
    """Whether ``mpicc`` and ``mpirun`` (and the MLIR tools) are here, with what is missing."""
    missing = [n for n in ("mpicc", "mpirun") if shutil.which(n) is None]
    if missing:
        return False, f"{', '.join(missing)} not found (Debian: apt-get install mpich libmpich-dev)"
    tools, reason = mlir_tools()
    return tools is not None, reason


def mlir_opt_run(text: str, passes: tuple[str, ...] | list[str], *, timeout: float = 120.0) -> str:
    """``mlir-opt PASSES`` on ``text``: its output, or a :class:`ToolchainError` with its diagnostics."""
    tool = mlir_opt()
    if tool is None:
        raise ToolchainError("mlir-opt is not installed", hint="apt-get install mlir-19-tools")
    done = subprocess.run([tool.path, *passes], input=text, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise ToolchainError(f"mlir-opt {' '.join(passes)} refused the text: {done.stderr.strip()[:2000]}")
    return done.stdout


def gpu_launch_forms(text: str, tile: Sequence[int], *, timeout: float = 120.0) -> tuple[str, str]:
    """The two forms of MLIR's GPU dialect ``mlir-opt`` makes of the ``scf.parallel`` loops of ``text``: the loops
    tiled into blocks of ``tile`` threads (guarded, constant tile bounds), mapped to blocks and threads and
    converted to a ``gpu.launch`` with the body inside (the inline form); then the kernel outlined to a
    ``gpu.func`` in a ``gpu.module``, started by ``gpu.launch_func`` (the function form)."""
    sizes = ",".join(map(str, tile))
    launch = mlir_opt_run(text, [f"--scf-parallel-loop-tiling=parallel-loop-tile-sizes={sizes} no-min-max-bounds=true",
                                 "--gpu-map-parallel-loops", "--convert-parallel-loops-to-gpu", "--canonicalize"],
                          timeout=timeout)
    return launch, mlir_opt_run(launch, ["--gpu-kernel-outlining"], timeout=timeout)


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


#: MLIR's runtime copy between two memrefs of any rank and layout (unranked descriptors), in C
MEMREF_COPY = r"""
typedef struct { int64_t rank; void *descriptor; } polylab_unranked;
void memrefCopy(int64_t size, polylab_unranked *src, polylab_unranked *dst) {
  int64_t rank = src->rank;
  char *sa = ((char **) src->descriptor)[1], *da = ((char **) dst->descriptor)[1];
  int64_t *sm = (int64_t *) ((char **) src->descriptor + 2), *dm = (int64_t *) ((char **) dst->descriptor + 2);
  int64_t *sizes = sm + 1, *ss = sm + 1 + rank, *ds = dm + 1 + rank, idx[8] = {0};
  for (int64_t d = 0; d < rank; d++) if (sizes[d] == 0) return;
  for (;;) {
    int64_t so = sm[0], doff = dm[0];
    for (int64_t d = 0; d < rank; d++) { so += idx[d] * ss[d]; doff += idx[d] * ds[d]; }
    memcpy(da + doff * size, sa + so * size, size);
    int64_t d = rank - 1;
    while (d >= 0 && ++idx[d] == sizes[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}
"""

_DRIVER_IO = r"""
static int rank = 0;
static double *load(int k, long n) {
  char path[64]; double *a = malloc(sizeof(double) * n); sprintf(path, "a%d.%d.bin", k, rank);
  FILE *f = fopen(path, "rb");
  if (!f || fread(a, sizeof(double), n, f) != (size_t) n) exit(2);
  fclose(f); return a;
}
static void save(int k, const double *a, long n) {
  char path[64]; sprintf(path, "a%d.%d.out", k, rank); FILE *f = fopen(path, "wb");
  if (!f || fwrite(a, sizeof(double), n, f) != (size_t) n) exit(3);
  fclose(f);
}
"""


def _driver(function: str, arguments: Sequence[Any], mpi: bool) -> str:
    """A C main that reads each array argument (``a<k>.<rank>.bin``), calls ``function`` and writes the arrays
    back (``a<k>.<rank>.out``); scalars are passed as double literals."""
    params, args, setup, save = [], [], [], []
    for k, a in enumerate(arguments):
        if np.ndim(a) == 0:
            params.append("double")
            args.append(repr(float(a)))
            continue
        shape = np.shape(a)
        strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
        params.append(", ".join(["double*", "double*", "long"] + ["long"] * (2 * len(shape))))
        args.append(", ".join([f"a{k}", f"a{k}", "0", *map(str, shape), *map(str, strides)]))
        setup.append(f"  double *a{k} = load({k}, {np.size(a)});")
        save.append(f"  save({k}, a{k}, {np.size(a)});")
    start = ["  MPI_Init(&argc, &argv);", "  MPI_Comm_rank(MPI_COMM_WORLD, &rank);"] if mpi else []
    return "\n".join(["#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
                      *(["#include <mpi.h>"] if mpi else []), MEMREF_COPY, _DRIVER_IO,
                      f"void {function}({', '.join(params)});", "int main(int argc, char **argv) {", *start, *setup,
                      f"  {function}({', '.join(args)});", *save, *(["  MPI_Finalize();"] if mpi else []),
                      "  return 0;", "}"]) + "\n"


def run_mlir(text: str, function: str, arguments: Sequence[Any], *, ranks: int | None = None,
             timeout: float = 300.0) -> list[Any]:
    """The arguments after ``function`` of the module ``text`` ran on them (see the module): ``arguments``
    are float64 arrays (passed as memrefs) and floats; with ``ranks``, one list of arguments per rank, the
    program built with ``mpicc`` and run with ``mpirun -np ranks``, and one list of results per rank."""
    per_rank = list(arguments) if ranks else [arguments]
    with tempfile.TemporaryDirectory(prefix="polylab-mlir-") as tmp:
        out = Path(tmp)
        for r, args in enumerate(per_rank):
            for k, a in enumerate(args):
                if np.ndim(a):
                    np.ascontiguousarray(a, dtype=np.float64).tofile(out / f"a{k}.{r}.bin")
        exe = build_mlir(text, {"driver.c": _driver(function, per_rank[0], bool(ranks))}, out,
                         cc=("mpicc",) if ranks else ())
        command = ["mpirun", "-np", str(ranks), str(exe)] if ranks else [str(exe)]
        done = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise ToolchainError(f"{' '.join(command[:3]) if ranks else 'the MLIR program'} failed with status "
                                 f"{done.returncode}: {done.stderr[-800:]}")
        results = [[np.fromfile(out / f"a{k}.{r}.out").reshape(np.shape(a)) if np.ndim(a) else a
                    for k, a in enumerate(args)] for r, args in enumerate(per_rank)]
    return results if ranks else results[0]
