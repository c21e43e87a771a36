"""Lab 2 (dependence tests): the solution earns full marks and every wrong-answer path of every question
names the specific error (the vector, the direction entry, the bound, the test, the kind of dependence)."""

from __future__ import annotations

import math
from pathlib import Path

import sympy

from grading_helpers import full_marks, grade
from polylab.grading import Call, Calls, Case, check, get_lab, load_hidden
from polylab.grading.checks import compare_sets
from polylab.grading.labs import lab2

HIDDEN = Path(__file__).resolve().parents[1] / "instructor" / "hidden"
SOLUTION = {"sweep2d_distances": {(1, 0), (0, 1)}, "Y_null": (2, -1), "Y_waw_direction": ("<", ">"),
            "gcd_test": lab2.gcd_test_reference, "banerjee_bounds": (-15, 9),
            "conservative_tests": {"gcd", "integer system", "banerjee"},
            "sl3_raw": {(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)}, "sl3_war": {(1, 0, 0), (0, 1, 0), (0, 0, 1)},
            "shift_value_flow": {(0, 1)}, "shift_memory_flow_pairs": 24}


def test_solution_scores_full_marks():
    full_marks("lab2", SOLUTION)


def test_q1_wrong_paths():
    r, fb = grade("lab2.q1", "{(1, 0), (0, 1)}")
    assert r.score == 0 and "text" in fb and "remove the quotes" in fb
    r, fb = grade("lab2.q1", (1, 0))
    assert "one vector, not a set" in fb
    r, fb = grade("lab2.q1", {(1, 0, 0)})
    assert "has 3 entries, not 2" in fb
    r, fb = grade("lab2.q1", {(1, 0), (0, -1)})
    assert "(0, -1)" in fb and "source minus sink" in fb and "1 distance vector missing" in fb
    r, fb = grade("lab2.q1", {(1, 0), (0, 1), (-1, 1)})
    assert "(-1, 1)" in fb and "first non-zero entry is not positive" in fb
    r, fb = grade("lab2.q1", {(1, 0), (2, 2)})
    assert "(2, 2)" in fb and "no read of a is at that offset" in fb
    r, fb = grade("lab2.q1", {(1, 0)})
    assert r.status == "partial" and r.score == 1 and "1 distance vector missing" in fb
    assert grade("lab2.q1", [[1, 0], [0, 1]])[0].correct  # lists of lists are a fair way to write a set


def test_q2_wrong_paths():
    assert grade("lab2.q2", (-4, 2), ["<", ">"])[0].correct            # any multiple, lists for tuples
    assert grade("lab2.q2", sympy.Matrix([2, -1]), ("<", ">"))[0].correct
    r, fb = grade("lab2.q2", (1, 2), ("<", "<"))
    assert "Y_null: F (1, 2) = (10,), not 0" in fb and "2 v1 + 4 v2 = 0" in fb
    assert "Y_waw_direction: entry 2 (loop j) is '<'" in fb and "entry 1" not in fb
    r, fb = grade("lab2.q2", (0, 0), "<>")
    assert "(0, 0) is in every null space" in fb and "Y_waw_direction is the text '<>', not a tuple" in fb
    r, fb = grade("lab2.q2", (2, -1), ("<",))
    assert "has 1 entries, not 2" in fb and r.status == "partial"
    r, fb = grade("lab2.q2", (2, -1), ("<", "!"))
    assert "not one of '<', '=', '>', '*'" in fb
    r, fb = grade("lab2.q2", (2, -1), 3)
    assert "is 3, not a tuple" in fb


def test_q3_wrong_paths():
    r, fb = grade("lab2.q3", lambda a, b: 1 / 0)
    assert r.score == 0 and "gcd_test([2, -2], 1) raised ZeroDivisionError" in fb
    r, fb = grade("lab2.q3", lambda a, b: True)
    assert "gcd_test([2, -2], 1) returned True, expected False (A[2i] against A[2i + 1])" in fb
    assert r.status == "partial"
    r, fb = grade("lab2.q3", lambda a, b: "yes")
    assert r.score == 0 and "returned 'yes', expected" in fb
    r, fb = grade("lab2.q3", 3)
    assert "not a function" in fb


