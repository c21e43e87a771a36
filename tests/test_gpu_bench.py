"""``polylab bench --target cuda`` without a GPU: the statuses, the bytes a kernel moves, the JSON report;
with a GPU (``needs_gpu``): verified and timed."""

from __future__ import annotations

import json

import islpy as isl
import pytest

import polylab
from polylab import toolchain as tc
from polylab.bench import load_kernel, plan
from polylab.bench.gpu import (COMPILED, GPU_TARGETS, SEQUENTIAL, moved_bytes, point_count, run_gpu_case,
                               target_cases)
from polylab.cli import main
from polylab.codegen.cuda import NO_PARALLEL_LOOP


def test_moved_bytes_of_jacobi2d_is_four_arrays_per_point_and_step():
    scop = polylab.parse_file(polylab.example_path("jacobi2d.c")).scop
    n, t = 10, 3
    assert moved_bytes(scop, {"N": n, "T": t}) == 4 * 8 * (n - 2) ** 2 * t
    assert moved_bytes(scop, {"N": 4000, "T": 100}) == 4 * 8 * 3998 ** 2 * 100


def test_point_count_is_exact_for_boxes_and_small_triangles_and_none_beyond():
    tri = isl.Set("[N] -> { [i, j] : 0 <= i < N and 0 <= j < i }")
    assert point_count(tri, {"N": 50}) == 50 * 49 // 2
    assert point_count(tri, {"N": 100000}) is None
    box = isl.Set("[N, T] -> { [t, i] : 0 <= t < T and 1 <= i < N - 1 }")
    assert point_count(box, {"N": 10 ** 6, "T": 1000}) == 1000 * (10 ** 6 - 2)
    assert point_count(box, {"N": 1, "T": 5}) == 0


def _case(name: str, spec: str, params):
    k = load_kernel(name)
    [case] = plan([k], [spec], threads=[None], params=params, verify_params=params, target="cuda")
    return k, case


def test_schedule_without_parallel_loop_is_reported_not_timed():
    k, case = _case("seidel2d.c", "original", {"N": 12, "T": 2})
    r = run_gpu_case(k, case, repeat=1, warmup=0, timeout=60)
    assert r.status == SEQUENTIAL and r.reason == NO_PARALLEL_LOOP and r.seconds is None


def test_illegal_schedule_is_refused():
    k, case = _case("sweep2d.c", "{ S0[i, j] -> [i - j, i] }", {"N": 12})
    r = run_gpu_case(k, case, repeat=1, warmup=0, timeout=60)
    assert r.status == "illegal" and r.seconds is None


@pytest.mark.skipif(tc.c_compiler() is None or tc.cuda_compiler() is None or tc.has_gpu(),
                    reason="needs gcc and nvcc, and no GPU (with one the case is timed)")
def test_cli_without_gpu_compiles_and_emulates(tmp_path):
    out = tmp_path / "gpu.json"
    code = main(["bench", "--target", "cuda", "sweep2d.c", "--schedules", "original", "wavefront; parallel",
                 "--param", "N=64", "--verify-param", "N=12", "--no-progress", "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    by = {r["spec"]: r for r in data["results"]}
    assert by["original"]["status"] == SEQUENTIAL
    assert by["wavefront; parallel"]["status"] == COMPILED and by["wavefront; parallel"]["emulated"] is True
    assert by["wavefront; parallel"]["median_s"] is None and data["machine"]["has_gpu"] is False
    assert any("thread x" in m for m in by["wavefront; parallel"]["mapping"])


def test_issue_13_targets_are_the_issue_sizes():
    kernels, cases = target_cases()
    assert {k.name for k in kernels} == {"heat3d.c", "jacobi2d.c", "sweep2d.c", "sl3_512.sy"}
    sl3 = next(k for k in kernels if k.name == "sl3_512.sy")
    assert sl3.scop.array("x").extents == ("512", "512", "512") and ("MAXN", 512) in sl3.scop.constants
    assert len(cases) == len(GPU_TARGETS)
    assert {c.params.get("N") for c in cases if c.kernel == "heat3d.c"} == {256}


@pytest.mark.needs_gpu
@pytest.mark.skipif(not tc.has_gpu() or tc.cuda_compiler() is None, reason="needs nvcc and an NVIDIA GPU")
@pytest.mark.parametrize("name,spec,params", [
    ("jacobi2d.c", "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }", {"N": 200, "T": 5}),
    ("heat3d.c", "{ S0[t,i,j,k] -> [t,0,i,j,k]; S1[t,i,j,k] -> [t,1,i,j,k] }", {"N": 40, "T": 3}),
    ("sweep2d.c", "wavefront; parallel", {"N": 300}),
    ("sl3.sy", "wavefront; parallel", {"n": 40}),
    ("jacobi2d.c", "auto; tile_wavefront(8, 8)", {"N": 60, "T": 4}),
])
def test_on_a_gpu_variants_are_verified_timed_and_checksummed(name, spec, params):
    k = load_kernel(name)
    [case] = plan([k], [spec], threads=[None], params=params, verify_params=params, target="cuda")
    r = run_gpu_case(k, case, repeat=2, warmup=1, timeout=300)
    assert r.status == "verified", r.reason
    assert r.emulated is True and r.checksum is True and r.seconds is not None
    assert r.copy_bandwidth and r.copy_bandwidth > 0 and r.launches and r.launches > 0
