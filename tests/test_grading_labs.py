"""Every question of every declared lab: the right answer earns full marks, and every wrong-answer path of its
check has feedback that names the specific error (the vector, the loop, the entry, the tile size, the
dependence). The checks are called directly, as the notebook's check cell and the batch grader call them."""

from __future__ import annotations

import math

import pytest

from polylab.grading import Calls, Call, Case, check, get_lab, lab_names
from polylab.grading.labs import lab1

SOLUTIONS = {
    "lab1": {"sweep2d_distances": {(1, 0), (0, 1)}, "shift_waw_loop": "j", "sweep2d_parallel": [],
             "shift_parallel": ["i"], "conservative_tests": {"gcd", "integer system", "banerjee"},
             "gcd_test": lab1.gcd_test_reference},
    "lab2": {"violated_distance": (0, 1), "wavefront_coefficients": (1, 1),
             "seidel_recipe": "auto; tile_wavefront(4, 4, 4); parallel"},
    "lab3": {"sweep_flow_distances": {(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)},
             "folded_reads": {"x[i + 1][j][k]", "x[i][j + 1][k]", "x[i][j][k + 1]"}, "planes": 2,
             "one_plane_reason": "a", "tile_wavefront_planes": 9},
}


def grade(name: str, *answer):
    r = check(name, *answer)
    return r, "\n".join(r.feedback)


def test_every_declared_lab_has_known_solutions_here():
    assert set(lab_names()) >= set(SOLUTIONS)


@pytest.mark.parametrize("lab", sorted(SOLUTIONS))
def test_solutions_score_full_marks(lab):
    report = get_lab(lab).grade(SOLUTIONS[lab])
    assert [r.status for r in report.results] == ["correct"] * len(report.results), report.text
    assert report.score == report.max_score == get_lab(lab).max_score > 0


@pytest.mark.parametrize("lab", lab_names())
def test_nothing_answered_scores_zero_and_says_what_to_define(lab):
    report = get_lab(lab).grade({})
    assert report.score == 0
    for r in report.results:
        assert r.status == "missing"
        q = get_lab(lab).question(r.question)
        assert all(name in r.feedback[0] for name in q.answers)


@pytest.mark.parametrize("lab", lab_names())
def test_unanswered_placeholders_are_missing(lab):
    q = get_lab(lab).questions[0]
    assert q.grade({a: None for a in q.answers}, lab).status == "missing"
    assert q.grade({a: ... for a in q.answers}, lab).status == "missing"


# -- lab 1 ----------------------------------------------------------------------------------------------------

def test_lab1_q1_wrong_paths():
    r, fb = grade("lab1.q1", "{(1, 0), (0, 1)}")
    assert r.score == 0 and "text" in fb and "remove the quotes" in fb
    r, fb = grade("lab1.q1", (1, 0))
    assert "one vector, not a set" in fb
    r, fb = grade("lab1.q1", {(1, 0, 0)})
    assert "has 3 entries, not 2" in fb
    r, fb = grade("lab1.q1", {(1, 0), (0, -1)})
    assert "(0, -1)" in fb and "source minus sink" in fb and "1 distance vector missing" in fb
    r, fb = grade("lab1.q1", {(1, 0), (0, 1), (-1, 1)})
    assert "(-1, 1)" in fb and "first non-zero entry is not positive" in fb
    r, fb = grade("lab1.q1", {(1, 0), (2, 2)})
    assert "(2, 2)" in fb and "no read of a is at that offset" in fb
    r, fb = grade("lab1.q1", {(1, 0)})
    assert r.status == "partial" and r.score == 1 and "1 distance vector missing" in fb
    r, _ = grade("lab1.q1", [[1, 0], [0, 1]])  # lists of lists are a fair way to write a set of vectors
    assert r.correct


def test_lab1_q2_wrong_paths():
    r, fb = grade("lab1.q2", "i")
    assert r.score == 0 and "'i' does not carry the WAW" in fb and "same i" in fb
    r, fb = grade("lab1.q2", "k")
    assert "not one of 'i', 'j'" in fb
    r, fb = grade("lab1.q2", 2)
    assert "not text" in fb
    assert grade("lab1.q2", " j ")[0].correct  # whitespace is fair to ignore


