"""The engine's own speed: CPU seconds of a schedule search (``polylab bench --search-time``).

For every kernel and every spec (``optimize(1)``, ``optimize(2)`` by default) the file is parsed anew, so no
analysis is carried over from an earlier run, and the spec is read and gated exactly as a compiled variant
is (:func:`polylab.bench.spec.prepare_variant`): the source order's dependence analysis, the search, the
storage steps and the final legality check are all counted; parsing is not. The time is CPU time, the
process's own (:func:`time.process_time`, which includes isl's C code) plus that of child processes that
ended meanwhile (the contraction's bounded time orders run in one), so another process on a shared machine
does not inflate it the way it inflates wall-clock time. Each measurement is the smallest of ``runs``
searches: the search is deterministic, so the smallest is the one least disturbed.

Nothing is compiled or run; these are the figures of the optimizer issue's "engine speed" targets
(every PolyBench-style kernel under 1 s, median 0.3 s; deriche-sized programs under 2 s).
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from polylab.bench.machine import detect_machine
from polylab.bench.spec import prepare_variant, short_label
from polylab.bench.sweep import Kernel
from polylab.render import text_table
from polylab.model.memo import clear_all

__all__ = ["DEFAULT_SEARCH_SPECS", "SearchTime", "cpu_seconds", "search_table", "search_time", "search_times"]

#: the specs timed when none are given
DEFAULT_SEARCH_SPECS: tuple[str, ...] = ("optimize(1)", "optimize(2)")


@dataclass(frozen=True)
class SearchTime:
    """CPU seconds of ``spec`` on ``kernel`` (``runs``: every run; ``seconds``: the smallest)."""

    kernel: str
    spec: str
    statements: int
    runs: tuple[float, ...]

    @property
    def seconds(self) -> float:
        return min(self.runs)

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "spec": self.spec, "statements": self.statements,
                "seconds": self.seconds, "runs": list(self.runs)}


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and by its children that have ended (user + system)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def search_time(load: Callable[[], Kernel], spec: str, *, runs: int = 3) -> SearchTime:
    """Search ``spec`` ``runs`` times, each on a kernel ``load`` parses anew (module text).

    A spec the kernel refuses (an unknown step, an illegal schedule) raises the
    :class:`~polylab.errors.PolylabError` that :func:`prepare_variant` raises."""
    if runs < 1:
        raise ValueError(f"runs={runs} must be at least 1")
    machine = detect_machine()
    times = []
    kernel = None
    for _ in range(runs):
        kernel = load()
        clear_all()   # every memo of the engine: equal SCoPs parsed anew would find the answers of the run before
        t0 = cpu_seconds()
        prepare_variant(kernel.scop, spec, machine)
        times.append(cpu_seconds() - t0)
    assert kernel is not None
    return SearchTime(kernel.name, spec, len(kernel.scop.statements), tuple(times))


def search_times(loaders: Sequence[Callable[[], Kernel]], specs: Sequence[str] = DEFAULT_SEARCH_SPECS, *,
                 runs: int = 3, on_start: Callable[[int, str], None] | None = None,
                 on_result: Callable[[SearchTime], None] | None = None) -> list[SearchTime]:
    """:func:`search_time` for every kernel (a loader each) and every spec, kernel by kernel;
    ``on_start(k, spec)`` is called before the search of ``spec`` on the ``k``-th kernel, ``on_result``
    with each result (a progress bar hooks in there)."""
    out = []
    for k, load in enumerate(loaders):
        for spec in specs:
            if on_start:
                on_start(k, spec)
            out.append(search_time(load, spec, runs=runs))
            if on_result:
                on_result(out[-1])
    return out


def search_table(results: Sequence[SearchTime]) -> str:
    """A kernel per row, a spec per column (CPU seconds, the smallest run), then the median and the largest
    of each column."""
    specs = list(dict.fromkeys(r.spec for r in results))
    kernels = list(dict.fromkeys(r.kernel for r in results))
    cell = {(r.kernel, r.spec): r for r in results}
    stmts = {r.kernel: r.statements for r in results}
    rows = [[k, stmts[k], *(f"{cell[k, s].seconds:.2f}" if (k, s) in cell else "-" for s in specs)]
            for k in kernels]
    for name, fn in (("median", statistics.median), ("largest", max)):
        col = [[cell[k, s].seconds for k in kernels if (k, s) in cell] for s in specs]
        rows.append([name, "", *(f"{fn(c):.2f}" if c else "-" for c in col)])
    headers = ["kernel", "statements", *(f"{short_label(s, 24)} (CPU s)" for s in specs)]
    cpus = os.cpu_count()
    return (text_table(headers, rows, indent="") +
            f"\nCPU seconds of each search (the smallest of {len(results[0].runs) if results else 0} runs, each on a "
            f"newly parsed kernel; dependence analysis, search, storage steps and legality check included; "
            f"{cpus} CPUs here)")
