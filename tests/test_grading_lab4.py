"""Lab 4 (the wavefront, Farkas, a Pluto-style cost): the solution earns full marks and every wrong-answer path
names the specific error (the distance a hyperplane does not put forward, an (s, t, c) and the dependence pair
it breaks, the bound, the pair a fused schedule runs backwards, the count, the stride, what a reading of a
measurement overlooks) without stating the expected answer."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest

from grading_helpers import full_marks, grade, hides, prints_no_verdict, recorded_runs, wrong_answer_table
from polylab.analysis import compute_dependences
from polylab.grading import get_lab, load_hidden
from polylab.grading.kernels import scop
from polylab.grading.labs import lab4
from polylab.toolchain import c_compiler

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = ROOT / "instructor" / "hidden"
FARKAS = "{ [s, t, c] : t >= s and 3t - 3s + c >= 0 and 3t - 6s + c >= 0 and 7t - 3s + c >= 0 }"
SL3_D = {(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)}
STEEP_D = {(1, 0, -1), (0, 1, -1), (0, 0, 1)}
FUSED = """for (i = 3; i < 6; i++)
  b[i] = a[i - 3] + a[i + 4];
for (i = 6; i < N - 4; i++) {
  b[i] = a[i - 3] + a[i + 4];
  a[i - 3] = b[i - 3];
}
for (i = N - 7; i < N - 4; i++)
  a[i] = b[i];
