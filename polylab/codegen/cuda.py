"""CUDA: sequential schedule dimensions on the host, parallel loop nests as ``__global__`` kernels.

The loop program is split at its outermost parallel loops. Everything above them (the wave loop of a
wavefront, the tile-wave loop of a tiled wavefront, ``if`` guards) runs on the host; each outermost
parallel loop becomes one kernel launched once per host iteration (one launch per step). When the body of
that loop is itself a parallel loop whose bounds do not depend on the outer one, the two are mapped to a
2-D grid (inner loop on ``x``, for coalesced accesses); otherwise to a 1-D grid. Thread ``t`` of the grid
runs iteration ``lb + t * stride`` and returns when that is past the upper bound (the bounds guard); the
rest of the loop body runs sequentially inside the thread. A part of the program that contains no parallel
loop runs as a single-thread kernel, so all data stays on the device.

Arrays live on the device as flat row-major buffers; ``A[i][j]`` prints as ``A[(i) * (size_t)(N) + (j)]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polylab.codegen import ast as A
from polylab.codegen.c import CPrinter, for_header
from polylab.codegen.cexpr import CUDA_HELPERS, c_expr
from polylab.codegen.harness import (dump_function, flat_index, init_function, kernel_arrays, main_prologue,
                                     prelude, size_expr)
from polylab.errors import CodegenError
from polylab.model.expr import ArrayRef
from polylab.model.scop import Scop

BLOCK_1D = 256
BLOCK_2D = (32, 8)


def _bounds(f: A.For) -> tuple[A.AExpr, A.AExpr] | None:
    """``(lower, upper inclusive)`` of a loop whose condition is ``it <= ub`` or ``it < ub``."""
    c = f.cond
    if isinstance(c, A.Op) and c.op in ("le", "lt") and c.args[0] == A.Id(f.iterator):
        ub = c.args[1]
        if c.op == "lt":
            ub = A.offset(ub, -1)
        return f.init, ub
    return None


def _has_parallel(n: A.Node) -> bool:
    return any(isinstance(x, A.For) and x.parallel and _bounds(x) is not None for x in A.nodes(n))


@dataclass
class _Kernels:
    scop: Scop
    defs: list[str] = field(default_factory=list)
    count: int = 0

    def array_ref(self, ref: ArrayRef, p) -> str | None:  # noqa: ANN001
        arr = self.scop.array(ref.array)
        if arr.rank <= 1:
            return None
        return f"{ref.array}[{flat_index(arr, [p(i) for i in ref.indices])}]"

    def kernel_params(self, host_iters: list[str], extra: list[str]) -> tuple[str, str]:
        scop = self.scop
        decl = [f"int {p}" for p in scop.parameters] + [f"int {it}" for it in host_iters] + [
            f"int {e}" for e in extra] + [f"{s.ctype} {s.name}" for s in scop.scalars] + [
            f"{a.ctype} *__restrict__ {a.name}" for a in kernel_arrays(scop)]
        args = [*scop.parameters, *host_iters, *extra, *(s.name for s in scop.scalars),
                *(a.name for a in kernel_arrays(scop))]
        return ", ".join(decl), ", ".join(args)

    def body(self, node: A.Node, depth: int) -> list[str]:
        printer = CPrinter(self.scop, array_ref=self.array_ref)
        text = printer.print(node, depth)
        return text.splitlines()

    def sequential(self, node: A.Node, host_iters: list[str]) -> list[str]:
        """A single-thread kernel for a part without parallel loops; returns the host launch."""
        name = f"kernel{self.count}"
        self.count += 1
        decl, args = self.kernel_params(host_iters, [])
        self.defs.append("\n".join([
            f"/* sequential part: one thread */", f"__global__ void {name}({decl})", "{",
            *self.body(node, 1), "}"]))
        return [f"{name}<<<1, 1>>>({args});"]

    def parallel(self, f: A.For, host_iters: list[str]) -> list[str]:
        """A grid for the parallel loop ``f`` (and a parallel loop directly inside it); the launch."""
        name = f"kernel{self.count}"
        k = self.count
        self.count += 1
        lb0, ub0 = _bounds(f)  # type: ignore[misc]
        inner = f.body
        two_d = (isinstance(inner, A.For) and inner.parallel and not inner.degenerate
                 and _bounds(inner) is not None
                 and f.iterator not in A.expr_ids(inner.init) | A.expr_ids(inner.cond))
        host = [f"{{ /* parallel loop {f.iterator} -> {'y' if two_d else 'x'} */",
                f"  int lb{k}_0 = {c_expr(lb0)}, ub{k}_0 = {c_expr(ub0)};"]
        extra = [f"lb{k}_0", f"ub{k}_0"]
        if two_d:
            assert isinstance(inner, A.For)
            lb1, ub1 = _bounds(inner)  # type: ignore[misc]
            host.append(f"  int lb{k}_1 = {c_expr(lb1)}, ub{k}_1 = {c_expr(ub1)};")
            extra += [f"lb{k}_1", f"ub{k}_1"]
            bx, by = BLOCK_2D
            host += [f"  if (ub{k}_0 >= lb{k}_0 && ub{k}_1 >= lb{k}_1) {{",
                     f"    unsigned n0 = (unsigned)((ub{k}_0 - lb{k}_0) / {f.inc} + 1);",
                     f"    unsigned n1 = (unsigned)((ub{k}_1 - lb{k}_1) / {inner.inc} + 1);",
                     f"    dim3 block({bx}, {by});",
                     f"    dim3 grid((n1 + {bx - 1}) / {bx}, (n0 + {by - 1}) / {by});"]
        else:
            host += [f"  if (ub{k}_0 >= lb{k}_0) {{",
                     f"    unsigned n0 = (unsigned)((ub{k}_0 - lb{k}_0) / {f.inc} + 1);",
                     f"    dim3 block({BLOCK_1D});",
                     f"    dim3 grid((n0 + {BLOCK_1D - 1}) / {BLOCK_1D});"]
        decl, args = self.kernel_params(host_iters, extra)
        host += [f"    {name}<<<grid, block>>>({args});", "  }", "}"]
        axis0 = "y" if two_d else "x"
        kbody = [f"  int {f.iterator} = lb{k}_0 + (int)(blockIdx.{axis0} * blockDim.{axis0} + "
                 f"threadIdx.{axis0}){' * ' + str(f.inc) if f.inc != 1 else ''};",
                 f"  if ({f.iterator} > ub{k}_0) return;"]
        body: A.Node = f.body
        if two_d:
            assert isinstance(inner, A.For)
            kbody += [f"  int {inner.iterator} = lb{k}_1 + (int)(blockIdx.x * blockDim.x + threadIdx.x)"
                      f"{' * ' + str(inner.inc) if inner.inc != 1 else ''};",
                      f"  if ({inner.iterator} > ub{k}_1) return;"]
            body = inner.body
        self.defs.append("\n".join([
            f"/* parallel loop{'s' if two_d else ''} {f.iterator}"
            f"{', ' + inner.iterator if two_d else ''}: one thread per iteration */",  # type: ignore[union-attr]
            f"__global__ void {name}({decl})", "{", *kbody, *self.body(body, 1), "}"]))
        return host

    def host(self, node: A.Node, host_iters: list[str], depth: int) -> list[str]:
        pad = "  " * depth
        if not _has_parallel(node):
            return [pad + ln for ln in self.sequential(node, host_iters)]
        match node:
            case A.Block(children=cs):
                out = []
                for c in cs:
                    out += self.host(c, host_iters, depth)
                return out
            case A.For(parallel=True) if _bounds(node) is not None:
                return [pad + ln for ln in self.parallel(node, host_iters)]
            case A.For(degenerate=True):
                return ([f"{pad}{{ const int {node.iterator} = {c_expr(node.init)};"]
                        + self.host(node.body, host_iters + [node.iterator], depth + 1) + [f"{pad}}}"])
            case A.For():
                return ([f"{pad}{for_header(node)} {{"]
                        + self.host(node.body, host_iters + [node.iterator], depth + 1) + [f"{pad}}}"])
            case A.If(cond=c, then=t, other=o):
                out = [f"{pad}if ({c_expr(c)}) {{"] + self.host(t, host_iters, depth + 1)
                if o is not None:
                    out += [f"{pad}}} else {{"] + self.host(o, host_iters, depth + 1)
                return out + [f"{pad}}}"]
        raise CodegenError(f"cannot map {type(node).__name__} to CUDA")


CUDA_INCLUDES = "#include <cuda_runtime.h>\n"

CUDA_CHECK = r"""
#define POLYLAB_CUDA(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error: %s (%s) at line %d\n", cudaGetErrorString(e_), #call, __LINE__); \
  exit(POLYLAB_EXIT_CUDA); } } while (0)
