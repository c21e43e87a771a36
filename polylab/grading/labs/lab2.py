"""Lab 2: dependence tests (``solutions/lab2_dependences.ipynb``).

The textbook way (equate subscripts, the null space of ``F``, the GCD test, Banerjee's bounds) beside the
exact answer of isl; RAW / WAR / WAW; distance and direction vectors; memory- against value-based
dependences. The derivation (question 2) is a dependence relation written by the student in isl text, the
*dependence polyhedron* ``{ x -> y : x, y in D, F x + c = F y + c, x <lex y }`` of an access whose
distances are not one vector; it is compared with the exact relation and a pair too many or missing is
explained (outside the domain, another element, the wrong order). The construction (question 8) is an
OpenMP pragma placed on a given nest: the loop it parallelises must carry no dependence (else a pair of
instances that would race is named), the loops inside it need private iterators, and the code is compiled
and run against the original at several thread counts. Every expected answer is computed here by the
engine (isl) from the lab's own texts of the nests, never read from the student's notebook.
"""

from __future__ import annotations

import math
import re
from functools import cache

import islpy as isl

from polylab.analysis import Dependence, compute_dependences, textbook_test
from polylab.errors import PolylabError
from polylab.frontend import parse
from polylab.grading import answers as A
from polylab.grading.checks import compare_calls, compare_isl, compare_sets, expect, lex_positive, memo_by_text, part
from polylab.grading.kernels import SHIFT, SWEEP, scop, sl3
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.grading.student_code import Loop, StudentCode, candidate_program, judge_student_code, read_code
from polylab.grading.verdict import Verdict, combine, right, wrong
from polylab.model.islutil import parameter_values, point_coordinates
from polylab.toolchain import supports_openmp

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

#: question 8: a nest whose middle loop is the only parallel one
PLANES = """double x[N][N][N];
for (i = 1; i < N; i++)
  for (j = 0; j < N; j++)
    for (k = 1; k < N; k++)
      x[i][j][k] = x[i - 1][j][k - 1] + x[i][j][k - 1];
"""
#: question 8: the size and the thread counts of the run
PLANES_N, THREADS = 24, (1, 2, 3, 4)

#: the parameter values of questions 4 and 7
BANERJEE_N = 4
SHIFT_PARAMS = {"N": 5, "M": 4}
TESTS = ("gcd", "integer system", "banerjee")


def deps(source: str, value_based: bool = False) -> tuple[Dependence, ...]:
    return tuple(compute_dependences(scop(source), value_based=value_based))



# -- Q1: the distance vectors of the sweep ----------------------------------------------------------------

def check_q1(answer: object) -> Verdict:
    """The set of distance vectors of ``a[i][j] = a[i - 1][j] + a[i][j - 1]``: one per read of ``a``."""
    given = A.vector_set(answer, length=2, what="sweep2d_distances")
    exact = frozenset(d.distance for d in deps(SWEEP) if d.distance is not None)

    def why(v: tuple[int, ...]) -> str:
        if tuple(-x for x in v) in exact:
            return "it is source minus sink; a distance is sink minus source (the instance that reads minus the one that wrote)"
        if not lex_positive(v):
            return "its first non-zero entry is not positive, so its sink would run before its source"
        return "no read of a is at that offset from the write a[i][j]: equate a[i][j] with each read's subscripts"

    return compare_sets(given, exact, item="distance vector", why_extra=why,
                        missing_hint="there is one distance per read of a")


# -- Q2: the WAW relation of Y (derivation) --------------------------------------------------------------------

@cache
def waw_relation() -> isl.Map:
    """The memory-based output dependence of ``Y[2 * i + 4 * j]``: every pair of instances writing the same
    element, the first one before the second."""
    return next(d for d in deps(SCATTER) if d.kind == "output").relation.coalesce()


def _instances(p: isl.Point) -> tuple[tuple[int, ...], tuple[int, ...], dict[str, int]]:
    """The source and the sink of a pair (a point of a wrapped relation) and its parameters."""
    c = point_coordinates(p)
    return c[:2], c[2:], dict(parameter_values(p))


def _pair_text(x: tuple[int, ...], y: tuple[int, ...], params: dict[str, int]) -> str:
    at = ", ".join(f"{k} = {v}" for k, v in params.items())
    return f"S0{list(x)} -> S0{list(y)} (at {at})"


