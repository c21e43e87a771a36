"""Running a sweep: each variant is verified against the original program before it is timed.

For every kernel the original program (the region's own text, compiled with ``gcc -O3``) is the
baseline: it is timed before the kernel's variants and again after them, and the runs of both are pooled,
so a busy moment of the machine does not bias every speedup of a kernel. With ``rounds > 1`` the timed
runs are *interleaved*: the ``repeat`` runs of every case are split into ``rounds`` shares; the first
pass builds, verifies and times each case with the first share, then each further round times the
baseline and every verified variant of the kernel once more, in order, with the next share, and the runs
of all rounds are pooled. A slow minute of a shared machine (measured here: one variant's five runs at
110 ms next to the same code at 70 ms a minute later) then falls on every variant and on the baseline
alike instead of on whichever variant ran in it. For every case the variant is built (schedule and
storage steps), its code is generated, compiled and run at the verification parameters next to the
original program, and every live-out array is compared bit for bit (:func:`polylab.experiment.verify`).
Only a verified variant is timed; ``speedup = median(baseline) / median(variant)``. A variant whose
output differs is reported as ``unverified`` with the first differing element and no time, so it can
never show up as a win; an illegal schedule is reported as ``illegal`` with the violated dependence; a
compile error, a crash or a timeout as ``error``. A case's ``flags`` (``-march=native`` with ``polylab bench
--native``) go to every timed build of its kernel, the baseline's included, never to a verification build.
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from polylab import render
from polylab.bench.spec import prepare_variant
from polylab.bench.sweep import Case, Kernel
from polylab.errors import IllegalTransformationError, PolylabError
from polylab.bench.machine import detect_machine
from polylab.version import __version__
from polylab import toolchain as tc

#: statuses of a case
VERIFIED, UNVERIFIED, ILLEGAL, ERROR, NOT_RUN = "verified", "unverified", "illegal", "error", "not run"


@dataclass(frozen=True)
class Retime:
    """How to time a verified binary once more: its arguments, threads and time limit."""

    binary: tc.Binary
    args: tuple[int, ...]
    threads: int | None
    timeout: float

    def __call__(self, repeat: int, warmup: int) -> tc.Timing:
        from polylab.experiment import time_program

        return time_program(self.binary, list(self.args), repeat=repeat, warmup=warmup, threads=self.threads,
                            timeout=self.timeout)


def shares(repeat: int, rounds: int) -> tuple[int, ...]:
    """``repeat`` timed runs split into at most ``rounds`` nearly equal shares, the larger first
    (5 runs in 3 rounds: 2, 2, 1); never an empty share."""
    rounds = max(1, min(int(rounds), int(repeat)))
    base, extra = divmod(int(repeat), rounds)
    return tuple(base + (1 if k < extra else 0) for k in range(rounds))


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one case (see the module text for ``status``)."""

    case: Case
    status: str
    seconds: tc.Timing | None = None
    baseline: tc.Timing | None = None
    reason: str | None = None
    first_difference: str | None = None
    schedule: str | None = None
    parallel: bool | None = None
    build_seconds: float = 0.0
    #: times the verified binary again (the later rounds); not part of the result's value
    retime: Retime | None = field(default=None, compare=False, repr=False)

    @property
    def verified(self) -> bool | None:
        if self.status == VERIFIED:
            return True
        if self.status == UNVERIFIED:
            return False
        return None

    @property
    def speedup(self) -> float | None:
        """``median(original, gcc -O3) / median(variant)``; None unless verified and timed."""
        if self.status != VERIFIED or self.seconds is None or self.baseline is None:
            return None
        return tc.speedup(self.baseline, self.seconds)

    def to_json(self) -> dict:
        out = self.case.to_json()
        out.update({
            "status": self.status, "verified": self.verified,
            "median_s": self.seconds.median if self.seconds else None,
            "min_s": self.seconds.min if self.seconds else None,
            "runs": list(self.seconds.runs) if self.seconds else [],
            "baseline_median_s": self.baseline.median if self.baseline else None,
            "baseline_min_s": self.baseline.min if self.baseline else None,
            "speedup": self.speedup, "parallel": self.parallel, "schedule": self.schedule,
            "reason": self.reason, "first_difference": self.first_difference,
            "build_seconds": round(self.build_seconds, 3),
        })
        return out


