"""Verification and timing: generated code computes what the original program computes."""

from __future__ import annotations

import dataclasses

import islpy as isl
import pytest

import polylab
from polylab import toolchain as tc
from polylab.codegen.cexpr import SOURCE_HELPERS
from polylab.errors import CompileError, IllegalTransformationError, ModelError, RunTimeout
from polylab.experiment import MIN_TIMED_SECONDS, RunReport, Verification, measure, verify
from polylab.experiment.schedules import schedule_from_spec

from example_params import PARAMS

pytestmark = pytest.mark.skipif(tc.c_compiler() is None or not tc.supports_openmp(),
                                reason="needs a C compiler with OpenMP")

#: hand-written legal schedules (union maps; parallel dimensions found exactly from the dependences)
SCHEDULES = [
    ("sweep2d.c", "{ S0[i, j] -> [i + j, i] }", 1),  # point wavefront, inner loop parallel
    ("sweep2d.c", "{ S0[i, j] -> [floor(i/4) + floor(j/4), floor(i/4), i, j] }", 1),  # tile wavefront
    ("jacobi2d.c", "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }", 4),
    ("gemm.c", "{ S0[i,j] -> [i,0,j,0]; S1[i,k,j] -> [i,1,k,j] }", 2),  # (i, k, j) interchange
    ("seidel2d.c", "{ S0[t,i,j] -> [4t + 2i + j, t, i] }", 2),  # skewed wavefront
    ("seidel2d.c", "{ S0[t,i,j] -> [t, 2t + i, 2t + i + j] }", 0),  # skewing
    ("heat3d.c", "{ S0[t,i,j,k] -> [t,0,i,j,k]; S1[t,i,j,k] -> [t,1,i,j,k] }", 6),
    ("sl3.sy", "{ S0[i,j,k] -> [0,i,j,k]; S1[i,j,k] -> [1,i+j+k,i,j] }", 4),  # wave: inner i, j parallel
    ("mvt.c", "{ S0[i,j] -> [i,0,j]; S1[i,j] -> [i,1,j] }", 1),  # fusion: the i loop is parallel
]


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_original_schedule_c_and_openmp_equal_original(name):
    scop = scop_of(name)
    for target in ("c", "openmp"):
        v = verify(scop, None, target, params=PARAMS[name], threads=2)
        assert isinstance(v, Verification)
        assert v.verified is True, str(v)
        assert v.comparison is not None and v.comparison.arrays
        assert not v.warnings


@pytest.mark.parametrize("name,text,n_parallel", SCHEDULES)
def test_hand_written_schedules_equal_original(name, text, n_parallel):
    scop = scop_of(name)
    sched = schedule_from_spec(scop, text)
    from polylab.codegen import generate

    assert generate(scop, sched, "openmp").parallel_loops == n_parallel
    for target in ("c", "openmp"):
        v = verify(scop, sched, target, params=PARAMS[name], threads=2)
        assert v.verified is True, str(v)
    # a plain isl union map is read into the same schedule value (same parallel loops)
    v = verify(scop, isl.UnionMap(text), "openmp", params=PARAMS[name], threads=2)
    assert v.verified is True and v.code.parallel_loops == n_parallel, str(v)


def test_schedule_layer_recipes_verify():
    parse_schedule = pytest.importorskip("polylab.schedule").parse_schedule
    scop = scop_of("jacobi2d.c")
    for recipe in ("original; parallel", "tile(4, 4)"):
        sched = parse_schedule(scop, recipe)
        v = verify(scop, sched, "openmp", params=PARAMS["jacobi2d.c"], threads=2)
        assert v.verified is True, f"{recipe}: {v}"


def test_wrong_code_is_caught_and_the_difference_located():
    # a reference that computes something else (the variant is generated from the statements, the
    # reference is the region's text): verification must catch it and say where
    scop = scop_of("sweep2d.c")
    other = dataclasses.replace(scop, source=scop.source.replace("a[i][j - 1]", "2.0 * a[i][j - 1]"))
    v = verify(other, None, "c", params={"N": 6})
    assert v.verified is False
    assert v.first_difference is not None and v.first_difference.startswith("a[")
    assert "expected" in v.first_difference and "got" in v.first_difference
    assert "FAILED" in str(v)


def test_live_out_elements_are_reported_by_index():
    # sl3's live-out is the one element it prints, x[n/2][n/2][n/2]
    scop = scop_of("sl3.sy")
    assert scop.live_out is not None
    other = dataclasses.replace(scop, source=scop.source.replace("/ f", "/ (f + 1)"))
    assert other.source != scop.source
    v = verify(other, None, "c", params={"n": 8}, compare="live-out")
    assert v.verified is False and v.mode == "live-out" and v.census.elements == 1
    assert v.first_difference.startswith("x[4][4][4]"), v.first_difference
    # by default every written element is compared: the first one the sweep writes already differs
    v = verify(other, None, "c", params={"n": 8})
    assert v.verified is False and v.mode == "written" and v.census.elements == 8 ** 3
    assert v.first_difference.startswith("x[1][1][1]"), v.first_difference
    assert (v.difference.array, v.difference.index) == ("x", (1, 1, 1))


def test_parameters_are_checked():
    scop = scop_of("sweep2d.c")
    with pytest.raises(ModelError, match="no value"):
        verify(scop, None, "c", params={})
    with pytest.raises(ModelError, match="no parameter named"):
        verify(scop, None, "c", params={"N": 4, "T": 2})


def test_infinite_loop_is_stopped_at_the_timeout():
    scop = scop_of("sweep2d.c")
    looping = dataclasses.replace(scop, source="for (;;) { a[1][1] += 1.0; }")
    with pytest.raises(RunTimeout, match="did not finish"):
        verify(looping, None, "c", params={"N": 4}, timeout=1.0)


