"""The optimizer (``optimize``): structure, exactness, explanations, the command line and tuning.

* structural: for every corpus kernel, every statement of the optimized schedule has at least as many
  parallel loops as in the source order with ``parallel``, and the schedule is legal (exact check);
* exactness: the optimized program (storage steps included) computes bit for bit what the original does,
  by the reference interpreter at small parameter values, on the corpus and on random affine nests;
* the choices the issue asks for: strips on the latency-bound sweeps (sl3 after folding, seidel2d), a
  parallel tile loop with a stride-1 vectorizable innermost loop for mvt's transposed product, the
  source order kept for the already-good kernels (gemm, jacobi2d), contraction for sl3;
* ``polylab optimize`` prints the explanation and the spec, JSON on request, exits 2 on user errors;
* ``--tune`` keeps a verified candidate that beat the original program, or the original.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import islpy as isl
import pytest
from hypothesis import HealthCheck, assume, event, given, settings

import polylab
from polylab.errors import AnalysisError, ScheduleError
from polylab.reference.interpret import same_live_out
from polylab.schedule import check, original, parallel, parse_schedule, schedule_steps
from polylab.schedule.deps import dependences
from polylab.schedule.optimize import (TIME_TILE, JamKind, JamOutcome, Machine, SerialReason, ShapeKind, Structure,
                                       TimeTiling, cache_tile_sizes, carries_chain, chain_shadowed,
                                       exact_parallel_loops, innermost_pairs, is_stride_one, loop_dims,
                                       optimize_schedule, parallel_loops, private_start, settings_of,
                                       stream_tile_sizes, wave_tile_sizes)
from polylab.schedule.optimize.cachemodel import parallel_stream_tile_sizes
from polylab.schedule.tuning import REDUCTION_ROWS, STREAM_TILE_COLUMNS, STREAM_TILE_ROWS
from polylab.schedule.shiftfuse import same_inner_ranges
from polylab.schedule.transform import distribute, mark_parallel
from polylab.storage import recipe_steps

sys.path.insert(0, str(Path(__file__).parent))
from example_params import corpus, scop_of  # noqa: E402
from strategies import affine_nests  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SMALL = {
    "sweep2d.c": {"N": 5}, "shift.c": {"N": 4, "M": 3}, "jacobi2d.c": {"N": 6, "T": 2},
    "seidel2d.c": {"N": 6, "T": 2}, "gemm.c": {"NI": 3, "NJ": 4, "NK": 3}, "lu.c": {"N": 5},
    "mvt.c": {"N": 4}, "fdtd2d.c": {"T": 2, "NX": 4, "NY": 3}, "heat3d.c": {"N": 5, "T": 2},
    "sl3.sy": {"n": 6},
}


#: the machine the tests choose for (the reference machine: 32 KiB L1, 512 KiB L2, SSE2)
MACHINE = Machine()


def optimized(scop, spec: str = "optimize(2)"):
    return parse_schedule(scop, spec, steps=recipe_steps(MACHINE))


def report(s):
    """The optimizer's report of ``s``."""
    return s.provenance.optimize


@pytest.mark.parametrize("name", corpus())
def test_optimize_keeps_every_parallel_loop_of_the_source_order(name):
    scop = scop_of(name)
    base = parallel(original(scop))
    s = optimized(scop)
    assert check(s).legal, s.text()
    # the exactly parallel loops (OpenMP leaves out an innermost one inside sequential row loops)
    before, after = parallel_loops(base), exact_parallel_loops(s)
    for stmt, n in before.items():
        assert after.get(stmt, 0) >= n, (name, stmt, before, after, s.text())
    assert s.marked <= set(s.parallel_dims)
    # the report explains the result (the final schedule among its lines) and is the schedule's notes
    rep = report(s)
    assert s.notes == rep.lines and any(s.text() in x for x in rep.lines)
    # the parallel loops composed from the statements' blocks are those of the whole schedule
    assert not any(c.refused for c in rep.compared), rep.lines
    assert {c.statement for c in rep.choices} <= {st.name for st in s.scop.statements}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_optimized_program_computes_what_the_original_does(name):
    scop = scop_of(name)
    params = SMALL[name]
    fixed = scop.with_parameters(params)
    for threads in (1, 2):
        s = optimized(fixed, f"optimize({threads})")
        assert check(s).legal
        diff = same_live_out(fixed, s.scop, params, schedule=s.union_map)
        assert diff == [], (name, threads, s.text(), diff[:3])


