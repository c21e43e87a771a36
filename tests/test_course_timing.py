"""What the labs rely on beside the checks: a speedup is refused from runs shorter than the timer resolves
(``polylab.experiment.MIN_TIMED_SECONDS``), a timing chart shows no ratio for such runs, ``%polyrun`` charts
a kernel only with its own original, and the space-time views of lab 3 are readable and exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

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
