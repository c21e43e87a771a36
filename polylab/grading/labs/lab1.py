"""Lab 1: affine accesses and iteration domains (``solutions/lab1_affine.ipynb``).

A reference ``X[e1]...[em]`` in a nest with iterators ``x`` touches the element ``F x + c`` (one row of
``F`` and one entry of ``c`` per subscript, one column of ``F`` per iterator). An iteration domain is the set
``{ x : A x + B p + b >= 0 }`` of integer points (``p`` the parameters): the students write the rows
``[A | B | b]``, one inequality per row, and the check compares the *sets* with isl, so any system that
describes the same points (rows in any order, redundant rows, scaled rows) is right. A system earns the
share of the domain's bounds (its irredundant constraints) that its rows *which keep every point of the
domain* imply: a row that cuts a point off earns nothing, and a vacuous row (``1 >= 0``) implies no bound.

The derivation (question 7) is the footprint of an access, ``{ F x + c : x in D }``, written by the
student as an isl set: eliminating the iterators from the domain's inequalities (here by substitution,
``F`` being unimodular). The construction (question 8) is a loop nest that scans a guarded domain with
bounds instead of a test: it is checked for *scanning equality* (the same points, from the domain of the
student's nest) and compiled, run and compared with the guarded original (the same order: the statement
depends on it). Every expected answer is computed by the engine from the lab's own texts of the nests.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import islpy as isl

from polylab.errors import PolylabError
from polylab.frontend import parse
from polylab.grading import answers as A
from polylab.grading.checks import compare_calls, compare_isl, compare_matrices, expect, memo_by_text, part
from polylab.grading.kernels import SHIFT, scop
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.grading.student_code import StudentCode, candidate_program, judge_student_code, read_code
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.model import Scop, Statement
from polylab.model.islutil import parameter_values, point_coordinates

#: question 2 (and 7): a nest with a coupled, scaled subscript
GATHER = """double A[N][N];
double B[3 * N][N + 1];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    A[i][j] = B[i + 2 * j][j + 1];
"""

RECTANGLE = """double R[N][M];
for (i = 0; i < N; i++)
  for (j = 0; j < M; j++)
    R[i][j] = 1.0;
"""

TRIANGLE = """double L[N][N];
for (i = 0; i < N; i++)
  for (j = 0; j <= i; j++)
    L[i][j] = 1.0;
"""

STRIDED = """double s[N];
for (i = 2; i < N; i += 3)
  s[i] = 0.0;
"""

#: question 8: a domain scanned with a test; the student writes the bounds instead
GUARDED = """double trace[N][N];
double value[1];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    if (j <= 2 * i && i + j <= N - 1) {
      value[0] = 0.5 * value[0] + i - 0.25 * j;
      trace[i][j] = value[0];
    }
