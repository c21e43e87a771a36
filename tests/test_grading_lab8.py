"""Lab 8 (the stencil dialect): the solution earns full marks, every wrong-answer path of every check names the
specific error, the hidden cases are read and shown by label only, and the references agree with independent
reasoning (the level of an apply by brute force over orders, the diamond of offsets, the unrolled pattern)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polylab.grading import check, get_lab, load_hidden
from polylab.grading.labs import lab8

ROOT = Path(__file__).resolve().parents[1]
HIDDEN_DIR = ROOT / "instructor" / "hidden"

SOLUTION = {
    "levels": [{"lap"}, {"fli", "flj"}, {"res"}],
    "lap_box": ((-1, -1, 0), (65, 65, 16)), "load_box": ((-2, -2, 0), (66, 66, 16)),
    "u_accesses": 26, "u_distinct": 13,
    "lap_evaluations": (66 * 66 * 16, 5 * 64 * 64 * 16),
    "unrolled_reads": lambda f: 3 * f + 2,
    "fused_schedule": "{ S0[i, j, k] -> [i - 1, j, k, 0]; S1[i, j, k] -> [i, j, k, 1] }",
}


def grade(name: str, *answer):
    r = check(name, *answer)
    return r, "\n".join(r.feedback)


def test_solution_scores_full_marks_with_the_hidden_cases():
    lab = get_lab("lab8")
    hidden = load_hidden(HIDDEN_DIR, lab) if HIDDEN_DIR.is_dir() else {}
    report = lab.grade(SOLUTION, hidden=hidden)
    assert [r.status for r in report.results] == ["correct"] * len(lab.questions), report.text
    assert report.score == report.max_score == lab.max_score >= 14 and len(lab.questions) >= 5


def test_nothing_answered_scores_zero():
    report = get_lab("lab8").grade({})
    assert report.score == 0 and {r.status for r in report.results} == {"missing"}


# -- Q1 -----------------------------------------------------------------------------------------------------

def test_q1_levels_are_the_longest_paths():
    """Brute force: an apply may share a level with another only when neither reads the other (directly or
    through others); the reference's levels are antichains and each apply sits one above a producer."""
    p = lab8.diffusion()
    reads = {lab8._name(a.results[0]): {lab8._name(o) for o in a.operands} for a in p.applies}
    levels = lab8.levels_reference()
    assert [sorted(lv) for lv in levels] == [["lap"], ["fli", "flj"], ["res"]]
    for lv in levels:
        for x, y in itertools.permutations(lv, 2):
            assert y not in reads[x]
    for k, lv in enumerate(levels[1:], start=1):
        for x in lv:
            assert reads[x] & levels[k - 1]


def test_q1_wrong_paths():
    r, fb = grade("lab8.q1", [{"lap", "fli"}, {"flj"}, {"res"}])
    assert r.status == "partial" and "fli cannot run at level 1" in fb and "flj" not in fb
    r, fb = grade("lab8.q1", [{"lap"}, {"fli"}, {"flj"}, {"res"}])
    assert "flj can run earlier than level 3" in fb and "res can run earlier than level 4" in fb
    r, fb = grade("lab8.q1", [{"lap"}, {"fli", "flj"}])
    assert "1 apply(s) missing" in fb
    r, fb = grade("lab8.q1", [{"lap"}, {"fli", "flj", "lap"}, {"res"}])
    assert "listed twice" in fb
    r, fb = grade("lab8.q1", [{"lap"}, {"fli", "flj"}, {"res", "out"}])
    assert "out (level 3) is not an apply" in fb
    r, fb = grade("lab8.q1", {"lap", "fli", "flj", "res"})
    assert r.score == 0 and "not a list of sets" in fb
    r, fb = grade("lab8.q1", ["lap", "fli"])
    assert "single text" in fb
    r, _ = grade("lab8.q1", [["%lap"], ("%fli", "flj"), {"res"}])  # % optional, lists or tuples for sets
    assert r.correct


# -- Q2 -----------------------------------------------------------------------------------------------------

def test_q2_wrong_paths():
    good_lap, good_load = SOLUTION["lap_box"], SOLUTION["load_box"]
    r, fb = grade("lab8.q2", ((-1, -1, 0), (64, 64, 15)), good_load)
    assert r.status == "partial" and "inclusive" in fb and "half-open" in fb
    r, fb = grade("lab8.q2", ((0, 0, 0), (64, 64, 16)), good_load)
    assert "is the output's box" in fb
    r, fb = grade("lab8.q2", good_lap, good_lap)
    assert "load_box is lap's box" in fb
    r, fb = grade("lab8.q2", ((-1, -1, -1), (65, 65, 17)), good_load)
    assert "wrong along k" in fb
    r, fb = grade("lab8.q2", good_lap, ((-2, -2, 0), (66, 67, 16)))
    assert "wrong along j" in fb
    r, fb = grade("lab8.q2", "((-1, -1, 0), (65, 65, 16))", good_load)
    assert "is the text" in fb and r.status == "partial"
    r, fb = grade("lab8.q2", (-1, -1, 0), good_load)
    assert "not a pair" in fb
    r, fb = grade("lab8.q2", ((-1, -1), (65, 65)), good_load)
    assert "has 2 entries, not 3" in fb


