"""Lab 5 (tiling): the solution earns full marks and every wrong-answer path of every question names the
specific error (the distance a skew leaves negative, the part of a recipe that is wrong, the count, a tile
whose working set overflows or wastes the cache, what a reading of a measurement overlooks) without stating
the expected answer; trivial answers (the identity, an untiled recipe) earn nothing."""

from __future__ import annotations

import pytest

from grading_helpers import full_marks, grade, hides, prints_no_verdict, recorded_runs, wrong_answer_table
from polylab.grading.labs import lab5
from polylab.toolchain import c_compiler

RECIPE = "{ S0[t, i, j] -> [t, t + i, 2t + i + j] }; tile_wavefront(4, 4, 4); parallel"
SOLUTION = {"seidel_negative_distance": (0, 1, -1), "seidel_skew": [[1, 0, 0], [1, 1, 0], [2, 1, 1]],
            "seidel_recipe": RECIPE, "tile_waves": 7, "widest_tile_wave": 4,
            "tile_footprint_8": 296, "tile_size": 63, "tiles_32": "no measurable difference"}
needs_cc = pytest.mark.skipif(c_compiler() is None, reason="question 3 compiles the recipe's code")


@needs_cc
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
    assert "(0, 1, 1) is a distance of seidel2d (flow), but no entry is negative" in fb and hides(fb, "(0, 1, -1)")
    r, fb = grade("lab5.q1", (0, 2, -1))
    assert "(0, 2, -1) is not a distance of seidel2d" in fb
    assert hides(fb, "(0, 1, -1)", "A[i + 1][j - 1]")  # neither the distance nor the read that gives it
    r, fb = grade("lab5.q1", "(0, 1, -1)")
    assert "text" in fb


