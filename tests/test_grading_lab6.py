"""Lab 6 (storage): the solution earns full marks and every wrong-answer path names the specific error (the
read that does not fold, the instance too many, the condition a proof triple breaks, the element a hand
contraction changes, what a reading of a measurement overlooks) without stating the expected answer."""

from __future__ import annotations

import pytest

from grading_helpers import full_marks, grade, hides, prints_no_verdict, recorded_runs, wrong_answer_table
from polylab.grading.labs import lab6
from polylab.toolchain import c_compiler

HEAT = """double buf[2][N];
for (i = 0; i < N; i++)
  buf[0][i] = u[0][i];
for (t = 1; t < T; t++) {
  buf[t % 2][0] = buf[(t - 1) % 2][0];
  for (i = 1; i < N - 1; i++)
    buf[t % 2][i] = 0.25 * buf[(t - 1) % 2][i - 1] + 0.5 * buf[(t - 1) % 2][i] + 0.25 * buf[(t - 1) % 2][i + 1];
  buf[t % 2][N - 1] = buf[(t - 1) % 2][N - 1];
}
for (i = 0; i < N; i++)
  out[i] = buf[(T - 1) % 2][i];"""
SOLUTION = {"folded_reads": {"x[i + 1][j][k]", "x[i][j + 1][k]", "x[i][j][k + 1]"},
            "diagonal_live_in": "[n] -> { S1[i, j, k] : 1 <= i <= n - 2 and 1 <= j <= n - 2 and 1 <= k <= n - 2 "
                                "and (i = 1 or j = 1 or k = 1) }",
            "planes": 2, "lost_value": ("S1[1, 1, 1]", "S1[2, 1, 1]", "S1[2, 2, 2]"),
            "heat_contracted": HEAT, "tile_wavefront_vs_folded": "no measurable difference"}
needs_cc = pytest.mark.skipif(c_compiler() is None, reason="question 4 compiles the hand contraction")


@needs_cc
def test_solution_scores_full_marks():
    full_marks("lab6", SOLUTION)


def test_q1_wrong_paths():
    assert grade("lab6.q1", ["x[i+1][j][k]", "x[i][(j + 1)][k]", "x[i][j][k+1]"])[0].correct  # spacing, parentheses
    r, fb = grade("lab6.q1", {"x[i + 1][j][k]", "x[i - 1][j][k]"})
    assert "one entry of your set is not a folded read: such a read sees values computed by the sweep" in fb
    assert r.score == 0 and "2 folded reads missing" in fb and hides(fb, "x[i][j + 1][k]", "x[i - 1][j][k]")
    every_read = {"x[i + 1][j][k]", "x[i][j + 1][k]", "x[i][j][k + 1]", "x[i - 1][j][k]", "x[i][j - 1][k]",
                  "x[i][j][k - 1]", "x[i - 1][j - 1][k - 1]"}
    r, fb = grade("lab6.q1", every_read)      # review 2: listing all 7 reads, then striking out the named ones
    assert r.score == 0 and "4 entries of your set are not folded reads" in fb and hides(fb, *every_read)
    r, fb = grade("lab6.q1", {"x[i + 1][j][k]", "x[i][j + 1][k]", "x[i][j][k + 1]", "y[i]"})
    assert "'y[i]' is not a folded read here: the sweep has no such read" in fb and r.status == "partial"
    r, fb = grade("lab6.q1", {"x[i + 1][j][k]", "x[[i]"})
    assert "not a C expression" in fb
    r, fb = grade("lab6.q1", "x[i + 1][j][k]")
    assert "the single text" in fb
    r, fb = grade("lab6.q1", 5)
    assert "not a set of texts" in fb


def test_q2_wrong_paths():
    r, fb = grade("lab6.q2", "[n] -> { S1[i, j, k] : 1 <= i <= n - 2 and 1 <= j <= n - 2 and 1 <= k <= n - 2 }")
    assert "diagonal_live_in contains" in fb and "which it should not" in fb and "never writes before that read" in fb
    assert hides(fb, "i = 1 or j = 1")
    r, fb = grade("lab6.q2", "[n] -> { S1[i, j, k] : i = 1 and 1 <= j <= n - 2 and 1 <= k <= n - 2 }")
    assert "diagonal_live_in lacks instances whose diagonal read sees the initial value" in fb
    assert "S1[" not in fb, "a missing instance is not named: each named one points at a face of the union"
    r, fb = grade("lab6.q2", "[n] -> { S1[i, j, k] : i = n - 2 }")     # the lab's example
    assert r.score == 0 and "which it should not" in fb and hides(fb, "i = 1", "j = 1", "k = 1")
    r, fb = grade("lab6.q2", "[n] -> { S1[i, j] : i = 1 }")
    assert "lives in" in fb
    assert grade("lab6.q2", "[n] -> { [i, j, k] : 1 <= i, j, k <= n - 2 and (i = 1 or j = 1 or k = 1) }")[0].correct


