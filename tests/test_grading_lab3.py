"""Lab 3 (schedules, scanning, space-time mapping): the solution earns full marks and every wrong-answer path
names the specific error (a pair kept in order, a distance that is no distance, a point scanned too many or
missing, the dependence a mapping breaks) without stating the expected answer; trivial answers (the original
order, every candidate called legal) earn nothing."""

from __future__ import annotations

import pytest

from grading_helpers import full_marks, grade, hides, wrong_answer_table
from polylab.toolchain import c_compiler

SOLUTION = {"bad_pair": ((1, 1), (1, 2)),
            "violations": {"A": None, "B": (1, -1), "C": None, "D": (1, -1), "E": None},
            "my_theta": [[2, 1], [1, 0]],
            "wave_t_bounds": ("2", "2 * N - 2"), "wave_j_bounds": ("max(1, t - N + 1)", "min(N - 1, t - 1)"),
            "n_waves": 21, "busy_p1_t9": 4, "space_time_map": "{ S0[i, j] -> [2i + j, j] }"}
needs_cc = pytest.mark.skipif(c_compiler() is None, reason="question 6 compiles the mapping's code")


@needs_cc
def test_solution_scores_full_marks():
    full_marks("lab3", SOLUTION)


def test_q1_wrong_paths():
    assert grade("lab3.q1", [[2, 1], [2, 2]])[0].correct                      # any pair of that dependence
    r, fb = grade("lab3.q1", ((1, 1), (2, 1)))
    assert r.score == 0 and "theta keeps this pair in order" in fb and "(0, 1)" in fb and "(1, 2)" in fb
    assert hides(fb, "S0[1, 2]", "((1, 1), (1, 2))")  # the pair's times, not a pair that is reversed
    r, fb = grade("lab3.q1", ((1, 1), (2, 2)))
    assert "does not depend on S0[1, 1]: their difference (1, 1) is no distance" in fb
    r, fb = grade("lab3.q1", ((0, 1), (1, 1)))
    assert "(0, 1) is no instance of the sweep" in fb and hides(fb, "S0[1, 2]", "((1, 1), (1, 2))")
    r, fb = grade("lab3.q1", (1, 1))
    assert "not an integer" in fb or "not a vector" in fb
    r, fb = grade("lab3.q1", "((1, 1), (1, 2))")
    assert "not a pair of instances" in fb


def test_q2_wrong_paths_and_no_credit_for_guessing():
    r, fb = grade("lab3.q2", {"A": None, "B": None, "C": None, "D": None, "E": None})
    # the kind of mistake, never which candidates: naming them would leave the answer after two tries
    assert r.score == 0 and "a candidate you call legal (None) reverses a dependence" in fb
    assert hides(fb, "(1, -1)", "B", "D")
    r, fb = grade("lab3.q2", {**SOLUTION["violations"], "A": (0, 1)})
    assert "a distance you name for a candidate is one its Theta keeps in order" in fb and r.score == pytest.approx(0.8)
    assert hides(fb, "A", "(0, 1)")
    r, fb = grade("lab3.q2", {"A": (0, 1), "B": None, "C": None, "D": None, "E": None})   # the example
    assert r.score == 0 and hides(fb, "B", "D") and fb.count("reverses a dependence") == 1
    r, fb = grade("lab3.q2", {**SOLUTION["violations"], "B": (2, 2)})
    assert "(2, 2) is no distance vector of this nest" in fb
    r, fb = grade("lab3.q2", {"a": None, "b": (1, -1), "c": None, "d": (1, -1)})
    assert "no entry for E" in fb
    r, fb = grade("lab3.q2", {**SOLUTION["violations"], "F": None})
    assert "F is not one of the candidates" in fb
    r, fb = grade("lab3.q2", ["A", "C", "E"])
    assert "not a dictionary" in fb


