"""Lab 2 (dependence tests): the solution earns full marks and every wrong-answer path of every question
names the specific error (the vector, the pair of instances, the bound, the test, the kind of dependence,
the race) without stating the expected answer."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from grading_helpers import full_marks, grade, hides, wrong_answer_table
from polylab.grading import Call, Calls, Case, check, get_lab, load_hidden
from polylab.grading.checks import compare_sets
from polylab.grading.labs import lab2
from polylab.toolchain import c_compiler, supports_openmp

HIDDEN = Path(__file__).resolve().parents[1] / "instructor" / "hidden"
Y_WAW = "[N] -> { S0[i, j] -> S0[i2, j2] : 0 <= i, j, i2, j2 < N and 2i + 4j = 2i2 + 4j2 and i < i2 }"
NEST = """for (i = 1; i < N; i++)
  for (j = 0; j < N; j++)
    for (k = 1; k < N; k++)
      x[i][j][k] = x[i - 1][j][k - 1] + x[i][j][k - 1];"""
OMP = """for (i = 1; i < N; i++) {
  #pragma omp parallel for private(k)
  for (j = 0; j < N; j++)
    for (k = 1; k < N; k++)
      x[i][j][k] = x[i - 1][j][k - 1] + x[i][j][k - 1];
}"""
SOLUTION = {"sweep2d_distances": {(1, 0), (0, 1)}, "Y_waw": Y_WAW,
            "gcd_test": lab2.gcd_test_reference, "banerjee_bounds": (-15, 9),
            "conservative_tests": {"gcd", "integer system", "banerjee"},
            "sl3_raw": {(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)}, "sl3_war": {(1, 0, 0), (0, 1, 0), (0, 0, 1)},
            "shift_value_flow": {(0, 1)}, "shift_memory_flow_pairs": 24, "omp_code": OMP}
needs_cc = pytest.mark.skipif(c_compiler() is None, reason="question 8 compiles the student's code: no C compiler")


@needs_cc
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
    assert hides(fb, "(0, 1)")  # the missing vector is counted, not named
    r, fb = grade("lab2.q1", {(1, 0), (0, 1), (-1, 1)})
    assert "(-1, 1)" in fb and "first non-zero entry is not positive" in fb
    r, fb = grade("lab2.q1", {(1, 0), (2, 2)})
    assert "(2, 2)" in fb and "no read of a is at that offset" in fb and hides(fb, "(0, 1)")
    r, fb = grade("lab2.q1", {(1, 0)})
    assert r.status == "partial" and r.score == 1 and "1 distance vector missing" in fb and hides(fb, "(0, 1)")
    assert grade("lab2.q1", [[1, 0], [0, 1]])[0].correct  # lists of lists are a fair way to write a set


def test_q2_relation_wrong_paths_name_a_pair_and_why():
    assert grade("lab2.q2", Y_WAW.replace("i < i2", "(i < i2 or (i = i2 and j < j2))"))[0].correct  # the full order
    assert grade("lab2.q2", "[N] -> { [i, j] -> [i2, j2] : 0 <= i, j, i2, j2 < N and i + 2j = i2 + 2j2 and "
                            "i < i2 }")[0].correct                                          # unnamed, divided by 2
    r, fb = grade("lab2.q2", Y_WAW.replace(" and i < i2", ""))         # no order: the pair of an instance with itself
    assert r.score == 0 and "S0[0, 0] -> S0[0, 0]" in fb and "does not run after" in fb
    r, fb = grade("lab2.q2", "[N] -> { S0[i, j] -> S0[i2, j2] : i2 = i + 2 and j2 = j - 1 and 0 <= i, j, i2, j2 < N }")
    assert "lacks S0[0, 2] -> S0[4, 0] (at N = 5): both write Y[8]" in fb and hides(fb, Y_WAW, "2i + 4j")
    r, fb = grade("lab2.q2", "[N] -> { S0[i, j] -> S0[i2, j2] : i2 = i + 2 and j2 = j - 1 }")
    assert "outside the domain" in fb
    r, fb = grade("lab2.q2", Y_WAW.replace("2i + 4j = 2i2 + 4j2", "i + j = i2 + j2"))
    assert "they write different elements, Y[" in fb
    r, fb = grade("lab2.q2", "[N] -> { S0[i] -> S0[i2] : i < i2 }")
    assert "lives in" in fb
    r, fb = grade("lab2.q2", "{ S0[i, j] -> S0[i2, j2] : i < }")
    assert "isl cannot read Y_waw" in fb


def test_q3_wrong_paths():
    r, fb = grade("lab2.q3", lambda a, b: 1 / 0)
    assert r.score == 0 and "gcd_test([2, -2], 1) raised ZeroDivisionError" in fb
    r, fb = grade("lab2.q3", lambda a, b: True)
    assert "gcd_test([2, -2], 1) returned True (A[2i] against A[2i + 1]): not the right value" in fb
    assert r.status == "partial"
    r, fb = grade("lab2.q3", lambda a, b: "yes")
    assert r.score == 0 and "returned 'yes', a str where the function should return a bool" in fb
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


def test_q4_and_q5_wrong_paths():
    r, fb = grade("lab2.q4", (0, 9))
    assert "the lower bound 0 is not the minimum of 3i - 5i' over the box 0 <= i, i' <= 3" in fb
    assert hides(fb, "-15")
    r, fb = grade("lab2.q4", (-15, 15))
    assert "the upper bound 15 is not the maximum of 3i - 5i'" in fb and r.score == 0


def test_q4_a_wrong_bound_is_told_neither_its_direction_nor_a_point():
    """Review 3: the point named below a too-high lower bound walked a student to the minimum in five tries.
    Every wrong lower bound gets the same reply, whichever side it is on, and names no point of the box."""
    replies = {grade("lab2.q4", (lo, 9))[1].replace(f"bound {lo} ", "bound X ") for lo in range(-25, 5) if lo != -15}
    assert len(replies) == 1 and "(i, i')" not in replies.pop()
    r, fb = grade("lab2.q5", {"gcd"})
    # a choice among three: the feedback says a test is left out without counting them (no narrowing)
    assert "lacks at least one conservative test" in fb and r.status == "partial" and "2 " not in fb
    r, fb = grade("lab2.q5", {"omega"})
    assert "not one of 'gcd', 'integer system', 'banerjee'" in fb
    assert grade("lab2.q5", ["GCD", "Integer System", "banerjee"])[0].correct  # case is fair to ignore
    r, fb = grade("lab2.q4", "-15, 9")
    assert "text" in fb
    r, fb = grade("lab2.q5", "gcd")
    assert "single text" in fb


def test_q5_names_a_test_that_proved_independence():
    """The extra-element path of q5's comparison on a report where a test does prove independence."""
    v = compare_sets(frozenset({"gcd"}), frozenset(), item="conservative test",
                     why_extra=lambda t: "it proved independence by itself (it said 'independent')")
    assert v.fraction == 0 and "'gcd' is not a conservative test here: it proved independence" in v.feedback[0]