def test_lab1_q3_reports_every_failure():
    r = check("lab1", "q3", namespace={"sweep2d_parallel": ["i"], "shift_parallel": ["j"]})
    fb = "\n".join(r.feedback)
    assert r.score == 0
    assert "sweep2d_parallel: 'i' is not a parallel loop" in fb and "flow dependence a[i][j] -> a[i - 1][j]" in fb
    assert "shift_parallel: 'j' is not a parallel loop" in fb and "output dependence Z[i - 1]" in fb
    assert "shift_parallel: 1 parallel loop missing" in fb
    r = check("lab1", "q3", namespace={"sweep2d_parallel": [], "shift_parallel": []})
    assert r.status == "partial" and "sweep2d_parallel" not in "\n".join(r.feedback)
    r = check("lab1", "q3", namespace={"sweep2d_parallel": "i", "shift_parallel": ["k"]})
    assert "single text" in r.feedback[0] and "not one of" in "\n".join(r.feedback)


def test_lab1_q4_wrong_paths():
    r, fb = grade("lab1.q4", {"gcd"})
    assert r.status == "partial" and "2 conservative tests missing" in fb
    r, fb = grade("lab1.q4", {"omega"})
    assert "'omega'" in fb and "not one of 'gcd', 'integer system', 'banerjee'" in fb
    assert grade("lab1.q4", ["GCD", "Integer System", "banerjee"])[0].correct  # case is fair to ignore


def test_lab1_q4_names_a_test_that_proved_independence():
    """The extra-element path of q4 on a report where a test does prove independence."""
    from polylab.grading.checks import compare_sets

    v = compare_sets(frozenset({"gcd"}), frozenset(), item="conservative test",
                     why_extra=lambda t: "it proved independence by itself (it said 'independent')")
    assert v.fraction == 0 and "'gcd' is not a conservative test here: it proved independence" in v.feedback[0]


def test_lab1_q5_wrong_paths():
    r, fb = grade("lab1.q5", lambda a, b: 1 / 0)
    assert r.score == 0 and "gcd_test([2, -2], 1) raised ZeroDivisionError" in fb
    r, fb = grade("lab1.q5", lambda a, b: True)
    assert "gcd_test([2, -2], 1) returned True, expected False (A[2i] against A[2i + 1])" in fb
    assert r.status == "partial"
    r, fb = grade("lab1.q5", lambda a, b: "yes")
    assert r.score == 0 and "returned 'yes', expected" in fb
    r, fb = grade("lab1.q5", 3)
    assert "not a function" in fb


def test_lab1_q5_hidden_cases_are_shown_by_label_only():
    q = get_lab("lab1").question("q5")
    hidden = (Case(([0, 0], 3), "all coefficients zero, b != 0"),)
    naive = lambda coefficients, constant: constant % math.gcd(*coefficients) == 0 if any(coefficients) else True
    r = q.grade({"gcd_test": naive}, "lab1", hidden)
    fb = "\n".join(r.feedback)
    assert r.hidden_cases == 1 and r.status == "partial"
    assert "hidden case 'all coefficients zero, b != 0': wrong result" in fb and "[0, 0]" not in fb
    recorded = Calls("gcd_test", (Call(hidden[0], None, "TypeError: bad", True),))
    assert "hidden case 'all coefficients zero, b != 0' raised TypeError: bad" in lab1.check_q5(recorded).feedback[0]


# -- lab 2 ----------------------------------------------------------------------------------------------------

def test_lab2_q1_wrong_paths():
    r, fb = grade("lab2.q1", (2, 0))
    assert "(2, 0) is not a distance vector of the sweep" in fb and "(0, 1), (1, 0)" in fb
    r, fb = grade("lab2.q1", (1, 0))
    assert "keeps (1, 0) in order: (1, -1) . (1, 0) = 1 >= 1" in fb
    r, fb = grade("lab2.q1", "(0, 1)")
    assert "text" in fb
    r, fb = grade("lab2.q1", (0, 1, 0))
    assert "has 3 entries, not 2" in fb
    assert grade("lab2.q1", [0, 1])[0].correct


def test_lab2_q2_wrong_paths_and_picture():
    r, fb = grade("lab2.q2", (1, 0))
    assert r.score == 0 and "a . (0, 1) = 0 < 1" in fb and "(0, 1) would not go forward" in fb
    assert r.pictures, "an illegal hyperplane comes with the picture of a violating pair"
    html = r._repr_mimebundle_()["text/html"]
    assert "data:image/png;base64" in html
    r, fb = grade("lab2.q2", (2, 1))
    assert r.status == "partial" and r.score == 1 and "legal but not the smallest: a0 + a1 = 3" in fb
    r, fb = grade("lab2.q2", "1, 1")
    assert "text" in fb


