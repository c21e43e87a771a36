"""What the labs rely on beside the checks: a speedup is refused from runs shorter than the timer resolves
(``polylab.experiment.MIN_TIMED_SECONDS``), a timing chart shows no ratio for such runs, ``%polyrun`` charts
a kernel only with its own original, and the space-time views of lab 3 are readable and exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from polylab.experiment import MIN_TIMED_SECONDS, RunReport, unresolved
from polylab.frontend import parse
from polylab.notebook import plots
from polylab.notebook.course import allocation, space_time_diagram
from polylab.schedule import parse_schedule
from polylab.toolchain import Timing

SWEEP = """double a[N][N];
for (i = 1; i < N; i++)
  for (j = 1; j < N; j++)
    a[i][j] = a[i - 1][j] + a[i][j - 1];
"""


def _report(variant: float, original: float) -> RunReport:
    return RunReport("openmp", {"N": 8}, 2, Timing.from_runs([variant] * 3, threads=2), Timing.from_runs([original] * 3),
                     None)


def test_a_speedup_of_short_runs_is_refused_with_the_reason():
    r = _report(0.296, 14.3e-6)          # the "296 ms vs 14.3 µs, 0.00x"
    assert r.speedup is None and "14 µs is shorter than the 1 ms" in r.speedup_refused
    assert "speedup : not reported" in str(r) and "0.00x" not in str(r)
    assert r.to_json()["speedup"] is None and "speedup_refused" in r.to_json()


def test_a_speedup_of_long_runs_is_reported():
    r = _report(0.05, 0.1)
    assert r.speedup == pytest.approx(2.0) and r.speedup_refused is None
    assert "speedup : 2.00x" in str(r)


@given(st.floats(1e-7, 1.0), st.floats(1e-7, 1.0))
def test_refusal_is_exactly_below_the_threshold(a, b):
    refused = unresolved(Timing.from_runs([a]), Timing.from_runs([b]))
    assert (refused is not None) == (min(a, b) < MIN_TIMED_SECONDS)


def test_timing_chart_shows_no_ratio_for_unresolved_runs():
    fig = plots.timing_chart({"original": 10e-6, "variant": 5e-6}, baseline="original")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert not any("x)" in t for t in texts), texts
    fig = plots.timing_chart({"original": 0.1, "variant": 0.05}, baseline="original")
    assert any("(2.00x)" in t.get_text() for t in fig.axes[0].texts)


def test_polyrun_charts_only_the_runs_of_the_same_original():
    """Two kernels (or two sizes) in one session: a run's chart holds only the runs of its own original."""
    pytest.importorskip("IPython")
    from polylab.notebook.magics import runs_of

    runs = {"jac_tw (openmp)": "J", "wave (c)": "S1", "wave (c) big": "S2"}
    origins = {"jac_tw (openmp)": ("jacobi", (("N", 64),)), "wave (c)": ("sweep", (("N", 200),)),
               "wave (c) big": ("sweep", (("N", 400),))}
    assert runs_of(runs, origins, ("sweep", (("N", 200),))) == {"wave (c)": "S1"}
    assert runs_of(runs, origins, ("jacobi", (("N", 64),))) == {"jac_tw (openmp)": "J"}


def test_allocation_is_readable():
    scop = parse(SWEEP).scop
    wave = parse_schedule(scop, "wavefront; parallel")
    a = allocation(wave, 4)
    assert a.rows == (("S0", "i + j", "j", "floor(j / 4)"),)
    assert "Map(" not in str(a) and "floor(j / 4)" in a._repr_html_() and "<details>" in a._repr_html_()


def test_allocation_needs_a_space_dimension():
    from polylab.errors import ScheduleError

    scop = parse(SWEEP).scop
    with pytest.raises(ScheduleError, match="no space"):
        allocation(parse_schedule(scop, "{ S0[i, j] -> [i, j] }"), 4)


def test_space_time_diagram_counts_every_instance_once():
    scop = parse(SWEEP).scop
    wave = parse_schedule(scop, "wavefront; parallel")
    fig = space_time_diagram(wave, 4, {"N": 12})
    image = fig.axes[0].images[0].get_array()
    grid = np.ma.filled(image, 0)
    assert grid.sum() == 11 * 11                      # every instance of 1 <= i, j <= 11
    assert grid.shape == (3, 21)                      # processors floor(j / 4) = 0..2, waves t = 2..22
    assert grid[1, 9 - 2] == 4                        # processor 1 at t = 9: j = 4..7


# -- honest timing: intervals, the table and its chart, the roofline ------------------------------------------

from polylab.experiment import MIN_INTERVAL_RUNS, median_interval, speedup_interval  # noqa: E402
from polylab.notebook.measured import KernelRate, roofline, timing_table  # noqa: E402


@settings(max_examples=30)
@given(st.lists(st.floats(0.01, 0.02), min_size=5, max_size=12),
       st.lists(st.floats(0.01, 0.02), min_size=5, max_size=12))
def test_the_speedup_lies_inside_its_interval(base, variant):
    iv = speedup_interval(base, variant)
    assert iv is not None and iv.low <= iv.ratio <= iv.high
    assert iv.ratio == pytest.approx(float(np.median(base) / np.median(variant)))
    assert iv.significant == (iv.low > 1 or iv.high < 1)
    assert ("no measurable difference" in iv.text()) == (not iv.significant)
    assert iv == speedup_interval(base, variant)        # a fixed seed: the same runs, the same interval


