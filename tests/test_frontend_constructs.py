"""Each supported construct is modelled exactly; each unsupported one is refused with line, column and reason."""

from __future__ import annotations

import islpy as isl
import pytest
import sympy

from polylab.errors import NotAffineError, PolylabError, SourceSyntaxError
from polylab.frontend import parse
from polylab.model.expr import ArrayRef, Binary, Call, Cast, Cond, Const, Name, walk


def scop_of(text: str, **kw):
    return parse(text, **kw).scop


def dom(text: str, k: int = 0) -> isl.Set:
    return scop_of(text).statements[k].domain


def same(a, b: str) -> bool:
    want = isl.Set(b) if isinstance(a, isl.Set) else isl.Map(b)
    return a.is_equal(want.align_params(a.get_space()))


# -- loops ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loop, domain", [
    ("for (i = 0; i < N; i++)", "[N] -> { S0[i] : 0 <= i < N }"),
    ("for (i = 0; i <= N; ++i)", "[N] -> { S0[i] : 0 <= i <= N }"),
    ("for (int i = 2; i < N; i += 1)", "[N] -> { S0[i] : 2 <= i < N }"),
    ("for (i = 0; i < N; i += 3)", "[N] -> { S0[i] : 0 <= i < N and exists e: i = 3e }"),
    ("for (i = 1; i < N; i = i + 2)", "[N] -> { S0[i] : 1 <= i < N and exists e: i = 2e + 1 }"),
    ("for (i = N; i > 0; i--)", "[N] -> { S0[i] : 0 < i <= N }"),
    ("for (i = N; i >= 0; i -= 2)", "[N] -> { S0[i] : 0 <= i <= N and exists e: N - i = 2e }"),
    ("for (i = 0; 2 * i < N; i++)", "[N] -> { S0[i] : 0 <= i and 2i < N }"),
    ("for (i = 0; i < N && i < M; i++)", "[N, M] -> { S0[i] : 0 <= i < N and i < M }"),
    ("for (i = 0; i < (N < M ? N : M); i++)", "[N, M] -> { S0[i] : 0 <= i < N and i < M }"),
    ("for (i = 0; i < min(N, M); i++)", "[N, M] -> { S0[i] : 0 <= i < N and i < M }"),
    ("for (i = max(0, N - 5); i < N; i++)", "[N] -> { S0[i] : 0 <= i < N and i >= N - 5 }"),
    ("for (i = 0; i != 10; i++)", "{ S0[i] : 0 <= i <= 9 }"),
    ("for (i = 0; i < 0; i++)", "{ S0[i] : false }"),
    ("for (i = N; i < N; i++)", "[N] -> { S0[i] : false }"),
    ("for (i = 0; i > 5; i++)", "{ S0[i] : false }"),
    ("for (i = 0; i < N || i < 3; i++)", "[N] -> { S0[i] : 0 <= i and (i < N or i < 3) }"),
    ("for (i = 0; i < N / 2; i++)", "[N] -> { S0[i] : 0 <= i and (N >= 0 and 2i + 2 <= N or N < 0 and i < 0) }"),
    ("for (i = 10; i >= 0 && i >= N; i--)", "[N] -> { S0[i] : 0 <= i <= 10 and i >= N }"),
])
def test_loop_domains(loop, domain):
    text = f"double a[100];\n{loop}\n  a[0] = a[0] + 1.0;\n"
    d = dom(text)
    assert same(d, domain), str(d)


def test_loop_stops_at_first_failing_iteration():
    # the condition holds again later (i > 3 fails at 0): C runs zero iterations
    assert dom("for (i = 0; i < 2 || i > 3; i++) a[i] = 0;").is_equal(isl.Set("{ S0[i] : 0 <= i <= 1 }"))


def test_downward_loop_schedule_order():
    scop = scop_of("for (i = N; i > 0; i -= 2) a[i] = a[i + 1];")
    assert scop.schedule_map.is_equal(isl.UnionMap(
        "[N] -> { S0[i] -> [-i] : 0 < i <= N and exists e: N - i = 2e }"))


