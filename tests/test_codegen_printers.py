"""Code generation without compiling: structure of the C, OpenMP, CUDA and MLIR text."""

from __future__ import annotations

import re

import islpy as isl
import pytest

import polylab
from polylab.codegen import TARGETS, GeneratedCode, generate, original_program
from polylab.codegen import ast as A
from polylab.codegen.cexpr import c_expr
from polylab.errors import CodegenError, PolylabError
from polylab.experiment.schedules import schedule_from_spec


def spec_tree(scop, text: str) -> isl.Schedule:
    """A union map as a tree with its exactly parallel dimensions marked coincident (the schedule layer's
    isl-text reading plus its ``parallel`` step)."""
    return schedule_from_spec(scop, text).tree


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


WAVE = "{ S0[i, j] -> [i + j, i] }"


def wavefront_tree(scop) -> isl.Schedule:
    """sweep2d's wavefront as a tree built by hand: the inner member coincident."""
    mupa = isl.MultiUnionPwAff("[N] -> [{ S0[i, j] -> [(i + j)] }, { S0[i, j] -> [(i)] }]")
    node = isl.Schedule.from_domain(scop.domain).get_root().child(0).insert_partial_schedule(mupa)
    return node.band_member_set_coincident(1, 1).get_schedule()


def test_generated_code_is_frozen_and_complete():
    scop = scop_of("sweep2d.c")
    code = generate(scop, None, "c")
    assert isinstance(code, GeneratedCode)
    with pytest.raises(Exception):
        code.target = "cuda"  # type: ignore[misc]
    assert code.kernel in code.program
    assert code.program.startswith(code.header)
    assert "int main(int argc, char **argv)" in code.program
    assert "polylab_dump(\"a\"" in code.program


def test_header_states_schedule_and_statement():
    scop = scop_of("sweep2d.c")
    code = generate(scop, wavefront_tree(scop), "openmp")
    assert "S0[i, j] -> [i + j, i]" in code.header
    assert "a[i][j] = a[i - 1][j] + a[i][j - 1];" in code.header
    assert "parallel loops (coincident schedule dimensions): c1" in code.header
    original = generate(scop, None, "c")
    assert "none (the original schedule)" in original.header
    assert "parallel loops: none" in original.header


def test_statement_text_with_renamed_iterators():
    scop = scop_of("sweep2d.c")
    code = generate(scop, None, "c")
    assert "a[c0][c1] = a[c0 - 1][c1] + a[c0][c1 - 1];" in code.kernel
    wave = generate(scop, wavefront_tree(scop), "c")
    assert "a[c1][c0 - c1] = a[c1 - 1][c0 - c1] + a[c1][c0 - c1 - 1];" in wave.kernel


def test_openmp_pragma_only_on_coincident_loop():
    scop = scop_of("sweep2d.c")
    code = generate(scop, wavefront_tree(scop), "openmp")
    lines = code.kernel.splitlines()
    pragmas = [k for k, ln in enumerate(lines) if "#pragma omp parallel for" in ln]
    assert len(pragmas) == 1
    assert lines[pragmas[0] + 1].strip().startswith("for (int c1 =")
    # the original schedule has no coincident member: no pragma at all
    assert "#pragma omp" not in generate(scop, None, "openmp").kernel
    # a union map carries no coincidence either
    assert "#pragma omp" not in generate(scop, isl.UnionMap("[N] -> " + WAVE), "openmp").kernel


def test_openmp_outermost_parallel_loop_only_and_private_iterators():
    scop = scop_of("jacobi2d.c")
    tree = spec_tree(scop, "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }")
    code = generate(scop, tree, "openmp")
    assert code.kernel.count("#pragma omp parallel for") == 2  # one per statement nest, on i
    assert code.parallel_loops == 4  # i and j of both nests are parallel
    # every iterator is declared in its loop header, hence private to the thread running it
    assert re.findall(r"for \((\w+ )?c\d", code.kernel) and all(
        m == "int " for m in re.findall(r"for \((int )?c\d", code.kernel))


def test_coincident_member_that_isl_removes_marks_nothing():
    # dimension 1 takes a single value per statement (0 or 1): it is coincident but produces no loop,
    # and the mark must not spill onto the loop below it
    scop = scop_of("jacobi2d.c")
    dom = scop.domain
    mupa = isl.MultiUnionPwAff("[T, N] -> [{ S0[t,i,j] -> [(t)]; S1[t,i,j] -> [(t)] }, "
                               "{ S0[t,i,j] -> [(0)]; S1[t,i,j] -> [(1)] }, "
                               "{ S0[t,i,j] -> [(i)]; S1[t,i,j] -> [(i)] }]")
    node = isl.Schedule.from_domain(dom).get_root().child(0).insert_partial_schedule(mupa)
    node = node.band_member_set_coincident(1, 1)
    code = generate(scop, node.get_schedule(), "openmp")
    assert "#pragma omp" not in code.kernel
    assert code.parallel_loops == 0


def test_schedule_object_with_tree_attribute():
    scop = scop_of("sweep2d.c")

    class Holder:
        tree = wavefront_tree(scop)
        steps = ("wavefront theta(i, j) = i + j",)

    code = generate(scop, Holder(), "openmp")
    assert "wavefront theta(i, j) = i + j" in code.header
    assert "#pragma omp parallel for" in code.kernel


def test_all_targets_for_every_example():
    for name in polylab.examples():
        scop = scop_of(name)
        for target in TARGETS:
            code = generate(scop, None, target)
            assert code.target is TARGETS[target] and code.target.name == target
            assert ("func.func @kernel" in code.kernel) == (target == "mlir")
            assert (code.program is None) == (target == "mlir") == (not code.target.program)


