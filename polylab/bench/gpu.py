"""``polylab bench --target cuda``: kernels x schedules on the GPU, verified, timed with CUDA events, and
compared with the memory bandwidth of the same GPU.

For every case:

1. the schedule passes the one legality gate (:func:`polylab.bench.spec.prepare_variant`); an illegal one
   is reported ``illegal`` with the violated dependence;
2. the CUDA code is generated (:mod:`polylab.codegen.cuda`). A schedule without a parallel loop is reported
   ``sequential`` (:data:`~polylab.codegen.cuda.NO_PARALLEL_LOOP`) and not timed as a GPU variant;
3. the same kernels run on the CPU (:func:`polylab.codegen.cuda_emulation`) at the verification size and
   are compared bit for bit with the original program (``emulated``): the mapping's index arithmetic
   holds whether or not a GPU is here;
4. the program is compiled with nvcc (``-O3 --fmad=false``: no fused multiply-add, so results are bit for
   bit those of the original program compiled with ``gcc -O3 -ffp-contract=off``). Without a GPU the case
   stops here (``compiled``: not timed);
5. on a GPU: verified bit for bit at the verification size (:func:`polylab.experiment.verify`, target
   ``cuda``); then run at the timing size ``warmup + repeat`` times (CUDA events around the kernels only),
   its checksums compared with the original program's at the same size (``checksum``), and a
   device-to-device copy of its arrays timed in the same process (``copy_bandwidth``).

Effective bandwidth: ``moved_bytes / median time``, where ``moved_bytes`` counts, for every statement
instance, one element of each array it reads and one of each array it writes (the compulsory traffic of a
stencil whose neighbouring reads hit in cache: jacobi2d moves ``4 * 8 * (N - 2)^2`` bytes per time step).
The instance counts are exact (isl; a domain that is not a box at these parameters is counted point by point
when it has at most :data:`COUNT_LIMIT` points, else the bandwidth is not given). ``share`` is the effective
bandwidth over the copy's (bytes read + written by the copy / its time).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import islpy as isl

from polylab import render
from polylab import toolchain as tc
from polylab.bench.machine import detect_machine
from polylab.bench.spec import prepare_variant
from polylab.bench.sweep import Case, Kernel
from polylab.codegen import cuda_emulation, generate, original_program
from polylab.codegen.cuda import COPY_VARIABLE, NO_PARALLEL_LOOP
from polylab.codegen.harness import numpy_dtype
from polylab.errors import IllegalTransformationError, PolylabError
from polylab.experiment import check_params, verify
from polylab.experiment.verify import param_args
from polylab.frontend import parse
from polylab.model.scop import Scop
from polylab.version import __version__

__all__ = ["COUNT_LIMIT", "GPU_FLAGS", "GPU_TARGETS", "GpuReport", "GpuResult", "GpuTarget", "moved_bytes",
           "point_count", "run_gpu_bench", "run_gpu_case", "target_cases"]

#: flags of the timed CUDA build and of the original it is checked against (bit-exact with each other)
GPU_FLAGS: tuple[str, ...] = tuple(tc.FAST_FLAGS)
#: the most points a non-box domain is counted point by point for the bandwidth
COUNT_LIMIT = 2_000_000

SEQUENTIAL, COMPILED = "sequential", "compiled"


# -- bytes moved ----------------------------------------------------------------------------------------------
def point_count(s: isl.Set, params: Mapping[str, int]) -> int | None:
    """The number of points of ``s`` at ``params``, exactly: the volume of its bounding box when ``s`` is
    that box, else isl's count when the box holds at most :data:`COUNT_LIMIT` points; None otherwise."""
    for name, v in params.items():
        k = s.find_dim_by_name(isl.dim_type.param, name)
        if k >= 0:
            s = s.fix_val(isl.dim_type.param, k, isl.Val(str(int(v)), s.get_ctx()))
    if s.is_empty():
        return 0
    n = s.dim(isl.dim_type.set)
    lows, highs = [], []
    for d in range(n):
        lo, hi = s.dim_min(d), s.dim_max(d)
        if not (lo.is_cst() and hi.is_cst()):
            return None
        lows.append(int(lo.get_pieces()[0][1].get_constant_val().to_python()))
        highs.append(int(hi.get_pieces()[0][1].get_constant_val().to_python()))
    volume = 1
    for lo, hi in zip(lows, highs):
        volume *= hi - lo + 1
    names = ", ".join(f"x{d}" for d in range(n))
    cond = " and ".join(f"{lo} <= x{d} <= {hi}" for d, (lo, hi) in enumerate(zip(lows, highs))) or "true"
    box = isl.Set(f"{{ [{names}] : {cond} }}")
    flat = s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param)).reset_tuple_id()
    if box.is_subset(flat):
        return volume
    if volume <= COUNT_LIMIT:
        return int(flat.count_val().to_python())
    return None


