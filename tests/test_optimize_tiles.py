"""The optimizer's tiles: time tiles of the outer band (:mod:`polylab.schedule.timetile`), the separated
loops the code generator gives fused statements with different ranges
(:func:`polylab.codegen.ast.shared_innermost`), and the Pluto-style band tiled as a wavefront
(:mod:`polylab.schedule.bandtile`, lu).

Every schedule here is checked against brute force: the reference interpreter runs the original program
in its own order and the optimized one under the optimized schedule, and every live-out element must
agree bit for bit; the tiles are made small (``optimize(T, 8, 4)``: 4 x 4 time tiles) so that small
parameter values span several tiles and waves."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import polylab
from polylab.codegen.ast import For, User, build, nodes
from polylab.reference.interpret import same_live_out
from polylab.schedule import check, parse_schedule
from polylab.schedule.optimize import (TIME_TILE, Machine, ShapeKind, Structure, TimeTiling, exact_parallel_loops, loop_dims,
                                       time_tile_size)
from polylab.schedule.timetile import rows_dimension, time_tiled
from polylab.storage import recipe_steps

STENCILS = {"jacobi2d.c": {"N": 9, "T": 7}, "heat3d.c": {"N": 6, "T": 6}, "fdtd2d.c": {"T": 7, "NX": 8, "NY": 6}}


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


MACHINE = Machine()


def optimized(scop, spec: str):
    return parse_schedule(scop, spec, steps=recipe_steps(MACHINE))


def report(s):
    return s.provenance.optimize


@pytest.mark.parametrize("name", sorted(STENCILS))
@pytest.mark.parametrize("threads", [1, 2])
def test_time_tiled_stencils_compute_what_the_original_does(name, threads):
    scop = scop_of(name)
    s = optimized(scop, f"optimize({threads}, 8, 4)")
    assert report(s).timing is TimeTiling.TIME_TILES and "floor((t)/4)" in s.text(), s.notes
    assert check(s).legal
    # the wave is the outermost loop, the tiles of a wave the parallel loop inside it: an OpenMP loop with
    # threads to share it, none with one thread
    assert 0 not in s.parallel_dims and 1 in s.parallel_dims
    assert s.marked == ({1} if threads > 1 else set())
    params = STENCILS[name]
    assert same_live_out(scop, s.scop, params, schedule=s.union_map) == []


def test_the_time_skew_is_the_smallest_legal_one():
    # jacobi2d fused with shifts: the copy runs one row later, so a step reads rows up to two ahead of
    # the rows the step before wrote at the same fused row: no legal tile with skew 0 or 1
    s = optimized(scop_of("jacobi2d.c"), "optimize(1)")
    assert report(s).timing is TimeTiling.TIME_TILES and s.expressions("S0")[4] == "2t + i"
    assert s.expressions("S0")[1] == "(floor((2t + i)/32))"
    # fdtd2d: skew 1
    f = optimized(scop_of("fdtd2d.c"), "optimize(1)")
    assert report(f).timing is TimeTiling.TIME_TILES and any("floor((t + i)/" in e for e in f.expressions("S1"))
    # the other skews are illegal: checked exactly
    fused = optimized(scop_of("jacobi2d.c").with_parameters({"T": 4}), "optimize(1)")   # fused, no tiles
    assert report(fused).timing is TimeTiling.NONE and rows_dimension(fused) is not None
    assert time_tiled(fused, 4) is not None and "rows + 2t" in time_tiled(fused, 4)[1]


def test_time_tiles_need_a_time_loop():
    # gemm's, lu's and mvt's outer loops index arrays they write: no time tiles
    for name in ("gemm.c", "lu.c", "mvt.c"):
        assert report(optimized(scop_of(name), "optimize(1)")).timing is TimeTiling.NONE, name
    # a time loop of a few steps: nothing to tile
    few = optimized(scop_of("fdtd2d.c").with_parameters({"T": 5}), "optimize(1)")
    assert report(few).timing is TimeTiling.NONE


def test_time_tile_sizes_shrink_with_the_rows_dimensions():
    assert time_tile_size(3) == TIME_TILE == 32
    assert time_tile_size(4) == 8 and time_tile_size(5) == 4 and time_tile_size(9) == 4
    heat = optimized(scop_of("heat3d.c"), "optimize(2)")
    assert report(heat).timing is TimeTiling.TIME_TILES and "floor((t)/8)" in heat.text()
    jac = optimized(scop_of("jacobi2d.c"), "optimize(2)")
    assert report(jac).timing is TimeTiling.TIME_TILES and "floor((t)/32)" in jac.text()


def test_fused_statements_with_different_ranges_get_a_guard_free_loop():
    """fdtd2d's three updates fused with shifts: their column loops run 0..NY-1, 1..NY-1 and 0..NY-2.
    The generated code separates the fused loop: one loop runs all three statements with no guard in
    its body (the compiler vectorizes it), the boundary columns run on their own."""
    s = optimized(scop_of("fdtd2d.c"), "optimize(1)")
    program = build(s.scop, s)
    bodies = []
    for n in nodes(program.root):
        if isinstance(n, For) and not any(isinstance(m, For) for m in list(nodes(n.body))):
            bodies.append(sorted(u.statement for u in nodes(n.body) if isinstance(u, User)))
    assert ["S1", "S2", "S3"] in bodies, bodies
    # and the program computes what the original does, compiled
    from polylab.experiment import verify

    v = verify(scop_of("fdtd2d.c"), s, "openmp", params=STENCILS["fdtd2d.c"], threads=2)
    assert v.verified, v.reason


_OFFSETS = st.tuples(st.integers(-1, 1), st.integers(-1, 1))


@st.composite
def two_stencils(draw):
    """A time loop around two 2-D stencil nests: ``B`` from ``A`` and then ``A`` from ``B`` (or in place),
    with random neighbour offsets; the shapes jacobi2d, seidel-like sweeps and copies take."""
    first = draw(st.lists(_OFFSETS, min_size=1, max_size=4, unique=True))
    second = draw(st.lists(_OFFSETS, min_size=1, max_size=3, unique=True))
    src2 = draw(st.sampled_from(["B", "A"]))

    def terms(arr, offs):
        return " + ".join(f"0.{k + 1} * {arr}[i + {di}][j + {dj}]" for k, (di, dj) in enumerate(offs))

    return ("double A[N][N];\ndouble B[N][N];\nfor (t = 0; t < T; t++) {\n"
            "  for (i = 1; i < N - 1; i++)\n    for (j = 1; j < N - 1; j++)\n"
            f"      B[i][j] = {terms('A', first)};\n"
            "  for (i = 1; i < N - 1; i++)\n    for (j = 1; j < N - 1; j++)\n"
            f"      A[i][j] = {terms(src2, second)};\n}}\n")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_stencils(), st.sampled_from([1, 2]))
def test_random_stencil_pairs_optimized_with_time_tiles_agree_with_the_original(src, threads):
    scop = polylab.parse(src).scop
    s = optimized(scop, f"optimize({threads}, 8, 4)")
    assert check(s).legal
    assert same_live_out(scop, s.scop, {"N": 7, "T": 6}, schedule=s.union_map) == [], (src, s.text())


def test_tune_tries_other_time_tile_sizes_where_there_are_time_tiles():
    from polylab.experiment.tune import candidates
    from polylab.schedule.tuning import TUNE_TILES

    specs = candidates(scop_of("fdtd2d.c"), 1, MACHINE)
    assert specs[0] == "optimize(1)"
    assert all(f"optimize(1, 8, {w})" in specs for w in TUNE_TILES), specs
    assert not any(s.startswith("optimize(2, 8, ") for s in candidates(scop_of("mvt.c"), 2, MACHINE))


def test_lu_gets_the_pluto_band_tiled_with_the_division_before_the_vector_loop():
    scop = scop_of("lu.c")
    for threads in (1, 2):
        s = optimized(scop, f"optimize({threads})")
        assert report(s).structure is Structure.PLUTO_BAND and check(s).legal
        # the points of a tile in the order (i, k, j): the division of A[i][k] first, then the updates of
        # row i by row k along j, the innermost loop, parallel and stride-1
        assert s.expressions("S1")[3:7] == ["i", "j", "0", "j"]
        assert s.expressions("S0")[3:7] == ["i", "k", "1", "j"]
        for n in ("S0", "S2"):
            assert loop_dims(s, n)[-1] in s.parallel_dims
        assert all(v >= 1 for v in exact_parallel_loops(s).values())
        assert same_live_out(scop, s.scop, {"N": 9}, schedule=s.union_map) == []


@pytest.mark.parametrize("threads", [1, 2])
def test_a_top_level_nest_gets_its_own_band_where_the_program_has_none(threads):
    """ludcmp after its scalar's homes: the factorization is lu's, but the Pluto-style search over the
    whole program (the two substitutions after it) has no band of three rows to tile. The search on the
    factorization's statements alone has: its band is tiled as lu's, the substitutions keep their rows.
    With tiles of 4 the sizes below span several tiles and waves; the interpreter and the compiled OpenMP
    code compute what the original does."""
    from polylab.experiment import verify

    from test_storage_homes import LUDCMP

    scop = polylab.parse(LUDCMP).scop
    s = optimized(scop, f"optimize({threads}, 8, 4)")
    rep = report(s)
    assert rep.structure is Structure.PLUTO_BAND and check(s).legal
    assert any("the search on S1, S2, S4 alone" in line for line in s.notes), s.notes
    # the factorization's update has the wave's tiles as a parallel loop and a vector loop inside
    assert exact_parallel_loops(s)["S4"] >= 2 and loop_dims(s, "S4")[-1] in s.parallel_dims
    if threads == 2:
        assert any(d in s.marked for d in loop_dims(s, "S4"))
    for n in (1, 5, 11):
        assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map) == [], n
    v = verify(scop, s, "openmp", params={"N": 13}, threads=threads)
    assert v.verified, v.reason


#: LU in its column form (left-looking): every loop order the source's band allows keeps a loop that is
#: parallel, so the band was never tried, but the parallel i walks the columns of A (no vector loop)
LU_COLUMNS = """void lu(int n, double A[n][n]) {
#pragma scop
  for (int j = 0; j < n; j++) {
    for (int k = 0; k < j; k++)
      for (int i = k + 1; i < n; i++)
        A[i][j] -= A[i][k] * A[k][j];
    for (int i = j + 1; i < n; i++)
      A[i][j] /= A[j][j];
  }
#pragma endscop
}"""

#: a triangular solve with many right-hand sides: its best order has a parallel loop and, at one thread,
#: a vector loop; at two, the rows of its parallel j loop jammed around the chain along k
TRSM = """void trsm(int n, int m, double X[n][m], double L[n][n]) {
#pragma scop
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++)
      for (int j = 0; j < m; j++)
        X[i][j] -= L[i][k] * X[k][j];
    for (int j = 0; j < m; j++)
      X[i][j] = X[i][j] / L[i][i];
  }
