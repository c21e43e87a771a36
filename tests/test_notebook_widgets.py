"""Explorers driven by setting widget values; assertions on what they show (verdict, points, colours)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import polylab  # noqa: E402
from polylab.notebook.widgets import DependenceExplorer, ScheduleExplorer, TilingExplorer  # noqa: E402

PNG = b"\x89PNG"


@pytest.fixture(scope="module")
def sweep():
    return polylab.parse_file(polylab.example_path("sweep2d.c")).scop


@pytest.fixture(scope="module")
def sl3():
    return polylab.parse_file(polylab.example_path("sl3.sy")).scop


@pytest.fixture(scope="module")
def sweep_explorer(sweep):
    return ScheduleExplorer(sweep, params={"N": 17})


def set_coeffs(e, coeffs):
    for s, v in zip(e.sliders, coeffs):
        s.value = v


def test_schedule_explorer_follows_the_sliders(sweep_explorer):
    e = sweep_explorer
    assert e.state["n_points"] == 16 * 16
    assert bytes(e.image.value).startswith(PNG)
    set_coeffs(e, (1, 1))
    assert e.state["legal"] and e.state["parallel"]
    assert "legal wavefront" in e.verdict.value and e.state["waves"] == 31
    assert e.state["theta"] == "i + j"
    before = e.image.value
    set_coeffs(e, (1, -1))
    assert not e.state["legal"]
    assert "illegal" in e.verdict.value and "polylab-bad" in e.verdict.value
    assert e.state["violating_pair"] == ((1, 1), (1, 2))
    assert e.image.value != before  # the one picture was redrawn
    set_coeffs(e, (1, 0))
    assert e.state["legal"] and not e.state["parallel"]
    assert "not a parallel wavefront" in e.verdict.value
    assert e.last_error is None and e.error.value == ""


def test_schedule_explorer_colours_are_the_waves(sweep_explorer):
    e = sweep_explorer
    set_coeffs(e, (1, 1))
    cols = e.state["colors"]
    pts = e.points
    theta = pts @ np.array([1, 1])
    for t in (2, 17, 32):
        assert len({tuple(np.round(c, 5)) for c in cols[theta == t]}) == 1
    assert not np.allclose(cols[theta == 2][0], cols[theta == 32][0])


def test_one_figure_is_updated_in_place(sweep_explorer):
    e = sweep_explorer
    fig, artist = e.fig, e.sp._points[0]
    set_coeffs(e, (2, 1))
    set_coeffs(e, (0, 1))
    assert e.fig is fig and e.sp._points[0] is artist
    assert len(e.fig.axes) == 2  # the axes and its colorbar, never more


@settings(max_examples=12, deadline=None)
@given(a=st.integers(-2, 3), b=st.integers(-2, 3))
def test_verdict_matches_the_distance_vectors(sweep_explorer, a, b):
    """sweep2d has distances (1, 0) and (0, 1): legal iff a, b >= 0; parallel waves iff a, b >= 1."""
    e = sweep_explorer
    set_coeffs(e, (a, b))
    assert e.state["legal"] == (a >= 0 and b >= 0)
    assert e.state["parallel"] == (a >= 1 and b >= 1)


def test_sl3_explorer(sl3):
    e = ScheduleExplorer(sl3, params={"n": 8})
    assert e.stmt.name == "S1" and e.sp.dims == 3
    assert e.state["n_points"] == 6 ** 3
    set_coeffs(e, (1, 1, 1))
    assert e.state["legal"] and e.state["parallel"]
    set_coeffs(e, (1, 1, 0))
    assert not e.state["parallel"]  # distance (0, 0, 1) stays inside a wave
    set_coeffs(e, (1, -1, 1))
    assert not e.state["legal"]


def test_tiling_explorer(sweep):
    t = TilingExplorer(sweep, params={"N": 9}, sizes=[4, 4])
    assert t.state["legal"] and t.state["waves_parallel"]
    assert t.state["n_tiles"] == 9 and t.state["n_waves"] == 5
    assert len(t.sp._tiles[0].get_paths()) == 9
    t.sliders[0].value = 8
    assert t.state["n_tiles"] == 6  # 1..8 meets tiles 0 and 1 along i, 0..2 along j
    t.sliders[0].value = 3
    t.sliders[1].value = 3
    cols = t.state["colors"]
    w = np.floor_divide(t.points, 3).sum(axis=1)
    assert len({tuple(np.round(c, 5)) for c in cols[w == 2]}) == 1  # one colour per tile wave
    assert not np.allclose(cols[w == 0][0], cols[w == w.max()][0])
    assert bytes(t.image.value).startswith(PNG) and t.last_error is None


def test_tiling_explorer_refuses_what_needs_a_skew():
    src = """double a[N][N];
