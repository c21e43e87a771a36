"""Pictures and their geometry: points and pairs enumerated by isl, exact schedule checks, figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import islpy as isl  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import polylab  # noqa: E402
from polylab.errors import ModelError  # noqa: E402
from polylab.notebook import geometry, plots  # noqa: E402
from polylab.notebook.capture import c_stderr  # noqa: E402
from polylab.notebook.display import ErrorBox, locate_in_cell  # noqa: E402
from polylab.errors import PolylabError, SourceLocation  # noqa: E402

DOM = isl.Set("[N] -> { S0[i, j] : 1 <= i < N and 1 <= j < N }")
R_I = isl.Map("[N] -> { S0[i, j] -> S0[i + 1, j] : 1 <= i < N - 1 and 1 <= j < N }")
R_J = isl.Map("[N] -> { S0[i, j] -> S0[i, j + 1] : 1 <= i < N and 1 <= j < N - 1 }")


def test_points_are_isl_points_in_order():
    pts = geometry.points(DOM, {"N": 4})
    assert pts.tolist() == [[i, j] for i in range(1, 4) for j in range(1, 4)]
    assert geometry.points(DOM, {"N": 1}).shape == (0, 2)


def test_unbounded_picture_is_a_user_error():
    with pytest.raises(ModelError, match="unbounded"):
        geometry.points(DOM)


def test_pairs_of_a_relation():
    src, dst = geometry.pairs(R_I, {"N": 4})
    assert len(src) == 2 * 3
    assert np.all(dst - src == [1, 0])


def test_picture_params_respect_the_context():
    sc = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    assert geometry.picture_params(sc) == {"N": 8}
    assert geometry.picture_params(sc, {"N": 5}) == {"N": 5}
    with pytest.raises(ModelError, match="no parameter named 'M'"):
        geometry.picture_params(sc, {"M": 3})
    ctx = sc.context.intersect_params(isl.Set("[N] -> { : N >= 20 }"))
    from dataclasses import replace

    assert geometry.picture_params(replace(sc, context=ctx)) == {"N": 20}


@pytest.mark.parametrize("rows,legal", [([[1, 1]], True), ([[1, 0]], True), ([[0, 1]], True),
                                        ([[1, -1]], False), ([[-1, 0]], False), ([[-1, 1]], False)])
def test_schedule_violations_are_exact(rows, legal):
    T = geometry.schedule_map(DOM, rows)
    found = _violations(T, 6)
    assert (not found) == legal
    for v in found:
        assert v.sink_time <= v.source_time  # the pair really is out of order
        step = (1, 0) if v.dependence.relation is R_I else (0, 1)
        assert tuple(np.array(v.sink_instance) - np.array(v.source_instance)) == step


def _violations(T, n):
    """The schedule layer's one check of ``T`` against R_I and R_J, at N = n (the explorers' use of it)."""
    from polylab.reference.builder import make_scop, statement
    from polylab.schedule import Schedule, violations
    from polylab.schedule.deps import Dep

    s0 = statement("S0", str(DOM), "A[i][j]", "A[i - 1][j] + A[i][j - 1]")
    scop = make_scop("sweep", [s0], arrays=[("A", "double", ("N", "N"))], schedule="[N] -> { S0[i, j] -> [i, j] }",
                     context=f"[N] -> {{ : N = {n} }}")
    deps = [Dep("flow", "S0", "S0", "A", R_I), Dep("flow", "S0", "S0", "A", R_J)]
    return violations(Schedule.from_maps(scop, {"S0": T}), deps)


@settings(max_examples=25, deadline=None)
@given(a=st.integers(-2, 2), b=st.integers(-2, 2))
def test_hyperplane_legality_matches_brute_force(a, b):
    """[a i + b j, i, j] is legal iff no dependent pair runs in the wrong order (checked point by point)."""
    T = geometry.schedule_map(DOM, [[a, b]])
    found = _violations(T, 5)
    brute = False
    for rel in (R_I, R_J):
        src, dst = geometry.pairs(rel, {"N": 5})
        for u, v in zip(src.tolist(), dst.tolist()):
            tu = (a * u[0] + b * u[1], u[0], u[1])
            tv = (a * v[0] + b * v[1], v[0], v[1])
            brute |= not (tu < tv)
    assert bool(found) == brute


def test_tile_rectangles_and_waves():
    pts = geometry.points(DOM, {"N": 9})  # 1..8 x 1..8
    rects, tcoord, waves = plots.tile_rectangles(pts, [4, 4])
    assert len(rects) == 9  # tiles 0..2 x 0..2 (points 1..8 meet tiles 0, 1 and 2)
    assert waves.min() == 0 and waves.max() == 4
    assert np.all(waves == tcoord.sum(axis=1))


def test_iteration_space_draws_every_point_and_arrows_by_kind():
    fig = plots.iteration_space(DOM, [("flow", R_I), ("anti", R_J)], params={"N": 6})
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(ax.collections[0].get_offsets()) == 25
    quivers = [c for c in ax.collections if c.__class__.__name__ == "Quiver"]
    colors = {tuple(np.round(q.get_facecolor()[0][:3], 3)) for q in quivers}
    assert colors == {tuple(np.round(to_rgba(plots.KIND_COLORS[k])[:3], 3)) for k in ("flow", "anti")}
    assert sum(len(q.U) for q in quivers) == 20 + 20


def test_wavefront_colours_follow_the_schedule():
    fig = plots.wavefront(DOM, isl.Map("[N] -> { S0[i, j] -> [i + j, i] }"), params={"N": 5})
    sc = fig.axes[0].collections[0]
    pts = sc.get_offsets()
    cols = sc.get_facecolors()
    by_wave: dict[int, set] = {}
    for (x, y), c in zip(pts, cols):
        by_wave.setdefault(int(x + y), set()).add(tuple(np.round(c, 4)))
    assert all(len(s) == 1 for s in by_wave.values())  # one colour per wave
    assert len({next(iter(s)) for s in by_wave.values()}) == len(by_wave)  # different waves differ


def test_violating_pair_is_marked():
    fig = plots.iteration_space(DOM, [("flow", R_J)], params={"N": 5}, highlight=((1, 1), (1, 2)))
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "violated" in texts


def test_3d_scatter_and_slices():
    d3 = isl.Set("[n] -> { S1[i, j, k] : 1 <= i < n - 1 and 1 <= j < n - 1 and 1 <= k < n - 1 }")
    r = isl.Map("[n] -> { S1[i, j, k] -> S1[i, j, k + 1] }").intersect_domain(d3).intersect_range(d3)
    fig = plots.iteration_space(d3, [("flow", r)], params={"n": 6})
    assert fig.axes[0].name == "3d"
    fig = plots.iteration_space(d3, [("flow", r)], params={"n": 6}, mode="slices")
    assert sum(ax.get_visible() for ax in fig.axes if ax.get_label() != "<colorbar>") == 4


def test_more_than_three_dimensions_is_refused():
    d4 = isl.Set("{ S0[a, b, c, d] : 0 <= a, b, c, d < 2 }")
    with pytest.raises(ModelError, match="4-dimensional"):
        plots.iteration_space(d4)


def test_dependence_graph_and_timing_chart():
    fig = plots.dependence_graph([("flow", isl.Map("{ S0[i] -> S1[i] }")),
                                  ("anti", isl.Map("{ S1[i] -> S0[i + 1] }"))])
    labels = {t.get_text() for t in fig.axes[0].texts}
    assert {"S0", "S1"} <= labels
    fig = plots.timing_chart({"original": [0.2, 0.21], "tiled": 0.05}, baseline="original")
    txt = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "4.1" in txt or "4.0" in txt  # speedup of about 4x is written on the bar


def test_c_stderr_is_captured():
    with c_stderr() as cap:
        isl.Set("{ [i] : 0 <= i < 3 }").dump()
    assert "0 <= i <= 2" in cap.text or "i >= 0" in cap.text


def test_error_box_maps_to_cell_lines():
    cell = "double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = b(a[i]);\n"
    err = PolylabError("bad call", location=SourceLocation(9, 10, "b(a[i])", "  a[i] = b(a[i]);"))
    moved = locate_in_cell(err, cell)
    assert moved.location.line == 3
    box = ErrorBox.of(err, cell)._repr_mimebundle_()
    assert "cell:3:10" in box["text/plain"] and "^~~~~~" in box["text/plain"]
    assert "Traceback" not in box["text/plain"]


def test_gallery_writes_the_pictures(tmp_path):
    from polylab.notebook.gallery import write_gallery

    files = write_gallery(tmp_path)
    names = {f.name for f in files}
    assert {"sweep2d_space.png", "sweep2d_wavefront.png", "sweep2d_illegal.png", "sweep2d_tiles.png",
            "sl3_sweep_3d.png", "sl3_wavefront_3d.png", "explorer_schedule_sl3.png"} <= names
    for f in files:
        data = f.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_error_outside_the_cell_keeps_its_own_numbering():
    err = PolylabError("expected ';'", location=SourceLocation(40, 3, "x", "  x = 1"))
    box = ErrorBox.of(err, "%polyrun wave")
    assert box.text.startswith("40:3: error: expected ';'")
    assert "cell" not in box.text.splitlines()[0]
