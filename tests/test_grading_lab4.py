"""Lab 4 (the wavefront): the solution earns full marks and every wrong-answer path of every question names
the specific error (the distance a hyperplane does not put forward, the count, the stride, the reason)."""

from __future__ import annotations

from pathlib import Path

from grading_helpers import full_marks, grade
from polylab.grading import get_lab, load_hidden
from polylab.grading.labs import lab4

HIDDEN = Path(__file__).resolve().parents[1] / "instructor" / "hidden"
SOLUTION = {"sl3_hyperplane": (1, 1, 1), "needs_221_hyperplane": (2, 2, 1), "waves_n10": 22,
            "largest_wave_n10": 48, "sweep_waves": lambda n: max(0, 3 * n - 8), "wave_stride": 159999,
            "slower_reason": "b"}


def test_solution_scores_full_marks():
    full_marks("lab4", SOLUTION)


def test_references_agree_with_a_brute_force_count():
    for n in (2, 3, 5, 7):
        waves = {i + j + k for i in range(1, n - 1) for j in range(1, n - 1) for k in range(1, n - 1)}
        assert lab4.sweep_waves_reference(n) == len(waves)
    sizes = lab4.wave_sizes(6)
    brute: dict[int, int] = {}
    for i in range(1, 5):
        for j in range(1, 5):
            for k in range(1, 5):
                brute[i + j + k] = brute.get(i + j + k, 0) + 1
    assert sizes == brute
    assert lab4.best_hyperplane("221") == (2, 2, 1) and lab4.best_hyperplane("sl3") == (1, 1, 1)


def test_q1_wrong_paths():
    r, fb = grade("lab4.q1", (1, 0, 1))
    assert "a = (1, 0, 1) gives a . (0, 1, 0) = 0 < 1: the dependence with distance (0, 1, 0) would not go forward" in fb
    r, fb = grade("lab4.q1", (1, 2, 1))
    assert r.status == "partial" and "legal but not the smallest: a0 + a1 + a2 = 4" in fb
    r, fb = grade("lab4.q1", (2, -1, 1))
    assert "negative coefficient" in fb
    r, fb = grade("lab4.q1", (1, 1))
    assert "has 2 entries, not 3" in fb


def test_q2_wrong_paths():
    r, fb = grade("lab4.q2", (1, 1, 1))
    assert "a . (0, 1, -1) = 0 < 1" in fb and "a . (1, 0, -1) = 0 < 1" in fb and r.score == 0
    r, fb = grade("lab4.q2", (3, 2, 1))
    assert "legal but not the smallest" in fb and r.status == "partial"
    r, fb = grade("lab4.q2", "2i + 2j + k")
    assert "text" in fb


def test_q1_same_sum_but_not_lexicographically_smallest(monkeypatch):
    """The same-sum path: against a reference (1, 2, 1), the legal (2, 1, 1) of the same sum earns half and is
    told it is not the lexicographically smallest."""
    monkeypatch.setattr(lab4, "best_hyperplane", lambda which: (1, 2, 1))
    r, fb = grade("lab4.q1", (2, 1, 1))
    assert r.status == "partial" and "as small as the best, but not the lexicographically smallest" in fb


def test_q3_wrong_paths():
    r, fb = grade("lab4.q3", 21, 5)
    assert "waves_n10: 21 waves is not right" in fb and "(count both ends)" in fb
    assert "largest_wave_n10: 5 is not the size of the largest wave" in fb
    r, fb = grade("lab4.q3", 24, 48)
    assert "count both ends" not in fb and r.status == "partial"


def test_q4_wrong_paths_and_hidden_cases():
    r, fb = grade("lab4.q4", lambda n: 3 * n - 6)
    assert "sweep_waves(10) returned 24, expected 22 (n = 10)" in fb and r.score == 0
    r, fb = grade("lab4.q4", lambda n: float(3 * n - 8))
    assert "returned 22.0" in fb
    hidden = load_hidden(HIDDEN, get_lab("lab4"))["q4"]
    r = get_lab("lab4").question("q4").grade({"sweep_waves": lambda n: 3 * n - 8}, "lab4", hidden)
    assert r.status == "partial" and "hidden case 'n = 2: the sweep is empty': wrong result" in "\n".join(r.feedback)


def test_q5_wrong_paths():
    r, fb = grade("lab4.q5", 399)
    assert "399 is not it: from one iteration to the next k grows by 1 and i = t - j - k shrinks by 1" in fb
    r, fb = grade("lab4.q5", 160000)
    assert "a step of i moves 400 x 400 elements" in fb
    r, fb = grade("lab4.q5", 7)
    assert "write the address of x[i][j][k] as (i * 400 + j) * 400 + k" in fb
    assert grade("lab4.q5", -159999)[0].correct   # the sign is fair to ignore (the question asks for the distance)


def test_q6_wrong_paths():
    r, fb = grade("lab4.q6", "a")
    assert "(a) is not the reason: the verification runs once, before the timing" in fb
    r, fb = grade("lab4.q6", "c")
    assert "the same gcc -O3 flags" in fb
    r, fb = grade("lab4.q6", "d")
    assert "not one of 'a', 'b', 'c'" in fb