@dataclass(frozen=True)
class BenchReport:
    """Every case's result, the baselines by kernel, the settings and the machine."""

    results: tuple[CaseResult, ...]
    baselines: Mapping[str, tc.Timing | None]
    settings: Mapping[str, Any] = field(default_factory=dict)
    machine: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def kernels(self) -> tuple[str, ...]:
        seen: list[str] = []
        for r in self.results:
            if r.case.kernel not in seen:
                seen.append(r.case.kernel)
        return tuple(seen)

    def best(self, kernel: str) -> CaseResult | None:
        """The verified case of ``kernel`` with the highest speedup (None when nothing was timed)."""
        timed = [r for r in self.results if r.case.kernel == kernel and r.speedup is not None]
        return max(timed, key=lambda r: r.speedup or 0.0) if timed else None

    def to_json(self) -> dict:
        """The report as plain data (the ``--json`` file; the fields are listed in ``polylab bench -h``)."""
        best = {}
        for k in self.kernels:
            b = self.best(k)
            best[k] = None if b is None else {"variant": b.case.label, "threads": b.case.threads, "parallel": b.parallel,
                                              "speedup": b.speedup, "median_s": b.seconds.median}
        return {
            "polylab": __version__,
            "machine": dict(self.machine), "settings": dict(self.settings),
            "baselines": {k: (v.to_json() if v is not None else None) for k, v in self.baselines.items()},
            "results": [r.to_json() for r in self.results], "best": best,
            "seconds": round(self.seconds, 2),
        }

    def table(self) -> str:
        """The aligned text table (:func:`polylab.bench.report.format_table`, registered with
        :mod:`polylab.render`)."""
        return render.text(self)

    def __str__(self) -> str:
        return self.table()


def machine_info() -> dict:
    """The machine a report was measured on: processor count, compiler, platform, the load average when
    the report was made (other work on the machine slows parallel variants most) and the ``OMP_*``
    variables (``OMP_WAIT_POLICY=passive`` keeps waiting threads from spinning on a busy machine)."""
    import os

    cc = tc.c_compiler()
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor(),
            "compiler": getattr(cc, "version", None) or str(cc), "python": platform.python_version(),
            "load_average": load,
            "omp_env": {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "GOMP_"))}}


def baseline_compiler(flags: Sequence[str] = ()) -> str:
    """How the baseline is compiled, in words: ``gcc -O3``, ``gcc -O3 -march=native`` with ``flags``."""
    from polylab.experiment import TIMING_FLAGS

    return " ".join(["gcc", *TIMING_FLAGS, *flags])


def time_baseline(kernel: Kernel, params: Mapping[str, int], *, repeat: int, warmup: int,
                  timeout: float, flags: Sequence[str] = ()) -> tc.Timing:
    """The original program of ``kernel`` compiled with ``gcc -O3`` and the extra ``flags`` (no OpenMP),
    timed."""
    from polylab.codegen import original_program
    from polylab.experiment import TIMING_FLAGS, check_params, time_program
    from polylab.experiment.verify import param_args

    values = check_params(kernel.scop, params)
    binary = tc.compile(original_program(kernel.scop), flags=(*TIMING_FLAGS, *flags))
    return time_program(binary, param_args(kernel.scop, values), repeat=repeat, warmup=warmup, threads=None,
                        timeout=timeout)


def run_case(kernel: Kernel, case: Case, baseline: tc.Timing | None, *, repeat: int, warmup: int,
             timeout: float, progress: Callable[[str], None] | None = None) -> CaseResult:
    """Build, verify and (when verified) time one case."""
    from polylab.experiment import measure

    progress = progress or (lambda _m: None)
    t0 = time.perf_counter()
    try:
        progress("building the schedule")
        # the optimizer chooses for this machine and the vectors of the timed build (``--native``: the
        # machine's)
        built = prepare_variant(kernel.scop, case.spec, detect_machine(flags=case.flags))
    except IllegalTransformationError as err:
        return CaseResult(case, ILLEGAL, reason=err.message, build_seconds=time.perf_counter() - t0)
    except PolylabError as err:
        return CaseResult(case, ERROR, reason=err.message, build_seconds=time.perf_counter() - t0)
    build_seconds = time.perf_counter() - t0
    try:
        report = measure(kernel.scop, built.schedule, case.target, params=case.params, threads=case.threads,
                         repeat=repeat, warmup=warmup, baseline=False, check=True,
                         verify_params=case.verify_params, timeout=timeout, progress=progress, flags=case.flags)
    except PolylabError as err:
        return CaseResult(case, ERROR, reason=f"{type(err).__name__}: {err.message}", schedule=built.text,
                          build_seconds=build_seconds)
    kernel_text = getattr(report.code, "kernel", "") or ""
    parallel = "#pragma omp" in kernel_text if report.code is not None and report.code.target.openmp else None
    if report.verified is None:
        return CaseResult(case, NOT_RUN, reason=report.reason, schedule=built.text, parallel=parallel,
                          build_seconds=build_seconds)
    if not report.verified:
        diff = report.verification.first_difference if report.verification is not None else None
        return CaseResult(case, UNVERIFIED, reason="the variant's output differs from the original's",
                          first_difference=diff, schedule=built.text, parallel=parallel,
                          build_seconds=build_seconds)
    from polylab.experiment import TIMING_FLAGS
    from polylab.experiment.verify import compile_variant, param_args

    retime = Retime(compile_variant(report.code, (*TIMING_FLAGS, *case.flags)),
                    tuple(param_args(kernel.scop, report.params)), case.threads,
                    timeout)   # the binary just timed (the toolchain's build cache)
    return CaseResult(case, VERIFIED, report.seconds, baseline, schedule=built.text, parallel=parallel,
                      build_seconds=build_seconds, retime=retime)


