"""Accesses under a condition (issue 28, item 2): an access in a ``?:`` arm, in the right operand of ``&&`` or
``||``, or in an ``if`` of the body runs only where its condition lets it; its access relation is restricted
to those iterations, exactly (isl), for the bounds check, the dependences and the reference interpreter
alike. A condition that reads data (or is not affine) cannot be modelled exactly: what it guards counts as
accessed wherever the statement runs (a may-access, never fewer than run)."""

from __future__ import annotations

import islpy as isl
import pytest

import polylab
from polylab import toolchain as tc
from polylab.analysis import compute_dependences
from polylab.experiment import verify
from polylab.experiment.params import validate_params
from polylab.reference.interpret import execute

ISSUE = """double a[N][N];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    a[i][j] = a[i][j] + (i >= 1 ? a[i - 1][j] : 0.0);
"""


def relations(source: str) -> dict[str, isl.Map]:
    (st,) = polylab.parse(source).scop.statements
    return {a.text: a.relation for a in st.accesses}


def test_the_issue_case_is_accepted_and_its_arm_read_runs_where_i_is_at_least_1():
    scop = polylab.parse(ISSUE).scop
    rel = relations(ISSUE)
    assert rel["a[i - 1][j]"].domain().is_equal(isl.Set("[N] -> { S0[i, j] : 1 <= i < N and 0 <= j < N }"))
    assert rel["a[i][j]"].domain().is_equal(scop.statements[0].domain)
    assert validate_params(scop, {"N": 5}).values == {"N": 5}  # the bounds check: no a[-1][j]
    flow = [d for d in compute_dependences(scop).dependences if d.kind == "flow"]
    assert flow and all(d.relation.domain().is_subset(isl.Set("[N] -> { S0[i, j] : i <= N - 2 }")) for d in flow)
    memory = execute(scop, {"N": 4})
    assert all(idx[0] >= 0 for idx in memory.values["a"])  # the interpreter never loads a[-1][j]


@pytest.mark.skipif(tc.c_compiler() is None, reason="needs a C compiler")
@pytest.mark.parametrize("spec", [None, "wavefront", "interchange(0, 1)", "tile(2, 2)"])
def test_the_issue_case_verifies_under_schedules(spec):
    v = verify(polylab.parse(ISSUE).scop, spec, "c", params={"N": 6})
    assert v.verified is True, str(v)


@pytest.mark.parametrize("expr, runs", [
    ("(i >= 1 && b[i - 1] > 0.5 ? 1.0 : 0.0)", "1 <= i < N"),          # && runs its right operand if i >= 1
    ("(i == 0 || b[i - 1] < 0.5 ? 1.0 : 0.0)", "1 <= i < N"),          # || runs it where i != 0
    ("(i % 2 == 1 ? (i > 2 ? b[i - 3] : 0.0) : 1.0)", "3 <= i < N and i % 2 = 1"),   # nested arms
    ("(i < 1 ? 0.5 : b[i - 1])", "1 <= i < N"),                          # the other arm
    ("(!(i >= 1) ? 0.0 : b[i - 1])", "1 <= i < N"),
])
def test_each_guarded_read_runs_exactly_where_its_conditions_hold(expr, runs):
    source = f"double a[N];\ndouble b[N];\nfor (i = 0; i < N; i++)\n  a[i] = {expr};\n"
    (read,) = [r for t, r in relations(source).items() if t.startswith("b[")]
    assert read.domain().is_equal(isl.Set(f"[N] -> {{ S0[i] : {runs} }}")), read
    assert validate_params(polylab.parse(source).scop, {"N": 7}).values == {"N": 7}


def test_a_data_dependent_condition_guards_a_may_access():
    source = "double a[N];\ndouble b[N];\nfor (i = 1; i < N; i++)\n  a[i] = (a[i] > 0.5 ? b[i - 1] : b[i]);\n"
    rel = relations(source)
    domain = polylab.parse(source).scop.statements[0].domain
    assert rel["b[i - 1]"].domain().is_equal(domain) and rel["b[i]"].domain().is_equal(domain)


def test_an_if_in_the_body_restricts_its_statement():
    source = "double a[N][N];\nfor (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n    if (i >= 1)\n" \
             "      a[i][j] = a[i - 1][j] + 1.0;\n"
    assert relations(source)["a[i - 1][j]"].domain().is_equal(
        isl.Set("[N] -> { S0[i, j] : 1 <= i < N and 0 <= j < N }"))


def test_the_interpreter_evaluates_only_the_arm_that_runs():
    # an integer division by zero in the arm that does not run (i = 0) must not happen, and the value of
    # ?: keeps C's type of both arms (int and double: double)
    scop = polylab.parse("int b[N];\ndouble c[N];\nfor (i = 0; i < N; i++) {\n  b[i] = (i > 0 ? 6 / i : 7);\n"
                         "  c[i] = (i > 1 ? 1 : 0.5);\n}\n").scop
    memory = execute(scop, {"N": 4})
    assert [memory.get("b", (k,)) for k in range(4)] == [7, 6, 3, 2]
    assert [memory.get("c", (k,)) for k in range(4)] == [0.5, 0.5, 1.0, 1.0]
    assert all(isinstance(memory.get("c", (k,)), float) for k in range(4))