def test_triangular_and_imperfect_nest_schedule():
    text = """for (i = 0; i < N; i++) {
  for (j = i; j < N; j++) {
    a[i][j] = 0;
    for (k = 0; k < j; k++)
      a[i][j] += b[i][k];
    c[j] = a[i][j];
  }
  d[i] = 1;
}"""
    scop = scop_of(text)
    assert [s.iterators for s in scop.statements] == [("i", "j"), ("i", "j", "k"), ("i", "j"), ("i",)]
    assert [s.line for s in scop.statements] == [3, 5, 6, 8]
    want = isl.UnionMap("[N] -> { S0[i, j] -> [i, 0, j, 0, 0]; S1[i, j, k] -> [i, 0, j, 1, k]; "
                        "S2[i, j] -> [i, 0, j, 2, 0]; S3[i] -> [i, 1, 0, 0, 0] }")
    assert scop.schedule_map.is_equal(want.intersect_domain(scop.domain))
    assert same(scop.statements[1].domain, "[N] -> { S1[i, j, k] : 0 <= i <= j < N and 0 <= k < j }")


def test_schedule_tree_bands():
    scop = scop_of("for (i = 0; i < N; i++) { a[i] = 0; for (j = 0; j < N; j++) b[i][j] = a[i]; }")
    text = str(scop.schedule)
    assert "schedule" in text and "sequence" in text


# -- guards ----------------------------------------------------------------------------------------------------
def test_if_else_with_logical_operators():
    text = """for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    if ((i < j && !(j % 2 == 0)) || i == 0)
      a[i][j] = 1;
    else
      a[j][i] += 2;"""
    scop = scop_of(text)
    then = "[N] -> { S0[i, j] : 0 <= i < N and 0 <= j < N and ((i < j and j % 2 = 1) or i = 0) }"
    other = "[N] -> { S1[i, j] : 0 <= i < N and 0 <= j < N and not ((i < j and j % 2 = 1) or i = 0) }"
    assert same(scop.statements[0].domain, then)
    assert same(scop.statements[1].domain, other)
    assert scop.statements[1].body.op == "+="


def test_guard_with_parameters_and_equalities():
    assert same(dom("for (i = 0; i < N; i++) if (i == M) a[i] = 0;"),
                "[N, M] -> { S0[i] : 0 <= i < N and i = M }")
    assert same(dom("for (i = 0; i < N; i++) if (i != M) a[i] = 0;"),
                "[N, M] -> { S0[i] : 0 <= i < N and i != M }")
    assert same(dom("for (i = 0; i < N; i++) if (i % 3) a[i] = 0;"),
                "[N] -> { S0[i] : 0 <= i < N and i % 3 != 0 }")


# -- subscripts ------------------------------------------------------------------------------------------------
def test_modulo_and_division_use_c_truncation():
    scop = scop_of("for (t = -3; t < T; t++) for (i = -5; i < N; i++) a[t % 2][i / 2] = a[(t + 1) % 2][i / -2];")
    write = scop.statements[0].writes[0]
    read = scop.statements[0].reads[0]
    # C semantics: -3 % 2 == -1, -5 / 2 == -2, -5 / -2 == 2
    pt = isl.Map("[T, N] -> { S0[-3, -5] -> a[-1, -2] : T = 0 and N = 0 }")
    assert not write.relation.intersect(pt.align_params(write.relation.get_space())).is_empty()
    pt2 = isl.Map("[T, N] -> { S0[-3, -5] -> a[0, 2] : T = 0 and N = 0 }")
    assert not read.relation.intersect(pt2.align_params(read.relation.get_space())).is_empty()
    assert write.matrix is None and not write.is_affine  # division: no F x + c view


def test_affine_subscripts_matrix_view():
    st = scop_of("for (i = 0; i < N; i++) for (j = 0; j < M; j++) a[2 * i - j + N][3] = b[j + 1];").statements[0]
    w = st.writes[0]
    assert w.matrix == sympy.Matrix([[2, -1], [0, 0]])
    assert w.offset == sympy.Matrix([sympy.Symbol("N", integer=True), 3])
    assert st.reads[0].matrix == sympy.Matrix([[0, 1]]) and list(st.reads[0].offset) == [1]


def test_modulo_subscript_ping_pong():
    st = scop_of("for (t = 0; t < T; t++) for (i = 1; i < N - 1; i++) "
                 "a[(t + 1) % 2][i] = a[t % 2][i - 1] + a[t % 2][i + 1];").statements[0]
    assert same(st.writes[0].relation,
                "[T, N] -> { S0[t, i] -> a[(t + 1) mod 2, i] : 0 <= t < T and 1 <= i < N - 1 }")


