"""A stencil program distributed over MPI ranks by xDSL, built and run with ``mpirun``, against the reference.

:func:`mpi_module` takes the program to xDSL's MPI form: its fields become the function's arguments
(``stencil.cast`` folded into the argument types), ``distribute-stencil{strategy=2d-grid slices=R,1}`` cuts the
domain along ``i`` into ``R`` parts and adds the halo exchanges (``dmp.swap``), ``shape-inference``,
``canonicalize-dmp``, ``stencil-bufferize``, ``dmp-to-mpi{mpi_init=false}`` (MPI calls; the driver
initialises MPI), ``convert-stencil-to-ll-mlir`` and ``lower-mpi`` (calls to MPICH's C interface).

:func:`run_mpi` builds that module with ``mlir-opt``/``mlir-translate``/``llc`` and ``mpicc`` and runs it with
``mpirun -np R``. Each rank holds fields of the program's bounds in *its own* coordinates (rank ``r``'s point
``x`` is the global point ``x + r * L`` along ``i``, ``L`` the local extent). The driver fills a rank's fields
with the global values only on the rows it owns and on the global halo (outside the global domain); every
other row is NaN, so a value that the halo exchange does not bring makes the output wrong. Each rank writes
the rows of the stored fields it owns; :func:`run_mpi` assembles them, and
:func:`polylab.stencil.check.check_mpi` judges them against the reference
interpreter's run of the whole program (the toolchain's judge: bit for bit, vacuity refused).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.func import FuncOp
from xdsl.dialects.stencil import CastOp
from xdsl.rewriter import Rewriter

from polylab.errors import ToolchainError
from polylab.stencil.errors import StencilError
from polylab.stencil.passes import pipeline, reparsed
from polylab.stencil.program import Program, box_of, context, parse_module, print_module

#: xDSL's passes from a program whose fields are arguments to loops with MPI calls (``{ranks}``: along ``i``)
MPI_SPEC = ("distribute-stencil{{strategy=2d-grid slices={ranks},1}},shape-inference,canonicalize-dmp,"
            "stencil-bufferize,dmp-to-mpi{{mpi_init=false}},convert-stencil-to-ll-mlir")

#: the MLIR runtime's memref copy, which the lowered halo exchange calls (MLIR's C runner library is not needed)
MEMREF_COPY = r"""
#include <stdint.h>
#include <string.h>
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


def mpi_tools() -> tuple[bool, str]:
    """Whether ``mpicc`` and ``mpirun`` (and the MLIR tools) are here, with what is missing."""
    from polylab.toolchain.mlirbuild import mlir_tools

    missing = [n for n in ("mpicc", "mpirun") if shutil.which(n) is None]
    tools, reason = mlir_tools()
    if missing:
        return False, f"{', '.join(missing)} not found (Debian: apt-get install mpich libmpich-dev)"
    return (tools is not None), reason


def fields_as_arguments(program: Program) -> Program:
    """The program with each ``stencil.cast`` folded into its argument's type (xDSL's distribution works on
    functions whose arguments are fields with bounds)."""
    module = program.module.clone()
    for func in [op for op in module.walk() if isinstance(op, FuncOp)]:
        for cast in [op for op in func.walk() if isinstance(op, CastOp)]:
            new_arg = Rewriter.replace_value_with_new_type(cast.field, cast.result.type)
            cast.result.replace_all_uses_with(new_arg)
            cast.detach()
            cast.erase()
        func.update_function_type()
    return reparsed(module, program.filename)


def mpi_module(program: Program, ranks: int) -> str:
    """The MLIR text of the program distributed over ``ranks`` ranks along ``i``, with MPICH calls."""
    module = fields_as_arguments(program).module.clone()
    ctx = context()
    try:
        for p in pipeline(MPI_SPEC.format(ranks=ranks)):
            p.apply(ctx, module)
        fresh, _ = parse_module(print_module(module))    # lower-mpi needs a freshly parsed module
        for p in pipeline("lower-mpi"):
            p.apply(ctx, fresh)
        fresh.verify()
    except Exception as exc:  # xDSL's distribution passes failing on this program: say so
        raise StencilError(f"xDSL's MPI pipeline refused the program: {str(exc).splitlines()[0][:300]}",
                           hint="the distribution handles programs whose domain splits evenly along i") from None
    return print_module(fresh)


