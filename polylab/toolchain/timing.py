"""Timing a compiled program: warm-up, repeated runs, median and spread.

:func:`time_binary` runs the program ``warmup`` times without recording, then ``repeat`` times. From each
recorded run it takes the kernel times the harness reported on ``polylab-time`` lines (see
:mod:`polylab.toolchain.compare`); a run that reports none contributes its whole wall-clock time instead
(then ``source`` is ``'wall'``, which includes process start-up, allocation and initialisation).

The summary statistics: ``median`` (the figure to quote; robust to a noisy neighbour), ``min`` (the best
case), ``spread = (max - min) / median`` (the relative range; under a few per cent means the figure is
trustworthy) and ``stdev`` (sample standard deviation).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from polylab.errors import ToolchainError
from polylab.toolchain.build import Binary
from polylab.toolchain.runner import run

__all__ = ["Timing", "speedup", "time_binary"]


@dataclass(frozen=True)
class Timing:
    """Repeated measurements of one program, in seconds.

    ``runs`` holds every recorded time (one per ``polylab-time`` line of each recorded run, or one wall
    time per run); ``threads`` is the ``OMP_NUM_THREADS`` used (``None``: the default); ``source`` is
    ``'harness'`` or ``'wall'``.
    """

    median: float
    min: float
    max: float
    runs: tuple[float, ...]
    spread: float
    stdev: float
    threads: int | None = None
    source: str = "harness"
    warmup: int = 0

    @classmethod
    def from_runs(cls, runs: Sequence[float], *, threads: int | None = None, source: str = "harness",
                  warmup: int = 0) -> Timing:
        """Summarise a non-empty sequence of times."""
        if not runs:
            raise ToolchainError("no times to summarise")
        values = tuple(float(r) for r in runs)
        median = statistics.median(values)
        lo, hi = min(values), max(values)
        spread = (hi - lo) / median if median > 0 else 0.0
        stdev = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(median=median, min=lo, max=hi, runs=values, spread=spread, stdev=stdev, threads=threads,
                   source=source, warmup=warmup)

    def to_json(self) -> dict:
        """``{'median', 'min', 'runs', ...}`` as plain numbers (the ``seconds`` object of ``polylab run --json``)."""
        return {"median": self.median, "min": self.min, "max": self.max, "runs": list(self.runs),
                "spread": self.spread, "stdev": self.stdev, "threads": self.threads, "source": self.source}

    def __str__(self) -> str:
        threads = f", {self.threads} thread(s)" if self.threads else ""
        return (f"median {_fmt(self.median)} (min {_fmt(self.min)}, spread {self.spread:.1%}, "
                f"{len(self.runs)} runs{threads}, {self.source} time)")


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} µs"


def time_binary(binary: Binary | str | os.PathLike[str], args: Sequence[str | int | float] = (), *,
                repeat: int = 5, warmup: int = 1, threads: int | None = None, timeout: float = 60.0,
                memory_limit_mb: int | None | str = "auto", env: Mapping[str, str] | None = None) -> Timing:
    """Run ``binary`` ``warmup + repeat`` times and summarise the kernel times of the last ``repeat``.

    Each run is contained as in :func:`~polylab.toolchain.runner.run` (``timeout`` is per run); a run that
    fails raises :class:`~polylab.errors.RunFailure` or :class:`~polylab.errors.RunTimeout`.
    """
    if repeat < 1:
        raise ToolchainError(f"repeat={repeat} must be at least 1")
    if warmup < 0:
        raise ToolchainError(f"warmup={warmup} must not be negative")
    for _ in range(warmup):
        run(binary, args, timeout=timeout, memory_limit_mb=memory_limit_mb, env=env, threads=threads)
    times: list[float] = []
    source = "harness"
    for _ in range(repeat):
        result = run(binary, args, timeout=timeout, memory_limit_mb=memory_limit_mb, env=env, threads=threads)
        reported = result.times
        if reported:
            times.extend(reported)
        else:
            times.append(result.seconds)
            source = "wall"
    return Timing.from_runs(times, threads=threads, source=source, warmup=warmup)


def speedup(baseline: Timing, variant: Timing) -> float:
    """How many times faster ``variant`` is than ``baseline``: the ratio of their medians."""
    if variant.median <= 0:
        return float("inf")
    return baseline.median / variant.median
