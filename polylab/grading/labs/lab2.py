"""Lab 2: dependence tests (``solutions/lab2_dependences.ipynb``).

The textbook way (equate subscripts, the null space of ``F``, the GCD test, Banerjee's bounds) beside the
exact answer of isl; RAW / WAR / WAW; distance and direction vectors; memory- against value-based
dependences. Every expected answer is computed here by the engine (isl) from the lab's own texts of the
nests, never read from the student's notebook.
"""

from __future__ import annotations

import math
from functools import cache

import islpy as isl
import sympy

from polylab.analysis import Dependence, compute_dependences, textbook_test
from polylab.grading import answers as A
from polylab.grading.checks import compare_calls, compare_sets, part
from polylab.grading.kernels import SHIFT, SWEEP, scop, sl3
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.model.islutil import point_coordinates
from polylab.grading.verdict import Verdict, combine, right, wrong

#: question 2: a subscript with a one-dimensional null space
SCATTER = """double Y[6 * N];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    Y[2 * i + 4 * j] = Y[2 * i + 4 * j] + 1.0;
"""

BANERJEE = """double B[5 * N + 3];
for (i = 0; i < N; i++)
  B[3 * i] = B[5 * i + 2];
"""

#: the parameter values of questions 4 and 6
BANERJEE_N = 4
SHIFT_PARAMS = {"N": 5, "M": 4}
TESTS = ("gcd", "integer system", "banerjee")
DIRECTIONS = ("<", "=", ">", "*")


def deps(source: str, value_based: bool = False) -> tuple[Dependence, ...]:
    return tuple(compute_dependences(scop(source), value_based=value_based))


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


# -- Q2: the null space of F and the direction of the WAW ---------------------------------------------------

def _null_space(answer: object) -> Verdict:
    v = A.vector(answer, 2, "Y_null")
    F = scop(SCATTER).statements[0].writes[0].matrix
    if v == (0, 0):
        return wrong("(0, 0) is in every null space; give a vector that spans it (not zero)")
    image = F * sympy.Matrix(v)
    if any(image):
        return wrong(f"F {v} = {tuple(int(x) for x in image)}, not 0: with F = {F.tolist()}, v is in the null "
                     "space when 2 v1 + 4 v2 = 0")
    return right()


def _direction(answer: object) -> Verdict:
    if isinstance(answer, str):
        raise A.AnswerError(f"Y_waw_direction is the text {A.describe(answer)}, not a tuple",
                            hint='write a tuple of strings, e.g. ("=", "<")')
    if not isinstance(answer, (tuple, list)):
        raise A.AnswerError(f"Y_waw_direction is {A.describe(answer)}, not a tuple",
                            hint='write a tuple of strings, e.g. ("=", "<")')
    items = list(answer)
    if len(items) != 2:
        raise A.AnswerError(f"Y_waw_direction has {len(items)} entries, not 2", hint='one per loop: ("<", "=")')
    given = tuple(A.choice(x, DIRECTIONS, "an entry of Y_waw_direction") for x in items)
    waw = next(d for d in deps(SCATTER) if d.kind == "output")
    want = waw.direction
    if given == tuple(want):
        return right()
    lines = []
    for k, (g, w) in enumerate(zip(given, want)):
        if g != w:
            lines.append(f"entry {k + 1} (loop {scop(SCATTER).statements[0].iterators[k]}) is {g!r}: the WAW "
                         "distances are the positive multiples of the null-space vector whose first non-zero "
                         "entry is positive; read the sign of this entry")
    return wrong(*lines)


def check_q2(Y_null: object, Y_waw_direction: object) -> Verdict:
    """A vector spanning the null space of ``F = [2 4]`` and the direction vector of the WAW of ``Y``."""
    return combine([("Y_null", part(_null_space, Y_null)), ("Y_waw_direction", part(_direction, Y_waw_direction))])


# -- Q3: the GCD test as a function -------------------------------------------------------------------------

