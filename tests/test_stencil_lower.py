"""A stencil program's lower forms: polylab's model (compiled C and OpenMP code verified bit for bit against the
reference interpreter), xDSL's lowered loops compiled through mlir-opt, the GPU dialect's two forms checked by
mlir-opt, and the distribution over MPI ranks with its halo exchanges."""

from __future__ import annotations

import pytest

from polylab import stencil
from polylab.stencil.check import check_loops
from polylab.stencil.mlir import distribute
from polylab.toolchain.mlirbuild import mlir_tools

SMALL = {2: (12, 12), 3: (10, 10, 6)}


def small(name: str) -> stencil.Program:
    p = stencil.example(name)
    return stencil.with_domain(p, SMALL[p.rank])


@pytest.mark.parametrize("name", stencil.examples())
def test_the_lowered_model_runs_like_the_interpreter(name):
    p = small(name)
    low = stencil.lower(p)
    assert {a for a, _ in low.fields} >= set(p.output_fields())
    assert stencil.check(low).verified is True
    inlined = stencil.run_passes(p, "stencil-inlining,cse,shape-inference")
    assert stencil.check(inlined, "parallel", "openmp", threads=2).verified is True


def test_a_tiled_schedule_of_the_model_is_verified():
    low = stencil.lower(small("chain"))
    assert stencil.check(low, "tile(4,4)").verified is True


needs_mlir = pytest.mark.skipif(mlir_tools()[0] is None, reason=mlir_tools()[1] or "MLIR tools present")


@needs_mlir
@pytest.mark.parametrize("name", ["laplace3d", "chain", "diffusion"])
def test_xdsls_lowered_loops_compiled_by_mlir_opt_equal_the_interpreter(name):
    p = stencil.run_passes(small(name), "stencil-inlining,cse,shape-inference")
    result = check_loops(p)
    assert result.verified is True, str(result)


@needs_mlir
def test_xdsls_lowering_of_a_smaller_store_of_a_second_result_is_caught():
    """blur2d stores its second result on a smaller box than the apply computes; xDSL's loops write the whole
    box into that field (an element outside the store range changes), and the comparison says where."""
    p = stencil.run_passes(small("blur2d"), "stencil-inlining,cse,shape-inference")
    result = check_loops(p)
    assert result.verified is False and result.first_difference.array == "neg"


@needs_mlir
def test_the_gpu_dialects_two_forms_are_checked_by_mlir_opt():
    forms = stencil.gpu_forms(small("laplace3d"))
    assert "gpu.loop_dim_map" in forms.mapped
    assert "gpu.launch blocks" in forms.launch and "gpu.terminator" in forms.launch
    assert "= %c4, " in forms.launch and "= %c32)" in forms.launch           # blocks of 1 x 4 x 32 threads
    assert "gpu.module" in forms.outlined and "gpu.func" in forms.outlined and "gpu.launch_func" in forms.outlined


def test_distribution_lists_the_halo_exchanges():
    d = distribute(stencil.parse(stencil.example("laplace3d").text), "2x1")
    assert d.grid == (2, 1) and "dmp.swap" in d.text
    assert len(d.exchanges) >= 2 and all("neighbour" in e for e in d.exchanges)
    assert "halo exchanges" in str(d)
    with pytest.raises(stencil.StencilError):
        distribute(small("laplace3d"), "2by1")
