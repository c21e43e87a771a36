"""``optimize --tune``: time a handful of candidate variants and keep the fastest *verified* one.

The candidates are recipe specs, so the winner can be replayed anywhere a spec is read:

* ``optimize(T)`` -- the optimizer's own choice for ``T`` threads (:mod:`polylab.storage.optimize`);
* ``optimize(1)`` when ``T > 1`` -- the same without the strips' tile-level wavefront;
* ``optimize(T, rows, wave)`` for other strip rows and wavefront tile sizes (only where the optimizer
  made strips), ``optimize(T, 8, size)`` for other tile sizes (only where it made time tiles,
  :mod:`polylab.schedule.timetile`, or tiled the Pluto-style band, :mod:`polylab.schedule.bandtile`), and
  ``optimize(T, 8, 0, 1)``: with cache tiling offered (a candidate that gives the same schedule as an earlier
  one is not timed twice);
* ``parallel`` -- the source order with its parallel loops marked: the fallback.

Each candidate is verified against the original program at ``verify_params`` (bit for bit, a vacuous
comparison is not verified), then timed at ``params`` with ``threads`` threads (:func:`measure`); the
original program compiled with ``gcc -O3`` is timed once (the baseline). The winner is the verified
candidate with the smallest median; when no candidate beats the original program the result is the
original order (``original``): ``optimize --tune`` is never slower than the program it was given, as
measured. Timings are reported, not asserted: on a loaded machine, rerun and compare medians.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from polylab.errors import PolylabError
from polylab.experiment.schedules import schedule_from_spec
from polylab.experiment.timing import RunReport, measure
from polylab.model.scop import Scop
from polylab.render import Displayable, esc, text_table
from polylab.schedule import Machine, Schedule
from polylab.schedule.optimize import STRIP_ROWS, WAVE_TILE, OptimizeReport, Structure, TimeTiling
from polylab.schedule.tuning import TUNE_STRIPS, TUNE_TILES


@dataclass(frozen=True)
class Trial:
    """One candidate: its spec, what happened (verified and timed, or why not)."""

    spec: str
    seconds: float | None
    verified: bool | None
    reason: str | None
    schedule: str

    def to_json(self) -> dict:
        return {"spec": self.spec, "seconds": self.seconds, "verified": self.verified, "reason": self.reason,
                "schedule": self.schedule}


@dataclass(frozen=True, eq=False, repr=False)
class TuneResult(Displayable):
    """The trials, the original program's time and the spec kept."""

    best: str
    best_seconds: float | None
    baseline: float | None
    trials: tuple[Trial, ...]
    threads: int
    params: Mapping[str, int]

    @property
    def speedup(self) -> float | None:
        if self.best_seconds and self.baseline:
            return self.baseline / self.best_seconds
        return None

    def text(self) -> str:
        rows = []
        for t in self.trials:
            sp = f"{self.baseline / t.seconds:.2f}x" if t.seconds and self.baseline else "-"
            rows.append([t.spec, f"{t.seconds * 1e3:.1f} ms" if t.seconds else "-", sp,
                         "yes" if t.verified else ("no" if t.verified is False else "-"), t.reason or ""])
        base = f"{self.baseline * 1e3:.1f} ms" if self.baseline else "-"
        head = (f"tuning at {', '.join(f'{k}={v}' for k, v in self.params.items())}, {self.threads} thread"
                f"{'s' if self.threads != 1 else ''}; original program (gcc -O3): {base}")
        sp = f" ({self.speedup:.2f}x)" if self.speedup else ""
        return "\n".join([head, text_table(["candidate", "median", "speedup", "verified", "note"], rows),
                          f"kept: {self.best}{sp}"])

    def html(self) -> str:
        return f"<pre>{esc(self.text())}</pre>"

    def to_json(self) -> dict:
        return {"best": self.best, "best_seconds": self.best_seconds, "baseline_seconds": self.baseline,
                "speedup": self.speedup, "threads": self.threads, "params": dict(self.params),
                "trials": [t.to_json() for t in self.trials]}