#pragma endscop
}"""


@pytest.mark.parametrize("threads", [1, 2])
def test_the_band_is_tried_where_the_best_order_has_parallel_loops_but_no_vector_loop(threads):
    """The column LU's only parallel loop walks down a column in every order of its source band: the
    Pluto-style band (lu's, once its rows are renamed) is tiled, with the row loop j innermost, a vector
    loop (N = 400, gcc -O3: 3.4x the original at one thread and 4.2x at two, where the source order ran
    1.0x). trsm's best order has a vector loop at one thread and its chains' rows jammed at two: no band
    there (its wavefront of few large tiles ran 0.5x of them on two threads)."""
    from polylab.experiment import verify

    scop = polylab.parse(LU_COLUMNS).scop
    s = optimized(scop, f"optimize({threads}, 8, 4)")
    assert report(s).structure is Structure.PLUTO_BAND and check(s).legal
    assert next(c for c in report(s).choices if c.statement == "S0").vector
    assert loop_dims(s, "S0")[-1] in s.parallel_dims
    for n in (1, 6, 11):
        assert same_live_out(scop, s.scop, {"n": n}, schedule=s.union_map) == [], n
    v = verify(scop, s, "openmp", params={"n": 13}, threads=threads)
    assert v.verified, v.reason
    trsm = optimized(polylab.parse(TRSM).scop, f"optimize({threads})")
    assert report(trsm).structure is not Structure.PLUTO_BAND


def test_the_tiled_band_with_small_tiles_computes_what_the_original_does():
    from polylab.schedule.bandtile import tiled_band
    from polylab.schedule.pluto import pluto_schedule

    scop = scop_of("lu.c")
    searched = pluto_schedule(scop).schedule
    tiled = tiled_band(searched, 3, lambda c: 0)
    assert tiled is not None
    s, _ = tiled
    assert check(s).legal
    for n in (7, 10):
        assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map) == []


def test_no_band_tiles_where_a_chain_would_stay_innermost():
    # bicg: q[i] += A[i][j] * p[j] keeps its chain inside any tile: measured 0.4x; the fusion stays
    bicg = optimized(polylab.parse_file(Path(polylab.example_path("sweep2d.c")).parent / "polybench" / "bicg.c").scop,
                     "optimize(2)")
    assert report(bicg).structure is not Structure.PLUTO_BAND
    for name in ("gemm.c", "mvt.c", "jacobi2d.c"):
        assert report(optimized(scop_of(name), "optimize(2)")).structure is not Structure.PLUTO_BAND, name


@pytest.mark.parametrize("name,params", [("sl3.sy", {"n": 13}), ("seidel2d.c", {"N": 10, "T": 9})])
def test_time_tiled_strips_with_small_tiles_compute_what_the_original_does(name, params):
    """The strips inside time tiles (sl3 after folding; seidel2d with the time skew), with 4 x 4 tiles so
    that the small sizes span several tiles and waves."""
    scop = scop_of(name)
    s = optimized(scop, "optimize(2, 4, 4)")
    assert any(c.kind in (ShapeKind.STRIPS_TIME_WAVE, ShapeKind.STRIPS_SKEWED_TIME_WAVE) for c in report(s).choices)
    assert check(s).legal
    assert same_live_out(scop, s.scop, params, schedule=s.union_map) == []


def test_band_tile_size_from_the_cache_model():
    from polylab.schedule.optimize import band_tile_size

    l2 = MACHINE.l2_bytes
    t = band_tile_size(scop_of("lu.c"), MACHINE)   # three slices of doubles: A[i][j], A[i][k], A[k][j]
    assert t >= 16 and t & (t - 1) == 0
    assert 3 * t * t * 8 <= l2 // 2 or t == 16
    assert 3 * (2 * t) ** 2 * 8 > l2 // 2
    s = optimized(scop_of("lu.c"), "optimize(2)")
    assert report(s).choices[0].shape.sizes == (t,) and f"floor((i)/{t})" in s.text()
    assert report(optimized(scop_of("lu.c"), "optimize(2, 8, 16)")).choices[0].shape.sizes == (16,)
    # a larger L2 gives larger tiles
    assert band_tile_size(scop_of("lu.c"), Machine(l2_bytes=4 * l2)) == 2 * t


def test_a_negative_tile_size_is_a_located_error_not_a_traceback(capsys):
    from polylab.cli import main

    assert main(["codegen", "fdtd2d.c", "--schedule", "optimize(2, 8, -4)", "--kernel-only"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "fdtd2d.c:1:1" in err
    assert "tile size of optimize must be 0" in err and "hint:" in err
