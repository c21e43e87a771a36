"""Unroll-and-jam (:mod:`polylab.schedule.jam`): rows of a loop run together around accumulation chains,
and the code generator isolates the full strips (:func:`polylab.codegen.ast.full_strips`).

Every optimized schedule is checked against brute force: the reference interpreter runs the original
program in its own order and the optimized one under the optimized schedule, and every live-out element
must agree bit for bit (the jam never reassociates a sum: each chain keeps its order); the parameter
values leave a partial strip at the end."""

from __future__ import annotations

import functools
import re

import islpy as isl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import polylab
from polylab.codegen.ast import User, build, full_strips, nodes
from polylab.codegen import generate
from polylab.reference.interpret import same_live_out
from polylab.schedule import check, parse_schedule
from polylab.schedule.jam import group, jammed
from polylab.schedule.optimize import (JamKind, JamOutcome, Machine, Structure, chain_loop, chain_rows, local_span,
                                       loop_dims, openmp_dims)
from polylab.storage import recipe_steps

from test_harness_kernel import CHOLESKY  # the one copy of the kernel's text in the tests

BICG = """double A[N][M]; double s[M]; double q[N]; double p[M]; double r[N];
for (i = 0; i < M; i++)
  s[i] = 0;
for (i = 0; i < N; i++) {
  q[i] = 0.0;
  for (j = 0; j < M; j++) {
    s[j] = s[j] + r[i] * A[i][j];
    q[i] = q[i] + A[i][j] * p[j];
  }
}
"""

ATAX = """double A[M][N]; double x[N]; double y[N]; double tmp[M];
for (i = 0; i < N; i++)
  y[i] = 0;
for (i = 0; i < M; i++) {
  tmp[i] = 0.0;
  for (j = 0; j < N; j++)
    tmp[i] = tmp[i] + A[i][j] * x[j];
  for (j = 0; j < N; j++)
    y[j] = y[j] + A[i][j] * tmp[i];
}
"""

# row i needs row i - 1's finished sum: the rows of a strip cannot run together
RECURRENT = """double a[N]; double b[M];
for (i = 1; i < N; i++)
  for (j = 0; j < M; j++)
    a[i] = a[i] + a[i - 1] * b[j];
"""


def isl_point(like, params: dict[str, int], coords):
    """The set of one point ``coords`` at parameter values ``params``, in the space of ``like``."""
    import islpy as isl

    space = like.get_space()
    names = [space.get_dim_name(isl.dim_type.param, k) for k in range(space.dim(isl.dim_type.param))]
    cons = [f"{n} = {params[n]}" for n in names] + [f"x{k} = {v}" for k, v in enumerate(coords)]
    text = f"[{', '.join(names)}] -> {{ [{', '.join(f'x{k}' for k in range(len(coords)))}] : {' and '.join(cons)} }}"
    return isl.Set(text).align_params(space)


def scop_of(text: str):
    return polylab.parse(text).scop


def optimized(scop, spec: str):
    return parse_schedule(scop, spec, steps=recipe_steps(Machine()))


def jams(s, kind=None, outcome=JamOutcome.DONE):
    """The jams the optimizer asked for in ``s`` (of ``kind``, with ``outcome``; any when None)."""
    return [j for j in s.provenance.optimize.jams
            if (kind is None or j.kind is kind) and (outcome is None or j.outcome is outcome)]


@pytest.mark.parametrize("text", [BICG, ATAX], ids=["bicg", "atax"])
@pytest.mark.parametrize("threads", [1, 2])
def test_chains_are_jammed_and_compute_what_the_original_does(text, threads):
    scop = scop_of(text)
    s = optimized(scop, f"optimize({threads})")
    assert [(j.rows, j.dim) for j in jams(s, JamKind.CHAINS)] == [(8, 1)], s.notes
    assert check(s).legal
    # every statement of the nest runs its row i innermost, inside the strip loop floor(i/8)
    for n in ("S1", "S2", "S3"):
        loops = [e for e in s.expressions(n) if not e.lstrip("-").isdigit()]
        assert loops[0] == "(floor((i)/8))" and loops[-1] == "i", s.expressions(n)
    for M, N in ((5, 19), (11, 8), (3, 3)):
        assert same_live_out(scop, s.scop, {"M": M, "N": N}, schedule=s.union_map) == []


def test_no_jam_where_a_row_needs_the_sum_of_the_row_before():
    scop = scop_of(RECURRENT)
    st = scop.statement("S0")
    s0 = optimized(scop, "original")
    assert chain_loop(s0, st) == (0, 1)        # a[i] accumulates along j: a chain
    assert jammed(s0, 0, group(s0, "S0", 0), 8) is None   # illegal: exact check
    s = optimized(scop, "optimize(1)")
    assert jams(s, JamKind.CHAINS, JamOutcome.ILLEGAL) and "floor" not in s.text()
    assert same_live_out(scop, s.scop, {"N": 13, "M": 5}, schedule=s.union_map) == []


