"""Measurements as a lab shows them: a timing table and its chart drawn from the same runs, each speedup
with its 95 % interval, and a roofline with the machine's own roofs.

:class:`TimingTable` holds the runs once; its text, its HTML and its :meth:`~TimingTable.chart` are all drawn
from those runs, so a table and its chart can never show different measurements. Each row gives the median
time with the 95 % interval of the median, and each variant its speedup over the baseline with the 95 %
interval of the ratio (:func:`polylab.experiment.speedup_interval`); an interval that contains 1 reads
"no measurable difference". A speedup between runs too short to resolve is not reported
(:data:`polylab.experiment.MIN_TIMED_SECONDS`).

:class:`Roofline` places kernels (operations, bytes, times) under the roofs measured by
:func:`polylab.experiment.roofs.measure_roofs`: achieved GFLOP/s against ``min(peak, bandwidth * intensity)``,
and achieved GB/s against the copy bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from polylab.errors import ModelError
from polylab.experiment import RunReport, SpeedupInterval, median_interval, speedup_interval, unresolved
from polylab.experiment.roofs import Roofs
from polylab.notebook.display import table_html, table_text
from polylab.notebook.plots import format_seconds
from polylab.toolchain import Timing


@dataclass(frozen=True)
class TimingRow:
    """One measured program: its runs, the 95 % interval of its median time, and (for a variant) its
    speedup over the baseline with the interval, or why none is reported."""

    name: str
    timing: Timing
    interval: tuple[float, float] | None
    speedup: SpeedupInterval | None = None
    refused: str | None = None

    @property
    def verdict(self) -> str:
        if self.speedup is not None:
            return self.speedup.text()
        return self.refused or ""


@dataclass(frozen=True)
class TimingTable:
    """Rows of measured programs, the first one the ``baseline`` (see the module text)."""

    rows: tuple[TimingRow, ...]
    baseline: str

    def row(self, name: str) -> TimingRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise ModelError(f"no row {name!r} in the timing table", hint="the rows are " + ", ".join(
            r.name for r in self.rows))

    def _cells(self) -> list[tuple[str, ...]]:
        out = []
        for r in self.rows:
            iv = (f"{format_seconds(r.interval[0])} - {format_seconds(r.interval[1])}" if r.interval
                  else "too few runs")
            speed = "(baseline)" if r.name == self.baseline else r.verdict
            out.append((r.name, format_seconds(r.timing.median), iv, str(len(r.timing.runs)), speed))
        return out

    _HEADER = ("program", "median time", "95 % interval of the median", "runs", "speedup over the baseline")

    def text(self) -> str:
        return table_text(self._HEADER, self._cells())

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text())

    def _repr_html_(self) -> str:
        return table_html(self._HEADER, self._cells())

    def chart(self, title: str | None = None) -> Figure:
        """The rows as horizontal bars: the median, whiskers over the 95 % interval of the median, and each
        variant's speedup with its interval (the same runs as the table)."""
        names = [r.name for r in self.rows]
        med = np.array([r.timing.median for r in self.rows])
        lo = np.array([r.interval[0] if r.interval else r.timing.median for r in self.rows])
        hi = np.array([r.interval[1] if r.interval else r.timing.median for r in self.rows])
        scale, unit = _unit(float(med.max()))
        fig = Figure(figsize=(7.2, 0.6 * len(names) + 1.5), layout="constrained")
        ax = fig.add_subplot()
        y = np.arange(len(names))[::-1]
        colors = ["#8c8c8c" if n == self.baseline else "#4c72b0" for n in names]
        ax.barh(y, med * scale, color=colors, height=0.6, capsize=3,
                xerr=[np.maximum(0, med - lo) * scale, np.maximum(0, hi - med) * scale])
        for yy, r, top in zip(y, self.rows, hi):
            label = format_seconds(r.timing.median)
            if r.name != self.baseline and r.speedup is not None:
                label += f"   {r.speedup.ratio:.2f}x [{r.speedup.low:.2f}-{r.speedup.high:.2f}]"
                if not r.speedup.significant:
                    label += " no measurable difference"
            ax.text(top * scale, yy, "  " + label, va="center", fontsize=8)
        ax.set_yticks(y, names)
        ax.set_xlabel(f"median run time ({unit}); whiskers: 95 % interval of the median")
        ax.set_xlim(0, float(hi.max()) * scale * 1.9)
        ax.set_title(title or f"run times and speedups over {self.baseline} (95 % intervals)", fontsize=10)
        return fig


def _unit(t: float) -> tuple[float, str]:
    if t >= 1:
        return 1.0, "s"
    if t >= 1e-3:
        return 1e3, "ms"
    return 1e6, "\u00b5s"


def _timing(value: Timing | RunReport | Sequence[float], name: str) -> Timing:
    if isinstance(value, RunReport):
        if value.seconds is None:
            raise ModelError(f"{name} was not timed: {value.reason}")
        return value.seconds
    if isinstance(value, Timing):
        return value
    return Timing.from_runs([float(x) for x in value])


