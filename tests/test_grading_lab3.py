"""Lab 3 (schedules and space-time mapping): the solution earns full marks and every wrong-answer path of
every question names the specific error (the distance, the Theta d that is not lexicographically positive,
the part of a space-time mapping that fails)."""

from __future__ import annotations

from grading_helpers import full_marks, grade
from polylab.grading.labs import lab3

SOLUTION = {"violated_distance": (0, 1), "legal_thetas": {"A", "C", "E"}, "my_theta": [[2, 1], [1, 0]],
            "n_waves": 21, "busy_p1_t9": 4, "space_time_map": "{ S0[i, j] -> [i + j, i] }"}


def test_solution_scores_full_marks():
    full_marks("lab3", SOLUTION)


def test_the_candidates_are_decided_by_the_engine():
    assert lab3.legal_candidates() == frozenset({"A", "C", "E"})
    assert lab3.distances(lab3.SKEWED) == ((0, 1), (1, -1), (1, 0))


def test_q1_wrong_paths():
    r, fb = grade("lab3.q1", (2, 0))
    assert "(2, 0) is not a distance vector of the sweep" in fb and "(0, 1), (1, 0)" in fb
    r, fb = grade("lab3.q1", (1, 0))
    assert "keeps (1, 0) in order: (1, -1) . (1, 0) = 1 >= 1" in fb
    r, fb = grade("lab3.q1", "(0, 1)")
    assert "text" in fb
    r, fb = grade("lab3.q1", (0, 1, 0))
    assert "has 3 entries, not 2" in fb
    assert grade("lab3.q1", [0, 1])[0].correct


def test_q2_wrong_paths():
    r, fb = grade("lab3.q2", {"A", "B"})
    assert "'B' is not a legal Theta here: Theta d for d = (1, -1) is (-1, 1), which is not lexicographically positive" in fb
    assert "2 legal Thetas missing" in fb and r.score == 0
    r, fb = grade("lab3.q2", {"A", "C", "D", "E"})
    assert "'D' is not a legal Theta here: Theta d for d = (1, -1) is (0, -1)" in fb and r.status == "partial"
    r, fb = grade("lab3.q2", {"F"})
    assert "not one of 'A', 'B', 'C', 'D', 'E'" in fb
    assert grade("lab3.q2", ["a", "c", "e"])[0].correct   # the case of a name is fair to ignore
    r, fb = grade("lab3.q2", "ACE")
    assert "single text" in fb


def test_q3_each_part_is_reported():
    r, fb = grade("lab3.q3", [[1, 0], [0, 1]])
    assert "space: the second dimension is not parallel: it carries the dependence(s) with distance (0, 1)" in fb
    assert r.score == 2 and "legality" not in fb and "unimodular" not in fb
    r, fb = grade("lab3.q3", [[2, 1], [0, 1]])
    assert "unimodular: det(Theta) = 2: Theta is not unimodular, so the schedule leaves holes" in fb
    r, fb = grade("lab3.q3", [[1, 1], [1, 1]])
    assert "det(Theta) = 0" in fb and "maps two instances to the same time" in fb
    r, fb = grade("lab3.q3", [[0, 1], [1, 0]])
    assert "legality: Theta = [[0, 1], [1, 0]] is illegal: flow dependence S0 -> S0 on a" in fb
    assert "space: a dimension of an illegal schedule cannot be parallel" in fb
    assert r.pictures, "an illegal schedule comes with the picture of a violating pair"
    assert "data:image/png;base64" in r._repr_mimebundle_()["text/html"]
    r, fb = grade("lab3.q3", [[2, 1], [1, 0.5]])
    assert "my_theta has fractions" in fb
    r, fb = grade("lab3.q3", [[2, 1, 0], [1, 0, 0]])
    assert "is 2 x 3, not 2 x 2" in fb


def test_q4_wrong_paths():
    r, fb = grade("lab3.q4", 20, 3)
    assert "n_waves: 20 waves is not right" in fb and "(count both ends)" in fb
    assert "busy_p1_t9: 3 is not right: processor 1 owns j = 4..7" in fb and r.score == 0
    r, fb = grade("lab3.q4", 11, 4)
    assert "11 waves" in fb and "count both ends" not in fb and r.status == "partial"


def test_q5_wrong_paths():
    assert grade("lab3.q5", "{ S0[i, j] -> [2i + j, i] }")[0].correct    # another legal time is fine
    r, fb = grade("lab3.q5", "{ S0[i, j] -> [i, i] }")
    assert "legality: space_time_map is illegal" in fb and "p cannot be a space dimension" in fb
    r, fb = grade("lab3.q5", "{ S0[i, j] -> [j, i] }")
    assert "space: p is not parallel" in fb and r.status == "partial"
    r, fb = grade("lab3.q5", "{ S0[i, j] -> [i + j, j] }")
    assert "p: the second dimension is not p = i" in fb
    r, fb = grade("lab3.q5", "{ S0[i, j] -> [i + j, i, 0] }")
    assert "has 3 output dimensions, not 2" in fb
    r, fb = grade("lab3.q5", "{ S0[i, j] -> [i + j, i }")
    assert "isl cannot read space_time_map" in fb
    r, fb = grade("lab3.q5", ("i + j", "i"))
    assert "not text" in fb