"""
TWO_LOOPS = "for (i = 3; i < N - 4; i++)\n  b[i] = a[i - 3] + a[i + 4];\nfor (i = 3; i < N - 4; i++)\n  a[i] = b[i];"
UNSHIFTED = FUSED.replace("a[i - 3] = b[i - 3]", "a[i] = b[i]")
SOLUTION = {"sl3_distances": SL3_D, "sl3_hyperplane": (1, 1, 1), "steep_distances": STEEP_D,
            "steep_hyperplane": (2, 2, 1), "farkas_constraints": FARKAS,
            "pluto_bound": (0, 7), "pluto_schedule": (1, 1, 3), "fused_code": FUSED,
            "sweep_waves": lambda n: max(0, 3 * n - 8), "wave_stride": 159999,
            "second_thread": "no measurable difference"}
needs_cc = pytest.mark.skipif(c_compiler() is None, reason="question 5 compiles the fused schedule's code")


@needs_cc
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
    assert lab4.best_hyperplane("steep") == (2, 2, 1) and lab4.best_hyperplane("sl3") == (1, 1, 1)


def test_the_farkas_set_agrees_with_brute_force_legality():
    """Every (s, t, c) in a box is in the Farkas set exactly when it keeps every dependence pair for
    N = 3..12 (enumerated)."""
    deps = compute_dependences(scop(lab4.SMOOTH))
    pairs = []
    for n in range(3, 13):
        for d in deps:
            fixed = d.relation.intersect_params(isl.Set(f"[N] -> {{ : N = {n} }}"))
            fixed.wrap().foreach_point(lambda p: pairs.append(tuple(lab4.point_coordinates(p))))
    legal = lab4.farkas_set()
    for s in range(-2, 3):
        for t in range(-2, 3):
            for c in range(-3, 4):
                brute = all(t * y - s * x + c >= 0 for x, y in pairs)
                assert (not legal.intersect(isl.Set(f"{{ [{s}, {t}, {c}] }}")).is_empty()) == brute, (s, t, c)


def test_q1_q2_wrong_paths():
    r, fb = grade("lab4.q1", SL3_D, (1, 0, 1))
    assert "a = (1, 0, 1) gives a . (0, 1, 0) = 0 < 1 for the distance (0, 1, 0) of your list" in fb
    r, fb = grade("lab4.q1", SL3_D, (1, 2, 1))
    assert r.status == "partial" and "legal but not the smallest: a0 + a1 + a2 = 4" in fb and hides(fb, "(1, 1, 1)")
    r, fb = grade("lab4.q1", SL3_D, (-1, 2, 2))
    assert "negative coefficient" in fb
    r, fb = grade("lab4.q2", STEEP_D, (1, 1, 1))
    assert fb.count("< 1") == 1 and ("a . (1, 0, -1) = 0 < 1" in fb or "a . (0, 1, -1) = 0 < 1" in fb)
    assert hides(fb, "(2, 2, 1)")
    r, fb = grade("lab4.q1", (1, 0, 0), (1, 1, 1))
    assert "is one vector, not a set of vectors" in fb and r.score == 2   # the hyperplane part still counts
    r, fb = grade("lab4.q2", STEEP_D, (3, 2, 1))
    assert r.status == "partial" and "not the smallest" in fb
    r, fb = grade("lab4.q2", STEEP_D, "(2, 2, 1)")
    assert "text" in fb


@pytest.mark.parametrize("which, exact", [("q1", SL3_D), ("q2", STEEP_D)])
def test_the_hyperplane_check_names_no_distance_the_student_did_not_list(which, exact):
    """Review 2: the feedback named one violated distance per try, so three tries found the hyperplane with no
    distance derived. Now, for every hyperplane in a box and every list of the student's (none, part of the
    exact set, the exact set with a wrong entry, a superset), every vector the reply names is in that list."""
    import itertools
    import re
    lists = [set(), set(list(exact)[:1]), set(list(exact)[1:]), exact | {(2, 0, 0)},
             exact | {(1, -1, 0), (0, 1, 1), (1, 0, 1)}]
    for listed in lists:
        for a in itertools.product(range(0, 3), repeat=3):
            _, fb = grade(f"lab4.{which}", listed, a)
            named = {tuple(int(x) for x in m.split(",")) for m in re.findall(r"\(([-\d]+, [-\d]+, [-\d]+)\)", fb)}
            assert named <= listed | {a}, (listed, a, fb)


def test_the_distance_check_counts_and_names_only_what_the_student_can_see():
    r, fb = grade("lab4.q1", {(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1), (0, 0, -1), (2, 0, 0)}, (1, 1, 1))
    assert "(0, 0, -1) is not a distance vector here: its first non-zero entry is not positive" in fb
    assert "one entry of your set is not a distance vector" in fb and "(2, 0, 0)" not in fb
    r, fb = grade("lab4.q1", {(1, 0, 0)}, (1, 1, 1))
    assert "3 distance vectors missing" in fb and r.score == pytest.approx(2 + 1 / 4)
    r, fb = grade("lab4.q1", {(1, 0, 0)}, (1, 0, 0))
    assert "your list misses a distance" in fb and hides(fb, "(0, 1, 0)", "(0, 0, 1)", "(1, 1, 1)")


def test_q3_farkas_wrong_paths_name_an_illegal_schedule_and_its_pair():
    assert grade("lab4.q3", "{ [s, t, c] : t - s >= 0 and c >= 6s - 3t and c >= 3s - 3t and c >= 3s - 7t }")[0].correct
    r, fb = grade("lab4.q3", "{ [s, t, c] : t >= s and 3t - 3s + c >= 0 }")          # the k = 0 pair only
    assert r.score == 0 and "satisfies your constraints but is illegal" in fb
    assert "the anti dependence S0[6] -> S1[3] (at N = 11) gets theta_S1 - theta_S0 = " in fb
    assert hides(fb, FARKAS, "3t - 6s + c")
    r, fb = grade("lab4.q3", "{ [s, t, c] : t = s and c >= 4 }")
    assert "keeps every dependence for every N, but your constraints exclude it" in fb
    r, fb = grade("lab4.q3", "{ [s, t] : t >= s }")
    assert "lives in" in fb
    assert grade("lab4.q3", FARKAS.replace("{ [", "{ S[")
                 )[0].correct                                                        # a tuple name is fair
    r, fb = grade("lab4.q3", "{ [s, t, c] : t >= }")
    assert "isl cannot read farkas_constraints" in fb


def test_q4_pluto_wrong_paths():
    r, fb = grade("lab4.q4", (1, 0), (1, 2, 0))
    assert r.score == 0 and "(1, 0) is not the smallest bound u N + w" in fb
    assert "is legal, but another legal schedule with s >= 1 keeps every dependence distance within a smaller" in fb
    r, fb = grade("lab4.q4", (0, 8), (1, 1, 4))
    assert "(0, 8) is not the smallest bound" in fb and hides(fb, "(0, 7)", "(1, 1, 3)")
    r, fb = grade("lab4.q4", (0, 7), (1, 1, 0))
    assert r.score == 1 and "(s, t, c) = (1, 1, 0) is illegal: the anti dependence" in fb
    r, fb = grade("lab4.q4", (0, 1), (0, 0, 1))
    assert "not the smallest bound" in fb and "s = 0" in fb
    r, fb = grade("lab4.q4", (0, 7), (1, 1))
    assert "has 2 entries, not 3" in fb and "one entry per coefficient (s, t, c)" in fb
    assert lab4.pluto_optimum() == ((0, 7), (1, 1, 3))


def test_q4_a_wrong_bound_is_not_told_its_direction():
    """Review 2: "a smaller u exists" / "no schedule has distances that small" made the bound a binary search.
    Every wrong bound in a box gets the same reply, whichever side of the optimum it lies on, and a legal
    schedule's reply does not depend on how far its bound is from the best."""
    replies = {grade("lab4.q4", (u, w), (1, 1, 3))[1].replace(f"({u}, {w})", "(u, w)")
               for u in range(3) for w in range(10) if (u, w) != (0, 7)}
    assert len(replies) == 1
    legal = {grade("lab4.q4", (0, 7), (1, 1, c))[1].replace(f"(1, 1, {c})", "x") for c in (4, 5, 8)}
    assert len(legal) == 1


