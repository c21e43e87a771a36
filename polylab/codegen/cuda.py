"""CUDA: sequential schedule dimensions on the host, parallel nests as ``__global__`` kernels, and the same
kernels run on the CPU (:func:`cuda_emulation`) so that their index arithmetic is verified without a GPU.

The loop program is split at its outermost parallel loops. Everything above them (the wave loop of a
wavefront, the time loop of a stencil, ``if`` guards) runs on the host; each parallel nest becomes one
kernel launched once per host iteration, mapped by :mod:`polylab.codegen.gpumap` (all its parallel loops on
the grid, thread x on the loop that drives the stride-1 subscripts, a range per loop with bounds guards,
the block shape chosen at run time by ``polylab_block_shape``). A parallel loop whose body holds several
nests is distributed over them first (legal: a parallel loop carries no dependence, so all of one part
for every iteration, then the next part, keeps every dependence inside an iteration in order). A part of
the program without a parallel loop runs as a single-thread kernel so that all data stays on the device;
when that is the whole program the code says so ("this schedule has no parallel loop: the GPU would run it
on one thread").

Launch overhead, chosen at run time by the number of waves. A host loop whose body is one parallel nest
(the waves of a wavefront) with more than ``POLYLAB_PERSISTENT_WAVES`` iterations runs as one *cooperative*
kernel when the device supports it: as many blocks as can be resident, the grid's threads sharing each
wave's points (``POLYLAB_FOR_GRID``) and meeting at a grid-wide barrier after each wave. Otherwise every
launch goes through ``POLYLAB_LAUNCH`` on one stream; the harness first runs the host function in
*counting* mode (no launch), and when it makes more than :data:`GRAPH_LAUNCHES` launches (and no
cooperative one) they are captured once into a CUDA graph and each timed run is one ``cudaGraphLaunch``
(the host loop, the bounds and the block shapes are computed once, at capture). The choice is printed
(``polylab-gpu launches <n> graph <0|1>``).

Tiles. A parallel nest whose body holds parallel loops (a tile-level wavefront after
:func:`polylab.codegen.gpuschedule.wave_inside_tiles`) gets one block per point (tile); the block's threads
share each inner parallel nest (``POLYLAB_FOR_THREADS``) with ``__syncthreads()`` after it, and work outside
those loops runs on thread 0.

Arrays live on the device as flat row-major buffers; ``A[i][j]`` prints as ``A[(i) * (size_t)(N) + (j)]``.

The CPU emulation is the same text (kernels, host function, index arithmetic, block shapes) compiled as C
with a prelude that defines ``dim3``, ``blockIdx``, ``threadIdx``, ... and a ``POLYLAB_LAUNCH`` that runs
every block and every thread of the grid in order (block z, y, x, then thread z, y, x). Threads of one
launch never depend on one another (a parallel nest), so any order is a valid execution of the launch, and
a guard or index that is off by one shows up as a difference from the original program. Where threads
meet at a barrier (a tile's block, a cooperative kernel's grid) the emulation runs every thread's share of
the loop before the barrier in turn, which is what the barrier guarantees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polylab.codegen import ast as A
from polylab.codegen import gpumap as G
from polylab.codegen.c import CPrinter, for_header
from polylab.codegen.cexpr import C_HELPERS, CUDA_HELPERS, c_expr
from polylab.codegen.harness import (c_program, dump_function, flat_index, init_function, kernel_arrays,
                                     kernel_signature, main_prologue, prelude, size_expr)
from polylab.errors import CodegenError
from polylab.model.expr import ArrayRef
from polylab.model.scop import Scop

__all__ = ["COPY_VARIABLE", "CUDA_CHECK", "CUDA_INCLUDES", "EMULATION_PRELUDE", "GRAPH_LAUNCHES", "NO_PARALLEL_LOOP",
           "GpuProgram", "cuda_emulation_program", "cuda_program", "gpu_program"]

#: what the code and the bench say about a schedule with no parallel loop on the CUDA target
NO_PARALLEL_LOOP = "this schedule has no parallel loop: the GPU would run it on one thread"
#: more launches than this: capture them into a CUDA graph
GRAPH_LAUNCHES = 32

_HOST_NAME = {"cuda": "kernel", "emulate": "polylab_gpu_host"}


def _has_parallel(n: A.Node) -> bool:
    return any(isinstance(x, A.For) and x.parallel and G.bounds(x) is not None for x in A.nodes(n))


def _unwrap(n: A.Node) -> A.Node:
    while isinstance(n, A.Block) and len(n.children) == 1:
        n = n.children[0]
    return n


def _decompose(loops: list[int], idx: str, prefix: str = "polylab_n") -> dict[int, str]:
    """``idx`` split row-major over the extents ``<prefix><j>`` of ``loops`` (the first one fastest)."""
    value: dict[int, str] = {}
    div = ""
    for s, j in enumerate(loops):
        q = idx if not div else f"({idx} / ({div}))"
        value[j] = q if s == len(loops) - 1 else f"{q} % {prefix}{j}"
        div = f"{prefix}{j}" if not div else f"{div} * {prefix}{j}"
    return value


def _coordinates(nest: G.GridNest, value: dict[int, str], leave: str, pad: str,
                 prefix: str = "polylab_lo") -> list[str]:
    """The nest's loop values from their offsets ``value``, in nest order, each followed by its bounds guard
    when its range is not exactly its bounds, and by the ``if`` conditions found inside it (``leave``:
    ``return`` or ``continue``)."""
    out = []
    for j, g in enumerate(nest.loops):
        f = g.loop
        out.append(f"{pad}const int {f.iterator} = {prefix}{j} + (int)({value[j]});")
        if not g.exact:
            out.append(f"{pad}if (!({f.iterator} >= {c_expr(f.init)} && {c_expr(f.cond)})) {leave};")
        for k, cond in nest.guards:
            if k == j:
                out.append(f"{pad}if (!({c_expr(cond)})) {leave};")
    return out


@dataclass
class _Kernels:
    scop: Scop
    defs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    count: int = 0
    parallel_kernels: int = 0

    def array_ref(self, ref: ArrayRef, p) -> str | None:  # noqa: ANN001
        arr = self.scop.array(ref.array)
        if arr.rank <= 1:
            return None
        return f"{ref.array}[{flat_index(arr, [p(i) for i in ref.indices])}]"

    def kernel_params(self, host_iters: list[str], extra: list[tuple[str, str]]) -> tuple[str, str]:
        scop = self.scop
        decl = [f"int {p}" for p in scop.parameters] + [f"int {it}" for it in host_iters] + [
            f"{t} {e}" for t, e in extra] + [f"{s.ctype} {s.name}" for s in scop.scalars] + [
            f"{a.ctype} *__restrict__ {a.name}" for a in kernel_arrays(scop)]
        args = [*scop.parameters, *host_iters, *(e for _, e in extra), *(s.name for s in scop.scalars),
                *(a.name for a in kernel_arrays(scop))]
        return ", ".join(decl), ", ".join(args)

    def body(self, node: A.Node, depth: int) -> list[str]:
        return CPrinter(self.scop, array_ref=self.array_ref).print(node, depth).splitlines()

    def sequential(self, node: A.Node, host_iters: list[str]) -> list[str]:
        """A single-thread kernel for a part without parallel loops; returns the host launch."""
        name = f"kernel{self.count}"
        self.count += 1
        decl, args = self.kernel_params(host_iters, [])
        self.notes.append(f"{name}: no parallel loop here: one thread")
        self.defs.append("\n".join([
            "/* sequential part: one thread */", f"__global__ void {name}({decl})", "{",
            *self.body(node, 1), "}"]))
        return [f"POLYLAB_LAUNCH({name}, polylab_dim3(1, 1, 1), polylab_dim3(1, 1, 1), ({args}));"]

    def parallel(self, f: A.For, host_iters: list[str]) -> list[str]:
        """The kernel of the parallel nest starting at ``f`` (its grid: :func:`gpumap.map_nest`); the
        host launch."""
        nest = G.map_nest(self.scop, f, host_iters)
        if nest is None:
            return self.sequential(f, host_iters)
        blocks = _has_parallel(nest.body)   # a tile: one block per point of the nest, threads inside
        name = f"kernel{self.count}"
        self.count += 1
        self.parallel_kernels += 1
        self.notes.append(f"{name}: {'blocks over ' if blocks else ''}{nest.describe()}; "
                          + ("threads over the parallel loops inside each block (block-wide barrier after each); "
                             if blocks else "") + nest.thread_x.reason())
        extra: list[tuple[str, str]] = []
        host = [f"{{ /* parallel nest {', '.join(g.loop.iterator for g in nest.loops)}: {nest.describe()} */"]
        for j, g in enumerate(nest.loops):
            host.append(f"  const int polylab_lo{j} = {c_expr(g.lower)};")
            host.append(f"  const long long polylab_n{j} = (long long)({c_expr(g.upper)}) - polylab_lo{j} + 1;")
            extra += [("int", f"polylab_lo{j}"), ("long long", f"polylab_n{j}")]
        index = {id(g): j for j, g in enumerate(nest.loops)}
        extent = {}
        for a in G.AXES:
            ext = " * ".join(f"polylab_n{index[id(g)]}" for g in nest.axis_loops(a)) or "1"
            extent[a] = ext
        positive = " && ".join(f"polylab_n{j} > 0" for j in range(len(nest.loops)))
        decl, args = self.kernel_params(host_iters, extra)
        if blocks:
            host += [f"  if ({positive}) {{",
                     f"    dim3 polylab_grid = polylab_blocks_of({extent['x']}, {extent['y']}, {extent['z']});",
                     f"    POLYLAB_LAUNCH_BLOCKS({name}, polylab_grid, polylab_dim3(POLYLAB_TILE_THREADS, 1, 1), "
                     f"({args}));", "  }", "}"]
            inner = self.block_body(nest.body, host_iters + [g.loop.iterator for g in nest.loops], 1)
            self.defs.append("\n".join([
                f"/* one block per point of {nest.describe()}; the block's threads share the parallel loops inside */",
                f"__global__ void {name}({decl})", "{", *self.thread_index(nest, index, extent, per_block=True),
                *inner, "}"]))
            return host
        host += [f"  if ({positive}) {{",
                 "    unsigned polylab_b[3];",
                 f"    polylab_block_shape({extent['x']}, {extent['y']}, {extent['z']}, POLYLAB_BLOCK_THREADS, "
                 "polylab_b);",
                 "    dim3 polylab_block = polylab_dim3(polylab_b[0], polylab_b[1], polylab_b[2]);",
                 f"    dim3 polylab_grid = polylab_grid_of({extent['x']}, {extent['y']}, {extent['z']}, polylab_b);",
                 f"    POLYLAB_LAUNCH({name}, polylab_grid, polylab_block, ({args}));", "  }", "}"]
        self.defs.append("\n".join([
            f"/* {nest.describe()}; thread x on {nest.thread_x.iterator} (stride-1 subscripts) */",
            f"__global__ void {name}({decl})", "{", *self.thread_index(nest, index, extent),
            *self.body(nest.body, 1), "}"]))
        return host

    def thread_index(self, nest: G.GridNest, index: dict[int, int], extent: dict[str, str], *,
                     per_block: bool = False) -> list[str]:
        """The kernel's first lines: the thread's (``per_block``: the block's) point of the nest, in nest order,
        with its guards."""
        out = []
        for a in nest.axes:
            idx = f"blockIdx.{a}" if per_block else f"(long long)blockIdx.{a} * blockDim.{a} + threadIdx.{a}"
            out.append(f"  const long long polylab_i{a} = {idx};")
            out.append(f"  if (polylab_i{a} >= {extent[a]}) return;")
        value: dict[int, str] = {}
        for a in nest.axes:
            value.update(_decompose([index[id(g)] for g in nest.axis_loops(a)], f"polylab_i{a}"))
        return out + _coordinates(nest, value, "return", "  ")

    def block_body(self, node: A.Node, outer: list[str], depth: int) -> list[str]:
        """What every thread of a block runs: the sequential loops of the tile, and each parallel nest inside
        them shared among the block's threads (a block-stride loop over its points, in the order that puts
        the stride-1 loop on consecutive threads), then a block-wide barrier (``__syncthreads``: every
        thread reaches it, the guards only skip points)."""
        pad = "  " * depth

        def one_thread(n: A.Node) -> list[str]:   # work outside the shared loops: thread 0, then a barrier
            return [f"{pad}if (POLYLAB_ONE_THREAD) {{", *self.body(n, depth + 1), f"{pad}}}",
                    f"{pad}__syncthreads();"]

        if not _has_parallel(node):
            return one_thread(node)
        match node:
            case A.Block(children=cs):
                return [ln for c in cs for ln in self.block_body(c, outer, depth)]
            case A.For(parallel=True) if G.bounds(node) is not None:
                nest = G.map_nest(self.scop, node, outer)
                if nest is None:
                    return one_thread(node)
                out = [f"{pad}{{ /* the block's threads over {', '.join(g.loop.iterator for g in nest.loops)} "
                       f"(consecutive threads: {nest.thread_x.iterator}) */"]
                out += self.shared_points(nest, "POLYLAB_FOR_THREADS", depth + 1)
                return out + [f"{pad}  __syncthreads();", f"{pad}}}"]
            case A.For(degenerate=True):
                return ([f"{pad}{{ const int {node.iterator} = {c_expr(node.init)};"]
                        + self.block_body(node.body, outer + [node.iterator], depth + 1) + [f"{pad}}}"])
            case A.For():
                return ([f"{pad}{for_header(node)} {{"]
                        + self.block_body(node.body, outer + [node.iterator], depth + 1) + [f"{pad}}}"])
            case A.If(cond=c, then=t, other=o):
                out = [f"{pad}if ({c_expr(c)}) {{"] + self.block_body(t, outer, depth + 1)
                if o is not None:
                    out += [f"{pad}}} else {{"] + self.block_body(o, outer, depth + 1)
                return out + [f"{pad}}}"]
        return one_thread(node)

    def shared_points(self, nest: G.GridNest, loop: str, depth: int) -> list[str]:
        """The points of ``nest`` shared among threads by ``loop`` (``POLYLAB_FOR_THREADS``: a block's,
        ``POLYLAB_FOR_GRID``: the grid's): its ranges, then the loop over their product (the stride-1 loop
        fastest, so consecutive threads take neighbouring points), each point's coordinates and guards
        (``continue``), and the body."""
        pad = "  " * depth
        order = sorted(range(len(nest.loops)), key=lambda j: (G.AXES.index(nest.loops[j].axis), nest.loops[j].slot))
        out = []
        for j, g in enumerate(nest.loops):
            out += [f"{pad}const int polylab_tlo{j} = {c_expr(g.lower)};",
                    f"{pad}const long long polylab_tn{j} = (long long)({c_expr(g.upper)}) - polylab_tlo{j} + 1;"]
        total = " * ".join(f"polylab_tn{j}" for j in order)
        positive = " && ".join(f"polylab_tn{j} > 0" for j in order)
        out.append(f"{pad}const long long polylab_tt = {positive} ? {total} : 0;")
        out.append(f"{pad}{loop}(polylab_t, polylab_tt) {{")
        value = _decompose(order, "polylab_t", prefix="polylab_tn")
        out += _coordinates(nest, value, "continue", pad + "  ", prefix="polylab_tlo")
        out += self.body(nest.body, depth + 1)
        return out + [f"{pad}}}"]

    def persistent(self, f: A.For, host_iters: list[str], depth: int) -> list[str] | None:
        """Waves ``f`` whose body is one parallel nest: when there are more than ``POLYLAB_PERSISTENT_WAVES``
        of them (and the device can), one cooperative kernel runs them all, its threads sharing each wave's
        points and meeting at a grid-wide barrier after each; else one launch per wave. None when ``f`` is
        not of that form."""
        inner = _unwrap(f.body)
        if f.degenerate or G.bounds(f) is None or f.inc != 1 or not (
                isinstance(inner, A.For) and inner.parallel and G.bounds(inner) is not None):
            return None
        nest = G.map_nest(self.scop, inner, host_iters + [f.iterator])
        if nest is None or _has_parallel(nest.body):
            return None
        name = f"kernel{self.count}"
        self.count += 1
        decl, args = self.kernel_params(host_iters, [])
        self.notes.append(f"{name}: the waves {f.iterator} in one cooperative kernel when there are more than "
                          f"POLYLAB_PERSISTENT_WAVES; each wave's points shared by the grid's threads, a grid-wide "
                          f"barrier after each wave; {nest.describe()}")
        self.defs.append("\n".join([
            f"/* waves {f.iterator}: one cooperative kernel, a grid-wide barrier after each wave */",
            f"__global__ void {name}({decl})", "{", f"  {for_header(f)} {{",
            *self.shared_points(nest, "POLYLAB_FOR_GRID", 2), "    POLYLAB_GRID_SYNC();", "  }", "}"]))
        lo, hi = G.bounds(f)  # type: ignore[misc]
        pad = "  " * depth
        addresses = ", ".join(f"(void *)&{a}" for a in args.split(", ")) if args else "NULL"
        plain = ([f"{pad}    {for_header(f)} {{"] + self.host(f.body, host_iters + [f.iterator], depth + 3)
                 + [f"{pad}    }}"])
        return [f"{pad}{{ /* waves {f.iterator}: many -> one cooperative kernel ({name}), few -> a launch each */",
                f"{pad}  const long long polylab_waves = (long long)({c_expr(hi)}) - ({c_expr(lo)}) + 1;",
                f"{pad}  if (polylab_waves > POLYLAB_PERSISTENT_WAVES && polylab_cooperative) {{",
                f"{pad}    void *polylab_args[] = {{{addresses}}};",
                f"{pad}    POLYLAB_COOPERATIVE({name}, polylab_args, ({args}));",
                f"{pad}  }} else {{", *plain, f"{pad}  }}", f"{pad}}}"]

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
            case A.For(parallel=True) if G.bounds(node) is not None and isinstance(_unwrap(node.body), A.Block) \
                    and _has_parallel(node.body):
                out = [f"{pad}/* parallel loop {node.iterator} distributed over its {len(_unwrap(node.body).children)}"
                       " parts (it carries no dependence) */"]
                for c in _unwrap(node.body).children:  # type: ignore[union-attr]
                    part = A.For(node.iterator, node.init, node.cond, node.inc, c, parallel=True, depth=node.depth)
                    out += self.host(part, host_iters, depth)
                return out
            case A.For(parallel=True) if G.bounds(node) is not None:
                return [pad + ln for ln in self.parallel(node, host_iters)]
            case A.For(parallel=False, degenerate=False) if (waves := self.persistent(node, host_iters, depth)):
                return waves
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


CUDA_INCLUDES = "#include <cuda_runtime.h>\n#include <cooperative_groups.h>\n"

CUDA_CHECK = r"""
#define POLYLAB_CUDA(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error: %s (%s) at line %d\n", cudaGetErrorString(e_), #call, __LINE__); \
  exit(POLYLAB_EXIT_CUDA); } } while (0)
