"""The textbook tests (GCD, integer system, null space, Banerjee) beside the exact isl answer."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import HealthCheck, given, settings

from analysis_strategies import Loop, Ref, Stmt, build_scop, nests
from polylab.analysis import compute_dependences
from polylab.analysis.textbook import (hermite_column, integer_solutions, textbook_all, textbook_test)
from polylab.errors import AnalysisError


def one(write, read, loops, params=None):
    """A single statement ``write = read`` inside ``loops`` [(var, lo, hi)]; the report write vs read."""
    body = (Stmt(write, (read,)),)
    for var, lo, hi in reversed(loops):
        body = (Loop(var, lo, hi, body),)
    scop = build_scop(body)
    return textbook_test(scop, ("S0", 1), ("S0", 0), params=params)


def test_gcd_independent_2i_vs_2i_plus_1():
    r = one(Ref("B", ("2*i",)), Ref("B", ("2*i + 1",)), [("i", "0", "N")])
    assert r.gcd_independent and r.integer_independent and not r.exact_dependent
    assert r.gcd_equations[0].gcd == 2 and r.gcd_equations[0].rhs == 1
    assert "does not divide" in " ".join(r.explanation())


def test_gcd_maybe_bounds_rule_out():
    # B[i] vs B[i + N]: gcd 1 divides N, but i - i' = N is outside [-(N-1), N-1]
    r = one(Ref("B", ("i",)), Ref("B", ("i + N",)), [("i", "0", "N")])
    assert r.verdicts == {"gcd": "maybe dependent", "integer system": "maybe dependent",
                          "banerjee": "independent", "exact (isl)": "independent"}
    assert r.conservative_only == ["gcd", "integer system"]
    z0, T = r.solution
    assert T.shape == (2, 1)


def test_coupled_subscripts_gcd_maybe_integer_system_no():
    # A[i+j][i-j] vs A[i+j+1][i-j]: each equation passes GCD, together 2i = 2i' + 1
    r = one(Ref("A", ("i + j", "i - j")), Ref("A", ("i + j + 1", "i - j")),
            [("i", "0", "N"), ("j", "0", "N")])
    assert not r.gcd_independent
    assert r.integer_independent and not r.exact_dependent
    assert "coupled" in " ".join(r.explanation())


def test_banerjee_maybe_exact_no_integrality():
    # B[3i] vs B[5i + 2]: 3i - 5i' = 2 has real solutions in the box 0..3 with i > i', integer ones
    # (i = 4, i' = 2) only outside it
    r = one(Ref("B", ("3*i",)), Ref("B", ("5*i + 2",)), [("i", "0", "N")], params={"N": 4})
    assert not r.gcd_independent and not r.integer_independent
    assert not r.banerjee_independent and not r.exact_dependent
    maybe = [d.direction for d in r.directions if not d.banerjee_independent]
    assert maybe == [(">",)]
    assert set(r.conservative_only) == {"gcd", "integer system", "banerjee"}
    r8 = one(Ref("B", ("3*i",)), Ref("B", ("5*i + 2",)), [("i", "0", "N")], params={"N": 5})
    assert r8.exact_dependent and r8.witness == ((4,), (2,))


def test_banerjee_maybe_exact_no_triangular():
    # A[i][j] vs A[j][i] under j < i: the box forgets the triangle
    r = one(Ref("A", ("i", "j")), Ref("A", ("j", "i")), [("i", "0", "N"), ("j", "0", "i")])
    assert not r.banerjee_independent and not r.exact_dependent
    assert all(not d.exact_dependent for d in r.directions)


def test_uniform_nullspace_shift():
    r = one(Ref("Z", ("i - 1",)), Ref("Z", ("i - 1",)), [("i", "1", "N"), ("j", "0", "N")])
    assert r.nullspace == (sympy.Matrix([0, 1]),)
    assert r.exact_dependent
    exact_dirs = {d.direction for d in r.directions if d.exact_dependent}
    assert exact_dirs == {("=", "<"), ("=", ">")}
    assert "null space" in " ".join(r.explanation())


def test_hermite_and_integer_solutions():
    A = sympy.Matrix([[2, 4, -3], [1, 0, 1]])
    H, U, piv = hermite_column(A)
    assert A * U == H and abs(U.det()) == 1
    z0, T = integer_solutions(A, sympy.Matrix([1, 2]))
    assert A * z0 == sympy.Matrix([1, 2]) and A * T == sympy.zeros(2, T.cols)
    assert integer_solutions(sympy.Matrix([[2, 4]]), sympy.Matrix([3])) is None


def test_displays_and_errors():
    r = one(Ref("B", ("2*i",)), Ref("B", ("2*i + 1",)), [("i", "0", "N")])
    assert "\\begin{aligned}" in r._repr_latex_() and "<table" in r._repr_html_()
    assert "gcd" in str(r) and r.to_json()["verdicts"]["exact (isl)"] == "independent"
    scop = build_scop((Loop("i", "0", "N", (Stmt(Ref("A", ("i", "0")), (Ref("B", ("i",)),)),)),))
    with pytest.raises(AnalysisError):
        textbook_test(scop, ("S0", 0), ("S0", 1))  # different arrays
    with pytest.raises(AnalysisError):
        textbook_test(scop, ("S0", 7), ("S0", 1))
    with pytest.raises(AnalysisError):
        textbook_test(scop, ("S0", "A[j][0]"), ("S0", 1))


def _graph_pairs(graph):
    out = set()
    for d in graph.dependences:
        out.add(((d.source, d.source_access), (d.sink, d.sink_access)))
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nests())
def test_textbook_never_independent_when_dependent(nest):
    scop = build_scop(nest)
    fixed = scop.with_parameters({"N": 4})
    pairs = _graph_pairs(compute_dependences(fixed, kinds=("flow", "anti", "output", "input")))
    for r in textbook_all(scop, params={"N": 4}):
        a, b = r.first, r.second
        dependent = (a, b) in pairs or (b, a) in pairs
        assert r.exact_dependent == dependent, (r.text1, r.text2)
        if dependent:
            assert not r.gcd_independent and not r.integer_independent and not r.banerjee_independent
        for d in r.directions:
            if d.exact_dependent:
                assert not d.banerjee_independent, (r.text1, r.text2, d.direction)
