"""The optimizer's cache models on programs whose loops run to parameters over arrays of declared constant
sizes (PolyBench's kernels: ``for (i = 0; i < n; i++)`` over ``double A[N]``), issue 31 item 4:

* the data a region touches is bounded by its arrays' declared sizes: where that fits in half the L2 cache,
  no time strips, time tiles or fusion with shifts (PolyBench's jacobi-1d at its large size, 2 x 2000
  doubles: the source order, instead of strips that only cost);
* a slice read again in every iteration of the outer loop (trmm's and gemm's ``B[k][j]`` across ``i``) that
  does not fit in three quarters of L1 gets stream tiles that keep a tile of it there, and the reduction
  loop inside them is jammed into the vector loop (a wide strip of the vector loop keeps no sums in
  registers); a slice that fits gets none. With threads and parallel rows, only a slice beyond half the
  L2 cache does;
* every schedule computes what the original does, bit for bit (the reference interpreter).
"""

from __future__ import annotations

import polylab
from polylab.reference.interpret import same_live_out
from polylab.schedule import check, parse_schedule
from polylab.schedule.optimize import JamKind, JamOutcome, Machine, ShapeKind, Structure, TimeTiling
from polylab.schedule.optimize.machine import declared_bytes, fits_in_cache, footprint_bytes
from polylab.storage import recipe_steps

JACOBI_1D = """
void kernel(int tsteps, int n, double A[{N}], double B[{N}]) {{
#pragma scop
  for (int t = 0; t < tsteps; t++) {{
    for (int i = 1; i < n - 1; i++) B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (int i = 1; i < n - 1; i++) A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }}
#pragma endscop
}}
"""

TRMM = """
void kernel(int m, int n, double alpha, double A[{M}][{M}], double B[{M}][{N}]) {{
#pragma scop
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {{
      for (int k = i + 1; k < m; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }}
#pragma endscop
}}
"""


def optimized(scop, spec, machine):
    return parse_schedule(scop, spec, steps=recipe_steps(machine))


def test_the_threads_l2_caches_hold_the_data_together():
    """jacobi-1d's two arrays of 40,000 doubles (625 KiB) do not fit in half of one 1 MiB L2 cache, and
    fit in half of two cores' L2 caches together: no time tiles on two threads."""
    scop = polylab.parse(JACOBI_1D.format(N=40000)).scop
    assert footprint_bytes(scop) == 2 * 40000 * 8
    assert not fits_in_cache(scop, Machine(l2_bytes=1 << 20))
    assert fits_in_cache(scop, Machine(l2_bytes=1 << 20, threads=2))


def test_declared_sizes_bound_the_footprint_of_a_program_with_parameters():
    small = polylab.parse(JACOBI_1D.format(N=2000)).scop
    assert small.parameters and declared_bytes(small) == footprint_bytes(small) == 2 * 2000 * 8
    assert fits_in_cache(small, Machine())
    big = polylab.parse(JACOBI_1D.format(N=200000)).scop
    assert footprint_bytes(big) == 2 * 200000 * 8 and not fits_in_cache(big, Machine())
    unknown = polylab.parse(JACOBI_1D.format(N="n")).scop
    assert footprint_bytes(unknown) is None and not fits_in_cache(unknown, Machine())


def test_no_time_strips_where_the_arrays_fit_in_cache():
    native = Machine(vector_bytes=32)
    small = optimized(polylab.parse(JACOBI_1D.format(N=2000)).scop, "optimize(1)", native)
    assert small.provenance.optimize.timing is TimeTiling.NONE
    big = optimized(polylab.parse(JACOBI_1D.format(N=200000)).scop, "optimize(1)", native)
    assert big.provenance.optimize.timing is TimeTiling.TIME_STRIPS