def test_a_band_whose_tiles_let_an_outer_loop_s_rows_run_together():
    """cholesky: ``A[i][j]`` accumulates along ``k`` (a chain), and in the source order no jam is legal
    (the rows of ``j`` need ``A[i][j]`` divided before the next row reads it, the rows of ``i`` the
    square root of the row before). Inside the tiles of the Pluto-style band (permutable) the rows of ``i``
    can run together: that band is chosen for the jam, not for vector loops (it has none), where the data
    does not fit in half the L2 cache, with one thread and with two."""
    scop = scop_of(CHOLESKY)
    base = optimized(scop, "original")
    st = scop.statement("S0")
    assert chain_rows(base, st) is not None
    assert all(jammed(base, d, group(base, "S0", d), 8) is None for d in chain_rows(base, st)[0])
    s = optimized(scop, "optimize(1)")
    rep = s.provenance.optimize
    assert rep.structure is Structure.PLUTO_BAND, s.notes
    (jam,) = jams(s, JamKind.CHAINS)
    assert jam.outcome is JamOutcome.DONE and jam.chains == ("S0",) and jam.rows == 8
    # the jammed rows are those of i (the innermost loop of S0 in the tiles), not of j
    assert s.expressions("S0")[-1] == "i" and "(floor((i)/8))" in s.expressions("S0")
    assert check(s).legal
    for n in (3, 9, 21):
        assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map) == []
    # with two threads the same band and jam, the tiles of a wave as the OpenMP loop
    two = optimized(scop, "optimize(2)")
    assert two.provenance.optimize.structure is Structure.PLUTO_BAND and jams(two, JamKind.CHAINS), two.notes
    assert two.text() == s.text() and two.marked
    for n in (3, 21):
        assert same_live_out(scop, two.scop, {"N": n}, schedule=two.union_map) == []
    # data that fits in half the L2 cache (40 x 40 doubles): the tiles would cost more than the jam gains
    small = optimized(scop_of(CHOLESKY.replace("N", "40")), "optimize(1)")
    assert small.provenance.optimize.structure is not Structure.PLUTO_BAND and not jams(small, JamKind.CHAINS)


def test_what_counts_as_a_chain():
    gemm = polylab.parse_file(polylab.example_path("gemm.c")).scop
    s = optimized(gemm, "original")
    # C[i][j] += A[i][k] * B[k][j] in the order (i, k, j): j's writes differ, no chain
    assert all(chain_loop(s, st) is None for st in gemm.statements)
    bicg = scop_of(BICG)
    s = optimized(bicg, "original")
    assert chain_loop(s, bicg.statement("S3")) is not None       # q[i] along j
    assert chain_loop(s, bicg.statement("S2")) is None           # s[j] along j: every write differs
    assert group(s, "S3", 1) == frozenset({"S1", "S2", "S3"})     # S0 runs in a loop of its own


def test_full_strips_are_isolated_with_constant_bounds():
    scop = scop_of(BICG)
    s = optimized(scop, "optimize(1)")
    full = full_strips(scop, s)
    assert set(full) == {1}
    # the strip c (dimension 1, after the constant 1 of the nest) is full exactly when 8c + 7 < N
    for N in range(1, 30):
        for c in range(0, 5):
            inside = not full[1].intersect(isl_point(full[1], {"M": 4, "N": N}, (1, c))).is_empty()
            assert inside == (8 * c + 7 < N), (N, c)
    program = build(scop, s)
    code = generate(scop, s, "c").kernel
    assert "c4 <= 8 * c1 + 7; c4++" in code and "polylab_imin" not in code, code
    # the order of the instances is the schedule's: the interpreter agrees at sizes with and without a
    # partial strip, and the code runs every instance once
    for N in (16, 21, 5):
        assert same_live_out(scop, s.scop, {"M": 4, "N": N}, schedule=s.union_map) == []
    # the full strips and the partial one: two copies of the nest's statements
    assert sum(1 for n in nodes(program.root) if isinstance(n, User) and n.statement == "S3") >= 2
    # and the compiled code computes what the original does, with and without a partial strip
    from polylab.experiment import verify

    for N in (16, 21):
        v = verify(scop, s, "openmp", params={"M": 7, "N": N}, threads=2)
        assert v.verified, v.reason


# cholesky's band as the optimizer tiles it (8 x 8 x 8 tiles here, 4 rows of i jammed): the jammed rows
# are cut by j < i on the diagonal tiles
CHOLESKY_BAND = ("[N] -> { S0[i, j, k] -> [floor(i/8) + floor(j/8), floor(j/8), floor(k/8), floor(i/4), j, 0, k, i]; "
                 "S1[i, j] -> [floor(i/8) + floor(j/8), floor(j/8), floor(j/8), floor(i/4), j, 2, j, i]; "
                 "S2[i, k] -> [floor(i/8) + floor(k/8), floor(k/8), floor(i/8), floor(i/4), k, 3, i, i]; "
                 "S3[i] -> [2*floor(i/8), floor(i/8), floor(i/8), floor(i/4), i, 1, i, i] }")


def _points(s) -> list[tuple[int, ...]]:
    import islpy as isl

    out: list[tuple[int, ...]] = []
    s.foreach_point(lambda p: out.append(tuple(int(p.get_coordinate_val(isl.dim_type.set, k).to_python())
                                               for k in range(s.dim(isl.dim_type.set)))))
    return out


@functools.cache
def cholesky_band():
    """cholesky, its tiled band (:data:`CHOLESKY_BAND`), the isolated prefixes and the C code (once)."""
    scop = scop_of(CHOLESKY)
    s = parse_schedule(scop, CHOLESKY_BAND)
    return scop, s, full_strips(scop, s), generate(scop, s, "c").kernel