def test_q3_wrong_paths():
    r, fb = grade("lab3.q3", [[1, 0], [0, 1]])                        # the original order: legal, unimodular
    assert r.score == 0 and "the second dimension is not parallel" in fb and "(0, 1)" in fb
    assert hides(fb, "[[2, 1], [1, 0]]", "[[1, 1], [1, 0]]", "[[1, 1], [0, 1]]")
    r, fb = grade("lab3.q3", [[2, 1], [0, 1]])
    assert r.score == 2 and "det(Theta) = 2" in fb and "leaves holes" in fb
    r, fb = grade("lab3.q3", [[1, -1], [1, 0]])
    assert r.score == 0 and "is illegal: flow dependence" in fb and "S0[1, 1] writes a[1][1]" in fb
    assert hides(fb, "[[2, 1], [1, 0]]", "[[1, 1], [1, 0]]", "[[1, 1], [0, 1]]")
    assert r.pictures
    r, fb = grade("lab3.q3", [[2, 1], [4, 2]])
    assert "maps two instances to the same time" in fb
    r, fb = grade("lab3.q3", [[1.5, 1], [1, 0]])
    assert "fractions" in fb
    r, fb = grade("lab3.q3", [[1, 0, 0], [0, 1, 0]])
    assert "2 x 3, not 2 x 2" in fb


def test_q4_scanning_wrong_paths():
    assert grade("lab3.q4", ("2", "2N - 2"), ("max(1, t - N + 1)", "min(N - 1, t - 1)"))[0].correct
    r, fb = grade("lab3.q4", ("2", "2 * N - 2"), ("1", "t - 1"))
    assert r.score == 1 and "your loops scan (t, j) = (4, 1) at N = 3, which is no instance" in fb
    assert hides(fb, "t - N + 1", "min(N - 1")
    r, fb = grade("lab3.q4", ("1", "2 * N"), SOLUTION["wave_j_bounds"])
    assert r.score == 2 and "t = 1 at N = 2 is in your range, but no instance has that i + j" in fb
    r, fb = grade("lab3.q4", ("2", "2 * N - 3"), ("max(1, t - N + 2)", "min(N - 1, t - 1)"))
    assert "is missing from your range" in fb and "your loops miss (t, j) =" in fb
    r, fb = grade("lab3.q4", ("2", "j"), SOLUTION["wave_j_bounds"])
    assert "the bounds of t use t or j" in fb
    r, fb = grade("lab3.q4", "2, 2N - 2", SOLUTION["wave_j_bounds"])
    assert "not a pair of texts" in fb
    r, fb = grade("lab3.q4", ("2", "2 * N - 2"), ("max(1, t - N + 1", "t"))
    assert "isl cannot read the bounds" in fb
    r, fb = grade("lab3.q4", ("2", "2 * N // 2"), SOLUTION["wave_j_bounds"])
    assert "contains '//'" in fb


def test_q5_wrong_paths():
    r, fb = grade("lab3.q5", 20, 4)
    # what the count is of, never how to count it (no 'count both ends', no 'it owns j = 4..7')
    assert "20 is not the number of waves: a wave is one value of t = i + j" in fb and r.status == "partial"
    assert hides(fb, "both ends", "smallest", "21")
    r, fb = grade("lab3.q5", 21, 3)
    assert "3 is not the number of instances processor 1 runs at t = 9" in fb and hides(fb, "4..7", "j = 4", "too few")
    r, fb = grade("lab3.q5", "21", None)
    assert r.status == "missing"


@needs_cc
def test_q6_wrong_paths():
    r, fb = grade("lab3.q6", "{ S0[i, j] -> [i + j, j] }")
    assert r.score == 0 and "space_time_map is illegal: flow dependence" in fb and hides(fb, "2i + j")
    r, fb = grade("lab3.q6", "{ S0[i, j] -> [i, j] }")                 # the original order: p carries (0, 1)
    assert r.score == 0 and "p is not parallel" in fb
    r, fb = grade("lab3.q6", "{ S0[i, j] -> [2i + j, i] }")
    assert r.score == 0 and "not the processor p = j" in fb
    r, fb = grade("lab3.q6", "{ S0[i, j] -> [2i + j] }")
    assert "1 output dimensions, not 2" in fb
    assert grade("lab3.q6", "{ S0[i, j] -> [3i + 2j, j] }")[0].correct   # any t with a . d >= 1
    r, fb = grade("lab3.q6", "{ S0[i, j] -> [2i + j, j }")
    assert "isl cannot read space_time_map" in fb


