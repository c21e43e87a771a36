"""Running a stencil program: verified bit for bit against the interpreter, then timed like ``polylab run``.

:func:`run_program` lowers the program, checks the code of ``schedule`` for ``target`` against the
reference interpreter (:func:`polylab.stencil.check`), then verifies and times it with
:func:`polylab.experiment.measure` against the lowered program's own loops compiled with ``gcc -O3``. A
speedup is only reported when both medians are at least :data:`MIN_SECONDS`: shorter runs are dominated
by timer resolution and noise, and the report says so instead of giving a ratio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from polylab.experiment import measure
from polylab.stencil.check import StencilCheck, check
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.program import Program

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
        out = dict(self.report.to_json()) if self.report is not None else {"target": self.check.target}
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