"""


def cuda_program(scop: Scop, program: A.LoopProgram, header: str) -> tuple[str, str]:
    """``(kernels and host function, complete program)`` for CUDA."""
    if any(a.rank == 0 for a in scop.arrays):
        raise CodegenError("the CUDA target does not support scalars written in the region",
                           hint="use the c or openmp target, or make the scalar a one-element array")
    ks = _Kernels(scop)
    host = ks.host(program.root, [], 1)
    sig = ", ".join([f"int {p}" for p in scop.parameters]
                    + [f"{a.ctype} *{a.name}" for a in kernel_arrays(scop)])
    host_fn = f"static void kernel({sig or 'void'})\n{{\n" + "\n".join(host) + "\n}\n"
    kernel = "\n\n".join(ks.defs) + "\n\n" + host_fn
    main = _cuda_main(scop)
    full = "\n".join([header, CUDA_INCLUDES + prelude(scop, cuda=True), CUDA_HELPERS, CUDA_CHECK, kernel,
                      init_function(scop, flat=True), dump_function(scop, flat=True),
                      main])
    return kernel, full


def _cuda_main(scop: Scop) -> str:
    arrays = kernel_arrays(scop)
    lines = main_prologue(scop)
    for a in arrays:
        size = f"sizeof({a.ctype}) * {size_expr(a)}"
        lines += [f"  size_t polylab_bytes_{a.name} = {size} + 1;",
                  f"  {a.ctype} *{a.name} = ({a.ctype} *)polylab_alloc(polylab_bytes_{a.name}, \"{a.name}\");",
                  f"  {a.ctype} *polylab_d_{a.name};",
                  f"  POLYLAB_CUDA(cudaMalloc((void **)&polylab_d_{a.name}, polylab_bytes_{a.name}));"]
    host_args = ", ".join([*scop.parameters, *(a.name for a in arrays)])
    dev_args = ", ".join([*scop.parameters, *(f"polylab_d_{a.name}" for a in arrays)])
    lines += ["  (void)polylab_now;  /* CUDA events time the kernel */",
              "  cudaEvent_t polylab_start, polylab_stop;",
              "  POLYLAB_CUDA(cudaEventCreate(&polylab_start));",
              "  POLYLAB_CUDA(cudaEventCreate(&polylab_stop));",
              "  for (int polylab_r = 0; polylab_r < polylab_repeat; polylab_r++) {",
              f"    polylab_init({host_args});"]
    for a in arrays:
        lines.append(f"    POLYLAB_CUDA(cudaMemcpy(polylab_d_{a.name}, {a.name}, polylab_bytes_{a.name}, "
                     "cudaMemcpyHostToDevice));")
    lines += ["    POLYLAB_CUDA(cudaEventRecord(polylab_start));",
              f"    kernel({dev_args});",
              "    POLYLAB_CUDA(cudaGetLastError());",
              "    POLYLAB_CUDA(cudaEventRecord(polylab_stop));",
              "    POLYLAB_CUDA(cudaEventSynchronize(polylab_stop));",
              "    float polylab_ms = 0.0f;",
              "    POLYLAB_CUDA(cudaEventElapsedTime(&polylab_ms, polylab_start, polylab_stop));",
              "    polylab_report_time(polylab_ms * 1e-3);",
              "  }"]
    for a in arrays:
        lines.append(f"  POLYLAB_CUDA(cudaMemcpy({a.name}, polylab_d_{a.name}, polylab_bytes_{a.name}, "
                     "cudaMemcpyDeviceToHost));")
    lines.append(f"  polylab_write_outputs({host_args});")
    for a in arrays:
        lines += [f"  cudaFree(polylab_d_{a.name});", f"  free({a.name});"]
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"
