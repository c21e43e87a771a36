"""The dialect's semantics where implementations have differed, pinned by tests that could fail.

* A multi-result ``stencil.return`` with an unroll attribute is result-major (operand ``r * prod(u) + c`` is
  result ``r`` at copy ``c``): the interpreter, the lowering to the model and the compiled code agree on it,
  and xDSL 0.74's own ``stencil-unroll`` (which appends the copies copy-major) is caught by the pass check,
  while polylab's ``polylab-unroll`` is verified.
* An unrolled apply on a box that is not a multiple of the unroll factor computes the last block's copies
  that lie in the box only, and reads nothing for the others: the load box needs no rounding up.
* Inlining as in Open Earth's tests: a producer that is also stored, and two applies reading one input.
* xDSL 0.74's ``stencil-unroll`` leaves accesses inside ``scf.if`` unshifted: the pass check names it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from polylab import stencil
from polylab.stencil.check import check_pass, fields_for

PROGRAMS = Path(__file__).parent / "stencil_programs"


def _program(name: str) -> stencil.Program:
    return stencil.parse((PROGRAMS / name).read_text(), filename=name)


def test_unrolled_multi_result_return_is_result_major():
    p = _program("two_results_unrolled.mlir")
    out = stencil.interpret(p, {"a": np.zeros(4), "b": np.zeros(4)})
    assert out["a"].tolist() == [0.0, 4.0, 8.0, 12.0]
    assert out["b"].tolist() == [0.0, -1.0, -2.0, -3.0]


def test_the_lowered_model_and_its_compiled_code_read_the_return_result_major():
    p = _program("two_results_unrolled.mlir")
    low = stencil.lower(p)
    assert stencil.check(low).verified is True
    assert all("4.0" in s.text or "-" in s.text for s in low.scop.statements)


TWO_RESULTS = """
builtin.module {
  func.func @pair(%in: !stencil.field<?xf64>, %o0: !stencil.field<?xf64>, %o1: !stencil.field<?xf64>) {
    %fi = stencil.cast %in : !stencil.field<?xf64> -> !stencil.field<[-2,10]xf64>
    %f0 = stencil.cast %o0 : !stencil.field<?xf64> -> !stencil.field<[-2,10]xf64>
    %f1 = stencil.cast %o1 : !stencil.field<?xf64> -> !stencil.field<[-2,10]xf64>
    %t = stencil.load %fi : !stencil.field<[-2,10]xf64> -> !stencil.temp<?xf64>
    %r:2 = stencil.apply(%x = %t : !stencil.temp<?xf64>) -> (!stencil.temp<?xf64>, !stencil.temp<?xf64>) {
      %a = stencil.access %x[-1] : !stencil.temp<?xf64>
      %b = stencil.access %x[1] : !stencil.temp<?xf64>
      %s = arith.addf %a, %b : f64
      %d = arith.subf %a, %b : f64
      stencil.return %s, %d : f64, f64
    }
    stencil.store %r#0 to %f0(<[0], [8]>) : !stencil.temp<?xf64> to !stencil.field<[-2,10]xf64>
    stencil.store %r#1 to %f1(<[0], [8]>) : !stencil.temp<?xf64> to !stencil.field<[-2,10]xf64>
    func.return
  }
}
"""


def test_xdsl_unroll_of_two_results_is_caught_and_polylab_unroll_is_verified():
    p = stencil.parse(TWO_RESULTS)
    xdsl = stencil.check_passes(p, "stencil-unroll{unroll-factor=2}")
    assert xdsl[-1].verified is False and "stencil-unroll" in xdsl[-1].name
    with pytest.raises(stencil.PassVerificationError) as info:
        xdsl[-1].raise_if_failed()
    assert "the pass stencil-unroll" in info.value.message and info.value.location is not None
    ours = stencil.check_passes(p, "polylab-unroll{unroll-factor=2},shape-inference")
    assert [c.verified for c in ours] == [True, True]
    assert stencil.check(stencil.run_passes(p, "polylab-unroll{unroll-factor=2},shape-inference")).verified is True


def test_unrolled_apply_on_a_box_that_is_not_a_multiple_reads_no_more_than_it_needs():
    p = _program("odd_unrolled.mlir")            # the load box is exactly [-1, 6)
    data = np.arange(7, dtype=float)
    out = stencil.interpret(p, {"in": data, "out": np.zeros(7)})
    assert out["out"][1:6].tolist() == [data[k] + data[k + 1] + data[k + 2] for k in range(5)]
    assert stencil.check(stencil.lower(p)).verified is True


def test_a_box_too_small_for_what_the_copies_read_is_refused_at_its_line():
    text = (PROGRAMS / "odd_unrolled.mlir").read_text().replace("[0,5]", "[0,6]").replace("[5]>", "[6]>")
    with pytest.raises(stencil.StencilError) as info:
        stencil.interpret(stencil.parse(text), {"in": np.zeros(7), "out": np.zeros(7)})
    assert "uses read <[-1], [7]>" in info.value.message and info.value.location.line == 7


STORED_PRODUCER = """
builtin.module {
  func.func @stored(%in: !stencil.field<?x?xf64>, %p: !stencil.field<?x?xf64>, %c: !stencil.field<?x?xf64>) {
    %fi = stencil.cast %in : !stencil.field<?x?xf64> -> !stencil.field<[-2,10]x[-2,10]xf64>
    %fp = stencil.cast %p : !stencil.field<?x?xf64> -> !stencil.field<[-2,10]x[-2,10]xf64>
    %fc = stencil.cast %c : !stencil.field<?x?xf64> -> !stencil.field<[-2,10]x[-2,10]xf64>
    %t = stencil.load %fi : !stencil.field<[-2,10]x[-2,10]xf64> -> !stencil.temp<?x?xf64>
    %prod = stencil.apply(%x = %t : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>) {
      %a = stencil.access %x[1, 0] : !stencil.temp<?x?xf64>
      %b = stencil.access %x[0, -1] : !stencil.temp<?x?xf64>
      %s = arith.mulf %a, %b : f64
      stencil.return %s : f64
    }
    %cons = stencil.apply(%y = %prod : !stencil.temp<?x?xf64>, %x = %t : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>) {
      %a = stencil.access %y[-1, 0] : !stencil.temp<?x?xf64>
      %b = stencil.access %x[0, 1] : !stencil.temp<?x?xf64>
      %s = arith.addf %a, %b : f64
      stencil.return %s : f64
    }
    stencil.store %prod to %fp(<[0, 0], [8, 8]>) : !stencil.temp<?x?xf64> to !stencil.field<[-2,10]x[-2,10]xf64>
    stencil.store %cons to %fc(<[0, 0], [8, 8]>) : !stencil.temp<?x?xf64> to !stencil.field<[-2,10]x[-2,10]xf64>
    func.return
  }
}
"""

TWO_READERS = """
builtin.module {
  func.func @readers(%in: !stencil.field<?x?xf64>, %o: !stencil.field<?x?xf64>) {
    %fi = stencil.cast %in : !stencil.field<?x?xf64> -> !stencil.field<[-2,10]x[-2,10]xf64>
    %fo = stencil.cast %o : !stencil.field<?x?xf64> -> !stencil.field<[-2,10]x[-2,10]xf64>
    %t = stencil.load %fi : !stencil.field<[-2,10]x[-2,10]xf64> -> !stencil.temp<?x?xf64>
    %u = stencil.apply(%x = %t : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>) {
      %a = stencil.access %x[0, 1] : !stencil.temp<?x?xf64>
      stencil.return %a : f64
    }
    %v = stencil.apply(%x = %t : !stencil.temp<?x?xf64>, %y = %u : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>) {
      %a = stencil.access %x[1, 0] : !stencil.temp<?x?xf64>
      %b = stencil.access %y[0, -1] : !stencil.temp<?x?xf64>
      %s = arith.subf %a, %b : f64
      stencil.return %s : f64
    }
    stencil.store %v to %fo(<[0, 0], [8, 8]>) : !stencil.temp<?x?xf64> to !stencil.field<[-2,10]x[-2,10]xf64>
    func.return
  }
}
"""


@pytest.mark.parametrize("text", [STORED_PRODUCER, TWO_READERS], ids=["stored-producer", "two-readers"])
def test_inlining_as_open_earth_tests_it_is_verified_pass_by_pass(text):
    p = stencil.parse(text)
    checks = stencil.check_passes(p, "stencil-inlining,cse,shape-inference")
    assert [c.verified for c in checks] == [True, True, True], [str(c) for c in checks]
    inlined = stencil.run_passes(p, "stencil-inlining,cse,shape-inference")
    if text is TWO_READERS:
        assert len(inlined.applies) == 1
    assert stencil.check(inlined).verified is True


WITH_IF = """
builtin.module {
  func.func @upwind(%in: !stencil.field<?xf64>, %out: !stencil.field<?xf64>) {
    %fi = stencil.cast %in : !stencil.field<?xf64> -> !stencil.field<[-2,10]xf64>
    %fo = stencil.cast %out : !stencil.field<?xf64> -> !stencil.field<[-2,10]xf64>
    %t = stencil.load %fi : !stencil.field<[-2,10]xf64> -> !stencil.temp<?xf64>
    %r = stencil.apply(%x = %t : !stencil.temp<?xf64>) -> (!stencil.temp<?xf64>) {
      %c = stencil.access %x[0] : !stencil.temp<?xf64>
      %half = arith.constant 1.0 : f64
      %up = arith.cmpf ogt, %c, %half : f64
      %v = scf.if %up -> (f64) {
        %e = stencil.access %x[1] : !stencil.temp<?xf64>
        scf.yield %e : f64
      } else {
        %w = stencil.access %x[-1] : !stencil.temp<?xf64>
        scf.yield %w : f64
      }
      stencil.return %v : f64
    }
    stencil.store %r to %fo(<[0], [8]>) : !stencil.temp<?xf64> to !stencil.field<[-2,10]xf64>
    func.return
  }
}
"""


def test_xdsl_unroll_of_accesses_inside_scf_if_is_caught_and_polylab_unroll_refuses_it():
    p = stencil.parse(WITH_IF)
    checks = stencil.check_passes(p, "stencil-unroll{unroll-factor=2}")
    assert checks[-1].verified is False and "stencil-unroll" in str(checks[-1])
    with pytest.raises(stencil.StencilError) as info:
        stencil.run_passes(p, "polylab-unroll{unroll-factor=2}")
    assert "refuses" in info.value.message and "scf.if" in info.value.message
    assert info.value.location is not None and info.value.location.line == 12


def test_the_pass_check_refuses_a_vacuous_comparison():
    p = stencil.parse(WITH_IF)
    same = {k: v for k, v in fields_for(p).items()}
    result = check_pass(p, p, "nothing", fields=same)
    assert result.verified is True and result.changed > 0
    from polylab.stencil.check import compare_fields

    vacuous = compare_fields("x", {"out": same["out"]}, {"out": same["out"]}, same)
    assert vacuous.verified is None and "vacuous" in str(vacuous)