def test_a_slice_beyond_the_l1_budget_gets_stream_tiles_and_its_reduction_jammed():
    """trmm's ``B`` (64 x 80 doubles, 40 KiB) is read again for every ``i``: it does not fit in three
    quarters of a 32 KiB L1, so its reduction gets stream tiles (kept in L1) and the jam; with a 64 KiB
    L1 it fits, and the loops stay untiled."""
    machine = Machine(l1_bytes=32 * 1024, l2_bytes=64 * 1024)
    scop = polylab.parse(TRMM.format(M=64, N=80)).scop
    s = optimized(scop, "optimize(1)", machine)
    rep = s.provenance.optimize
    c = {x.statement: x for x in rep.choices}
    assert rep.structure is Structure.FULLY_DISTRIBUTED and c["S0"].kind is ShapeKind.STREAM_TILE, s.notes
    assert [(j.kind, j.outcome) for j in rep.jams] == [(JamKind.REDUCTION, JamOutcome.DONE)]
    assert check(s).legal
    for m, n in ((9, 11), (5, 3), (12, 7)):
        assert same_live_out(scop, s.scop, {"m": m, "n": n}, schedule=s.union_map) == []
    # the same program whose slice fits keeps its loops untiled
    fits = optimized(scop, "optimize(1)", Machine(l1_bytes=64 * 1024, l2_bytes=1024 * 1024))
    assert all(not x.kind.tiled for x in fits.provenance.optimize.choices)


def test_on_two_threads_the_parallel_tile_loop_of_such_a_slice_runs_outermost():
    """The same trmm at two threads: its rows ``i`` are sequential, so the stream tiles of ``(k, j)`` run
    outside them with the tiles of ``j`` as the parallel loop, one thread team for the product
    (:attr:`ShapeKind.STREAM_TILE`; 80 columns give tiles of the smallest width, 32, three of them), its
    reduction loop jammed, every instance computing what the original does. The band's tiles with those
    of ``j`` moved outermost (:attr:`ShapeKind.TILE_OUTER`, PLUTO's shape) walk 32 columns in more loops."""
    machine = Machine(l2_bytes=64 * 1024, threads=2)
    scop = polylab.parse(TRMM.format(M=64, N=80)).scop
    s = optimized(scop, "optimize(2)", machine)
    rep = s.provenance.optimize
    c = {x.statement: x for x in rep.choices}
    assert c["S0"].kind is ShapeKind.STREAM_TILE and c["S0"].shape.names[-1] == "j", s.notes
    assert c["S0"].shape.sizes[1] == 32
    dims = [d for d in range(s.n_dims) if not s.affs["S0"][d].is_cst()]
    assert dims[0] in s.marked and "floor((j)/32)" in s.expressions("S0")[dims[0]], s.text()
    assert [(j.kind, j.outcome) for j in rep.jams] == [(JamKind.REDUCTION, JamOutcome.DONE)]
    assert check(s).legal
    for m, n in ((9, 40), (5, 3), (12, 70)):
        assert same_live_out(scop, s.scop, {"m": m, "n": n}, schedule=s.union_map) == []
    from polylab.experiment import verify

    v = verify(scop, s, "openmp", params={"m": 13, "n": 75}, threads=2)
    assert v.verified, v.reason


GEMM = """
void kernel(int ni, int nj, int nk, double C[{I}][{J}], double A[{I}][{K}], double B[{K}][{J}]) {{
#pragma scop
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
}}
"""


