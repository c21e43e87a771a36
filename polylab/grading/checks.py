"""Comparisons that checks are built from: each compares a normalised answer with the exact expected value
(computed by the engine) and returns a :class:`~polylab.grading.verdict.Verdict` whose feedback names every
specific error.

* :func:`compare_sets` — sets of vectors or names, with partial credit and a reason per wrong element;
* :func:`compare_matrices` — ``F``, ``A``, ``Theta``...: names each entry that differs by its row and column;
* :func:`compare_isl` — isl sets or maps compared as sets (equivalent texts are equal), with a witness of
  the difference;
* :func:`legal_schedule` — legality of a schedule: the dependence it breaks, a violating pair and its
  picture on the iteration space;
* :func:`verified_variant` — a schedule's code against the original program: the first output element that
  differs;
* :func:`same_outputs` — a student's hand-written C against a reference program: the first output element
  that differs;
* :func:`compare_calls` — a function answer against a reference implementation on every case;
* :func:`expect` — one value against the expected one, with the known mistakes named (the shared shape of
  the labs' numeric answers), and :func:`expect_choice` for a choice among named options.
"""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import islpy as isl

from polylab.errors import PolylabError
from polylab.codegen import generate
from polylab.experiment import speedup_interval, verify
from polylab.grading import student_code
from polylab.grading.answers import describe
from polylab.grading.lab import Calls
from polylab.grading.verdict import Verdict, ViolationPicture, partial, right, wrong
from polylab.model import Scop
from polylab.schedule import Schedule, check

#: at most this many specific errors are listed per comparison (the rest are counted)
MAX_LINES = 6


def _cap(lines: list[str], total: int | None = None) -> list[str]:
    total = len(lines) if total is None else total
    if total > MAX_LINES:
        return lines[:MAX_LINES] + [f"... and {total - MAX_LINES} more"]
    return lines


def _sorted(items: Iterable[Hashable]) -> list[Any]:
    try:
        return sorted(items)  # type: ignore[type-var]
    except TypeError:
        return sorted(items, key=repr)


def memo_by_text(check: Callable[[Any], Verdict]) -> Callable[[Any], Verdict]:
    """``check`` remembered for answers given as text (a recipe, a schedule, C code): a construction compiles
    and runs its answer, which takes seconds, and the same text is checked again by the see-why gate and by
    the grader. Verdicts are immutable and a check is a pure function of its answer, so the memo returns
    exactly what the check would; other answers are checked every time."""
    remembered = functools.lru_cache(maxsize=64)(check)

    @functools.wraps(check)
    def wrapper(answer: Any) -> Verdict:
        return remembered(answer) if isinstance(answer, str) else check(answer)

    return wrapper


def part(check: Callable[..., Verdict], *args: Any) -> Verdict:
    """``check(*args)`` as one part of a combined check: a malformed answer (:class:`AnswerError`) or one the
    engine refuses (a :class:`~polylab.errors.PolylabError`) makes this part wrong, with its message, and
    leaves the other parts to be judged (so a combined check reports every failure)."""
    try:
        return check(*args)
    except PolylabError as err:  # AnswerError included
        return wrong(err.message + (f" ({err.hint})" if err.hint else ""))


#: a known mistake: the wrong value itself (compared with ``==``) or a predicate on the given value, and the
#: feedback for it (``{given}`` in the text is replaced by the value given)
Mistake = tuple[Any, str]


def expect(given: Any, expected: Any, *mistakes: Mistake, otherwise: str) -> Verdict:
    """Right when ``given == expected``; otherwise the feedback of the first known mistake that ``given``
    matches (see :data:`Mistake`), else ``otherwise``. The messages say what the mistake breaks, never the
    expected value (``{given}`` is filled in)."""
    if given == expected:
        return right()
    for match, message in mistakes:
        try:
            hit = bool(match(given)) if callable(match) else given == match
        except (ArithmeticError, TypeError, ValueError):  # a predicate that cannot judge this value: no match
            hit = False
        if hit:
            return wrong(message.replace("{given}", describe(given)))
    return wrong(otherwise.replace("{given}", describe(given)))


def expect_choice(given: str, expected: str, why_not: Mapping[str, str], *, what: str) -> Verdict:
    """A choice among named options (already read with :func:`~polylab.grading.answers.choice`): right when
    it is ``expected``, else the reason that option is wrong (``why_not``), which never names the right one."""
    if given == expected:
        return right()
    return wrong(f"{what} = {given!r} is not it: {why_not.get(given, 'read the question again')}")