@needs_cc
def test_q5_fused_code_wrong_paths():
    r, fb = grade("lab4.q5", UNSHIFTED)   # fused without the shift
    assert r.score == 0 and "changes the output: the first element that differs is a[" in fb
    assert hides(fb, "a[i - 3] = b[i - 3]", "i < 6")
    r, fb = grade("lab4.q5", TWO_LOOPS)          # smooth as given: right outputs, no fusion, nothing earned
    assert r.score == 0 and "no single loop of fused_code writes both b and a" in fb and "not run" in fb
    half = ("for (i = 3; i < N - 4; i++) { b[i] = a[i - 3] + a[i + 4]; if (i >= 6 && i < 9) a[i - 3] = b[i - 3]; }\n"
            "for (i = 6; i < N - 4; i++) a[i] = b[i];")
    r, fb = grade("lab4.q5", half)
    assert r.score == 0 and "leaves a number of iterations that grows with N" in fb
    nested = ("for (i = 3; i < N - 4; i++) { b[i] = a[i - 3] + a[i + 4];\n"
              "  if (i == N - 5) for (j = 3; j < N - 4; j++) a[j] = b[j]; }")
    assert grade("lab4.q5", nested)[0].score == 0        # the copy loop inside the last iteration: not fused
    guarded = ("for (i = 3; i < N - 1; i++) { if (i < N - 4) b[i] = a[i - 3] + a[i + 4];\n"
               "  if (i >= 6) a[i - 3] = b[i - 3]; }")
    assert grade("lab4.q5", guarded)[0].correct           # guards instead of a prologue and an epilogue
    r, fb = grade("lab4.q5", "for (i = 1; i < N - 1 i++) { }")
    assert r.score == 0 and "fused_code is not valid C: line 1" in fb
    r, fb = grade("lab4.q5", "x[1] = 0;")
    assert r.score == 0 and "its statements write x" in fb


def test_q6_q7_wrong_paths_and_hidden_cases():
    r, fb = grade("lab4.q6", lambda n: 3 * n - 8)
    assert "public cases: 3/3" in fb
    hidden = load_hidden(HIDDEN, get_lab("lab4"))["q6"]
    r = get_lab("lab4").question("q6").grade({"sweep_waves": lambda n: 3 * n - 8}, "lab4", hidden)
    assert r.status == "partial" and "hidden case 'n = 2: the sweep is empty': wrong result" in "\n".join(r.feedback)
    r, fb = grade("lab4.q6", lambda n: float(3 * n - 8))
    assert "returned 22.0, a float where the function should return an int" in fb
    r, fb = grade("lab4.q7", 160000)
    assert "160000 is the step of a single iterator: from one iteration of the innermost loop to the next, more" in fb
    assert hides(fb, "159999", "other direction", "k changes", "t - j - k")   # review 3: it stated the correction
    r, fb = grade("lab4.q7", 1)
    assert "1 is the step of a single iterator" in fb and hides(fb, "t - j - k", "i = t")   # nor q1's hyperplane
    r, fb = grade("lab4.q7", 12345)
    assert "write the address of x[i][j][k] as (i * 400 + j) * 400 + k" in fb
    assert grade("lab4.q7", -159999)[0].correct


def test_q8_reading_a_measurement():
    r, fb = grade("lab4.q8", "slower")
    assert r.score == 0 and "the medians alone do not decide" in fb and "speedup_interval" in fb
    r, fb = grade("lab4.q8", "faster")
    assert "the medians say otherwise" in fb
    r, fb = grade("lab4.q8", "quicker")
    assert "not one of 'faster', 'slower', 'no measurable difference'" in fb
    for given in ("slower", "faster"):
        assert hides(grade("lab4.q8", given)[1], "no measurable difference")


def test_q8_the_printed_interval_leaves_the_reading_to_the_student():
    """The question has the student print speedup_interval on the recorded runs: that prints the ratio and its
    95 % interval, never the verdict that is an answer option (review 2: the printed verdict was the answer)."""
    assert prints_no_verdict(lab4.RECORDED['point wavefront, 1 thread'], lab4.RECORDED['point wavefront, 2 threads'])


def test_the_lab_shows_the_recorded_runs_the_check_reads():
    assert recorded_runs("lab4_wavefront.ipynb") == lab4.RECORDED