def _driver(program: Program, ranks: int, local: int, name: str) -> str:
    """The C main of each rank (see the module)."""
    lines = ["#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <mpi.h>", ""]
    params, args, setup, dump = [], [], [], []
    fields = [(n, box_of(v.type)) for n, v in fields_as_arguments(program).arguments()]
    outputs = set(program.output_fields())
    store = program.stores[0]
    lo_i, hi_i = list(store.bounds.lb)[0], list(store.bounds.ub)[0]
    for k, (n, box) in enumerate(fields):
        if box is None:
            raise StencilError(f"the argument {n} is not a field with bounds: the MPI build supports fields only")
        shape = [hi - lo for lo, hi in zip(*box)]
        total = int(np.prod(shape))
        rows = int(np.prod(shape[1:]))
        strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
        params.append(", ".join(["double*", "double*", "long"] + ["long"] * (2 * len(shape))))
        args.append(", ".join([f"a{k}", f"a{k}", "0"] + [str(s) for s in shape] + [str(s) for s in strides]))
        setup.append(f"""  double *g{k} = malloc(sizeof(double) * {total}), *a{k} = malloc(sizeof(double) * {total});
  FILE *f{k} = fopen("{n}.bin", "rb"); if (!f{k} || fread(g{k}, sizeof(double), {total}, f{k}) != {total}) return 2;
  fclose(f{k});
  for (long r = 0; r < {shape[0]}; r++) {{
    long x = r + ({box[0][0]}), gx = x + rank * {local}, gr = gx - ({box[0][0]});
    int owned = x >= {lo_i} && x < {lo_i} + {local}, halo = gx < {lo_i} || gx >= {hi_i};
    for (long c = 0; c < {rows}; c++)
      a{k}[r * {rows} + c] = (gr >= 0 && gr < {shape[0]} && (owned || halo)) ? g{k}[gr * {rows} + c] : NAN;
  }}""")
        if n in outputs:
            dump.append(f"""  sprintf(path, "{n}.{{rank}}.out"); {{ FILE *o = fopen(path, "wb");
    fwrite(a{k} + ({lo_i} - ({box[0][0]})) * {rows}, sizeof(double), {local} * {rows}, o); fclose(o); }}""".replace(
                "{rank}", "%d").replace('.out");', '.out", rank);'))
    lines.append(f"void {name}({', '.join(params)});")
    lines += ["int main(int argc, char **argv) {", "  int rank; char path[256];", "  MPI_Init(&argc, &argv);",
              "  MPI_Comm_rank(MPI_COMM_WORLD, &rank);"]
    lines += setup
    lines.append(f"  {name}({', '.join(args)});")
    lines += dump
    lines += ["  MPI_Finalize();", "  return 0;", "}"]
    return "\n".join(lines) + "\n" + MEMREF_COPY


def run_mpi(program: Program, ranks: int, fields: dict[str, Any], *, timeout: float = 300.0) -> dict[str, np.ndarray]:
    """The stored fields after the program distributed over ``ranks`` ranks and run with ``mpirun``."""
    from polylab.toolchain.mlirbuild import build_mlir

    store = program.stores[0]
    extent = list(store.bounds.ub)[0] - list(store.bounds.lb)[0]
    if extent % ranks:
        raise StencilError(f"the domain's {extent} points along i do not split evenly over {ranks} ranks",
                           hint=f"choose a number of ranks that divides {extent}")
    local = extent // ranks
    text = mpi_module(program, ranks)
    with tempfile.TemporaryDirectory(prefix="polylab-mpi-") as tmp:
        out = Path(tmp)
        for name, data in fields.items():
            np.ascontiguousarray(data, dtype=np.float64).tofile(out / f"{name}.bin")
        exe = build_mlir(text, {"driver.c": _driver(program, ranks, local, program.name)}, out, cc=("mpicc",))
        done = subprocess.run(["mpirun", "-np", str(ranks), str(exe)], cwd=tmp, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode != 0:
            raise ToolchainError(f"mpirun -np {ranks} failed with status {done.returncode}: {done.stderr[-800:]}")
        result = {}
        for name in program.output_fields():
            full = np.array(fields[name], dtype=np.float64, copy=True)
            lb = [a for a in (box_of(v.type) for n, v in fields_as_arguments(program).arguments() if n == name)][0][0]
            for r in range(ranks):
                part = np.fromfile(out / f"{name}.{r}.out", dtype=np.float64)
                start = list(store.bounds.lb)[0] + r * local - lb[0]
                full[start:start + local] = part.reshape((local,) + full.shape[1:])
            result[name] = full
        return result
