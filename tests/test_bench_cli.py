"""``polylab bench``: a sweep writes a table, a JSON report with the documented fields and a PNG chart; a
variant whose output differs is reported unverified and never timed; an illegal schedule is reported."""

from __future__ import annotations

import dataclasses
import json

import pytest

from polylab.cli import main

RESULT_FIELDS = {"kernel", "variant", "spec", "threads", "tile_size", "params", "verify_params", "target", "status",
                 "verified", "median_s", "min_s", "runs", "baseline_median_s", "baseline_min_s", "speedup",
                 "parallel", "schedule", "reason", "first_difference", "build_seconds"}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One ``polylab bench --quick`` run on two tiny kernels (shared by the tests below)."""
    out = tmp_path_factory.mktemp("bench")
    js, png = out / "report.json", out / "chart.png"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_WAIT_POLICY", "passive")      # what bench sets; restored after the run
        rc = main(["bench", "sweep2d.c", "jacobi2d.c", "--quick", "--no-progress", "--json", str(js),
                   "--chart", str(png), "--schedules", "original", "auto; tile_wavefront($T, $T)",
                   "--tile-sizes", "4,8", "--threads", "1,2"])
    return rc, buf.getvalue(), js, png


def test_quick_bench_writes_json_with_documented_fields(quick_run):
    rc, out, js, _ = quick_run
    assert rc == 0, out
    data = json.loads(js.read_text())
    assert {"polylab", "machine", "settings", "baselines", "results", "best", "seconds"} <= set(data)
    assert set(data["baselines"]) == {"sweep2d.c", "jacobi2d.c"}
    for k, b in data["baselines"].items():
        assert b["median"] > 0 and b["min"] <= b["median"], k
    # per kernel: the original once, each tile size with each thread count (once when the code is sequential)
    for k in ("sweep2d.c", "jacobi2d.c"):
        rows = [r for r in data["results"] if r["kernel"] == k]
        assert [r["variant"] for r in rows if r["tile_size"] is None] == ["original"]
        for size in (4, 8):
            threads = sorted(r["threads"] for r in rows if r["tile_size"] == size)
            assert threads == ([1, 2] if rows[-1]["parallel"] else [1]), (k, size, rows)
    for r in data["results"]:
        assert RESULT_FIELDS <= set(r), set(RESULT_FIELDS) - set(r)
        assert r["status"] == "verified" and r["verified"] is True, r
        assert r["median_s"] > 0 and r["min_s"] <= r["median_s"]
        assert r["speedup"] == pytest.approx(r["baseline_median_s"] / r["median_s"])
    assert any(r["parallel"] for r in data["results"])      # the tile-level wavefront has an OpenMP loop
    assert any(r["variant"] == "auto; tile_wavefront(8, 8)" for r in data["results"])
    assert all(data["best"][k]["speedup"] > 0 for k in ("sweep2d.c", "jacobi2d.c"))
    assert data["settings"]["omp_wait_policy"] == "passive"
    assert data["machine"]["cpus"] >= 1


def test_quick_bench_prints_table_and_writes_png(quick_run):
    rc, out, _, png = quick_run
    header = out.splitlines()[0].split()
    assert header == ["kernel", "variant", "threads", "median", "min", "speedup", "verified"]
    assert "original, gcc -O3 (baseline)" in out
    assert "auto; tile_wavefront(4, 4)" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 5000


def test_a_variant_that_computes_something_else_is_unverified_and_not_timed(tmp_path, monkeypatch, capsys):
    import polylab.experiment.timing as timing

    real = timing.generate

    def broken(scop, schedule=None, target="c"):
        code = real(scop, schedule, target)
        if schedule is None:     # leave the original order alone: only the scheduled variant is wrong
            return code
        assert "0.2 *" in code.program
        return dataclasses.replace(code, program=code.program.replace("0.2 *", "0.25 *"))

    monkeypatch.setattr(timing, "generate", broken)
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    js = tmp_path / "r.json"
    rc = main(["bench", "jacobi2d.c", "--quick", "--no-progress", "--schedules", "original", "auto; parallel",
               "--threads", "2", "--json", str(js), "--chart", str(tmp_path / "c.png")])
    out = capsys.readouterr().out
    assert rc == 1
    data = json.loads(js.read_text())
    by = {r["variant"]: r for r in data["results"]}
    bad = by["auto; parallel"]
    assert bad["status"] == "unverified" and bad["verified"] is False
    assert bad["median_s"] is None and bad["speedup"] is None and bad["runs"] == []
    assert bad["first_difference"] and bad["first_difference"].startswith(("A[", "B["))
    assert by["original"]["status"] == "verified"
    assert data["best"]["jacobi2d.c"]["variant"] == "original"
    assert "NO (output differs)" in out and "unverified" in out
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_illegal_schedule_is_reported_not_timed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    js = tmp_path / "r.json"
    rc = main(["bench", "sweep2d.c", "--quick", "--no-progress", "--schedules", "{ S0[i, j] -> [-i, j] }",
               "--json", str(js)])
    out = capsys.readouterr().out
    assert rc == 0
    (r,) = json.loads(js.read_text())["results"]
    assert r["status"] == "illegal" and r["verified"] is None and r["median_s"] is None
    assert r["reason"]
    assert "illegal" in out


@pytest.mark.parametrize("argv", [["bench", "no_such_kernel.c"], ["bench", "sweep2d.c", "--threads", "0"],
                                  ["bench", "sweep2d.c", "--tile-sizes", "a,b"],
                                  ["bench", "sweep2d.c", "--param", "N"]])
def test_user_mistakes_exit_2_without_traceback(argv, capsys, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error" in err.lower()


NATIVE = ("-march=native", "-ffp-contract=off")


def test_plan_gives_every_case_the_timed_builds_flags():
    from polylab.bench import load_kernel, plan

    kernel = load_kernel("sweep2d.c")
    plain = plan([kernel], ["original", "wavefront; parallel"], threads=[1, 2], quick=True)
    native = plan([kernel], ["original", "wavefront; parallel"], threads=[1, 2], quick=True, flags=list(NATIVE))
    assert len(native) == len(plain) == 3
    assert all(c.flags == () and c.to_json()["flags"] == [] for c in plain)
    assert all(c.flags == NATIVE and c.to_json()["flags"] == list(NATIVE) for c in native)
    assert [dataclasses.replace(c, flags=()) for c in native] == plain     # nothing else changes


def test_native_bench_records_the_flags_and_names_them_in_the_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    js = tmp_path / "r.json"
    rc = main(["bench", "sweep2d.c", "--quick", "--native", "--no-progress", "--schedules", "original",
               "wavefront; parallel", "--threads", "2", "--json", str(js)])
    out = capsys.readouterr().out
    assert rc == 0, out
    data = json.loads(js.read_text())
    assert data["settings"]["flags"] == list(NATIVE)
    assert [r["status"] for r in data["results"]] == ["verified", "verified"]
    assert all(r["flags"] == list(NATIVE) for r in data["results"])
    assert "original, gcc -O3 -march=native -ffp-contract=off (baseline)" in out
    assert "over gcc -O3 -march=native -ffp-contract=off" in out
    assert "original, gcc -O3 (baseline)" not in out


def test_native_reaches_every_timed_build_and_no_verification_build(tmp_path, monkeypatch):
    """Every binary that is timed (the baseline, each variant, in every round) was compiled with
    -march=native; every verification build (-O2 -ffp-contract=off) was compiled without it."""
    from polylab import experiment, toolchain as tc
    from polylab.bench import load_kernel
    from polylab.codegen import original_program
    import polylab.experiment.timing as timing

    built, timed = [], []
    real_compile, real_time = tc.compile, timing.time_program

    def compile_spy(source, **kwargs):
        binary = real_compile(source, **kwargs)
        built.append(binary)
        return binary

    def time_spy(binary, args, **kwargs):
        timed.append(binary)
        return real_time(binary, args, **kwargs)

    monkeypatch.setattr(tc, "compile", compile_spy)
    monkeypatch.setattr(timing, "time_program", time_spy)
    monkeypatch.setattr(experiment, "time_program", time_spy)
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    rc = main(["bench", "sweep2d.c", "--quick", "--native", "--no-progress", "--schedules", "original",
               "wavefront; parallel", "--threads", "2", "--repeat", "2", "--rounds", "2"])
    assert rc == 0
    original = original_program(load_kernel("sweep2d.c").scop)
    # baseline (3 times: before, round 2, after), the original order and the wavefront (2 rounds each)
    assert len(timed) == 7, [b.source_path for b in timed]
    assert sum(b.source == original for b in timed) == 3
    assert any(b.openmp for b in timed)                      # the parallel variant was timed
    for b in timed:
        assert b.flags[:3] == ("-O3", *NATIVE) and "-march=native" in b.command, b.command
    checks = [b for b in built if b.flags[:1] == ("-O2",)]   # VERIFY_FLAGS
    assert any(b.source == original for b in checks) and any(b.openmp for b in checks)
    for b in checks:
        assert "-march=native" not in b.flags and "-march=native" not in b.command, b.command


def test_native_is_refused_for_the_gpu_bench(capsys, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert main(["bench", "sweep2d.c", "--quick", "--native", "--target", "cuda"]) == 2
    err = capsys.readouterr().err
    assert "--native" in err and "Traceback" not in err
