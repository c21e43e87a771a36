builtin.module {
  func.func @bilap(%in: !stencil.field<?x?x?xf64>, %out: !stencil.field<?x?x?xf64>) attributes {stencil.program} {
    %fin = stencil.cast %in : !stencil.field<?x?x?xf64> -> !stencil.field<[-4,68]x[-4,68]x[0,16]xf64>
    %fout = stencil.cast %out : !stencil.field<?x?x?xf64> -> !stencil.field<[-4,68]x[-4,68]x[0,16]xf64>
    %u = stencil.load %fin : !stencil.field<[-4,68]x[-4,68]x[0,16]xf64> -> !stencil.temp<?x?x?xf64>
    %lap = stencil.apply(%a = %u : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %c = stencil.access %a[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %w = stencil.access %a[-1, 0, 0] : !stencil.temp<?x?x?xf64>
      %e = stencil.access %a[1, 0, 0] : !stencil.temp<?x?x?xf64>
      %s = stencil.access %a[0, -1, 0] : !stencil.temp<?x?x?xf64>
      %n = stencil.access %a[0, 1, 0] : !stencil.temp<?x?x?xf64>
      %we = arith.addf %w, %e : f64
      %sn = arith.addf %s, %n : f64
      %nb = arith.addf %we, %sn : f64
      %four = arith.constant 4.0 : f64
      %c4 = arith.mulf %four, %c : f64
      %l = arith.subf %nb, %c4 : f64
      %r = stencil.store_result %l : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %res = stencil.apply(%a = %u : !stencil.temp<?x?x?xf64>, %b = %lap : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %c = stencil.access %b[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %w = stencil.access %b[-1, 0, 0] : !stencil.temp<?x?x?xf64>
      %e = stencil.access %b[1, 0, 0] : !stencil.temp<?x?x?xf64>
      %s = stencil.access %b[0, -1, 0] : !stencil.temp<?x?x?xf64>
      %n = stencil.access %b[0, 1, 0] : !stencil.temp<?x?x?xf64>
      %we = arith.addf %w, %e : f64
      %sn = arith.addf %s, %n : f64
      %nb = arith.addf %we, %sn : f64
      %four = arith.constant 4.0 : f64
      %c4 = arith.mulf %four, %c : f64
      %l = arith.subf %nb, %c4 : f64
      %u0 = stencil.access %a[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %k = arith.constant 0.01 : f64
      %kl = arith.mulf %k, %l : f64
      %new = arith.subf %u0, %kl : f64
      %r = stencil.store_result %new : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    stencil.store %res to %fout(<[0, 0, 0], [64, 64, 16]>) : !stencil.temp<?x?x?xf64> to !stencil.field<[-4,68]x[-4,68]x[0,16]xf64>
    func.return
  }
}