def test_q6_wrong_paths():
    raw, war = SOLUTION["sl3_raw"], SOLUTION["sl3_war"]
    r, fb = grade("lab2.q6", war, raw)
    assert "sl3_raw: 1 RAW distance missing" in fb
    assert "sl3_war: one entry of your set is not a WAR distance: no read ahead of the point gives" in fb
    r, fb = grade("lab2.q6", (raw - {(1, 1, 1)}) | {(-1, -1, -1)}, war | {(2, 0, 0)})
    assert "(-1, -1, -1) is not a RAW distance here: it is not lexicographically positive" in fb
    assert "one entry of your set is not a WAR distance" in fb and "(2, 0, 0)" not in fb
    assert hides(fb, "(1, 1, 1)")  # the RAW distance left out is counted, not named
    r, fb = grade("lab2.q6", {(1, 0)}, war)
    assert "has 2 entries, not 3" in fb and "sl3_war" not in fb


def test_q6_feedback_never_sorts_a_vector_into_the_other_kind():
    """Review 3: "(1, 1, 1) is not a WAR distance ... it is a distance of the RAW dependences" sorted the
    sweep's distances into RAW and WAR for the student. A vector of the other kind, or of neither, is counted
    with the same words; only a vector that can be no distance at all (not lexicographically positive) is
    named, a fact the student derives."""
    raw, war = SOLUTION["sl3_raw"], SOLUTION["sl3_war"]
    _, other = grade("lab2.q6", raw, war | {(1, 1, 1)})
    _, neither = grade("lab2.q6", raw, war | {(2, 0, 0)})
    assert other == neither == ("sl3_war: one entry of your set is not a WAR distance: no read ahead of the point "
                                "gives a dependence at that distance")
    _, every = grade("lab2.q6", raw | war | {(2, 0, 0)}, raw | war | {(2, 0, 0)})
    assert "2 entries of your set are not WAR distances" in every and "RAW dependences" not in every
    assert hides(every, *(str(v) for v in raw | war))


