"""Searching for schedules: the wavefront program, the Pluto-style scheduler, isl's scheduler, tiling."""

from __future__ import annotations

import pytest

import polylab
from polylab.errors import IllegalTransformationError, ScheduleError
from polylab.schedule import (check, compare_schedulers, find_wavefront, isl_schedule, original,
                              parse_schedule, pluto_schedule, tile, tile_wavefront, wavefront)

KERNELS = ["jacobi2d.c", "heat3d.c", "seidel2d.c", "gemm.c", "lu.c", "mvt.c", "fdtd2d.c"]


def scop_of(name):
    return polylab.parse_file(polylab.example_path(name)).scop


def test_wavefront_sweep2d_is_i_plus_j():
    sol = find_wavefront(original(scop_of("sweep2d.c")))
    assert sol.hyperplane == (1, 1)
    assert sol.theta == {"S0": "i + j"}
    assert sol.distances == ((0, 1), (1, 0))
    assert any("a0 >= 1" in c for c in sol.constraints) and any("a1 >= 1" in c for c in sol.constraints)
    s = sol.schedule
    assert check(s).legal and s.parallel_dims == (1,) and s.marked == {1}


def test_wavefront_sl3_sweep_is_i_plus_j_plus_k():
    scop = scop_of("sl3.sy")
    sweep = [st for st in scop.statements if len(st.reads) > 3]
    assert sweep
    sol = find_wavefront(original(scop))
    assert sol.hyperplane == (1, 1, 1)
    assert sol.theta[sweep[0].name] == "i + j + k"
    assert (1, 1, 1) in sol.distances and (1, 0, 0) in sol.distances
    assert check(sol.schedule).legal


def test_wavefront_nonuniform_uses_farkas_and_is_exact():
    sol = find_wavefront(original(scop_of("seidel2d.c")))
    s = wavefront(original(scop_of("seidel2d.c")))
    assert s.text() == sol.schedule.text()
    assert sol.distances is None and any("Farkas" in c for c in sol.constraints)
    assert sol.hyperplane == (4, 2, 1)          # 4t + 2i + j: the smallest sum for 9-point Gauss-Seidel
    assert check(s).legal and len(s.parallel_dims) == 2


def test_wavefront_refuses_when_impossible():
    # a reversed loop carries a dependence backwards: no non-negative hyperplane exists
    scop = scop_of("sweep2d.c")
    with pytest.raises(ScheduleError):
        find_wavefront(parse_schedule(scop, "{ S0[i, j] -> [-i, j] }"))


@pytest.mark.parametrize("name", KERNELS)
def test_pluto_finds_tilable_band_and_parallelism(name):
    res = pluto_schedule(scop_of(name))
    s = res.schedule
    assert check(s).legal
    loops = set(s.loop_dims)
    assert any(b.permutable and len([d for d in b.dims if d in loops]) >= 2 for b in s.bands), s
    if not s.parallel_dims:  # no parallel loop: the tile-level wavefront must expose one
        tw = tile_wavefront(s, 4, 4)
        assert check(tw).legal and tw.parallel_dims
    assert any("row 0" in line for line in res.explanation)


def test_time_stencils_need_skewing():
    for name in ("jacobi2d.c", "seidel2d.c", "heat3d.c", "fdtd2d.c"):
        s = pluto_schedule(scop_of(name)).schedule
        exprs = [e for st in s.scop.statements for e in s.expressions(st.name)]
        assert any("t +" in e or "2t" in e for e in exprs), (name, s.text())
    s = pluto_schedule(scop_of("seidel2d.c")).schedule
    assert s.expressions("S0") == ["t", "t + i", "2t + i + j"]


def test_gemm_outer_loops_parallel():
    s = pluto_schedule(scop_of("gemm.c")).schedule
    assert s.parallel_dims[:2] == (0, 1) and s.marked >= {0, 1}


def test_isl_scheduler_step_and_comparison():
    scop = scop_of("mvt.c")
    s = isl_schedule(scop)
    assert check(s).legal and s.steps == ("isl",)
    cmp = compare_schedulers(scop)
    assert cmp.pluto.legal and cmp.isl.legal
    assert any("fusion" in d for d in cmp.differences)
    same = compare_schedulers(scop_of("seidel2d.c"))
    assert same.pluto.hyperplanes == same.isl.hyperplanes
    assert "pluto" in str(cmp)


def test_tiling_legality():
    seidel = original(scop_of("seidel2d.c"))
    with pytest.raises(IllegalTransformationError) as err:
        tile(seidel, 4, 4, 4)
    assert "S0[" in err.value.message and "permutable" in err.value.hint
    skewed = pluto_schedule(seidel.scop).schedule
    t = tile(skewed, 4, 4, 4)
    assert check(t).legal and t.provenance.tiles.dims == (0, 1, 2) and t.provenance.tiles.sizes == (4, 4, 4)
    assert t.is_permutable(0, 3)
    tw = tile_wavefront(skewed, 4, 4, 4)
    assert tw.parallel_dims[:2] == (1, 2) and check(tw).legal


def test_tree_has_bands_with_flags():
    s = parse_schedule(scop_of("sweep2d.c"), "wavefront; parallel")
    tree = s.tree
    band = tree.get_root().child(0)
    assert band.band_get_permutable()
    assert [band.band_member_get_coincident(k) for k in range(band.band_n_member())] == [False, True]