"""

#: what both the CUDA program and its emulation define around the kernels
_COMMON_C = r"""
#ifndef POLYLAB_BLOCK_THREADS
#define POLYLAB_BLOCK_THREADS 256
#endif
POLYLAB_UNUSED static dim3 polylab_dim3(unsigned x, unsigned y, unsigned z) { dim3 d; d.x = x; d.y = y; d.z = z; return d; }
/* the grid that covers nx x ny x nz points with blocks of shape b; CUDA allows 65535 blocks on y and z */
#ifndef POLYLAB_PERSISTENT_WAVES
#define POLYLAB_PERSISTENT_WAVES 64
#endif
#ifndef POLYLAB_TILE_THREADS
#define POLYLAB_TILE_THREADS 64
#endif
/* one block per point of an nx x ny x nz nest */
POLYLAB_UNUSED static dim3 polylab_blocks_of(long long nx, long long ny, long long nz)
{
  if (nx > 2147483647LL || ny > 65535 || nz > 65535) {
    fprintf(stderr, "polylab: a grid of %lld x %lld x %lld blocks exceeds CUDA's limits\n", nx, ny, nz);
    exit(POLYLAB_EXIT_CUDA);
  }
  return polylab_dim3((unsigned)nx, (unsigned)ny, (unsigned)nz);
}
POLYLAB_UNUSED static dim3 polylab_grid_of(long long nx, long long ny, long long nz, const unsigned b[3])
{
  long long g[3] = {(nx + b[0] - 1) / b[0], (ny + b[1] - 1) / b[1], (nz + b[2] - 1) / b[2]};
  if (g[0] > 2147483647LL || g[1] > 65535 || g[2] > 65535) {
    fprintf(stderr, "polylab: a grid of %lld x %lld x %lld blocks exceeds CUDA's limits\n", g[0], g[1], g[2]);
    exit(POLYLAB_EXIT_CUDA);
  }
  return polylab_dim3((unsigned)g[0], (unsigned)g[1], (unsigned)g[2]);
}
"""

_CUDA_LAUNCH = r"""
static cudaStream_t polylab_stream;
POLYLAB_UNUSED static long long polylab_launches;
static int polylab_counting;
/* every launch: counted; made unless the harness only counts them */
#define POLYLAB_LAUNCH(k, grid, block, args) do { polylab_launches++; \
  if (!polylab_counting) k<<<(grid), (block), 0, polylab_stream>>> args; } while (0)