def tile_sizes_chosen(report: OptimizeReport) -> bool:
    """The optimizer kept tiles whose size ``--tune`` may vary: time tiles of the outer band or the
    Pluto-style band tiled as a wavefront."""
    return report.timing is TimeTiling.TIME_TILES or report.structure is Structure.PLUTO_BAND


def candidate_schedules(scop: Scop, threads: int, machine: Machine | None = None) -> list[tuple[str, Schedule]]:
    """The specs :func:`tune` times (see the module text) with their schedules (each read once, ``optimize``
    choosing for ``machine``), without two specs of one schedule."""
    first = schedule_from_spec(scop, f"optimize({threads})", machine=machine)
    assert first is not None
    report = first.provenance.optimize
    specs = ["optimize(1)"] if threads > 1 else []
    if report is not None and any(c.kind.strips for c in report.choices):
        specs += [f"optimize({threads}, {r}, {w})" for r, w in TUNE_STRIPS]
    if report is not None and tile_sizes_chosen(report):
        specs += [f"optimize({threads}, {STRIP_ROWS}, {w})" for w in TUNE_TILES]
    specs.append(f"optimize({threads}, {STRIP_ROWS}, {WAVE_TILE[0]}, 1)")
    specs.append("parallel")
    out = [(f"optimize({threads})", first)]
    seen = {first.text() + str(sorted(first.marked))}
    for spec in specs:
        s = schedule_from_spec(scop, spec, machine=machine)
        key = s.text() + str(sorted(s.marked))
        if key not in seen:
            seen.add(key)
            out.append((spec, s))
    return out


def candidates(scop: Scop, threads: int, machine: Machine | None = None) -> list[str]:
    """The specs of :func:`candidate_schedules`."""
    return [spec for spec, _ in candidate_schedules(scop, threads, machine)]


def tune(scop: Scop, *, threads: int, params: Mapping[str, int], verify_params: Mapping[str, int] | None = None,
         specs: Sequence[str] | None = None, repeat: int = 3, warmup: int = 1, timeout: float = 300.0,
         bar: Callable | None = None, machine: Machine | None = None) -> TuneResult:
    """Verify and time each candidate (``specs``, default :func:`candidate_schedules`; each schedule is
    searched once, then generated, verified and timed), keep the fastest verified one
    that beats the original program (else ``original``). ``bar``: a tqdm-like factory for the progress
    bar (``bar(iterable, desc=..., unit=...)``); the command line passes tqdm."""
    pairs = (candidate_schedules(scop, threads, machine) if specs is None
             else [(spec, schedule_from_spec(scop, spec, machine=machine)) for spec in specs])
    trials = []
    baseline = None
    iterable = bar(pairs, desc="tuning", unit="variant") if bar else pairs
    for spec, sched in iterable:
        try:
            rep: RunReport = measure(scop, sched, "openmp", params=params, threads=threads, repeat=repeat,
                                     warmup=warmup, baseline=baseline is None, verify_params=verify_params,
                                     timeout=timeout)
        except PolylabError as err:
            trials.append(Trial(spec, None, None, err.message, ""))
            continue
        if baseline is None and rep.baseline is not None:
            baseline = rep.baseline.median
        trials.append(Trial(spec, rep.seconds.median if rep.seconds else None, rep.verified, rep.reason,
                            sched.text() if sched is not None else "original"))
    timed = [t for t in trials if t.verified and t.seconds]
    win = min(timed, key=lambda t: t.seconds) if timed else None
    if win is None or (baseline is not None and win.seconds >= baseline):
        return TuneResult("original", baseline, baseline, tuple(trials), threads, dict(params))
    return TuneResult(win.spec, win.seconds, baseline, tuple(trials), threads, dict(params))