def _why_not_waw(x: tuple[int, ...], y: tuple[int, ...], n: int) -> str:
    if not all(0 <= v < n for v in (*x, *y)):
        return "one of them is outside the domain 0 <= i, j < N"
    ex, ey = 2 * x[0] + 4 * x[1], 2 * y[0] + 4 * y[1]
    if ex != ey:
        return f"they write different elements, Y[{ex}] and Y[{ey}]"
    return f"both write Y[{ex}], but S0{list(y)} does not run after S0{list(x)}: a dependence goes from the " \
           "earlier instance to the later one"


def check_q2(Y_waw: object) -> Verdict:
    """The output (WAW) dependence relation of the scatter ``Y[2 * i + 4 * j] = ...`` in isl text."""
    given = A.isl_map(Y_waw, "Y_waw")
    want = waw_relation()
    if given.get_tuple_name(isl.dim_type.in_) is None and given.get_tuple_name(isl.dim_type.out) is None:
        given = given.set_tuple_name(isl.dim_type.in_, "S0").set_tuple_name(isl.dim_type.out, "S0")
    return compare_isl(given, want, what="Y_waw", space_hint="pairs of instances S0[i, j] -> S0[i', j'] and the "
                                                           "parameter N",
                       explain_extra=_extra_pair, explain_missing=_missing_pair)


def _extra_pair(p: isl.Point) -> str:
    x, y, at = _instances(p)
    return (f"your relation holds the pair {_pair_text(x, y, at)}, which is no WAW dependence: "
            f"{_why_not_waw(x, y, at['N'])}")


def _missing_pair(p: isl.Point) -> str:
    x, y, at = _instances(p)
    return (f"your relation lacks {_pair_text(x, y, at)}: both write Y[{2 * x[0] + 4 * x[1]}] and the first runs "
            "before the second")


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


# -- Q4 and Q5: Banerjee's bounds, and the tests that are too conservative ------------------------------------

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
    """Each bound right or wrong, never in which direction and with no point of the box named: a named point
    below a lower bound walked a student to the minimum in five tries (review 3), and a direction would turn
    it into a bisection. What a wrong bound breaks is said in terms of the definition."""
    lo, hi = A.vector(answer, 2, "banerjee_bounds")
    want_lo, want_hi = banerjee_bounds()
    box = f"the box 0 <= i, i' <= {BANERJEE_N - 1}"
    lines = []
    if lo != want_lo:
        lines.append(f"the lower bound {lo} is not the minimum of 3i - 5i' over {box}: Banerjee's bound is the exact "
                     "minimum of each term over its range, added up")
    if hi != want_hi:
        lines.append(f"the upper bound {hi} is not the maximum of 3i - 5i' over {box}: Banerjee's bound is the exact "
                     "maximum of each term over its range, added up")
    return right() if not lines else wrong(*lines)


def _conservative(answer: object) -> Verdict:
    given = A.name_set(answer, TESTS, "conservative_tests", case_sensitive=False)
    report = banerjee_report()
    exact = frozenset(report.conservative_only)
    return compare_sets(given, exact, item="conservative test",
                        why_extra=lambda t: f"it proved independence by itself (it said {report.verdicts[t]!r})",
                        missing_hint="work out each test's verdict: a test belongs here when it says 'maybe "
                                     "dependent' while isl says independent", count_missing=False)


def check_q4(banerjee_bounds: object) -> Verdict:
    """Banerjee's bounds ``(min, max)`` of ``3i - 5i'`` at N = 4."""
    return _bounds(banerjee_bounds)


def check_q5(conservative_tests: object) -> Verdict:
    """The tests that only say *maybe* for ``B[3i]`` against ``B[5i + 2]`` although isl proves
    independence (a choice among three: multiple choice)."""
    return _conservative(conservative_tests)


# -- Q6: RAW and WAR distances of sl3 ------------------------------------------------------------------------

@cache
def sl3_distances(kind: str) -> frozenset[tuple[int, ...]]:
    return frozenset(d.distance for d in compute_dependences(sl3()).between("S1", "S1")
                     if d.kind == kind and d.distance is not None)


