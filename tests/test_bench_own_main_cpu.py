"""``polylab bench FILE.c --own-main --cpu-time``: each run timed by the CPU time the kernel charged to its
process (user + system, all threads, ``wait4``), the file without its regions (the ``rest``) timed alike and
subtracted, and the table that says which clock it shows."""

from __future__ import annotations

import json
import statistics

import pytest

from polylab import toolchain as tc
from polylab.bench import ownmain
from polylab.bench.ownmain import OwnMainReport, OwnMainResult
from polylab.cli import main

needs_cc = pytest.mark.skipif(tc.c_compiler() is None, reason="needs a C compiler")

SLEEPS = """#include <time.h>
int main(void) { struct timespec t = {0, 300000000}; nanosleep(&t, 0); return 0; }
"""

#: spins until the CPU clock of each of its THREADS threads reaches 0.15 s
SPINS = """#include <pthread.h>
#include <time.h>
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec; }
static void *spin(void *p) { volatile double x = 0; while (cpu() < 0.15) x += 1; return p; }
int main(void) {
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, spin, 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  return 0;
}
"""


@needs_cc
@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_time_counts_work_of_every_thread_and_no_waits(threads):
    sleeps = tc.run(tc.compile(SLEEPS, flags=["-O1"]), timeout=30)
    assert sleeps.seconds >= 0.3 and sleeps.cpu_seconds < 0.1      # a sleep is wall time, not CPU time
    spins = tc.run(tc.compile(SPINS, flags=["-O1", f"-DTHREADS={threads}", "-pthread"]), timeout=60)
    # each thread ran 0.15 s on a processor; the process's CPU time is their sum, never more than the
    # threads could have run in the wall time
    assert 0.15 * threads <= spins.cpu_seconds <= threads * spins.seconds + 0.05


def _row(label, kind, runs, threads=1, status="verified", wall=()):
    return OwnMainResult("k.c", label, kind, threads, status, runs=tuple(runs), timer="cpu", group=label,
                         wall=tuple(wall))


def test_the_ratios_are_of_region_cpu_times_and_the_table_names_the_clock():
    rows = (_row("original", "original", [0.030, 0.031, 0.029], wall=[0.2] * 3),
            _row("rest", "rest", [0.010] * 3, status=ownmain.NOT_COMPARED),
            _row("polylab optimize", "polylab", [0.020] * 3), _row("PLUTO", "peer", [0.050] * 3),
            _row("polylab optimize", "polylab", [0.024] * 3, threads=2), _row("PLUTO", "peer", [0.034] * 3, threads=2))
    report = OwnMainReport(rows, {"clock": "cpu"})
    original, _rest, mine, pluto, mine2, _pluto2 = rows
    assert report.region(original) == pytest.approx(0.020) and report.region(mine) == pytest.approx(0.010)
    assert report.ratio(mine, original) == pytest.approx(2.0)    # (30 - 10) / (20 - 10), not 30 / 20
    assert report.ratio(mine, pluto) == pytest.approx(4.0) and report.ratio(mine2, original) == pytest.approx(20 / 14)
    # each run less the rest's run of the same round: a round slowed for every program cancels out
    loaded = OwnMainReport((_row("original", "original", [0.030, 0.070, 0.070]),
                            _row("rest", "rest", [0.010, 0.050, 0.010], status=ownmain.NOT_COMPARED),
                            _row("polylab optimize", "polylab", [0.020, 0.060, 0.020])), {"clock": "cpu"})
    assert loaded.region(loaded.results[0]) == pytest.approx(0.020)      # not median 0.070 - median 0.010
    assert loaded.ratio(loaded.results[2], loaded.results[0]) == pytest.approx(2.0)
    table = report.table()
    head = table.splitlines()[0]
    assert head.startswith("clock: CPU time") and "all its threads" in head
    assert "CPU median" in table and "region CPU" in table and "wall median" in table
    assert "CPU time sums all threads" in table and "not compared" in table
    assert "geomean (region CPU), polylab optimize x1: 2.00x the original over 1 file(s), 4.00x PLUTO" in table
    data = report.to_json()
    assert data["clock"] == "cpu"
    assert [r["region_cpu_s"] for r in data["results"]][:3] == pytest.approx([0.020, None, 0.010], abs=1e-12)
    # without the rest, the ratios are of whole runs and the table says so
    whole = OwnMainReport(tuple(r for r in rows if r.kind != "rest"), {"clock": "cpu"})
    assert whole.ratio(mine, original) == pytest.approx(1.5) and "ratios are of whole runs" in whole.table()
    # the program clock's table is as before: no CPU words
    plain = OwnMainReport(tuple(r for r in rows if r.kind != "rest"), {})
    assert plain.ratio(mine, original) == pytest.approx(1.5)
    assert "CPU" not in plain.table() and plain.table().split()[:5] == ["file", "program", "threads", "median", "min"]


#: a region that does about 2 x 10^7 dependent multiply-adds, between an initialisation and a sleep outside it
REGION = """#include <stdio.h>
#include <time.h>
#define N 600
#define M 30000
static double a[M], b[N];
int main(void) {
  int i, j;
  struct timespec t = {0, 200000000};
  for (j = 0; j < M; j++) a[j] = j % 7;
  nanosleep(&t, 0);
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      b[i] = b[i] * 0.999 + a[j];
#pragma endscop
  for (i = 0; i < N; i += 50) printf("%.6f\\n", b[i]);
  return 0;
}
"""


@needs_cc
def test_own_main_cpu_time_leaves_out_the_rest_and_the_sleep(tmp_path, capsys):
    src, report = tmp_path / "region.c", tmp_path / "cpu.json"
    src.write_text(REGION)
    code = main(["bench", str(src), "--own-main", "--cpu-time", "--schedules", "original", "--threads", "1",
                 "--build", "cc -O1 {src} -o {exe}", "--repeat", "3", "--rounds", "1", "--warmup", "0",
                 "--no-progress", "--json", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith("clock: CPU time") and "CPU median" in out
    data = json.loads(report.read_text())
    rows = {r["program"]: r for r in data["results"]}
    original, rest, mine = rows["original"], rows["rest"], rows["polylab original"]
    assert data["clock"] == "cpu" and all(r["timer"] == "cpu" for r in rows.values())
    assert rest["status"] == "not compared" and mine["status"] == "verified"
    assert rest["wall_median_s"] >= 0.2 > 0.1 > rest["median_s"]      # the sleep is in the wall time only
    # the region's CPU time: the median of each round's run less the rest's run in the same round
    pairs = [c - r for c, r in zip(original["runs"], rest["runs"])]
    assert len(pairs) == 3 and original["region_cpu_s"] == pytest.approx(statistics.median(pairs))
    # the region's ~2 x 10^7 dependent multiply-adds (medians of 3 runs: one run of each, under the load of
    # a parallel test run, once read the region 5.6 ms shorter than nothing)
    assert original["region_cpu_s"] > 0.003
    assert rest["median_s"] < original["median_s"]


@pytest.mark.parametrize("argv", [["bench", "sweep2d.c", "--cpu-time"],
                                  ["bench", "sweep2d.c", "--search-time", "--cpu-time", "--own-main"]])
def test_cpu_time_outside_own_main_is_a_usage_error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "--cpu-time" in err and "hint: polylab bench FILE.c --own-main" in err
