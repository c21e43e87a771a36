"""Whole programs (SysY and C without pragmas): automatic detection of maximal static control parts, the
counted-while idiom, timing markers, rejections, parameters read with getint(), live-out sets."""

from __future__ import annotations

import islpy as isl
import pytest

from polylab.frontend import parse

from oracle_interp import model_accesses, model_instances, run_program


def sysy(text: str):
    return parse(text, language="sysy")


def same(a, text: str) -> bool:
    b = isl.UnionSet(text) if isinstance(a, isl.UnionSet) else isl.Set(text)
    return a.is_equal(b.align_params(a.get_space()))


PROGRAM = """const int N = 64;
int a[N];
float b[N][N];
int main() {
  int n = getint();
  int s = 0;
  int i = 0;
  while (i < n) {
    a[i] = i;
    i = i + 2;
  }
  starttime();
  i = 0;
  while (i < n) {
    int j = i;
    while (j < n) {
      b[i][j] = a[i] + a[j];
      j = j + 1;
    }
    i = i + 1;
  }
  stoptime();
  putint(a[3]);
  i = 0;
  while (i < n) {
    s = s + a[i];
    i = i + 1;
  }
  putint(s);
  putfloat(b[1][n - 1]);
  return 0;
}
"""


def test_counted_while_idioms_and_markers():
    prog = sysy(PROGRAM)
    assert len(prog.scops) == 2
    first, second = prog.scops
    assert first.parameters == ("n",)
    s0, s1 = first.statements
    assert same(s0.domain, "[n] -> { S0[i] : 0 <= i < n and exists e: i = 2e }")
    assert same(s1.domain, "[n] -> { S1[i, j] : 0 <= i <= j < n }")
    assert s1.iterators == ("i", "j")
    assert [a.extents for a in first.arrays] == [("64",), ("64", "64")]
    assert dict(first.constants) == {"N": 64}
    assert any("starttime" in n for n in first.notes)
    # live-out of the first region: a[3] exactly, all of a (read by the later loop), b[1][n-1]
    lo = first.live_out
    assert isl.UnionSet("[n] -> { a[3] }").is_subset(lo)
    assert isl.UnionSet("[n] -> { b[1, n - 1] }").is_subset(lo)
    assert same(lo.intersect(isl.UnionSet("[n] -> { b[x, y] }")), "[n] -> { b[1, n - 1] }")
    # the reduction loop: s is a 0-d array, live after the region because putint(s) reads it
    assert [s.body.target.array for s in second.statements] == ["s"]
    assert same(second.live_out, "[n] -> { s[] }")
    lines = [r.location.line for r in prog.rejected]
    assert lines == [5, 23, 29, 30, 31]


def test_sysy_program_against_interpreter():
    prog = sysy(PROGRAM)
    for n in (0, 1, 5, 8):
        trace = run_program(PROGRAM, {"__input__": [n]})
        for scop in prog.scops:
            lines = {s.line for s in scop.statements}
            seen = {a for a in trace.accesses if a[0] in lines}
            assert seen == model_accesses(scop, {"n": n})
            assert [x for x in trace.instances if x[0] in lines] == model_instances(scop, {"n": n})


def test_region_inside_data_dependent_loop():
    text = """int a[100];
int main() {
  int n = getint();
  int t = 0;
  while (a[t] > 0) {
    int i = 0;
    while (i < n) {
      a[i] = a[i] - 1;
      i = i + 1;
    }
    t = t + 1;
  }
  return 0;
}
"""
    prog = sysy(text)
    assert len(prog.scops) == 1
    scop = prog.scop
    assert scop.live_out is None  # inside a loop that is not modelled: everything may be read again
    assert [s.line for s in scop.statements] == [8, 11]
    reasons = {r.location.line: r.reason for r in prog.rejected}
    assert "data-dependent" in reasons[5]


def test_user_function_call_splits_regions():
    text = """int a[10];
int f(int x) { return x + 1; }
int main() {
  int i;
  for (i = 0; i < 10; i++) a[i] = 0;
  for (i = 0; i < 10; i++) a[i] = f(a[i]);
  for (i = 0; i < 10; i++) a[i] = a[i] * 2;
  return 0;
}
"""
    prog = sysy(text)
    assert [[s.line for s in sc.statements] for sc in prog.scops] == [[5], [7]]
    rej = [r for r in prog.rejected if r.location.line == 6]
    assert rej and "side effects" in rej[0].reason and rej[0].location.column == 35


def test_c_program_without_pragma_is_detected_automatically():
    text = """double A[20][20];
int main(void) {
  int i, j;
  for (i = 0; i < 20; i++)
    for (j = 0; j <= i; j++)
      A[i][j] = i * 0.5 + j;
  printf("%f", A[3][2]);
  return 0;
}
"""
    prog = parse(text)
    assert prog.language == "c" and len(prog.scops) == 1
    assert same(prog.scop.statements[0].domain, "{ S0[i, j] : 0 <= j <= i < 20 }")
    assert same(prog.scop.live_out, "{ A[3, 2] }")


def test_getint_assignment_parameter_and_context_declarations():
    text = """int x[50];
int main() {
  int n;
  float alpha = 1.5;
  n = getint();
  int i = 1;
  while (i <= n) {
    x[i] = x[i - 1] * alpha;
    i = i + 1;
  }
  return x[n];
}
"""
    prog = sysy(text)
    scop = prog.scop
    assert scop.parameters == ("n",)
    assert [(s.name, s.value) for s in scop.scalars] == [("alpha", "1.5")]
    assert same(scop.statements[0].domain, "[n] -> { S0[i] : 1 <= i <= n }")
    assert same(scop.live_out, "[n] -> { x[n] }")


def test_sysy_syntax_error_line():
    from polylab.errors import SourceSyntaxError

    with pytest.raises(SourceSyntaxError) as info:
        sysy("int main() {\n  int i = 0;\n  while (i < 10 {\n    i = i + 1;\n  }\n}\n")
    assert info.value.location.line == 3


def test_program_without_any_region():
    prog = sysy("int main() {\n  putint(getint());\n  return 0;\n}\n")
    assert prog.scops == () and len(prog.rejected) == 2
    from polylab.errors import ModelError

    with pytest.raises(ModelError):
        prog.scop
