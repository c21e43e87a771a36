"""Lab 6 (storage): the solution earns full marks and every wrong-answer path of every question names the
specific error (the read that does not fold, the instance too much or missing, the modulus, the array)."""

from __future__ import annotations

import islpy as isl

from grading_helpers import full_marks, grade
from polylab.grading import check
from polylab.grading.labs import lab6

DIAGONAL = ("[n] -> { S1[i, j, k] : 1 <= i <= n - 2 and 1 <= j <= n - 2 and 1 <= k <= n - 2 "
            "and (i = 1 or j = 1 or k = 1) }")
SOLUTION = {"folded_reads": {"x[i + 1][j][k]", "x[i][j + 1][k]", "x[i][j][k + 1]"}, "diagonal_live_in": DIAGONAL,
            "planes": 2, "one_plane_reason": "a", "tile_wavefront_planes": 9, "live_init_n10": 214,
            "footprint_n100": (256_000_000, 80_000)}


def test_solution_scores_full_marks():
    full_marks("lab6", SOLUTION)


def test_q1_wrong_paths():
    assert grade("lab6.q1", {"x[i+1][j][k]", "x[i][(j+1)][k]", "x[i][j][k  +  1]"})[0].correct  # spacing, parens
    r, fb = grade("lab6.q1", {"x[i - 1][j][k]", "x[i + 1][j][k]"})
    assert "'x[i - 1][j][k]' is not a folded read here: it still reads values computed by the sweep" in fb
    assert "2 folded reads missing" in fb
    r, fb = grade("lab6.q1", {"x[i + 2][j][k]"})
    assert "the sweep has no such read" in fb
    r, fb = grade("lab6.q1", {"x[[i]"})
    assert "'x[[i]' is not a C expression" in fb
    r, fb = grade("lab6.q1", "x[i + 1][j][k]")
    assert "single text" in fb
    r, fb = grade("lab6.q1", 5)
    assert "not a set of texts" in fb


def test_q2_wrong_paths():
    assert grade("lab6.q2", DIAGONAL.replace("S1", ""))[0].correct        # an unnamed tuple is fair
    r, fb = grade("lab6.q2", "[n] -> { S1[i, j, k] : 1 <= i <= n - 2 and 1 <= j <= n - 2 and k = 1 }")
    assert "diagonal_live_in lacks" in fb and "exactly when i - 1, j - 1 or k - 1 is 0" in fb
    r, fb = grade("lab6.q2", "[n] -> { S1[i, j, k] : 1 <= i <= n - 2 and 1 <= j <= n - 2 and 1 <= k <= n - 2 }")
    assert "diagonal_live_in contains" in fb and "which it should not" in fb
    r, fb = grade("lab6.q2", "[n] -> { S1[i, j] : i = 1 }")
    assert "diagonal_live_in lives in" in fb
    r, fb = grade("lab6.q2", "[n] -> { S1[i, j, k] : i = 1 ")
    assert "isl cannot read diagonal_live_in" in fb


def test_q2_reference_is_the_three_faces():
    want = isl.Set(DIAGONAL)
    assert lab6.diagonal_live_in().is_equal(want)


def test_q3_wrong_paths_all_reported():
    r = check("lab6", "q3", namespace={"planes": 1, "one_plane_reason": "b"})
    fb = "\n".join(r.feedback)
    assert r.score == 0 and "planes: 1 plane(s) is not what the proof found: fewer planes" in fb
    assert "one_plane_reason: (b) is not the reason: the initialisation is read by the sweep itself" in fb
    r = check("lab6", "q3", namespace={"planes": 3, "one_plane_reason": "c"})
    fb = "\n".join(r.feedback)
    assert "the proof finds a smaller safe modulus" in fb and "the printed element is copied out" in fb
    r = check("lab6", "q3", namespace={"planes": "2", "one_plane_reason": "d"})
    assert "text" in r.feedback[0] and "remove the quotes" in r.feedback[0]
    r = check("lab6", "q3", namespace={"planes": 2.0, "one_plane_reason": "d"})
    assert "not one of 'a', 'b', 'c'" in "\n".join(r.feedback)


def test_q4_wrong_paths():
    r, fb = grade("lab6.q4", 2)
    assert "2 plane(s) is not enough" in fb
    r, fb = grade("lab6.q4", 12)
    assert "12 is not what the proof found" in fb
    r, fb = grade("lab6.q4", True)
    assert "not a number" in fb


def test_q5_wrong_paths():
    r, fb = grade("lab6.q5", 1000)
    assert "1000 is every instance of the initialisation" in fb
    r, fb = grade("lab6.q5", 271)
    assert "271 counts the whole faces i = 0, j = 0 and k = 0" in fb
    r, fb = grade("lab6.q5", 300)
    assert "300 is not the number of initialisations still read" in fb


def test_q6_wrong_paths():
    r, fb = grade("lab6.q6", (4_000_000, 80_000))
    assert "x: 4000000 bytes is not right; x is declared float x[400][400][400] whatever n is" in fb
    assert "xbuf" not in fb
    r, fb = grade("lab6.q6", (256_000_000, 40_000))
    assert "xbuf: 40000 bytes is not right" in fb
    r, fb = grade("lab6.q6", 80_000)
    assert "not a vector" in fb
