// A separable 2D blur: a 3-point average along i, then along j (two applies), with a negated copy of
// the first pass kept as a second output on a smaller range.
builtin.module {
  func.func @blur2d(%img: !stencil.field<?x?xf64>, %out: !stencil.field<?x?xf64>, %neg: !stencil.field<?x?xf64>) attributes {stencil.program} {
    %fi = stencil.cast %img : !stencil.field<?x?xf64> -> !stencil.field<[-1,65]x[-1,65]xf64>
    %fo = stencil.cast %out : !stencil.field<?x?xf64> -> !stencil.field<[-1,65]x[-1,65]xf64>
    %fn = stencil.cast %neg : !stencil.field<?x?xf64> -> !stencil.field<[-1,65]x[-1,65]xf64>
    %t = stencil.load %fi : !stencil.field<[-1,65]x[-1,65]xf64> -> !stencil.temp<?x?xf64>
    %h:2 = stencil.apply(%x = %t : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>, !stencil.temp<?x?xf64>) {
      %a = stencil.access %x[-1, 0] : !stencil.temp<?x?xf64>
      %b = stencil.access %x[0, 0] : !stencil.temp<?x?xf64>
      %c = stencil.access %x[1, 0] : !stencil.temp<?x?xf64>
      %ab = arith.addf %a, %b : f64
      %abc = arith.addf %ab, %c : f64
      %w = arith.constant 0.25 : f64
      %b2 = arith.addf %b, %b : f64
      %s = arith.addf %abc, %b2 : f64
      %m = arith.mulf %s, %w : f64
      %nm = arith.negf %m : f64
      %r0 = stencil.store_result %m : !stencil.result<f64>
      %r1 = stencil.store_result %nm : !stencil.result<f64>
      stencil.return %r0, %r1 : !stencil.result<f64>, !stencil.result<f64>
    }
    %v = stencil.apply(%x = %h#0 : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>) {
      %a = stencil.access %x[0, -1] : !stencil.temp<?x?xf64>
      %b = stencil.access %x[0, 0] : !stencil.temp<?x?xf64>
      %c = stencil.access %x[0, 1] : !stencil.temp<?x?xf64>
      %ac = arith.addf %a, %c : f64
      %half = arith.constant 0.5 : f64
      %acw = arith.mulf %ac, %half : f64
      %s = arith.addf %acw, %b : f64
      %m = arith.mulf %s, %half : f64
      %r = stencil.store_result %m : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    stencil.store %v to %fo(<[0, 0], [64, 64]>) : !stencil.temp<?x?xf64> to !stencil.field<[-1,65]x[-1,65]xf64>
    stencil.store %h#1 to %fn(<[8, 8], [56, 56]>) : !stencil.temp<?x?xf64> to !stencil.field<[-1,65]x[-1,65]xf64>
    func.return
  }
}