def test_cholesky_band_isolates_the_jammed_rows_in_the_diagonal_tiles_too():
    scop, s, full, code = cholesky_band()
    assert check(s).legal
    assert set(full) == {3, 6}          # the strip's depth in the tile band, the point band's last loop
    # the constant-bound row loop in the tiles below the diagonal and in the diagonal tiles
    assert code.count("c7 <= 4 * c3 + 3; c7++)\n") >= 2, code


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(5, 30))
def test_isolated_strips_are_full_at_every_inner_iteration(n):
    """Brute force: every prefix that the code generator isolates (:func:`full_strips`) holds, for every
    iteration of the loops inside it, the 4 rows of a whole strip of cholesky's update ``S0`` (so the row
    loop there has the constant bounds ``4 c .. 4 c + 3``), at sizes with partial tiles and strips."""
    from polylab.schedule.core import map_from_affs

    scop, s, full, _ = cholesky_band()
    st0 = scop.statement("S0")
    pspace = scop.context.get_space()
    theta = map_from_affs(st0, pspace, list(s.affs["S0"])).intersect_domain(st0.domain.align_params(pspace))
    times = theta.range()
    rows: dict[tuple[int, ...], set[int]] = {}       # (t_0 .. t_6) -> the rows i there
    for t in _points(times.intersect_params(isl_point(times.params(), {"N": n}, ()))):
        rows.setdefault(t[:7], set()).add(t[7])
    for at, prefixes in full.items():
        taken = set(_points(prefixes.intersect_params(isl_point(prefixes.params(), {"N": n}, ()))))
        for inner, rs in rows.items():
            if inner[:at + 1] in taken:
                c = inner[3]
                assert rs == set(range(4 * c, 4 * c + 4)), (n, at, inner, sorted(rs))


def test_cholesky_band_with_isolated_strips_computes_what_the_original_does():
    from polylab.experiment import verify

    scop, s, _, _ = cholesky_band()
    for n in (7, 21, 36):
        assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map) == []
    for n in (21, 36):
        v = verify(scop, s, "c", params={"N": n})
        assert v.verified, v.reason


def test_local_span_is_the_extent_at_fixed_outer_values():
    scop = scop_of(BICG)
    s = optimized(scop, "optimize(1)")
    v = s.affs["S3"]
    st3 = scop.statement("S3")
    dom = st3.domain
    assert local_span(st3, v[:1], v[1], dom) is None                 # floor(i/8): grows with N
    assert local_span(st3, tuple(v[:4]), v[4], dom) == 8              # i inside floor(i/8)
    assert local_span(st3, (), v[4], dom) is None


def test_atax_on_two_threads_starts_no_openmp_loop_per_strip():
    scop = scop_of(ATAX)
    s = optimized(scop, "optimize(2)")
    # y[j]'s loop is parallel but runs inside the sequential strip loop with only the 8 rows inside it
    par, why = openmp_dims(s, 2)
    assert all(s.affs["S3"][d].is_cst() for d in par), (par, why)


# shapes the examples do not have: a triangular row sum, a chain whose statement is read by a second
# accumulation in the same iteration (integers), a banded row sum beside a triangular update
SHAPES = {
    "trmv": ("""double L[N][N]; double x[N]; double y[N];
for (i = 0; i < N; i++) {
  y[i] = 0;
  for (j = 0; j <= i; j++)
    y[i] = y[i] + L[i][j] * x[j];
}
""", [{"N": 13}, {"N": 16}, {"N": 3}]),
    "isum": ("""int A[N][M]; int s[N]; int t[M];
for (i = 1; i < N; i++)
  for (j = 0; j < M; j++) {
    s[i] = s[i] + A[i][j] * A[i - 1][j];
    t[j] = t[j] + s[i];
  }
""", [{"N": 12, "M": 5}, {"N": 17, "M": 3}]),
    "band": ("""double A[N][N]; double x[N]; double y[N];
for (i = 2; i < N - 2; i++)
  for (j = i - 2; j <= i + 2; j++)
    y[i] = y[i] + A[i][j] * x[j];
for (i = 0; i < N; i++)
  for (j = 0; j < i; j++)
    x[i] = x[i] - A[i][j] * y[j] * 0.001;
""", [{"N": 19}, {"N": 9}]),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_other_chain_shapes_are_jammed_and_compute_what_the_original_does(name):
    text, sizes = SHAPES[name]
    scop = scop_of(text)
    s = optimized(scop, "optimize(1)")
    done = jams(s, JamKind.CHAINS)
    assert done and all(j.rows == 8 for j in done) and check(s).legal
    for params in sizes:
        assert same_live_out(scop, s.scop, params, schedule=s.union_map) == []


@st.composite
def accumulations(draw):
    """A nest ``i, j`` with an accumulation along ``j`` into a row element and a second statement that
    reads or writes what the first one touches, with random offsets: the shapes bicg, atax and mvt take,
    and some whose jam is illegal."""
    di = draw(st.integers(-1, 0))
    other = draw(st.sampled_from([
        "s[j] = s[j] + r[i] * A[i][j];",
        "s[j] = s[j] + A[i][j] * q[i];",
        "A[i][j] = A[i][j] + q[i];",
        "q[i] = q[i] + A[i][j] * s[j];",
    ]))
    first = draw(st.booleans())
    acc = f"q[i] = q[i] + A[i][j] * p[j] + 0.5 * q[i + {di}];" if di else "q[i] = q[i] + A[i][j] * p[j];"
    body = f"    {acc}\n    {other}\n" if first else f"    {other}\n    {acc}\n"
    return ("double A[N][M]; double s[M]; double q[N]; double p[M]; double r[N];\n"
            "for (i = 1; i < N; i++)\n  for (j = 0; j < M; j++) {\n" + body + "  }\n")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accumulations(), st.integers(1, 12), st.integers(1, 5))