def test_q7_wrong_paths():
    r, fb = grade("lab2.q7", {(0, 1), (0, 2)}, 12)
    assert "(0, 2) is not a value-based flow distance here: it is a memory-based distance" in fb
    assert "12 counts the value-based pairs" in fb
    r, fb = grade("lab2.q7", {(1, 0)}, 30)
    assert "(1, 0) is not a value-based flow distance here: no value flows at that distance" in fb
    assert "30 is not the number of memory-based flow pairs at N = 5, M = 4" in fb and hides(fb, "24", "j < j'")
    assert "lacks at least one value-based flow distance" in fb and "1 value" not in fb
    r, fb = grade("lab2.q7", {(0, 1)}, 64)
    assert "64 counts every pair (j, j')" in fb
    r, fb = grade("lab2.q7", {(0, 1)}, 24.5)
    assert "not an integer" in fb and r.status == "partial"


def test_check_of_several_questions_reports_each():
    r = check("lab2", "q1", "q7", namespace={"sweep2d_distances": {(1, 0)}})
    assert [x.status for x in r.results] == ["partial", "missing"]


@needs_cc
def test_q8_a_pragma_on_a_carrying_loop_names_the_race():
    r, fb = grade("lab2.q8", "#pragma omp parallel for private(j, k)\n" + NEST)
    assert r.score == 0 and "the loop i carries the flow dependence x[i][j][k] -> x[i - 1][j][k - 1]" in fb
    assert "the run: not run: the dependence check must pass first" in fb   # a race that a run misses earns nothing
    assert "S0[1, 0, 1] and S0[2, 0, 2] (at N = 3)" in fb and hides(fb, "private(k)")
    inner = NEST.replace("    for (k = 1; k < N; k++)\n", "    {\n    #pragma omp parallel for\n    for (k = 1; k < N; k++)\n")
    r, fb = grade("lab2.q8", inner + "\n    }")
    assert "the loop k carries the flow dependence x[i][j][k] -> x[i][j][k - 1]" in fb


@needs_cc
def test_q8_a_shared_inner_iterator_is_named():
    r, fb = grade("lab2.q8", OMP.replace(" private(k)", ""))
    assert "k would be shared by the threads of the loop j" in fb and hides(fb, "private(k)")  # what it breaks
    assert r.score == 0
    assert grade("lab2.q8", OMP.replace(" private(k)", "").replace("for (k = 1", "for (int k = 1"))[0].correct


@needs_cc
def test_q8_other_wrong_paths():
    r, fb = grade("lab2.q8", NEST)
    assert r.score == 0 and "has no #pragma omp parallel for" in fb
    assert hides(fb, "private(k)", "omp parallel for private")
    r, fb = grade("lab2.q8", OMP.replace("k = 1;", "k = 2;"))
    assert "runs other points or another statement" in fb
    r, fb = grade("lab2.q8", OMP.replace("parallel for private(k)", "simd"))
    assert "'#pragma omp simd' is not 'omp parallel for'" in fb
    r, fb = grade("lab2.q8", OMP.replace("x[i][j][k] =", "x[i][j][k] = 2.0 *"))
    assert "another statement" in fb and hides(fb, "private(k)")
    r, fb = grade("lab2.q8", 'system("ls");')
    assert "calls system" in fb


@needs_cc
@pytest.mark.skipif(not supports_openmp(), reason="no OpenMP")
def test_q8_the_run_uses_several_thread_counts():
    code = lab2.read_code(OMP)
    v = lab2.judge_student_code(lab2.scop(lab2.PLANES), lab2.candidate_program(lab2.scop(lab2.PLANES), code),
                              params={"N": lab2.PLANES_N}, threads=lab2.THREADS)
    assert v.correct and len(lab2.THREADS) >= 3