def test_parallel_rows_get_stream_tiles_on_threads_only_beyond_half_the_l2_cache():
    """gemm's rows ``i`` are parallel. Its ``B`` (96 x 160 doubles, 120 KiB) does not fit in three
    quarters of a 32 KiB L1: at one thread it gets stream tiles. At two threads the stream tiles' parallel
    loop is their column tiles, each thread walking every row: where ``B`` fits in half the L2 cache the
    rows are strip-mined outside the one-thread stream tiles instead (each thread's strips of rows read
    every tile from L1, the strips the parallel loop); beyond it the column tiles are kept (their tiles in
    L1, where the band's tiles keep theirs in L2). The code computes what the original does."""
    from polylab.experiment import verify
    from polylab.schedule.optimize import stream_tile_sizes

    scop = polylab.parse(GEMM.format(I=64, J=160, K=96)).scop
    kinds = {}
    for threads, l2 in ((1, 1024), (2, 1024), (2, 128)):
        machine = Machine(l1_bytes=32 * 1024, l2_bytes=l2 * 1024, threads=threads)
        s = optimized(scop, f"optimize({threads})", machine)
        choice = {x.statement: x for x in s.provenance.optimize.choices}["S0"]
        kinds[threads, l2] = choice.kind
        assert check(s).legal
        if threads == 2:
            first = [d for d in range(s.n_dims) if not s.affs["S0"][d].is_cst()][0]
            outer = "floor((i)/32)" if choice.kind is ShapeKind.TILE_OUTER else "floor((j)/"
            assert first in s.marked and outer in s.expressions("S0")[first], s.text()
            if choice.kind is ShapeKind.TILE_OUTER:
                tj, tk = stream_tile_sizes(8, machine)
                assert choice.shape.sizes == (32, tk, tj) and choice.shape.names == ("i", "i", "k", "j")
                assert choice.why.startswith(f"strips of 32 rows of i outermost, stream tiles {tk}x{tj} of (k, j)")
            # every loop runs: a full strip of 32 rows, full tiles of 16 k and of 128 (or 32) columns, and partial ones
            v = verify(scop, s, "openmp", params={"ni": 45, "nj": 150, "nk": 37}, threads=2)
            assert v.verified, v.reason
    assert kinds == {(1, 1024): ShapeKind.STREAM_TILE, (2, 1024): ShapeKind.TILE_OUTER,
                     (2, 128): ShapeKind.STREAM_TILE}


NUSSINOV = """
void kernel(int n, char seq[{N}], int table[{N}][{N}]) {{
  int i, j, k;
#pragma scop
  for (i = n - 1; i >= 0; i--) {{
    for (j = i + 1; j < n; j++) {{
      if (j - 1 >= 0)
        table[i][j] = table[i][j] >= table[i][j - 1] ? table[i][j] : table[i][j - 1];
      if (i + 1 < n)
        table[i][j] = table[i][j] >= table[i + 1][j] ? table[i][j] : table[i + 1][j];
      for (k = i + 1; k < j; k++)
        table[i][j] = table[i][j] >= table[i][k] + table[k + 1][j] ? table[i][j] : table[i][k] + table[k + 1][j];
    }}
  }}
#pragma endscop
}}
"""


def test_a_two_row_band_is_tiled_for_reuse_beyond_the_l2_cache():
    """nussinov's rows ``i`` and columns ``j`` form a permutable band of two rows (its ``k`` loop is a chain
    inside each point, and ``S2[i, j, k] -> S0[i, j + 1]`` keeps ``k`` out of the band). Where its table
    does not fit in the L2 cache, the band is tiled as a wavefront of tiles, every point row before the
    statements' own order (they depend on each other both ways within a point row), so that each column
    ``table[k + 1][j]`` the ``k`` loop reads serves all the rows of a tile from cache; within the L2 the
    source order is kept. Compiled and run at one and two threads, the code prints what the original does."""
    from polylab.experiment import verify

    scop = polylab.parse(NUSSINOV.format(N=120)).scop          # 57.7 KB of table
    kept = optimized(scop, "optimize(1)", Machine(l2_bytes=1 << 20))
    assert kept.provenance.optimize.structure is not Structure.PLUTO_BAND
    for threads in (1, 2):
        machine = Machine(l2_bytes=16 * 1024, threads=threads)
        s = optimized(scop, f"optimize({threads})", machine)
        assert s.provenance.optimize.structure is Structure.PLUTO_BAND, s.notes
        inner = s.expressions("S2")
        assert "floor((j)/" in inner[1] and inner[2:4] == ["-i", "j"] and check(s).legal, s.text()
        v = verify(scop, s, "openmp", params={"n": 77}, threads=threads)
        assert v.verified, v.reason