def test_optimized_accumulations_compute_what_the_original_does(text, n, m):
    scop = scop_of(text)
    s = optimized(scop, "optimize(1)")
    assert check(s).legal
    assert same_live_out(scop, s.scop, {"N": n + 1, "M": m}, schedule=s.union_map) == []


PREFIX_2D = """double S[N][M];
for (i = 1; i < N; i++)
  for (j = 0; j < M; j++)
    S[i][j] = S[i][j] + S[i - 1][j];
for (i = 0; i < N; i++)
  for (j = 1; j < M; j++)
    S[i][j] = S[i][j] + S[i][j - 1];
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_row_recurrences_are_jammed_and_compute_what_the_original_does(threads):
    """A recurrence along the innermost loop (``S[i][j] += S[i][j - 1]``: each ``j`` waits for the one
    before, the rows ``i`` are independent) is a chain too: 8 rows run together. The column recurrence
    ``S[i][j] += S[i - 1][j]`` is not (its innermost ``j`` is parallel, a vector loop): at one thread it
    keeps its row walk (no interchange or strip-mining for a parallel loop no thread uses)."""
    scop = scop_of(PREFIX_2D)
    s0 = optimized(scop, "original")
    assert chain_loop(s0, scop.statement("S1")) is not None
    assert chain_loop(s0, scop.statement("S0")) is None
    s = optimized(scop, f"optimize({threads})")
    assert check(s).legal and [(j.rows, j.statements) for j in jams(s, JamKind.CHAINS)] == [(8, ("S1",))]
    loops = [e for e in s.expressions("S1") if not e.lstrip("-").isdigit()]
    assert loops == ["(floor((i)/8))", "j", "i"], s.expressions("S1")
    if threads == 1:
        assert [e for e in s.expressions("S0") if not e.lstrip("-").isdigit()] == ["i", "j"]
    for N, M in ((19, 5), (8, 11), (3, 3)):
        assert same_live_out(scop, s.scop, {"N": N, "M": M}, schedule=s.union_map) == []


def test_a_recurrence_needs_the_same_element_along_the_innermost_loop():
    """Only a read of the written array at a constant offset along the innermost iterator alone makes a
    recurrence chain: ``a[i][j] = a[i][j - 2] * b[j]`` does, ``a[i][j] = a[i - 1][j - 1]`` (a diagonal)
    and ``a[i][j] = c[i][j - 1]`` (another array) do not."""
    def chain(body: str):
        scop = scop_of(f"double a[N][N]; double b[N]; double c[N][N];\n"
                       f"for (i = 1; i < N; i++) for (j = 2; j < N; j++) {body}")
        return chain_loop(optimized(scop, "original"), scop.statement("S0"))

    assert chain("a[i][j] = a[i][j - 2] * b[j];") is not None
    assert chain("a[i][j] = a[i - 1][j - 1] + 1.0;") is None
    assert chain("a[i][j] = c[i][j - 1] + 1.0;") is None


GESUMMV = """double A[N][N]; double B[N][N]; double tmp[N]; double x[N]; double y[N]; double alpha; double beta;
for (i = 0; i < N; i++) {
  tmp[i] = 0.0;
  y[i] = 0.0;
  for (j = 0; j < N; j++) {
    tmp[i] = A[i][j] * x[j] + tmp[i];
    y[i] = B[i][j] * x[j] + y[i];
  }
  y[i] = alpha * tmp[i] + beta * y[i];
}
"""


def test_statements_of_the_row_loop_itself_do_not_block_the_jam():
    """gesummv's initialisations and final combination run in the row loop ``i`` itself: jammed, they
    keep ``i`` as their innermost loop (in strips of 8), so they lose no vector loop and the two chains
    ``tmp[i]`` and ``y[i]`` are jammed; the result computes what the original does."""
    scop = scop_of(GESUMMV)
    s = optimized(scop, "optimize(1)")
    assert [(j.rows, j.dim, j.chains) for j in jams(s, JamKind.CHAINS)] == [(8, 0, ("S2", "S3"))], s.notes
    for n in ("S0", "S1", "S4"):
        assert [e for e in s.expressions(n) if not e.lstrip("-").isdigit()] == ["(floor((i)/8))", "i"]
    for N in (19, 8, 3):
        assert same_live_out(scop, s.scop, {"N": N}, schedule=s.union_map) == []


@pytest.mark.parametrize("threads", [1, 2])
def test_a_reduction_loop_is_jammed_into_the_vector_loop(threads):
    """gemm's ``C[i][j] += alpha * A[i][k] * B[k][j]`` in the order ``(i, k, j)``: four iterations of the
    reduction loop ``k`` run inside the vector loop ``j``, so each ``C[i][j]`` takes four updates between
    one load and one store, in the order of ``k`` (bit for bit the original's sums)."""
    scop = polylab.parse_file(polylab.example_path("gemm.c")).scop
    s = optimized(scop, f"optimize({threads})")
    assert [j.rows for j in jams(s, JamKind.REDUCTION)] == [4], s.notes
    assert "floor((k)/4)" in s.expressions("S1")[-3] and s.expressions("S1")[-2:] == ["j", "k"]
    assert check(s).legal
    assert 0 in s.parallel_dims and (0 in s.marked) == (threads > 1)   # the parallel i loop is kept
    for params in ({"NI": 3, "NJ": 9, "NK": 11}, {"NI": 2, "NJ": 8, "NK": 4}, {"NI": 2, "NJ": 3, "NK": 2}):
        assert same_live_out(scop, s.scop, params, schedule=s.union_map) == [], params
    # the full strips of k have constant bounds inside the vector loop: gcc unrolls them
    code = generate(scop, s, "c").kernel
    assert "<= 4 * c3 + 3; c" in code, code
    from polylab.experiment import verify

    v = verify(scop, s, "openmp", params={"NI": 5, "NJ": 12, "NK": 10}, threads=threads)
    assert v.verified, v.reason


TRMM = """double A[M][M]; double B[M][N]; double alpha;
for (i = 0; i < M; i++)
  for (j = 0; j < N; j++) {
    for (k = i + 1; k < M; k++)
      B[i][j] += A[k][i] * B[k][j];
    B[i][j] = alpha * B[i][j];
  }
"""


@pytest.mark.parametrize("threads", [2])
def test_the_reduction_loop_is_jammed_inside_a_strip_of_the_vector_loop(threads):
    """trmm's product on two threads strip-mined along its vector loop ``j`` (tiles of 32 columns, the
    parallel loop; one thread runs whole rows instead, the test below): ``k`` is jammed inside the strip
    too, each element of the strip taking 4 updates between one load and one store; and the scaling,
    a shallower statement, is split off (its second read of ``B`` is ``m n`` against the product's
    ``m^2 n``), so the tiles of ``j`` run outermost: one thread team for the product, not one per row."""
    scop = scop_of(TRMM)
    s = optimized(scop, f"optimize({threads})")
    assert [j.rows for j in jams(s, JamKind.REDUCTION)] == [4], s.notes
    loops = [e for e in s.expressions("S0") if not e.lstrip("-").isdigit()]
    assert loops == ["(floor((j)/32))", "i", "(floor((k)/4))", "j", "k"], loops
    assert s.affs["S0"][0].is_cst() and s.affs["S1"][0].is_cst()      # distributed: S0 all before S1
    if threads > 1:      # the tiles of j are the product's first loop, and its OpenMP loop
        assert loop_dims(s, "S0")[0] in s.marked, (s.marked, s.text())
    for params in ({"M": 9, "N": 35}, {"M": 3, "N": 5}, {"M": 13, "N": 64}):
        assert same_live_out(scop, s.scop, params, schedule=s.union_map) == [], params
    # B[i][j] is never a B[k][j] (k > i): it stays in a scalar across the jammed k (1.64 -> 1.19 ms at
    # PolyBench's MEDIUM size, one thread)
    assert "polylab_sum += A[" in generate(scop, s, "openmp").kernel
    from polylab.experiment import verify

    v = verify(scop, s, "openmp", params={"M": 11, "N": 70}, threads=threads)
    assert v.verified, v.reason


def test_a_split_read_counts_only_between_the_deepest_statements():
    """bicg's two products of ``A`` are both of the deepest depth: split apart, ``A`` streams twice, and
    the search keeps them sharing their loop (at two threads too); trmm's scaling is shallower than its
    product, and splitting it off loses nothing the score counts."""
    from polylab.schedule.core import original
    from polylab.schedule.optimize.structures import reuse_lost
    from polylab.schedule.transform import distribute

    for text, lost in ((BICG, 1), (TRMM, 0)):
        s = original(scop_of(text))
        assert reuse_lost(s, distribute(s, 0)) == lost, text
    assert optimized(scop_of(BICG), "optimize(2)").provenance.optimize.structure is Structure.KEPT


@pytest.mark.parametrize("threads", [1, 2])
def test_a_reduction_jam_after_a_chain_jam_and_none_where_nothing_accumulates(threads):
    """mvt: x1's chain is jammed (8 rows), and the transposed product's reduction loop too (4 iterations
    inside its strip of 32 columns); the code generator isolates the full strips of both depths of the
    one band, so both have their constant-bound loops, and the code computes what the original does."""
    from polylab.experiment import verify

    scop = polylab.parse_file(polylab.example_path("mvt.c")).scop
    s = optimized(scop, f"optimize({threads})")
    assert [j.kind for j in s.provenance.optimize.jams] == [JamKind.CHAINS, JamKind.REDUCTION], s.notes
    assert all(j.outcome is JamOutcome.DONE for j in s.provenance.optimize.jams)
    code = generate(scop, s, "c").kernel
    assert re.search(r"c\d+ <= 8 \* c\d+ \+ 7; c\d+\+\+\)", code), code
    assert re.search(r"c\d+ <= 4 \* c\d+ \+ 3; c\d+\+\+\)", code), code
    for n in (1, 7, 8, 13, 37):
        assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map) == [], n
    v = verify(scop, s, "openmp", params={"N": 45}, threads=threads)
    assert v.verified, v.reason
    # a loop around a vector loop that writes a different element in each of its iterations
    copy = scop_of("double A[N][M]; double B[N][M];\nfor (i = 0; i < N; i++)\n  for (j = 0; j < M; j++)\n"
                   "    A[i][j] = B[i][j] + 1.0;\n")
    assert not jams(optimized(copy, "optimize(1)"), JamKind.REDUCTION, None)


