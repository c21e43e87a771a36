"""``polylab stencil``: xDSL's passes, pass checks, emission, running, the 2020 syntax upgraded, distribution,
refusals (exit 2, line and column); polylab's lowered MLIR verified by ``mlir-opt`` where it is installed."""

from __future__ import annotations

import json
import subprocess

import pytest

from polylab import toolchain as tc
from polylab.cli import main
from polylab.corpus import example_path
from polylab.stencil import lowered_mlir, parse, run_passes


def test_emit_stencil_after_passes(capsys):
    assert main(["stencil", "laplace3d.mlir", "--passes", "polylab-unroll{unroll-factor=1,2,1},shape-inference"]) == 0
    out = capsys.readouterr().out
    assert "unroll <[1, 2, 1]>" in out and "!stencil.temp<[0,32]x[0,32]x[0,32]xf64>" in out
    assert parse(out).name == "laplace3d"


def test_check_passes_names_each_pass(capsys):
    assert main(["stencil", "chain.mlir", "--domain", "8,8,4", "--check-passes", "--passes",
                 "stencil-inlining,shape-inference"]) == 0
    out = capsys.readouterr().out
    assert "stencil-inlining: verified" in out and "shape-inference: verified" in out


def test_upgrade_prints_todays_syntax(tmp_path, capsys):
    old = tmp_path / "old.mlir"
    old.write_text("""module {
  func @copy(%arg0: !stencil.field<?xf64>, %arg1: !stencil.field<?xf64>) attributes {stencil.program} {
    %0 = stencil.cast %arg0([0] : [8]) : (!stencil.field<?xf64>) -> !stencil.field<8xf64>
    %1 = stencil.cast %arg1([0] : [8]) : (!stencil.field<?xf64>) -> !stencil.field<8xf64>
    %2 = stencil.load %0 : (!stencil.field<8xf64>) -> !stencil.temp<?xf64>
    %3 = stencil.apply (%arg2 = %2 : !stencil.temp<?xf64>) -> !stencil.temp<?xf64> {
      %4 = stencil.access %arg2 [0] : (!stencil.temp<?xf64>) -> f64
      %5 = stencil.store_result %4 : (f64) -> !stencil.result<f64>
      stencil.return %5 : !stencil.result<f64>
    }
    stencil.store %3 to %1([0] : [8]) : !stencil.temp<?xf64> to !stencil.field<8xf64>
    return
  }
}
""")
    assert main(["stencil", str(old), "--upgrade"]) == 0
    out = capsys.readouterr().out
    assert "func.func @copy" in out and "!stencil.field<[0,8]xf64>" in out
    assert "func @" not in out.replace("func.func @", "")
    assert parse(out).name == "copy"


def test_distribute_shows_the_halo_exchanges(capsys):
    assert main(["stencil", "laplace3d.mlir", "--domain", "8,8,8", "--distribute", "2x1"]) == 0
    out = capsys.readouterr().out
    assert "2x1 grid of ranks" in out and "dmp.swap" in out and "neighbour" in out


@pytest.mark.parametrize("emit, words", [("scop", "S0"), ("c", "polylab_init"), ("openmp", "omp"),
                                         ("cuda", "__global__"), ("mlir", "affine.for"),
                                         ("loops", "scf.parallel")])
def test_emit_forms(capsys, emit, words):
    extra = ["--schedule", "parallel"] if emit in ("openmp", "cuda") else []
    assert main(["stencil", "chain.mlir", "--emit", emit, *extra]) == 0
    assert words in capsys.readouterr().out


def test_run_json_reports_verified_seconds_and_refuses_a_short_speedup(capsys, monkeypatch):
    from polylab.bench import stencil as timing

    monkeypatch.setattr(timing, "MIN_SECONDS", 1e9)      # every run counts as too short, whatever the load
    assert main(["stencil", "blur2d.mlir", "--run", "--json", "--repeat", "2", "--domain", "16,16"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is True and data["interpreter"]["verified"] is True
    assert data["seconds"]["median"] > 0
    assert data["speedup"] is None and "too short to time" in data["reason"]
    assert data["baseline_seconds"] > 0


def test_malformed_file_exits_2_with_line_and_column(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    text = example_path("stencil/laplace3d.mlir").read_text()
    bad.write_text(text.replace("arith.addf %w, %e", "arith.addf %w %e"))
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if "arith.addf %w, %e" in ln)
    assert main(["stencil", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:{line}:" in err and "syntax error: expected ','" in err and "^" in err


@pytest.mark.parametrize("argv, words", [
    (["--passes", "stencil-inlining,fuse"], "fuse"),
    (["--domain", "8,x,8"], "not a list of integers"),
    (["--domain", "8,8"], "needs 3 positive extents"),
    (["--passes", "polylab-unroll{unroll-factor=1,8,1},shape-inference"], "too big"),
    (["--distribute", "2by1"], "not a grid"),
])
def test_user_errors_exit_2(capsys, argv, words):
    assert main(["stencil", "laplace3d.mlir", *argv]) == 2
    assert words in capsys.readouterr().err


def test_missing_file_exits_2(capsys):
    assert main(["stencil", "no-such-program.mlir"]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.skipif(tc.mlir_opt() is None, reason="mlir-opt not found")
@pytest.mark.parametrize("name", ["laplace3d", "diffusion", "chain", "blur2d"])
@pytest.mark.parametrize("passes", ["plain", "inlined", "tiled-parallel"])
def test_lowered_mlir_verifies_with_mlir_opt(tmp_path, name, passes):
    p = parse(example_path(f"stencil/{name}.mlir").read_text())
    if passes == "inlined":
        p = run_passes(p, "stencil-inlining,cse,shape-inference")
    path = tmp_path / "lowered.mlir"
    path.write_text(lowered_mlir(p, "tile(8,8); parallel" if passes == "tiled-parallel" else None))
    done = subprocess.run([tc.mlir_opt().path, "--verify-diagnostics", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert ("affine.for" in done.stdout or "affine.parallel" in done.stdout) and "func.func @kernel" in done.stdout
    if passes == "tiled-parallel":
        assert "affine.parallel" in done.stdout


def test_speedup_only_from_runs_long_enough_to_time():
    from types import SimpleNamespace

    from polylab.bench.stencil import MIN_SECONDS, speedup_of

    def report(variant: float, base: float):
        return SimpleNamespace(seconds=SimpleNamespace(median=variant), baseline=SimpleNamespace(median=base),
                               speedup=base / variant, reason=None)

    assert speedup_of(report(0.02, 0.05)) == (2.5, None)
    value, reason = speedup_of(report(MIN_SECONDS / 2, 0.05))
    assert value is None and "too short to time" in reason


def test_distribute_and_run_with_mpirun(capsys):
    from polylab.toolchain.mlirbuild import mpi_tools

    if not mpi_tools()[0]:
        pytest.skip(mpi_tools()[1])
    assert main(["stencil", "laplace3d.mlir", "--domain", "8,8,4", "--distribute", "2x1", "--run"]) == 0
    out = capsys.readouterr().out
    assert "MPI_Isend calls" in out and "over 2 ranks (mpirun): verified" in out


def test_a_file_that_is_not_utf8_is_refused_at_its_line_and_column(tmp_path, capsys):
    bad = tmp_path / "latin1.mlir"
    bad.write_bytes(b"func.func @f() {\n  // caf\xe9\n  return\n}\n")
    assert main(["stencil", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:9:" in err and "0xe9" in err and "Traceback" not in err and "UTF-8" in err