def test_separated_runs_are_significant_and_overlapping_ones_are_not():
    rng = np.random.default_rng(7)
    base = 0.020 * (1 + 0.02 * rng.random(10))
    fast = 0.010 * (1 + 0.02 * rng.random(10))
    iv = speedup_interval(base, fast)
    assert iv.significant and iv.verdict == "faster" and 1.9 < iv.low <= iv.high < 2.1
    assert str(iv).startswith(f"{iv.ratio:.2f}x, 95 % interval {iv.low:.2f}-{iv.high:.2f}x")
    same = speedup_interval(base, base[::-1] * 1.001)
    assert not same.significant and same.verdict == "no measurable difference"
    assert same.text().startswith("no measurable difference (")
    assert str(same) == same.text(verdict=False) and "measurable" not in str(same)   # printed: the numbers only
    assert speedup_interval(fast, base).verdict == "slower"


def test_too_few_runs_give_no_interval():
    assert speedup_interval([0.1] * (MIN_INTERVAL_RUNS - 1), [0.1] * 10) is None
    assert median_interval([0.1, 0.2]) is None
    lo, hi = median_interval([0.1, 0.11, 0.12, 0.13, 0.14, 0.15])
    assert 0.1 <= lo <= hi <= 0.15


def test_run_report_has_its_interval_only_when_a_speedup_is_reported():
    r = RunReport("c", {"N": 8}, None, Timing.from_runs([0.05] * 6), Timing.from_runs([0.1] * 6), None)
    assert r.interval is not None and r.interval.ratio == pytest.approx(2.0)
    assert _report(0.296, 14.3e-6).interval is None   # refused: too short


def test_timing_table_and_its_chart_show_the_same_runs():
    rng = np.random.default_rng(3)
    runs = {"original": list(0.02 * (1 + 0.01 * rng.random(10))),
            "tiles": list(0.01 * (1 + 0.01 * rng.random(10))),
            "same": list(0.02 * (1 + 0.01 * rng.random(10)))}
    table = timing_table(runs, baseline="original")
    assert [r.name for r in table.rows] == ["original", "tiles", "same"]
    text = table.text()
    assert "(baseline)" in text and "95 % interval" in text and "no measurable difference" in text
    assert "<table>" in table._repr_html_()
    fig = table.chart()
    ax = fig.axes[0]
    medians = sorted(p.get_width() for p in ax.patches)
    assert medians == pytest.approx(sorted(float(np.median(v)) * 1e3 for v in runs.values()))  # ms, same runs
    labels = [t.get_text() for t in ax.texts]
    assert any(f"{table.row('tiles').speedup.ratio:.2f}x" in t for t in labels)
    assert any("no measurable difference" in t for t in labels)


def test_timing_table_refuses_unresolved_speedups_and_unknown_baselines():
    from polylab.errors import ModelError

    table = timing_table({"original": [20e-6] * 6, "variant": [10e-6] * 6}, baseline="original")
    assert table.row("variant").speedup is None and "shorter than" in table.row("variant").refused
    with pytest.raises(ModelError, match="baseline"):
        timing_table({"a": [0.1] * 5}, baseline="b")


def test_roofline_places_kernels_under_the_measured_roofs():
    from polylab.experiment.roofs import Roofs

    roofs = Roofs(10e9, 20e9, 2, Timing.from_runs([0.0064] * 6), Timing.from_runs([0.01] * 6), 64_000_000,
                  200_000_000)
    assert roofs.ridge() == pytest.approx(2.0) and roofs.bound(0.5) == pytest.approx(5e9)
    jacobi = KernelRate("jacobi", 6_000_000, 16_000_000, Timing.from_runs([0.004] * 6))
    assert jacobi.intensity == pytest.approx(0.375) and jacobi.bandwidth == pytest.approx(4e9)
    rl = roofline(roofs, [jacobi])
    assert "40%" in rl.text() and "jacobi" in rl._repr_html_()
    fig = rl.chart()
    assert fig.axes[0].get_xscale() == "log" and any("jacobi" in t.get_text() for t in fig.axes[0].texts)


@pytest.mark.slow
def test_roofs_are_measured_on_this_machine():
    from polylab.experiment.roofs import measure_roofs
    from polylab.toolchain import c_compiler

    if c_compiler() is None:
        pytest.skip("no C compiler")
    roofs = measure_roofs(1, repeat=5, copy_elements=1 << 18, peak_steps=1 << 14)
    assert roofs.bandwidth > 1e8 and roofs.peak > 1e8 and len(roofs.copy.runs) == 5
    lo, hi = roofs.bandwidth_interval()
    assert lo <= roofs.bandwidth <= hi


def test_see_why_opens_only_once_the_answer_is_right(global_ipython):
    ip = global_ipython
    ip.run_line_magic("load_ext", "polylab")
    for name in ("Z_F", "Z_c"):
        ip.user_ns.pop(name, None)
    closed = ip.run_cell('%%see_why lab1.q1\n__see_why_ran = "yes"')
    assert closed.success and "__see_why_ran" not in ip.user_ns
    ip.user_ns.update(Z_F=[[0, 1]], Z_c=(0,))                 # answered, but wrong: still closed
    ip.run_cell('%%see_why lab1.q1\n__see_why_ran = "yes"')
    assert "__see_why_ran" not in ip.user_ns
    ip.user_ns.update(Z_F=[[1, 0]], Z_c=(-1,))
    ip.run_cell('%%see_why lab1.q1\n__see_why_ran = "yes"')
    assert ip.user_ns.pop("__see_why_ran") == "yes"
    ip.run_cell('%%see_why lab1.q1 lab1.q99\n__see_why_ran = "yes"')   # an unknown question never opens
    assert "__see_why_ran" not in ip.user_ns