"""
#: the declarations the student's nest of question 8 is read with, and the size it runs at
GUARDED_DECLARATIONS = "double trace[N][N];\ndouble value[1];\n"
GUARDED_N = 13

#: question 5 asks for the number of instances of the strided loop at this N
STRIDED_N = 20


def statement(source: str) -> Statement:
    return scop(source).statements[0]


def access(source: str, text: str):
    """The access of the first statement of ``source`` written ``text``."""
    want = A.c_expression(text)
    return next(a for a in statement(source).accesses if A.c_expression(a.text) == want)


# -- Q1 and Q2: F and c ------------------------------------------------------------------------------------

def _f_and_c(source: str, text: str, F: object, c: object, names: tuple[str, str]) -> Verdict:
    acc = access(source, text)
    st = statement(source)
    rows = [f"subscript {k + 1}" for k in range(acc.matrix.rows)]
    exp_F = [[Fraction(int(x)) for x in acc.matrix.row(r)] for r in range(acc.matrix.rows)]
    exp_c = [[Fraction(int(x))] for x in acc.offset]

    def f_part(value: object) -> Verdict:
        got = A.matrix(value, (acc.matrix.rows, acc.matrix.cols), names[0])
        return compare_matrices(got, exp_F, name="F", rows=rows, cols=st.iterators,
                                count_only="row r, column k: the coefficient of the k-th loop iterator in the "
                                           "r-th subscript")

    def c_part(value: object) -> Verdict:
        got = A.vector(value, len(acc.offset), names[1], entry="subscript")
        return compare_matrices([[Fraction(x) for x in got]], [[row[0] for row in exp_c]], name="c",
                                cols=rows, count_only="entry r: the constant of the r-th subscript")

    return combine([(names[0], part(f_part, F)), (names[1], part(c_part, c))])


def check_q1(Z_F: object, Z_c: object) -> Verdict:
    """``Z[i - 1]`` in the nest ``(i, j)``."""
    return _f_and_c(SHIFT, "Z[i - 1]", Z_F, Z_c, ("Z_F", "Z_c"))


def check_q2(B_F: object, B_c: object) -> Verdict:
    """``B[i + 2 * j][j + 1]`` in the nest ``(i, j)``."""
    return _f_and_c(GATHER, "B[i + 2 * j][j + 1]", B_F, B_c, ("B_F", "B_c"))


# -- Q3 and Q4: A x + B p + b >= 0 ------------------------------------------------------------------------

def _term(coefficient: Fraction, name: str) -> str:
    return f"{coefficient.numerator}*{name}" if coefficient.denominator == 1 else f"({coefficient})*{name}"


def row_text(row: tuple[Fraction, ...], columns: tuple[str, ...]) -> str:
    """``r . (x, p, 1) >= 0`` as readable text (``-i + N - 1 >= 0``)."""
    terms = []
    for c, name in zip(row, (*columns, "1")):
        if c == 0:
            continue
        mag = abs(c)
        body = str(mag) if name == "1" else (name if mag == 1 else f"{mag}{name}")
        terms.append(("- " if c < 0 else "+ ") + body)
    text = " ".join(terms).lstrip("+ ") if terms else "0"
    return (("-" + text[2:]) if text.startswith("- ") else text) + " >= 0"


def system_set(rows: tuple[tuple[Fraction, ...], ...], st: Statement, params: tuple[str, ...]) -> isl.Set:
    """``{ S[x] : r . (x, p, 1) >= 0 for every row r }`` (rows with fractions are scaled to integers)."""
    columns = (*st.iterators, *params)
    cons = []
    for row in rows:
        scale = 1
        for c in row:
            scale = scale * c.denominator // math.gcd(scale, c.denominator)
        terms = " + ".join(_term(c * scale, n) for c, n in zip(row, (*columns, "1")) if c != 0) or "0"
        cons.append(f"{terms} >= 0")
    text = f"[{', '.join(params)}] -> {{ {st.name}[{', '.join(st.iterators)}] : {' and '.join(cons) or 'true'} }}"
    return isl.Set(text)


def domain_bounds(domain: isl.Set) -> tuple[isl.Set, ...]:
    """The half-spaces of the irredundant constraints of a (convex) domain: the bounds a system must imply."""
    out: list[isl.Set] = []
    for bset in domain.remove_redundancies().get_basic_sets():
        for con in bset.get_constraints():
            out.append(isl.Set.from_basic_set(isl.BasicSet.universe(bset.get_space()).add_constraint(con)))
    return tuple(out)


def _system(source: str, answer: object, what: str) -> Verdict:
    """The domain of ``source``'s statement against the system ``answer`` (rows ``[A | B | b]``)."""
    st = statement(source)
    params = tuple(scop(source).parameters)
    columns = (*st.iterators, *params)
    rows = A.matrix(answer, None, what)
    if not rows:
        raise A.AnswerError(f"{what} has no rows", hint="one row per inequality, e.g. [1, 0, 0, 0] for i >= 0")
    if len(rows[0]) != len(columns) + 1:
        raise A.AnswerError(f"the rows of {what} have {len(rows[0])} entries, not {len(columns) + 1}",
                            hint=f"one column per iterator and parameter, then the constant: {', '.join(columns)}, 1")
    domain = st.domain.remove_redundancies()
    if system_set(rows, st, params).is_equal(domain):
        return right()
    lines, kept = [], []
    for k, row in enumerate(rows, 1):
        half = system_set((row,), st, params)
        if domain.is_subset(half):
            kept.append(row)
            continue
        cut = domain.subtract(half)
        lines.append(f"row {k} ({row_text(row, columns)}) excludes {cut.sample_point()}, which the loops "
                     "run: check its sign and its constant")
    given = system_set(tuple(kept), st, params).intersect_params(domain.params())  # where the loops run
    bounds = domain_bounds(domain)
    implied = sum(1 for b in bounds if given.is_subset(b))
    if implied < len(bounds):
        lines.append(f"the rows that keep every point also allow {given.subtract(domain).sample_point()}, which "
                     "the loops never run: a bound is missing or too loose")
    return partial(implied, len(bounds), *lines)


def check_q3(rect_system: object) -> Verdict:
    """The rectangle ``0 <= i < N, 0 <= j < M``: rows over ``(i, j, N, M, 1)``."""
    return _system(RECTANGLE, rect_system, "rect_system")