def moved_bytes(scop: Scop, params: Mapping[str, int]) -> int | None:
    """``sum over statements S of |D_S| * (sum of the element sizes of the arrays S reads + of those it
    writes)``, each array once per instance (module text); None when an instance count is not known."""
    total = 0
    for stmt in scop.statements:
        count = point_count(stmt.domain.intersect_params(scop.context), params)
        if count is None:
            return None
        per = 0
        for kind in ("read", "write"):
            for name in sorted({a.array for a in stmt.accesses if a.kind == kind}):
                per += numpy_dtype(scop.array(name).ctype).itemsize
        total += count * per
    return total


# -- results --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GpuResult:
    """One case on the CUDA target. ``status``: ``verified`` (bit for bit at the verification size and by
    checksum at the timing size, then timed), ``unverified``, ``illegal``, ``error``, ``sequential`` (no
    parallel loop: not timed), ``compiled`` (no GPU here: compiled, emulated, not timed) or ``not run``."""

    case: Case
    status: str
    reason: str | None = None
    emulated: bool | None = None
    checksum: bool | None = None
    seconds: tc.Timing | None = None
    moved_bytes: int | None = None
    copy_bytes: float | None = None
    copy_seconds: float | None = None
    launches: int | None = None
    graph: bool | None = None
    notes: tuple[str, ...] = ()

    @property
    def bandwidth(self) -> float | None:
        """Effective bandwidth, bytes per second (module text)."""
        if self.seconds is None or self.moved_bytes is None or self.seconds.median <= 0:
            return None
        return self.moved_bytes / self.seconds.median

    @property
    def copy_bandwidth(self) -> float | None:
        if self.copy_bytes is None or not self.copy_seconds:
            return None
        return self.copy_bytes / self.copy_seconds

    @property
    def share(self) -> float | None:
        """Effective bandwidth over the device-to-device copy's, in the same process."""
        bw, copy = self.bandwidth, self.copy_bandwidth
        return None if bw is None or not copy else bw / copy

    def to_json(self) -> dict:
        out = self.case.to_json()
        out.update({"status": self.status, "reason": self.reason, "emulated": self.emulated,
                    "checksum": self.checksum,
                    "median_s": self.seconds.median if self.seconds else None,
                    "min_s": self.seconds.min if self.seconds else None,
                    "runs": list(self.seconds.runs) if self.seconds else [],
                    "moved_bytes": self.moved_bytes, "bandwidth_Bps": self.bandwidth,
                    "copy_bytes": self.copy_bytes, "copy_s": self.copy_seconds,
                    "copy_bandwidth_Bps": self.copy_bandwidth, "share_of_copy": self.share,
                    "launches": self.launches, "graph": self.graph, "mapping": list(self.notes)})
        return out


@dataclass(frozen=True)
class GpuReport:
    """Every case's result, the settings and the tools."""

    results: tuple[GpuResult, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    machine: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"polylab": __version__, "target": "cuda", "machine": dict(self.machine),
                "settings": dict(self.settings), "results": [r.to_json() for r in self.results],
                "seconds": round(self.seconds, 2)}

    def table(self) -> str:
        head = ("kernel", "variant", "status", "time", "GB/s", "copy GB/s", "share", "launches", "note")
        rows = []
        for r in self.results:
            t = r.seconds.median if r.seconds else None
            rows.append((r.case.kernel, r.case.label[:40], r.status,
                         f"{t * 1e3:.3f} ms" if t is not None else "-",
                         f"{r.bandwidth / 1e9:.0f}" if r.bandwidth else "-",
                         f"{r.copy_bandwidth / 1e9:.0f}" if r.copy_bandwidth else "-",
                         f"{r.share * 100:.0f} %" if r.share else "-",
                         "-" if r.launches is None else f"{r.launches}{' (graph)' if r.graph else ''}",
                         (r.reason or "")[:70]))
        return render.text_table(head, rows)

    def __str__(self) -> str:
        return self.table()