def test_q2_wrong_paths_and_no_credit_for_a_legal_order_alone():
    r, fb = grade("lab5.q2", [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    assert "permutable: the flow dependence A[i][j] -> A[i + 1][j + 1]: for one of its distances d, the third entry " \
           "of Theta d is negative" in fb
    assert r.score == 0 and hides(fb, "[2, 1, 1]", "(1, 0, -1)", "(1, -1, -1)")
    # the original order (the example): the dependences by their references, never a distance (question 1)
    r, fb = grade("lab5.q2", [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert r.score == 0 and "the flow dependence A[i][j] -> A[i - 1][j + 1]" in fb and "... and more" in fb
    assert hides(fb, "(0, 1, -1)", "(0, -1, 1)", "(1, -1, 0)", "(1, -1, -1)", "(1, 0, -1)", "S0[")
    r, fb = grade("lab5.q2", [[2, 0, 0], [1, 1, 0], [2, 1, 1]])
    assert r.score == 2 and "unimodular: det(Theta) = 2" in fb
    r, fb = grade("lab5.q2", [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    assert "the skewed schedule also runs a dependence backwards" in fb and r.score == 0 and hides(fb, "S0[")
    r, fb = grade("lab5.q2", [[1, 0], [0, 1]])
    assert "is 2 x 2, not 3 x 3" in fb
    r, fb = grade("lab5.q2", [[1, 0, 0], [0.5, 1, 0], [2, 1, 1]])
    assert "seidel_skew has fractions" in fb


@pytest.mark.parametrize("recipe,expected", [
    (RECIPE.replace("(4, 4, 4)", "(2, 2, 2)"), "tile_wavefront(2, 2, 2) has tiles of 2 x 2 x 2; the question asks for 4 x 4 x 4"),
    (RECIPE.replace("(4, 4, 4)", "(64,64,64)"), "has tiles of 64 x 64 x 64"),
    (RECIPE.replace("(4, 4, 4)", "(4, 4)"), "tile_wavefront(4, 4) tiles 2 of the 3 loops"),
    ("{ S0[t, i, j] -> [t, i, j] }; tile_wavefront(4, 4, 4)", "the recipe is illegal: tile_wavefront(4, 4, 4) is illegal: under your skew some dependence distance still has a negative entry"),
    ("{ S0[t, i, j] -> [t, t + i, 2t + i + j] }; tile(4, 4, 4)", "does not tile its band into a tile-level wavefront"),
    ("auto; tile_wavefront(4, 4, 4); parallel", "seidel_recipe uses auto: write the skew yourself"),
    ("tile_wavefront(4, 4, 4)", "does not start with a schedule in isl text"),
    ("{ S0[t, i, j] -> [t, t + i, 2t + i + j] }; wavefornt", "unknown schedule step 'wavefornt'"),
    ("", "seidel_recipe is empty"),
])
def test_q3_wrong_paths(recipe, expected):
    r, fb = grade("lab5.q3", recipe)
    assert r.score == 0 and expected in fb, fb
    assert "t + i" in recipe or hides(fb, "t + i, 2t + i + j", "2t + i + j")  # the skew is never given


def test_q3_an_illegal_skew_and_malformed_answers():
    r, fb = grade("lab5.q3", "{ S0[t, i, j] -> [t, -i, j] }")
    assert "the recipe's schedule is illegal: flow dependence S0 -> S0 on A" in fb and r.pictures
    r, fb = grade("lab5.q3", ("auto",))
    assert "is tuple ('auto',), not text" in fb


def test_q4_wrong_paths():
    r, fb = grade("lab5.q4", 8, 3)
    assert "tile_waves: 8 tile waves is not right" in fb and "widest_tile_wave: 3 is not the largest" in fb
    assert hides(fb, "7 tile waves", "is 7", "4 tiles")
    r, fb = grade("lab5.q4", 7, "4")
    assert r.status == "partial" and "text" in fb


def test_the_footprint_model_agrees_with_a_brute_force_count():
    for size in (2, 3, 5):
        n = 8 * size + 64
        points = [(t, u - t, v - u - t) for t in range(size, 2 * size) for u in range(n, n + size)
                  for v in range(3 * n, 3 * n + size)]
        touched = {(i + di, j + dj) for _, i, j in points for di in (-1, 0, 1) for dj in (-1, 0, 1)}
        assert lab5.tile_footprint(size) == len(touched)
    assert lab5.model_tile_size() == 63


def test_q5_tile_size_wrong_paths_name_the_working_set():
    assert grade("lab5.q5", 296, 64)[0].correct and grade("lab5.q5", 296, 56)[0].correct   # the tolerance
    r, fb = grade("lab5.q5", 512, 63)
    assert r.status == "partial" and "512 is the number of iterations of the tile" in fb
    r, fb = grade("lab5.q5", 100, 120)
    assert "one time step's square with its halo" in fb and "tile_size = 120 is not the largest tile" in fb
    # the feedback never evaluates the model for the student's s: no bytes, no share, no direction
    for s in (8, 16, 64 + 1, 120):
        r, fb = grade("lab5.q5", 296, s)
        assert r.score == 1 and hides(fb, "296", " 63", "bytes,", "%", "too large", "too small", "larger tiles")
    r, fb = grade("lab5.q5", 296, 88)     # the whole cache instead of C / 2
    assert "fills the whole cache: the model gives one tile only C / 2" in fb
    r, fb = grade("lab5.q5", 296, 180)    # elements instead of bytes
    assert "fits the budget counted in elements" in fb
    r, fb = grade("lab5.q5", 300, 0)
    assert "at least one point per dimension" in fb and "is not the number of distinct elements" in fb


def test_q6_reading_a_measurement():
    r, fb = grade("lab5.q6", "faster")
    assert r.score == 0 and "the medians alone do not decide" in fb and hides(fb, "no measurable difference")
    r, fb = grade("lab5.q6", "slower")
    assert "the medians say otherwise" in fb


def test_q6_the_printed_interval_leaves_the_reading_to_the_student():
    """The question has the student print speedup_interval on the recorded runs: that prints the ratio and its
    95 % interval, never the verdict that is an answer option (review 2: the printed verdict was the answer)."""
    assert prints_no_verdict(lab5.RECORDED['original (gcc -O3)'], lab5.RECORDED['tiles 32x32x32'])


def test_the_lab_shows_the_recorded_runs_the_check_reads():
    assert recorded_runs("lab5_tiling.ipynb") == lab5.RECORDED


#: every wrong-answer path of every question: (question, answers, what the feedback must name, more texts of
#: the answer it must not state); the answers' own texts (tests/grading_helpers.answer_forms) are hidden too.
#: Not reachable, so not here: q3's run that changes the output (the code of a legal schedule) and q3's
#: "no loop is marked parallel" (tile_wavefront marks the loop over a wave's tiles parallel itself)
SKEW_TEXTS = ("t + i, 2t + i + j", "2t + i + j", "[2, 1, 1]")
WRONG = [
    ("q1", ((0, 1, 1),), ("(0, 1, 1) is a distance of seidel2d (flow), but no entry is negative",), ()),
    ("q1", ((0, 2, -1),), ("(0, 2, -1) is not a distance of seidel2d",), ("A[i + 1][j - 1]",)),
    ("q2", ([[1, 0, 0], [1, 1, 0], [1, 1, 1]],),
     ("permutable: the flow dependence A[i][j] -> A[i + 1][j + 1]", "the third entry of Theta d is negative"),
     SKEW_TEXTS + ("(1, -1, -1)",)),
    ("q2", ([[0, 1, 0], [1, 0, 0], [0, 0, 1]],), ("the skewed schedule also runs a dependence backwards",),
     SKEW_TEXTS + ("S0[",)),
    ("q2", ([[2, 0, 0], [1, 1, 0], [2, 1, 1]],), ("unimodular: det(Theta) = 2",), ()),
    ("q3", ("",), ("seidel_recipe is empty",), SKEW_TEXTS),
    ("q3", ("auto; tile_wavefront(4, 4, 4); parallel",), ("seidel_recipe uses auto",), SKEW_TEXTS),
    ("q3", ("tile_wavefront(4, 4, 4)",), ("does not start with a schedule in isl text",), SKEW_TEXTS),
    ("q3", ("{ S0[t, i, j] -> [t, i, j] }; tile_wavefront(4, 4, 4)",),
     ("the recipe is illegal: tile_wavefront(4, 4, 4) is illegal", "the band is not permutable"),
     SKEW_TEXTS + ("S0[", "auto", "(0, 1, -1)")),
    ("q3", ("{ S0[t, i, j] -> [t, -i, j] }",), ("the recipe's schedule is illegal: flow dependence S0 -> S0 on A",),
     SKEW_TEXTS),
    ("q3", ("{ S0[t, i, j] -> [t, t + i, 2t + i + j] }; tile(4, 4, 4)",),
     ("does not tile its band into a tile-level wavefront",), ()),
    ("q3", (RECIPE.replace("(4, 4, 4)", "(4, 4)"),), ("tile_wavefront(4, 4) tiles 2 of the 3 loops",), ()),
    ("q3", (RECIPE.replace("(4, 4, 4)", "(2, 2, 2)"),), ("tile_wavefront(2, 2, 2) has tiles of 2 x 2 x 2",), ()),
    ("q4", (8, 3), ("8 tile waves is not right", "3 is not the largest number of tiles"),
     ("7 tile waves", "is 7", "4 tiles")),
    ("q5", (512, 63), ("512 is the number of iterations of the tile",), ("296",)),
    ("q5", (100, 120), ("one time step's square with its halo", "tile_size = 120 is not the largest tile"),
     ("296", " 63", "bytes,", "%")),
    ("q5", (300, 16), ("300 is not the number of distinct elements", "tile_size = 16 is not the largest tile"),
     ("296", " 63", "bytes,", "%")),
    ("q5", (296, 88), ("tile_size = 88 fills the whole cache",), (" 63", "%")),
    ("q5", (296, 180), ("tile_size = 180 fits the budget counted in elements",), (" 63", "%")),
    ("q5", (296, 0), ("tile_size = 0: a tile has at least one point per dimension",), (" 63",)),
    ("q6", ("faster",), ("the medians alone do not decide",), ("no measurable difference",)),
    ("q6", ("slower",), ("the medians say otherwise",), ("no measurable difference",)),
]


test_each_wrong_answer_names_its_mistake_and_hides_the_answer = wrong_answer_table("lab5", SOLUTION, WRONG)