def test_sweeps_get_strips_and_sl3_its_storage_steps():
    s = optimized(scop_of("sl3.sy"), "optimize(1)")
    assert s.scop is not scop_of("sl3.sy")
    steps = " ".join(report(s).lines)     # the storage steps' own lines
    assert "fold_live_ins: 3 read(s)" in steps and "remove_dead_writes" in steps
    # after folding, the sweep's planes depend only on the plane before, and the initialisation of a plane
    # runs just before the sweep's plane (interleave): with one thread (no team, so no tie broken by where
    # a parallel loop starts) the fusion is kept, each plane swept in strips of 8 rows in a wavefront of
    # their tiles, and x is contracted to the two planes live at a time (proven, not assumed)
    assert "interleave: producers S0" in steps and "contract(x): x[i0][i1][i2] -> xbuf[i0 % 2]" in steps
    assert report(s).structure is Structure.KEPT
    sweep = next(c for c in report(s).choices if c.kind.strips)
    assert sweep.kind is ShapeKind.STRIPS_WAVE and sweep.shape.sizes[0] == 8      # 8 rows
    # the innermost loop of the strips runs independent chains: it is exactly parallel; with one thread no
    # loop is an OpenMP loop (no team to share it)
    dims = [d for d, a in enumerate(s.affs[sweep.statement]) if not a.is_cst()]
    assert dims[-1] in s.parallel_dims and not s.marked
    assert same_live_out(scop_of("sl3.sy"), s.scop, {"n": 13}, schedule=s.union_map) == []
    # with two threads the sweep's (i, j) band is tiled in time, each tile running its planes with the
    # strips inside; contraction of x is then tried and refused with the reason (planes of different tiles
    # are live together), never applied unproven
    two = optimized(scop_of("sl3.sy"), "optimize(2)")
    lines = " ".join(report(two).lines)
    assert "contract(x): refused" in lines and "live at the same time" in lines
    sweep = next(c for c in report(two).choices if c.kind.strips)
    assert sweep.kind is ShapeKind.STRIPS_TIME_WAVE and sweep.shape.sizes[0] == 8
    dims = [d for d, a in enumerate(two.affs[sweep.statement]) if not a.is_cst()]
    # the time tiles' wavefront is the outermost loop, the tiles of a wave the OpenMP loop inside it
    assert dims[0] not in two.parallel_dims and dims[1] in two.marked
    seidel = optimized(scop_of("seidel2d.c"), "optimize(2)")
    (c,) = report(seidel).choices
    # seidel2d's dependences go back in i from one step to the next: its time tiles need the skew i + t
    assert c.kind is ShapeKind.STRIPS_SKEWED_TIME_WAVE and c.shape.time_skew == 1 and "t + i" in seidel.text()
    assert exact_parallel_loops(seidel)["S0"] >= 2        # the wave's tiles and the chains
    # one thread: the wave too, so that the parallel loop is not the strips' innermost one (one OpenMP
    # start per column)
    one = optimized(scop_of("seidel2d.c"), "optimize(1)")
    assert report(one).choices[0].kind is ShapeKind.STRIPS_SKEWED_TIME_WAVE
    dims = loop_dims(one, "S0")              # the wave, its tiles, t, the strips, the columns, the chains
    assert dims[1] in one.parallel_dims and dims[0] not in one.parallel_dims and dims[2] not in one.parallel_dims
    assert not one.marked and seidel.marked   # OpenMP loops only where there are threads to share them
    # a sweep of two loops has no time loop to tile: the wavefront of its strips' tiles, sizes from the
    # cache model
    sweep = optimized(scop_of("sweep2d.c"), "optimize(1)")
    assert report(sweep).choices[0].kind is ShapeKind.STRIPS_WAVE


FLOYD = """double path[N][N];
for (k = 0; k < N; k++)
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
"""


