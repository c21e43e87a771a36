"""Generated code compiles: C and OpenMP with gcc -Wall (no warnings), CUDA with nvcc, MLIR with mlir-opt."""

from __future__ import annotations

import subprocess

import pytest

import polylab
from polylab import toolchain as tc
from polylab.codegen import generate, original_program
from polylab.experiment.schedules import schedule_from_spec

WARN_FLAGS = ("-O2", "-ffp-contract=off", "-Wall")

#: (example, schedule as a union map with exactly parallel dimensions marked) beyond the original ones
SCHEDULES = [
    ("sweep2d.c", "{ S0[i, j] -> [i + j, i] }"),
    ("sweep2d.c", "{ S0[i, j] -> [floor(i/4) + floor(j/4), floor(i/4), i, j] }"),
    ("jacobi2d.c", "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }"),
    ("seidel2d.c", "{ S0[t,i,j] -> [4t + 2i + j, t, i] }"),
    ("sl3.sy", "{ S0[i,j,k] -> [0,i,j,k]; S1[i,j,k] -> [1,i+j+k,i,j] }"),
]


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


def variants():
    for name in polylab.examples():
        yield name, None
    for name, text in SCHEDULES:
        yield name, text


def _schedule(scop, text):
    return None if text is None else schedule_from_spec(scop, text).tree


needs_c = pytest.mark.skipif(tc.c_compiler() is None, reason="no C compiler")


@needs_c
def test_c_and_openmp_compile_without_warnings():
    requests, labels = [], []
    for name, text in variants():
        scop = scop_of(name)
        sched = _schedule(scop, text)
        for target in ("c", "openmp"):
            requests.append(tc.BuildRequest(generate(scop, sched, target).program, flags=WARN_FLAGS,
                                            openmp=target == "openmp"))
            labels.append((name, text, target))
        if text is None:
            requests.append(tc.BuildRequest(original_program(scop), flags=WARN_FLAGS))
            labels.append((name, "original program", "c"))
    results = tc.compile_many(requests)
    for label, res in zip(labels, results):
        assert not isinstance(res, Exception), f"{label}: {res}"
        assert not res.warnings, f"{label}: {[str(w) for w in res.warnings]}"


@pytest.mark.needs_nvcc
@pytest.mark.skipif(tc.cuda_compiler() is None, reason="nvcc not found")
def test_cuda_compiles_with_nvcc():
    requests, labels = [], []
    for name, text in variants():
        scop = scop_of(name)
        requests.append(tc.BuildRequest(generate(scop, _schedule(scop, text), "cuda").program,
                                        language="cuda", flags=("-O2",)))
        labels.append((name, text))
    results = tc.compile_many(requests)
    for label, res in zip(labels, results):
        assert not isinstance(res, Exception), f"{label}: {res}"
        assert not res.warnings, f"{label}: {[str(w) for w in res.warnings]}"


@pytest.mark.needs_mlir
@pytest.mark.skipif(tc.mlir_opt() is None, reason="mlir-opt not found")
def test_mlir_verifies_with_mlir_opt(tmp_path):
    tool = tc.mlir_opt()
    for k, (name, text) in enumerate(variants()):
        scop = scop_of(name)
        code = generate(scop, _schedule(scop, text), "mlir")
        path = tmp_path / f"v{k}.mlir"
        path.write_text(code.kernel)
        done = subprocess.run([tool.path, "--verify-each", str(path)], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, f"{name} {text}:\n{done.stderr}\n{code.kernel}"
        if code.parallel_loops:
            assert "affine.parallel" in code.kernel


@pytest.mark.needs_mlir
@pytest.mark.skipif(tc.mlir_opt() is None, reason="mlir-opt not found")
def test_mlir_for_random_nests_verifies(tmp_path):
    from hypothesis import HealthCheck, assume, given, settings

    from strategies import affine_nests

    tool = tc.mlir_opt()

    @settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
    @given(src=affine_nests())
    def check(src):
        try:
            scop = polylab.parse(src).scop
        except polylab.PolylabError:
            assume(False)
        code = generate(scop, None, "mlir")
        path = tmp_path / "nest.mlir"
        path.write_text(code.kernel)
        done = subprocess.run([tool.path, str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{done.stderr}\n{code.kernel}\n{src}"

    check()
