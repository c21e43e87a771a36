"""Lab 8 (the stencil dialect on xDSL): the solution earns full marks, nothing answered earns nothing, every
wrong-answer path names what the mistake breaks without stating the answer, and the references agree with
independent reasoning (the diamond of offsets, the halo as the sum of the applies' reach, the memref index
read from the lowered loops' own subview)."""

from __future__ import annotations

import re
from pathlib import Path

import islpy as isl
import pytest

from grading_helpers import grade, hides, prints_no_verdict, recorded_runs, wrong_answer_table
from polylab.experiment import speedup_interval
from polylab.model.islutil import point_coordinates
from polylab import stencil
from polylab.grading import get_lab, load_hidden
from polylab.grading.labs import lab8

ROOT = Path(__file__).resolve().parents[1]
HIDDEN_DIR = ROOT / "instructor" / "hidden"

BODY = """%n = stencil.access %a[-1, 0] : !stencil.temp<?x?xf64>
      %s = stencil.access %a[1, 0] : !stencil.temp<?x?xf64>
      %w = stencil.access %a[0, -1] : !stencil.temp<?x?xf64>
      %e = stencil.access %a[0, 1] : !stencil.temp<?x?xf64>
      %ns = arith.addf %n, %s : f64
      %we = arith.addf %w, %e : f64
      %sum = arith.addf %ns, %we : f64
      %quarter = arith.constant 0.25 : f64
      %mean = arith.mulf %sum, %quarter : f64
      stencil.return %mean : f64"""

PLAIN = [0.010, 0.011, 0.0102, 0.0101, 0.0103, 0.0104, 0.0100]
SLOWER = [2 * t for t in PLAIN]

SOLUTION = {
    "smooth_program": lab8.SMOOTH_TEMPLATE.replace("BODY", BODY),
    "lap_box": ((-1, -1, 0), (65, 65, 16)), "load_box": ((-2, -2, 0), (66, 66, 16)),
    "u_distinct": 13,
    "lap_evaluations": (66 * 66 * 16, 5 * 64 * 64 * 16),
    "memref_index": (2, 4, 0),
    "kernel_start": "b",
    "rank0_needs": "{ u[i, j, k] : 0 <= k < 16 and ((i = 32 and -1 <= j <= 64) or (i = 33 and 0 <= j <= 63)) }",
    "inlining_interval": (0.89, 1.75), "inlining_verdict": "no measurable difference",
}


def test_solution_scores_full_marks():
    lab = get_lab("lab8")
    hidden = load_hidden(HIDDEN_DIR, lab) if HIDDEN_DIR.is_dir() else {}
    report = lab.grade(SOLUTION, hidden=hidden)
    assert [r.status for r in report.results] == ["correct"] * len(lab.questions), report.text
    assert report.score == report.max_score == lab.max_score == 17


def test_nothing_answered_scores_zero():
    report = get_lab("lab8").grade({})
    assert report.score == 0 and {r.status for r in report.results} == {"missing"}


def test_the_course_rules_hold():
    lab = get_lab("lab8")
    kinds = {q.kind for q in lab.questions}
    assert {"derivation", "construction"} <= kinds
    assert sum(q.points for q in lab.questions if q.kind == "choice") <= 0.1 * lab.max_score


# -- Q1: the construction ------------------------------------------------------------------------------------------

def test_q1_another_summation_order_is_right_too():
    body = BODY.replace("%ns = arith.addf %n, %s", "%ns = arith.addf %n, %e").replace(
        "%we = arith.addf %w, %e", "%we = arith.addf %w, %s")
    r, _ = grade("lab8.q1", lab8.SMOOTH_TEMPLATE.replace("BODY", body))
    assert r.correct


@pytest.mark.parametrize("change, words", [
    (lambda b: b.replace("%a[0, 1]", "%a[1, 1]"), "offset [1, 1] reads a point the operator does not use"),
    (lambda b: b.replace("0.25", "0.2"), "a weight or an operation is off"),
    (lambda b: b.replace("%sum = arith.addf %ns, %we", "%sum = arith.subf %ns, %we"), "is off"),
    (lambda b: b.replace("arith.addf %n, %s", "arith.addf %n %s"), "line 11, column 27"),
    (lambda b: "BODY", "does not read"),
], ids=["diagonal", "weight", "operation", "syntax", "untouched-template"])
def test_q1_each_mistake_is_named_without_the_answer(change, words):
    r, fb = grade("lab8.q1", lab8.SMOOTH_TEMPLATE.replace("BODY", change(BODY)))
    assert not r.correct and words in fb, fb
    assert "0.25" not in fb and "[0, 1]" not in fb