# -- statements ------------------------------------------------------------------------------------------------
def test_compound_assignments_increments_and_rewrites():
    scop = scop_of("for (i = 0; i < N; i++) { a[i] -= 1; a[i] *= 2; a[i] /= 3; a[i]++; --a[i]; a[i] %= 3; }")
    ops = [s.body.op for s in scop.statements]
    assert ops == ["-=", "*=", "/=", "+=", "-=", "="]
    assert all([a.kind for a in s.accesses] == ["read", "write"] for s in scop.statements)
    last = scop.statements[-1].body
    assert isinstance(last.value, Binary) and last.value.op == "%"
    assert isinstance(last.value.left, ArrayRef) and last.value.left.access == 0
    assert last.target.access == 1
    assert scop.statements[3].code() == "a[i] += 1;"


def test_scalars_written_in_region_are_zero_dimensional_arrays():
    scop = scop_of("double s;\ns = 0.0;\nfor (i = 0; i < N; i++)\n  s += a[i];\nb[0] = s;")
    s0, s1, s2 = scop.statements
    assert s0.iterators == () and same(s0.domain, "[N] -> { S0[] }")
    assert same(s1.accesses[0].relation, "[N] -> { S1[i] -> s[] : 0 <= i < N }")
    assert [a.array for a in s1.accesses] == ["s", "a", "s"]
    assert isinstance(s2.body.value, ArrayRef) and s2.body.value.indices == ()
    arrays = {a.name: a for a in scop.arrays}
    assert arrays["s"].rank == 0 and arrays["s"].declared and arrays["s"].ctype == "double"


def test_math_calls_conditional_expressions_and_casts():
    scop = scop_of("double x[N]; float f = 2.5;\nfor (i = 0; i < N; i++)\n"
                   "  x[i] = sqrt(x[i]) + fmax(x[i], 0.0) * (x[i] > 0 ? x[i] : -x[i]) + (double) i / f;")
    st = scop.statements[0]
    nodes = list(walk(st.body.value))
    assert {n.func for n in nodes if isinstance(n, Call)} == {"sqrt", "fmax"}
    assert any(isinstance(n, Cond) for n in nodes) and any(isinstance(n, Cast) for n in nodes)
    assert [a.kind for a in st.accesses] == ["read"] * 5 + ["write"]
    assert [(s.name, s.ctype, s.value) for s in scop.scalars] == [("f", "float", "2.5")]
    assert Name("f") in nodes and Name("i") in nodes
    for n in nodes:
        if isinstance(n, ArrayRef):
            assert st.accesses[n.access].text == "x[i]"


def test_parameters_and_constants():
    scop = scop_of("const int K = 4;\nint L = 2;\nfor (i = 0; i < N; i += K) a[i + L] = M;")
    assert scop.parameters == ("N", "M")
    assert dict(scop.constants) == {"K": 4, "L": 2}
    assert same(scop.statements[0].domain, "[N, M] -> { S0[i] : 0 <= i < N and exists e: i = 4e }")
    assert scop.statements[0].body.target.indices[1:] == () and \
        scop.statements[0].body.target.indices[0] == Binary("+", Name("i"), Const("2", "int"))


def test_define_constants_and_comments_keep_coordinates():
    text = "#define SIZE 16\n/* comment\n   spanning */ double a[SIZE];\n// x\nfor (i = 0; i < SIZE; i++) a[i] = 0;"
    scop = scop_of(text)
    assert scop.statements[0].line == 5 and scop.statements[0].location.column == 28
    assert scop.arrays[0].extents == ("16",)
    assert same(scop.statements[0].domain, "{ S0[i] : 0 <= i < 16 }")


def test_inferred_extents():
    scop = scop_of("for (i = 0; i < N; i++) a[i + 1] = b[2 * i][i];")
    arrays = {a.name: a for a in scop.arrays}
    assert not arrays["a"].declared and not arrays["b"].declared
    for n in (1, 5, 9):
        assert eval(arrays["a"].extents[0], {"N": n}) == n + 1
        assert eval(arrays["b"].extents[0], {"N": n}) == 2 * n - 1
        assert eval(arrays["b"].extents[1], {"N": n}) == n


def test_statement_outside_loops_and_empty_body_loop():
    scop = scop_of("x[0] = 1;\nfor (i = 0; i < N; i++) ;\nfor (i = 0; i < N; i++) { }\ny[1] = x[0];")
    assert [s.iterators for s in scop.statements] == [(), ()]
    assert scop.schedule_map.is_equal(isl.UnionMap("{ S0[] -> [0]; S1[] -> [1] }"))