def run_bench(kernels: Sequence[Kernel], cases: Sequence[Case], *, repeat: int = 3, warmup: int = 1,
              timeout: float = 300.0, rounds: int = 1, settings: Mapping[str, Any] | None = None,
              on_start: Callable[[Case], None] | None = None,
              on_result: Callable[[CaseResult], None] | None = None,
              progress: Callable[[str], None] | None = None,
              run_one: Callable[..., CaseResult] = run_case) -> BenchReport:
    """Run every case (module text), the timed runs split into ``rounds`` interleaved rounds per kernel
    (:func:`shares`). ``on_start``/``on_result`` are called around each case (the first round) and
    ``progress`` with each sub-step (a progress bar hooks in there); nothing is printed. ``run_one``
    measures one case (:func:`run_case`'s signature; :func:`polylab.bench.peers.run_case` adds peers).

    A variant whose code has no parallel loop is measured with the first thread count only: its later
    cases with other thread counts are not repeated (``on_result`` gets the first result again)."""
    t0 = time.perf_counter()
    by_name = {k.name: k for k in kernels}
    baselines: dict[str, tc.Timing | None] = {}
    baseline_errors: dict[str, str] = {}
    results: list[CaseResult] = []
    sequential: dict[tuple[str, str, str], CaseResult] = {}

    split = shares(repeat, rounds)

    def baseline_of(case: Case, runs: int = split[0]) -> tc.Timing | None:
        try:
            if progress:
                progress(f"{case.kernel}: timing the original program ({baseline_compiler(case.flags)})")
            return time_baseline(by_name[case.kernel], case.params, repeat=runs, warmup=warmup, timeout=timeout,
                                 flags=case.flags)
        except PolylabError as err:
            baseline_errors[case.kernel] = err.message
            return None

    def finish(kernel: str, last: Case) -> None:
        """The kernel's further rounds (the baseline, then every verified variant, once each per round),
        then the baseline once more after them; every result gets all its runs and all the baseline's,
        so that a slow or busy moment of the machine does not bias every speedup of the kernel."""
        before = baselines.get(kernel)
        if before is None or not any(r.case.kernel == kernel and r.seconds is not None for r in results):
            return
        runs = list(before.runs)
        for k, share in enumerate(split[1:], start=2):
            again = baseline_of(last, share)
            runs += list(again.runs) if again is not None else []
            for i, r in enumerate(results):
                if r.case.kernel == kernel and r.seconds is not None and r.retime is not None:
                    results[i] = _another_round(r, k, len(split), share, warmup, progress)
        after = baseline_of(last)
        runs += list(after.runs) if after is not None else []
        merged = tc.Timing.from_runs(runs, threads=None, warmup=before.warmup)
        baselines[kernel] = merged
        for i, r in enumerate(results):
            if r.case.kernel == kernel and r.seconds is not None:
                results[i] = replace(r, baseline=merged)

    previous: Case | None = None
    for case in cases:
        if previous is not None and previous.kernel != case.kernel:
            finish(previous.kernel, previous)
        previous = case
        kernel = by_name[case.kernel]
        if on_start:
            on_start(case)
        if case.kernel not in baselines:
            baselines[case.kernel] = baseline_of(case)
        seq = sequential.get((case.kernel, case.spec, case.target))
        if seq is not None:   # code without a parallel loop runs the same with any thread count: once
            if on_result:
                on_result(seq)
            continue
        result = run_one(kernel, case, baselines[case.kernel], repeat=split[0], warmup=warmup, timeout=timeout,
                          progress=(lambda m, c=case: progress(f"{c.kernel} [{c.label}]: {m}"))
                          if progress else None)
        results.append(result)
        if result.parallel is False:
            sequential[(case.kernel, case.spec, case.target)] = result
        if on_result:
            on_result(result)
    if previous is not None:
        finish(previous.kernel, previous)
    info = dict(settings or {})
    if baseline_errors:
        info["baseline_errors"] = baseline_errors
    return BenchReport(tuple(results), baselines, info, machine_info(), time.perf_counter() - t0)


def _another_round(r: CaseResult, k: int, total: int, share: int, warmup: int,
                   progress: Callable[[str], None] | None) -> CaseResult:
    """``r`` with ``share`` more runs of its verified binary (round ``k`` of ``total``) pooled into its
    times; a crash or timeout now (it ran in the first round) makes it an error with the reason."""
    if progress:
        progress(f"{r.case.kernel} [{r.case.label}]: round {k} of {total}")
    try:
        more = r.retime(share, warmup)
    except PolylabError as err:
        return replace(r, status=ERROR, seconds=None, reason=f"round {k} of {total}: {err.message}")
    return replace(r, seconds=tc.Timing.from_runs(r.seconds.runs + more.runs, threads=r.seconds.threads,
                                                  warmup=r.seconds.warmup))
