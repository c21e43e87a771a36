"""The grading core: answer readers (what is normalised, what is refused with feedback), verdicts and their
combination, the comparisons checks are built from, the one-call check of a notebook, and the guide's
worked example (docs/grading.md), which must run as written."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import islpy as isl
import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

from polylab.frontend import parse
from polylab.grading import AnswerError, Question, Verdict, answers as A, check, combine, get_lab, partial, right, wrong
from polylab.grading import checks
from polylab.grading.lab import Lab
from polylab.schedule import parse_schedule

ROOT = Path(__file__).resolve().parents[1]


# -- readers -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [2, 2.0, sympy.Integer(2), np.int64(2), Fraction(4, 2)])
def test_integer_accepts_every_spelling_of_an_integer(value):
    assert A.integer(value) == 2


@pytest.mark.parametrize("value,words", [("2", "text"), (True, "not a number"), (2.5, "not an integer"),
                                         ([2], "not an integer"), (None, "not an integer")])
def test_integer_refuses_with_feedback(value, words):
    with pytest.raises(AnswerError) as e:
        A.integer(value, "planes")
    assert words in e.value.message and "planes" in e.value.message


@pytest.mark.parametrize("value", [(1, 0), [1, 0], sympy.Matrix([1, 0]), sympy.Matrix([[1, 0]]), np.array([1, 0])])
def test_vector_normalises_containers(value):
    assert A.vector(value, 2) == (1, 0)


def test_vector_refusals_name_the_problem():
    with pytest.raises(AnswerError, match="text"):
        A.vector("(1, 0)")
    with pytest.raises(AnswerError, match="has 3 entries, not 2"):
        A.vector((1, 0, 0), 2)
    with pytest.raises(AnswerError, match="entry 2 of the vector"):
        A.vector((1, "x"))
    with pytest.raises(AnswerError, match="not a vector"):
        A.vector(5)


@given(st.sets(st.tuples(st.integers(-5, 5), st.integers(-5, 5)), max_size=6), st.sampled_from(["set", "list", "tuple"]))
def test_vector_set_is_the_same_set_however_written(vectors, container):
    written = {"set": set, "list": list, "tuple": tuple}[container]([list(v) for v in vectors] if container != "set"
                                                                     else vectors)
    if container != "set" and len(vectors) == 1:
        written = [list(next(iter(vectors)))]
    assert A.vector_set(written, 2) == frozenset(vectors)


def test_vector_set_refuses_one_vector_and_text():
    with pytest.raises(AnswerError, match="one vector, not a set"):
        A.vector_set((1, 0))
    with pytest.raises(AnswerError, match="text"):
        A.vector_set("{(1, 0)}")
    with pytest.raises(AnswerError, match="dictionary"):
        A.vector_set({(1, 0): 1})


def test_names_choices_text():
    assert A.choice(" J ", ("i", "j")) == "j"
    with pytest.raises(AnswerError, match="not one of"):
        A.choice("k", ("i", "j"))
    assert A.name_set(("i",), ("i", "j")) == {"i"}
    with pytest.raises(AnswerError, match="single text"):
        A.name_set("i")
    assert A.text("  a \n b ") == "a b"


def test_matrix_reader_and_shape():
    assert A.matrix(sympy.Matrix([[1, 0], [0, 1]])) == ((1, 0), (0, 1))
    assert A.matrix(np.array([[1, 2]]), (1, 2)) == ((1, 2),)
    with pytest.raises(AnswerError, match="is 1 x 2, not 2 x 2"):
        A.matrix([[1, 0]], (2, 2))
    with pytest.raises(AnswerError, match="one row, not a matrix"):
        A.matrix([1, 0])
    with pytest.raises(AnswerError, match="different lengths"):
        A.matrix([[1], [1, 2]])


def test_c_text_is_compared_as_c():
    assert A.c_expression("x[i+1][j][k]") == A.c_expression("x[(i + 1)][j][k]") == "x[i + 1][j][k]"
    with pytest.raises(AnswerError, match="not a C expression"):
        A.c_expression("x[[i]")
    loops = A.c_statements("for(i=0;i<N;i++){a[i]=0;}")
    assert loops == A.c_statements("for (i = 0; i < N; i++)\n  a[i] = 0;".replace("a[i] = 0;", "{ a[i] = 0; }"))
    with pytest.raises(AnswerError, match="not valid C"):
        A.c_statements("for (i = 0; i < N; i++ { }")


def test_isl_readers_compare_as_sets():
    s = A.isl_set("{ [i] : 0 <= i < 4 }")
    assert checks.compare_isl(A.isl_set("{ [i] : i >= 0 and i <= 3 }"), s).correct
    v = checks.compare_isl(A.isl_set("{ [i] : 0 <= i <= 4 }"), s, what="the domain")
    assert "the domain contains { [4] }, which it should not" in v.feedback[0]
    v = checks.compare_isl(A.isl_set("{ [i] : 1 <= i <= 3 }"), s, what="the domain")
    assert "the domain lacks { [0] }" in v.feedback[0]
    with pytest.raises(AnswerError, match="isl cannot read"):
        A.isl_set("{ [i] : i < }")
    m = A.isl_union_map("{ S0[i] -> [i]; S1[i] -> [i + 1] }")
    assert isinstance(m, isl.UnionMap)


# -- verdicts --------------------------------------------------------------------------------------------------

def test_combine_keeps_every_failure_and_weights():
    v = combine([("a", right()), ("b", wrong("b is off")), ("c", partial(1, 2, "c half"))], weights=[1, 1, 2])
    assert v.fraction == Fraction(1, 2)
    assert v.feedback == ("b: b is off", "c: c half")
    with pytest.raises(ValueError):
        Verdict(Fraction(3, 2))


def test_part_turns_a_malformed_part_into_a_wrong_part():
    v = checks.part(lambda x: right() if A.integer(x) == 2 else wrong("no"), "2")
    assert v.fraction == 0 and "text" in v.feedback[0]


@given(st.sets(st.integers(0, 9), max_size=6), st.sets(st.integers(0, 9), max_size=6))
def test_compare_sets_credit_is_bounded_and_exact_only_when_equal(given_, expected):
    v = checks.compare_sets(frozenset(given_), frozenset(expected))
    assert 0 <= v.fraction <= 1
    assert (v.fraction == 1) == (given_ == expected)
    assert all(str(x) in "\n".join(v.feedback) for x in given_ - expected)


def test_compare_matrices_names_each_entry():
    v = checks.compare_matrices(((1, 0), (1, 1)), ((1, 0), (0, 1)), name="F", rows=("i", "j - 1"), cols=("i", "j"))
    assert v.fraction == Fraction(1, 2)                        # three right, one wrong: a wrong entry cancels one
    assert v.feedback == ("F[2][1] (row 2: j - 1; column 1: i) is 1, which is wrong",)
    assert checks.compare_matrices(((0, 0), (0, 0)), ((1, 0), (0, 1))).fraction == 0   # the zero matrix: nothing
    v = checks.compare_matrices(((1, 2),), ((1, 3),), name="c", reveal=True)
    assert v.feedback == ("c[2] is 2, expected 3",)


SWEEP = "double a[N][N];\nfor (i = 1; i < N; i++)\n  for (j = 1; j < N; j++)\n    a[i][j] = a[i - 1][j] + a[i][j - 1];\n"


def test_legal_schedule_names_the_dependence_and_draws_it():
    scop = parse(SWEEP).scop
    v = checks.legal_schedule(parse_schedule(scop, "{ S0[i, j] -> [i - j, i] }"))
    assert v.fraction == 0 and "flow dependence S0 -> S0 on a" in v.feedback[0] and v.pictures
    assert checks.legal_schedule(parse_schedule(scop, "wavefront")).correct


@pytest.mark.slow
def test_same_outputs_and_verified_variant_name_the_first_changed_element():
    from polylab.toolchain import c_compiler

    if c_compiler() is None:
        pytest.skip("no C compiler here")
    ref = parse(SWEEP).scop
    wrong_order = parse(SWEEP.replace("a[i][j - 1]", "a[i][j + 1]").replace("j < N;", "j < N - 1;")).scop
    v = checks.same_outputs(ref, wrong_order, params={"N": 6})
    assert v.fraction == 0 and re.search(r"the first element that differs is a\[\d+\]\[\d+\]", v.feedback[0])
    interchanged = ("double a[N][N];\nfor (j = 1; j < N; j++)\n  for (i = 1; i < N; i++)\n"
                    "    a[i][j] = a[i - 1][j] + a[i][j - 1];\n")
    assert checks.same_outputs(ref, parse(interchanged).scop, params={"N": 6}).correct  # a legal hand interchange
    assert checks.same_outputs(ref, parse(SWEEP).scop, params={"N": 6}).correct
    assert checks.verified_variant(ref, parse_schedule(ref, "wavefront"), params={"N": 8}).correct
    bad = checks.verified_variant(ref, parse_schedule(ref, "{ S0[i, j] -> [-i, j] }"), params={"N": 8})
    assert bad.fraction == 0 and "illegal" in bad.feedback[0]


# -- the notebook's check call ------------------------------------------------------------------------------

def test_check_call_forms_and_never_raising():
    ns = {"sweep2d_distances": {(1, 0), (0, 1)}}
    assert check("lab2", "q1", namespace=ns).correct
    assert check("lab2.q1", {(1, 0), (0, 1)}).correct
    globals()["sweep2d_distances"] = {(1, 0)}  # check() reads the caller's globals, as a notebook's
    try:
        assert check("lab2", "q1").status == "partial"
    finally:
        del globals()["sweep2d_distances"]
    many = check("lab2", "q1", "q2", namespace=ns)
    assert [r.question for r in many.results] == ["q1", "q2"] and many.results[1].status == "missing"
    assert check("lab2", namespace=ns).max_score == get_lab("lab2").max_score == sum(q.points for q in
                                                                                   get_lab("lab2").questions)
    for bad in (check("nolab", "q1"), check("lab2", "q99"), check("lab2.q1", 1, 2), check(3)):
        assert bad.status == "error" and bad.feedback


def test_a_bug_in_a_check_is_reported_not_raised():
    def broken(x):
        raise KeyError("oops")

    lab = Lab("labx", "x", "labx.ipynb", (Question("q1", 1, ("x",), broken),))
    r = lab.grade({"x": 1}).results[0]
    assert r.status == "error" and "internal error in the check" in r.feedback[0] and "KeyError" in r.feedback[0]
    r = Lab("laby", "y", "y.ipynb", (Question("q1", 1, ("x",), lambda x: 42),)).grade({"x": 1}).results[0]
    assert r.status == "error" and "not a Verdict" in r.feedback[0]


def test_result_displays_text_and_html():
    r = check("lab2.q1", {(1, 0), (0, -1)})
    bundle = r._repr_mimebundle_()
    assert "lab2.q1" in bundle["text/plain"] and "(0, -1)" in bundle["text/html"] and "0 / 2" in bundle["text/html"]
    report = check("lab2", namespace={})
    html = report._repr_mimebundle_()["text/html"]
    assert report.head.startswith(f"lab2: 0/{get_lab('lab2').max_score:g} points") and report.head in html


def test_question_declarations_are_validated():
    with pytest.raises(ValueError):
        Question("q 1", 1, ("x",), lambda x: right())
    with pytest.raises(ValueError):
        Question("q1", 0, ("x",), lambda x: right())
    with pytest.raises(ValueError):
        Question("q1", 1, ("x", "y"), lambda x: right(), cases=((),))  # type: ignore[arg-type]


def test_the_guides_worked_example_runs_as_written():
    doc = (ROOT / "docs" / "grading.md").read_text()
    src = next(b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if 'name="lab9"' in b)
    ns: dict = {}
    exec(compile(src, "docs/grading.md", "exec"), ns)
    lab = ns["LAB"]
    good = {"F": [[1, 0], [0, 1]], "c": (-1, 1), "distances": {(1, 1), (1, -1)},
            "wave": "{ S0[i, j] -> [2i + j, j] }", "carried_level": ns["carried_level_reference"]}
    assert lab.grade(good).score == lab.max_score
    bad = lab.grade({**good, "F": "[[1, 0], [0, 1]]", "c": (1, 1), "wave": "{ S0[i, j] -> [i + j, j] }"})
    text = bad.text
    assert "F: F is the text" in text and "c: c[1] (column 1: i - 1) is 1, which is wrong" in text
    assert "legality: the schedule is illegal: flow dependence S0 -> S0 on a" in text
    shown = re.search(r"```\n(\u2718 lab9\.q2.*?)\n```", doc, re.S).group(1)
    assert lab.question("q2").grade({"distances": {(1, 1), (-1, 1)}}, "lab9").text == shown
    hidden_doc = next(b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "HIDDEN =" in b)
    hns: dict = {}
    exec(hidden_doc, hns)
    r = lab.question("q4").grade({"carried_level": ns["carried_level_reference"]}, "lab9", hns["HIDDEN"]["q4"])
    assert r.correct and r.hidden_cases == 2


def test_a_notebook_check_of_a_function_question_shows_the_score_of_the_public_cases_only():
    """Issue 27: the notebook showed 2/2 where the grader, with its hidden cases, gave 1.67. A notebook's
    check says the score is the public cases' (text and HTML); the batch grader's result does not."""
    from polylab import render
    from polylab.grading import check, get_lab
    r = check("lab4.q6", lambda n: 3 * n - 8)
    assert r.provisional and "(2/2 on the public cases)" in r.text and "on the public cases" in render.html(r)
    graded = get_lab("lab4").question("q6").grade({"sweep_waves": lambda n: 3 * n - 8}, "lab4")
    assert not graded.provisional and "on the public cases" not in graded.text
    assert not check("lab4.q7", 159999).provisional