@st.composite
def reductions(draw):
    """A three-deep nest whose statement accumulates into an element that does not depend on one of the
    loops, with the loops in a random order and random operand subscripts: gemm, syrk, covariance and
    transposed-product shapes, some with a second statement reading the sums."""
    order = draw(st.permutations(["i", "j", "k"]))
    a = draw(st.sampled_from(["A[i][k]", "A[k][i]", "A[j][k]"]))
    b = draw(st.sampled_from(["B[k][j]", "B[j][k]", "A[k][j]"]))
    second = draw(st.sampled_from(["", "    D[i][j] = C[i][j] * 0.5;\n"]))
    loops = "".join(f"{'  ' * d}for ({v} = 0; {v} < {v.upper()}; {v}++)\n" for d, v in enumerate(order))
    body = f"{'  ' * 3}C[i][j] = C[i][j] + {a} * {b};\n"
    text = "double A[40][40]; double B[40][40]; double C[I][J]; double D[I][J];\n" + loops + body
    if second:
        text += "for (i = 0; i < I; i++)\n  for (j = 0; j < J; j++)\n" + second
    return text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reductions(), st.integers(1, 9), st.integers(1, 10), st.sampled_from([1, 2]))
def test_optimized_reductions_compute_what_the_original_does(text, n, m, threads):
    scop = scop_of(text)
    s = optimized(scop, f"optimize({threads})")
    assert check(s).legal
    assert same_live_out(scop, s.scop, {"I": n, "J": m, "K": (n + m) % 7 + 1}, schedule=s.union_map) == [], (
        text, s.text())