def test_q1_refuses_what_is_not_a_program():
    r, fb = grade("lab8.q1", 42)
    assert r.score == 0 and "not text" in fb


# -- Q2 -------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lap_box, load_box, words", [
    (((-1, -1, 0), (64, 64, 15)), SOLUTION["load_box"], "inclusive"),
    (((0, 0, 0), (64, 64, 16)), SOLUTION["load_box"], "stored box"),
    (SOLUTION["lap_box"], ((-1, -1, 0), (65, 65, 16)), "lap's box"),
    (SOLUTION["lap_box"], ((-4, -4, 0), (68, 68, 16)), "field's bounds"),
    (SOLUTION["lap_box"], ((-2, -3, 0), (66, 66, 16)), "wrong along j"),
], ids=["inclusive", "output", "lap-as-load", "halo", "one-dimension"])
def test_q2_mistakes(lap_box, load_box, words):
    r, fb = grade("lab8.q2", lap_box, load_box)
    assert not r.correct and words in fb, fb
    assert "66" not in fb.replace(str(load_box), "") and "65" not in fb.replace(str(lap_box), "")


def test_q2_boxes_are_xdsls_shape_inference():
    shaped = stencil.run_passes(lab8.bilap(), "shape-inference")
    assert "!stencil.temp<[-1,65]x[-1,65]x[0,16]xf64>" in shaped.text
    assert lab8.box_reference("load") == ((-2, -2, 0), (66, 66, 16))


# -- Q3, Q4 ---------------------------------------------------------------------------------------------------------

def test_q3_reference_is_the_diamond():
    diamond = {(a + c, b + d) for a, b in [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)]
               for c, d in [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)]}
    assert lab8.inlined_accesses() == len(diamond) == 13


@pytest.mark.parametrize("given, words", [(26, "each time a Laplacian reads it"), (25, "without res's own"),
                                          (5, "one Laplacian's pattern"), (3, "fewer than"), (17, "count each once")])
def test_q3_mistakes(given, words):
    r, fb = grade("lab8.q3", given)
    assert not r.correct and words in fb and "13" not in fb, fb


def test_q4_partial_and_named_by_consequence():
    stored, inlined = lab8.evaluations_reference()
    r, fb = grade("lab8.q4", (64 * 64 * 16, inlined))
    assert r.score == pytest.approx(1.0) and "never computed" in fb and str(stored) not in fb
    r, fb = grade("lab8.q4", (stored, stored))
    assert "computed by each of them" in fb and str(inlined) not in fb


def test_q4_no_reply_states_a_counting_rule():
    """Review 3: the reply to the missing-answer example stated both rules ("count the points of lap's box",
    "one per access of res to lap, at every output point"); a reply now says what the number leads to."""
    stored, inlined = lab8.evaluations_reference()
    for given in [(1000, 1000), (10 ** 7, 10 ** 8), (64 * 64 * 16, 64 * 64 * 16), (stored, stored)]:
        _, fb = grade("lab8.q4", given)
        assert "box" not in fb and "per access" not in fb and "question 2" not in fb, fb


# -- Q5 -------------------------------------------------------------------------------------------------------------

def test_q5_reference_is_read_from_the_lowered_loops():
    loops = stencil.lowered_loops(lab8.inlined()).text
    m = re.search(r"memref\.subview %fin\[(\d+), (\d+), (\d+)\]", loops)
    assert m, loops[:2000]
    start = tuple(int(x) for x in m.groups())
    assert lab8.memref_index_reference() == tuple(s + o for s, o in zip(start, (-2, 0, 0)))


@pytest.mark.parametrize("given, words", [((-2, 0, 0), "indexed from 0"), ((6, 4, 0), "moves down"),
                                          ((2, 4, 4), "along k"), ((3, 3, 0), "index = point + offset")])