def _sl3_part(answer: object, kind: str, what: str) -> Verdict:
    given = A.vector_set(answer, 3, what)
    name, reads = ("RAW", "behind") if kind == "flow" else ("WAR", "ahead of")

    def why(v: tuple[int, ...]) -> str:
        if not lex_positive(v):
            return ("it is not lexicographically positive: the sink of a dependence runs after its source, so a "
                    "distance (sink minus source) has a positive first non-zero entry")
        return f"no read {reads} the point gives a dependence at that distance"

    # a vector of the other kind is not said to be one (that would sort the sweep's distances into RAW and WAR
    # for the student, review 3): a wrong vector is named only when it can be no distance at all, a derivable
    # fact; the others are counted, and so are the missing ones
    return compare_sets(given, sl3_distances(kind), item=f"{name} distance", why_extra=why,
                        name_extra=lambda v: not lex_positive(v),
                        missing_hint=f"one per read {reads} the point")


def check_q6(sl3_raw: object, sl3_war: object) -> Verdict:
    """The distance vectors of the RAW (flow) and WAR (anti) dependences of the sweep ``S1 -> S1``."""
    return combine([("sl3_raw", part(_sl3_part, sl3_raw, "flow", "sl3_raw")),
                    ("sl3_war", part(_sl3_part, sl3_war, "anti", "sl3_war"))])


# -- Q7: memory-based against value-based ------------------------------------------------------------------------

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

    return compare_sets(given, exact, item="value-based flow distance", why_extra=why, count_missing=False,
                        missing_hint="each read sees the last write before it")


def _pairs(answer: object) -> Verdict:
    n, m = SHIFT_PARAMS["N"], SHIFT_PARAMS["M"]
    return expect(A.integer(answer, "shift_memory_flow_pairs"), memory_flow_pairs(),
                  ((n - 1) * (m - 1), "{given} counts the value-based pairs (j' = j + 1); memory-based, every "
                                      "later j' < M reads what j wrote"),
                  ((n - 1) * m * m, "{given} counts every pair (j, j'), also those whose reader runs first or "
                                    "is the writer itself"),
                  otherwise="{given} is not the number of memory-based flow pairs at N = 5, M = 4: a pair is a "
                            "write of Z[i - 1] and a later instance that reads that element, whatever writes lie "
                            "between them")


def check_q7(shift_value_flow: object, shift_memory_flow_pairs: object) -> Verdict:
    """The value-based flow distances of ``shift.c`` and the number of memory-based flow pairs at
    ``N = 5, M = 4``."""
    return combine([("shift_value_flow", part(_value_based, shift_value_flow)),
                    ("shift_memory_flow_pairs", part(_pairs, shift_memory_flow_pairs))])


# -- Q8: an OpenMP pragma on the loop that carries no dependence (construction) --------------------------------

def _same_nest(code: StudentCode) -> Verdict:
    """The code without its pragmas must be the given nest: the same statement on the same points."""
    try:
        mine = parse(code.without_pragmas()).scop
    except PolylabError as err:
        raise A.AnswerError(f"polylab cannot read your nest (pragmas removed): {err.message}",
                            hint=err.hint or "keep the given loops; only add pragma lines (and braces)") from None
    ref = scop(PLANES).statements[0]
    if len(mine.statements) != 1 or mine.statements[0].iterators != ref.iterators:
        return wrong("your nest is not the given one: keep its three loops i, j, k in that order and its "
                     "statement; only add pragma lines (and braces)")
    st = mine.statements[0]
    same = st.domain.is_equal(ref.domain) and A.c_expression(st.text.rstrip(";")) == A.c_expression(
        ref.text.rstrip(";"))
    return right() if same else wrong("your nest runs other points or another statement than the given one: "
                                      "only add pragma lines (and braces)")


def _race(loop: Loop) -> str | None:
    """A pair of instances that the threads of ``loop`` would run at once although one depends on the other:
    the same outer iterators, different iterations of ``loop`` (None when the loop carries no dependence)."""
    st = scop(PLANES).statements[0]
    its = st.iterators
    d = loop.depth
    same = [f"{its[k]}' = {its[k]}" for k in range(d)]
    for differ in (f"{its[d]}' > {its[d]}", f"{its[d]}' < {its[d]}"):
        cond = " and ".join([*same, differ])
        pairs = isl.Map(f"[N] -> {{ {st.name}[{', '.join(its)}] -> {st.name}[{', '.join(x + chr(39) for x in its)}] "
                        f": {cond} }}")
        for dep in deps(PLANES):
            hit = dep.relation.intersect(pairs)
            if not hit.is_empty():
                p = hit.wrap().sample_point()
                c, at = point_coordinates(p), dict(parameter_values(p))
                src, snk = c[:3], c[3:]
                return (f"the loop {loop.iterator} carries the {dep.kind} dependence {dep.source_ref.text} -> "
                        f"{dep.sink_ref.text}: S0{list(src)} and S0{list(snk)} (at N = {at['N']}) are different "
                        f"iterations of {loop.iterator}, so two threads may run them at once, and the second "
                        "needs what the first writes")
    return None