def test_pragma_scop_in_function():
    text = """#include <math.h>
void kernel(int n, double A[n][n], double alpha) {
  int i, j;
  A[0][0] = 1.0;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = alpha * A[j][i];
#pragma endscop
}
"""
    prog = parse(text)
    assert len(prog.scops) == 1
    scop = prog.scop
    assert scop.parameters == ("n",) and [s.name for s in scop.scalars] == ["alpha"]
    assert scop.arrays[0].extents == ("n", "n")
    assert scop.statements[0].line == 8
    assert scop.source.startswith("for (i = 0; i < n; i++)") and scop.source.endswith("A[j][i];")


def test_pragma_scop_region_must_be_affine():
    text = "void f(int n, double *a) {\n#pragma scop\n  for (int i = 0; i < n; i++)\n    a[i] = 0;\n#pragma endscop\n}\n"
    with pytest.raises(NotAffineError) as info:
        parse(text)
    assert info.value.location.line == 4


def test_pragma_without_end_is_an_error():
    with pytest.raises(SourceSyntaxError):
        parse("void f(int n, double a[10]) {\n#pragma scop\n  for (int i = 0; i < n; i++) a[i] = 0;\n}\n")


# -- refusals ------------------------------------------------------------------------------------------------
REFUSALS = [
    ("for (i = 0; i < N; i++) {\n  if (i > 3) break;\n  a[i] = 0;\n}", 2, 14, "break"),
    ("for (i = 0; i < N; i++) {\n  continue;\n}", 2, 3, "continue"),
    ("for (i = 0; i < N; i++)\n  return;", 2, 3, "return"),
    ("for (i = 0; i < N; i++) {\n  goto out;\n}", 2, 3, "goto"),
    ("for (i = 0; i < N; i++)\n  *p = 1;", 2, 4, "not an array element"),
    ("for (i = 0; i < N; i++)\n  a[i] = *p;", 2, 11, "pointer"),
    ("double *p;\nfor (i = 0; i < N; i++)\n  p[i] = 0;", 3, 3, "pointer"),
    ("for (i = 0; i < N; i++)\n  foo(a[i]);", 2, 3, "side effects"),
    ("for (i = 0; i < N; i++)\n  a[i] = printf(\"x\");", 2, 10, "side effects"),
    ("double x;\nfor (i = 0; i < x; i++)\n  a[i] = 0;", 2, 17, "double"),
    ("for (i = 0; i < 2.5; i++)\n  a[i] = 0;", 1, 17, "integer"),
    ("N = 5;\nfor (i = 0; i < N; i++)\n  a[i] = 0;", 2, 17, "assigned inside the region"),
    ("for (i = 0; i < N; i++) {\n  a[i] = 0;\n  i = i + 1;\n}", 3, 3, "written inside the loop body"),
    ("for (i = 0; i < N; i += M)\n  a[i] = 0;", 1, 25, "not a constant"),
    ("for (i = 0; i < N; i *= 2)\n  a[i] = 0;", 1, 20, "does not add a constant"),
    ("for (i = 0; i < N; i++)\n  for (i = 0; i < N; i++)\n    a[i] = 0;", 2, 8, "enclosing loop"),
    ("i = 0;\nwhile (i < N) {\n  a[i] = 0;\n}", 2, 1, "not a counted loop"),
    ("do {\n  a[0] = 1;\n} while (0);", 1, 1, "do-while"),
    ("for (i = 0; i < N; i++)\n  switch (i) { case 0: a[i] = 1; }", 2, 3, "switch"),
    ("for (i = 0; i < N; i++)\n  a[N * i] = 0;", 2, 5, "not affine"),
    ("for (i = 0; i < N; i++)\n  a[i / N] = 0;", 2, 5, "non-constant"),
    ("for (i = 0; i < N; i++)\n  a[i % 0] = 1;", 2, 5, "division by zero"),
    ("for (i = 0; i < N; i++)\n  for (j = 0; j < b[i]; j++)\n    a[j] = 0;", 2, 19, "data-dependent"),
    ("for (i = 0; i < N; i++)\n  if (a[i] > 0)\n    a[i] = 0;", 2, 7, "data-dependent"),
    ("for (i = 0; i < N; i++)\n  a[i++] = 0;", 2, 5, "side effect"),
    ("for (; i < N; i++)\n  a[i] = 0;", 1, 1, "initialisation"),
    ("for (i = 0; ; i++)\n  a[i] = 0;", 1, 1, "never ends"),
    ("for (i = 0; i != N; i++)\n  a[i] = 0;", 1, 13, "may never end"),
    ("for (i = 0; i >= 0; i++)\n  a[i] = 0;", 1, 13, "never ends: i increases"),
    ("double x;\nfor (x = 0; x < N; x++)\n  a[0] = 0;", 2, 6, "not an integer"),
    ("for (i = 0; i < N; i++)\n  s.a[i] = 0;", 2, 3, "not an array element"),
    ("for (i = 0; i < N; i++)\n  a[i] = 0;\nx = a[i];", 3, 7, "outside its loop"),
    ("for (i = 0; i < N; i++)\n  a[i] = 0;\ni = 2;", 3, 1, "loop counter"),
    ("double A[N][N];\nfor (i = 0; i < N; i++)\n  A[i] = 0;", 3, 3, "dimensions"),
    ("for (i = 0; i < N; i++)\n  a[b[i]] = 0;", 2, 5, "data-dependent"),
    ("for (i = 0; i < N; i++)\n  a[i] = a[i] + getint();", 2, 17, "reads input"),
    ("for (i = 0; i < N; i++)\n  a[(int) 2.5 * i] = 1;", 2, 11, "integer"),
    ("for (i = i; i < N; i++)\n  a[i] = 0;", 1, 10, "itself"),
]