# -- the rows' elements in registers across the loop around them (codegen.ast.register_rows) -------------
@st.composite
def register_cases(draw):
    """An accumulation ``X[i][j] = X[i][j] + U * V`` over ``i, j, k`` (``k < j`` or ``k < N``) whose
    operands may touch ``X``'s elements, and a schedule that jams 4 rows of ``i`` or ``j`` inside the loop
    of ``k`` or of the other row iterator: some keep their elements in registers, some read them or write
    one element per loop, some read no other element of ``X``."""
    u = draw(st.sampled_from(["A[i][k]", "X[i][k]", "X[k][j]", "X[j][k]", "X[k][k]"]))
    v = draw(st.sampled_from(["B[k][j]", "X[k][j]", "A[j][k]"]))
    order = draw(st.sampled_from([("i", "j", "k"), ("i", "k", "j"), ("j", "i", "k"), ("j", "k", "i")]))
    tri = draw(st.booleans())
    text = ("double A[N][N]; double B[N][N]; double X[N][N];\n"
            f"for (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n    for (k = 0; k < {'j' if tri else 'N'}; k++)\n"
            f"      X[i][j] = X[i][j] + {u} * {v};\n")
    row, outer, loop = order
    return text, u, v, order, tri, f"[N] -> {{ S0[i, j, k] -> [floor({row}/4), {outer}, {loop}, {row}] }}"


