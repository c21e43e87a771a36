"""Signs in printed expressions (issue 28, item 1): a loop counter that enters the code negated (``i = -c0``)
in a subscript with ``-i`` printed as ``--c0``, C's pre-decrement, and miscompiled every schedule.

Property: random affine expressions, printed by each printer (the isl AST printer ``c_expr``, the statement
printer ``to_c`` after ``as_model_expr``, and the substitution of loop counters into a statement), then read
back by pycparser, are the same function (equal values at random points), and the text never holds ``--``,
``++``, a negation of a negated name or literal, or a sign after a binary ``+`` or ``-``.
"""

from __future__ import annotations

import re
import subprocess

import pycparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycparser import c_ast

import polylab
from polylab import toolchain as tc
from polylab.cli import main
from polylab.codegen.ast import Id, Int, Op
from polylab.codegen.c import as_model_expr, substitute
from polylab.codegen.cexpr import c_expr
from polylab.experiment import verify
from polylab.model.expr import Binary, Const, Name, Unary, to_c

NAMES = ("c0", "c1", "N")
PARSER = pycparser.CParser()


def aexprs():
    """Random affine isl AST expressions: literals of both signs, names, sums, differences, negations and
    products by a literal, nested."""
    leaves = st.one_of(st.integers(-4, 4).map(Int), st.sampled_from(NAMES).map(Id))

    def grow(inner):
        return st.one_of(
            st.tuples(st.sampled_from(["add", "sub"]), inner, inner).map(lambda t: Op(t[0], t[1:])),
            inner.map(lambda a: Op("minus", (a,))),
            st.tuples(st.integers(-3, 3).map(Int), inner).map(lambda t: Op("mul", t)))
    return st.recursive(leaves, grow, max_leaves=8)


def model_exprs():
    """Random affine statement expressions over an iterator ``i`` and a parameter ``N``."""
    leaves = st.one_of(st.integers(0, 4).map(lambda v: Const(str(v))), st.sampled_from(["i", "N"]).map(Name))

    def grow(inner):
        return st.one_of(st.tuples(st.sampled_from(["+", "-"]), inner, inner).map(lambda t: Binary(*t)),
                         inner.map(lambda a: Unary("-", a)), inner.map(lambda a: Unary("+", a)),
                         st.tuples(st.integers(0, 3).map(lambda v: Const(str(v))), inner).map(
                             lambda t: Binary("*", *t)))
    return st.recursive(leaves, grow, max_leaves=6)


def value(e, env: dict) -> int:
    match e:
        case Int(value=v):
            return v
        case Id(name=n):
            return env[n]
        case Op(op="add", args=(a, b)):
            return value(a, env) + value(b, env)
        case Op(op="sub", args=(a, b)):
            return value(a, env) - value(b, env)
        case Op(op="mul", args=(a, b)):
            return value(a, env) * value(b, env)
        case Op(op="minus", args=(a,)):
            return -value(a, env)
        case Const(text=t):
            return int(t)
        case Name(name=n):
            return env[n]
        case Unary(op=op, operand=o):
            return -value(o, env) if op == "-" else value(o, env)
        case Binary(op=op, left=a, right=b):
            return {"+": int.__add__, "-": int.__sub__, "*": int.__mul__}[op](value(a, env), value(b, env))
    raise AssertionError(f"unexpected {e!r}")


def c_value(node: c_ast.Node, env: dict) -> int:
    """The value of an expression pycparser read (only what affine text may hold: a decrement, an
    increment or anything else fails the test)."""
    match node:
        case c_ast.Constant(value=v):
            return int(v)
        case c_ast.ID(name=n):
            return env[n]
        case c_ast.UnaryOp(op="-", expr=x):
            return -c_value(x, env)
        case c_ast.UnaryOp(op="+", expr=x):
            return c_value(x, env)
        case c_ast.BinaryOp(op="+", left=a, right=b):
            return c_value(a, env) + c_value(b, env)
        case c_ast.BinaryOp(op="-", left=a, right=b):
            return c_value(a, env) - c_value(b, env)
        case c_ast.BinaryOp(op="*", left=a, right=b):
            return c_value(a, env) * c_value(b, env)
    raise AssertionError(f"the printed text holds {type(node).__name__} {getattr(node, 'op', '')}")


def read_back(text: str) -> c_ast.Node:
    assert "--" not in text and "++" not in text, text
    assert not re.search(r"-\(-\w+\)", text) and "- -" not in text and "+ -" not in text, text
    ast = PARSER.parse(f"int f(int i, int c0, int c1, int N) {{ return {text}; }}")
    return ast.ext[0].body.block_items[0].expr


POINTS = [{"i": i, "c0": a, "c1": b, "N": n} for i, a, b, n in
          [(0, 0, 0, 0), (1, -1, 2, 5), (-3, 4, -2, 7), (5, -6, 3, -1), (2, 9, -9, 3)]]


@settings(max_examples=150, deadline=None)
@given(aexprs())
def test_isl_ast_expressions_print_as_themselves(e):
    for text in (c_expr(e), to_c(as_model_expr(e))):
        node = read_back(text)
        for env in POINTS:
            assert c_value(node, env) == value(e, env), (e, text, env)


@settings(max_examples=150, deadline=None)
@given(model_exprs(), aexprs())
def test_loop_counters_substituted_into_a_statement_print_as_themselves(e, arg):
    text = to_c(substitute(e, {"i": as_model_expr(arg)}))
    node = read_back(text)
    for env in POINTS:
        assert c_value(node, env) == value(e, {**env, "i": value(arg, env)}), (e, arg, text)


def test_a_sign_before_a_signed_operand_is_never_glued():
    assert to_c(Unary("-", Unary("-", Name("x")))) == "-(-x)"  # the user's own double negation stays valid C
    assert to_c(Unary("+", Unary("+", Name("x")))) == "+(+x)"
    assert to_c(Unary("-", Const("-1"))) == "-(-1)"
    assert c_expr(Op("minus", (Op("minus", (Id("c0"),)),))) == "c0"
    assert c_expr(Op("add", (Id("N"), Op("minus", (Id("c0"),))))) == "N - c0"


ISSUE = """double a[N];
for (i = N - 1; i >= 0; i--)
  a[-i + N - 1] = a[-i + N - 1] + 1.0;
"""


def test_the_issue_case_prints_c0_and_verifies_at_every_size(tmp_path, capsys):
    path = tmp_path / "down.c"
    path.write_text(ISSUE)
    assert main(["codegen", str(path), "--schedule", "original", "--param", "N=6", "--kernel-only"]) == 0
    out = capsys.readouterr().out
    assert "a[c0 + N - 1] = a[c0 + N - 1] + 1.0;" in out and "--" not in out.split("*/")[-1]
    if tc.c_compiler() is None:
        pytest.skip("no C compiler")
    scop = polylab.parse(ISSUE).scop
    for n in (5, 8):
        for spec in ("original", "reverse(0)"):
            assert verify(scop, spec if spec != "original" else None, "c", params={"N": n}).verified is True


@pytest.mark.skipif(tc.mlir_opt() is None, reason="mlir-opt is not installed (Debian: mlir-19-tools)")
def test_the_issue_case_as_mlir_is_read_by_mlir_opt(tmp_path, capsys):
    path = tmp_path / "down.c"
    path.write_text(ISSUE)
    assert main(["codegen", str(path), "--schedule", "original", "--target", "mlir", "--kernel-only"]) == 0
    (tmp_path / "k.mlir").write_text(capsys.readouterr().out)  # -o writes whole C files only
    res = subprocess.run([tc.mlir_opt().path, str(tmp_path / "k.mlir")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
