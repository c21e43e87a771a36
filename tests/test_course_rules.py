"""The course's rules (issue 27, docs/course.md), checked on every lab they cover: each lab has a
derivation and a construction, multiple choice is at most 10 % of its points, a missing answer's example is
not the answer, every lab states its estimated time (60-90 minutes), and no lab claims what is not true.

Lab 8 (the stencil lab) is added to ``RULED`` by its owner when it follows the rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from polylab.grading import get_lab

ROOT = Path(__file__).resolve().parents[1]
RULED = ("lab1", "lab2", "lab3", "lab4", "lab5", "lab6", "lab7", "lab8")


def _notebook(lab: str) -> dict:
    return json.loads((ROOT / "solutions" / get_lab(lab).notebook).read_text(encoding="utf-8"))


@pytest.mark.parametrize("lab", RULED)
def test_each_lab_has_a_derivation_and_a_construction(lab):
    kinds = {q.kind for q in get_lab(lab).questions}
    assert {"derivation", "construction"} <= kinds, f"{lab}: kinds {kinds}"


@pytest.mark.parametrize("lab", RULED)
def test_multiple_choice_is_at_most_ten_percent(lab):
    lab_ = get_lab(lab)
    choice = sum(q.points for q in lab_.questions if q.kind == "choice")
    assert choice <= 0.1 * lab_.max_score, f"{lab}: {choice} of {lab_.max_score} points are multiple choice"


@pytest.mark.parametrize("lab", RULED)
def test_each_lab_states_its_estimated_time(lab):
    first = "".join(_notebook(lab)["cells"][0]["source"])
    m = re.search(r"Estimated time: (\d+) minutes", first)
    assert m and 60 <= int(m.group(1)) <= 90, first[-400:]


@pytest.mark.parametrize("lab", RULED)
def test_no_lab_claims_that_answers_are_printed_nowhere_unless_gated(lab):
    text = json.dumps(_notebook(lab))
    assert "Most answers are not printed anywhere" not in text
    assert "%%see_why" in text, "the see-why parts open after the answer"


@pytest.mark.parametrize("lab", RULED)
def test_a_missing_answers_example_is_not_the_answer(lab):
    """The example in 'define X, e.g. ...' has the answer's form; graded as an answer it is not right."""
    lab_ = get_lab(lab)
    for q in lab_.questions:
        if q.is_function or not q.example:
            continue
        values = _example_values(q.example, len(q.answers))
        if values is None:
            continue
        r = q.grade(dict(zip(q.answers, values)), lab)
        assert not r.correct, f"{lab}.{q.name}: its example {q.example!r} is the right answer"
        assert r.score == 0 or lab not in EXAMPLES_EARN_NOTHING, \
            f"{lab}.{q.name}: its example {q.example!r} earns {r.score} (it shows the form with a value worth nothing)"


#: the labs whose missing-answer examples are checked to earn nothing at all (issue 27: an example that earns
#: partial credit is a copyable part)
EXAMPLES_EARN_NOTHING = ("lab1", "lab6", "lab7", "lab8")


def _example_values(example: str, count: int):
    """The Python values of an example written ``A and B`` or ``x = A; y = B`` (None when it is only a
    form, such as ``[[1, 0, 0, 0, 0], ...]``)."""
    import ast

    parts = [p.split("=", 1)[1] if re.match(r"^\s*\w+\s*=", p) else p
             for p in re.split(r" and |; ", example)] if count > 1 else [example]
    if len(parts) != count:
        return None
    try:
        return [ast.literal_eval(p.strip()) for p in parts]
    except (ValueError, SyntaxError):
        return None


def test_the_isl_examples_in_hints_are_valid_isl():
    """A hint's example is isl text isl reads (an example that declares no parameter it uses, say, is not)."""
    import islpy as isl

    from polylab.grading import answers as A

    for reader, parse in ((A.isl_set, isl.Set), (A.isl_map, isl.Map), (A.isl_union_map, isl.UnionMap)):
        with pytest.raises(A.AnswerError) as err:
            reader("{ [i] : i = }")
        example = err.value.hint.split("such as ", 1)[1]
        parse(example)


@pytest.mark.parametrize("lab", RULED)
def test_the_examples_of_isl_answers_are_valid_isl(lab):
    import islpy as isl

    for q in get_lab(lab).questions:
        for value in _example_values(q.example, len(q.answers)) or ():
            if isinstance(value, str) and value.lstrip().startswith(("{", "[")) and "->" in value.split("{")[-1]:
                isl.Map(value) if value.count("{") == 1 and ";" not in value else isl.UnionMap(value)
            elif isinstance(value, str) and value.lstrip().startswith(("{", "[")):
                isl.Set(value)


def _solution_values(lab: str) -> dict:
    """The literal values the solved notebook's answer cells assign (``name = <literal>``), by name."""
    import ast

    values = {}
    for cell in _notebook(lab)["cells"]:
        if "solution" not in cell.get("metadata", {}).get("tags", []):
            continue
        for node in ast.parse("".join(cell["source"])).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                try:
                    values[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return values


@pytest.mark.parametrize("lab", RULED)
def test_a_missing_answers_example_is_no_other_questions_answer(lab):
    """A missing answer's hint is shown before the student answers the questions around it: its example is
    none of the lab's answers (lab 4's q2 once suggested q1's hyperplane)."""
    values = _solution_values(lab)
    assert values, f"{lab}: no literal answer found in the solved notebook"
    for q in get_lab(lab).questions:
        squeezed = "".join((q.example or "").split())
        for name, value in values.items():
            text = value if isinstance(value, str) else repr(value)
            if name not in q.answers and len(text) >= 3:
                assert "".join(text.split()) not in squeezed, f"{lab}.{q.name}'s example gives away {name}"


@pytest.mark.parametrize("lab", RULED)
def test_no_cell_imports_the_graders_modules(lab):
    """No cell of a lab, sealed see-why parts included, imports from ``polylab.grading.labs``: the grader's
    modules compute the answers, so a notebook that imports them points the student one step from reading
    them (review 3). What a lab needs is public: its programs ship in ``polylab/examples`` (lab 8's in
    ``examples/course``), and a see-why part computes what it shows itself."""
    cells = ["".join(c["source"]) for c in _notebook(lab)["cells"]]
    importing = [c.splitlines()[0] for c in cells if re.search(r"\bpolylab\.grading\.labs\b|grading\.labs\s+import", c)]
    assert not importing, f"{lab}: cells that import from polylab.grading.labs: {importing}"