def gcd_test_reference(coefficients: list[int], constant: int) -> bool:
    """The GCD test for ``a1 x1 + ... + an xn = b``: an integer solution can exist iff ``gcd(a1..an)``
    divides ``b`` (all coefficients zero: iff ``b = 0``)."""
    g = 0
    for a in coefficients:
        g = math.gcd(g, int(a))
    return int(constant) == 0 if g == 0 else int(constant) % g == 0


def check_q3(calls: Calls) -> Verdict:
    """``gcd_test(coefficients, constant)`` returns True exactly when the GCD test allows a dependence."""
    return compare_calls(calls, gcd_test_reference, equal=lambda got, want: got in (True, False) and bool(got) == want)


# -- Q4: Banerjee's bounds and the conservative tests ----------------------------------------------------------

@cache
def banerjee_bounds() -> tuple[int, int]:
    """Min and max of ``3 i - 5 i'`` over the box ``0 <= i, i' <= N - 1`` (the left side of the equation
    ``3 i - 5 i' = 2`` of the write ``B[3i]`` against the read ``B[5i' + 2]``), exactly with isl."""
    values = isl.Set(f"{{ [h] : exists i, ip : h = 3i - 5ip and 0 <= i < {BANERJEE_N} and 0 <= ip < {BANERJEE_N} }}")
    return point_coordinates(values.lexmin().sample_point())[0], point_coordinates(values.lexmax().sample_point())[0]


@cache
def banerjee_report():
    return textbook_test(scop(BANERJEE), ("S0", 1), ("S0", 0), params={"N": BANERJEE_N})


def _bounds(answer: object) -> Verdict:
    lo, hi = A.vector(answer, 2, "banerjee_bounds")
    want_lo, want_hi = banerjee_bounds()
    lines = []
    if lo != want_lo:
        lines.append(f"the lower bound {lo} is wrong: take the smallest 3i (i = 0) and the largest 5i' "
                     f"(i' = {BANERJEE_N - 1})")
    if hi != want_hi:
        lines.append(f"the upper bound {hi} is wrong: take the largest 3i (i = {BANERJEE_N - 1}) and the "
                     "smallest 5i' (i' = 0)")
    return right() if not lines else wrong(*lines)


def _conservative(answer: object) -> Verdict:
    given = A.name_set(answer, TESTS, "conservative_tests", case_sensitive=False)
    report = banerjee_report()
    exact = frozenset(report.conservative_only)
    return compare_sets(given, exact, item="conservative test",
                        why_extra=lambda t: f"it proved independence by itself (it said {report.verdicts[t]!r})",
                        missing_hint="every test whose verdict is 'maybe dependent' while isl says independent")


def check_q4(banerjee_bounds: object, conservative_tests: object) -> Verdict:
    """Banerjee's bounds ``(min, max)`` of ``3i - 5i'`` at N = 4, and the tests that only say *maybe* for
    ``B[3i]`` against ``B[5i + 2]`` although isl proves independence."""
    return combine([("banerjee_bounds", part(_bounds, banerjee_bounds)),
                    ("conservative_tests", part(_conservative, conservative_tests))])


# -- Q5: RAW and WAR distances of sl3 ------------------------------------------------------------------------

@cache
def sl3_distances(kind: str) -> frozenset[tuple[int, ...]]:
    return frozenset(d.distance for d in compute_dependences(sl3()).between("S1", "S1")
                     if d.kind == kind and d.distance is not None)


def _sl3_part(answer: object, kind: str, what: str) -> Verdict:
    given = A.vector_set(answer, 3, what)
    other = {"flow": "anti", "anti": "flow"}[kind]
    reads = "behind" if kind == "flow" else "ahead of"

    def why(v: tuple[int, ...]) -> str:
        if tuple(-x for x in v) in sl3_distances(kind):
            return "it is source minus sink; a distance is sink minus source"
        if v in sl3_distances(other):
            return f"it is a distance of the {'RAW' if other == 'flow' else 'WAR'} dependences, not of these"
        return "no read of the sweep is at that offset from the write x[i][j][k]"

    return compare_sets(given, sl3_distances(kind), item=f"{'RAW' if kind == 'flow' else 'WAR'} distance",
                        why_extra=why, missing_hint=f"one per read {reads} the point")


