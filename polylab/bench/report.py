"""A benchmark report as a table, a JSON file and a bar chart.

The table has one row per case: kernel, variant, threads, median and minimum seconds, the speedup over the
original program compiled with ``gcc -O3`` (``gcc -O3 -march=native`` when the cases carry that flag; the
baseline row of each kernel shows its own times), and
whether the variant was verified. The chart shows, per kernel, one bar per verified variant: its speedup
(1.0 is the baseline, drawn as a line); a variant that failed verification gets no bar but a red ``x`` and
the word "unverified", an illegal one the word "illegal", so nothing unverified can look like a win.

:func:`format_table` is registered with :mod:`polylab.render` as the text form of a
:class:`~polylab.bench.runner.BenchReport` (``polylab/bench/__init__.py`` imports this module).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from polylab import render
from polylab.bench.runner import BenchReport, CaseResult, baseline_compiler
from polylab.bench.spec import short_label


def format_seconds(v: float | None) -> str:
    """``1.234 s``, ``56.7 ms`` or ``8.9 us`` (``-`` for None)."""
    if v is None:
        return "-"
    if v < 1e-3:
        return f"{v * 1e6:.1f} us"
    if v < 1.0:
        return f"{v * 1e3:.1f} ms"
    return f"{v:.3f} s"


def _speedup_text(sp: float | None) -> str:
    if sp is None:
        return "-"
    return f"{sp:.2f}x" if sp >= 0.1 else f"{sp:.3g}x"


def _verified_text(r: CaseResult) -> str:
    if r.status == "verified":
        return "yes"
    if r.status == "unverified":
        return "NO (output differs)"
    return r.status


def compiled_with(report: BenchReport, kernel: str | None = None) -> str:
    """How the baseline of ``kernel`` (of every kernel: None) was compiled, in words: ``gcc -O3``, or
    ``gcc -O3 -march=native`` when its cases carry that flag (:attr:`~polylab.bench.sweep.Case.flags`)."""
    flags: list[str] = []
    for r in report.results:
        if kernel is None or r.case.kernel == kernel:
            flags += [f for f in r.case.flags if f not in flags]
    return baseline_compiler(flags)


def rows(report: BenchReport, *, width: int = 48) -> list[list[str]]:
    """The table's rows as text cells (the baseline of each kernel first)."""
    out: list[list[str]] = []
    for k in report.kernels:
        base = report.baselines.get(k)
        out.append([k, f"original, {compiled_with(report, k)} (baseline)", "1",
                    format_seconds(base.median if base else None),
                    format_seconds(base.min if base else None), "1.00x" if base else "-", "reference"])
        for r in report.results:
            if r.case.kernel != k:
                continue
            sp = r.speedup
            threads = str(r.case.threads or "default") if r.parallel is not False else "1 (seq)"
            out.append([k, short_label(r.case.label, width), threads,
                        format_seconds(r.seconds.median if r.seconds else None), format_seconds(r.seconds.min if r.seconds else None),
                        _speedup_text(sp), _verified_text(r)])
    return out


HEADER = ["kernel", "variant", "threads", "median", "min", "speedup", "verified"]

#: what every harness-mode table says of its baseline (issue 31: PolyBench's bicg took 16.95 ms as written,
#: 4.24 ms with restrict added)
RESTRICT_NOTE = ("baseline: the region's own text in polylab's harness, its arrays restrict parameters of the "
                 "kernel, which the user's program may not have; `polylab bench FILE.c --own-main` times the "
                 "program as written")


@render.text.register
def format_table(report: BenchReport, *, width: int = 48) -> str:
    """The report as an aligned text table, followed by the reasons of the cases that were not timed."""
    body = rows(report, width=width)
    widths = [max(len(HEADER[c]), *(len(r[c]) for r in body)) if body else len(HEADER[c])
              for c in range(len(HEADER))]
    right = {2, 3, 4, 5}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    lines = [line(HEADER), line(["-" * w for w in widths])]
    lines += [line(r) for r in body]
    lines.append(RESTRICT_NOTE)
    notes = [r for r in report.results if r.status != "verified"]
    if notes:
        lines.append("")
        for r in notes:
            why = r.reason or ""
            if r.first_difference:
                why += f" (first difference: {r.first_difference})"
            lines.append(f"{r.case.kernel} [{short_label(r.case.label, width)}]: {r.status}: {why}")
    for k in report.kernels:
        b = report.best(k)
        if b is not None:
            how = "sequential code" if b.parallel is False else f"{b.case.threads or 'default'} thread(s)"
            lines.append(f"best for {k}: {b.case.label} ({how}): "
                         f"{_speedup_text(b.speedup)} over {compiled_with(report, k)}")
    return "\n".join(lines)


def write_json(report: BenchReport, path: str | os.PathLike[str]) -> Path:
    """Write :meth:`BenchReport.to_json` to ``path`` (indented); returns the path."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return p


def chart(report: BenchReport, *, title: str | None = None):
    """A matplotlib figure: speedup bars per variant, grouped by kernel (module text)."""
    import matplotlib
    from matplotlib.figure import Figure   # no pyplot: no global state, no display needed

    kernels = list(report.kernels)
    def legend(r: CaseResult) -> str:
        threads = "seq" if r.parallel is False else f"x{r.case.threads or 'd'}"
        return f"{short_label(r.case.label, 40)} ({threads})"

    labels: list[str] = []
    for r in report.results:
        if legend(r) not in labels:
            labels.append(legend(r))
    fig = Figure(figsize=(max(6.0, 1.2 + 0.5 * len(kernels) * max(1, len(labels))), 4.8), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(1, len(labels))
    cmap = matplotlib.colormaps.get_cmap("tab20")
    speedups = [r.speedup for r in report.results if r.speedup is not None]
    ymax = max([1.0, *speedups])
    ymin = min([1.0, *speedups])
    bottom = ymin / 2 if ymin < 0.1 else 0.02
    for li, lab in enumerate(labels):
        xs, ys = [], []
        for ki, k in enumerate(kernels):
            for r in report.results:
                if r.case.kernel != k or legend(r) != lab:
                    continue
                x = ki + (li - (len(labels) - 1) / 2) * width
                if r.speedup is not None:
                    xs.append(x)
                    ys.append(r.speedup)
                    ax.text(x, r.speedup, _speedup_text(r.speedup), ha="center", va="bottom", fontsize=7)
                else:
                    mark = "unverified" if r.status == "unverified" else r.status
                    ax.plot([x], [bottom], marker="x", color="red" if r.status == "unverified" else "gray")
                    ax.text(x, bottom * 1.5, mark, rotation=90, ha="center", va="bottom", fontsize=7,
                            color="red" if r.status == "unverified" else "gray")
        ax.bar(xs, ys, width=width * 0.95, label=lab, color=cmap(li % 20))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    if ymin < 0.1:  # a point wavefront can be 100x slower: a log scale keeps every bar readable
        ax.set_yscale("log")
        ax.set_ylim(ymin / 3, ymax * 2)
    else:
        ax.set_ylim(0, ymax * 1.2)
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels)
    ax.set_ylabel(f"speedup over {compiled_with(report)} of the original")
    ax.set_title(title or "polylab bench: verified variants (no bar: not verified)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def write_chart(report: BenchReport, path: str | os.PathLike[str], *, title: str | None = None) -> Path:
    """Save :func:`chart` as an image (PNG, SVG or PDF by the file's suffix); returns the path."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    fig = chart(report, title=title)
    fig.savefig(p, bbox_inches="tight")
    return p