def test_without_a_chain_one_thread_keeps_the_stride_one_source_order():
    """floyd-warshall: no loop is parallel (``path[i][k]`` and ``path[k][j]`` are written at ``j = k`` and
    ``i = k``), but inside a row every instance waits for at most the one instance ``j = k``: no chain,
    so with one thread the strips would only walk the rows across (0.51x of the source order, measured in
    PolyBench's harness); with two threads their tile wavefront is the only parallel loop there is. The loop
    optimizer alone (the storage layer's ``optimize`` splits these loops first: test_storage_split.py)."""
    scop = polylab.parse(FLOYD).scop
    s = original(scop)
    assert [carries_chain(s, "S0", d) for d in loop_dims(s, "S0")] == [True, False, False]

    def optimized(scop, spec):
        return parse_schedule(scop, spec, steps=schedule_steps(MACHINE))

    one = optimized(scop, "optimize(1)")
    assert [c.kind for c in report(one).choices] == [ShapeKind.KEEP] and one.text() == s.text()
    assert not report(one).choices[0].score.chain and "carries no chain" in " ".join(one.notes)
    two = optimized(scop, "optimize(2)")
    assert report(two).choices[0].kind is ShapeKind.STRIPS_WAVE and two.marked
    # the sweeps are chains along their innermost loops: they keep their strips (the test above)
    for name in ("seidel2d.c", "sweep2d.c"):
        base = original(scop_of(name))
        assert carries_chain(base, "S0", loop_dims(base, "S0")[-1]), name


def _points(s: isl.Set) -> list:
    out: list = []
    s.foreach_point(out.append)
    return out


def _chain_by_enumeration(s, name: str, d: int, values: dict[str, int]) -> bool:
    """The oracle of :func:`carries_chain` at parameter ``values``: the statement's instances and their
    time vectors enumerated point by point, its flow dependence pairs too, the pairs carried by ``d``
    kept by comparing the time vectors, and a path of two of them looked for."""
    stmt = s.scop.statement(name)
    domain = stmt.domain.intersect_params(s.scop.context)
    for p, v in values.items():
        if domain.find_dim_by_name(isl.dim_type.param, p) >= 0:
            domain = domain.fix_val(isl.dim_type.param, domain.find_dim_by_name(isl.dim_type.param, p), v)
    time = {}
    for pt in _points(domain):
        x = tuple(int(pt.get_coordinate_val(isl.dim_type.set, k).to_python()) for k in range(stmt.depth))
        time[x] = tuple(a.eval(pt).to_python() for a in s.affs[name])
    carried = set()
    for dep in s.dependences:
        if dep.kind == "flow" and dep.source == dep.sink == name:
            rel = dep.relation.intersect_domain(domain).intersect_range(domain)
            for pt in _points(rel.wrap()):
                c = [int(pt.get_coordinate_val(isl.dim_type.set, k).to_python()) for k in range(2 * stmt.depth)]
                x, y = tuple(c[:stmt.depth]), tuple(c[stmt.depth:])
                if time[x][:d] == time[y][:d] and time[x][d] < time[y][d]:
                    carried.add((x, y))
    sinks = {y for _, y in carried}
    return any(x in sinks for x, _ in carried)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(src=affine_nests(max_depth=3, max_statements=2))
def test_chains_are_those_found_by_enumeration(src):
    values = {"N": 4, "M": 3}
    scop = _random_scop(src, values)
    for s in (original(scop), optimized(scop, "optimize(1)")):
        for st in s.scop.statements:
            for d in loop_dims(s, st.name):
                found = carries_chain(s, st.name, d)
                event(f"chain {found}")
                assert found == _chain_by_enumeration(s, st.name, d, values), (src, s.text(), st.name, d)


def test_a_distribution_out_of_a_chains_shadow_is_no_gain():
    """bicg: ``s[j] += r[i] * A[i][j]`` shares its ``j`` loop with the chain ``q[i] += A[i][j] * p[j]``;
    distributing gives ``s`` a vector loop but the chain stays, so the fusion is kept."""
    scop = scop_of("polybench/bicg.c")
    src = mark_parallel(original(scop))
    split = mark_parallel(distribute(original(scop), 2))
    assert ("S2", "S3") in innermost_pairs(src) and ("S2", "S3") not in innermost_pairs(split)
    assert "S2" in chain_shadowed(src, split)          # S3's j loop is a chain, S2 was in its shadow
    assert chain_shadowed(src, src) == set()
    for threads in (1, 2):
        s = optimized(scop, f"optimize({threads})")
        assert ("S2", "S3") in innermost_pairs(s), s.text()
        assert report(s).structure is Structure.KEPT
    # 2mm's distribution still pays: its reduction gets a vector loop and no chain is left behind
    mm = optimized(scop_of("polybench/2mm.c"))
    assert report(mm).structure in (Structure.DISTRIBUTED_INSIDE, Structure.FULLY_DISTRIBUTED)


