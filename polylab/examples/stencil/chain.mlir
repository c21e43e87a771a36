// A chain with a temp of several consumers: a smoothed field %sm feeds a gradient in i, a gradient in j
// and (with a magnitude computed from both) the result; two outputs are stored.
builtin.module {
  func.func @chain(%a: !stencil.field<?x?x?xf64>, %mag: !stencil.field<?x?x?xf64>, %out: !stencil.field<?x?x?xf64>) attributes {stencil.program} {
    %fa = stencil.cast %a : !stencil.field<?x?x?xf64> -> !stencil.field<[-2,26]x[-2,26]x[0,8]xf64>
    %fm = stencil.cast %mag : !stencil.field<?x?x?xf64> -> !stencil.field<[-2,26]x[-2,26]x[0,8]xf64>
    %fo = stencil.cast %out : !stencil.field<?x?x?xf64> -> !stencil.field<[-2,26]x[-2,26]x[0,8]xf64>
    %t = stencil.load %fa : !stencil.field<[-2,26]x[-2,26]x[0,8]xf64> -> !stencil.temp<?x?x?xf64>
    %sm = stencil.apply(%x = %t : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %c = stencil.access %x[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %e = stencil.access %x[1, 0, 0] : !stencil.temp<?x?x?xf64>
      %n = stencil.access %x[0, 1, 0] : !stencil.temp<?x?x?xf64>
      %s1 = arith.addf %c, %e : f64
      %s2 = arith.addf %s1, %n : f64
      %third = arith.constant 0.3333333333333333 : f64
      %m = arith.mulf %s2, %third : f64
      %r = stencil.store_result %m : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %gi = stencil.apply(%x = %sm : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %p = stencil.access %x[1, 0, 0] : !stencil.temp<?x?x?xf64>
      %q = stencil.access %x[-1, 0, 0] : !stencil.temp<?x?x?xf64>
      %d = arith.subf %p, %q : f64
      %r = stencil.store_result %d : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %gj = stencil.apply(%x = %sm : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %p = stencil.access %x[0, 1, 0] : !stencil.temp<?x?x?xf64>
      %q = stencil.access %x[0, -1, 0] : !stencil.temp<?x?x?xf64>
      %d = arith.subf %p, %q : f64
      %r = stencil.store_result %d : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %res:2 = stencil.apply(%x = %sm : !stencil.temp<?x?x?xf64>, %i = %gi : !stencil.temp<?x?x?xf64>, %j = %gj : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>, !stencil.temp<?x?x?xf64>) {
      %vi = stencil.access %i[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %vj = stencil.access %j[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %ii = arith.mulf %vi, %vi : f64
      %jj = arith.mulf %vj, %vj : f64
      %s = arith.addf %ii, %jj : f64
      %g = math.sqrt %s : f64
      %c = stencil.access %x[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %h = arith.constant 0.5 : f64
      %hg = arith.mulf %h, %g : f64
      %o = arith.addf %c, %hg : f64
      %r0 = stencil.store_result %g : !stencil.result<f64>
      %r1 = stencil.store_result %o : !stencil.result<f64>
      stencil.return %r0, %r1 : !stencil.result<f64>, !stencil.result<f64>
    }
    stencil.store %res#0 to %fm(<[0, 0, 0], [24, 24, 8]>) : !stencil.temp<?x?x?xf64> to !stencil.field<[-2,26]x[-2,26]x[0,8]xf64>
    stencil.store %res#1 to %fo(<[0, 0, 0], [24, 24, 8]>) : !stencil.temp<?x?x?xf64> to !stencil.field<[-2,26]x[-2,26]x[0,8]xf64>
    func.return
  }
}