#: the verdicts a speedup's interval gives (:attr:`polylab.experiment.SpeedupInterval.verdict`)
VERDICTS = ("faster", "slower", "no measurable difference")


def expect_verdict(given: str, baseline: Sequence[float], variant: Sequence[float], *, variant_name: str,
                   baseline_name: str) -> Verdict:
    """The student's reading of a measurement (``given``, one of :data:`VERDICTS`: is ``variant`` faster
    than ``baseline``, slower, or not measurably different?) against the 95 % interval of the speedup
    (:func:`polylab.experiment.speedup_interval`). The feedback says what the reading overlooks (the
    medians, the interval), never which verdict is right."""
    iv = speedup_interval(baseline, variant)
    if iv is None:
        raise ValueError("expect_verdict needs at least MIN_INTERVAL_RUNS runs of each program")
    if given == iv.verdict:
        return right()
    if given != "no measurable difference" and (given == "faster") != (iv.ratio > 1):
        return wrong(f"the medians say otherwise: compare the median time of {variant_name} with that of "
                     f"{baseline_name}")
    if given == "no measurable difference":
        return wrong(f"the interval of the ratio median({baseline_name}) / median({variant_name}) decides, not "
                     "how close the medians look: compute it (speedup_interval) and see where 1 lies")
    return wrong(f"the medians alone do not decide: with these runs' spread, the 95 % interval of the ratio "
                 f"median({baseline_name}) / median({variant_name}) is what tells a difference from noise "
                 "(speedup_interval); see where 1 lies")


def lex_positive(v: Sequence[int]) -> bool:
    """Whether the first non-zero entry of ``v`` is positive: a dependence distance (sink minus source) always
    is, since the sink runs after the source (the zero vector is not)."""
    return next((x > 0 for x in v if x != 0), False)


def compare_sets(given: frozenset, expected: frozenset, *, item: str = "element",
                 why_extra: Callable[[Any], str] | None = None, missing_hint: str = "",
                 name_missing: bool = False, count_missing: bool = True,
                 name_extra: Callable[[Any], bool] | None = None) -> Verdict:
    """``given`` against ``expected``: right when equal. Partial credit ``(right - wrong) / |expected|``
    (an extra element cancels a right one, so listing everything earns nothing). Feedback: one line per
    extra element with ``why_extra(element)`` when given, and the number of missing elements with
    ``missing_hint`` (or the elements themselves when ``name_missing``). Where the expected set is one subset
    of a handful of options a count would narrow the answer to a few tries: ``count_missing=False`` says only
    that something is missing. Where the options are few and known (the reads of one statement), naming
    each wrong one lets a student list them all and strike out the named ones: an extra element for which
    ``name_extra`` is False is not named; such elements are counted, one line per reason (not counted
    either under ``count_missing=False``)."""
    extra, missing = given - expected, expected - given
    if not extra and not missing:
        return right()
    lines, unnamed = [], {}
    for e in _sorted(extra):
        reason = why_extra(e) if why_extra else ""
        if name_extra is not None and not name_extra(e):
            unnamed[reason] = unnamed.get(reason, 0) + 1
            continue
        lines.append(f"{describe(e)} is not a {item} here" + (f": {reason}" if reason else ""))
    lines = _cap(lines)
    plural = item + ("es" if item.endswith("s") else "s")
    for reason, n in unnamed.items():
        count = (f"one entry of your set is not a {item}" if n == 1 else f"{n} entries of your set are not {plural}"
                 ) if count_missing else f"your set holds at least one entry that is not a {item}"
        lines.append(count + (f": {reason}" if reason else ""))
    if missing:
        what = (": " + ", ".join(describe(m) for m in _sorted(missing))) if name_missing else ""
        n = len(missing)
        plural = plural if n > 1 else item
        count = f"{n} {plural} missing" if count_missing or name_missing else \
            f"your set lacks at least one {item}"
        lines.append(f"{count}{what}" + (f" ({missing_hint})" if missing_hint else ""))
    if not expected:  # the right answer is the empty set: anything in it is wrong
        return partial(0, 1, *lines)
    return partial(len(given & expected) - len(extra), len(expected), *lines)