def check_q4(tri_system: object) -> Verdict:
    """The triangle ``0 <= j <= i < N``: rows over ``(i, j, N, 1)``."""
    return _system(TRIANGLE, tri_system, "tri_system")


# -- Q5: a strided domain -----------------------------------------------------------------------------------

def _strided_domain(answer: object) -> Verdict:
    st = statement(STRIDED)
    given = A.isl_set(answer, "strided_domain")
    if given.get_tuple_name() is None and given.dim(isl.dim_type.set) == 1:
        given = given.set_tuple_name(st.name)  # an unnamed tuple is fair: the nest has one statement
    if not given.get_space().is_equal(st.domain.get_space()):
        return wrong(f"strided_domain lives in {given.get_space()}, not in {st.domain.get_space()} "
                     "(one iterator i and the parameter N)")
    return compare_isl(given, st.domain, what="strided_domain", element="instance")


def _fixed_count(domain: isl.Set, n: int) -> int:
    return int(domain.intersect_params(isl.Set(f"[N] -> {{ : N = {int(n)} }}")).count_val().to_python())


def _strided_count(answer: object) -> Verdict:
    n = A.integer(answer, "strided_count")
    return expect(n, _fixed_count(statement(STRIDED).domain, STRIDED_N),
                  (STRIDED_N - 2, f"{{given}} counts every i from 2 to {STRIDED_N - 1}; the loop steps by 3"),
                  (len(range(0, STRIDED_N, 3)), f"{{given}} counts a loop with another start: list the values of "
                                                 f"i this one takes for N = {STRIDED_N}"),
                  otherwise=f"{{given}} instances is not right: list the values of i the loop takes for "
                            f"N = {STRIDED_N}")


def check_q5(strided_domain: object, strided_count: object) -> Verdict:
    """The strided loop's domain in isl notation (an existential or a ``mod``) and its size at N = 20."""
    return combine([("strided_domain", part(_strided_domain, strided_domain)),
                    ("strided_count", part(_strided_count, strided_count))])


# -- Q6: counting the triangle ----------------------------------------------------------------------------

def triangle_count_reference(n: int) -> int:
    """The number of points of ``0 <= j <= i < n``, counted exactly by isl."""
    return _fixed_count(statement(TRIANGLE).domain, n)


def check_q6(calls: Calls) -> Verdict:
    """``triangle_count(n)``: the number of instances of the triangular nest, for any ``n >= 0``."""
    return compare_calls(calls, triangle_count_reference,
                         equal=lambda got, want: not isinstance(got, bool) and isinstance(got, (int, float))
                         and got == want)


# -- Q7: the footprint of the gather (derivation) -------------------------------------------------------------

@cache
def gather_footprint() -> isl.Set:
    """``{ B[i + 2j, j + 1] : (i, j) in D }``: the elements of ``B`` the gather reads (isl: the image of
    the domain under the access relation)."""
    acc = access(GATHER, "B[i + 2 * j][j + 1]")
    return acc.relation.intersect_domain(statement(GATHER).domain).range().coalesce()


def _preimage_reason(point: isl.Point) -> str:
    """Why the element ``point`` of ``B`` is not read: the instance that would read it and the bound it
    breaks (``i = a - 2b + 2``, ``j = b - 1``: the access is one-to-one)."""
    a, b = point_coordinates(point)
    n = next(iter(_param_values(point).values()))
    i, j = a - 2 * b + 2, b - 1
    broken = [name for name, ok in (("0 <= i", i >= 0), (f"i < N = {n}", i < n), ("0 <= j", j >= 0),
                                    (f"j < N = {n}", j < n)) if not ok]
    return (f"only the instance (i, j) = ({i}, {j}) could read it, and it breaks {' and '.join(broken)}"
            if broken else "")


def _param_values(point: isl.Point) -> dict[str, int]:
    return dict(parameter_values(point))


def check_q7(gather_footprint_set: object) -> Verdict:
    """The footprint of ``B[i + 2 * j][j + 1]`` over the gather's domain, as isl text over ``B[a, b]``."""
    given = A.isl_set(gather_footprint_set, "gather_footprint_set")
    want = gather_footprint()
    if given.get_tuple_name() is None and given.dim(isl.dim_type.set) == 2:
        given = given.set_tuple_name("B")
    return compare_isl(given, want, what="gather_footprint_set", space_hint="the elements B[a, b] and the parameter N",
                       explain_extra=_extra_element, explain_missing=_missing_element)


def _extra_element(p: isl.Point) -> str:
    reason = _preimage_reason(p)
    return f"your set contains {p}, which the gather never reads" + (f": {reason}" if reason else "")