#: every wrong-answer path of every question: (question, answers, what the feedback must name, more texts of
#: the answer it must not state); the answers' own texts (tests/grading_helpers.answer_forms) are hidden too.
#: Not reachable, so not here: q1/q2's "as small as the best but not the lexicographically smallest" (each nest
#: has one hyperplane of the smallest sum), and q5's run failing (a crash or a timeout is the toolchain's, tested
#: in test_grading_student_code)
WRONG = [
    ("q1", (SL3_D, (-1, 2, 2)), ("(-1, 2, 2) has a negative coefficient",), ()),
    ("q1", (SL3_D, (1, 0, 1)), ("a = (1, 0, 1) gives a . (0, 1, 0) = 0 < 1 for the distance (0, 1, 0) of your list",),
     ()),
    ("q1", (SL3_D, (1, 2, 1)), ("legal but not the smallest: a0 + a1 + a2 = 4",), ()),
    ("q1", ({(1, 0, 0)}, (1, 0, 0)), ("3 distance vectors missing", "your list misses a distance"), ()),
    ("q1", (SL3_D | {(0, 0, -1)}, (1, 1, 1)), ("(0, 0, -1) is not a distance vector here: its first non-zero",), ()),
    ("q1", (SL3_D | {(2, 0, 0)}, (1, 1, 1)), ("one entry of your set is not a distance vector",), ("(2, 0, 0)",)),
    ("q2", (STEEP_D, (1, 1, 1)), ("a = (1, 1, 1) gives a . (", ") = 0 < 1 for the distance"), ()),
    ("q2", (STEEP_D, (3, 2, 1)), ("a = (3, 2, 1) is legal but not the smallest",), ()),
    ("q2", ({(0, 0, 1)}, (1, 1, 1)), ("2 distance vectors missing", "your list misses a distance"), ()),
    ("q3", ("{ [s, t, c] : t >= s and 3t - 3s + c >= 0 }",),
     ("satisfies your constraints but is illegal", "the anti dependence S0[6] -> S1[3]"), ("3t - 6s + c",)),
    ("q3", ("{ [s, t, c] : t = s and c >= 4 }",), ("keeps every dependence for every N, but your constraints",),
     ("3t - 6s + c",)),
    ("q3", ("{ [s, t] : t >= s }",), ("farkas_constraints lives in",), ()),
    ("q4", ((1, 0), (1, 2, 0)), ("(1, 0) is not the smallest bound", "another legal schedule with s >= 1"), ()),
    ("q4", ((0, 8), (1, 1, 4)), ("(0, 8) is not the smallest bound", "another legal schedule with s >= 1"), ()),
    ("q4", ((0, 1), (0, 0, 1)), ("(0, 1) is not the smallest bound", "s = 0"), ()),
    ("q4", ((0, 7), (1, 1, 0)), ("(s, t, c) = (1, 1, 0) is illegal: the anti dependence",), ()),
    pytest.param("q5", (UNSHIFTED,),
                 ("changes the output: the first element that differs is a[",), ("a[i - 3] = b[i - 3]",),
                 marks=needs_cc),
    ("q5", (TWO_LOOPS,), ("no single loop of fused_code writes both b and a",), ("a[i - 3] = b[i - 3]",)),
    ("q5", ("for (i = 3; i < N - 4; i++) { b[i] = a[i - 3] + a[i + 4]; if (i >= 6 && i < 9) a[i - 3] = b[i - 3]; }\n"
            "for (i = 6; i < N - 4; i++) a[i] = b[i];",), ("leaves a number of iterations that grows with N",), ()),
    ("q5", ("for (i = 1; i < N - 1 i++) { }",), ("fused_code is not valid C",), ()),
    ("q5", ("x[1] = 0;",), ("its statements write x",), ()),
    ("q6", (lambda n: float(3 * n - 8),), ("sweep_waves(10) returned 22.0",), ("3 * n - 8", "3n - 8")),
    ("q7", (1,), ("1 is the step of a single iterator",), ("159999", "t - j - k")),
    ("q7", (401,), ("401 moves j by one row",), ("159999", "t - j - k")),
    ("q7", (160000,), ("160000 is the step of a single iterator",), ("159999",)),
    ("q7", (12345,), ("12345 is not the distance",), ("159999",)),
    ("q8", ("slower",), ("the medians alone do not decide",), ("no measurable difference",)),
    ("q8", ("faster",), ("the medians say otherwise",), ("no measurable difference",)),
]


test_each_wrong_answer_names_its_mistake_and_hides_the_answer = wrong_answer_table("lab4", SOLUTION, WRONG)
