"""Helpers of the lab-check tests (tests/test_grading_lab*.py)."""

from __future__ import annotations

from polylab.grading import check, get_lab


def grade(name: str, *answer):
    """``(result, feedback text)`` of ``check("labN.qK", *answer)``, with the grader's verdict for a choice
    (a notebook's check only says a choice is recorded: tests/test_course_seal.py)."""
    lab, _, q = name.partition(".")
    question = get_lab(lab).question(q)
    if question.kind == "choice" and len(answer) == len(question.answers):
        r = question.grade(dict(zip(question.answers, answer)), lab)
    else:
        r = check(name, *answer)
    return r, "\n".join(r.feedback)


def full_marks(lab: str, solution: dict) -> None:
    report = get_lab(lab).grade(solution)
    assert [r.status for r in report.results] == ["correct"] * len(report.results), report.text
    assert report.score == report.max_score == get_lab(lab).max_score > 0


def hides(feedback: str, *answers: str) -> bool:
    """True when none of the texts of the expected answer (``answers``) appears in ``feedback``: wrong-answer
    feedback says what a mistake breaks, never the answer itself."""
    squeezed = "".join(feedback.split())
    return not any(a in feedback or "".join(a.split()) in squeezed for a in answers)


def answer_forms(solution: dict, names: tuple[str, ...]) -> tuple[str, ...]:
    """The texts a feedback line could give the answers ``names`` of ``solution`` away with: each value
    written ``name = value``, and the value's own text when it is long enough to be specific (a set, a
    matrix, isl text, code; a bare small number appears in any feedback and is named by the caller in
    context, such as ``"2 planes"``)."""
    forms = []
    for name in names:
        value = solution[name]
        text = value if isinstance(value, str) else repr(value)
        forms.append(f"{name} = {text}")
        if len(text) >= 5 and not callable(value):
            forms.append(text)
    return tuple(forms)


def names_the_mistake(name: str, answers: tuple, words: tuple[str, ...], hidden: tuple[str, ...]):
    """Grade a wrong answer of ``name`` (``"labN.qK"``): not full marks, every text of ``words`` (what is
    specific to the mistake: the pair it breaks, the point, the loop...) in the feedback, none of ``hidden``
    (the right answer's texts). Returns ``(result, feedback)``."""
    r, fb = grade(name, *answers)
    assert not r.correct and r.score < r.max, f"{name} gave full marks to {answers!r}"
    absent = [w for w in words if w not in fb]
    assert not absent, f"{name}: {absent} not in the feedback {fb!r}"
    assert hides(fb, *hidden), f"{name}: the feedback states the answer: {fb!r}"
    return r, fb


def wrong_answer_table(lab: str, solution: dict, rows: list, always_hidden: tuple[str, ...] = ()):
    """The test of a lab's table of wrong answers (``WRONG`` in ``tests/test_grading_labN.py``): one case per
    row ``(question, answers, words, hidden)`` (or a ``pytest.param`` of one), checked by
    :func:`names_the_mistake` with the answer's texts hidden (:func:`answer_forms` of the question's answers,
    the row's ``hidden`` and ``always_hidden``). Assign it to a ``test_...`` name of the test module."""
    import pytest

    ids = [f"{(r.values if hasattr(r, 'values') else r)[0]}-{k}" for k, r in enumerate(rows)]

    @pytest.mark.parametrize("question, answers, words, hidden", rows, ids=ids)
    def test(question, answers, words, hidden):
        names = get_lab(lab).question(question).answers
        names_the_mistake(f"{lab}.{question}", answers, words,
                          answer_forms(solution, names) + tuple(hidden) + tuple(always_hidden))

    return test


def recorded_runs(notebook: str) -> dict:
    """The ``RECORDED`` runs a solved lab shows (its cell that starts with ``RECORDED = {``), to compare with the
    copy its check reads."""
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[1] / "solutions" / notebook).read_text(encoding="utf-8"))
    cell = next("".join(c["source"]) for c in nb["cells"] if "".join(c["source"]).startswith("RECORDED = {"))
    shown: dict = {}
    exec(cell, {}, shown)  # the cell is a literal dictionary of the solved notebook, written by the course
    return shown["RECORDED"]


def prints_no_verdict(baseline, variant) -> bool:
    """True when printing ``speedup_interval(baseline, variant)`` (what a timing question has the student do
    on the recorded runs) shows the ratio and its interval but none of the verdicts the question asks for:
    the verdict is the student's reading of where 1 lies."""
    from polylab.experiment import speedup_interval
    from polylab.grading.checks import VERDICTS

    shown = str(speedup_interval(baseline, variant))
    return "interval" in shown and hides(shown, *VERDICTS)
