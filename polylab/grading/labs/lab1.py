"""Lab 1: affine accesses and dependences (``solutions/lab1_dependences.ipynb``).

The expected answers are computed here by the engine from the lab's own copies of the loop nests, never
read from the student's notebook (where the student could change them). Each check reads the answer with
:mod:`polylab.grading.answers` (a malformed answer is refused with feedback) and compares it with
:mod:`polylab.grading.checks`, explaining each specific error.
"""

from __future__ import annotations

import math
from functools import cache

from polylab.analysis import Dependence, compute_dependences, parallelism, textbook_test
from polylab.frontend import parse
from polylab.grading import answers as A
from polylab.grading.checks import compare_calls, compare_sets, part
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.grading.verdict import Verdict, combine, right, wrong
from polylab.model import Scop

SWEEP = """double a[N][N];
for (i = 1; i < N; i++)
  for (j = 1; j < N; j++)
    a[i][j] = a[i - 1][j] + a[i][j - 1];
"""

SHIFT = """double Z[N];
for (i = 1; i < N; i++)
  for (j = 0; j < M; j++)
    Z[i - 1] = Z[i - 1] + 0.5 * j;
"""

BANERJEE = """double B[5 * N + 3];
for (i = 0; i < N; i++)
  B[3 * i] = B[5 * i + 2];
"""

TESTS = ("gcd", "integer system", "banerjee")


@cache
def scop(source: str) -> Scop:
    """The (single) SCoP of a C fragment, parsed once per process."""
    return parse(source).scop


@cache
def deps(source: str) -> tuple[Dependence, ...]:
    return tuple(compute_dependences(scop(source)))


def _lex_positive(v: tuple[int, ...]) -> bool:
    return next((x > 0 for x in v if x != 0), False)


# -- Q1: the distance vectors of the sweep ----------------------------------------------------------------

def check_q1(answer: object) -> Verdict:
    """The set of distance vectors of ``a[i][j] = a[i - 1][j] + a[i][j - 1]``: one per read of ``a``."""
    given = A.vector_set(answer, length=2, what="sweep2d_distances")
    exact = frozenset(d.distance for d in deps(SWEEP) if d.distance is not None)

    def why(v: tuple[int, ...]) -> str:
        if tuple(-x for x in v) in exact:
            return "it is source minus sink; a distance is sink minus source (the instance that reads minus the one that wrote)"
        if not _lex_positive(v):
            return "its first non-zero entry is not positive, so its sink would run before its source"
        return "no read of a is at that offset from the write a[i][j]: equate a[i][j] with each read's subscripts"

    return compare_sets(given, exact, item="distance vector", why_extra=why,
                        missing_hint="there is one distance per read of a")


# -- Q2: the loop that carries the WAW dependence of shift.c ---------------------------------------------------

def check_q2(answer: object) -> Verdict:
    """The iterator of the outermost loop whose component of the WAW distances is not zero."""
    st = scop(SHIFT).statements[0]
    given = A.choice(answer, st.iterators, "shift_waw_loop", case_sensitive=True)
    waw = next(d for d in deps(SHIFT) if d.kind == "output")
    carrier = st.iterators[waw.carried_level - 1]
    if given == carrier:
        return right()
    return wrong(f"{given!r} does not carry the WAW dependence: source and sink have the same {given} (the "
                 f"distances are {waw.distance_description}); the carrying loop is the outermost one whose "
                 "component of the distance is not 0")


# -- Q3: the parallel loops of both nests -------------------------------------------------------------------

def _parallel_part(source: str, answer: object, what: str) -> Verdict:
    st = scop(source).statements[0]
    given = A.name_set(answer, st.iterators, what)
    exact = frozenset(st.iterators[level - 1] for level in parallelism(scop(source)).parallel_loops(st.name))
    carried = {st.iterators[d.carried_level - 1]: d for d in deps(source) if d.carried_level}

    def why(loop: str) -> str:  # a loop that is not parallel carries a dependence: name it
        d = carried[loop]
        return (f"it carries the {d.kind} dependence {d.source_ref.text} -> {d.sink_ref.text} "
                f"(distance {d.distance_description})")

    return compare_sets(given, exact, item="parallel loop", why_extra=why,
                        missing_hint="a loop that carries no dependence is parallel")


def check_q3(sweep2d_parallel: object, shift_parallel: object) -> Verdict:
    """Both nests' parallel loops; every wrong part is reported."""
    return combine([("sweep2d_parallel", part(_parallel_part, SWEEP, sweep2d_parallel, "sweep2d_parallel")),
                    ("shift_parallel", part(_parallel_part, SHIFT, shift_parallel, "shift_parallel"))])


# -- Q4: the conservative textbook tests -------------------------------------------------------------------

@cache
def banerjee_report():
    return textbook_test(scop(BANERJEE), ("S0", 1), ("S0", 0), params={"N": 4})


def check_q4(answer: object) -> Verdict:
    """The tests that answer only "maybe" for ``B[3i]`` against ``B[5i + 2]`` (N = 4) although isl proves
    independence."""
    given = A.name_set(answer, TESTS, "conservative_tests", case_sensitive=False)
    report = banerjee_report()
    exact = frozenset(report.conservative_only)
    return compare_sets(given, exact, item="conservative test",
                        why_extra=lambda t: f"it proved independence by itself (it said {report.verdicts[t]!r})",
                        missing_hint="every test whose verdict is 'maybe dependent' while isl says independent")


# -- Q5: the GCD test as a function -------------------------------------------------------------------------

def gcd_test_reference(coefficients: list[int], constant: int) -> bool:
    """The GCD test for ``a1 x1 + ... + an xn = b``: an integer solution can exist iff ``gcd(a1..an)``
    divides ``b`` (all coefficients zero: iff ``b = 0``)."""
    g = 0
    for a in coefficients:
        g = math.gcd(g, int(a))
    return int(constant) == 0 if g == 0 else int(constant) % g == 0


def check_q5(calls: Calls) -> Verdict:
    """``gcd_test(coefficients, constant)`` returns True exactly when the GCD test allows a dependence."""
    return compare_calls(calls, gcd_test_reference, equal=lambda got, want: got in (True, False) and bool(got) == want)


LAB = Lab(
    name="lab1",
    title="Affine accesses and dependences",
    notebook="lab1_dependences.ipynb",
    questions=(
        Question("q1", 2, ("sweep2d_distances",), check_q1, title="distance vectors of the sweep",
                 example="{(2, 0)}"),
        Question("q2", 1, ("shift_waw_loop",), check_q2, title="the loop carrying the WAW of shift.c",
                 example='"i"'),
        Question("q3", 2, ("sweep2d_parallel", "shift_parallel"), check_q3, title="parallel loops",
                 example='["i"] or []'),
        Question("q4", 2, ("conservative_tests",), check_q4, title="conservative textbook tests",
                 example='{"gcd"}'),
        Question("q5", 2, ("gcd_test",), check_q5, title="the GCD test as a function",
                 example="def gcd_test(coefficients, constant): ...",
                 cases=(Case(([2, -2], 1), "A[2i] against A[2i + 1]"),
                        Case(([3, -5], 2), "B[3i] against B[5i + 2]"),
                        Case(([4, 6], 3), "gcd 2 does not divide 3"))),
    ),
)