def _registers_by_enumeration(u: str, v: str, order, tri: bool, n: int) -> bool:
    """The conditions of :func:`polylab.codegen.ast.register_rows` checked on every pair of instances at
    ``N = n``: some other read of ``X``; at one prefix (strip, outer iterator), one element per row, and
    no other read of one."""
    if not (u.startswith("X") or v.startswith("X")):
        return False
    row, outer, _ = order
    pts = [dict(i=i, j=j, k=k) for i in range(n) for j in range(n) for k in range(j if tri else n)]

    def el(text: str, x: dict) -> tuple:
        name, rest = text.split("[", 1)
        return (name, *(eval(s, {}, x) for s in rest.rstrip("]").split("][")))

    for x in pts:
        for y in pts:
            if (x[row] // 4, x[outer]) != (y[row] // 4, y[outer]):
                continue
            wx, wy = ("X", x["i"], x["j"]), ("X", y["i"], y["j"])
            if (x[row] == y[row]) != (wx == wy):
                return False
            if el(u, x) == wy or el(v, x) == wy:
                return False
    return True


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(register_cases())
def test_register_rows_agrees_with_enumeration(case):
    """Exactness of :func:`~polylab.codegen.ast.register_rows` (parametric in ``N``) against brute force at
    ``N = 1 .. 6``: where it keeps the rows' elements in registers no pair of instances breaks its
    conditions, and where it does not, some size shows a pair that does."""
    from polylab.codegen.ast import register_rows

    text, u, v, order, tri, spec = case
    scop = scop_of(text)
    s = parse_schedule(scop, spec)
    kept = ("S0", 2) in register_rows(scop, s)
    seen = [_registers_by_enumeration(u, v, order, tri, n) for n in range(1, 7)]
    assert kept == all(seen), (text, spec, seen)


def test_rows_in_registers_are_printed_only_where_exact_and_compute_what_the_original_does():
    """``X[i][j] += X[i][k] * B[k][j]`` with 4 rows of ``i`` jammed inside ``k``: for ``k < j`` the 4
    elements stay in registers across ``k`` (no ``X[i][k]`` read is one of them); for ``k < N`` they do
    not (``k`` meets ``j``), nor with ``A[i][k]`` read (restrict lets the compiler do it). The compiled
    programs compute what the original does, with partial strips."""
    from polylab.experiment import verify

    spec = "[N] -> { S0[i, j, k] -> [floor(i/4), j, k, i] }"
    for u, bound, registered in (("X[i][k]", "j", True), ("X[i][k]", "N", False), ("A[i][k]", "j", False)):
        scop = scop_of("double A[N][N]; double B[N][N]; double X[N][N];\n"
                       f"for (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n    for (k = 0; k < {bound}; k++)\n"
                       f"      X[i][j] = X[i][j] + {u} * B[k][j];\n")
        s = parse_schedule(scop, spec)
        code = generate(scop, s, "c").kernel
        assert ("polylab_acc" in code) == registered, code
        v = verify(scop, s, "c", params={"N": 10})
        assert v.verified, v.reason


# -- the accumulated element in a register across the innermost loop (codegen.ast.register_accumulators) ---
@st.composite
def accumulator_cases(draw):
    """An accumulation ``X[i][j] = X[i][j] + U * V`` over ``i, j, k`` (``k`` from ``0`` or ``i + 1``) whose
    operands may touch ``X``'s elements, under a random order of the loops, with or without 4 iterations
    of the innermost loop jammed inside the one before it: some keep ``X``'s element in a scalar across
    the innermost loop, some change the element there, some read it through another subscript, some read
    no other element of ``X``."""
    u = draw(st.sampled_from(["A[i][k]", "X[i][k]", "X[k][j]", "X[k][i]", "X[j][k]"]))
    v = draw(st.sampled_from(["B[k][j]", "X[k][j]", "A[k][i]"]))
    order = draw(st.permutations(["i", "j", "k"]))
    lower = draw(st.sampled_from(["0", "i + 1"]))
    jam = draw(st.booleans())
    text = ("double A[N][N]; double B[N][N]; double X[N][N];\n"
            f"for (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n    for (k = {lower}; k < N; k++)\n"
            f"      X[i][j] = X[i][j] + {u} * {v};\n")
    a, b, q = order
    dims = [a, f"floor({q}/4)", b, q] if jam else [a, b, q]
    return text, u, v, order, lower, jam, f"[N] -> {{ S0[i, j, k] -> [{', '.join(dims)}] }}"


def _accumulator_by_enumeration(u: str, v: str, order, lower: str, jam: bool, n: int) -> bool:
    """The conditions of :func:`polylab.codegen.ast.register_accumulators` checked on every pair of
    instances at ``N = n``: some other read of ``X``; at one prefix (every loop outside the innermost
    one), one element written, and no other read of it."""
    if not (u.startswith("X") or v.startswith("X")):
        return False
    a, b, q = order
    pts = [dict(i=i, j=j, k=k) for i in range(n) for j in range(n) for k in range(eval(lower, {}, dict(i=i)), n)]

    def el(text: str, x: dict) -> tuple:
        name, rest = text.split("[", 1)
        return (name, *(eval(s, {}, x) for s in rest.rstrip("]").split("][")))

    def prefix(x: dict) -> tuple:
        return (x[a], x[q] // 4, x[b]) if jam else (x[a], x[b])

    for x in pts:
        for y in pts:
            if prefix(x) != prefix(y):
                continue
            wy = ("X", y["i"], y["j"])
            if ("X", x["i"], x["j"]) != wy or el(u, x) == wy or el(v, x) == wy:
                return False
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accumulator_cases())
def test_register_accumulators_agrees_with_enumeration(case):
    """Exactness of :func:`~polylab.codegen.ast.register_accumulators` (parametric in ``N``) against brute
    force at ``N = 1 .. 6``: where it keeps the element in a scalar no pair of instances breaks its
    conditions, and where it does not, some size shows a pair that does."""
    from polylab.codegen.ast import register_accumulators

    text, u, v, order, lower, jam, spec = case
    scop = scop_of(text)
    s = parse_schedule(scop, spec)
    kept = ("S0", 3 if jam else 2) in register_accumulators(scop, s)
    seen = [_accumulator_by_enumeration(u, v, order, lower, jam, n) for n in range(1, 7)]
    assert kept == all(seen), (text, spec, seen)


def test_accumulators_in_registers_are_printed_only_where_exact_and_compute_what_the_original_does():
    """trmm's ``X[i][j] += X[k][i] * B[k][j]`` shape with 4 iterations of ``k`` jammed inside ``j``: for
    ``k > i`` the element ``X[i][j]`` stays in a scalar across the 4 (``X[k][..]`` is never it); not with
    ``A[k][i]`` (restrict lets the compiler do it), nor with the 4 iterations of ``j`` innermost (a
    different element at each). The compiled programs compute what the original does, with partial
    strips."""
    from polylab.experiment import verify

    jam_k, jam_j = "[N] -> { S0[i, j, k] -> [i, floor(k/4), j, k] }", "[N] -> { S0[i, j, k] -> [i, floor(j/4), k, j] }"
    for u, spec, registered in (("X[k][i]", jam_k, True), ("A[k][i]", jam_k, False), ("X[k][i]", jam_j, False)):
        scop = scop_of("double A[N][N]; double B[N][N]; double X[N][N];\n"
                       "for (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n    for (k = i + 1; k < N; k++)\n"
                       f"      X[i][j] = X[i][j] + {u} * B[k][j];\n")
        s = parse_schedule(scop, spec)
        code = generate(scop, s, "c").kernel
        assert ("polylab_sum" in code) == registered, code
        for n in (10, 3):
            v = verify(scop, s, "c", params={"N": n})
            assert v.verified, v.reason


def test_one_thread_keeps_the_sums_of_a_reduction_in_registers_across_its_reduction_loop():
    """trmm at one thread: its sums ``B[i][j]`` and its reads ``B[k][j]`` are one array, so the compiler
    checks their overlap at every start of the vector loop, and no strips of ``j`` are offered (a strip
    starts it 8 times as often as a row at 240 columns); among the orders with a vector loop the one whose
    loop around it is the reduction loop ``k`` wins, ``(i, floor(k / 4), j, k)`` with 4 iterations of ``k``
    jammed and ``B[i][j]`` in a scalar across them (1.0 ms against 1.3 ms for the strips at PolyBench's
    MEDIUM size, measured), over ``(k, i, j)``, whose parallel ``i`` no thread uses; it computes what the
    original does. mvt's transposed product, whose sums are an array of their own, keeps its strips."""
    from polylab.experiment import verify

    scop = scop_of(TRMM)
    s = optimized(scop, "optimize(1)")
    loops = [e for e in s.expressions("S0") if not e.lstrip("-").isdigit()]
    assert loops == ["i", "(floor((k)/4))", "j", "k"], s.notes
    assert "polylab_sum += A[" in generate(scop, s, "c").kernel
    for params in ({"M": 37, "N": 45}, {"M": 3, "N": 2}):
        v = verify(scop, s, "c", params=params)
        assert v.verified, v.reason
    mvt = scop_of("double A[N][N]; double x2[N]; double y2[N];\n"
                  "for (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n    x2[i] = x2[i] + A[j][i] * y2[j];\n")
    m = optimized(mvt, "optimize(1)")
    assert m.expressions("S0")[loop_dims(m, "S0")[0]] == "(floor((i)/32))", m.notes


def test_the_reduction_loop_around_a_vector_loop_ranks_first_at_one_thread_only():
    from polylab.schedule.optimize.kinds import Innermost
    from polylab.schedule.optimize.records import StatementScore

    sums = StatementScore(2, Innermost.VECTOR, 7, False, 3, 1, False, True)       # (i, k, j)
    parallel_rows = StatementScore(1, Innermost.VECTOR, 7, False, 3, 2, False, False)  # (k, i, j)
    assert sums.key(1) > parallel_rows.key(1)
    assert parallel_rows.key(2) > sums.key(2)


@pytest.mark.parametrize("name", ["polybench/2mm.c", "polybench/3mm.c"])
def test_every_product_is_jammed_and_isolated_at_its_own_depth(name):
    """2mm's two and 3mm's three products, one after the other in one band: each reduction loop is
    jammed at its own depth, and the code generator isolates the full strips of every depth (the band
    split so that each part holds one), so each product's jammed loop has the constant bounds gcc unrolls;
    the code computes what the original does."""
    scop = polylab.parse_file(polylab.example_path(name)).scop
    s = optimized(scop, "optimize(1)")
    done = [j for j in s.provenance.optimize.jams if j.kind is JamKind.REDUCTION and j.outcome is JamOutcome.DONE]
    products = [st for st in scop.statements if st.depth == 3]
    assert len(done) == len(products) >= 2 and len({j.dim for j in done}) == len(done), s.notes
    assert len(full_strips(scop, s)) >= len(products)
    code = generate(scop, s, "c").kernel
    assert len(re.findall(r"c\d+ <= 4 \* c\d+ \+ 3; c\d+\+\+\)", code)) >= len(products), code
    from polylab.experiment import verify

    ctx = scop.context
    params = {ctx.get_dim_name(isl.dim_type.param, k): 9 + 2 * k for k in range(ctx.dim(isl.dim_type.param))}
    v = verify(scop, s, "c", params=params)
    assert v.verified, v.reason


@st.composite
def products(draw):
    """Two or three products one after the other, each ``X[i][j] += Y[..] * Z[..]`` with its loops in a
    random order and random operand subscripts (gemm-, transposed- and covariance-like), the later ones
    reading what the earlier ones wrote, arrays of declared sizes: the jams and the full strips of several
    depths in one program."""
    count = draw(st.integers(2, 3))
    text = "double A[30][30]; double B[30][30]; double C[30][30]; double D[30][30]; double E[30][30];\n"
    outs = ["C", "D", "E"]
    for p in range(count):
        order = draw(st.permutations(["i", "j", "k"]))
        left = draw(st.sampled_from(["A", "B"] + outs[:p]))
        right = draw(st.sampled_from(["A", "B"] + outs[:p]))
        a = draw(st.sampled_from([f"{left}[i][k]", f"{left}[k][i]"]))
        b = draw(st.sampled_from([f"{right}[k][j]", f"{right}[j][k]"]))
        loops = "".join(f"{'  ' * d}for ({v} = 0; {v} < {v.upper()}; {v}++)\n" for d, v in enumerate(order))
        text += loops + f"{'  ' * 3}{outs[p]}[i][j] += {a} * {b};\n"
    return text


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(products(), st.integers(5, 21), st.integers(4, 23), st.sampled_from([1, 2]), st.booleans())
def test_several_jammed_products_compile_and_compute_what_the_original_does(text, n, m, threads, small_l1):
    """Every product's reduction jammed at its own depth, stream tiles where a slice exceeds a small L1's
    budget: the generated OpenMP code, compiled and run, prints what the original prints."""
    from polylab.experiment import verify

    scop = scop_of(text)
    machine = Machine(threads=threads, l1_bytes=4 * 1024 if small_l1 else 32 * 1024)
    s = parse_schedule(scop, f"optimize({threads})", steps=recipe_steps(machine))
    assert check(s).legal
    v = verify(scop, s, "openmp", params={"I": n, "J": m, "K": (n + m) % 11 + 3}, threads=threads)
    assert v.verified, (text, s.text(), v.reason)