def test_sibling_stencil_nests_fuse_with_shifts_at_one_thread():
    """jacobi2d's update and copy sweep the same rows: fused, the copy one row later, the row loop now
    carries their dependences and the column loop stays parallel (a vector loop without guards); the
    fused nest is then tiled in time (:mod:`polylab.schedule.timetile`, rows skewed by ``2t``)."""
    scop = scop_of("jacobi2d.c")
    one = optimized(scop, "optimize(1)")
    rep = report(one)
    assert rep.structure is Structure.SHIFT_FUSED and rep.timing is TimeTiling.TIME_TILES
    # the copy runs one row later (S1 shifted by (1, 0)): its row is the update's plus one
    assert one.expressions("S1")[4:6] == ["1 + 2t + i", "j"] and one.expressions("S0")[4:6] == ["2t + i", "j"]
    assert check(one).legal and innermost_pairs(one) == {("S0", "S1")}
    inner = loop_dims(one, "S0")[-1]         # the vector loop: parallel, without OpenMP (one start per row)
    assert inner in one.parallel_dims and inner not in one.marked
    # fdtd2d's updates run different column ranges: fused too, the code generator separates the loop
    fd = optimized(scop_of("fdtd2d.c"), "optimize(1)")
    assert report(fd).structure is Structure.SHIFT_FUSED
    # without time tiles (their time loop runs too few steps), one thread keeps the plain fusion and
    # threads keep the row loops parallel: no fusion
    few = optimized(scop.with_parameters({"T": 4}), "optimize(1)")
    assert report(few).timing is TimeTiling.NONE
    assert few.expressions("S1")[2:4] == ["1 + i", "j"] and few.expressions("S0")[2:4] == ["i", "j"]
    two = optimized(scop.with_parameters({"T": 4}), "optimize(2)")
    assert innermost_pairs(two) == set() and exact_parallel_loops(two)["S0"] == 2


def test_same_inner_ranges_is_exact():
    a = isl.Set("[N] -> { [i, j] : 0 <= i < N and 0 <= j < N }")
    shifted = isl.Set("[N] -> { [i, j] : 1 <= i <= N and 0 <= j < N }")     # other rows, same columns
    narrower = isl.Set("[N] -> { [i, j] : 0 <= i < N and 1 <= j < N }")
    assert same_inner_ranges(a, shifted) and same_inner_ranges(shifted, a)
    assert not same_inner_ranges(a, narrower)


def test_gemm_at_one_thread_keeps_the_reused_slice_in_l1_when_asked():
    """gemm's ``B[k][j]`` is read again for every ``i``: with cache tiling asked for at one thread, the k
    and j loops are tiled outside ``i`` with the cache model's sizes, ``j`` stays the innermost vector
    loop; not by default (its sizes are unknown). The tile is :data:`STREAM_TILE_ROWS` rows of ``k`` by
    the widest power of two of ``j`` that three quarters of L1 hold. Its ``j`` keeps no sums in registers,
    so :data:`REDUCTION_ROWS` iterations of ``k`` are jammed into it (``i, floor(k / 4), j, k``)."""
    tj, tk = stream_tile_sizes(8, MACHINE)
    budget = MACHINE.l1_bytes * 3 // 4
    assert tk == STREAM_TILE_ROWS == 4 * REDUCTION_ROWS and tj & (tj - 1) == 0
    assert tk * tj * 8 <= budget < 2 * tk * tj * 8, (tj, tk)
    assert stream_tile_sizes(8, Machine(l1_bytes=48 * 1024)) == (256, 16)   # 32 KiB of 48
    assert stream_tile_sizes(4, Machine(l1_bytes=1 << 20)) == (STREAM_TILE_COLUMNS, 128)  # the widest, more rows
    s = optimized(scop_of("gemm.c"), "optimize(1, 8, 0, 1)")
    c = {x.statement: x for x in report(s).choices}
    assert c["S1"].kind is ShapeKind.STREAM_TILE and c["S1"].vector and c["S1"].shape.modelled
    assert c["S1"].shape.sizes == (tk, tj)
    assert s.expressions("S1")[-4:] == ["i", "(floor((k)/4))", "j", "k"]
    assert [(j.kind, j.outcome, j.rows) for j in report(s).jams] == [(JamKind.REDUCTION, JamOutcome.DONE, 4)]
    assert f"floor((j)/{tj})" in s.text() and f"floor((k)/{tk})" in s.text() and check(s).legal
    for spec in ("optimize(1)", "optimize(2)"):     # only asked for
        other = optimized(scop_of("gemm.c"), spec)
        assert all(x.kind is not ShapeKind.STREAM_TILE for x in report(other).choices), spec