def timing_table(runs: Mapping[str, Timing | RunReport | Sequence[float]], baseline: str) -> TimingTable:
    """A :class:`TimingTable` of ``runs`` (a name -> a :class:`~polylab.toolchain.Timing`, a
    :class:`~polylab.experiment.RunReport` (its variant's times) or a list of run times); ``baseline`` names
    the row the speedups are taken over (the original program of the same kernel at the same sizes)."""
    if baseline not in runs:
        raise ModelError(f"the baseline {baseline!r} is not one of the runs", hint="name one of " + ", ".join(runs))
    times = {name: _timing(v, name) for name, v in runs.items()}
    base = times[baseline]
    rows = []
    for name in [baseline, *(n for n in times if n != baseline)]:
        t = times[name]
        refused = None if name == baseline else unresolved(base, t)
        speed = None if name == baseline or refused else speedup_interval(base.runs, t.runs)
        if name != baseline and speed is None and not refused:
            refused = "too few runs for an interval"
        rows.append(TimingRow(name, t, median_interval(t.runs), speed, refused))
    return TimingTable(tuple(rows), baseline)


# -- the roofline -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelRate:
    """One measured kernel on the roofline: ``operations`` (floating-point operations per run), ``bytes``
    (bytes it must move per run, by a stated model) and its run times."""

    name: str
    operations: int
    bytes: int
    timing: Timing

    @property
    def intensity(self) -> float:
        """Operations per byte."""
        return self.operations / self.bytes

    @property
    def flops(self) -> float:
        """Achieved operations per second (median time)."""
        return self.operations / self.timing.median

    @property
    def bandwidth(self) -> float:
        """Achieved bytes per second (median time)."""
        return self.bytes / self.timing.median


@dataclass(frozen=True)
class Roofline:
    """Kernels under this machine's roofs (see the module text): a table and a chart of the same runs."""

    roofs: Roofs
    kernels: tuple[KernelRate, ...]

    _HEADER = ("kernel", "flop/byte", "GFLOP/s", "roof at its intensity", "GB/s", "share of copy bandwidth")

    def _cells(self) -> list[tuple[str, ...]]:
        return [(k.name, f"{k.intensity:.3g}", f"{k.flops / 1e9:.2f}",
                 f"{self.roofs.bound(k.intensity) / 1e9:.2f} GFLOP/s", f"{k.bandwidth / 1e9:.2f}",
                 f"{k.bandwidth / self.roofs.bandwidth:.0%}") for k in self.kernels]

    def text(self) -> str:
        return f"{self.roofs}\n" + table_text(self._HEADER, self._cells())

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text())

    def _repr_html_(self) -> str:
        return f"<div>{self.roofs}</div>" + table_html(self._HEADER, self._cells())

    def chart(self) -> Figure:
        """Log-log: the two roofs (copy bandwidth, peak), the ridge, and each kernel at its intensity."""
        r = self.roofs
        xs = [k.intensity for k in self.kernels] + [r.ridge()]
        x = np.logspace(np.log10(min(xs) / 4), np.log10(max(xs) * 4), 200)
        fig = Figure(figsize=(6.6, 4.2), layout="constrained")
        ax = fig.add_subplot()
        ax.loglog(x, np.minimum(r.peak, r.bandwidth * x) / 1e9, color="#444444", lw=2)
        ax.axvline(r.ridge(), color="#999999", ls=":", lw=1)
        ax.text(x[0], r.bandwidth * x[0] / 1e9 * 1.15, f"copy {r.bandwidth / 1e9:.1f} GB/s", fontsize=8,
                rotation=0, va="bottom")
        ax.text(x[-1], r.peak / 1e9 * 1.08, f"peak {r.peak / 1e9:.1f} GFLOP/s", fontsize=8, ha="right",
                va="bottom")
        for k in self.kernels:
            ax.plot([k.intensity], [k.flops / 1e9], "o", ms=7)
            ax.annotate(f"{k.name}\n{k.flops / 1e9:.2f} GFLOP/s, {k.bandwidth / 1e9:.1f} GB/s",
                        (k.intensity, k.flops / 1e9), textcoords="offset points", xytext=(8, -4), fontsize=8)
        ax.set_xlabel("arithmetic intensity (flop per byte moved)")
        ax.set_ylabel("GFLOP/s")
        ax.set_ylim(min(k.flops for k in self.kernels) / 1e9 / 4, r.peak / 1e9 * 3)
        ax.set_title("roofline of this machine (roofs measured in this session)", fontsize=10)
        return fig


def roofline(roofs: Roofs, kernels: Sequence[KernelRate]) -> Roofline:
    """The :class:`Roofline` of ``kernels`` under ``roofs``."""
    if not kernels:
        raise ModelError("a roofline needs at least one kernel")
    return Roofline(roofs, tuple(kernels))


__all__ = ["KernelRate", "Roofline", "TimingRow", "TimingTable", "roofline", "timing_table"]
