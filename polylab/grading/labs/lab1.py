"""Lab 1: affine accesses and iteration domains (``solutions/lab1_affine.ipynb``).

A reference ``X[e1]...[em]`` in a nest with iterators ``x`` touches the element ``F x + c`` (one row of
``F`` and one entry of ``c`` per subscript, one column of ``F`` per iterator). An iteration domain is the set
``{ x : A x + B p + b >= 0 }`` of integer points (``p`` the parameters): the students write the rows
``[A | B | b]``, one inequality per row, and the check compares the *sets* with isl, so any system that
describes the same points (rows in any order, redundant rows, scaled rows) is right. Every expected
answer is computed by the engine from the lab's own texts of the nests.
"""

from __future__ import annotations

import math
from fractions import Fraction

import islpy as isl

from polylab.grading import answers as A
from polylab.grading.checks import compare_calls, compare_isl, compare_matrices, part
from polylab.grading.kernels import SHIFT, scop
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.model import Statement

#: question 2: a nest with a coupled, scaled subscript
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
        return compare_matrices(got, exp_F, name="F", rows=rows, cols=st.iterators)

    def c_part(value: object) -> Verdict:
        got = A.vector(value, len(acc.offset), names[1])
        return compare_matrices([[Fraction(x) for x in got]], [[row[0] for row in exp_c]], name="c",
                                cols=rows)

    return combine([(names[0], part(f_part, F)), (names[1], part(c_part, c))])


def check_q1(Z_F: object, Z_c: object) -> Verdict:
    """``Z[i - 1]`` in the nest ``(i, j)``: ``F = [1 0]``, ``c = (-1)``."""
    return _f_and_c(SHIFT, "Z[i - 1]", Z_F, Z_c, ("Z_F", "Z_c"))


def check_q2(B_F: object, B_c: object) -> Verdict:
    """``B[i + 2 * j][j + 1]`` in the nest ``(i, j)``: ``F = [[1, 2], [0, 1]]``, ``c = (0, 1)``."""
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
    given = system_set(rows, st, params)
    if given.is_equal(domain):
        return right()
    lines = []
    for k, row in enumerate(rows, 1):
        half = system_set((row,), st, params)
        if not domain.is_subset(half):
            cut = domain.subtract(half)
            lines.append(f"row {k} ({row_text(row, columns)}) excludes {cut.sample_point()}, which the loops "
                         "run: check its sign and its constant")
    if not lines:
        lines.append(compare_isl(given, domain, what="your system").feedback[0]
                     + ": a bound is missing or too loose")
    right_rows = len(rows) - sum(1 for ln in lines if ln.startswith("row "))
    return partial(right_rows, len(rows) + (1 if not any(ln.startswith("row ") for ln in lines) else 0), *lines)


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


def _strided_count(answer: object) -> Verdict:
    n = A.integer(answer, "strided_count")
    st = statement(STRIDED)
    fixed = st.domain.intersect_params(isl.Set(f"[N] -> {{ : N = {STRIDED_N} }}"))
    want = fixed.count_val().to_python()
    if n == want:
        return right()
    if n == STRIDED_N - 2:  # every i of 2 <= i < N
        return wrong(f"{n} counts every i from 2 to {STRIDED_N - 1}; the loop steps by 3")
    return wrong(f"{n} instances is not right: list the values of i the loop takes for N = {STRIDED_N}")


def check_q5(strided_domain: object, strided_count: object) -> Verdict:
    """The strided loop's domain in isl notation (an existential or a ``mod``) and its size at N = 20."""
    return combine([("strided_domain", part(_strided_domain, strided_domain)),
                    ("strided_count", part(_strided_count, strided_count))])


# -- Q6: counting the triangle ----------------------------------------------------------------------------

def triangle_count_reference(n: int) -> int:
    """The number of points of ``0 <= j <= i < n``, counted exactly by isl."""
    st = statement(TRIANGLE)
    fixed = st.domain.intersect_params(isl.Set(f"[N] -> {{ : N = {int(n)} }}"))
    return int(fixed.count_val().to_python())


def check_q6(calls: Calls) -> Verdict:
    """``triangle_count(n)``: the number of instances of the triangular nest, for any ``n >= 0``."""
    return compare_calls(calls, triangle_count_reference,
                         equal=lambda got, want: not isinstance(got, bool) and isinstance(got, (int, float))
                         and got == want)


LAB = Lab(
    name="lab1",
    title="Affine accesses and iteration domains",
    notebook="lab1_affine.ipynb",
    questions=(
        Question("q1", 2, ("Z_F", "Z_c"), check_q1, title="F and c of Z[i - 1]", example="[[0, 1]] and [2]"),
        Question("q2", 2, ("B_F", "B_c"), check_q2, title="F and c of B[i + 2 * j][j + 1]",
                 example="[[1, 0], [0, 1]] and [0, 0]"),
        Question("q3", 2, ("rect_system",), check_q3, title="the rectangle as A x + B p + b >= 0",
                 example="[[1, 0, 0, 0, 0], ...]"),
        Question("q4", 2, ("tri_system",), check_q4, title="the triangle as A x + B p + b >= 0",
                 example="[[1, 0, 0, 0], ...]"),
        Question("q5", 2, ("strided_domain", "strided_count"), check_q5, title="a strided domain",
                 example='"[N] -> { S0[i] : 0 <= i < N }" and 7'),
        Question("q6", 2, ("triangle_count",), check_q6, title="counting the triangle",
                 example="def triangle_count(n): ...",
                 cases=(Case((4,), "n = 4"), Case((10,), "n = 10"), Case((1,), "n = 1"))),
    ),
)
