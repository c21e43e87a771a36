"""Stencil programs run and timed: one program checked against the reference interpreter then timed
(``polylab stencil --run``), and the plain program against the inlined one (``polylab stencil --bench``).

:func:`run_program` lowers the program, checks the code of ``schedule`` for ``target`` against the reference
interpreter (:func:`polylab.stencil.check`), then verifies and times it with :func:`polylab.experiment.measure`
against the lowered program's own loops compiled with ``gcc -O3``. A speedup is only reported when both medians
are at least :data:`MIN_SECONDS`: shorter runs are dominated by timer resolution and noise, and the report says
so instead of giving a ratio.

:func:`inline_tradeoff`: the same program lowered plain and inlined by xDSL's ``stencil-inlining`` (which
recomputes a producer inside each consumer), each checked bit for bit and timed (docs/performance.md). For every
variant the table gives the applies left, the temp arrays and their storage (MB, from the inferred shapes), the
floating-point operations per stored point (each apply's arithmetic times the points it runs on), the median
time and the speedup over the plain program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Any, Callable, Sequence

from polylab import render
from polylab.experiment import measure
from polylab.stencil.check import StencilCheck, check
from polylab.stencil.interpret import extents, unroll_of
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.passes import run_passes
from polylab.stencil.program import Program, box_of

#: the shortest median (seconds) a speedup is computed from
MIN_SECONDS = 1e-3


@dataclass(frozen=True)
class StencilRun:
    """A checked and timed stencil program (``report``: :class:`polylab.experiment.RunReport`)."""

    check: StencilCheck
    report: Any = field(default=None, repr=False)
    speedup: float | None = None
    reason: str | None = None

    @property
    def verified(self) -> bool | None:
        if self.check.verified is not True:
            return self.check.verified
        return self.report.verified if self.report is not None else None

    @property
    def seconds(self) -> float | None:
        return self.report.seconds.median if self.report is not None and self.report.seconds else None

    @property
    def baseline(self) -> float | None:
        return self.report.baseline.median if self.report is not None and self.report.baseline else None

    def to_json(self) -> dict:
        out = dict(self.report.to_json()) if self.report is not None else {"target": self.check.name}
        out.update({"verified": self.verified, "interpreter": self.check.to_json(), "speedup": self.speedup,
                    "seconds": self.report.to_json()["seconds"] if self.report is not None else None})
        if self.reason:
            out["reason"] = self.reason
        return out

    def __str__(self) -> str:
        lines = [str(self.check)]
        if self.report is not None:
            lines.append(str(self.report).replace(f"  speedup : {self.report.speedup:.2f}x", "")
                         if self.report.speedup is not None else str(self.report))
        if self.speedup is not None:
            lines.append(f"  speedup : {self.speedup:.2f}x")
        if self.reason:
            lines.append(f"  {self.reason}")
        return "\n".join(ln for ln in lines if ln.strip())


def run_program(program: Program | Lowering, schedule: Any = None, target: str = "c", *,
                threads: int | None = None, repeat: int = 5, warmup: int = 1, timeout: float = 300.0,
                progress: Callable[[str], None] | None = None) -> StencilRun:
    """Check ``program`` (lowered, under ``schedule``, for ``target``) against the interpreter, then time
    it and its original loops (see the module)."""
    lowering = program if isinstance(program, Lowering) else lower(program)
    verdict = check(lowering, schedule, target, threads=threads, timeout=timeout)
    if verdict.verified is not True:
        return StencilRun(verdict, reason=verdict.reason or str(verdict))
    report = measure(lowering.scop, schedule, target, params={}, threads=threads, repeat=repeat, warmup=warmup,
                     timeout=timeout, progress=progress)
    return StencilRun(verdict, report, *speedup_of(report))


def speedup_of(report: Any) -> tuple[float | None, str | None]:
    """``(speedup, None)``, or ``(None, why)`` when a median is below :data:`MIN_SECONDS` or nothing was timed."""
    if report.seconds is None or report.baseline is None:
        return None, report.reason
    shortest = min(report.seconds.median, report.baseline.median)
    if shortest < MIN_SECONDS:
        return None, (f"no speedup: a run of {shortest:.2g} s is too short to time (below {MIN_SECONDS:g} s); "
                      f"choose a larger --domain")
    return report.speedup, None


#: the variants compared: name -> pass pipeline
VARIANTS = (("plain", "shape-inference"), ("inlined", "stencil-inlining,cse,shape-inference"))
#: the floating-point operations counted per point
FLOPS = {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf", "math.sqrt", "math.absf",
         "math.exp", "math.log", "math.sin", "math.cos", "math.tanh", "math.powf"}


@dataclass(frozen=True)
class BenchRow:
    name: str
    passes: str
    applies: int
    temps: int
    temp_mb: float
    flops_per_point: float
    verified: bool | None
    seconds: float | None


@dataclass(frozen=True)
class InlineBench(render.Displayable):
    """The rows of the comparison, with the target and the domain."""

    rows: tuple[BenchRow, ...]
    target: str
    threads: int | None
    domain: tuple[int, ...]

    def speedup(self, row: BenchRow) -> float | None:
        base = self.rows[0].seconds
        if base is None or row.seconds is None or min(base, row.seconds) < MIN_SECONDS:
            return None
        return base / row.seconds

    def text(self) -> str:
        head = (f"inlining trade-off: {self.target}, threads {self.threads or 'default'}, domain "
                f"{'x'.join(map(str, self.domain))}")
        table = render.text_table(
            ["variant", "applies", "temps", "temp MB", "flop/pt", "verified", "median s", "speedup"],
            [[r.name, r.applies, r.temps, f"{r.temp_mb:.2f}", f"{r.flops_per_point:.1f}", r.verified,
              "-" if r.seconds is None else f"{r.seconds:.4g}",
              "-" if self.speedup(r) is None else f"{self.speedup(r):.2f}x"] for r in self.rows])
        return head + "\n" + table

    def __str__(self) -> str:
        return self.text()

    def to_json(self) -> dict:
        return {"target": self.target, "threads": self.threads, "domain": list(self.domain),
                "rows": [dict(r.__dict__, speedup=self.speedup(r)) for r in self.rows]}


def flops_per_point(lowering: Lowering) -> float:
    """Floating-point operations the program specifies (arithmetic operations of each apply's body times the
    points the body runs at), per stored point."""
    flops = 0
    for apply in lowering.program.applies:
        box = box_of(apply.results[0].type) if apply.results else None
        if box is None:
            continue
        points = prod(-(-n // f) for n, f in zip(extents(box), unroll_of(apply)))      # the body runs at lb + u t
        flops += sum(op.name in FLOPS for op in apply.walk()) * points
    stored = sum(prod(extents(box_of(st.bounds))) for st in lowering.program.stores)
    return flops / max(1, stored)


def inline_tradeoff(program: Program, *, schedule: Any = "parallel", target: str = "openmp",
                    threads: int | None = None, repeat: int = 5,
                    progress: Callable[[str], None] | None = None,
                    variants: Sequence[tuple[str, str]] = VARIANTS) -> InlineBench:
    """Each variant lowered, checked against the interpreter and timed under ``schedule`` (see the
    module). A long sweep shows a progress bar (``progress`` None) or reports to ``progress``."""
    from tqdm import tqdm

    rows = []
    bar = tqdm(total=len(variants), unit="variant", disable=progress is not None, leave=False)
    try:
        for name, spec in variants:
            bar.set_description(name)
            low = lower(run_passes(program, spec))
            temp_mb = sum(_elements(a.extents) * (8 if a.ctype == "double" else 4) for a in low.scop.arrays
                          if a.name in dict(low.temps).values()) / 2 ** 20
            run = run_program(low, schedule, target, threads=threads, repeat=repeat, progress=progress)
            verified, seconds = run.verified, run.seconds
            rows.append(BenchRow(name, spec, len(low.program.applies), len(low.temps), temp_mb,
                                 flops_per_point(low), verified, seconds))
            bar.update(1)
    finally:
        bar.close()
    st = program.stores[0]
    return InlineBench(tuple(rows), target, threads, extents(box_of(st.bounds)))


def _elements(extents: Sequence[str]) -> int:
    n = 1
    for e in extents:
        n *= int(e)
    return n