def _private(code: StudentCode, loop: Loop) -> str | None:
    """Why an iterator of a loop inside ``loop`` would be shared between its threads (None when all are
    private: declared in their loop, or named in a private clause)."""
    clauses = set(re.findall(r"private\s*\(([^)]*)\)", loop.pragma or ""))
    named = {n.strip() for c in clauses for n in c.split(",")}
    inner = [lp for lp in code.loops if lp.outer[:loop.depth + 1] == (*loop.outer, loop.iterator)]
    shared = [lp.iterator for lp in inner if not lp.declared and lp.iterator not in named]
    if not shared:
        return None
    return (f"{', '.join(shared)} would be shared by the threads of the loop {loop.iterator}: every thread's "
            "inner loop would step the same variable, and their iterations would mix (each thread needs its own "
            "copy)")


@memo_by_text
def check_q8(omp_code: object) -> Verdict:
    """The given nest with ``#pragma omp parallel for`` on a loop that carries no dependence and private inner
    iterators (2/3: the dependence check), and the same outputs as the original at several thread counts
    (1/3: compiled and run, once the dependence check passes: a race need not show in a run)."""
    code = read_code(omp_code, "omp_code")
    nest = _same_nest(code)
    if not nest.correct:
        return nest
    pragmas = code.pragmas()
    if not pragmas:
        return wrong("omp_code has no #pragma omp parallel for: put one on the line before the loop to run in "
                     "parallel")
    lines = []
    for lp in pragmas:
        if not re.fullmatch(r"omp\s+parallel\s+for\b.*", lp.pragma or ""):
            lines.append(f"'#pragma {lp.pragma}' is not 'omp parallel for'")
            continue
        lines += [why for why in (_race(lp), _private(code, lp)) if why]
    if lines:   # a race that happens not to show in a run earns nothing: the run counts once the check passes
        return combine([("the dependence check", wrong(*lines)),
                        ("the run", wrong("not run: the dependence check must pass first"))], weights=[2, 1])
    threads = THREADS if supports_openmp() else (None,)
    run = judge_student_code(scop(PLANES), candidate_program(scop(PLANES), code), params={"N": PLANES_N},
                           threads=threads, what="your parallel nest")
    return combine([("the dependence check", right()), ("the run", run)], weights=[2, 1])


LAB = Lab(
    name="lab2",
    title="Dependence tests",
    notebook="lab2_dependences.ipynb",
    questions=(
        Question("q1", 2, ("sweep2d_distances",), check_q1, title="distance vectors of the sweep",
                 example="{(2, 0)}"),
        Question("q2", 3, ("Y_waw",), check_q2, title="the WAW dependence relation of the scatter",
                 kind="derivation", example='"[N] -> { S0[i, j] -> S0[i2, j2] : i2 = i and j2 = j }"'),
        Question("q3", 2, ("gcd_test",), check_q3, title="the GCD test as a function",
                 example="def gcd_test(coefficients, constant): ...",
                 cases=(Case(([2, -2], 1), "A[2i] against A[2i + 1]"),
                        Case(([3, -5], 2), "B[3i] against B[5i + 2]"),
                        Case(([4, 6], 3), "gcd 2 does not divide 3"))),
        Question("q4", 1, ("banerjee_bounds",), check_q4, title="Banerjee's bounds", example="(-1, 1)"),
        Question("q5", 1, ("conservative_tests",), check_q5, title="the tests that are too conservative",
                 kind="choice", example='{"gcd"}'),
        Question("q6", 2, ("sl3_raw", "sl3_war"), check_q6, title="RAW and WAR distances of sl3",
                 example="{(2, 0, 0)} and {(0, 2, 0)}"),
        Question("q7", 2, ("shift_value_flow", "shift_memory_flow_pairs"), check_q7,
                 title="memory- against value-based", example="{(1, 1)} and 10"),
        Question("q8", 3, ("omp_code",), check_q8, title="an OpenMP pragma on the parallel loop",
                 kind="construction", example='"#pragma omp parallel for\\nfor (i = 1; i < N; i++) ..."'),
    ),
)