def _parse_gpu_lines(stdout: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "polylab-gpu":
            out[parts[1]] = parts[2:]
    return out


# -- one case -------------------------------------------------------------------------------------------------
@dataclass
class _References:
    """The original program's checksums at the timing size, per kernel (computed once)."""

    stdout: dict[tuple[str, tuple], str] = field(default_factory=dict)

    def get(self, kernel: Kernel, args: list[int], timeout: float) -> str:
        key = (kernel.name, tuple(args))
        if key not in self.stdout:
            binary = tc.compile(original_program(kernel.scop), flags=GPU_FLAGS)
            self.stdout[key] = tc.run(binary, args, timeout=timeout).stdout
        return self.stdout[key]


def run_gpu_case(kernel: Kernel, case: Case, *, repeat: int, warmup: int, timeout: float,
                 references: _References | None = None,
                 progress: Callable[[str], None] | None = None) -> GpuResult:
    """Steps 1-5 of the module text for one case."""
    progress = progress or (lambda _m: None)
    references = references or _References()
    try:
        progress("building the schedule")
        built = prepare_variant(kernel.scop, case.spec, detect_machine())
        code = generate(built.scop, built.schedule, "cuda")
    except IllegalTransformationError as err:
        return GpuResult(case, "illegal", reason=err.message)
    except PolylabError as err:
        return GpuResult(case, "error", reason=err.message)
    notes = code.notes
    if NO_PARALLEL_LOOP in notes:
        return GpuResult(case, SEQUENTIAL, reason=NO_PARALLEL_LOOP, notes=notes)
    try:
        progress("verifying the mapping on the CPU (emulation)")
        emu = verify(kernel.scop, built.schedule, "c", params=case.verify_params, timeout=timeout,
                     code=cuda_emulation(built.scop, built.schedule))
        emulated = emu.verified
        if emulated is False:
            return GpuResult(case, "unverified", reason=f"CPU emulation differs: {emu.first_difference}",
                             emulated=False, notes=notes)
        if not code.target.build_status():
            return GpuResult(case, "not run", reason=code.target.build_status().reason, emulated=emulated,
                             notes=notes)
        progress("compiling with nvcc")
        binary = code.target.compile(code, GPU_FLAGS)
        if not code.target.run_status():
            return GpuResult(case, COMPILED, reason=f"{code.target.run_status().reason}: compiled with nvcc and "
                             "verified by CPU emulation, not timed", emulated=emulated, notes=notes)
        return _on_gpu(kernel, case, built, code, binary, emulated, notes, repeat=repeat, warmup=warmup,
                       timeout=timeout, references=references, progress=progress)
    except PolylabError as err:
        return GpuResult(case, "error", reason=f"{type(err).__name__}: {err.message}", notes=notes)


def _on_gpu(kernel: Kernel, case: Case, built, code, binary: tc.Binary, emulated: bool | None,  # noqa: ANN001
            notes: tuple[str, ...], *, repeat: int, warmup: int, timeout: float, references: _References,
            progress: Callable[[str], None]) -> GpuResult:
    """Step 5: verify on the GPU, time, checksum, copy bandwidth."""
    progress("verifying on the GPU (bit for bit)")
    v = verify(kernel.scop, built.schedule, "cuda", params=case.verify_params, timeout=timeout, code=code)
    if v.verified is not True:
        status = "unverified" if v.verified is False else "not run"
        return GpuResult(case, status, reason=v.reason or f"differs: {v.first_difference}", emulated=emulated,
                         notes=notes)
    values = check_params(kernel.scop, case.params)
    args = param_args(kernel.scop, values)
    progress("timing on the GPU")
    run = tc.run(binary, [*args, warmup + repeat], timeout=timeout, env={COPY_VARIABLE: "1"})
    times = run.times[warmup:]
    if not times:
        return GpuResult(case, "error", reason="the program reported no kernel time", emulated=emulated, notes=notes)
    progress("checksums of the original program at the timing size")
    same = tc.compare_checksums(references.get(kernel, args, timeout), run.stdout).equal
    gpu = _parse_gpu_lines(run.stdout)
    copy = gpu.get("copy", [])
    launches = gpu.get("launches", [])
    status = "verified" if same else "unverified"
    return GpuResult(case, status, reason=None if same else "checksums differ from the original's at the timing size",
                     emulated=emulated, checksum=same, seconds=tc.Timing.from_runs(times, warmup=warmup),
                     moved_bytes=moved_bytes(kernel.scop, values),
                     copy_bytes=float(copy[0]) if len(copy) == 2 else None,
                     copy_seconds=float(copy[1]) if len(copy) == 2 else None,
                     launches=int(launches[0]) if launches else None,
                     graph=launches[2] == "1" if len(launches) >= 3 else None, notes=notes)


def run_gpu_bench(kernels: Sequence[Kernel], cases: Sequence[Case], *, repeat: int = 5, warmup: int = 1,
                  timeout: float = 600.0, settings: Mapping[str, Any] | None = None,
                  on_start: Callable[[Case], None] | None = None,
                  on_result: Callable[[GpuResult], None] | None = None,
                  progress: Callable[[str], None] | None = None) -> GpuReport:
    """Every case (module text), in order; nothing is printed."""
    t0 = time.perf_counter()
    by_name = {k.name: k for k in kernels}
    refs = _References()
    results = []
    for case in cases:
        if on_start:
            on_start(case)
        r = run_gpu_case(by_name[case.kernel], case, repeat=repeat, warmup=warmup, timeout=timeout,
                         references=refs, progress=progress)
        results.append(r)
        if on_result:
            on_result(r)
    machine = {"nvcc": str(tc.cuda_compiler() or None), "gpu": tc.gpu_status().reason or "present",
               "has_gpu": tc.has_gpu()}
    return GpuReport(tuple(results), dict(settings or {}), machine, time.perf_counter() - t0)


# -- the targets of issue 13 ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GpuTarget:
    """A measurement issue 13 asks for: kernel, schedule, timing and verification sizes, the goal."""

    kernel: str
    spec: str
    params: Mapping[str, int]
    verify_params: Mapping[str, int]
    goal: str


GPU_TARGETS: tuple[GpuTarget, ...] = (
    GpuTarget("heat3d.c", "{ S0[t,i,j,k] -> [t,0,i,j,k]; S1[t,i,j,k] -> [t,1,i,j,k] }", {"N": 256, "T": 50},
              {"N": 12, "T": 3}, "85 % of copy bandwidth or more (about 8 ms)"),
    GpuTarget("jacobi2d.c", "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }", {"N": 4000, "T": 100},
              {"N": 20, "T": 3}, "85 % of copy bandwidth or more"),
    GpuTarget("sweep2d.c", "wavefront; parallel", {"N": 8000}, {"N": 40}, "5 ms or less"),
    GpuTarget("sweep2d.c", "auto; tile_wavefront(32, 32)", {"N": 8000}, {"N": 40}, "5 ms or less"),
    GpuTarget("sl3_512.sy", "{ S0[i,j,k] -> [0,i,j,k]; S1[i,j,k] -> [1,i+j+k,i,j] }", {"n": 512}, {"n": 20},
              "4 ms or less"),
    GpuTarget("sl3_512.sy", "wavefront; parallel", {"n": 512}, {"n": 20}, "4 ms or less"),
    GpuTarget("sl3_512.sy", "fold_live_ins; wavefront; parallel", {"n": 512}, {"n": 20}, "4 ms or less"),
    GpuTarget("sl3_512.sy", "auto; tile_wavefront(32, 32)", {"n": 512}, {"n": 20}, "4 ms or less"),
)


def _sl3_512() -> Kernel:
    """sl3.sy with its array declared 512 x 512 x 512 (as the issue measured it at n = 512)."""
    from polylab.corpus import example_path

    path = example_path("sl3.sy")
    text = path.read_text()
    if "const int MAXN = 400;" not in text:
        raise PolylabError("sl3.sy no longer declares MAXN = 400", hint="update polylab.bench.gpu._sl3_512")
    scop = parse(text.replace("const int MAXN = 400;", "const int MAXN = 512;"), filename="sl3_512.sy").scop
    return Kernel("sl3_512.sy", str(path), scop)


def target_cases() -> tuple[list[Kernel], list[Case]]:
    """The kernels and cases of :data:`GPU_TARGETS`."""
    from polylab.bench.sweep import load_kernel

    kernels: dict[str, Kernel] = {}
    cases = []
    for t in GPU_TARGETS:
        if t.kernel not in kernels:
            kernels[t.kernel] = _sl3_512() if t.kernel == "sl3_512.sy" else load_kernel(t.kernel)
        cases.append(Case(t.kernel, t.spec, t.spec, None, None, dict(t.params), dict(t.verify_params), "cuda"))
    return list(kernels.values()), cases
