"""Lab 1 (affine accesses and iteration domains): the solution earns full marks and every wrong-answer path
of every question names the specific error (the entry of F or c, the row of the system, the point too much,
the element of the footprint, the point a scan misses or the first output element it changes) without
stating the expected answer."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import numpy as np
import pytest
import sympy

from grading_helpers import full_marks, grade, hides, wrong_answer_table
from polylab.grading import get_lab, load_hidden
from polylab.toolchain import c_compiler

HIDDEN = Path(__file__).resolve().parents[1] / "instructor" / "hidden"

FOOTPRINT = "[N] -> { B[a, b] : 1 <= b <= N and 0 <= a - 2b + 2 <= N - 1 }"
SCAN = """for (i = 0; i < N; i++)
  for (j = 0; j <= min(2 * i, N - 1 - i); j++) {
    value[0] = 0.5 * value[0] + i - 0.25 * j;
    trace[i][j] = value[0];
  }"""

SOLUTION = {"Z_F": [[1, 0]], "Z_c": (-1,), "B_F": [[1, 2], [0, 1]], "B_c": (0, 1),
            "rect_system": [[1, 0, 0, 0, 0], [-1, 0, 1, 0, -1], [0, 1, 0, 0, 0], [0, -1, 0, 1, -1]],
            "tri_system": [[0, 1, 0, 0], [1, -1, 0, 0], [-1, 0, 1, -1]],
            "strided_domain": "[N] -> { S0[i] : exists k : i = 2 + 3k and 2 <= i < N }", "strided_count": 6,
            "triangle_count": lambda n: n * (n + 1) // 2, "gather_footprint_set": FOOTPRINT, "scan_code": SCAN}

needs_cc = pytest.mark.skipif(c_compiler() is None, reason="question 8 compiles the student's nest: no C compiler")


@needs_cc
def test_solution_scores_full_marks():
    full_marks("lab1", SOLUTION)


def test_q1_counts_the_wrong_entries_and_names_none():
    """Review 3: naming each wrong entry made F and c a coordinate search (an all-0 try, an all-1 try, the
    answer); the wrong entries are counted, with what an entry means, and the score is the only other signal."""
    r, fb = grade("lab1.q1", [[0, 1]], (1,))
    assert r.score == 0
    assert "Z_F: 2 of the 2 entries of F are wrong (row r, column k: the coefficient of the k-th loop" in fb
    assert "Z_c: 1 of the 1 entries of c is wrong (entry r: the constant of the r-th subscript)" in fb
    assert hides(fb, "[[1, 0]]", "-1", "F[1][1]", "c[1]")
    r, fb = grade("lab1.q1", [[1, 0]], (1,))
    assert r.status == "partial" and "Z_F" not in fb and "Z_c: 1 of the 1 entries of c is wrong" in fb
    assert grade("lab1.q1", sympy.Matrix([[1, 0]]), [-1])[0].correct        # sympy and lists are fair
    assert grade("lab1.q1", np.array([[1, 0]]), np.array([-1]))[0].correct  # and numpy


def test_q1_malformed_answers_and_the_subscript_hint():
    r, fb = grade("lab1.q1", [1, 0], "-1")
    assert "is one row, not a matrix" in fb and "Z_c is the text '-1'" in fb and "remove the quotes" in fb
    r, fb = grade("lab1.q1", [[1, 0, 0]], (-1, 0))
    assert "Z_F is 1 x 3, not 1 x 2" in fb and "has 2 entries, not 1" in fb
    assert "one entry per subscript" in fb and "one entry per loop" not in fb   # c has one entry per subscript


def test_q2_counts_the_wrong_entries():
    r, fb = grade("lab1.q2", [[1, 2], [1, 0]], (0, 2))
    assert "2 of the 4 entries of F are wrong" in fb and "1 of the 2 entries of c is wrong" in fb
    assert hides(fb, "F[2][1]", "c[2]", "[[1, 2], [0, 1]]")
    r, fb = grade("lab1.q2", [[2, 1], [0, 1]], (0, 1))  # iterators swapped
    assert "2 of the 4 entries of F are wrong" in fb and r.status == "partial" and hides(fb, "[[1, 2], [0, 1]]")


def test_q1_q2_zero_matrices_earn_nothing():
    """A zero F and c are right wherever the answer has a zero: a vacuous answer, so it earns nothing."""
    assert grade("lab1.q1", [[0, 0]], (0,))[0].score == 0
    r, fb = grade("lab1.q2", [[0, 0], [0, 0]], (0, 0))
    assert r.score == 0 and "3 of the 4 entries of F are wrong" in fb and hides(fb, "[[1, 2], [0, 1]]", "(0, 1)")


def test_q3_equivalent_systems_are_right():
    rows = SOLUTION["rect_system"]
    assert grade("lab1.q3", list(reversed(rows)))[0].correct                      # order of rows
    assert grade("lab1.q3", rows + [[1, 1, 0, 0, 0]])[0].correct                  # a redundant row
    assert grade("lab1.q3", [[2 * x for x in rows[0]]] + rows[1:])[0].correct     # a scaled row


def test_q3_credit_for_correct_bounds_only():
    r, fb = grade("lab1.q3", [[0, 0, 0, 0, 1]])                          # 1 >= 0: vacuous, earns nothing
    assert r.score == 0 and "a bound is missing or too loose" in fb
    r, fb = grade("lab1.q3", [[1, 0, 0, 0, -1], [-1, 0, 1, 0, -1], [0, 1, 0, 0, -1], [0, -1, 0, 1, -1]])
    assert r.score == 1 and "row 1 (i - 1 >= 0) excludes" in fb and "row 3 (j - 1 >= 0) excludes" in fb
    assert "which the loops run" in fb                                     # two off-by-one rows: half, not 80 %
    r, fb = grade("lab1.q3", SOLUTION["rect_system"][:3])
    assert r.score == 1.5 and "also allow" in fb and "which the loops never run" in fb
    r, fb = grade("lab1.q3", [[1, 0, 0, 0]])
    assert "have 4 entries, not 5" in fb and "i, j, N, M, 1" in fb
    r, fb = grade("lab1.q3", [])
    assert "has no rows" in fb
    r, fb = grade("lab1.q3", "[[1, 0, 0, 0, 0]]")
    assert "text" in fb


def test_q4_wrong_paths():
    r, fb = grade("lab1.q4", [[0, 1, 0, 0], [-1, 1, 0, 0], [-1, 0, 1, -1]])
    assert "row 2 (-i + j >= 0) excludes" in fb and r.status == "partial" and hides(fb, "i - j >= 0")
    r, fb = grade("lab1.q4", [[0, 1, 0, 0], [-1, 0, 1, -1]])
    assert "a bound is missing or too loose" in fb and r.score == pytest.approx(1.33)


def test_q5_wrong_paths_and_isl_values():
    assert grade("lab1.q5", "[N] -> { [i] : (i - 2) mod 3 = 0 and 2 <= i < N }", 6)[0].correct  # unnamed, mod
    count = isl.Set("[N] -> { S0[i] : exists k : i = 2 + 3k and 2 <= i < N }").intersect_params(
        isl.Set("[N] -> { : N = 20 }")).count_val()
    assert isinstance(count, isl.Val) and grade("lab1.q5", SOLUTION["strided_domain"], count)[0].correct
    r, fb = grade("lab1.q5", "[N] -> { S0[i] : 2 <= i < N }", 18)
    assert "strided_domain contains" in fb and "which it should not" in fb
    assert "strided_count: 18 counts every i from 2 to 19; the loop steps by 3" in fb
    r, fb = grade("lab1.q5", "[N] -> { S0[i] : exists k : i = 3k and 0 <= i < N }", 7)
    assert "lacks" in fb and "7 counts a loop with another start" in fb and hides(fb, " 6 ", "starts at 2")
    r, fb = grade("lab1.q5", SOLUTION["strided_domain"], 6.0 + 0.5)
    assert "not an integer" in fb
    r, fb = grade("lab1.q5", "[N] -> { S0[i, j] : 0 <= i < N }", 6)
    assert "lives in" in fb and r.status == "partial"
    r, fb = grade("lab1.q5", "{ S0[i] : i = }", "6")
    assert "isl cannot read strided_domain" in fb and "strided_count is the text '6'" in fb
    r, fb = grade("lab1.q5", SOLUTION["strided_domain"], isl.Val("infty"))   # the count of an unbounded set
    assert "is the isl value infty, not a number" in fb


def test_q6_wrong_paths_and_hidden_cases():
    r, fb = grade("lab1.q6", lambda n: n * n // 2)
    assert "triangle_count(4) returned 8 (n = 4): not the right value" in fb and r.score == 0
    assert hides(fb, "expected", " 55"), "the public cases' expected values are not shown (a table of them earns points)"
    assert hides(fb, "n * (n + 1)", "n*(n+1)", "(n + 1) * n")  # the cases' values, never the formula
    r, fb = grade("lab1.q6", lambda n: True)
    assert "returned True" in fb
    r, fb = grade("lab1.q6", lambda n: n / 0)
    assert "raised ZeroDivisionError" in fb
    r, fb = grade("lab1.q6", 55)
    assert "not a function" in fb
    hidden = load_hidden(HIDDEN, get_lab("lab1"))
    assert hidden["q6"]
    r = get_lab("lab1").question("q6").grade({"triangle_count": lambda n: n * (n + 1) // 2 if n else 1},
                                            "lab1", hidden["q6"])
    assert r.hidden_cases == len(hidden["q6"]) and "hidden case 'n = 0: no instance': wrong result" in r.feedback[0]
    assert "triangle_count(0)" not in "\n".join(r.feedback)


def test_q7_footprint_wrong_paths_name_an_element_and_its_instance():
    assert grade("lab1.q7", "[N] -> { [a, b] : 1 <= b <= N and 0 <= a - 2b + 2 < N }")[0].correct  # unnamed
    r, fb = grade("lab1.q7", "[N] -> { B[a, b] : 0 <= a < 3N and 0 <= b <= N }")   # the declared extents
    assert r.score == 0 and "which the gather never reads" in fb and "it breaks" in fb and hides(fb, FOOTPRINT)
    r, fb = grade("lab1.q7", "[N] -> { B[a, b] : 1 <= b <= N and 0 <= a - 2b + 2 <= N }")  # off by one
    assert "B[1, 1]" in fb and "it breaks i < N = 1" in fb
    r, fb = grade("lab1.q7", "[N] -> { B[a, b] : 1 <= b < N and 0 <= a - 2b + 2 <= N - 1 }")
    assert "lacks" in fb and "which the instance (i, j) = (0, 0) reads" in fb
    r, fb = grade("lab1.q7", "[N] -> { A[a, b] : 0 <= a < N and 0 <= b < N }")
    assert "lives in" in fb
    r, fb = grade("lab1.q7", "[N] -> { B[a, b] : a = }")
    assert "isl cannot read gather_footprint_set" in fb


@needs_cc
def test_q8_scan_wrong_paths():
    r, fb = grade("lab1.q8", SCAN.replace("min(2 * i, N - 1 - i)", "2 * i"))
    assert r.score == 0 and "your loops run the point (i, j) = (2, 3) (it writes trace[2][3]) at N = 4, which the original never runs" in fb
    r, fb = grade("lab1.q8", SCAN.replace("j <= min", "j < min"))
    assert "never run the point (i, j) = (0, 0) (it writes trace[0][0]) at N = 1, which the original runs" in fb
    swapped = """for (j = 0; j < N; j++)
  for (i = (j + 1) / 2; i <= N - 1 - j; i++) {
    value[0] = 0.5 * value[0] + i - 0.25 * j;
    trace[i][j] = value[0];
  }"""
    r, fb = grade("lab1.q8", swapped)                 # the same points in another order: the run tells
    assert r.status == "partial" and r.score == 2 and "first element that differs is trace[1][1]" in fb
    assert hides(fb, "min(2 * i, N - 1 - i)")
    guarded = "for (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n    if (j <= 2 * i && i + j <= N - 1) " \
              "{ value[0] = 0.5 * value[0] + i - 0.25 * j; trace[i][j] = value[0]; }"
    r, fb = grade("lab1.q8", guarded)
    assert r.score == 0 and "still tests each point with an if" in fb


def test_q8_code_is_vetted_before_anything_runs():
    r, fb = grade("lab1.q8", 'printf("%d", 1);')
    assert "scan_code calls printf at line 1, column 1" in fb
    r, fb = grade("lab1.q8", "while (1) { }")
    assert "uses a while loop at line 1" in fb
    r, fb = grade("lab1.q8", "for (i = 0; i < N; i++ {")
    assert "is not valid C" in fb
    r, fb = grade("lab1.q8", "")
    assert "empty" in fb or "missing" in r.status
    r, fb = grade("lab1.q8", 3)
    assert "not text" in fb


@needs_cc
def test_q8_compile_errors_point_into_the_students_code():
    r, fb = grade("lab1.q8", "for (i = 0; i < N; i++)\n  for (j = 0; j <= 2 * i && i + j < N; j++) {\n"
                             "    value[0] = 0.5 * value[0] + i - 0.25 * j;\n    trace[i][j] = undefined_name;\n  }")
    assert r.score == 2 and "does not compile: line 4, column 19: 'undefined_name' undeclared" in fb  # points right


def test_q8_accepts_any_names_for_the_loop_counters():
    """Review 3: the right nest written with c0, c1 was refused ("inside loops over i and j"), and the question
    never asks for the names i and j."""
    renamed = ("for (c0 = 0; c0 < N; c0++)\n  for (c1 = 0; c1 <= min(2 * c0, N - 1 - c0); c1++) {\n"
               "    value[0] = 0.5 * value[0] + c0 - 0.25 * c1;\n    trace[c0][c1] = value[0];\n  }")
    assert grade("lab1.q8", renamed)[0].correct
    r, fb = grade("lab1.q8", renamed.replace("N - 1 - c0", "N - c0"))
    assert r.score == 0 and "your loops run the point (i, j) = (1, 1) (it writes trace[1][1]) at N = 2" in fb


#: every wrong-answer path of every question: (question, answers, what the feedback must name, more texts of
#: the answer it must not state); the answers' own texts (tests/grading_helpers.answer_forms) are hidden too
WRONG = [
    ("q1", ([[0, 1]], (-1,)), ("Z_F: 2 of the 2 entries of F are wrong",), ("F[1][1]",)),
    ("q1", ([[1, 0]], (1,)), ("Z_c: 1 of the 1 entries of c is wrong",), ("c[1]",)),
    ("q2", ([[1, 2], [1, 0]], (0, 1)), ("2 of the 4 entries of F are wrong",), ("F[2][1]",)),
    ("q2", ([[1, 2], [0, 1]], (0, 2)), ("1 of the 2 entries of c is wrong",), ("c[2]",)),
    ("q3", ([[1, 0, 0, 0, -1], [-1, 0, 1, 0, -1], [0, 1, 0, 0, 0], [0, -1, 0, 1, -1]],),
     ("row 1 (i - 1 >= 0) excludes", "which the loops run"), ("i >= 0",)),
    ("q3", (SOLUTION["rect_system"][:3],), ("also allow", "which the loops never run"), ("-j + M - 1 >= 0",)),
    ("q4", ([[0, 1, 0, 0], [-1, 1, 0, 0], [-1, 0, 1, -1]],), ("row 2 (-i + j >= 0) excludes",), ("i - j >= 0",)),
    ("q4", ([[0, 1, 0, 0], [-1, 0, 1, -1]],), ("a bound is missing or too loose",), ("i - j >= 0",)),
    ("q5", ("[N] -> { S0[i, j] : 0 <= i < N }", 6), ("strided_domain lives in",), ()),
    ("q5", ("[N] -> { S0[i] : 2 <= i < N }", 18),
     ("strided_domain contains", "18 counts every i from 2 to 19; the loop steps by 3"), ("6 instances",)),
    ("q5", ("[N] -> { S0[i] : exists k : i = 3k and 0 <= i < N }", 7),
     ("strided_domain lacks", "7 counts a loop with another start"), ("6 instances", "starts at 2")),
    ("q5", (SOLUTION["strided_domain"], 5), ("5 instances is not right",), ("6 instances",)),
    ("q6", (lambda n: n * n // 2,), ("triangle_count(4) returned 8",), ("n * (n + 1)", "n*(n+1)")),
    ("q6", (lambda n: n / 0,), ("raised ZeroDivisionError",), ("n * (n + 1)",)),
    ("q7", ("[N] -> { B[a, b] : 0 <= a < 3N and 0 <= b <= N }",), ("which the gather never reads", "it breaks"), ()),
    ("q7", ("[N] -> { B[a, b] : 1 <= b < N and 0 <= a - 2b + 2 <= N - 1 }",),
     ("lacks", "the instance (i, j) = (0, 0) reads"), ()),
    ("q7", ("[N] -> { A[a, b] : 0 <= a < N and 0 <= b < N }",), ("gather_footprint_set lives in",), ()),
    ("q8", ("for (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n    if (j <= 2 * i && i + j <= N - 1) "
            "{ value[0] = 0.5 * value[0] + i - 0.25 * j; trace[i][j] = value[0]; }",),
     ("still tests each point with an if",), ()),
    ("q8", ("for (i = 0; i < N; i++) trace[i][0] = value[0];",),
     ("does not run its assignment to trace inside two loops",), ()),
    ("q8", ("for (i = 0; i < N; i++) for (j = 0; j < i * i; j++) trace[i][j] = value[0];",),
     ("polylab cannot read your nest", "i * i"), ()),
    ("q8", (SCAN.replace("min(2 * i, N - 1 - i)", "2 * i"),),
     ("your loops run the point (i, j) = (2, 3) (it writes trace[2][3]) at N = 4, which the original never runs",), ()),
    ("q8", (SCAN.replace("j <= min", "j < min"),),
     ("never run the point (i, j) = (0, 0) (it writes trace[0][0]) at N = 1, which the original runs",), ()),
    pytest.param("q8", (SCAN.replace("for (i = 0; i < N; i++)\n  for (j = 0; j <= min(2 * i, N - 1 - i); j++)",
                                     "for (j = 0; j < N; j++)\n  for (i = (j + 1) / 2; i <= N - 1 - j; i++)"),),
                 ("first element that differs is trace[1][1]",), (), marks=needs_cc),
]


test_each_wrong_answer_names_its_mistake_and_hides_the_answer = wrong_answer_table("lab1", SOLUTION, WRONG, ("min(2 * i, N - 1 - i)", "min(2*i, N-1-i)"))
