"""``polylab bench --search-time``: CPU seconds of the schedule search, each run on a newly parsed kernel."""

from __future__ import annotations

import statistics
import subprocess
import sys

import pytest

from polylab.bench import load_kernel
from polylab.bench.search import cpu_seconds, search_table, search_time, search_times
from polylab.errors import PolylabError


def test_each_run_parses_the_kernel_anew_and_times_the_whole_search():
    calls = []

    def load():
        calls.append(1)
        return load_kernel("gemm.c")

    r = search_time(load, "optimize(1)", runs=3)
    assert len(calls) == 3 and len(r.runs) == 3
    assert r.kernel == "gemm.c" and r.statements == 2
    assert all(t > 0 for t in r.runs) and r.seconds == min(r.runs)
    assert r.to_json()["seconds"] == r.seconds


def test_each_run_starts_without_the_distances_an_earlier_run_cached(monkeypatch):
    # the analysis and legality caches are keyed by value, so an equal SCoP parsed anew would find the
    # earlier run's results: each run clears them just before its clock starts
    import polylab.bench.search as search
    events = []
    monkeypatch.setattr(search, "clear_all", lambda: events.append("clear"))
    monkeypatch.setattr(search, "prepare_variant", lambda scop, spec, machine: events.append("search"))
    search_time(lambda: load_kernel("gemm.c"), "optimize(1)", runs=3)
    assert events == ["clear", "search"] * 3


def test_a_refused_spec_raises_the_readers_error():
    with pytest.raises(PolylabError):
        search_time(lambda: load_kernel("gemm.c"), "optimize(1); tilez(3)", runs=1)


def test_cpu_seconds_count_the_children_that_ended():
    t0 = cpu_seconds()
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(2_000_000))"], check=True)
    assert cpu_seconds() - t0 > 0.05


def test_table_has_a_column_per_spec_and_the_median_of_each():
    started, done = [], []
    results = search_times([lambda: load_kernel("gemm.c"), lambda: load_kernel("sweep2d.c"),
                            lambda: load_kernel("mvt.c")], ["original", "wavefront"], runs=1,
                           on_start=lambda k, spec: started.append((k, spec)), on_result=done.append)
    assert [(r.kernel, r.spec) for r in results][:2] == [("gemm.c", "original"), ("gemm.c", "wavefront")]
    assert started == [(k, s) for k in range(3) for s in ("original", "wavefront")] and done == results
    text = search_table(results)
    median_row = next(line for line in text.splitlines() if line.startswith("median")).split()
    want = statistics.median(r.seconds for r in results if r.spec == "wavefront")
    assert float(median_row[-1]) == pytest.approx(want, abs=0.006)
    assert "wavefront (CPU s)" in text.splitlines()[0]


def test_cli_search_time_prints_the_table_and_writes_json(tmp_path, capsys):
    import json

    from polylab.cli import main

    js = tmp_path / "s.json"
    assert main(["bench", "gemm.c", "mvt.c", "--search-time", "--repeat", "2", "--no-progress",
                 "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "optimize(1) (CPU s)" in out and "optimize(2) (CPU s)" in out and "median" in out
    data = json.loads(js.read_text())
    assert data["settings"] == {"kernels": ["gemm.c", "mvt.c"], "schedules": ["optimize(1)", "optimize(2)"],
                                "runs": 2}
    assert [(r["kernel"], r["spec"]) for r in data["results"]] == [
        ("gemm.c", "optimize(1)"), ("gemm.c", "optimize(2)"), ("mvt.c", "optimize(1)"), ("mvt.c", "optimize(2)")]
    assert all(len(r["runs"]) == 2 and r["seconds"] == min(r["runs"]) for r in data["results"])


def test_cli_search_time_of_a_missing_file_is_a_user_error(capsys):
    from polylab.cli import main

    assert main(["bench", "no_such_kernel.c", "--search-time", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "no_such_kernel" in err