def test_q3_the_proof_triple_wrong_paths():
    assert grade("lab6.q3", 2, ("S0[0, 1, 1]", "S1[1, 1, 1]", "S1[1, 2, 2]"))[0].correct    # another proof
    r, fb = grade("lab6.q3", 2, ("S1[1, 1, 1]", "S1[2, 1, 1]", "S1[2, 1, 1]"))
    assert r.score == 0 and "not between the write at (1, 1, 1, 1) and the read at (2, 1, 1, 1)" in fb
    assert "planes is judged with its proof" in fb and hides(fb, "planes = 2 is right")
    assert "read before it is overwritten" in fb
    r, fb = grade("lab6.q3", 2, ("S1[1, 1, 1]", "S1[1, 1, 2]", "S1[2, 1, 1]"))
    assert "writes x[1][1][2], which differs from x[1][1][1] in j or k" in fb
    r, fb = grade("lab6.q3", 2, ("S1[1, 1, 1]", "S1[2, 1, 1]", "S1[3, 3, 3]"))
    assert "does not read the value S1[1, 1, 1] writes" in fb
    r, fb = grade("lab6.q3", 2, ("S1[0, 1, 1]", "S1[2, 1, 1]", "S1[2, 2, 2]"))
    assert "S1[0, 1, 1] is no instance" in fb
    r, fb = grade("lab6.q3", 3, SOLUTION["lost_value"])
    assert r.score == 0 and "planes is judged with its proof" in fb     # nothing said of 3 without a proof
    assert hides(fb, "safe but more than needed", "too few")
    assert "1 plane(s) away from x[1][1][1]: with one plane fewer than your planes" in fb
    assert hides(fb, "xbuf[i % 2]", "i % 2", "2 planes", "planes = 2")
    r, fb = grade("lab6.q3", 1, SOLUTION["lost_value"])
    assert r.score == 0 and "no smaller modulus to refute" in fb
    r, fb = grade("lab6.q3", 2, "S1[1, 1, 1]")
    assert "not three instances" in fb
    r, fb = grade("lab6.q3", 2, ("S1(1, 1, 1)", "S1[2, 1, 1]", "S1[2, 2, 2]"))
    assert "is not an instance" in fb


@needs_cc
def test_q4_hand_contraction_wrong_paths():
    r, fb = grade("lab6.q4", HEAT.replace("out[i] = buf[(T - 1) % 2][i]", "out[i] = buf[T % 2][i]"))
    assert r.score == 0 and "first element that differs is out[1]" in fb and "T = 7, N = 12" in fb
    r, fb = grade("lab6.q4", HEAT.replace("double buf[2][N]", "double buf[T][N]"))
    assert "declares 100000 elements" in fb and "more than 2 rows" in fb
    r, fb = grade("lab6.q4", HEAT.replace("buf[0][i] = u[0][i];", "buf[0][i] = u[0][i]; u[1][i] = 0.0;"))
    assert "still writes u" in fb
    in_place = ("double row[N];\nfor (i = 0; i < N; i++)\n  row[i] = u[0][i];\nfor (t = 1; t < T; t++)\n"
                "  for (i = 1; i < N - 1; i++)\n    row[i] = 0.25 * row[i - 1] + 0.5 * row[i] + 0.25 * row[i + 1];\n"
                "for (i = 0; i < N; i++)\n  out[i] = row[i];")
    r, fb = grade("lab6.q4", in_place)                      # one row, updated in place: a value is read too late
    assert r.score == 0 and "changes the output" in fb and hides(fb, "buf[(t - 1) % 2]")
    r, fb = grade("lab6.q4", HEAT.replace("double buf[2][N]", "double buf[2][M]"))
    assert "not an expression of N and T" in fb
    r, fb = grade("lab6.q4", "free(u);")
    assert "calls free" in fb


def test_q5_reading_a_measurement():
    r, fb = grade("lab6.q5", "faster")
    assert r.score == 0 and "the medians say otherwise" in fb
    r, fb = grade("lab6.q5", "slower")
    assert r.score == 0 and "the medians alone do not decide" in fb


