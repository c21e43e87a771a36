"""What a check concludes: :class:`Verdict` (a fraction of the points and feedback), and what a student or
an instructor sees: :class:`Result` (one question, in points) and :class:`Report` (a whole lab).

A check is a pure function from the student's answer to a :class:`Verdict`:

* ``fraction`` is a rational number in ``[0, 1]``: the share of the question's points the answer earns;
* ``feedback`` holds one line per specific error (the entry of ``F`` that differs, the dependence a
  schedule breaks, the first output element a transformation changes), never only "wrong";
* ``pictures`` are descriptions of pictures (a violating pair on the iteration space), drawn only when a
  notebook displays the result (:mod:`polylab.grading.display`), never by the check itself.

A :class:`Result` is a verdict scaled to the question's points: ``score = points * fraction``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Literal, Sequence

from polylab import render
from polylab.schedule import Schedule, Violation

Status = Literal["correct", "partial", "wrong", "missing", "error", "not reached", "recorded"]


@dataclass(frozen=True)
class ViolationPicture:
    """The iteration space of the violated dependence's sink statement, points coloured by their time under
    ``schedule``, with the violating pair ``violation.source_instance -> violation.sink_instance`` in red."""

    schedule: Schedule
    violation: Violation
    caption: str = ""


#: everything a verdict can ask the notebook to draw
Picture = ViolationPicture


@dataclass(frozen=True)
class Verdict:
    """A check's conclusion on one answer: ``fraction`` of the points (in ``[0, 1]``) and the feedback."""

    fraction: Fraction
    feedback: tuple[str, ...] = ()
    pictures: tuple[Picture, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.fraction <= 1:
            raise ValueError(f"a verdict's fraction is in [0, 1], not {self.fraction}")

    @property
    def correct(self) -> bool:
        return self.fraction == 1


def right(*feedback: str) -> Verdict:
    """Full points (``feedback`` may say why the answer is right, e.g. what it means)."""
    return Verdict(Fraction(1), tuple(feedback))


def wrong(*feedback: str, pictures: Sequence[Picture] = ()) -> Verdict:
    """No points; ``feedback`` names each specific error."""
    return Verdict(Fraction(0), tuple(feedback), tuple(pictures))


def partial(earned: int | Fraction, out_of: int | Fraction, *feedback: str,
            pictures: Sequence[Picture] = ()) -> Verdict:
    """``earned / out_of`` of the points, clipped to ``[0, 1]`` (``out_of <= 0`` earns everything)."""
    if out_of <= 0:
        return Verdict(Fraction(1), tuple(feedback), tuple(pictures))
    f = Fraction(earned) / Fraction(out_of)
    return Verdict(min(Fraction(1), max(Fraction(0), f)), tuple(feedback), tuple(pictures))


def combine(parts: Iterable[tuple[str, Verdict]], weights: Sequence[int | Fraction] | None = None) -> Verdict:
    """One verdict for a question with several parts: the weighted mean of the fractions (equal weights by
    default) and the feedback of **every** part that is not fully right, each line prefixed with the
    part's label (so a combined check reports every failure, not the first)."""
    parts = list(parts)
    if not parts:
        return right()
    ws = [Fraction(w) for w in (weights if weights is not None else [1] * len(parts))]
    if len(ws) != len(parts) or sum(ws) <= 0:
        raise ValueError("one positive weight per part")
    fraction = sum((w * v.fraction for w, (_, v) in zip(ws, parts)), Fraction(0)) / sum(ws)
    lines: list[str] = []
    pictures: list[Picture] = []
    for label, v in parts:
        if v.correct:
            continue
        lines.extend(f"{label}: {line}" if label else line for line in v.feedback or ("not right",))
        pictures.extend(v.pictures)
    return Verdict(fraction, tuple(lines), tuple(pictures))


@dataclass(frozen=True)
class Result:
    """One graded question: ``score`` of ``max`` points, the status and the feedback lines.

    ``status`` is ``correct``, ``partial``, ``wrong``, ``missing`` (the answer's variable is not defined),
    ``error`` (the check itself failed: a bug in polylab, said so), ``not reached`` (a submission's
    kernel stopped before the answer was defined) or ``recorded`` (a notebook's check of a multiple-choice
    answer: well-formed, judged only by the grader, so no score is shown). ``hidden_cases`` counts the
    instructor's hidden cases that took part (0 in a student's notebook). ``provisional``: a notebook's
    check of a function question, judged on the public cases only; the grader's hidden cases may lower the
    score, so it is shown as the score on the public cases, not as the grade.
    """

    lab: str
    question: str
    title: str
    score: float
    max: float
    status: Status
    feedback: tuple[str, ...] = ()
    pictures: tuple[Picture, ...] = field(default=(), repr=False, compare=False)
    hidden_cases: int = 0
    provisional: bool = False

    @property
    def name(self) -> str:
        return f"{self.lab}.{self.question}"

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    @property
    def text(self) -> str:
        """Plain text: ``✔ lab1.q1 (2/2): ...`` and one indented line per feedback line."""
        mark = {"correct": "\u2714", "partial": "\u25d1", "recorded": "\u270e"}.get(self.status, "\u2718")
        score = "?" if self.status == "recorded" else _num(self.score)
        on = " on the public cases" if self.provisional else ""
        head = f"{mark} {self.name} {self.title + ' ' if self.title else ''}({score}/{_num(self.max)}{on})"
        head += "" if self.status in ("correct", "partial", "wrong") else f": {self.status}"
        return "\n".join([head, *("    " + ln for fb in self.feedback for ln in fb.splitlines())])

    def to_json(self) -> dict:
        """``{"name", "score", "max", "status", "feedback", "hidden_cases"}`` (feedback as one text)."""
        return {"name": self.name, "score": self.score, "max": self.max, "status": self.status,
                "feedback": "\n".join(self.feedback), "hidden_cases": self.hidden_cases}

    def __str__(self) -> str:
        return self.text

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """text/plain and the HTML that :mod:`polylab.grading.display` registers with :mod:`polylab.render`
        (feedback list and pictures)."""
        return {"text/plain": self.text, "text/html": render.html(self)}


@dataclass(frozen=True)
class Report:
    """Several graded questions (a whole lab, or the questions one check cell asks about); every result
    is listed, failures and successes alike."""

    lab: str
    results: tuple[Result, ...]

    @property
    def score(self) -> float:
        return round(sum(r.score for r in self.results), 2)

    @property
    def max_score(self) -> float:
        return round(sum(r.max for r in self.results), 2)

    @property
    def head(self) -> str:
        """``lab1: 7/10 points``; where a notebook's check only recorded some choices, it says that the grader
        judges them (their points are not in the score shown, which is therefore not the grade)."""
        head = f"{self.lab}: {_num(self.score)}/{_num(self.max_score)} points"
        recorded = [r for r in self.results if r.status == "recorded"]
        if not recorded:
            return head
        points = sum(r.max for r in recorded)
        which = ", ".join(r.question for r in recorded)
        return (head + f" here; {which} ({_num(points)} point{'' if points == 1 else 's'}) "
                + ("is a recorded choice" if len(recorded) == 1 else "are recorded choices")
                + " that only the grader judges")

    @property
    def text(self) -> str:
        return "\n".join([self.head, *(r.text for r in self.results)])

    def to_json(self) -> dict:
        return {"lab": self.lab, "score": self.score, "max_score": self.max_score,
                "questions": [r.to_json() for r in self.results]}

    def __str__(self) -> str:
        return self.text

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": self.text, "text/html": render.html(self)}


def _num(x: float) -> str:
    return f"{x:g}"


__all__ = ["Picture", "Report", "Result", "Status", "Verdict", "ViolationPicture", "combine", "partial", "right",
           "wrong"]
