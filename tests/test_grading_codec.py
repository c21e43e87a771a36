"""Answers carried out of a kernel: what the kernel side encodes, the grader decodes to an equal value (or to
an Opaque with the reason, which the readers refuse with feedback); sizes are bounded; function answers are
called under a per-call time limit. Run in-process here; tests/test_grading_batch.py runs it in kernels."""

from __future__ import annotations

import json
from fractions import Fraction

import islpy as isl
import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

from polylab.frontend import parse
from polylab.grading import AnswerError, answers as A, kernel_side
from polylab.grading.answers import Opaque
from polylab.grading.codec import decode
from polylab.schedule import Schedule, check, parse_schedule
from polylab.storage import recipe_steps

SWEEP = "double a[N][N];\nfor (i = 1; i < N; i++)\n  for (j = 1; j < N; j++)\n    a[i][j] = a[i - 1][j] + a[i][j - 1];\n"


def roundtrip(value):
    return decode(json.loads(json.dumps(kernel_side.encode(value))))


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
    | st.fractions(),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.frozensets(st.integers() | st.text(max_size=5), max_size=4)
    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=20)


@given(values)
def test_plain_values_round_trip_exactly(v):
    out = roundtrip(v)
    assert out == v and type(out) is type(v)


def test_library_values_round_trip():
    assert roundtrip({(1, 0), (0, 1)}) == {(1, 0), (0, 1)}
    assert roundtrip(2**80) == 2**80 and roundtrip(float("inf")) == float("inf")
    assert roundtrip(np.int64(3)) == 3 and roundtrip(np.array([[1, 2], [3, 4]])).tolist() == [[1, 2], [3, 4]]
    assert roundtrip(sympy.Rational(1, 3)) == Fraction(1, 3) and roundtrip(sympy.Integer(5)) == 5
    assert roundtrip(sympy.Matrix([[1, sympy.Rational(1, 2)]])) == sympy.Matrix([[1, sympy.Rational(1, 2)]])
    s = isl.Set("[N] -> { [i] : 0 <= i < N }")
    assert roundtrip(s).is_equal(s)
    m = isl.UnionMap("{ S0[i] -> [i]; S1[i] -> [i + 1] }")
    assert roundtrip(m).is_equal(m)


def test_polylab_values_round_trip():
    scop = parse(SWEEP).scop
    back = roundtrip(scop)
    assert [s.name for s in back.statements] == ["S0"] and back.source == scop.source
    sched = parse_schedule(scop, "wavefront; parallel")
    again = roundtrip(sched)
    assert isinstance(again, Schedule) and again.steps == sched.steps
    assert check(again).legal and set(check(again).parallel) == set(check(sched).parallel)
    bad = roundtrip(parse_schedule(scop, "{ S0[i, j] -> [i - j, i] }"))
    assert not check(bad).legal  # rebuilt from its maps, then re-checked: never trusted


def test_what_cannot_be_rebuilt_is_opaque_and_refused_with_feedback():
    f = roundtrip(lambda x: x)
    assert isinstance(f, Opaque) and f.type == "function"
    with pytest.raises(AnswerError, match="function"):
        A.vector_set(f)
    o = roundtrip(object())
    assert isinstance(o, Opaque) and o.type == "builtins.object"
    x = sympy.Symbol("x")
    assert isinstance(roundtrip(x + 1), Opaque) and "symbolic" in roundtrip(x + 1).reason
    assert isinstance(roundtrip(sympy.Matrix([[x]])), Opaque)
    assert isinstance(decode({"$": "isl", "type": "Set", "v": "{ [i] : i < }"}), Opaque)
    assert isinstance(decode({"$": "nonsense"}), Opaque)
    sl3 = parse(open(__import__("polylab").example_path("sl3.sy")).read(), language="sysy").scop
    transformed = parse_schedule(sl3, "fold_live_ins; remove_dead_writes; interleave; contract(x)",
                                 steps=recipe_steps())
    out = roundtrip(transformed)  # a schedule of a region of a whole program: its source does not parse alone
    assert isinstance(out, Opaque) and "does not parse alone" in out.reason
    with pytest.raises(AnswerError, match="does not parse alone"):
        A.text(out, "the schedule")
    sweep = parse(SWEEP).scop
    fake = {"$": "schedule", "scop": kernel_side.encode(sweep), "maps": {"S7": "{ S7[i] -> [i] }"}, "steps": []}
    out = decode(fake)  # a schedule of other statements than its program's (a transformed program)
    assert isinstance(out, Opaque) and "give its recipe as text" in out.reason


def test_sizes_are_bounded():
    with pytest.raises(kernel_side._TooLarge):
        kernel_side.encode(list(range(kernel_side.MAX_ITEMS + 1)))
    with pytest.raises(kernel_side._TooLarge):
        kernel_side.encode("x" * (kernel_side.MAX_TEXT + 1))
    with pytest.raises(kernel_side._TooLarge):
        kernel_side.encode(np.zeros(kernel_side.MAX_ITEMS + 1))
    deep: list = []
    for _ in range(kernel_side.MAX_DEPTH + 2):
        deep = [deep]
    with pytest.raises(kernel_side._TooLarge):
        kernel_side.encode(deep)


def test_snapshot_writes_answers_and_calls(tmp_path):
    def slow(x):
        while True:
            pass

    ns = {"a": {(1, 0)}, "big": list(range(kernel_side.MAX_ITEMS + 5)), "f": lambda x, y: x + y, "g": slow,
          "h": lambda x: 1 / 0}
    req = {"names": ["a", "big", "nope", "f"], "path": str(tmp_path / "snap.json"), "call_seconds": 0.5,
           "functions": {"f": [[1, 2], [kernel_side.encode((1,)), kernel_side.encode((2,))]], "g": [[1]], "h": [[1]]}}
    kernel_side.snapshot(ns, req)
    out = json.loads((tmp_path / "snap.json").read_text())
    assert decode(out["answers"]["a"]) == {(1, 0)}
    assert out["missing"] == ["nope"] and "too large" in out["unreadable"]["big"]
    assert [decode(c["value"]) for c in out["calls"]["f"]] == [3, (1, 2)]
    assert out["calls"]["g"] == [{"error": "did not return within 0.5 s"}]
    assert out["calls"]["h"][0]["error"].startswith("ZeroDivisionError")


def test_the_injected_cell_runs_without_polylab_names(tmp_path):
    """The cell the grader injects works in a namespace where the student shadowed common names."""
    ns = {"__builtins__": __builtins__, "json": None, "open": None, "polylab": None, "x": (1, 2)}
    code = kernel_side.cell_code({"names": ["x"], "functions": {}, "path": str(tmp_path / "s.json")})
    exec(code, ns)
    assert decode(json.loads((tmp_path / "s.json").read_text())["answers"]["x"]) == (1, 2)
    assert "__polylab_g" not in ns