def test_q5_mistakes(given, words):
    r, fb = grade("lab8.q5", given)
    assert not r.correct and words in fb and "(2, 4, 0)" not in fb, fb


# -- Q6, Q7, Q8 -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("given", ["a", "c", "d"])
def test_q6_wrong_options_say_why_not_naming_the_answer(given):
    r, fb = grade("lab8.q6", given)
    assert not r.correct and "gpu.launch_func" not in fb and len(fb) > 40


def test_q7_reference_is_the_brute_force_dependence_cone():
    """Brute force, independent of isl and of the program's parse: out at x depends on u at x + d + e (d, e among
    the Laplacian's five offsets in (i, j)); the points past the cut that some x of rank 0's rows reaches."""
    five = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)]
    cone = {(a + c, b + d) for a, b in five for c, d in five}
    want = {(x + di, y + dj) for x in range(32) for y in range(64) for di, dj in cone if x + di >= 32}
    ref = lab8.needed_reference()
    assert ref.count_val().to_python() == len(want) * 16
    got = set()
    ref.foreach_point(lambda p: got.add(point_coordinates(p, 0, 2)))
    assert got == want


def test_q7_xdsls_exchange_is_the_same_rows():
    """xDSL's dmp.swap from the neighbour at +i receives rows 32 and 33 (the rank's own coordinates): the rows of
    the reference; its j range [0, 64) leaves out only j = -1 and 64, the field's halo every rank holds."""
    from polylab.stencil.mlir import distribute

    d = distribute(lab8.bilap(), "2x1")
    assert any(e.startswith("send [32, 0, 0] + [2, 64, 16] to the neighbour at [1, 0, 0]") for e in d.exchanges), \
        d.exchanges
    ref = lab8.needed_reference()
    rows = isl.Set("{ u[i, j, k] : 32 <= i < 34 and 0 <= j < 64 and 0 <= k < 16 }")
    halo = isl.Set("{ u[i, j, k] : i = 32 and (j = -1 or j = 64) and 0 <= k < 16 }")
    assert ref.is_equal(rows.union(halo))


def test_q7_small_widths_do_not_walk():
    """Review 3: a small integer answer was found in 3 tries. A wrong set is told the point of out it leaves
    uncomputed, or a point it holds that nothing needs; never a width, "fewer" or "more"."""
    for given in ["{ u[i, j, k] : 32 <= i < 33 and 0 <= j < 64 and 0 <= k < 16 }",
                  "{ u[i, j, k] : 32 <= i < 34 and 0 <= j < 64 and 0 <= k < 16 }",
                  "{ u[i, j, k] : 32 <= i < 35 and -2 <= j < 66 and 0 <= k < 16 }"]:
        r, fb = grade("lab8.q7", given)
        assert not r.correct
        assert not any(w in fb for w in ("fewer", "more", "rows", "width", "2 ")), fb


def test_q8_is_read_from_the_recorded_runs_the_lab_prints():
    """The grader reruns a notebook elsewhere: q8 and q9 are judged on RECORDED, which the lab prints, so a
    correct reading of the figures the student was shown earns full marks whatever the grader's machine measures."""
    iv = speedup_interval(lab8.RECORDED["plain"], lab8.RECORDED["inlined"])
    shown = f"[{iv.low:.2f}, {iv.high:.2f}]"                       # the figures as a student reads them
    r, _ = grade("lab8.q8", tuple(float(x) for x in shown.strip("[]").split(", ")))
    assert r.correct and r.score == 1.5
    assert lab8.check_q9(iv.verdict).correct
    assert recorded_runs("lab8_stencil.ipynb") == lab8.RECORDED, "the lab prints the runs the check reads"


def test_q8_the_printed_interval_leaves_the_reading_to_the_student():
    """The question has the student print speedup_interval on the recorded runs: that prints the ratio and its
    95 % interval, never the verdict that is an answer option (review 2: the printed verdict was the answer)."""
    assert prints_no_verdict(lab8.RECORDED['plain'], lab8.RECORDED['inlined'])


