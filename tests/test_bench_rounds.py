"""``polylab bench --rounds``: the timed runs are interleaved. After a kernel's variants are built,
verified and timed with the first share of the runs, each round times the original and every verified
variant once more, in order; the runs of all rounds are pooled (a slow moment of the machine falls on all
of them), and a variant that fails in a later round is reported as an error, not with its first times."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

import polylab.experiment as experiment
import polylab.experiment.timing as timing
from polylab.bench.runner import shares
from polylab.cli import main
from polylab.errors import ToolchainError


@given(st.integers(1, 50), st.integers(1, 10))
def test_shares_split_every_run_into_nearly_equal_rounds(repeat, rounds):
    got = shares(repeat, rounds)
    assert sum(got) == repeat
    assert len(got) == min(repeat, rounds)
    assert all(x >= 1 for x in got)
    assert max(got) - min(got) <= 1 and list(got) == sorted(got, reverse=True)


def test_shares_examples():
    assert shares(5, 3) == (2, 2, 1)
    assert shares(2, 3) == (1, 1)
    assert shares(3, 1) == (3,)


def _recording(monkeypatch, fail_on=None):
    """Record (program source, runs) of every timing call; ``fail_on(calls, source)``: raise instead."""
    calls: list[tuple[str, int]] = []
    real = timing.time_program

    def recorded(binary, args, *, repeat, warmup, threads, timeout):
        source = binary.source_path.read_text()
        if fail_on is not None and fail_on(calls, source):
            raise ToolchainError("the program crashed (simulated)")
        calls.append((source, repeat))
        return real(binary, args, repeat=repeat, warmup=warmup, threads=threads, timeout=timeout)

    monkeypatch.setattr(timing, "time_program", recorded)
    monkeypatch.setattr(experiment, "time_program", recorded)
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    return calls


def _bench(tmp_path, *extra):
    js = tmp_path / "r.json"
    rc = main(["bench", "sweep2d.c", "--quick", "--no-progress", "--repeat", "3", "--schedules", "original",
               "wavefront; parallel", "--threads", "2", "--json", str(js), *extra])
    return rc, json.loads(js.read_text())


def test_rounds_interleave_the_baseline_and_every_variant(tmp_path, monkeypatch):
    calls = _recording(monkeypatch)
    rc, data = _bench(tmp_path, "--rounds", "3")
    assert rc == 0
    assert data["settings"]["rounds"] == 3
    results = data["results"]
    assert [r["status"] for r in results] == ["verified", "verified"]
    assert all(len(r["runs"]) == 3 for r in results)            # one run in each of the three rounds
    assert len(data["baselines"]["sweep2d.c"]["runs"]) == 4      # before, two rounds, after
    # the order of the timed programs: baseline, A, B, then each round again, then the baseline
    programs = []
    for source, runs in calls:
        assert runs == 1
        if source not in programs:
            programs.append(source)
    order = [programs.index(source) for source, _ in calls]
    assert order == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0], order
    for r in results:
        assert r["speedup"] == pytest.approx(data["baselines"]["sweep2d.c"]["median"] / r["median_s"])


def test_one_round_times_each_case_with_all_its_runs(tmp_path, monkeypatch):
    calls = _recording(monkeypatch)
    rc, data = _bench(tmp_path, "--rounds", "1")
    assert rc == 0
    assert [runs for _, runs in calls] == [3, 3, 3, 3]           # baseline, A, B, baseline
    assert all(len(r["runs"]) == 3 for r in data["results"])


def test_a_variant_that_fails_in_a_later_round_is_an_error(tmp_path, monkeypatch):
    def third_program_second_time(calls, source):
        seen = []
        for s, _ in calls:
            if s not in seen:
                seen.append(s)
        return len(seen) == 3 and source == seen[2] and sum(1 for s, _ in calls if s == source) == 1

    _recording(monkeypatch, fail_on=third_program_second_time)
    rc, data = _bench(tmp_path, "--rounds", "2")
    assert rc == 1
    ok, bad = data["results"]
    assert ok["status"] == "verified" and len(ok["runs"]) == 3
    assert bad["status"] == "error" and bad["median_s"] is None and bad["speedup"] is None
    assert "round 2 of 2" in bad["reason"] and "crashed" in bad["reason"]


def test_rounds_must_be_positive(capsys, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert main(["bench", "sweep2d.c", "--quick", "--rounds", "0"]) == 2
    err = capsys.readouterr().err
    assert "--rounds" in err and "Traceback" not in err