def check_q5(sl3_raw: object, sl3_war: object) -> Verdict:
    """The distance vectors of the RAW (flow) and WAR (anti) dependences of the sweep ``S1 -> S1``."""
    return combine([("sl3_raw", part(_sl3_part, sl3_raw, "flow", "sl3_raw")),
                    ("sl3_war", part(_sl3_part, sl3_war, "anti", "sl3_war"))])


# -- Q6: memory-based against value-based ------------------------------------------------------------------------

@cache
def memory_flow_pairs() -> int:
    flow = next(d for d in deps(SHIFT) if d.kind == "flow")
    fixed = flow.relation.intersect_params(isl.Set(
        "[N, M] -> { : " + " and ".join(f"{k} = {v}" for k, v in SHIFT_PARAMS.items()) + " }"))
    return int(fixed.wrap().count_val().to_python())


def _value_based(answer: object) -> Verdict:
    given = A.vector_set(answer, 2, "shift_value_flow")
    exact = frozenset(d.distance for d in deps(SHIFT, value_based=True) if d.kind == "flow")

    def why(v: tuple[int, ...]) -> str:
        return ("it is a memory-based distance: the value read was overwritten by a later write before the read"
                if v[0] == 0 and v[1] > 1 else "no value flows at that distance")

    return compare_sets(given, exact, item="value-based flow distance", why_extra=why,
                        missing_hint="each read sees the last write before it")


def _pairs(answer: object) -> Verdict:
    n = A.integer(answer, "shift_memory_flow_pairs")
    want = memory_flow_pairs()
    if n == want:
        return right()
    if n == (SHIFT_PARAMS["N"] - 1) * (SHIFT_PARAMS["M"] - 1):
        return wrong(f"{n} counts the value-based pairs (j' = j + 1); memory-based, every later j' < M reads "
                     "what j wrote")
    return wrong(f"{n} pairs is not right: for each i, count the pairs j < j' with 0 <= j, j' < M")


def check_q6(shift_value_flow: object, shift_memory_flow_pairs: object) -> Verdict:
    """The value-based flow distances of ``shift.c`` and the number of memory-based flow pairs at
    ``N = 5, M = 4``."""
    return combine([("shift_value_flow", part(_value_based, shift_value_flow)),
                    ("shift_memory_flow_pairs", part(_pairs, shift_memory_flow_pairs))])


LAB = Lab(
    name="lab2",
    title="Dependence tests",
    notebook="lab2_dependences.ipynb",
    questions=(
        Question("q1", 2, ("sweep2d_distances",), check_q1, title="distance vectors of the sweep",
                 example="{(2, 0)}"),
        Question("q2", 2, ("Y_null", "Y_waw_direction"), check_q2, title="null space and direction of Y",
                 example='(1, 0) and ("=", "<")'),
        Question("q3", 2, ("gcd_test",), check_q3, title="the GCD test as a function",
                 example="def gcd_test(coefficients, constant): ...",
                 cases=(Case(([2, -2], 1), "A[2i] against A[2i + 1]"),
                        Case(([3, -5], 2), "B[3i] against B[5i + 2]"),
                        Case(([4, 6], 3), "gcd 2 does not divide 3"))),
        Question("q4", 2, ("banerjee_bounds", "conservative_tests"), check_q4,
                 title="Banerjee's bounds and the conservative tests", example='(-1, 1) and {"gcd"}'),
        Question("q5", 2, ("sl3_raw", "sl3_war"), check_q5, title="RAW and WAR distances of sl3",
                 example="{(1, 0, 0)} and {(0, 1, 0)}"),
        Question("q6", 2, ("shift_value_flow", "shift_memory_flow_pairs"), check_q6,
                 title="memory- against value-based", example="{(0, 2)} and 10"),
    ),
)
