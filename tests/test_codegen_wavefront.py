"""Regression: code for tiled wavefronts is generated in seconds and computes what the original computes.

``auto; tile_wavefront(16, 64, 64)`` on jacobi2d used to hang inside isl's AST generator
(``isl_ast_build_detect_strides``) because every band was split into one-member bands before generation;
bands are now kept whole and the coincident members are named by one mark per band.
"""

from __future__ import annotations

import subprocess
import sys

import islpy as isl
import pytest

import polylab
from polylab import toolchain as tc
from polylab.codegen import ast as A
from polylab.codegen import generate
from polylab.experiment.schedules import schedule_from_spec, variant_scop

needs_openmp = pytest.mark.skipif(tc.c_compiler() is None or not tc.supports_openmp(),
                                  reason="needs a C compiler with OpenMP")


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


@pytest.mark.parametrize("recipe", ["auto; tile_wavefront(16, 64, 64)", "auto; tile_wavefront(8, 32, 32)"])
def test_jacobi2d_tiled_wavefront_generates_in_seconds(recipe):
    # in a child process, so that a regression fails on the timeout instead of hanging the test run
    path = str(polylab.example_path("jacobi2d.c"))
    proc = subprocess.run([sys.executable, "-m", "polylab", "codegen", path, "--schedule", recipe,
                           "--target", "openmp"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "#pragma omp parallel for" in proc.stdout


def _coincident_depths(node: isl.ScheduleNode) -> set[int]:
    out: set[int] = set()
    if node.get_type() == isl.schedule_node_type.band:
        d = node.get_schedule_depth()
        out |= {d + k for k in range(node.band_n_member()) if node.band_member_get_coincident(k)}
    for k in range(node.n_children()):
        out |= _coincident_depths(node.child(k))
    return out


@pytest.mark.parametrize("name,recipe", [("jacobi2d.c", "auto; tile_wavefront(16, 64, 64)"),
                                         ("jacobi2d.c", "auto; tile_wavefront(16, 64)"),
                                         ("sweep2d.c", "auto; tile_wavefront(4, 4)")])
def test_parallel_loops_are_exactly_coincident_members(name, recipe):
    scop = scop_of(name)
    sched = schedule_from_spec(scop, recipe)
    program = A.build(variant_scop(scop, sched), sched)
    coincident = _coincident_depths(sched.tree.get_root())
    loops = [n for n in A.nodes(program.root) if isinstance(n, A.For)]
    assert program.n_parallel >= 1
    for f in loops:
        assert f.parallel == (f.depth in coincident and not f.degenerate), f
    # the multi-member band stays whole in the tree handed to isl: its inner tile loops are parallel
    assert set(program.parallel_depths) <= coincident


@needs_openmp
@pytest.mark.parametrize("recipe", ["auto; tile_wavefront(16, 64, 64)", "auto; tile_wavefront(2, 4, 4)",
                                    "auto; tile_wavefront(3, 5)"])
def test_jacobi2d_tiled_wavefront_verifies(recipe):
    from polylab.experiment import verify

    scop = scop_of("jacobi2d.c")
    sched = schedule_from_spec(scop, recipe)
    code = generate(variant_scop(scop, sched), sched, "openmp")
    assert code.parallel_loops >= 1
    v = verify(scop, sched, "openmp", params={"N": 20, "T": 4}, threads=2)
    assert v.verified is True, str(v)
