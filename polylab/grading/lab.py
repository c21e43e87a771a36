"""Labs and questions: a lab declares its questions; a question is a named, weighted check.

    Question("q1", points=2, answers=("sweep2d_distances",), check=check_q1,
             title="distance vectors of the sweep", example="{(2, 0)}")

``check`` is a pure function: it receives the values of the ``answers`` variables (in that order) and
returns a :class:`~polylab.grading.verdict.Verdict`. A question whose answer is a *function* declares its
**public** ``cases`` here, in the lab module (they ship with the package; the notebook's check runs them);
its **hidden** cases are not declared in the lab at all: they live in the instructor's folder
(``instructor/hidden/<lab>.py``, read as data by :func:`polylab.grading.registry.load_hidden`, see there)
and only ``polylab grade --hidden DIR`` adds them. The runner calls the student's function on every case
(public, then hidden) and passes the :class:`Calls` to the check, which compares them with a reference
implementation (:func:`polylab.grading.checks.compare_calls`, which ends its feedback with ``public cases:
3/3; the grader also runs hidden cases`` in a notebook). :meth:`Question.grade` never raises for anything the student did: a missing
variable, a malformed answer (:class:`~polylab.grading.answers.AnswerError`) or an answer the engine refuses
(a :class:`~polylab.errors.PolylabError`) becomes a zero with the reason; a bug in the check itself is
reported as status ``error``.
"""

from __future__ import annotations

import math
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from polylab.errors import PolylabError
from polylab.grading.answers import AnswerError, describe, function
from polylab.grading.verdict import Report, Result, Status, Verdict

#: what a notebook's check says of a well-formed multiple-choice answer (``Question.grade(..., blind=True)``)
RECORDED_NOTE = ("your answer is recorded: it is well-formed (made of the options the question names). A choice "
                 "is judged by the grader only: its report gives the points and, for a wrong choice, what it "
                 "misreads. Trying the options here tells you nothing.")

#: the values a student leaves in a variable that is not answered yet
UNANSWERED = (None, Ellipsis)


@dataclass(frozen=True)
class Case:
    """One input of a function answer: the positional ``args`` and a ``label`` for the feedback."""

    args: tuple[Any, ...]
    label: str = ""

    def call_text(self, function: str) -> str:
        return f"{function}({', '.join(describe(a, 40) for a in self.args)})"


@dataclass(frozen=True)
class Call:
    """What the student's function did on one case: returned ``value``, or raised (``error`` says what).
    ``hidden`` marks an instructor's hidden case (its inputs are not shown in the feedback)."""

    case: Case
    value: Any = None
    error: str | None = None
    hidden: bool = False


@dataclass(frozen=True)
class Calls:
    """The calls of a function answer on all cases, in order (public cases first). ``in_notebook``: made
    by a notebook's check (public cases only), not by the batch grader."""

    function: str
    calls: tuple[Call, ...]
    in_notebook: bool = True

    @property
    def hidden(self) -> int:
        return sum(1 for c in self.calls if c.hidden)


def call_cases(fn: Callable[..., Any], name: str, cases: Sequence[Case], hidden: Sequence[Case] = ()) -> Calls:
    """Call ``fn`` on every case (public, then hidden) and record each value or exception."""
    out = []
    for case, is_hidden in [(c, False) for c in cases] + [(c, True) for c in hidden]:
        try:
            out.append(Call(case, fn(*case.args), None, is_hidden))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # whatever the student's function raises is part of its answer
            out.append(Call(case, None, f"{type(exc).__name__}: {exc}", is_hidden))
    return Calls(name, tuple(out))


#: what a question asks for (the course's rules count them: docs/course.md): ``derivation`` (a set, a
#: relation, constraints or bounds the student derives, checked exactly), ``construction`` (code or a schedule
#: the grader compiles, runs and verifies against the original), ``choice`` (multiple choice, at most 10 % of
#: a lab's points), or ``""`` (a value computed by hand, a function)
KINDS = ("", "derivation", "construction", "choice")