def _fmt(x: Fraction | int) -> str:
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def compare_matrices(given: Sequence[Sequence[Fraction]], expected: Sequence[Sequence[Fraction]], *,
                     name: str = "F", rows: Sequence[str] = (), cols: Sequence[str] = (),
                     reveal: bool = False, count_only: str | None = None) -> Verdict:
    """Entry-by-entry comparison of two matrices of the same shape (the reader checks the shape). Each
    differing entry is named: ``F[2][1] (row 2: j - 1; column 1: i) is 1, which is wrong`` (with the expected
    value when ``reveal``); with ``count_only`` (what an entry means, as text) the wrong entries are counted,
    never named, so that a small matrix cannot be found one named entry per try. Partial credit: ``(right -
    wrong) / entries`` (a wrong entry cancels a right one, so the zero matrix, whose zeros are right wherever
    the answer has a zero, earns nothing)."""
    lines, wrong_entries, total = [], 0, 0
    for r, (grow, erow) in enumerate(zip(given, expected)):
        for c, (g, e) in enumerate(zip(grow, erow)):
            total += 1
            if Fraction(g) != Fraction(e):
                wrong_entries += 1
                where = "; ".join(p for p in (f"row {r + 1}: {rows[r]}" if r < len(rows) else "",
                                              f"column {c + 1}: {cols[c]}" if c < len(cols) else "") if p)
                index = f"[{c + 1}]" if len(expected) == 1 and not rows else f"[{r + 1}][{c + 1}]"
                lines.append(f"{name}{index}{f' ({where})' if where else ''} is {_fmt(g)}, "
                             + (f"expected {_fmt(e)}" if reveal else "which is wrong"))
    if not wrong_entries:
        return right()
    if count_only is not None:
        lines = [f"{wrong_entries} of the {total} entries of {name} {'is' if wrong_entries == 1 else 'are'} "
                 f"wrong ({count_only})"]
    return partial(total - 2 * wrong_entries, total, *_cap(lines, wrong_entries))


def compare_isl(given: isl.Set | isl.Map | isl.UnionMap | isl.UnionSet, expected, *, what: str = "the set",
                element: str = "point", space_hint: str = "check the tuple names and the number of dimensions",
                explain_extra: Callable[[Any], str] | None = None,
                explain_missing: Callable[[Any], str] | None = None) -> Verdict:
    """isl objects compared as sets: right when equal (however the text is written). Otherwise the feedback
    gives one element that is too much and one that is missing (a sample point of each difference), each
    line made by ``explain_extra`` / ``explain_missing`` from the sample when given (what that element breaks:
    the instance that would read it, the dependence pair it reverses...); a set in another space is named
    with ``space_hint``."""
    try:
        if given.get_space().is_equal(expected.get_space()) is False and not isinstance(
                given, (isl.UnionMap, isl.UnionSet)):
            return wrong(f"{what} lives in {given.get_space()}, not in {expected.get_space()} ({space_hint})")
        if given.is_equal(expected):
            return right()
        too_much, missing = given.subtract(expected), expected.subtract(given)
    except isl.Error as exc:
        return wrong(f"isl cannot compare {what} with the expected one: {exc} "
                     "(check the tuple names, dimensions and parameters)")
    lines = []
    if not too_much.is_empty():
        lines.append(explain_extra(_point(too_much)) if explain_extra else
                     f"{what} contains {_sample(too_much)}, which it should not")
    if not missing.is_empty():
        lines.append(explain_missing(_point(missing)) if explain_missing else f"{what} lacks {_sample(missing)}")
    return wrong(*lines)


def _point(obj):
    """A sample point of a set, or of a map's pairs (its wrapped set)."""
    return (obj.wrap() if isinstance(obj, (isl.Map, isl.BasicMap)) else obj).sample_point()


def _sample(obj) -> str:
    try:
        return str(obj.sample_point() if hasattr(obj, "sample_point") else obj)
    except isl.Error:
        return str(obj)


def legal_schedule(schedule: Schedule, *, what: str = "the schedule") -> Verdict:
    """Right when ``schedule`` keeps every dependence in order; otherwise one feedback line per violated
    dependence (its kind, array and a violating pair with their times) and a picture of the first one."""
    report = check(schedule)
    if report.legal:
        return right()
    lines = [f"{what} is illegal: {v.message}" for v in report.violations]
    pic = ViolationPicture(schedule, report.violations[0],
                           f"{report.violations[0].sink} runs before {report.violations[0].source}")
    return wrong(*_cap(lines), pictures=(pic,))