def test_q9_the_verdict_is_recorded_blind_in_the_notebook():
    """Review 3: q8's reply to a wrong verdict named the right option. The verdict is its own choice question,
    recorded only in the notebook (whatever the option), judged with its feedback by the grader only."""
    lab = get_lab("lab8")
    q9 = lab.question("q9")
    assert q9.kind == "choice"
    for verdict in ("faster", "slower", "no measurable difference"):
        res = q9.grade({"inlining_verdict": verdict}, "lab8", blind=True)
        assert res.status == "recorded" and res.score == 0
    assert "q9" not in lab.question("q8").answers and lab.question("q8").answers == ("inlining_interval",)


def test_the_notebook_summary_says_the_grader_judges_the_recorded_choices():
    """Review 3: the summary said "lab8: 16/17 points" where the grader gives 17/17 (q6 recorded)."""
    report = get_lab("lab8").grade(SOLUTION, blind=True)
    head = report.text.splitlines()[0]
    assert head.startswith("lab8: 15.5/17 points here") and "q6, q9 (1.5 points) are recorded choices" in head
    assert "only the grader judges" in head
    assert get_lab("lab8").grade(SOLUTION).text.splitlines()[0] == "lab8: 17/17 points"


#: every wrong-answer path of every question: (question, answers, what the feedback must name, more texts of
#: the answer it must not state); the answers' own texts (tests/grading_helpers.answer_forms) are hidden too
def _smooth(change) -> str:
    return lab8.SMOOTH_TEMPLATE.replace("BODY", change(BODY))


