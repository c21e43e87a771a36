// Two results, unrolled by 2 along the only dimension, written result-major as the dialect defines:
// return operands are (out0 copy 0, out0 copy 1, out1 copy 0, out1 copy 1). out0 = 4 i, out1 = -i.
builtin.module {
  func.func @two(%a: !stencil.field<?xf64>, %b: !stencil.field<?xf64>) {
    %fa = stencil.cast %a : !stencil.field<?xf64> -> !stencil.field<[0,4]xf64>
    %fb = stencil.cast %b : !stencil.field<?xf64> -> !stencil.field<[0,4]xf64>
    %r:2 = stencil.apply() -> (!stencil.temp<[0,4]xf64>, !stencil.temp<[0,4]xf64>) {
      %i = stencil.index 0 <[0]>
      %j = stencil.index 0 <[1]>
      %fi = arith.index_cast %i : index to i64
      %fj = arith.index_cast %j : index to i64
      %xi = arith.sitofp %fi : i64 to f64
      %xj = arith.sitofp %fj : i64 to f64
      %four = arith.constant 4.0 : f64
      %a0 = arith.mulf %xi, %four : f64
      %a1 = arith.mulf %xj, %four : f64
      %b0 = arith.negf %xi : f64
      %b1 = arith.negf %xj : f64
      stencil.return %a0, %a1, %b0, %b1 unroll <[2]> : f64, f64, f64, f64
    }
    stencil.store %r#0 to %fa(<[0], [4]>) : !stencil.temp<[0,4]xf64> to !stencil.field<[0,4]xf64>
    stencil.store %r#1 to %fb(<[0], [4]>) : !stencil.temp<[0,4]xf64> to !stencil.field<[0,4]xf64>
    func.return
  }
}