#define POLYLAB_LAUNCH_BLOCKS POLYLAB_LAUNCH
static int polylab_cooperative;   /* the device runs cooperative kernels (set by main) */
static int polylab_no_graph;      /* a cooperative launch was made: no CUDA graph */
/* as many blocks as can be resident at once (grid-wide barriers need all of them running) */
#define POLYLAB_COOPERATIVE(k, argv, args) do { polylab_launches++; polylab_no_graph = 1; \
  if (!polylab_counting) { int polylab_nb = 0, polylab_sm = 0, polylab_dev = 0; \
    POLYLAB_CUDA(cudaGetDevice(&polylab_dev)); \
    POLYLAB_CUDA(cudaDeviceGetAttribute(&polylab_sm, cudaDevAttrMultiProcessorCount, polylab_dev)); \
    POLYLAB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&polylab_nb, k, POLYLAB_BLOCK_THREADS, 0)); \
    POLYLAB_CUDA(cudaLaunchCooperativeKernel((void *)k, polylab_dim3(polylab_nb * polylab_sm, 1, 1), \
      polylab_dim3(POLYLAB_BLOCK_THREADS, 1, 1), argv, 0, polylab_stream)); } } while (0)
#define POLYLAB_FOR_GRID(t, n) \
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); t += (long long)gridDim.x * blockDim.x)
#define POLYLAB_GRID_SYNC() cooperative_groups::this_grid().sync()
/* the block's threads share the points 0 .. n-1 */
#define POLYLAB_FOR_THREADS(t, n) for (long long t = threadIdx.x; t < (n); t += blockDim.x)
#define POLYLAB_ONE_THREAD (threadIdx.x == 0)
"""

#: the CPU emulation of CUDA's execution model: every block, every thread, in order
EMULATION_PRELUDE = r"""
/* CPU emulation of the CUDA kernels below: the same text, every thread of a launch run in turn */
typedef struct { unsigned x, y, z; } dim3;
POLYLAB_UNUSED static dim3 blockIdx, threadIdx, blockDim, gridDim;
#define __global__ static
#define __device__
#define __restrict__ restrict
POLYLAB_UNUSED static long long polylab_launches;
#define POLYLAB_LAUNCH(k, grid, block, args) do { polylab_launches++; gridDim = (grid); blockDim = (block); \
  for (blockIdx.z = 0; blockIdx.z < gridDim.z; blockIdx.z++) \
  for (blockIdx.y = 0; blockIdx.y < gridDim.y; blockIdx.y++) \
  for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++) \
  for (threadIdx.z = 0; threadIdx.z < blockDim.z; threadIdx.z++) \
  for (threadIdx.y = 0; threadIdx.y < blockDim.y; threadIdx.y++) \
  for (threadIdx.x = 0; threadIdx.x < blockDim.x; threadIdx.x++) k args; } while (0)
