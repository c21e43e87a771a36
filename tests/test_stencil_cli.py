"""``polylab stencil``: passes, emission, running, refusals (exit 2, line and column); the lowered MLIR
verified by ``mlir-opt`` where it is installed."""

from __future__ import annotations

import json
import subprocess

import pytest

from polylab import toolchain as tc
from polylab.cli import main
from polylab.corpus import example_path
from polylab.stencil import cleanup, inline, lowered_mlir, parse, unroll


def test_emit_stencil_after_passes(capsys):
    assert main(["stencil", "laplace3d.mlir", "--passes", "unroll(j=2),shape"]) == 0
    out = capsys.readouterr().out
    assert "stencil.return unroll [1, 2, 1]" in out and "to ([0, 0, 0] : [32, 32, 32])" in out
    assert parse(out).name == "laplace3d"


@pytest.mark.parametrize("emit, words", [("scop", "S0"), ("c", "polylab_init"), ("openmp", "omp"),
                                         ("cuda", "__global__"), ("mlir", "affine.for")])
def test_emit_forms(capsys, emit, words):
    extra = ["--schedule", "parallel"] if emit in ("openmp", "cuda") else []
    assert main(["stencil", "chain.mlir", "--emit", emit, *extra]) == 0
    assert words in capsys.readouterr().out


def test_run_json_reports_verified_seconds_and_refuses_a_short_speedup(capsys):
    assert main(["stencil", "blur2d.mlir", "--run", "--json", "--repeat", "2", "--domain", "16,16"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is True and data["interpreter"]["verified"] is True
    assert data["seconds"]["median"] > 0
    assert data["speedup"] is None and "too short to time" in data["reason"]


def test_malformed_file_exits_2_with_line_and_column(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text(example_path("stencil/laplace3d.mlir").read_text().replace("addf %w, %e", "addf %w %e"))
    assert main(["stencil", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:16:20: syntax error: expected ','" in err and "^" in err


@pytest.mark.parametrize("argv, words", [
    (["--passes", "inline,fuse"], "unknown pass 'fuse'"),
    (["--domain", "8,x,8"], "not a list of integers"),
    (["--domain", "8,8"], "needs 3 positive extents"),
    (["--passes", "unroll(j=3)", "--emit", "c"], "divisible by the unroll factor"),
])
def test_user_errors_exit_2(capsys, argv, words):
    assert main(["stencil", "laplace3d.mlir", *argv]) == 2
    assert words in capsys.readouterr().err


def test_missing_file_exits_2(capsys):
    assert main(["stencil", "no-such-program.mlir"]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.skipif(tc.mlir_opt() is None, reason="mlir-opt not found")
@pytest.mark.parametrize("name", ["laplace3d", "diffusion", "chain", "blur2d"])
@pytest.mark.parametrize("passes", ["plain", "inlined-unrolled", "tiled-parallel"])
def test_lowered_mlir_verifies_with_mlir_opt(tmp_path, name, passes):
    p = parse(example_path(f"stencil/{name}.mlir").read_text())
    if passes == "inlined-unrolled":
        p = cleanup(unroll(cleanup(inline(p)), 2, 0))
    path = tmp_path / "lowered.mlir"
    path.write_text(lowered_mlir(p, "tile(8,8); parallel" if passes == "tiled-parallel" else None))
    done = subprocess.run([tc.mlir_opt().path, "--verify-diagnostics", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert ("affine.for" in done.stdout or "affine.parallel" in done.stdout) and "func.func @kernel" in done.stdout
    if passes == "tiled-parallel":
        assert "affine.parallel" in done.stdout