#: every wrong-answer path of every question: (question, answers, what the feedback must name, more texts of
#: the answer it must not state); the answers' own texts (tests/grading_helpers.answer_forms) are hidden too
RAW, WAR = SOLUTION["sl3_raw"], SOLUTION["sl3_war"]
WRONG = [
    ("q1", ({(1, 0), (0, -1)},), ("(0, -1) is not a distance vector here", "source minus sink"), ("(0, 1)",)),
    ("q1", ({(1, 0), (0, 1), (-1, 1)},), ("(-1, 1)", "first non-zero entry is not positive"), ()),
    ("q1", ({(1, 0), (2, 2)},), ("(2, 2)", "no read of a is at that offset", "1 distance vector missing"), ("(0, 1)",)),
    ("q2", (Y_WAW.replace(" and i < i2", ""),), ("S0[0, 0] -> S0[0, 0]", "does not run after"), ("2i + 4j",)),
    ("q2", ("[N] -> { S0[i, j] -> S0[i2, j2] : i2 = i + 2 and j2 = j - 1 }",), ("outside the domain",), ("2i + 4j",)),
    ("q2", (Y_WAW.replace("2i + 4j = 2i2 + 4j2", "i + j = i2 + j2"),), ("they write different elements, Y[",), ()),
    ("q2", ("[N] -> { S0[i, j] -> S0[i2, j2] : i2 = i + 2 and j2 = j - 1 and 0 <= i, j, i2, j2 < N }",),
     ("lacks S0[0, 2] -> S0[4, 0] (at N = 5): both write Y[8]",), ("2i + 4j",)),
    ("q2", ("[N] -> { S0[i] -> S0[i2] : i < i2 }",), ("Y_waw lives in",), ()),
    ("q3", (lambda a, b: True,), ("gcd_test([2, -2], 1) returned True",), ("math.gcd", "% g")),
    ("q3", (lambda a, b: 1 / 0,), ("gcd_test([2, -2], 1) raised ZeroDivisionError",), ()),
    ("q4", ((0, 9),), ("the lower bound 0 is not the minimum",), ("-15", "(3, 2)")),
    ("q4", ((-16, 9),), ("the lower bound -16 is not the minimum",), ("-15",)),
    ("q4", ((-15, 8),), ("the upper bound 8 is not the maximum",), ("(-15, 9)", "(3, 0)")),
    ("q4", ((-15, 15),), ("the upper bound 15 is not the maximum",), ("(-15, 9)",)),
    ("q5", ({"gcd"},), ("lacks at least one conservative test", "'maybe dependent' while isl says independent"),
     ("integer system", "banerjee", "2 conservative")),
    ("q6", (WAR, RAW), ("sl3_raw: 1 RAW distance missing", "one entry of your set is not a WAR distance: no read "
                                                           "ahead of the point gives a dependence at that distance"),
     ("(1, 1, 1)", "RAW dependences")),
    ("q6", ((RAW - {(1, 1, 1)}) | {(-1, -1, -1)}, WAR | {(2, 0, 0)}),
     ("(-1, -1, -1) is not a RAW distance here: it is not lexicographically positive",
      "one entry of your set is not a WAR distance"), ("(1, 1, 1)", "(2, 0, 0)")),
    ("q7", ({(0, 1), (0, 2)}, 12), ("(0, 2) is not a value-based flow distance here: it is a memory-based",
                                    "12 counts the value-based pairs"), ("24 pairs", "= 24")),
    ("q7", ({(1, 0)}, 30), ("no value flows at that distance", "lacks at least one value-based flow distance",
                            "30 is not the number of memory-based flow pairs"), ("(0, 1)", "24 pairs", "j < j'")),
    ("q7", ({(0, 1)}, 64), ("64 counts every pair (j, j')",), ("24 pairs",)),
    ("q8", ("for (i = 1; i < N; i++) for (k = 1; k < N; k++) x[i][0][k] = x[i - 1][0][k - 1];",),
     ("your nest is not the given one",), ()),
    ("q8", ("for (i = 1; i < N; i++) for (j = 0; j < N * j; j++) for (k = 1; k < N; k++) x[i][j][k] = 0.0;",),
     ("polylab cannot read your nest (pragmas removed)",), ()),
    ("q8", (OMP.replace("k = 1;", "k = 2;"),), ("runs other points or another statement",), ()),
    ("q8", (NEST,), ("has no #pragma omp parallel for",), ("omp parallel for private",)),
    ("q8", (OMP.replace("parallel for private(k)", "simd"),), ("'#pragma omp simd' is not 'omp parallel for'",), ()),
    pytest.param("q8", ("#pragma omp parallel for private(j, k)\n" + NEST,),
                 ("the loop i carries the flow dependence x[i][j][k] -> x[i - 1][j][k - 1]",
                  "S0[1, 0, 1] and S0[2, 0, 2] (at N = 3)"), (), marks=needs_cc),
    pytest.param("q8", (OMP.replace(" private(k)", ""),), ("k would be shared by the threads of the loop j",), (),
                 marks=needs_cc),
]


test_each_wrong_answer_names_its_mistake_and_hides_the_answer = wrong_answer_table("lab2", SOLUTION, WRONG, ("private(k)",))