def test_unknown_target_and_bad_schedules_are_user_errors():
    scop = scop_of("sweep2d.c")
    with pytest.raises(CodegenError, match="unknown target"):
        generate(scop, None, "fortran")
    with pytest.raises(CodegenError, match="does not cover"):
        generate(scop, isl.UnionMap("[N] -> { S0[i, j] -> [i, j] : i < 3 }"), "c")
    with pytest.raises(CodegenError):
        generate(scop, "{ S0[i, j] -> [i + j, }", "c")
    with pytest.raises(CodegenError):
        generate(scop, 42, "c")


def test_cexpr_division_min_max_and_precedence():
    e = A.Op("fdiv_q", (A.Op("sub", (A.Id("c0"), A.Int(3))), A.Int(4)))
    assert c_expr(e) == "polylab_ifloord(c0 - 3, 4)"
    m = A.Op("min", (A.Id("a"), A.Id("b"), A.Int(7)))
    assert c_expr(m) == "polylab_imin(a, polylab_imin(b, 7))"
    assert c_expr(A.Op("sub", (A.Id("a"), A.Op("sub", (A.Id("b"), A.Id("c")))))) == "a - (b - c)"
    assert c_expr(A.Op("mul", (A.Int(2), A.Op("add", (A.Id("b"), A.Int(1)))))) == "2 * (b + 1)"
    assert c_expr(A.Op("eq", (A.Op("zdiv_r", (A.Id("i"), A.Int(2))), A.Int(0)))) == "i % 2 == 0"
    assert c_expr(A.Op("select", (A.Op("lt", (A.Id("a"), A.Int(0))), A.Int(1), A.Int(2)))) == "a < 0 ? 1 : 2"
    assert c_expr(A.Op("minus", (A.Op("add", (A.Id("a"), A.Int(1))),))) == "-a - 1"  # a negation goes into the sum (issue 28, item 1)


def test_tiled_schedule_uses_strided_loops_and_floor_division():
    scop = scop_of("sweep2d.c")
    tree = spec_tree(scop, "{ S0[i, j] -> [floor(i/4) + floor(j/4), floor(i/4), i, j] }")
    code = generate(scop, tree, "openmp")
    assert code.kernel.count("#pragma omp parallel for") == 1
    mlir = generate(scop, tree, "mlir").kernel
    assert "floordiv 4" in mlir and "affine.parallel" in mlir


def test_cuda_structure_for_wavefront():
    scop = scop_of("sweep2d.c")
    code = generate(scop, wavefront_tree(scop), "cuda")
    assert code.kernel.count("__global__") == 2   # one launch per wave, or one cooperative kernel for all
    assert "POLYLAB_LAUNCH(kernel1, polylab_grid, polylab_block," in code.kernel
    host = code.kernel[code.kernel.index("static void kernel("):]
    assert "for (int c0 = 2; c0 < 2 * N - 1; c0++)" in host  # the wave loop stays on the host
    assert "if (polylab_ix >= polylab_n0) return;" in code.kernel  # the bounds guard
    assert "cudaEventElapsedTime" in code.program and "cudaMemcpy" in code.program
    assert "cudaGraphLaunch" in code.program  # many waves: one graph launch per run


def test_cuda_maps_nested_parallel_loops_to_a_grid_with_x_on_the_stride_1_loop():
    scop = scop_of("jacobi2d.c")
    tree = spec_tree(scop, "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }")
    code = generate(scop, tree, "cuda")
    assert code.kernel.count("__global__") == 2
    assert "const int c3 = polylab_lo1 + (int)(polylab_ix);" in code.kernel   # j: the last subscript
    assert "const int c2 = polylab_lo0 + (int)(polylab_iy);" in code.kernel
    assert "polylab_block_shape(polylab_n1, polylab_n0, 1," in code.kernel
    assert any("thread x = c3" in n for n in code.notes)


def test_mlir_structure():
    scop = scop_of("sweep2d.c")
    text = generate(scop, wavefront_tree(scop), "mlir").kernel
    assert "func.func @kernel(%N: index, %a: memref<?x?xf64>)" in text
    assert "affine.parallel (%c1) = (max(" in text
    assert "affine.load %a[" in text and "affine.store" in text and "arith.addf" in text
    gemm = generate(scop_of("gemm.c"), None, "mlir").kernel
    assert "%alpha: f64" in gemm and "arith.mulf" in gemm
    sl3 = generate(scop_of("sl3.sy"), None, "mlir").kernel
    assert "memref<400x400x400xf32>" in sl3 and "arith.divf" in sl3


def test_original_program_keeps_the_source_text():
    scop = scop_of("sl3.sy")
    text = original_program(scop)
    assert "while (k < n - 1)" in text
    assert "#define starttime()" in text
    assert "#define MAXN 400" in text
    assert "static const float f = 7.01;" in text
    scop2 = scop_of("jacobi2d.c")
    text2 = original_program(scop2)
    assert "int t, i, j;" in text2
    assert "for (t = 0; t < T; t++)" in text2


def test_parameters_fixed_in_context_simplify_bounds():
    scop = scop_of("jacobi2d.c").with_parameters({"N": 10})
    code = generate(scop, None, "c")
    assert "c1 <= 8" in code.kernel


def test_errors_are_polylab_errors():
    scop = scop_of("sweep2d.c")
    with pytest.raises(PolylabError):
        generate(scop, isl.UnionMap("{ S0[i, j] -> [i] : i < 0 }"), "c")