#: every wrong-answer path of every question: (question, answers, what the feedback must name, more texts of
#: the answer it must not state); the answers' own texts (tests/grading_helpers.answer_forms) are hidden too
WRONG = [
    ("q1", (((1, 1), (2, 1)),), ("theta keeps this pair in order", "(0, 1)", "(1, 2)"), ("S0[1, 2]",)),
    ("q1", (((1, 1), (2, 2)),), ("does not depend on S0[1, 1]: their difference (1, 1) is no distance",), ()),
    ("q1", (((0, 1), (1, 1)),), ("(0, 1) is no instance of the sweep",), ("S0[1, 2]",)),
    ("q2", ({"A": None, "B": None, "C": None, "D": None, "E": None},),
     ("a candidate you call legal (None) reverses a dependence",), ("(1, -1)", "B:", "D:")),
    ("q2", ({**SOLUTION["violations"], "A": (0, 1)},), ("a distance you name for a candidate is one its Theta keeps",),
     ("(1, -1)", "A:")),
    ("q2", ({**SOLUTION["violations"], "B": (2, 2)},), ("(2, 2) is no distance vector of this nest",),
     ("(1, -1)",)),
    ("q2", ({"A": None, "B": (1, -1), "C": None, "D": (1, -1)},), ("no entry for E",), ()),
    ("q3", ([[1, 0], [0, 1]],), ("the second dimension is not parallel", "(0, 1)"), ()),
    ("q3", ([[2, 1], [0, 1]],), ("det(Theta) = 2", "leaves holes"), ()),
    ("q3", ([[2, 1], [4, 2]],), ("det(Theta) = 0", "maps two instances to the same time"), ()),
    ("q3", ([[1, -1], [1, 0]],), ("is illegal: flow dependence", "S0[1, 1] writes a[1][1]"), ()),
    ("q4", (("2", "2 * N - 2"), ("1", "t - 1")), ("your loops scan (t, j) = (4, 1) at N = 3, which is no instance",),
     ("t - N + 1", "min(N - 1")),
    ("q4", (("2", "2 * N - 3"), ("max(1, t - N + 2)", "min(N - 1, t - 1)")),
     ("is missing from your range", "your loops miss (t, j) ="), ("2 * N - 2", "2N - 2", "t - N + 1")),
    ("q4", (("1", "2 * N"), SOLUTION["wave_j_bounds"]), ("t = 1 at N = 2 is in your range, but no instance has",),
     ("2 * N - 2", "2N - 2")),
    ("q5", (20, 4), ("20 is not the number of waves",), ("21 waves", "both ends")),
    ("q5", (30, 4), ("30 is not the number of waves: a wave is one value of t = i + j",), ("21 waves",)),
    ("q5", (21, 3), ("3 is not the number of instances processor 1 runs at t = 9",), ("4 instances", "4..7")),
    ("q5", (21, 5), ("5 is not the number of instances processor 1 runs at t = 9",), ("4 instances", "4..7")),
    pytest.param("q6", ("{ S0[i, j] -> [i + j, j] }",), ("space_time_map is illegal: flow dependence",), ("2i + j",),
                 marks=needs_cc),
    pytest.param("q6", ("{ S0[i, j] -> [i, j] }",), ("p is not parallel",), ("2i + j",), marks=needs_cc),
    pytest.param("q6", ("{ S0[i, j] -> [2i + j, i] }",), ("not the processor p = j",), (), marks=needs_cc),
    pytest.param("q6", ("{ S0[i, j] -> [2i + j] }",), ("1 output dimensions, not 2",), (), marks=needs_cc),
]


test_each_wrong_answer_names_its_mistake_and_hides_the_answer = wrong_answer_table("lab3", SOLUTION, WRONG)