def test_q3_hidden_cases_are_shown_by_label_only():
    hidden = load_hidden(HIDDEN, get_lab("lab2"))["q3"]
    naive = lambda coefficients, constant: constant % math.gcd(*coefficients) == 0 if any(coefficients) else True
    r = get_lab("lab2").question("q3").grade({"gcd_test": naive}, "lab2", hidden)
    fb = "\n".join(r.feedback)
    assert r.hidden_cases == len(hidden) and r.status == "partial"
    assert "hidden case 'all coefficients zero, b != 0': wrong result" in fb and "[0, 0]" not in fb
    case = Case(([0, 0], 3), "all coefficients zero, b != 0")
    recorded = Calls("gcd_test", (Call(case, None, "TypeError: bad", True),))
    assert "hidden case 'all coefficients zero, b != 0' raised TypeError: bad" in lab2.check_q3(recorded).feedback[0]


def test_q4_wrong_paths():
    r, fb = grade("lab2.q4", (0, 9), {"gcd"})
    assert "banerjee_bounds: the lower bound 0 is wrong: take the smallest 3i (i = 0) and the largest 5i' (i' = 3)" in fb
    assert "conservative_tests: 2 conservative tests missing" in fb and r.status == "partial"
    r, fb = grade("lab2.q4", (-15, 15), {"omega"})
    assert "the upper bound 15 is wrong" in fb and "not one of 'gcd', 'integer system', 'banerjee'" in fb
    assert grade("lab2.q4", [-15, 9], ["GCD", "Integer System", "banerjee"])[0].correct  # case is fair to ignore
    r, fb = grade("lab2.q4", "-15, 9", "gcd")
    assert "text" in fb and "single text" in fb


def test_q4_names_a_test_that_proved_independence():
    """The extra-element path of q4's comparison on a report where a test does prove independence."""
    v = compare_sets(frozenset({"gcd"}), frozenset(), item="conservative test",
                     why_extra=lambda t: "it proved independence by itself (it said 'independent')")
    assert v.fraction == 0 and "'gcd' is not a conservative test here: it proved independence" in v.feedback[0]


def test_q5_wrong_paths():
    raw, war = SOLUTION["sl3_raw"], SOLUTION["sl3_war"]
    r, fb = grade("lab2.q5", war, raw)
    assert "sl3_raw: 1 RAW distance missing" in fb
    assert "sl3_war: (1, 1, 1) is not a WAR distance here: it is a distance of the RAW dependences" in fb
    r, fb = grade("lab2.q5", (raw - {(1, 1, 1)}) | {(-1, -1, -1)}, war | {(2, 0, 0)})
    assert "(-1, -1, -1)" in fb and "source minus sink" in fb
    assert "(2, 0, 0) is not a WAR distance here: no read of the sweep is at that offset" in fb
    r, fb = grade("lab2.q5", {(1, 0)}, war)
    assert "has 2 entries, not 3" in fb and "sl3_war" not in fb


def test_q6_wrong_paths():
    r, fb = grade("lab2.q6", {(0, 1), (0, 2)}, 12)
    assert "(0, 2) is not a value-based flow distance here: it is a memory-based distance" in fb
    assert "12 counts the value-based pairs" in fb
    r, fb = grade("lab2.q6", {(1, 0)}, 30)
    assert "(1, 0) is not a value-based flow distance here: no value flows at that distance" in fb
    assert "30 pairs is not right: for each i, count the pairs j < j'" in fb
    r, fb = grade("lab2.q6", {(0, 1)}, 24.5)
    assert "not an integer" in fb and r.status == "partial"


def test_check_of_several_questions_reports_each():
    r = check("lab2", "q1", "q6", namespace={"sweep2d_distances": {(1, 0)}})
    assert [x.status for x in r.results] == ["partial", "missing"]