def test_compile_error_shows_the_compiler_message():
    scop = scop_of("sweep2d.c")
    broken = dataclasses.replace(scop, source="a[1][1] = ;")
    with pytest.raises(CompileError) as info:
        verify(broken, None, "c", params={"N": 4})
    assert "error" in str(info.value)
    assert "expected expression" in str(info.value)


def test_cuda_without_a_gpu_is_not_verified_but_says_why():
    if tc.has_gpu():
        pytest.skip("a GPU is present: the CUDA variant runs")
    scop = scop_of("sweep2d.c")
    v = verify(scop, None, "cuda", params={"N": 8})
    assert v.verified is None and v.reason
    report = measure(scop, None, "cuda", params={"N": 8})
    assert report.verified is None and report.seconds is None and report.reason
    assert report.to_json()["verified"] is None


def test_measure_reports_times_speedup_and_json():
    scop = scop_of("jacobi2d.c")
    tree = schedule_from_spec(scop, "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }")
    seen: list[str] = []
    report = measure(scop, tree, "openmp", params={"T": 2, "N": 40}, threads=2, repeat=3, warmup=1,
                     progress=seen.append)
    assert isinstance(report, RunReport)
    assert report.verified is True
    assert len(report.seconds.runs) == 3 and report.seconds.min <= report.seconds.median
    assert report.baseline is not None
    if min(report.baseline.median, report.seconds.median) >= MIN_TIMED_SECONDS:
        assert report.speedup == pytest.approx(report.baseline.median / report.seconds.median)
    else:  # runs the timer cannot resolve give no ratio, and say why
        assert report.speedup is None and "shorter than" in report.speedup_refused
    data = report.to_json()
    assert set(data) >= {"verified", "seconds", "baseline_seconds", "speedup", "threads", "target"}
    assert set(data["seconds"]) == {"median", "min", "runs"} and data["threads"] == 2
    assert any("timing" in m for m in seen) and any("compiling" in m for m in seen)


def test_schedule_from_spec_plain_map_and_original():
    scop = scop_of("sweep2d.c")
    assert schedule_from_spec(scop, "original") is None
    sched = schedule_from_spec(scop, "{ S0[i, j] -> [i + j, i] }")
    assert verify(scop, sched, "openmp", params={"N": 9}, threads=2).verified is True


CUDA_SCHEDULES = [
    ("sweep2d.c", "{ S0[i, j] -> [i + j, i] }"),
    ("jacobi2d.c", "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }"),
    ("sl3.sy", "{ S0[i,j,k] -> [0,i,j,k]; S1[i,j,k] -> [1,i+j+k,i,j] }"),
]


@pytest.mark.needs_gpu
@pytest.mark.skipif(not tc.has_gpu() or tc.cuda_compiler() is None, reason="needs nvcc and an NVIDIA GPU")
@pytest.mark.parametrize("name,text", CUDA_SCHEDULES)
def test_cuda_variants_run_and_match_on_a_gpu(name, text):
    scop = scop_of(name)
    for sched in (None, schedule_from_spec(scop, text)):
        v = verify(scop, sched, "cuda", params=PARAMS[name])
        assert v.verified is True, str(v)


#: a loop nest that calls the functions the model reads but C does not define: affine ``min``/``MAX`` and
#: ``floord``/``ceild`` in bounds and subscripts, and ``max``/``MIN`` of ``double`` values in statements
_CALLS_SOURCE = """\
double y[N]; double x[N]; double A[N][N];
for (i = 0; i < N; i++)
  for (j = MAX(0, i - 3); j <= min(N - 1, i + 3); j++)
    y[i] = max(y[i], A[i][j] * x[j] + 0.25);
for (i = 0; i < N; i++)
  x[i] = MIN(x[i], y[floord(i, 2)]) + ceild(i, 3) + floor_div(-i, 4) + ceil_div(-i, 5);
"""


@pytest.mark.parametrize("spec", ["original", "optimize(2)"])
def test_the_source_calls_c_lacks_are_defined_and_keep_their_types(spec):
    """The original program and every variant define ``min``, ``max``, ``MIN``, ``MAX``, ``floord``,
    ``ceild``, ``floor_div`` and ``ceil_div`` (the original used to fail to link, and a variant's ``max`` of
    two ``double`` values went through ``int``); both agree, and on a value computed here."""
    scop = polylab.parse(_CALLS_SOURCE).scop
    sched = None if spec == "original" else schedule_from_spec(scop, spec)
    for target in ("c", "openmp"):
        v = verify(scop, sched, target, params={"N": 23}, threads=2)
        assert v.verified is True, str(v)
    from polylab.codegen import generate
    from polylab.codegen.harness import original_program

    for text in (original_program(scop), generate(scop, sched, "c").program):
        assert "#define max(a, b) ((a) > (b) ? (a) : (b))" in text and "int max(" not in text
    # the helpers' values: floor and ceiling of a / b for b > 0 on both signs, and max of doubles
    probe = "#include <stdio.h>\n" + SOURCE_HELPERS + _CALLS_PROBE_MAIN
    assert tc.run(tc.compile(probe, language="c")).stdout.split() == ["-2", "-1", "2", "3", "-1", "0", "2.5"]


_CALLS_PROBE_MAIN = """
int main(void) {
  printf("%d %d %d %d %d %d %.1f\\n", floord(-7, 4), floor_div(-4, 4), floord(9, 4), ceild(9, 4), ceild(-7, 4),
         ceil_div(-3, 4), max(2.5, 1.0));
  return 0;
}
"""
