"""Reading stencil programs: today's syntax through xDSL's parser and verifier, Open Earth's 2020 syntax through
polylab's reader, and every mistake a located error (line, column, caret, hint), never a traceback."""

from __future__ import annotations

import numpy as np
import pytest

from polylab import stencil
from polylab.stencil.oec import is_2020, upgrade

MODERN = """builtin.module {
  func.func @lap(%in: !stencil.field<?x?xf64>, %out: !stencil.field<?x?xf64>) {
    %fi = stencil.cast %in : !stencil.field<?x?xf64> -> !stencil.field<[-1,9]x[-1,9]xf64>
    %fo = stencil.cast %out : !stencil.field<?x?xf64> -> !stencil.field<[-1,9]x[-1,9]xf64>
    %t = stencil.load %fi : !stencil.field<[-1,9]x[-1,9]xf64> -> !stencil.temp<?x?xf64>
    %r = stencil.apply(%x = %t : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>) {
      %a = stencil.access %x[-1, 0] : !stencil.temp<?x?xf64>
      %b = stencil.access %x[0, 1] : !stencil.temp<?x?xf64>
      %s = arith.addf %a, %b : f64
      stencil.return %s : f64
    }
    stencil.store %r to %fo(<[0, 0], [8, 8]>) : !stencil.temp<?x?xf64> to !stencil.field<[-1,9]x[-1,9]xf64>
    func.return
  }
}
"""

OLD = """module {
  func @lap(%arg0: !stencil.field<?x?xf64>, %arg1: !stencil.field<?x?xf64>) attributes {stencil.program} {
    %0 = stencil.cast %arg0([-1, -1] : [9, 9]) : (!stencil.field<?x?xf64>) -> !stencil.field<10x10xf64>
    %1 = stencil.cast %arg1([-1, -1] : [9, 9]) : (!stencil.field<?x?xf64>) -> !stencil.field<10x10xf64>
    %2 = stencil.load %0 : (!stencil.field<10x10xf64>) -> !stencil.temp<?x?xf64>
    %3 = stencil.apply (%arg2 = %2 : !stencil.temp<?x?xf64>) -> !stencil.temp<?x?xf64> {
      %4 = stencil.access %arg2 [-1, 0] : (!stencil.temp<?x?xf64>) -> f64
      %5 = stencil.access %arg2 [0, 1] : (!stencil.temp<?x?xf64>) -> f64
      %6 = addf %4, %5 : f64
      %7 = stencil.store_result %6 : (f64) -> !stencil.result<f64>
      stencil.return %7 : !stencil.result<f64>
    }
    stencil.store %3 to %1([0, 0] : [8, 8]) : !stencil.temp<?x?xf64> to !stencil.field<10x10xf64>
    return
  }
}
"""


def test_today_syntax_parses_prints_and_parses_back():
    p = stencil.parse(MODERN)
    assert p.name == "lap" and p.rank == 2 and len(p.applies) == 1
    assert p.input_fields() == ("in",) and p.output_fields() == ("out",)
    assert stencil.parse(p.text) == p


def test_the_2020_syntax_is_read_line_for_line_and_computes_the_same():
    assert is_2020(OLD) and not is_2020(MODERN)
    modern = upgrade(OLD)
    assert modern.count("\n") == OLD.count("\n")
    assert "func.func @lap" in modern and "arith.addf" in modern and "[-1,9]x[-1,9]" in modern
    old, new = stencil.parse(OLD), stencil.parse(MODERN)
    data = np.arange(100, dtype=float).reshape(10, 10)
    a = stencil.interpret(old, {"arg0": data, "arg1": np.zeros((10, 10))})["arg1"]
    b = stencil.interpret(new, {"in": data, "out": np.zeros((10, 10))})["out"]
    assert np.array_equal(a, b) and a[1, 1] == data[0, 1] + data[1, 2]


def test_an_old_apply_with_closing_bounds_and_an_unrolled_return():
    text = OLD.replace("    }\n    stencil.store", "    } to ([0, 0] : [8, 8])\n    stencil.store")
    text = text.replace("stencil.return %7 : !stencil.result<f64>",
                        "stencil.return unroll [1, 1] %7 : !stencil.result<f64>")
    p = stencil.parse(text)
    assert "!stencil.temp<[0,8]x[0,8]xf64>" in p.text and "unroll <[1, 1]>" in p.text


def test_an_operation_xdsl_cannot_express_is_refused_with_its_line():
    text = OLD.replace("      %6 = addf %4, %5 : f64", "      %6 = stencil.depend 0 [0, -1] : f64")
    with pytest.raises(stencil.UnsupportedStencilError) as info:
        stencil.parse(text)
    err = info.value
    assert "stencil.depend" in err.message and err.location.line == 9 and err.location.column == 12


@pytest.mark.parametrize("bad, line, words", [
    (MODERN.replace("arith.addf %a, %b", "arith.addf %a %b"), 9, "expected"),
    (MODERN.replace("%s = arith.addf %a, %b", "%s = arith.addf %a, %zz"), 9, "zz"),
    (MODERN.replace("arith.addf", "arith.add"), 9, "arith.add"),
], ids=["missing-comma", "undefined-value", "unknown-operation"])
def test_syntax_errors_name_line_column_and_show_a_caret(bad, line, words):
    with pytest.raises(stencil.StencilSyntaxError) as info:
        stencil.parse(bad)
    err = info.value
    assert err.location.line == line and words in err.message
    assert "^" in err.render() and f"line {line}" in err.message


def test_a_verifier_failure_names_the_operation_and_its_line():
    bad = MODERN.replace("stencil.return %s : f64", "stencil.return %s, %s : f64, f64")
    with pytest.raises(stencil.StencilError) as info:
        stencil.parse(bad)
    assert info.value.location.line == 10 and "stencil.return" in info.value.message


def test_an_unknown_pass_is_a_located_error_with_the_stencil_passes_listed():
    with pytest.raises(stencil.StencilError) as info:
        stencil.run_passes(stencil.parse(MODERN), "shape-inference,inline")
    assert "inline" in info.value.message and "stencil-inlining" in info.value.hint


def test_a_field_too_small_is_refused_by_the_pass_at_the_load():
    small = MODERN.replace("[-1,9]x[-1,9]", "[0,9]x[-1,9]")
    with pytest.raises(stencil.StencilError) as info:
        stencil.run_passes(stencil.parse(small), "shape-inference")
    assert "too big" in info.value.message and info.value.location.line == 5