def test_q5_the_printed_interval_leaves_the_reading_to_the_student():
    """The question has the student print speedup_interval on the recorded runs: that prints the ratio and its
    95 % interval, never the verdict that is an answer option (review 2: the printed verdict was the answer)."""
    assert prints_no_verdict(lab6.RECORDED['folded + contracted'], lab6.RECORDED['tile wavefront + 9 planes, 2 threads'])


def test_the_lab_shows_the_recorded_runs_the_check_reads():
    assert recorded_runs("lab6_storage.ipynb") == lab6.RECORDED


#: every wrong-answer path of every question: (question, answers, what the feedback must name, more texts of
#: the answer it must not state); the answers' own texts (tests/grading_helpers.answer_forms) are hidden too
PROOF = SOLUTION["lost_value"]
MODULUS = ("xbuf[i % 2]", "i % 2", "2 planes", "planes = 2")
WRONG = [
    ("q1", ({"x[i + 1][j][k]", "x[i - 1][j][k]"},),
     ("one entry of your set is not a folded read: such a read sees values computed by the sweep",
      "2 folded reads missing"), ("x[i][j + 1][k]", "x[i][j][k + 1]", "x[i - 1][j][k]")),
    ("q1", ({"x[i + 1][j][k]", "y[i]"},), ("'y[i]' is not a folded read here: the sweep has no such read",),
     ("x[i][j + 1][k]",)),
    ("q1", ({"x[i + 1][j][k]", "x[[i]"},), ("'x[[i]' is not a folded read here", "not a C expression"),
     ("x[i][j + 1][k]",)),
    ("q2", ("[n] -> { S1[i, j, k] : 1 <= i <= n - 2 and 1 <= j <= n - 2 and 1 <= k <= n - 2 }",),
     ("diagonal_live_in contains", "never writes before that read"), ("i = 1 or j = 1",)),
    ("q2", ("[n] -> { S1[i, j, k] : i = 1 and 1 <= j <= n - 2 and 1 <= k <= n - 2 }",), ("diagonal_live_in lacks",),
     ("i = 1 or j = 1",)),
    ("q2", ("[n] -> { S1[i, j] : i = 1 }",), ("diagonal_live_in lives in",), ()),
    ("q3", (3, PROOF), ("planes is judged with its proof", "1 plane(s) away from x[1][1][1]"),
     MODULUS + ("safe but more than needed",)),
    ("q3", (1, PROOF), ("no smaller modulus to refute",), MODULUS + ("too few",)),
    ("q3", (2, ("S1[0, 1, 1]", "S1[2, 1, 1]", "S1[2, 2, 2]")), ("S1[0, 1, 1] is no instance",), MODULUS),
    ("q3", (2, ("S1[1, 1, 1]", "S1[2, 1, 1]", "S1[3, 3, 3]")),
     ("S1[3, 3, 3] does not read the value S1[1, 1, 1] writes",), MODULUS),
    ("q3", (2, ("S1[1, 1, 1]", "S1[1, 1, 1]", "S1[2, 2, 2]")), ("S1[1, 1, 1] does not write another element",),
     MODULUS),
    ("q3", (2, ("S1[1, 1, 1]", "S1[1, 1, 2]", "S1[2, 1, 1]")),
     ("writes x[1][1][2], which differs from x[1][1][1] in j or k",), MODULUS),
    ("q3", (2, ("S1[1, 1, 1]", "S1[3, 1, 1]", "S1[2, 1, 1]")),
     ("S1[3, 1, 1] runs at (3, 1, 1, 1), not between the write at (1, 1, 1, 1) and the read at (2, 1, 1, 1)",),
     MODULUS),
    ("q4", (HEAT.replace("buf[0][i] = u[0][i];", "buf[0][i] = u[0][i]; u[1][i] = 0.0;"),), ("still writes u",),
     ("buf[(t - 1) % 2]",)),
    ("q4", (HEAT.replace("double buf[2][N]", "double buf[2][M]"),), ("not an expression of N and T",), ()),
    ("q4", (HEAT.replace("double buf[2][N]", "double buf[T][N]"),),
     ("declares 100000 elements at T = 1000, N = 100", "more than 2 rows"), ("buf[(t - 1) % 2]",)),
    pytest.param("q4", (HEAT.replace("out[i] = buf[(T - 1) % 2][i]", "out[i] = buf[T % 2][i]"),),
                 ("first element that differs is out[1]", "T = 7, N = 12"), ("(T - 1) % 2",), marks=needs_cc),
    ("q5", ("faster",), ("the medians say otherwise",), ()),
    ("q5", ("slower",), ("the medians alone do not decide",), ()),
]


test_each_wrong_answer_names_its_mistake_and_hides_the_answer = wrong_answer_table("lab6", SOLUTION, WRONG)