@dataclass(frozen=True)
class Question:
    """A named, weighted check (see the module text). ``points`` > 0; ``answers`` are variable names of
    the student's namespace; ``example`` shows the form of an answer when it is missing (a value of that
    form that is not the answer); ``kind`` is one of :data:`KINDS`."""

    name: str
    points: float
    answers: tuple[str, ...]
    check: Callable[..., Verdict] = field(repr=False)
    title: str = ""
    example: str = ""
    cases: tuple[Case, ...] = ()
    kind: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"question {self.name}: kind {self.kind!r} is not one of {KINDS}")
        if not self.name.isidentifier():
            raise ValueError(f"question name {self.name!r} must be a Python identifier")
        if not (self.points > 0 and math.isfinite(self.points)):
            raise ValueError(f"question {self.name}: points must be positive")
        if not self.answers or not all(a.isidentifier() for a in self.answers):
            raise ValueError(f"question {self.name}: answers must be variable names")
        if self.cases and len(self.answers) != 1:
            raise ValueError(f"question {self.name}: a function question has exactly one answer")

    @property
    def is_function(self) -> bool:
        return bool(self.cases)

    def grade(self, namespace: Mapping[str, Any], lab: str, hidden: Sequence[Case] = (), *,
              blind: bool = False) -> Result:
        """The result of this question for the answers in ``namespace`` (never raises for the student's
        doing). For a function question the namespace holds the function, or the :class:`Calls` the batch
        grader recorded in the student's kernel. ``blind`` (a notebook's check): a *choice* answer that is
        well-formed (one of the options the question names: the check did not refuse it) is only said to be
        recorded, status ``recorded``, whether it is right or not, so that trying the options one after the
        other finds nothing; the grader's report gives the verdict and its feedback."""
        missing = [a for a in self.answers if a not in namespace or _is_unanswered(namespace[a])]
        if missing:
            hint = f", e.g. {self.example}" if self.example else ""
            return self._result(lab, 0.0, "missing",
                                (f"define {' and '.join(missing)} in the cell with # YOUR ANSWER HERE{hint}",))
        values = [namespace[a] for a in self.answers]
        hidden_count, refused = 0, False
        try:
            if self.is_function:
                calls = values[0] if isinstance(values[0], Calls) else None
                if calls is None:
                    calls = call_cases(function(values[0], self.answers[0]), self.answers[0], self.cases, hidden)
                hidden_count = calls.hidden
                values = [calls]
            verdict = self.check(*values)
        except AnswerError as err:
            verdict, refused = Verdict(0, (_line(err),)), True
        except PolylabError as err:  # the engine refused the answer (a recipe that does not parse...)
            verdict, refused = Verdict(0, (f"polylab refused the answer: {err.render()}",)), True
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # a bug in the check, not the student's mistake: say so, grade nothing
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            return self._result(lab, 0.0, "error", (f"internal error in the check ({tb}); this is a bug in "
                                                     "polylab's grading, not in your answer: please report it",))
        if not isinstance(verdict, Verdict):
            return self._result(lab, 0.0, "error", (f"the check returned {type(verdict).__name__}, not a Verdict "
                                                     "(a bug in polylab's grading)",))
        if blind and self.kind == "choice" and not refused:
            return self._result(lab, 0.0, "recorded", (RECORDED_NOTE,))
        score = round(float(self.points * verdict.fraction), 2)
        status: Status = "correct" if verdict.correct else ("partial" if verdict.fraction > 0 else "wrong")
        feedback = verdict.feedback if verdict.feedback or status == "correct" else ("not right",)
        return Result(lab, self.name, self.title, score, float(self.points), status, feedback,
                      verdict.pictures, hidden_count, provisional=blind and self.is_function)

    def _result(self, lab: str, score: float, status: Status, feedback: tuple[str, ...]) -> Result:
        return Result(lab, self.name, self.title, score, float(self.points), status, feedback)

    def not_reached(self, lab: str, reason: str) -> Result:
        """Zero points because the submission stopped before this answer could be read."""
        return self._result(lab, 0.0, "not reached", (reason,))


def _is_unanswered(value: Any) -> bool:
    return any(value is u for u in UNANSWERED)


def _line(err: PolylabError) -> str:
    return err.message + (f" ({err.hint})" if err.hint else "")


@dataclass(frozen=True)
class Lab:
    """A lab: its name (``lab1``, the module's name), title, the solved notebook's file name and its
    questions in order."""

    name: str
    title: str
    notebook: str
    questions: tuple[Question, ...]

    def __post_init__(self) -> None:
        names = [q.name for q in self.questions]
        if len(set(names)) != len(names):
            raise ValueError(f"lab {self.name}: question names repeat: {names}")

    def question(self, name: str) -> Question:
        for q in self.questions:
            if q.name == name:
                return q
        raise PolylabError(f"lab {self.name} has no question {name!r}",
                           hint="its questions are " + ", ".join(q.name for q in self.questions))

    @property
    def max_score(self) -> float:
        return float(sum(q.points for q in self.questions))

    @property
    def answer_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a for q in self.questions for a in q.answers))

    def grade(self, namespace: Mapping[str, Any], questions: Sequence[str] | None = None,
              hidden: Mapping[str, Sequence[Case]] | None = None, *, blind: bool = False) -> Report:
        """Grade every question (or those named) on ``namespace``: every result is reported, failures
        and successes alike (``blind``: see :meth:`Question.grade`)."""
        qs = self.questions if questions is None else tuple(self.question(n) for n in questions)
        hidden = hidden or {}
        return Report(self.name, tuple(q.grade(namespace, self.name, tuple(hidden.get(q.name, ())), blind=blind)
                                       for q in qs))


__all__ = ["KINDS", "RECORDED_NOTE", "Call", "Calls", "Case", "Lab", "Question", "UNANSWERED", "call_cases"]