@pytest.mark.parametrize("text, line, column, reason", REFUSALS)
def test_refusals(text, line, column, reason):
    with pytest.raises(NotAffineError) as info:
        parse(text)
    err = info.value
    assert (err.location.line, err.location.column) == (line, column), err.render()
    assert reason in err.message, err.message
    assert err.location.source_line == text.splitlines()[line - 1]
    assert err.location.text
    rendered = err.render()
    assert "^" in rendered and "Traceback" not in rendered


@pytest.mark.parametrize("text, line", [
    ("double a[N];\nfor (i = 0; i < N; i++)\n  a[i] = (a[i] + 1.0;\n", 3),
    ("for (i = 0; i < N; i++) {\n  a[i] = 0;\n", 2),
    ("for (i = 0 i < N; i++)\n  a[i] = 0;", 1),
    ("int main() {\n  int x = ;\n  return 0;\n}", 2),
    ("for (i = 0; i < N; i++)\n  a[i] = 0 @ 1;", 2),
])
def test_syntax_errors_map_to_user_lines(text, line):
    with pytest.raises(SourceSyntaxError) as info:
        parse(text)
    assert info.value.location.line == line, info.value.render()
    assert info.value.location.source_line == text.splitlines()[line - 1]


def test_unknown_language():
    with pytest.raises(PolylabError):
        parse("x = 1;", language="fortran")


def test_parse_file_missing(tmp_path):
    from polylab.frontend import parse_file

    with pytest.raises(PolylabError) as info:
        parse_file(tmp_path / "nope.c")
    assert "cannot read" in info.value.message


# -- typedefs ------------------------------------------------------------------------------------------------
TYPEDEF = """#include <stddef.h>
typedef char base;
typedef base pair_base;
void f(int n, base seq[40], pair_base other[40], int table[40][40], size_t sizes[40]) {
#pragma scop
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++)
      table[i][j] = table[i - 1][j] + (seq[i] + other[j] == 3) + (int) sizes[j];
#pragma endscop
}
"""


def test_a_scalar_typedef_of_the_users_is_its_c_type_in_the_model():
    # PolyBench's nussinov (typedef char base) was accepted, then could not be run: the harness had no element
    # type for 'base' (nor for size_t); the model holds the type itself, through chains of typedefs
    scop = scop_of(TYPEDEF)
    assert {a.name: a.ctype for a in scop.arrays} == {"seq": "char", "other": "char", "table": "int",
                                                      "sizes": "unsigned long"}


def test_a_program_with_a_typedef_verifies():
    from polylab import toolchain as tc
    from polylab.experiment import verify

    if tc.c_compiler() is None:
        pytest.skip("needs a C compiler")
    v = verify(scop_of(TYPEDEF), "interchange(0, 1)", "c", params={"n": 9})
    assert v.verified is True, str(v)
