"""The model checked by execution: an independent interpreter (tests/oracle_interp.py) runs the source at small
parameter values; the accesses it records must equal those the model predicts (domain points mapped through
the access relations), and the original schedule must order the instances as the execution did."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polylab
from polylab.frontend import parse

from oracle_interp import model_accesses, model_instances, run_fragment, run_program
from strategies import affine_nests, parameter_values

KERNELS = ["shift.c", "sweep2d.c", "lu.c", "gemm.c", "mvt.c", "fdtd2d.c", "jacobi2d.c", "seidel2d.c",
           "heat3d.c"]


def check(text: str, params: dict) -> int:
    scop = parse(text).scop
    trace = run_fragment(text, params)
    predicted = model_accesses(scop, params)
    assert trace.accesses == predicted, (
        f"interpreter only: {sorted(trace.accesses - predicted)[:5]}\n"
        f"model only: {sorted(predicted - trace.accesses)[:5]}")
    assert trace.instances == model_instances(scop, params)
    return len(trace.instances)


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("value", [0, 1, 4, 6])
def test_corpus_kernel_against_interpreter(name, value):
    text = polylab.example_path(name).read_text()
    params = {p: value for p in parse(text).scop.parameters}
    n = check(text, params)
    assert value < 4 or n > 0


def test_corpus_with_unequal_parameters():
    text = polylab.example_path("gemm.c").read_text()
    check(text, {"NI": 3, "NJ": 5, "NK": 2})
    text = polylab.example_path("fdtd2d.c").read_text()
    check(text, {"T": 2, "NX": 4, "NY": 3})
    text = polylab.example_path("shift.c").read_text()
    check(text, {"N": 5, "M": 2})


@pytest.mark.parametrize("n", [0, 1, 3, 6])
def test_sl3_against_interpreter(n):
    text = polylab.example_path("sl3.sy").read_text()
    prog = parse(text, language="sysy")
    scop = prog.scop
    trace = run_program(text, {"__input__": [n]}, untracked=[s.name for s in scop.scalars])
    lines = {s.line for s in scop.statements}
    seen = {a for a in trace.accesses if a[0] in lines}
    assert seen == model_accesses(scop, {"n": n})
    assert [i for i in trace.instances if i[0] in lines] == model_instances(scop, {"n": n})
    # live-out: the element the program prints is in the model's live-out set
    if n > 0:
        printed = [a for a in trace.accesses if a[0] == 43]
        assert printed and all(a[3] == "x" for a in printed)
        import islpy as isl

        for a in printed:
            elem = isl.UnionSet(f"[n] -> {{ x[{', '.join(map(str, a[4]))}] : n = {n} }}")
            assert elem.is_subset(scop.live_out)


CONSTRUCTS = [
    "for (i = N; i >= 0; i -= 2)\n  a[i] = a[i + 1] + 1.0;",
    "for (i = 0; i < N; i++)\n  for (j = 0; j < (i + 3 < N ? i + 3 : N); j++)\n    b[i][j] = b[j][i] * 2.0;",
    "for (t = 0; t < M; t++)\n  for (i = 1; i < N - 1; i++)\n    a[(t + 1) % 2][i] = a[t % 2][i - 1] + a[t % 2][i + 1];",
    "for (i = -3; i < N; i++)\n  a[i / 2 + 5] = a[i % 3 + 5] + a[(i - 7) / -3 + 5];",
    "s = 0.0;\nfor (i = 0; i < N; i++) {\n  s += a[i];\n  a[i]++;\n}\nb[0] = s;",
    "for (i = 0; i < N; i++)\n  if (i % 2 == 0 && i < M || i == N - 1)\n    a[i] = 1.0;\n  else\n    a[i + N] += a[i];",
    "for (i = 0; i < N; i++)\n  b[i] = a[i] > 0.0 ? a[i] : a[i + 1];",
    "for (i = 0; i < 2 || i > 3; i++)\n  a[i] = 0.0;",
    "for (i = 0; i < N; i += 3)\n  for (j = i; j <= N; j += 2)\n    c[i][j] = c[j][i];",
    "i = 0;\nwhile (i < N) {\n  j = i;\n  while (j < N) {\n    a[i + j] = a[j] + 1.0;\n    j = j + 2;\n  }\n  i = i + 1;\n}",
]


@pytest.mark.parametrize("text", CONSTRUCTS)
@pytest.mark.parametrize("params", [{"N": 0, "M": 0}, {"N": 1, "M": 3}, {"N": 5, "M": 2}, {"N": 7, "M": 7}])
def test_constructs_against_interpreter(text, params):
    check(text, params)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(affine_nests(), parameter_values())
def test_random_affine_nests_against_interpreter(text, params):
    check(text, params)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(affine_nests(max_depth=2, max_statements=2), st.integers(0, 4), st.integers(0, 4))
def test_random_nests_parameter_fixing_consistent(text, n, m):
    """Fixing parameters in the context does not change the points (with_parameters is a pure view)."""
    scop = parse(text).scop
    fixed = scop.with_parameters({"N": n, "M": m})
    for s in scop.statements:
        a = s.domain.intersect_params(fixed.context)
        assert a.is_subset(s.domain)
    assert model_accesses(fixed, {"N": n, "M": m}) == model_accesses(scop, {"N": n, "M": m})