TRMM_LARGE = """double A[1000][1000]; double B[1000][1200]; double alpha;
for (i = 0; i < M; i++)
  for (j = 0; j < N; j++) {
    for (k = i + 1; k < M; k++)
      B[i][j] += A[k][i] * B[k][j];
    B[i][j] = alpha * B[i][j];
  }
"""


def test_parallel_stream_tiles_leave_enough_column_tiles_for_the_threads():
    """With threads the stream tiles' column tiles are the parallel loop: the one-thread width, halved
    until it leaves at least 4 tiles per thread, at least 32 columns, at most 128 where the columns are not
    known; the rows then fill the tile's L1 budget, at least :data:`STREAM_TILE_ROWS`."""
    budget = MACHINE.l1_bytes * 3 // 4
    widest = stream_tile_sizes(8, MACHINE)[0]
    for columns, threads, tj in ((1200, 2, 128), (100_000, 2, widest), (1200, 16, 32), (None, 2, 128), (40, 4, 32)):
        got, tk = parallel_stream_tile_sizes(columns, 8, MACHINE.with_threads(threads))
        assert got == tj, (columns, threads, got)
        assert columns is None or got == 32 or -(-columns // got) >= 4 * threads
        assert tk * got * 8 <= budget < 2 * tk * got * 8 or tk == STREAM_TILE_ROWS


def test_trmm_on_threads_shares_its_stream_tiles_columns_and_gemm_too_beyond_l2():
    """trmm at PolyBench's LARGE size (``B``, 9.6 MB, read again for every ``i``) on two threads: its row
    loop ``i`` is sequential, so the stream tiles of ``(k, j)`` run outside it with the column tiles as the
    OpenMP loop, 10 tiles of 128 columns for 1200. gemm's rows are parallel: with cache tiling asked for
    (its slice then counts as beyond the L2 cache), its stream tiles share their column tiles among the
    threads too, their slices in L1 where the band's tiles keep theirs in L2."""
    from polylab.experiment import verify

    scop = polylab.parse(TRMM_LARGE).scop      # PolyBench's form: declared sizes, loops to the parameters
    s = optimized(scop, "optimize(2)")
    c = {x.statement: x for x in report(s).choices}
    tj, tk = parallel_stream_tile_sizes(1200, 8, MACHINE.with_threads(2))
    assert c["S0"].kind is ShapeKind.STREAM_TILE and c["S0"].shape.sizes == (tk, tj) and tj == 128, s.notes
    first = loop_dims(s, "S0")[0]
    assert s.expressions("S0")[first] == f"(floor((j)/{tj}))" and first in s.marked, s.text()
    assert check(s).legal
    v = verify(scop, s, "openmp", params={"M": 270, "N": 300}, threads=2)
    assert v.verified, v.reason
    gemm = polylab.parse_file(polylab.example_path("polybench/../gemm.c")).scop
    g = optimized(gemm, "optimize(2, 8, 0, 1)")
    c = {x.statement: x for x in report(g).choices}
    assert c["S1"].kind is ShapeKind.STREAM_TILE, g.notes
    first = loop_dims(g, "S1")[0]
    assert g.expressions("S1")[first].startswith("(floor((j)/") and first in g.marked, g.text()


def test_openmp_is_not_started_once_per_row():
    """atax's ``y[j] += A[i][j] * tmp[i]`` is parallel in ``j`` only, inside the sequential row loop ``i``:
    no OpenMP loop there (it would start once per row); jacobi-1d's ``i`` inside the time loop ``t``
    (no subscript) keeps its OpenMP loop."""
    atax = optimized(scop_of("polybench/atax.c"))
    # (its rows are jammed: only the 8 rows of a strip run inside j)
    d = next(d for d in loop_dims(atax, "S3") if atax.expressions("S3")[d] == "j")
    assert d in atax.parallel_dims and d not in atax.marked
    assert any(x.dim == d and x.reason is SerialReason.PER_ROW for x in report(atax).serial)
    jac = optimized(polylab.parse(JACOBI_1D).scop)
    assert all(loop_dims(jac, n)[-1] in jac.marked for n in ("S0", "S1"))


JACOBI_1D = """double A[N]; double B[N];
for (t = 0; t < T; t++) {
  for (i = 1; i < N - 1; i++) B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
  for (i = 1; i < N - 1; i++) A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
}"""


def test_openmp_needs_work_per_team_start():
    """With constant sizes, a parallel loop whose team would get fewer than MIN_TEAM_WORK statement
    instances per start runs sequentially (doitgen's strips of ``p`` inside ``r`` and ``q``: 500 starts of
    930 instances; PolyBench jacobi-1d at its small size). The counts are exact. With parameters they are
    made at the largest sizes the arrays' declarations allow (tests/test_optimize_teams.py)."""
    from polylab.schedule.optimize import MIN_TEAM_WORK, team_work

    doit = optimized(scop_of("polybench/doitgen.c"), "optimize(2)")
    assert not doit.marked and doit.parallel_dims
    assert any(x.reason is SerialReason.LITTLE_WORK and x.starts == 500 for x in report(doit).serial)

    def sized(n: int):
        return polylab.parse(f"#define N {n}\n#define T 6\n" + JACOBI_1D).scop

    small = optimized(sized(40), "optimize(2)")
    assert not small.marked
    inner = loop_dims(small, "S0")[-1]
    assert team_work(small, inner, ["S0"]) == (6, 6 * 38)
    big = optimized(sized(400000), "optimize(2)")
    assert all(loop_dims(big, n)[-1] in big.marked for n in ("S0", "S1"))
    starts, work = team_work(big, loop_dims(big, "S0")[-1], ["S0"])
    assert starts == 6 and work // starts >= MIN_TEAM_WORK


def test_wavefront_tiles_come_from_the_cache_model():
    l2 = MACHINE.l2_bytes
    for point_bytes in (4, 8, 16, 24):
        t, u = wave_tile_sizes(point_bytes, 8, MACHINE)
        assert t == u and t & (t - 1) == 0 and t >= 16
        assert point_bytes * t * t <= l2 // 2 or t == 16
        assert point_bytes * (2 * t) ** 2 > l2 // 2
    assert wave_tile_sizes(4, 8, MACHINE)[0] >= wave_tile_sizes(8, 8, MACHINE)[0] >= wave_tile_sizes(16, 8, MACHINE)[0]
    # a larger L2 gives larger tiles
    assert wave_tile_sizes(8, 8, Machine(l2_bytes=4 * l2))[0] == 2 * wave_tile_sizes(8, 8, MACHINE)[0]
    sweep = optimized(scop_of("sweep2d.c"), "optimize(2)")      # one array of double
    t = wave_tile_sizes(8, 8, MACHINE)[0]
    assert f"floor((i)/{t})" in sweep.text() and report(sweep).choices[0].shape.modelled
    fixed = optimized(scop_of("sweep2d.c"), "optimize(2, 8, 64)")
    assert "floor((i)/64)" in fixed.text() and not report(fixed).choices[0].shape.modelled
    # the time tiles of seidel2d: TIME_TILE, or the size given
    assert f"floor((t)/{TIME_TILE})" in optimized(scop_of("seidel2d.c"), "optimize(2)").text()
    assert "floor((t)/64)" in optimized(scop_of("seidel2d.c"), "optimize(2, 8, 64)").text()


def test_mvt_transposed_product_gets_a_parallel_tile_loop_and_a_vector_loop():
    s = optimized(scop_of("mvt.c"))
    c = {x.statement: x for x in report(s).choices}
    assert c["S1"].kind is ShapeKind.STRIP and c["S1"].vector and c["S1"].shape.sizes == (32,)
    # the strip's points i, with 4 iterations of j jammed into them (j innermost, unrolled by gcc)
    assert "floor((i)/32)" in s.text() and s.expressions("S1")[-3:] == ["(floor((j)/4))", "i", "j"]
    assert c["S0"].kind is ShapeKind.KEEP


def test_gemm_is_distributed_and_tiled_for_the_cache_when_asked():
    plain = optimized(scop_of("gemm.c"))
    assert all(c.kind in (ShapeKind.KEEP, ShapeKind.SHARED) for c in report(plain).choices)
    s = optimized(scop_of("gemm.c"), "optimize(2, 8, 256, 1)")
    rep = report(s)
    c = {x.statement: x for x in rep.choices}
    assert c["S1"].kind is ShapeKind.STREAM_TILE and c["S1"].vector and c["S1"].shape.names == ("i", "k", "j")
    assert rep.structure is Structure.FULLY_DISTRIBUTED
    # the tile's columns of j keep no sums in registers: 4 iterations of k jammed into them
    assert s.expressions("S1")[-4:] == ["i", "(floor((k)/4))", "j", "k"] and exact_parallel_loops(s)["S1"] >= 2
    assert [(j.kind, j.outcome) for j in rep.jams] == [(JamKind.REDUCTION, JamOutcome.DONE)]


@pytest.mark.parametrize("name", ["jacobi2d.c", "heat3d.c", "fdtd2d.c"])
def test_good_source_orders_are_kept(name):
    s = optimized(scop_of(name))
    assert all(c.kind in (ShapeKind.KEEP, ShapeKind.SHARED) for c in report(s).choices), report(s)
    assert all(c.vector for c in report(s).choices if c.kind is ShapeKind.KEEP)


def test_private_loops_and_stride():
    base = original(scop_of("gemm.c"))
    assert private_start(base, "S0") == 2 and private_start(base, "S1") == 2   # i is shared
    lu = original(scop_of("lu.c"))
    assert private_start(lu, "S1") == lu.n_dims                                # all its loops shared
    s1 = scop_of("gemm.c").statement("S1")
    assert is_stride_one(s1, 2) and not is_stride_one(s1, 1) and not is_stride_one(s1, 0)
    sizes = cache_tile_sizes(2, 3, 8, MACHINE)
    assert sizes[1] == 4 * sizes[0] and sizes[0] >= 8


def _random_scop(src: str, values: dict[str, int]):
    """The random nest ``src`` with its parameters fixed, its dependences analysed (a nest that does not
    parse, has an empty statement or exceeds the analysis layer's limits, tested there, is assumed away)."""
    try:
        program = polylab.parse(src)
    except polylab.PolylabError:
        assume(False)
    assume(program.scops)
    scop = program.scop.with_parameters(values)
    assume(all(not st.domain.is_empty() for st in scop.statements))
    try:
        dependences(scop)
    except AnalysisError:
        assume(False)
    return scop


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(src=affine_nests(max_depth=3, max_statements=3))
def test_optimize_is_exact_on_random_nests(src):
    scop = _random_scop(src, {"N": 3, "M": 2})
    try:
        s = optimized(scop)
    except ScheduleError as err:  # a step refused with a reason is not a wrong answer
        event(f"refused: {err.message[:40]}")
        return
    assert check(s).legal
    before = parallel_loops(parallel(original(scop)))
    after = exact_parallel_loops(s)
    for n in after:     # index-set splitting names its pieces S0a, S0b, ..; a piece keeps what it has loops for
        base = n if n in before else n.rstrip("abc")
        assert after[n] >= min(before[base], len(loop_dims(s, n))), (src, n, after, before)
    assert s.marked <= set(s.parallel_dims)
    assert same_live_out(scop, s.scop, {"N": 3, "M": 2}, schedule=s.union_map) == [], (src, s.text())
    event(",".join(sorted({c.kind.value for c in report(s).choices})) or "nothing private")


def test_optimize_schedule_is_a_value_with_an_explanation():
    base = original(scop_of("mvt.c"))
    s = optimize_schedule(base, settings_of(MACHINE, 2))
    rep = report(s)
    assert s is not base and base.steps == () and base.provenance.optimize is None
    assert s.steps == ("optimize(2)",) and s.notes == rep.lines and rep.machine == MACHINE.with_threads(2)
    j = rep.to_json()
    assert j["source_parallel_loops"] == {"S0": 1, "S1": 1} and j["statements"][1]["shape"] == "strip"
    assert j["structure"] == rep.structure.value and j["machine"]["threads"] == 2
    assert "optimize" in rep.html()


def _cli(*args, timeout=600):
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin:/usr/local/bin", "OMP_NUM_THREADS": "2"}
    return subprocess.run([sys.executable, "-m", "polylab", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def test_cli_optimize_explains_and_prints_json():
    r = _cli("optimize", "seidel2d.c")
    assert r.returncode == 0, r.stderr
    assert "strips of 8 rows" in r.stdout and r.stdout.strip().endswith("spec: optimize(2)")
    r = _cli("optimize", "mvt.c", "--threads", "1", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["spec"] == "optimize(1)" and out["statements"][1]["vector_innermost"] is True
    bad = _cli("optimize", "no_such_kernel.c")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "no such file" in bad.stderr
    bad = _cli("optimize", "mvt.c", "--tune")
    assert bad.returncode == 2 and "--param" in bad.stderr


def test_tune_keeps_a_verified_winner_or_the_original():
    from polylab.experiment.tune import candidates, tune

    scop = scop_of("mvt.c")
    specs = candidates(scop, 2)
    assert specs[0] == "optimize(2)" and "parallel" in specs and "optimize(2, 8, 256, 1)" not in specs
    res = tune(scop, threads=2, params={"N": 300}, verify_params={"N": 12}, specs=specs, repeat=1, warmup=0)
    assert [t.spec for t in res.trials] == specs and res.baseline
    if res.best == "original":
        assert all(not t.verified or t.seconds >= res.baseline for t in res.trials)
    else:
        win = next(t for t in res.trials if t.spec == res.best)
        assert win.verified and win.seconds < res.baseline
        assert win.seconds == min(t.seconds for t in res.trials if t.verified and t.seconds)
    assert "kept:" in res.text() and res.to_json()["trials"][0]["spec"] == "optimize(2)"


def test_help_loads_no_heavy_module():
    """``polylab --help`` (and a subcommand's own help) import only what they need: no isl, sympy,
    matplotlib or IPython for the top level (a structural check, not a timing)."""
    code = ("import sys, contextlib, io\n"
            "from polylab.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            "        main(['--help'])\n"
            "    except SystemExit:\n"
            "        pass\n"
            "print(sorted(m for m in ('sympy', 'matplotlib', 'IPython', 'islpy', 'numpy') if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout
    r = _cli("optimize", "--help")
    assert r.returncode == 0 and "--tune" in r.stdout
    r = _cli("--help")
    assert all(c in r.stdout for c in ("analyze", "optimize", "bench", "grade"))


def test_data_that_fits_in_cache_gets_no_locality_tiles():
    """The footprint is the exact count of the elements touched (times their size); where it fits in half
    the L2 cache (constant sizes), neither time tiles nor a fusion with shifts is tried, and a parallel
    innermost loop keeps the statement out of the strips however short it is (heat-3d at 20^3: the source
    order); with parameters the footprint is unknown and nothing changes."""
    from polylab.schedule.optimize import fits_in_cache, footprint_bytes

    prog = polylab.parse("#define N 10\ndouble A[N][N]; float b[N];\n"
                         "for (i = 1; i < N; i++) for (j = 0; j < i; j++) A[i][j] = A[i - 1][j] + b[j];")
    # A: written below the diagonal of rows 1..9 (45 elements), read on and below it in rows 0..8 (45, of
    # which the 9 diagonal ones are not written); b: 9 floats
    assert footprint_bytes(prog.scop) == 8 * (45 + 9) + 4 * 9
    assert fits_in_cache(prog.scop, MACHINE) and not fits_in_cache(prog.scop, Machine(l2_bytes=512))
    heat = scop_of("polybench/heat-3d.c")
    assert fits_in_cache(heat, MACHINE)
    for threads in (1, 2):
        s = optimized(heat, f"optimize({threads})")
        assert "floor" not in s.text()
        assert report(s).structure is not Structure.SHIFT_FUSED
        assert [s.expressions(n)[loop_dims(s, n)[-1]] for n in ("S0", "S1")] == ["k", "k"]
    assert footprint_bytes(scop_of("heat3d.c")) is None and not fits_in_cache(scop_of("heat3d.c"), MACHINE)
