"""Helpers of the lab-check tests (tests/test_grading_lab*.py)."""

from __future__ import annotations

from polylab.grading import check, get_lab


def grade(name: str, *answer):
    """``(result, feedback text)`` of ``check("labN.qK", *answer)``."""
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
