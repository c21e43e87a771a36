"""Verification says what it compared and never calls a vacuous comparison "verified" (issue 15, section 1;
issue 28, item 4: non-finite outputs, all-zero outputs, several sizes)."""

from __future__ import annotations

import dataclasses
import json

import pytest

import polylab
from polylab import toolchain as tc
from polylab.cli import main
from polylab.errors import ModelError, VerificationError
from polylab.experiment import measure, verify
from polylab.experiment.schedules import schedule_from_spec
from polylab.toolchain import ALL_ZERO_WARNING, Census, vacuity

pytestmark = pytest.mark.skipif(tc.c_compiler() is None or not tc.supports_openmp(),
                                reason="needs a C compiler with OpenMP")

STORAGE = "fold_live_ins; remove_dead_writes; interleave; contract(x)"


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


def test_a_verification_reports_every_written_element_it_compared():
    v = verify(scop_of("sweep2d.c"), "{ S0[i, j] -> [i + j, i] }", "openmp", params={"N": 6}, threads=2)
    assert v.verified is True
    assert v.mode == "written" and v.census == Census(("a",), 25, 0, 0, 0, 0)  # a[1..5][1..5]
    assert "compared bit for bit 25 element(s) of a" in str(v) and "(every element the program writes)" in str(v)
    assert v.to_json()["compared"] == {"mode": "written", "arrays": ["a"], "elements": 25, "nan": 0, "inf": 0,
                                       "zero": 0, "unchanged": 0}


def test_loops_that_do_not_run_make_a_vacuous_check_not_a_verified_one():
    scop = scop_of("sweep2d.c")
    for n in (0, 1):
        v = verify(scop, None, "c", params={"N": n})
        assert v.verified is None and v.vacuous and "writes no element" in v.reason
        assert not v and v.census.elements == 0
        with pytest.raises(VerificationError) as info:
            v.require()
        assert info.value.vacuous


def test_writes_that_change_nothing_are_vacuous():
    scop = polylab.parse("double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = a[i];\n").scop
    v = verify(scop, None, "c", params={"N": 9})
    assert v.verified is None and v.vacuous and v.census.unchanged == 9 and "initial value" in v.reason


def test_all_nan_outputs_are_vacuous_and_nan_counts_are_reported():
    scop = polylab.parse("double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = (a[i] - a[i]) / (a[i] - a[i]);\n").scop
    v = verify(scop, None, "c", params={"N": 9})
    assert v.verified is None and v.vacuous and v.census.nan == 9 and "NaN" in v.reason
    half = polylab.parse("double a[N];\nfor (i = 0; i < N; i += 2)\n  a[i] = (a[i] - a[i]) / (a[i] - a[i]);\n"
                         "for (i = 1; i < N; i += 2)\n  a[i] = 2.0 * a[i] + 1.0 / a[i];\n").scop
    v = verify(half, None, "c", params={"N": 9})
    assert v.verified is True and v.census.nan == 5 and v.census.computed == 4


def test_the_vacuity_rule():
    assert vacuity(Census(("a",), 10)) is None
    assert "no element" in vacuity(Census((), 0), " at N = 0")
    assert "NaN" in vacuity(Census(("a",), 4, nan=4))
    assert "initial value" in vacuity(Census(("a",), 4, nan=1, unchanged=3))
    # infinities prove nothing either: inf + x = inf in every order (issue 28, item 4)
    assert "infinite" in vacuity(Census(("a",), 4, inf=4))
    assert "NaN or infinite" in vacuity(Census(("a",), 4, nan=1, inf=3))
    assert "initial value" in vacuity(Census(("a",), 4, inf=2, unchanged=2))
    assert vacuity(Census(("a",), 4, inf=3)) is None  # one finite computed value


def test_all_infinite_outputs_are_vacuous():
    scop = polylab.parse("double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = 1.0 / (a[i] - a[i]);\n").scop
    v = verify(scop, None, "c", params={"N": 9})
    assert v.verified is None and v.vacuous and v.census.inf == 9 and "infinite" in v.reason


def test_all_zero_outputs_are_verified_with_a_warning_in_the_report_and_the_json(capsys, tmp_path):
    source = "double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = 0.0 * a[i];\n"
    v = verify(polylab.parse(source).scop, None, "c", params={"N": 9})
    assert v.verified is True and v.census.zero == 9 and v.remarks == (ALL_ZERO_WARNING,)
    assert f"warning: {ALL_ZERO_WARNING}" in str(v) and v.to_json()["warnings"] == [ALL_ZERO_WARNING]
    path = tmp_path / "zero.c"
    path.write_text(source)
    assert main(["run", str(path), "--param", "N=9", "--repeat", "1", "--json"]) == 0
    assert ALL_ZERO_WARNING in json.loads(capsys.readouterr().out)["warnings"]
    assert main(["run", str(path), "--param", "N=9", "--repeat", "1"]) == 0
    assert ALL_ZERO_WARNING in capsys.readouterr().out
    some = verify(polylab.parse(source.replace("0.0 * a[i]", "(i > 0) * a[i]")).scop, None, "c", params={"N": 9})
    assert some.verified is True and some.remarks == ()


