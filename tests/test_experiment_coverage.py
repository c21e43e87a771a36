"""Verification says what it compared and never calls a vacuous comparison "verified" (issue 15, section 1)."""

from __future__ import annotations

import dataclasses
import json

import pytest

import polylab
from polylab import toolchain as tc
from polylab.cli import main
from polylab.errors import ModelError, VerificationError
from polylab.experiment import Coverage, measure, verify
from polylab.experiment.schedules import schedule_from_spec
from polylab.experiment.verify import vacuity

pytestmark = pytest.mark.skipif(tc.c_compiler() is None or not tc.supports_openmp(),
                                reason="needs a C compiler with OpenMP")

STORAGE = "fold_live_ins; remove_dead_writes; interleave; contract(x)"


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


def test_a_verification_reports_every_written_element_it_compared():
    v = verify(scop_of("sweep2d.c"), "{ S0[i, j] -> [i + j, i] }", "openmp", params={"N": 6}, threads=2)
    assert v.verified is True
    assert v.coverage == Coverage("written", ("a",), 25, 0, 0, 0)  # a[1..5][1..5]
    assert "compared bit for bit 25 element(s) of a (every element the program writes)" in str(v)
    assert v.to_json()["compared"] == {"mode": "written", "arrays": ["a"], "elements": 25, "nan": 0, "inf": 0,
                                       "unchanged": 0}


def test_loops_that_do_not_run_make_a_vacuous_check_not_a_verified_one():
    scop = scop_of("sweep2d.c")
    for n in (0, 1):
        v = verify(scop, None, "c", params={"N": n})
        assert v.verified is None and v.vacuous and "writes no element" in v.reason
        assert not v and v.coverage.elements == 0
        with pytest.raises(VerificationError) as info:
            v.require()
        assert info.value.vacuous


def test_writes_that_change_nothing_are_vacuous():
    scop = polylab.parse("double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = a[i];\n").scop
    v = verify(scop, None, "c", params={"N": 9})
    assert v.verified is None and v.vacuous and v.coverage.unchanged == 9 and "initial value" in v.reason


def test_all_nan_outputs_are_vacuous_and_nan_counts_are_reported():
    scop = polylab.parse("double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = (a[i] - a[i]) / (a[i] - a[i]);\n").scop
    v = verify(scop, None, "c", params={"N": 9})
    assert v.verified is None and v.vacuous and v.coverage.nan == 9 and "NaN" in v.reason
    half = polylab.parse("double a[N];\nfor (i = 0; i < N; i += 2)\n  a[i] = (a[i] - a[i]) / (a[i] - a[i]);\n"
                         "for (i = 1; i < N; i += 2)\n  a[i] = 2.0 * a[i] + 1.0 / a[i];\n").scop
    v = verify(half, None, "c", params={"N": 9})
    assert v.verified is True and v.coverage.nan == 5 and v.coverage.computed == 4


def test_the_vacuity_rule():
    assert vacuity(Coverage("written", ("a",), 10, 0, 0, 0), {"N": 3}) is None
    assert "no element" in vacuity(Coverage("written", (), 0), {"N": 0})
    assert "NaN" in vacuity(Coverage("written", ("a",), 4, nan=4), {"N": 2})
    assert "initial value" in vacuity(Coverage("written", ("a",), 4, nan=1, unchanged=3), {"N": 2})
    assert vacuity(Coverage("written", ("a",), 4, inf=4), {"N": 2}) is None  # infinities are values


def test_a_live_out_that_does_not_depend_on_the_size_is_vacuous():
    # sl3's one printed element is the same float for every n >= 32: after storage steps only it can be
    # compared, so the check at n = 40 proves nothing, and it is said so
    scop = scop_of("sl3.sy")
    sched = schedule_from_spec(scop, STORAGE)
    v = verify(scop, sched, "c", params={"n": 40})
    assert v.verified is None and v.vacuous and "do not depend on the computation" in v.reason
    assert v.coverage.mode == "live-out" and v.coverage.elements == 1
    ok = verify(scop, sched, "c", params={"n": 12})
    assert ok.verified is True and ok.coverage.mode == "live-out"
    report = measure(scop, sched, "c", params={"n": 40}, repeat=1, warmup=0)
    assert report.seconds is None and report.verified is None and "vacuous" in report.reason


def test_without_storage_steps_sl3_compares_every_written_element():
    scop = scop_of("sl3.sy")
    v = verify(scop, "wavefront", "c", params={"n": 40})
    assert v.verified is True and v.coverage.mode == "written" and v.coverage.elements == 40 ** 3
    assert v.coverage.unchanged == 0 and v.coverage.computed == 40 ** 3  # every element is set, then swept


def test_written_comparison_is_refused_after_storage_steps():
    scop = scop_of("sl3.sy")
    with pytest.raises(ModelError, match="does not store the original's arrays"):
        verify(scop, schedule_from_spec(scop, STORAGE), "c", params={"n": 12}, compare="written")
    with pytest.raises(ModelError, match="compare="):
        verify(scop, None, "c", params={"n": 12}, compare="everything")


def test_a_difference_raises_verification_error_with_the_element():
    scop = scop_of("sweep2d.c")
    other = dataclasses.replace(scop, source=scop.source.replace("a[i][j - 1]", "2.0 * a[i][j - 1]"))
    v = verify(other, None, "c", params={"N": 6})
    assert v.verified is False and v.difference.array == "a" and v.difference.index == (1, 1)
    with pytest.raises(VerificationError) as info:
        v.require()
    err = info.value
    assert (err.array, err.index) == ("a", (1, 1)) and err.expected == v.difference.original
    assert err.actual == v.difference.variant and err.expected != err.actual and not err.vacuous
    assert "a[1][1]" in err.message


def test_run_cli_reports_coverage_and_exits_1_when_vacuous(capsys):
    assert main(["run", "sweep2d.c", "--param", "N=1", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is None and data["vacuous"] is True and data["compared"]["elements"] == 0
    assert data["seconds"] is None and "vacuous" in data["reason"]
    assert main(["run", "sweep2d.c", "--param", "N=7", "--repeat", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is True and data["compared"] == {"mode": "written", "arrays": ["a"], "elements": 36,
                                                             "nan": 0, "inf": 0, "unchanged": 0}
