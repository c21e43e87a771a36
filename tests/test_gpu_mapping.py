"""The GPU mapping without a GPU: which loop goes to thread x and why (from the access functions), the grid
of every parallel nest, block shapes within CUDA's limits, re-based wavefronts, no-parallel-loop reports."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polylab
from polylab import toolchain as tc
from polylab.codegen import ast as A
from polylab.codegen import generate
from polylab.codegen import gpumap as G
from polylab.codegen.cuda import NO_PARALLEL_LOOP
from polylab.codegen.gpuschedule import coalesce, unimodular_with_last_row
from polylab.experiment.schedules import schedule_from_spec, variant_scop


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


def cuda(name: str, spec: str):
    scop = scop_of(name)
    sched = schedule_from_spec(scop, spec)
    return generate(variant_scop(scop, sched), sched, "cuda")


def first_nest(name: str, spec: str) -> G.GridNest:
    scop = scop_of(name)
    sched = schedule_from_spec(scop, spec)
    prog = A.build(scop, sched.tree)
    f = next(n for n in A.nodes(prog.root) if isinstance(n, A.For) and n.parallel)
    outer = [n.iterator for n in A.nodes(prog.root) if isinstance(n, A.For) and n.depth < f.depth]
    nest = G.map_nest(scop, f, outer)
    assert nest is not None
    return nest


def test_linear_forms_of_ast_expressions():
    e = A.Op("sub", (A.Op("add", (A.Id("c1"), A.Op("mul", (A.Int(2), A.Id("c2"))))), A.Int(3)))
    assert G.linear(e) == {"c1": 1, "c2": 2, "": -3}
    assert G.linear(A.Op("minus", (A.Id("c1"),))) == {"c1": -1}
    assert G.linear(A.Op("min", (A.Id("c1"), A.Id("c2")))) is None
    assert G.linear(A.Op("mul", (A.Id("c1"), A.Id("c2")))) is None


def test_heat3d_maps_three_loops_with_x_on_k():
    nest = first_nest("heat3d.c", "{S0[t,i,j,k]->[t,0,i,j,k]; S1[t,i,j,k]->[t,1,i,j,k]}")
    assert [g.loop.iterator for g in nest.loops] == ["c2", "c3", "c4"]
    assert {g.loop.iterator: g.axis for g in nest.loops} == {"c2": "z", "c3": "y", "c4": "x"}
    assert nest.thread_x.iterator == "c4"
    by = {c.iterator: c for c in nest.thread_x.candidates}
    assert by["c4"].count("unit") == len(by["c4"].strides) == 11
    assert by["c2"].count("unit") == 0 and by["c2"].count("strided") == 11
    assert "thread x = c4" in nest.thread_x.reason()
    assert all(g.exact for g in nest.loops)   # a box: the loops' own bounds, no guard needed


def test_thread_x_goes_to_the_outer_loop_when_it_drives_the_last_subscript():
    # the schedule puts j (the stride-1 index of A[i][j]) outside i: the mapping interchanges them
    nest = first_nest("jacobi2d.c", "{ S0[t,i,j] -> [t,0,j,i]; S1[t,i,j] -> [t,1,j,i] }")
    assert nest.thread_x.iterator == "c2"
    assert {g.loop.iterator: g.axis for g in nest.loops} == {"c2": "x", "c3": "y"}
    scop = scop_of("jacobi2d.c")
    sched = schedule_from_spec(scop, "{ S0[t,i,j] -> [t,0,j,i]; S1[t,i,j] -> [t,1,j,i] }")
    code = generate(scop, sched.tree, "cuda")   # an isl tree: mapped as it is
    assert "const int c2 = polylab_lo0 + (int)(polylab_ix);" in code.kernel
    # a polylab Schedule is re-based first (the loops interchanged), and x is then the inner loop
    code = generate(scop, sched, "cuda")
    assert "const int c3 = polylab_lo1 + (int)(polylab_ix);" in code.kernel
    assert any("re-based" in n for n in code.notes)


def test_uniform_access_does_not_count_against_a_loop():
    # mvt: x1[i] += A[i][j] * y1[j]: only i is parallel; it goes to x even though A[i][j] is strided in i
    nest = first_nest("mvt.c", "auto; parallel")
    cand = {c.iterator: c for c in nest.thread_x.candidates}
    assert nest.thread_x.iterator in cand and len(nest.loops) >= 1


def test_a_nest_deeper_than_three_loops_shares_the_z_axis():
    spec = ("{ S0[t,i,j,k] -> [t,0,floor(j/8),i,j,k]; S1[t,i,j,k] -> [t,1,floor(j/8),i,j,k] }")
    nest = first_nest("heat3d.c", spec)
    assert len(nest.loops) == 4
    assert nest.thread_x.iterator == nest.loops[-1].loop.iterator
    assert len(nest.axis_loops("z")) == 2 and len(nest.axis_loops("y")) == 1
    code = cuda("heat3d.c", spec)
    assert "(polylab_iz / (polylab_n" in code.kernel and "% polylab_n" in code.kernel


def test_a_wave_gets_an_exact_range_and_bounds_guards():
    code = cuda("sl3.sy", "wavefront; parallel")
    assert "if (!(" in code.kernel   # the triangle of a wave: each thread checks the loop's own bounds
    assert "polylab_lo1 = " in code.kernel


def test_point_wavefront_keeps_the_closest_step_and_a_transposed_nest_is_rebased():
    scop = scop_of("sl3.sy")
    # in the wave i + j + k = w the best step is along j (k = w - i - j moves too: N - 1 elements apart);
    # the schedule's inner loop j already has it
    sched = schedule_from_spec(scop, "{ S0[i,j,k] -> [0,i,j,k]; S1[i,j,k] -> [1,i+j+k,i,j] }")
    assert coalesce(sched) == (sched, ())
    # with i inner the threads would be N^2 - 1 elements apart: re-based to move j (and k) instead
    worse = schedule_from_spec(scop, "{ S0[i,j,k] -> [0,i,j,k]; S1[i,j,k] -> [1,i+j+k,j,i] }")
    out, notes = coalesce(worse)
    assert notes and notes[0].startswith("S1")
    assert out.expressions("S1")[:2] == worse.expressions("S1")[:2]   # the wave itself is kept
    assert out.is_coincident(2) and out.is_coincident(3)
    code = generate(variant_scop(scop, worse), worse, "cuda")
    note = next(n for n in code.notes if "thread x" in n and "of 8 accesses" in n)   # S1's nest
    assert "subscripts move by [0, 1, -1]" in note or "subscripts move by [0, -1, 1]" in note


def test_coalesce_keeps_a_schedule_that_is_already_coalesced():
    scop = scop_of("jacobi2d.c")
    sched = schedule_from_spec(scop, "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }")
    assert coalesce(sched) == (sched, ())


@given(st.lists(st.integers(-6, 6), min_size=1, max_size=3))
def test_unimodular_completion_has_determinant_one_and_the_row_last(p):
    import sympy

    u = unimodular_with_last_row(p)
    if u is None:
        from math import gcd
        g = 0
        for v in p:
            g = gcd(g, v)
        assert g != 1 or (len(p) == 3 and all(abs(v) != 1 for v in p))
        return
    assert u[-1] == p and abs(sympy.Matrix(u).det()) == 1


def test_schedule_without_parallel_loop_is_reported():
    code = generate(scop_of("seidel2d.c"), None, "cuda")
    assert code.notes[0] == NO_PARALLEL_LOOP
    assert NO_PARALLEL_LOOP in code.kernel
    assert "polylab_dim3(1, 1, 1)" in code.kernel
    assert NO_PARALLEL_LOOP not in cuda("sweep2d.c", "wavefront; parallel").notes


@given(st.integers(0, 5000), st.integers(0, 5000), st.integers(0, 5000),
       st.sampled_from([1, 32, 64, 128, 256, 512, 1024]))
def test_block_shapes_respect_cuda_limits(nx, ny, nz, threads):
    x, y, z = G.block_shape(nx, ny, nz, threads)
    assert x * y * z <= threads <= G.MAX_BLOCK_THREADS
    assert z <= G.MAX_BLOCK_Z and min(x, y, z) >= 1
    assert all(v & (v - 1) == 0 for v in (x, y, z))
    assert x >= min(max(nx, 1), threads) or x * 2 > threads   # x is served first


def test_block_shape_rule_in_c_is_the_python_rule(tmp_path):
    if tc.c_compiler() is None:
        pytest.skip("no C compiler")
    cases = [(nx, ny, nz, t) for nx in (0, 1, 3, 31, 32, 33, 300, 5000) for ny in (0, 1, 7, 64, 1000)
             for nz in (1, 2, 100, 3000) for t in (32, 256, 1024)]
    lines = [f'  polylab_block_shape({a}, {b}, {c}, {t}, s); printf("%u %u %u\\n", s[0], s[1], s[2]);'
             for a, b, c, t in cases]
    src = "#include <stdio.h>\n" + G.BLOCK_SHAPE_C + "int main(void)\n{\n  unsigned s[3];\n" + "\n".join(lines) + \
        "\n  return 0;\n}\n"
    (tmp_path / "b.c").write_text(src)
    subprocess.run(["gcc", "-O1", "-o", str(tmp_path / "b"), str(tmp_path / "b.c")], check=True)
    out = subprocess.run([str(tmp_path / "b")], check=True, capture_output=True, text=True).stdout.split("\n")
    for (a, b, c, t), line in zip(cases, out):
        assert tuple(int(v) for v in line.split()) == G.block_shape(a, b, c, t), (a, b, c, t)


def test_tile_wavefront_gets_a_block_per_tile_and_threads_over_each_inner_wave():
    from polylab.codegen.gpuschedule import wave_inside_tiles

    scop = scop_of("sweep2d.c")
    sched = schedule_from_spec(scop, "auto; tile_wavefront(32, 32)")
    out, notes = wave_inside_tiles(sched)
    assert notes and out.marked == sched.marked | {3}
    assert out.expressions("S0")[:2] == sched.expressions("S0")[:2]   # the tile wave and tile loop are kept
    assert out.is_coincident(3)
    code = generate(scop, sched, "cuda")
    assert "POLYLAB_LAUNCH_BLOCKS(kernel0" in code.kernel and "const long long polylab_ix = blockIdx.x;" in code.kernel
    assert "POLYLAB_FOR_THREADS(polylab_t," in code.kernel and "__syncthreads();" in code.kernel
    # nothing to do for a schedule without sequential point loops under its parallel ones
    jac = schedule_from_spec(scop_of("jacobi2d.c"), "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }")
    assert wave_inside_tiles(jac) == (jac, ())


def test_many_waves_choose_a_cooperative_kernel_at_run_time():
    code = cuda("sweep2d.c", "wavefront; parallel")
    host = code.kernel[code.kernel.index("static void kernel("):]
    assert "if (polylab_waves > POLYLAB_PERSISTENT_WAVES && polylab_cooperative)" in host
    assert "POLYLAB_COOPERATIVE(kernel0" in host and "POLYLAB_LAUNCH(kernel1" in host   # both paths
    assert "cudaLaunchCooperativeKernel" in code.program and "#include <cooperative_groups.h>" in code.program
    assert "polylab_launches > 32 && !polylab_no_graph" in code.program   # graphs for many plain launches
    # a time loop whose body holds two nests keeps one launch per nest
    jac = cuda("jacobi2d.c", "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }")
    assert "POLYLAB_COOPERATIVE(" not in jac.kernel
