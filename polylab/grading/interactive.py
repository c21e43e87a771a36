"""The notebook's check cell: one call that grades answers on the spot and never raises.

    check("lab1", "q1")              # reads the answer variables of lab1.q1 from the notebook
    check("lab1", "q2", "q3")        # several questions: every result is shown, failures and successes
    check("lab1")                    # the whole lab
    check("lab1.q1", {(1, 0)})       # an explicit answer (positional values, in the question's order)

The result displays itself (✔ / ✘, points, feedback naming each specific error, a picture where it helps).
Nothing a student does makes it raise: an unknown lab or question, a missing or malformed answer, and even
a bug in a check become a displayed result, so "Run All" reaches the end of the notebook.

A multiple-choice answer (``Question.kind == "choice"``) is checked *blind*: the check says it is recorded
and well-formed (one of the options), never whether it is right, so that trying the options one by one
eliminates none of them; the batch grader's report gives the verdict and the feedback.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping

from polylab.errors import PolylabError
from polylab.grading.registry import get_lab
from polylab.grading.verdict import Report, Result


def check(target: str, *rest: Any, namespace: Mapping[str, Any] | None = None) -> Result | Report:
    """Grade one question, several, or a whole lab (see the module text). ``namespace`` defaults to the
    caller's globals (the notebook's variables). Public cases only (a function question's feedback ends with
    ``public cases: 3/3; the grader also runs hidden cases``): hidden cases are the batch grader's."""
    ns = namespace if namespace is not None else sys._getframe(1).f_globals
    try:
        return _check(target, rest, ns)
    except PolylabError as err:  # an unknown lab or question: shown as a result, never raised
        return Result(str(target), "?", "", 0.0, 0.0, "error", (err.message + (f" ({err.hint})" if err.hint else ""),))


def _check(target: str, rest: tuple[Any, ...], ns: Mapping[str, Any]) -> Result | Report:
    if not isinstance(target, str):
        raise PolylabError(f"check() takes the lab's name first, not {target!r}", hint='check("lab1", "q1")')
    lab_name, dot, qname = target.partition(".")
    lab = get_lab(lab_name)
    if dot:  # check("lab1.q1", answer...): explicit answers, or the namespace when none is given
        q = lab.question(qname)
        if rest:
            if len(rest) != len(q.answers):
                raise PolylabError(f"{target} takes {len(q.answers)} answer(s) ({', '.join(q.answers)}), "
                                   f"got {len(rest)}")
            ns = dict(zip(q.answers, rest))
        return q.grade(ns, lab.name, blind=True)
    names = [str(n) for n in rest]
    if len(names) == 1:
        return lab.question(names[0]).grade(ns, lab.name, blind=True)
    return lab.grade(ns, names or None, blind=True)


__all__ = ["check"]