for (i = 1; i < N; i++)
  for (j = 0; j < N - 1; j++)
    a[i][j] = a[i - 1][j + 1];
"""
    scop = polylab.parse(src).scop
    t = TilingExplorer(scop, params={"N": 9}, sizes=[3, 3])
    assert not t.state["legal"] and "illegal tiling" in t.verdict.value
    assert t.state["violating_pair"] is not None
    t.skew_slider.value = 1  # j' = j + i makes the distance (1, 0): tiling becomes legal
    assert t.state["legal"], t.state["message"]


def test_errors_in_callbacks_are_shown(sweep_explorer, monkeypatch):
    e = sweep_explorer

    def boom():
        raise RuntimeError("the picture broke")

    monkeypatch.setattr(e, "update", boom)
    e.sliders[0].value = 3 if e.sliders[0].value != 3 else 2
    assert isinstance(e.last_error, RuntimeError)
    assert "the picture broke" in e.error.value
    monkeypatch.undo()
    e.sliders[0].value = 1
    assert e.last_error is None and e.error.value == ""


def test_dependence_explorer(sweep):
    d = DependenceExplorer(sweep)
    refs = {label: k for label, k in d.first.options}
    d.first.value = refs["S0: a[i][j] (write)"]
    d.second.value = refs["S0: a[i - 1][j] (read)"]
    assert d.state["exact"].startswith("dependent") and "flow" in d.state["kinds"]
    assert "GCD" in d.textbook.value or "gcd" in d.textbook.value
    assert "exact" in d.textbook.value.lower()
    assert d.last_error is None


def test_dependence_explorer_independent_pair():
    src = """double a[N];
for (i = 0; i < N; i++)
  a[2 * i] = a[2 * i + 1];
"""
    d = DependenceExplorer(polylab.parse(src).scop)
    refs = {label.rsplit("(", 1)[1]: k for label, k in d.first.options}  # by kind: "write)", "read)"
    d.first.value = refs["write)"]
    d.second.value = refs["read)"]
    assert d.state["exact"].startswith("independent")
    assert "independent" in d.textbook.value  # the GCD test proves it too


def test_widget_displays(sweep_explorer):
    bundle = sweep_explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


@pytest.mark.parametrize("name", [n for n in polylab.examples()])
def test_explorers_on_the_corpus(name):
    """Every explorer opens on every corpus kernel it can draw, follows a slider and shows no error."""
    from polylab.errors import ModelError

    scop = polylab.parse_file(polylab.example_path(name)).scop
    params = {p: 5 for p in scop.parameters}
    if all(len(s.iterators) > 3 for s in scop.statements):
        with pytest.raises(ModelError, match="three loop dimensions"):
            ScheduleExplorer(scop, params=params)
    else:
        e = ScheduleExplorer(scop, params=params)
        e.sliders[-1].value = 1
        t = TilingExplorer(scop, params=params)
        t.sliders[0].value = 2
        assert e.last_error is None and t.last_error is None
        assert e.state["n_points"] == len(e.points) > 0
        assert ("illegal" in t.state["message"]) == (not t.state["legal"])
    d = DependenceExplorer(scop)
    d.second.value = (d.second.value + 1) % len(d.refs)
    assert d.last_error is None and d.state["exact"]
