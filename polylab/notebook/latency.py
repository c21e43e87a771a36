"""Latency of the notebook layer: ``python -m polylab.notebook.latency [--json] [--updates N]``.

* explorer redraw latency: the seconds from a slider change to the new picture and verdict (the
  explorer's ``last_latency``: exact isl checks, artist updates and the PNG render), on a 16 x 16 domain
  (sweep2d at N = 17) and on sl3 at n = 8; the target is under 100 ms per update;
* magic latency: ``%%scop`` (parse, dependences, summary and pictures) and ``%%schedule`` (recipe, legality,
  code, picture) on every corpus kernel, run through an IPython shell, display included.

Figures are medians over repeated runs (and the 90th percentile / maximum for the explorers).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

from polylab.corpus import example_path, examples  # noqa: E402
from polylab.frontend import parse_file  # noqa: E402

#: schedules tried in the %%schedule measurement (the first that the engine accepts for a kernel is timed)
SCHEDULE_SPECS = ("wavefront", "auto")


def _stats(xs: list[float], cpu: list[float] | None = None) -> dict[str, float]:
    xs = sorted(xs)
    out = {"median_ms": 1e3 * statistics.median(xs), "p90_ms": 1e3 * xs[min(len(xs) - 1, int(0.9 * len(xs)))],
           "max_ms": 1e3 * xs[-1], "updates": len(xs)}
    if cpu:
        out["cpu_median_ms"] = 1e3 * statistics.median(cpu)
    return out


def explorer_latency(updates: int = 30) -> dict[str, dict[str, float]]:
    """Per-update latency of each explorer on the two reference domains."""
    from polylab.notebook.widgets import DependenceExplorer, ScheduleExplorer, TilingExplorer

    out: dict[str, dict[str, float]] = {}
    sweep = parse_file(example_path("sweep2d.c")).scop
    sl3 = parse_file(example_path("sl3.sy")).scop
    cases = [("sweep2d 16x16", sweep, {"N": 17}), ("sl3 n=8", sl3, {"n": 8})]
    for label, scop, params in cases:
        e = ScheduleExplorer(scop, params=params)
        coeffs = itertools.cycle(range(-1, 3))
        e.latencies.clear()
        e.cpu_latencies.clear()
        for _ in range(updates):
            s = e.sliders[_ % len(e.sliders)]
            v = next(coeffs)
            s.value = v if v != s.value else v + 1
        out[f"schedule explorer, {label}"] = _stats(e.latencies, e.cpu_latencies[-updates:])
        t = TilingExplorer(scop, params=params)
        sizes = itertools.cycle(range(2, 7))
        t.latencies.clear()
        t.cpu_latencies.clear()
        for _ in range(updates):
            s = t.sliders[_ % len(t.sliders)]
            v = next(sizes)
            s.value = v if v != s.value else v + 1
        out[f"tiling explorer, {label}"] = _stats(t.latencies, t.cpu_latencies)
        d = DependenceExplorer(scop)
        n = len(d.refs)
        d.latencies.clear()
        for k in range(min(updates, 2 * n)):
            if k % 2:
                d.second.value = (d.second.value + 1) % n
            else:
                d.first.value = (d.first.value + 1) % n
        out[f"dependence explorer, {label}"] = _stats(d.latencies)
    return out


def magic_latency(repeat: int = 3) -> dict[str, dict[str, Any]]:
    """Median seconds of ``%%scop`` and ``%%schedule`` per corpus kernel (through an IPython shell)."""
    from IPython.testing.globalipapp import get_ipython
    from IPython.utils.capture import capture_output

    ip = get_ipython()
    ip.run_line_magic("load_ext", "polylab")
    out: dict[str, dict[str, Any]] = {}
    for name in examples():
        src = example_path(name).read_text()
        times = []
        for _ in range(repeat):
            with capture_output():
                t0 = time.perf_counter()
                ip.run_cell_magic("scop", "lat_scop", src)
                times.append(time.perf_counter() - t0)
        row: dict[str, Any] = {"scop_ms": 1e3 * statistics.median(times)}
        for spec in SCHEDULE_SPECS:
            times = []
            for _ in range(repeat):
                with capture_output() as cap:
                    t0 = time.perf_counter()
                    ip.run_cell_magic("schedule", "lat_scop lat_sched", spec)
                    times.append(time.perf_counter() - t0)
            text = "".join(o.data.get("text/plain", "") for o in cap.outputs)
            if "error" not in text.split("\n", 1)[0]:
                row["schedule"] = spec
                row["schedule_ms"] = 1e3 * statistics.median(times)
                break
        out[name] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polylab.notebook.latency", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print a JSON report")
    parser.add_argument("--updates", type=int, default=30, help="slider updates per explorer")
    parser.add_argument("--repeat", type=int, default=3, help="runs per magic and kernel")
    parser.add_argument("--no-magics", action="store_true", help="measure the explorers only")
    parser.add_argument("-o", "--output", help="also write the JSON report to this file")
    args = parser.parse_args(argv)
    import os

    report: dict[str, Any] = {"load_average": os.getloadavg()[0], "cpus": os.cpu_count(),
                              "explorers": explorer_latency(args.updates)}
    if not args.no_magics:
        report["magics"] = magic_latency(args.repeat)
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"explorer redraw latency per update (target < 100 ms); load average {report['load_average']:.1f} "
          f"on {report['cpus']} CPUs")
    print(f"  {'explorer':42} {'median':>8} {'p90':>8} {'max':>8} {'CPU':>8}")
    for k, v in report["explorers"].items():
        flag = "" if v["median_ms"] < 100 else "  (over target)"
        cpu = f"{v['cpu_median_ms']:7.1f}ms" if "cpu_median_ms" in v else " " * 9
        print(f"  {k:42} {v['median_ms']:7.1f}ms {v['p90_ms']:7.1f}ms {v['max_ms']:7.1f}ms {cpu}{flag}")
    if "magics" in report:
        print("magic latency (median, display included)")
        print(f"  {'kernel':14} {'%%scop':>9} {'%%schedule':>11}  schedule")
        for k, v in report["magics"].items():
            sched = f"{v['schedule_ms']:9.0f}ms  {v['schedule']}" if "schedule_ms" in v else "        -  (none accepted)"
            print(f"  {k:14} {v['scop_ms']:7.0f}ms {sched}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