def _missing_element(p: isl.Point) -> str:
    a, b = point_coordinates(p)
    return f"your set lacks {p}, which the instance (i, j) = ({a - 2 * b + 2}, {b - 1}) reads"


# -- Q8: scanning a domain with bounds (construction) ------------------------------------------------------------

def _student_scop(code_text: str) -> Scop:
    try:
        return parse(GUARDED_DECLARATIONS + code_text).scop
    except PolylabError as err:
        raise A.AnswerError(f"polylab cannot read your nest: {err.message}", hint=err.hint or "") from None


def _trace_domain(s: Scop) -> isl.Set | None:
    """The points the statement that writes ``trace`` runs, named by the element it writes there
    (``trace[i][j]`` at ``(i, j)``), so that the student's loop counters may have any names; None without
    such a statement inside two loops."""
    for st in s.statements:
        write = next((a for a in st.writes if a.array == "trace"), None)
        if write is not None:
            return write.relation.intersect_domain(st.domain).range() if st.depth == 2 else None
    return None


def _scan(code: StudentCode) -> Verdict:
    if code.tests:
        return wrong("your nest still tests each point with an if: scan the domain with the loop bounds "
                     "alone (min and max are defined)")
    want = _trace_domain(scop(GUARDED))
    got = _trace_domain(_student_scop(code.text))
    if got is None:
        return wrong("your nest does not run its assignment to trace inside two loops (one per subscript)")
    if got.is_equal(want):
        return right()
    lines = []
    if not got.subtract(want).is_empty():
        p = got.subtract(want).sample_point()
        lines.append(f"your loops run the point (i, j) = {point_coordinates(p)} (it writes trace{_subscripts(p)}) "
                     f"at {_at(p)}, which the original never runs")
    if not want.subtract(got).is_empty():
        p = want.subtract(got).sample_point()
        lines.append(f"your loops never run the point (i, j) = {point_coordinates(p)} (it writes "
                     f"trace{_subscripts(p)}) at {_at(p)}, which the original runs")
    return wrong(*lines)


def _subscripts(point: isl.Point) -> str:
    return "".join(f"[{v}]" for v in point_coordinates(point))


def _at(point: isl.Point) -> str:
    return ", ".join(f"{k} = {v}" for k, v in _param_values(point).items())


@memo_by_text
def check_q8(scan_code: object) -> Verdict:
    """A nest without a test that runs the guarded statements for the same points (scanning equality, 2/3)
    and in the same order (compiled, run and compared with the original at ``N = 13``, 1/3)."""
    code = read_code(scan_code, "scan_code")
    scan = _scan(code)
    if not scan.correct:
        return combine([("the points", scan), ("the run", wrong("not run: the points must be right first"))],
                       weights=[2, 1])
    run = judge_student_code(scop(GUARDED), candidate_program(scop(GUARDED), code), params={"N": GUARDED_N},
                           what="your nest")
    return combine([("the points", scan), ("the run", run)], weights=[2, 1])


LAB = Lab(
    name="lab1",
    title="Affine accesses and iteration domains",
    notebook="lab1_affine.ipynb",
    questions=(
        Question("q1", 2, ("Z_F", "Z_c"), check_q1, title="F and c of Z[i - 1]", example="[[0, 1]] and (5,)"),
        Question("q2", 2, ("B_F", "B_c"), check_q2, title="F and c of B[i + 2 * j][j + 1]",
                 example="[[3, 3], [3, 3]] and (2, 2)"),
        Question("q3", 2, ("rect_system",), check_q3, title="the rectangle as A x + B p + b >= 0",
                 example="[[1, 0, 0, 0, -1]]"),
        Question("q4", 2, ("tri_system",), check_q4, title="the triangle as A x + B p + b >= 0",
                 example="[[1, 0, 0, -1]]"),
        Question("q5", 2, ("strided_domain", "strided_count"), check_q5, title="a strided domain",
                 example='"[N] -> { S0[i] : 0 <= i < N }" and 100'),
        Question("q6", 2, ("triangle_count",), check_q6, title="counting the triangle",
                 example="def triangle_count(n): ...",
                 cases=(Case((4,), "n = 4"), Case((10,), "n = 10"), Case((1,), "n = 1"))),
        Question("q7", 3, ("gather_footprint_set",), check_q7, title="the elements of B the gather reads",
                 kind="derivation", example='"[N] -> { B[a, b] : 0 <= a < 3N and 0 <= b <= N }"'),
        Question("q8", 3, ("scan_code",), check_q8, title="scanning the guarded domain with bounds",
                 kind="construction", example='"for (i = 0; i < N; i++) ..."'),
    ),
)