def test_verification_also_runs_where_every_loop_runs_twice():
    # at N = 1 a loop from 1 to N - 1 runs once; at M = 0 the j loop runs no iteration: verification adds
    # the smallest sizes at which every loop runs at least twice, and says which sizes were verified
    scop = polylab.parse("double a[N][M];\nfor (i = 0; i < N; i++)\n  for (j = 0; j < M; j++)\n"
                         "    a[i][j] = a[i][j] + 1.0;\nfor (i = 1; i < N; i++)\n  a[i][0] = a[i - 1][0];\n").scop
    v = verify(scop, None, "c", params={"N": 9, "M": 1})
    assert v.verified is True and [dict(s.params) for s in v.sizes] == [{"N": 9, "M": 1}, {"N": 3, "M": 2}]
    assert v.verified_sizes == ({"N": 9, "M": 1}, {"N": 3, "M": 2})
    assert "also verified at N=3, M=2 (every loop runs at least twice)" in str(v)
    assert [s["params"] for s in v.to_json()["sizes"]] == [{"N": 9, "M": 1}, {"N": 3, "M": 2}]
    same = verify(scop, None, "c", params={"N": 3, "M": 2})
    assert len(same.sizes) == 1  # the values asked for already run every loop twice


def test_a_variant_wrong_only_where_the_loops_run_is_not_verified_at_sizes_where_they_do_not():
    # the variant's code is right when its loop runs no iteration (N = 0) and wrong otherwise: the run at
    # the values asked for is vacuous, the one where every loop runs twice finds the difference
    from polylab.codegen import generate
    scop = polylab.parse("double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = a[i] + 1.0;\n").scop
    code = generate(scop, None, "c")
    wrong = dataclasses.replace(code, program=code.program.replace("+ 1.0", "+ 2.0"))
    assert wrong.program != code.program
    v = verify(scop, None, "c", params={"N": 0}, code=wrong)
    assert v.verified is False and v.run_params == {"N": 2} and v.difference.index == (0,)
    # the message names the size the difference was found at, and what that run compared (not N = 0's nothing)
    assert "first difference (at N=2) at a[0]" in str(v) and "compared: 2 element(s) of a" in str(v)


def test_a_live_out_that_does_not_depend_on_the_size_is_vacuous():
    # sl3's one printed element is the same float for every n >= 32: after storage steps only it can be
    # compared, so the check at n = 40 proves nothing, and it is said so
    scop = scop_of("sl3.sy")
    sched = schedule_from_spec(scop, STORAGE)
    v = verify(scop, sched, "c", params={"n": 40})
    assert v.verified is None and v.vacuous and "do not depend on the computation" in v.reason
    assert v.mode == "live-out" and v.census.elements == 1
    ok = verify(scop, sched, "c", params={"n": 12})
    assert ok.verified is True and ok.mode == "live-out"
    report = measure(scop, sched, "c", params={"n": 40}, repeat=1, warmup=0)
    assert report.seconds is None and report.verified is None and "vacuous" in report.reason


def test_without_storage_steps_sl3_compares_every_written_element():
    scop = scop_of("sl3.sy")
    v = verify(scop, "wavefront", "c", params={"n": 40})
    assert v.verified is True and v.mode == "written" and v.census.elements == 40 ** 3
    assert v.census.unchanged == 0 and v.census.computed == 40 ** 3  # every element is set, then swept


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
    assert (err.array, err.index) == ("a", (1, 1)) and err.expected == v.difference.expected
    assert err.actual == v.difference.actual and err.expected != err.actual and not err.vacuous
    assert "a[1][1]" in err.message


def test_run_cli_reports_coverage_and_exits_1_when_vacuous(capsys):
    assert main(["run", "sweep2d.c", "--param", "N=1", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is None and data["vacuous"] is True and data["compared"]["elements"] == 0
    assert data["seconds"] is None and "vacuous" in data["reason"]
    assert main(["run", "sweep2d.c", "--param", "N=7", "--repeat", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is True and data["compared"] == {"mode": "written", "arrays": ["a"], "elements": 36,
                                                             "nan": 0, "inf": 0, "zero": 0, "unchanged": 0}
    assert data["verified_sizes"] == [{"N": 7}, {"N": 3}]
