"""The ``polylab codegen`` and ``polylab run`` commands."""

from __future__ import annotations

import json

import pytest

from polylab import toolchain as tc
from polylab.cli import main

needs_cc = pytest.mark.skipif(tc.c_compiler() is None or not tc.supports_openmp(),
                              reason="needs a C compiler with OpenMP")


def test_codegen_prints_code_for_each_target(capsys):
    assert main(["codegen", "sweep2d.c", "--target", "openmp"]) == 0
    out = capsys.readouterr().out
    assert "int main(int argc" in out and "a[c0][c1] = a[c0 - 1][c1] + a[c0][c1 - 1];" in out
    assert main(["codegen", "jacobi2d.c", "--target", "mlir", "--param", "N=10"]) == 0
    out = capsys.readouterr().out
    assert "func.func @kernel" in out and "affine.for" in out
    assert main(["codegen", "sweep2d.c", "--target", "cuda", "--kernel-only"]) == 0
    out = capsys.readouterr().out
    assert "__global__" in out and "int main" not in out


def test_codegen_with_a_schedule(capsys):
    spec = "original; parallel"
    try:
        from polylab.schedule import parse_schedule  # noqa: F401
    except ImportError:
        spec = "{ S0[t,i,j] -> [t,0,i,j]; S1[t,i,j] -> [t,1,i,j] }"
    assert main(["codegen", "jacobi2d.c", "--schedule", spec, "--target", "openmp", "--kernel-only"]) == 0
    out = capsys.readouterr().out
    assert "#pragma omp parallel for" in out


def test_codegen_user_errors_exit_2(capsys):
    assert main(["codegen", "no_such_kernel.c"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["codegen", "sweep2d.c", "--param", "Q=3"]) == 2
    assert "no parameter named" in capsys.readouterr().err


@needs_cc
def test_run_json(capsys):
    code = main(["run", "jacobi2d.c", "--target", "openmp", "--param", "T=2", "--param", "N=24",
                 "--threads", "2", "--repeat", "2", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["verified"] is True and data["target"] == "openmp" and data["threads"] == 2
    assert set(data["seconds"]) == {"median", "min", "runs"} and len(data["seconds"]["runs"]) == 2
    assert data["baseline_seconds"] > 0
    if min(data["seconds"]["median"], data["baseline_seconds"]) >= 1e-3:  # long enough to compare
        assert data["speedup"] > 0
    else:  # too short for the timer: no ratio, and the reason instead
        assert data["speedup"] is None and "shorter than" in data["speedup_refused"]


@needs_cc
def test_run_text_with_small_verification_size(capsys):
    code = main(["run", "sweep2d.c", "--param", "N=64", "--verify-param", "N=9", "--repeat", "1"])
    captured = capsys.readouterr()
    assert code == 0
    assert "verified (c, N=9)" in captured.out and "speedup" in captured.out
    assert "compiling" in captured.err  # progress goes to stderr


@needs_cc
def test_run_cuda_without_gpu_exits_0_with_verified_null(capsys):
    if tc.has_gpu():
        pytest.skip("a GPU is present")
    code = main(["run", "sweep2d.c", "--target", "cuda", "--param", "N=8", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["verified"] is None and data["reason"] and data["seconds"] is None


def test_run_user_errors_exit_2(capsys):
    assert main(["run", "sweep2d.c", "--param", "T=3"]) == 2
    assert "parameter" in capsys.readouterr().err
    assert main(["run", "sweep2d.c", "--param", "N=8", "--repeat", "0"]) == 2