@pytest.mark.parametrize("recipe,expected", [
    ("auto; tile_wavefront(2, 2, 2); parallel", "tile_wavefront(2, 2, 2) has tiles of 2 x 2 x 2; the question asks for 4 x 4 x 4"),
    ("auto; tile_wavefront(64,64,64); parallel", "has tiles of 64 x 64 x 64"),
    ("auto; tile_wavefront(4, 4); parallel", "tile_wavefront(4, 4) tiles 2 of the 3 loops"),
    ("tile_wavefront(4, 4, 4)", "the recipe is illegal: tile_wavefront(4, 4, 4) is illegal: flow dependence"),
    ("auto; tile(4, 4, 4)", "no tile_wavefront step"),
    ("wavefornt", "unknown schedule step 'wavefornt'"),
    ("", "seidel_recipe is empty"),
])
def test_lab2_q3_wrong_paths(recipe, expected):
    r, fb = grade("lab2.q3", recipe)
    assert not r.correct and expected in fb, fb


def test_lab2_q3_reports_every_failure_and_an_illegal_schedule():
    r, fb = grade("lab2.q3", "auto; tile(4, 4, 4)")
    assert "tiles: the recipe has no tile_wavefront step" in fb and "parallel: no loop is marked parallel" in fb
    r, fb = grade("lab2.q3", "{ S0[t, i, j] -> [t, -i, j] }")
    assert "legality: the recipe's schedule is illegal: flow dependence S0 -> S0 on A" in fb
    assert r.pictures
    r, fb = grade("lab2.q3", ("auto",))
    assert "is tuple ('auto',), not text" in fb


# -- lab 3 ----------------------------------------------------------------------------------------------------

def test_lab3_q1_wrong_paths():
    good = SOLUTIONS["lab3"]["sweep_flow_distances"]
    r, fb = grade("lab3.q1", (good - {(1, 1, 1)}) | {(-1, -1, -1)})
    assert "(-1, -1, -1)" in fb and "source minus sink" in fb and "1 flow distance missing" in fb
    r, fb = grade("lab3.q1", good | {(2, 0, 0)})
    assert "(2, 0, 0)" in fb and "no read of the sweep is at that offset" in fb
    r, fb = grade("lab3.q1", {(1, 0)})
    assert "has 2 entries, not 3" in fb


def test_lab3_q2_wrong_paths():
    assert grade("lab3.q2", {"x[i+1][j][k]", "x[i][(j+1)][k]", "x[i][j][k  +  1]"})[0].correct  # spacing, parens
    r, fb = grade("lab3.q2", {"x[i - 1][j][k]", "x[i + 1][j][k]"})
    assert "'x[i - 1][j][k]' is not a folded read here: it still reads values computed by the sweep" in fb
    assert "2 folded reads missing" in fb
    r, fb = grade("lab3.q2", {"x[i + 2][j][k]"})
    assert "the sweep has no such read" in fb
    r, fb = grade("lab3.q2", {"x[[i]"})
    assert "'x[[i]' is not a C expression" in fb
    r, fb = grade("lab3.q2", "x[i + 1][j][k]")
    assert "single text" in fb
    r, fb = grade("lab3.q2", 5)
    assert "not a set of texts" in fb


def test_lab3_q3_wrong_paths_all_reported():
    r = check("lab3", "q3", namespace={"planes": 1, "one_plane_reason": "b"})
    fb = "\n".join(r.feedback)
    assert r.score == 0 and "planes: 1 plane(s) is not what the proof found: fewer planes" in fb
    assert "one_plane_reason: (b) is not the reason: the initialisation is read by the sweep itself" in fb
    r = check("lab3", "q3", namespace={"planes": 3, "one_plane_reason": "c"})
    fb = "\n".join(r.feedback)
    assert "the proof finds a smaller safe modulus" in fb and "the printed element is copied out" in fb
    r = check("lab3", "q3", namespace={"planes": "2", "one_plane_reason": "d"})
    assert "text" in r.feedback[0] and "remove the quotes" in r.feedback[0]
    r = check("lab3", "q3", namespace={"planes": 2.0, "one_plane_reason": "d"})
    assert "not one of 'a', 'b', 'c'" in "\n".join(r.feedback)


def test_lab3_q4_wrong_paths():
    r, fb = grade("lab3.q4", 2)
    assert "2 plane(s) is not enough" in fb
    r, fb = grade("lab3.q4", 12)
    assert "12 is not what the proof found" in fb
    r, fb = grade("lab3.q4", True)
    assert "not a number" in fb
