"""The kinds of input xDSL's own stencil pass tests use (shape inference, inlining, unrolling), written here as
small programs of our own, run through polylab's pipeline with the reference interpreter agreeing before and
after every pass, bit for bit."""

from __future__ import annotations

import pytest

from polylab import stencil

F1 = "!stencil.field<[-4,68]xf64>"
T1 = "!stencil.temp<?xf64>"
F3 = "!stencil.field<[-4,68]x[-4,68]x[-4,68]xf64>"
T3 = "!stencil.temp<?x?x?xf64>"

#: two inputs read at different offsets (shape inference gives each load its own box)
OFFSETS = f"""builtin.module {{
  func.func @offsets(%out: {F1}, %left: {F1}, %right: {F1}) {{
    %tl = stencil.load %left : {F1} -> {T1}
    %tr = stencil.load %right : {F1} -> {T1}
    %r = stencil.apply(%l = %tl : {T1}, %q = %tr : {T1}) -> ({T1}) {{
      %a = stencil.access %l[-1] : {T1}
      %b = stencil.access %q[2] : {T1}
      %s = arith.addf %a, %b : f64
      stencil.return %s : f64
    }}
    stencil.store %r to %out(<[0], [64]>) : {T1} to {F1}
    func.return
  }}
}}
"""

#: a five-point Laplacian in 3-D (the producer), its use at two offsets (the consumer)
CHAIN3 = f"""builtin.module {{
  func.func @chain(%in: {F3}, %out: {F3}) {{
    %t = stencil.load %in : {F3} -> {T3}
    %lap = stencil.apply(%x = %t : {T3}) -> ({T3}) {{
      %w = stencil.access %x[-1, 0, 0] : {T3}
      %e = stencil.access %x[1, 0, 0] : {T3}
      %n = stencil.access %x[0, 1, 0] : {T3}
      %s = stencil.access %x[0, -1, 0] : {T3}
      %c = stencil.access %x[0, 0, 0] : {T3}
      %we = arith.addf %w, %e : f64
      %ns = arith.addf %n, %s : f64
      %sum = arith.addf %we, %ns : f64
      %m4 = arith.constant -4.0 : f64
      %c4 = arith.mulf %c, %m4 : f64
      %l = arith.addf %c4, %sum : f64
      stencil.return %l : f64
    }}
    %flux = stencil.apply(%y = %lap : {T3}) -> ({T3}) {{
      %a = stencil.access %y[1, 0, 0] : {T3}
      %b = stencil.access %y[0, 0, 0] : {T3}
      %d = arith.subf %a, %b : f64
      stencil.return %d : f64
    }}
    stencil.store %flux to %out(<[0, 0, 0], [64, 64, 64]>) : {T3} to {F3}
    func.return
  }}
}}
"""

#: one producer, two consumers, one of which also reads the input (inlining must keep both)
FORK = f"""builtin.module {{
  func.func @fork(%in: {F1}, %o1: {F1}, %o2: {F1}) {{
    %t = stencil.load %in : {F1} -> {T1}
    %p = stencil.apply(%x = %t : {T1}) -> ({T1}) {{
      %a = stencil.access %x[1] : {T1}
      %b = stencil.access %x[-1] : {T1}
      %m = arith.mulf %a, %b : f64
      stencil.return %m : f64
    }}
    %c1 = stencil.apply(%y = %p : {T1}) -> ({T1}) {{
      %a = stencil.access %y[1] : {T1}
      %n = arith.negf %a : f64
      stencil.return %n : f64
    }}
    %c2 = stencil.apply(%y = %p : {T1}, %x = %t : {T1}) -> ({T1}) {{
      %a = stencil.access %y[-1] : {T1}
      %b = stencil.access %x[0] : {T1}
      %d = arith.divf %a, %b : f64
      stencil.return %d : f64
    }}
    stencil.store %c1 to %o1(<[0], [64]>) : {T1} to {F1}
    stencil.store %c2 to %o2(<[0], [64]>) : {T1} to {F1}
    func.return
  }}
}}
"""

#: a field set from a scalar argument and the point's index (unrolling shifts stencil.index too)
INIT = f"""builtin.module {{
  func.func @init(%v: f64, %out: {F3}) {{
    %r = stencil.apply(%s = %v : f64) -> ({T3}) {{
      %j = stencil.index 1 <[0, 0, 0]>
      %ji = arith.index_cast %j : index to i64
      %jf = arith.sitofp %ji : i64 to f64
      %one = arith.constant 1.0 : f64
      %a = arith.addf %s, %one : f64
      %b = arith.mulf %a, %jf : f64
      stencil.return %b : f64
    }}
    stencil.store %r to %out(<[1, 2, 3], [65, 66, 63]>) : {T3} to {F3}
    func.return
  }}
}}
"""

#: a 1-D copy with an offset (unrolled by 4 here: xDSL's shape inference gives an unrolled access the whole box
#: shifted by each copy's offset, so a factor of 8 would ask the field for 3 points more than it has)
COPY = f"""builtin.module {{
  func.func @copy(%in: {F1}, %out: {F1}) {{
    %t = stencil.load %in : {F1} -> {T1}
    %r = stencil.apply(%x = %t : {T1}) -> ({T1}) {{
      %a = stencil.access %x[-1] : {T1}
      stencil.return %a : f64
    }}
    stencil.store %r to %out(<[0], [64]>) : {T1} to {F1}
    func.return
  }}
}}
"""

CASES = [
    ("offsets", OFFSETS, "shape-inference"),
    ("chain3-shape", CHAIN3, "shape-inference"),
    ("chain3-inline", CHAIN3, "stencil-inlining,cse,canonicalize,shape-inference"),
    ("fork-inline", FORK, "stencil-inlining,shape-inference"),
    ("init-unroll", INIT, "polylab-unroll{unroll-factor=8,1},shape-inference"),
    ("copy-unroll", COPY, "polylab-unroll{unroll-factor=4},shape-inference"),
    ("chain3-unroll", CHAIN3, "shape-inference,polylab-unroll{unroll-factor=1,2,1},shape-inference"),
]


@pytest.mark.parametrize("name, text, spec", CASES, ids=[c[0] for c in CASES])
def test_every_pass_keeps_the_interpreters_outputs(name, text, spec):
    program = stencil.parse(text)
    if name.startswith("chain3"):
        program = stencil.with_domain(program, (8, 8, 4))
    checks = stencil.check_passes(program, spec)
    assert len(checks) == len(stencil.pipeline(spec)), [str(c) for c in checks]
    assert all(c.verified is True for c in checks), [str(c) for c in checks]
    assert all(c.changed > 0 for c in checks)


def test_xdsls_own_unroll_of_a_single_result_agrees_too():
    checks = stencil.check_passes(stencil.parse(COPY), "stencil-unroll{unroll-factor=4},shape-inference")
    assert [c.verified for c in checks] == [True, True]


def test_inlining_leaves_no_apply_reading_another():
    from xdsl.dialects.stencil import ApplyOp

    inlined = stencil.run_passes(stencil.parse(FORK), "stencil-inlining,shape-inference")
    assert inlined.applies and not any(isinstance(v.owner, ApplyOp) for a in inlined.applies for v in a.args)
