"""Every declared lab (discovered: polylab/grading/labs/lab*.py): nothing answered scores 0 and says what to
define, placeholders count as missing, and each lab has its own test file ``tests/test_grading_<lab>.py``
with its solution (full marks) and every wrong-answer path of every question."""

from __future__ import annotations

from pathlib import Path

import pytest

from polylab.grading import get_lab, lab_names

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("lab", lab_names())
def test_every_lab_has_its_test_file(lab):
    assert (TESTS / f"test_grading_{lab}.py").is_file(), f"write tests/test_grading_{lab}.py (see test_grading_lab1.py)"


@pytest.mark.parametrize("lab", lab_names())
def test_every_lab_has_at_least_five_questions(lab):
    assert len(get_lab(lab).questions) >= 5


@pytest.mark.parametrize("lab", lab_names())
def test_nothing_answered_scores_zero_and_says_what_to_define(lab):
    report = get_lab(lab).grade({})
    assert report.score == 0
    for r in report.results:
        assert r.status == "missing"
        q = get_lab(lab).question(r.question)
        assert all(name in r.feedback[0] for name in q.answers)


@pytest.mark.parametrize("lab", lab_names())
def test_unanswered_placeholders_are_missing(lab):
    for q in get_lab(lab).questions:
        assert q.grade({a: None for a in q.answers}, lab).status == "missing"
        assert q.grade({a: ... for a in q.answers}, lab).status == "missing"