LAP, LOAD = SOLUTION["lap_box"], SOLUTION["load_box"]
STORED, INLINED = lab8.evaluations_reference()
ONE_READ = "%n = stencil.access %a[OFFSET] : !stencil.temp<?x?xf64>\n      stencil.return %n : f64"
WRONG = [
    ("q1", (_smooth(lambda b: b.replace("%a[0, 1]", "%a[1, 1]")),),
     ("the access at offset [1, 1] reads a point the operator does not use",), ("0.25", "[0, 1]")),
    ("q1", (_smooth(lambda b: b.replace("0.25", "0.2")),), ("a weight or an operation is off", "out at the point"),
     ("0.25",)),
    ("q1", (_smooth(lambda b: b.replace("arith.addf %n, %s", "arith.addf %n %s")),),
     ("the program does not read: line 11, column 27",), ("0.25",)),
    ("q1", (_smooth(lambda b: b).replace("stencil.store %v to %fo", "stencil.store %v to %fi"),),
     ("keep the template: one apply, stored into out",), ()),
    ("q1", (lab8.SMOOTH_TEMPLATE.replace("BODY", ONE_READ.replace("OFFSET", "-5, 0")),),
     ("the reference interpreter cannot run it", "outside its bounds"), ("0.25", "[0, 1]")),
    ("q2", (((-1, -1, 0), (64, 64, 15)), LOAD), ("lap_box: the upper bound [64, 64, 15] is inclusive",), ()),
    ("q2", (((0, 0, 0), (64, 64, 16)), LOAD), ("lap_box is the stored box",), ()),
    ("q2", (LAP, ((-1, -1, 0), (65, 65, 16))), ("load_box is lap's box",), ()),
    ("q2", (LAP, ((-4, -4, 0), (68, 68, 16))), ("load_box is the field's bounds",), ()),
    ("q2", (LAP, ((-2, -3, 0), (66, 66, 16))), ("load_box is wrong along j",), ()),
    ("q3", (26,), ("each time a Laplacian reads it",), ("13",)),
    ("q3", (25,), ("without res's own read of u",), ("13",)),
    ("q3", (5,), ("one Laplacian's pattern",), ("13",)),
    ("q3", (3,), ("fewer than one Laplacian's pattern",), ("13",)),
    ("q3", (17,), ("u_distinct = 17", "count each once"), ("13", "|di| + |dj| <= 2")),
    ("q4", ((64 * 64 * 16, INLINED),), ("stored: 65536 Laplacians is one per output point",
                                        "reads a value of lap that was never computed"), (str(STORED),)),
    ("q4", ((100, INLINED),), ("stored: with 100 Laplacians, some value of lap that res reads is never computed",),
     (str(STORED), "lap's box", "question 2")),
    ("q4", ((10 ** 7, INLINED),), ("stored: 10000000 Laplacians compute values of lap that res never reads",),
     (str(STORED), "lap's box")),
    ("q4", ((STORED, STORED),), ("inlined: 69696 Laplacians is the stored count", "computed by each of them"),
     (str(INLINED),)),
    ("q4", ((STORED, 100),), ("inlined: with 100 Laplacians, some point of res is missing a Laplacian",),
     (str(INLINED), "per access", "output point")),
    ("q4", ((STORED, 10 ** 8),), ("inlined: 100000000 Laplacians is more than the points of res evaluate",),
     (str(INLINED), "per access")),
    ("q4", ((1000, 1000),), ("stored: with 1000 Laplacians", "inlined: with 1000 Laplacians"),
     (str(STORED), str(INLINED), "lap's box", "per access", "question 2")),
    ("q5", ((-2, 0, 0),), ("indexed from 0",), ("(2, 4, 0)",)),
    ("q5", ((6, 4, 0),), ("moves down",), ("(2, 4, 0)",)),
    ("q5", ((2, 4, 4),), ("along k the field's bounds start at 0",), ("(2, 4, 0)",)),
    ("q5", ((3, 3, 0),), ("memref_index = [3, 3, 0]",), ("(2, 4, 0)", "[2, 4, 0]")),
    ("q6", ("a",), ("kernel_start = 'a' is not it", "inline form"), ("gpu.launch_func", "'b'")),
    ("q6", ("c",), ("defines the kernel in the gpu.module",), ("gpu.launch_func", "'b'")),
    ("q6", ("d",), ("the loop before the mapping",), ("gpu.launch_func", "'b'")),
    ("q7", ("{ u[i, j, k] : 32 <= i < 33 and 0 <= j < 64 and 0 <= k < 16 }",),
     ("rank 0 cannot compute out at [31, 0, 0]", "a point of u past the cut that your set leaves out"),
     ("33", "u[32, -1", "2 rows", "1 + 1")),
    ("q7", ("{ u[i, j, k] : 32 <= i < 34 and 0 <= j < 64 and 0 <= k < 16 }",),
     ("rank 0 cannot compute out at [31, 0, 0]",), ("u[32, -1", "-1 <= j", "j = -1")),
    ("q7", ("{ u[i, j, k] : 32 <= i < 34 and -1 <= j < 65 and 0 <= k < 16 }",),
     ("your set holds u[33, -1, 0], which no point of rank 0's part of out depends on",), ()),
    ("q7", ("{ u[i, j, k] : 30 <= i < 34 and -1 <= j < 65 and 0 <= k < 16 }",),
     ("your set holds u[30, -1, 0], a row rank 0 owns itself (i < 32)",), ()),
    ("q7", ("{ u[i, j, k] : i >= 32 }",), ("your set is infinite",), ()),
    ("q7", ("{ u[i, j, k] : 32 <= i < 34 and j = 100 and 0 <= k < 16 }",),
     ("rank 0 cannot compute out at [31, 0, 0]", "your set holds u[32, 100, 0], which no point"), ()),
    ("q7", ("{ u[i, j] : 32 <= i < 34 }",), ("not a set of points u[i, j, k]",), ()),
    ("q7", ("{ u[i, j, k] : 32 <= i < }",), ("isl cannot read rank0_needs",), ()),
    ("q8", ((0.5, 0.6),), ("is not the 95 % interval of the recorded runs",), ("0.89", "1.75")),
    ("q8", ((1 / 1.75, 1 / 0.89),), ("median(inlined) / median(plain)",), ("0.89", "1.75")),
    ("q8", ((1.2, 0.9),), ("its low end is above its high end",), ("0.89", "1.75")),
    ("q8", ("1-2",), ("not two numbers (low, high)",), ()),
    ("q9", ("faster",), ("the medians alone do not decide",), ("no measurable difference", "do not tell")),
    ("q9", ("slower",), ("the medians say otherwise",), ("no measurable difference", "do not tell")),
]


test_each_wrong_answer_names_its_mistake_and_hides_the_answer = wrong_answer_table("lab8", SOLUTION, WRONG)
