"""The Pluto-style search and isl's scheduler side by side: bands, parallelism and rows, in words.

Both schedulers build permutable bands of hyperplanes with the Farkas lemma, but isl allows negative
coefficients and parametric shifts, prefers coincident rows and clusters statements with its own
heuristics, so their answers can differ; :func:`compare_schedulers` says how.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from polylab.analysis import DependenceGraph
from polylab.model import Scop
from polylab.model.budget import budgeted
from polylab.schedule.core import Schedule, const_value
from polylab.schedule.deps import dependences
from polylab.schedule.isl_scheduler import isl_schedule
from polylab.schedule.legality import is_legal
from polylab.schedule.pluto import pluto_schedule


@dataclass(frozen=True)
class SchedulerSummary:
    name: str
    seconds: float
    schedule: str
    legal: bool
    tilable: int                # loop dimensions of the largest permutable band
    parallel: tuple[int, ...]   # parallel loop dimensions
    outer_parallel: bool        # the outermost loop is parallel
    hyperplanes: dict[str, list[str]] = field(default_factory=dict)
    fusion: str = ""            # how the statements share loops


@dataclass(frozen=True)
class SchedulerComparison:
    """The Pluto-style search and isl's scheduler on one SCoP, with the differences in words."""

    scop_name: str
    pluto: SchedulerSummary
    isl: SchedulerSummary
    differences: tuple[str, ...]

    def __str__(self) -> str:
        lines = [f"SCoP {self.scop_name}"]
        for s in (self.pluto, self.isl):
            lines.append(f"  {s.name:6} {s.seconds * 1000:7.1f} ms  legal={s.legal}  tilable band={s.tilable}"
                         f"  parallel={list(s.parallel)}  {s.schedule}")
        lines += ["  " + d for d in self.differences] or ["  same band structure and parallelism"]
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


def _summary(name: str, s: Schedule, seconds: float) -> SchedulerSummary:
    loops = set(s.loop_dims)
    tilable = max((len([d for d in b.dims if d in loops]) for b in s.bands if b.permutable), default=0)
    first_loop = min(loops) if loops else None
    split = next((d for d in range(s.n_dims) if s.is_scalar(d)
                  and len({const_value(a[d]) for a in s.affs.values()}) > 1), None)
    shared = len([d for d in loops if split is None or d < split])
    fusion = ("one statement" if len(s.scop.statements) == 1 else
              "all statements fused" if split is None or split > max(loops, default=-1)
              else f"statements share {shared} outer loop{'s' if shared != 1 else ''}, then split")
    return SchedulerSummary(name, seconds, s.text(), is_legal(s), tilable, s.parallel_dims,
                            first_loop is not None and first_loop in s.parallel_dims,
                            {st.name: s.expressions(st.name) for st in s.scop.statements}, fusion)


@budgeted("the comparison of the schedulers")
def compare_schedulers(scop: Scop, deps: DependenceGraph | None = None) -> SchedulerComparison:
    """Run both schedulers on ``scop`` and report how their answers differ (bands, parallelism, rows)."""
    dl = dependences(scop, deps)
    t0 = time.perf_counter()
    p = pluto_schedule(scop, dl).schedule
    t1 = time.perf_counter()
    i = isl_schedule(scop, dl)
    t2 = time.perf_counter()
    a, b = _summary("pluto", p, t1 - t0), _summary("isl", i, t2 - t1)
    diffs = []
    if a.tilable != b.tilable:
        diffs.append(f"largest tilable band: pluto {a.tilable} loops, isl {b.tilable}")
    if a.outer_parallel != b.outer_parallel:
        diffs.append(f"outermost loop parallel: pluto {a.outer_parallel}, isl {b.outer_parallel}")
    if a.fusion != b.fusion:
        diffs.append(f"fusion: pluto {a.fusion}; isl {b.fusion}")
    if len(a.parallel) != len(b.parallel):
        diffs.append(f"parallel loops: pluto {len(a.parallel)}, isl {len(b.parallel)}")
    for st in scop.statements:
        ha, hb = a.hyperplanes[st.name], b.hyperplanes[st.name]
        la = [x for x in ha if not x.lstrip("-").isdigit()]
        lb = [x for x in hb if not x.lstrip("-").isdigit()]
        if la != lb:
            diffs.append(f"{st.name}: pluto ({', '.join(la)}) vs isl ({', '.join(lb)})")
    return SchedulerComparison(scop.name, a, b, tuple(diffs))