/* a kernel with block-wide barriers: run block by block; at each shared loop every thread takes its share
   in turn (the barrier after it is then met: all threads have finished the loop) */
#define POLYLAB_LAUNCH_BLOCKS(k, grid, block, args) do { polylab_launches++; gridDim = (grid); blockDim = (block); \
  threadIdx.x = threadIdx.y = threadIdx.z = 0; \
  for (blockIdx.z = 0; blockIdx.z < gridDim.z; blockIdx.z++) \
  for (blockIdx.y = 0; blockIdx.y < gridDim.y; blockIdx.y++) \
  for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++) k args; } while (0)
#define POLYLAB_FOR_THREADS(t, n) \
  for (threadIdx.x = 0; threadIdx.x < blockDim.x; threadIdx.x++) \
    for (long long t = threadIdx.x; t < (n); t += blockDim.x)
#define POLYLAB_ONE_THREAD 1
/* a cooperative kernel: run once; at each wave every virtual thread of the grid takes its share in turn
   (the grid-wide barrier after it is then met) */
#define polylab_cooperative 1
#ifndef POLYLAB_EMULATED_BLOCKS
#define POLYLAB_EMULATED_BLOCKS 3
#endif
#define POLYLAB_COOPERATIVE(k, argv, args) do { polylab_launches++; (void)(argv); \
  gridDim = polylab_dim3(POLYLAB_EMULATED_BLOCKS, 1, 1); blockDim = polylab_dim3(POLYLAB_BLOCK_THREADS, 1, 1); \
  blockIdx = threadIdx = polylab_dim3(0, 0, 0); k args; } while (0)
