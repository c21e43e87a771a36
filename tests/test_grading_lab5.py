"""Lab 5 (tiling): the solution earns full marks and every wrong-answer path of every question names the
specific error (the distance a skew leaves negative, the part of a recipe that is wrong, the count)."""

from __future__ import annotations

import pytest

from grading_helpers import full_marks, grade
from polylab.grading.labs import lab5

SOLUTION = {"seidel_negative_distance": (0, 1, -1), "seidel_skew": [[1, 0, 0], [1, 1, 0], [2, 1, 1]],
            "seidel_recipe": "auto; tile_wavefront(4, 4, 4); parallel", "tile_waves": 7, "widest_tile_wave": 4,
            "why_tiles_win": "b"}


def test_solution_scores_full_marks():
    full_marks("lab5", SOLUTION)


def test_tile_counts_agree_with_a_brute_force_count():
    tiles = {(i // 4, j // 4) for i in range(1, 16) for j in range(1, 16)}
    waves: dict[int, int] = {}
    for a, b in tiles:
        waves[a + b] = waves.get(a + b, 0) + 1
    assert lab5.tile_counts() == (len(waves), max(waves.values()))


def test_q1_wrong_paths():
    assert grade("lab5.q1", (3, -1, -1))[0].correct     # dt is any positive number, memory-based
    r, fb = grade("lab5.q1", (0, 1, 1))
    assert "(0, 1, 1) is a distance of seidel2d (flow), but no entry is negative" in fb
    r, fb = grade("lab5.q1", (0, 2, -1))
    assert "(0, 2, -1) is not a distance of seidel2d" in fb
    r, fb = grade("lab5.q1", "(0, 1, -1)")
    assert "text" in fb


def test_q2_each_part_is_reported():
    r, fb = grade("lab5.q2", [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    assert "permutable: the flow distance (1, -1, -1)" in fb and "becomes (1, 0, -1), which has a negative entry" in fb
    assert r.status == "partial" and "legality" not in fb
    r, fb = grade("lab5.q2", [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert "the flow distance (0, 1, -1)" in fb and "... and" in fb   # long lists are capped
    r, fb = grade("lab5.q2", [[2, 0, 0], [1, 1, 0], [2, 1, 1]])
    assert "unimodular: det(Theta) = 2" in fb
    r, fb = grade("lab5.q2", [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    assert "legality: the skewed schedule is illegal" in fb
    r, fb = grade("lab5.q2", [[1, 0], [0, 1]])
    assert "is 2 x 2, not 3 x 3" in fb
    r, fb = grade("lab5.q2", [[1, 0, 0], [0.5, 1, 0], [2, 1, 1]])
    assert "seidel_skew has fractions" in fb


@pytest.mark.parametrize("recipe,expected", [
    ("auto; tile_wavefront(2, 2, 2); parallel", "tile_wavefront(2, 2, 2) has tiles of 2 x 2 x 2; the question asks for 4 x 4 x 4"),
    ("auto; tile_wavefront(64,64,64); parallel", "has tiles of 64 x 64 x 64"),
    ("auto; tile_wavefront(4, 4); parallel", "tile_wavefront(4, 4) tiles 2 of the 3 loops"),
    ("tile_wavefront(4, 4, 4)", "the recipe is illegal: tile_wavefront(4, 4, 4) is illegal: flow dependence"),
    ("auto; tile(4, 4, 4)", "no tile_wavefront step"),
    ("wavefornt", "unknown schedule step 'wavefornt'"),
    ("", "seidel_recipe is empty"),
])
def test_q3_wrong_paths(recipe, expected):
    r, fb = grade("lab5.q3", recipe)
    assert not r.correct and expected in fb, fb


def test_q3_reports_every_failure_and_an_illegal_schedule():
    r, fb = grade("lab5.q3", "auto; tile(4, 4, 4)")
    assert "tiles: the recipe has no tile_wavefront step" in fb and "parallel: no loop is marked parallel" in fb
    r, fb = grade("lab5.q3", "{ S0[t, i, j] -> [t, -i, j] }")
    assert "legality: the recipe's schedule is illegal: flow dependence S0 -> S0 on A" in fb
    assert r.pictures
    r, fb = grade("lab5.q3", ("auto",))
    assert "is tuple ('auto',), not text" in fb


def test_q4_wrong_paths():
    r, fb = grade("lab5.q4", 8, 3)
    assert "tile_waves: 8 tile waves is not right" in fb and "widest_tile_wave: 3 is not the largest" in fb
    r, fb = grade("lab5.q4", 7, "4")
    assert r.status == "partial" and "text" in fb


def test_q5_wrong_paths():
    r, fb = grade("lab5.q5", "a")
    assert "(a) is not it: tiling reorders the same instances" in fb
    r, fb = grade("lab5.q5", "c")
    assert "(c) is not it: tiling keeps every dependence" in fb
    assert grade("lab5.q5", " B ")[0].correct   # spaces and case are fair to ignore