def verified_variant(scop: Scop, schedule: Schedule, *, params: Mapping[str, int], target: str = "c",
                     threads: Sequence[int | None] = (None,), what: str = "the variant") -> Verdict:
    """Right when the code of ``schedule`` (legal, compiled, run at ``params``, once per thread count of
    ``threads``) writes exactly the original program's outputs; otherwise the dependence it breaks, or the
    first output element it changes (and with how many threads)."""
    legal = legal_schedule(schedule, what=what)
    if not legal.correct:
        return legal
    code = generate(schedule.scop, schedule, target)   # once: generating a tiled schedule's code takes seconds
    for t in threads:
        v = verify(scop, schedule, target, params=params, threads=t, code=code)
        with_threads = f" with {t} thread(s)" if t else ""
        if v.verified is None:
            return wrong(f"{what} could not be run here{with_threads}: {v.reason}")
        if not v.verified:
            return wrong(f"{what}{with_threads} changes the output: first difference at {v.first_difference}")
    return right()


def same_outputs(reference: Scop, candidate: Scop, *, params: Mapping[str, int], what: str = "your code"
                 ) -> Verdict:
    """Right when ``candidate`` (a student's program, e.g. a loop nest transformed by hand) writes the same
    outputs as ``reference`` when both run on the same inputs at ``params``; otherwise the first element
    that differs. The candidate's text is read, vetted and run like every student's code
    (:func:`polylab.grading.student_code.judge_student_code`)."""
    if set(candidate.parameters) - set(reference.parameters):
        extra = sorted(set(candidate.parameters) - set(reference.parameters))
        return wrong(f"{what} uses {', '.join(extra)}, which the original program does not define")
    code = student_code.read_code(candidate.source, what)
    return student_code.judge_student_code(reference, student_code.candidate_program(reference, code), params=params,
                                         what=what)


def _a(value: Any) -> str:
    name = type(value).__name__
    return ("an " if name[:1] in "aeiou" else "a ") + name


def compare_calls(calls: Calls, reference: Callable[..., Any], *,
                  equal: Callable[[Any, Any], bool] | None = None) -> Verdict:
    """The student's function against ``reference`` on every case: partial credit per case; each failing
    public case is shown with its call and what it returned (or raised), never the expected value (a table of
    the public cases would otherwise earn their points: docs/course.md rule 3), only the expected type when
    the returned one differs; a failing
    hidden case is shown by its label only. The last line counts the cases passed: ``public cases: 3/3;
    the grader also runs hidden cases`` in a notebook, ``public cases: 3/3; hidden cases: 4/5`` when graded."""
    same = equal or (lambda a, b: a == b)
    ok, lines = 0, []
    passed = {False: 0, True: 0}
    for call in calls.calls:
        expected = reference(*call.case.args)
        shown = (f"hidden case {call.case.label!r}" if call.hidden and call.case.label
                 else "a hidden case" if call.hidden else call.case.call_text(calls.function))
        if call.error is not None:
            lines.append(f"{shown} raised {call.error}")
            continue
        try:
            good = bool(same(call.value, expected))
        except Exception:  # comparing a strange return value must not crash the check: it is just wrong
            good = False
        if good:
            ok += 1
            passed[call.hidden] += 1
        elif call.hidden:
            lines.append(f"{shown}: wrong result" + (f" ({call.case.label})" if call.case.label else ""))
        else:
            label = f" ({call.case.label})" if call.case.label else ""
            kind = (f", {_a(call.value)} where the function should return {_a(expected)}"
                    if type(call.value) is not type(expected) else "")
            lines.append(f"{shown} returned {describe(call.value)}{kind}{label}: not the right value for this input")
    if not calls.calls:
        return right()
    public = len(calls.calls) - calls.hidden
    count = f"public cases: {passed[False]}/{public}; " + (
        "the grader also runs hidden cases" if calls.in_notebook else f"hidden cases: {passed[True]}/{calls.hidden}")
    return partial(ok, len(calls.calls), *_cap(lines), count)


__all__ = ["MAX_LINES", "VERDICTS", "Mistake", "compare_calls", "compare_isl", "compare_matrices", "compare_sets",
           "expect", "expect_choice", "expect_verdict", "legal_schedule", "lex_positive", "memo_by_text", "part",
           "same_outputs", "verified_variant"]