#define POLYLAB_FOR_GRID(t, n) \
  for (long long polylab_vt = 0; polylab_vt < (long long)gridDim.x * blockDim.x; polylab_vt++) \
    for (long long t = polylab_vt; t < (n); t += (long long)gridDim.x * blockDim.x)
#define POLYLAB_GRID_SYNC() ((void)0)
#define __syncthreads() ((void)0)
"""


@dataclass(frozen=True)
class GpuProgram:
    """The kernels and host function of a loop program for ``mode`` ``'cuda'`` or ``'emulate'``, and the
    mapping notes (one per kernel; :data:`NO_PARALLEL_LOOP` first when no kernel is parallel)."""

    mode: str
    kernels: str
    host: str
    notes: tuple[str, ...]
    parallel_kernels: int

    @property
    def text(self) -> str:
        return self.kernels + "\n\n" + self.host

    @property
    def has_parallel_loop(self) -> bool:
        return self.parallel_kernels > 0


def gpu_program(scop: Scop, program: A.LoopProgram, mode: str = "cuda") -> GpuProgram:
    """The kernels and the host function that launches them (``mode``: ``'cuda'`` or ``'emulate'``; the
    texts are the same, only the host function's name differs)."""
    if any(a.rank == 0 for a in scop.arrays):
        raise CodegenError("the CUDA target does not support scalars written in the region",
                           hint="use the c or openmp target, or make the scalar a one-element array")
    ks = _Kernels(scop)
    host = ks.host(program.root, [], 1)
    sig = ", ".join([f"int {p}" for p in scop.parameters]
                    + [f"{a.ctype} *{a.name}" for a in kernel_arrays(scop)])
    host_fn = f"static void {_HOST_NAME[mode]}({sig or 'void'})\n{{\n" + "\n".join(host) + "\n}\n"
    notes = tuple(ks.notes)
    if ks.parallel_kernels == 0:
        notes = (NO_PARALLEL_LOOP,) + notes
    mapping = "/* GPU mapping:\n" + "\n".join(" * " + ln.replace("*/", "* /") for n in notes
                                              for ln in n.splitlines()) + "\n */"
    return GpuProgram(mode, mapping + "\n\n" + "\n\n".join(ks.defs), host_fn, notes, ks.parallel_kernels)


def cuda_program(scop: Scop, program: A.LoopProgram, header: str) -> tuple[str, str, tuple[str, ...]]:
    """``(kernels and host function, complete program, mapping notes)`` for CUDA."""
    gp = gpu_program(scop, program, "cuda")
    full = "\n".join([header, CUDA_INCLUDES + prelude(scop, cuda=True), CUDA_HELPERS, CUDA_CHECK, _COMMON_C,
                      G.BLOCK_SHAPE_C, _CUDA_LAUNCH, gp.text, init_function(scop, flat=True),
                      dump_function(scop, flat=True), _cuda_main(scop)])
    return gp.text, full, gp.notes


def cuda_emulation_program(scop: Scop, program: A.LoopProgram, header: str) -> tuple[str, str, tuple[str, ...]]:
    """``(kernels and host function, complete C program, mapping notes)``: the CUDA kernels and host code of
    :func:`cuda_program`, run on the CPU in the C harness (module text)."""
    gp = gpu_program(scop, program, "emulate")
    arrays = kernel_arrays(scop)
    call = ", ".join([*scop.parameters, *(f"({a.ctype} *){a.name}" for a in arrays)])
    wrapper = f"{kernel_signature(scop)}\n{{\n  {_HOST_NAME['emulate']}({call});\n}}\n"
    body = "\n".join([EMULATION_PRELUDE, _COMMON_C, G.BLOCK_SHAPE_C, gp.text, wrapper])
    return gp.text, c_program(scop, header, body, helpers=C_HELPERS), gp.notes


#: set in the environment, the harness also times a device-to-device copy of the arrays (bench's reference)
COPY_VARIABLE = "POLYLAB_GPU_COPY"


def _copy_bandwidth(arrays) -> list[str]:  # noqa: ANN001
    """With ``POLYLAB_GPU_COPY`` set: copy every array device to device (the same bytes the kernel's arrays
    hold) five times after one untimed copy, and print the fastest as ``polylab-gpu copy <bytes moved (read +
    written)> <seconds>``."""
    if not arrays:
        return []
    total = " + ".join(f"polylab_bytes_{a.name}" for a in arrays)
    # the largest array's bytes, one statement per array (text linear in the number of arrays)
    most = [f"    if (polylab_bytes_{a.name} > polylab_most) polylab_most = polylab_bytes_{a.name};" for a in arrays]
    copies = "".join(f"      POLYLAB_CUDA(cudaMemcpyAsync(polylab_scratch, polylab_d_{a.name}, polylab_bytes_{a.name}, "
                     "cudaMemcpyDeviceToDevice, polylab_stream));\n" for a in arrays)
    return [f"  if (getenv(\"{COPY_VARIABLE}\") != NULL) {{",
            "    void *polylab_scratch;",
            "    size_t polylab_most = 0;",
            *most,
            "    POLYLAB_CUDA(cudaMalloc(&polylab_scratch, polylab_most));",
            "    float polylab_best = -1.0f;",
            "    for (int polylab_c = 0; polylab_c < 6; polylab_c++) {",
            "      POLYLAB_CUDA(cudaEventRecord(polylab_start, polylab_stream));",
            copies.rstrip("\n"),
            "      POLYLAB_CUDA(cudaEventRecord(polylab_stop, polylab_stream));",
            "      POLYLAB_CUDA(cudaEventSynchronize(polylab_stop));",
            "      float polylab_ms = 0.0f;",
            "      POLYLAB_CUDA(cudaEventElapsedTime(&polylab_ms, polylab_start, polylab_stop));",
            "      if (polylab_c > 0 && (polylab_best < 0.0f || polylab_ms < polylab_best)) polylab_best = polylab_ms;",
            "    }",
            f"    printf(\"polylab-gpu copy %.0f %.9f\\n\", 2.0 * (double)({total}), polylab_best * 1e-3);",
            "    cudaFree(polylab_scratch);",
            "  }"]


def _cuda_main(scop: Scop) -> str:
    """``main``: allocate on host and device; count the launches once and capture them into a CUDA graph
    when there are more than :data:`GRAPH_LAUNCHES`; per run: initialise, copy in, time the kernels with
    CUDA events, report; copy out and write the outputs."""
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
              "  POLYLAB_CUDA(cudaStreamCreate(&polylab_stream));",
              "  { int polylab_dev = 0; POLYLAB_CUDA(cudaGetDevice(&polylab_dev));",
              "    POLYLAB_CUDA(cudaDeviceGetAttribute(&polylab_cooperative, cudaDevAttrCooperativeLaunch, polylab_dev)); }",
              "  polylab_counting = 1;",
              f"  kernel({dev_args});",
              "  polylab_counting = 0;",
              f"  const int polylab_graph = polylab_launches > {GRAPH_LAUNCHES} && !polylab_no_graph;",
              "  printf(\"polylab-gpu launches %lld graph %d\\n\", polylab_launches, polylab_graph);",
              "  cudaGraphExec_t polylab_exec = NULL;",
              "  if (polylab_graph) {",
              "    cudaGraph_t polylab_g;",
              "    POLYLAB_CUDA(cudaStreamBeginCapture(polylab_stream, cudaStreamCaptureModeThreadLocal));",
              f"    kernel({dev_args});",
              "    POLYLAB_CUDA(cudaStreamEndCapture(polylab_stream, &polylab_g));",
              "    POLYLAB_CUDA(cudaGraphInstantiate(&polylab_exec, polylab_g, 0));",
              "    POLYLAB_CUDA(cudaGraphDestroy(polylab_g));",
              "  }",
              "  cudaEvent_t polylab_start, polylab_stop;",
              "  POLYLAB_CUDA(cudaEventCreate(&polylab_start));",
              "  POLYLAB_CUDA(cudaEventCreate(&polylab_stop));",
              "  for (int polylab_r = 0; polylab_r < polylab_repeat; polylab_r++) {",
              f"    polylab_init({host_args});"]
    for a in arrays:
        lines.append(f"    POLYLAB_CUDA(cudaMemcpy(polylab_d_{a.name}, {a.name}, polylab_bytes_{a.name}, "
                     "cudaMemcpyHostToDevice));")
    lines += ["    POLYLAB_CUDA(cudaEventRecord(polylab_start, polylab_stream));",
              "    if (polylab_graph) POLYLAB_CUDA(cudaGraphLaunch(polylab_exec, polylab_stream));",
              f"    else kernel({dev_args});",
              "    POLYLAB_CUDA(cudaGetLastError());",
              "    POLYLAB_CUDA(cudaEventRecord(polylab_stop, polylab_stream));",
              "    POLYLAB_CUDA(cudaEventSynchronize(polylab_stop));",
              "    float polylab_ms = 0.0f;",
              "    POLYLAB_CUDA(cudaEventElapsedTime(&polylab_ms, polylab_start, polylab_stop));",
              "    polylab_report_time(polylab_ms * 1e-3);",
              "  }",
              "  POLYLAB_CUDA(cudaStreamSynchronize(polylab_stream));"]
    lines += _copy_bandwidth(arrays)
    for a in arrays:
        lines.append(f"  POLYLAB_CUDA(cudaMemcpy({a.name}, polylab_d_{a.name}, polylab_bytes_{a.name}, "
                     "cudaMemcpyDeviceToHost));")
    lines.append(f"  polylab_write_outputs({host_args});")
    lines.append("  if (polylab_exec != NULL) cudaGraphExecDestroy(polylab_exec);")
    for a in arrays:
        lines += [f"  cudaFree(polylab_d_{a.name});", f"  free({a.name});"]
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"