# -- Q3 and Q4 ---------------------------------------------------------------------------------------------------

def test_q3_reference_is_the_diamond():
    five = [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)]
    diamond = {(a[0] + b[0], a[1] + b[1]) for a in five for b in five}
    assert lab8.inlined_counts() == (len(five) ** 2 + 1, len(diamond)) == (26, 13)


def test_q3_wrong_paths():
    r, fb = grade("lab8.q3", 25, 13)
    assert r.status == "partial" and "also reads u[0, 0, 0]" in fb
    r, fb = grade("lab8.q3", 13, 13)
    assert "left after cse" in fb
    r, fb = grade("lab8.q3", 10, 26)
    assert "becomes a whole Laplacian" in fb and "counts repeated offsets" in fb
    r, fb = grade("lab8.q3", 26, 9)
    assert "diamond" in fb
    r, fb = grade("lab8.q3", "26", 13)
    assert "remove the quotes" in fb


def test_q4_wrong_paths():
    stored, inlined = SOLUTION["lap_evaluations"]
    r, fb = grade("lab8.q4", (64 * 64 * 16, inlined))
    assert r.status == "partial" and "larger than the output" in fb
    r, fb = grade("lab8.q4", (stored, stored))
    assert "one Laplacian per access" in fb
    r, fb = grade("lab8.q4", (1, 2))
    assert r.score == 0 and "volume of lap's box" in fb and "one per access of res to lap" in fb
    r, fb = grade("lab8.q4", stored)
    assert "not a vector" in fb


# -- Q5 -----------------------------------------------------------------------------------------------------------

@settings(max_examples=8, deadline=None)
@given(st.integers(min_value=1, max_value=12))
def test_q5_reference_is_the_union_of_shifted_patterns(f):
    five = [(0, 0, 0), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0)]
    shifted = {(a, b + c, d) for (a, b, d) in five for c in range(f)}
    assert lab8.unrolled_reads_reference(f) == len(shifted) == 3 * f + 2


def test_q5_wrong_paths_and_hidden_cases():
    q = get_lab("lab8").question("q5")
    hidden = load_hidden(HIDDEN_DIR, get_lab("lab8"))["q5"] if HIDDEN_DIR.is_dir() else ()
    r = q.grade({"unrolled_reads": lambda f: 5 * f}, "lab8", hidden)
    fb = "\n".join(r.feedback)
    assert r.status == "partial" and "unrolled_reads(2) returned 10, expected 8" in fb
    if hidden:
        assert "hidden case" in fb and "(4,)" not in fb
    r = q.grade({"unrolled_reads": lambda f: 3 * f + 2 if f < 3 else 0}, "lab8", hidden)
    if hidden:
        assert r.status == "partial" and "wrong result" in "\n".join(r.feedback)
    r = q.grade({"unrolled_reads": 8}, "lab8")
    assert "not a function" in "\n".join(r.feedback)


# -- Q6 -----------------------------------------------------------------------------------------------------------

def test_q6_wrong_paths():
    r, fb = grade("lab8.q6", "{ S0[i, j, k] -> [i, j, k, 0]; S1[i, j, k] -> [i, j, k, 1] }")
    assert r.score == 0 and "illegal" in fb and "flow dependence S0 -> S1 on lap" in fb
    assert r.pictures  # the violating pair is drawn
    r, fb = grade("lab8.q6", "{ S0[i, j, k] -> [0, i, j, k]; S1[i, j, k] -> [1, i, j, k] }")
    assert r.score == 0 and "not fused" in fb
    r, fb = grade("lab8.q6", "{ S0[i, j, k] -> [i - 1, j - 1, k, 0]; S1[i, j, k] -> [i, j, k, 1] }")
    assert r.status == "partial" and "only 1 loop(s) stay parallel" in fb
    r, fb = grade("lab8.q6", "{ S0[i, j, k] -> [i - 2, j, k, 0]; S1[i, j, k] -> [i, j, k, 1] }")
    assert r.correct  # a larger shift is also legal and keeps j and k parallel
    r, fb = grade("lab8.q6", "{ S0[i, j, k] -> [i - 1, j, k, 0] ")
    assert r.score == 0 and fb
    r, fb = grade("lab8.q6", 3)
    assert "not text" in fb


@pytest.mark.parametrize("statement,result", [("S0", "lap"), ("S1", "res")])
def test_q6_statements_are_found_by_what_they_write(statement, result):
    assert lab8._statement_of(result) == statement
