// A 7-point Laplacian in 3D: out = sum of the six neighbours - 6 * centre, on a 32^3 domain
// (fields with a halo of 2).
builtin.module {
  func.func @laplace3d(%src: !stencil.field<?x?x?xf64>, %dst: !stencil.field<?x?x?xf64>) attributes {stencil.program} {
    %in = stencil.cast %src : !stencil.field<?x?x?xf64> -> !stencil.field<[-2,34]x[-2,34]x[-2,34]xf64>
    %out = stencil.cast %dst : !stencil.field<?x?x?xf64> -> !stencil.field<[-2,34]x[-2,34]x[-2,34]xf64>
    %u = stencil.load %in : !stencil.field<[-2,34]x[-2,34]x[-2,34]xf64> -> !stencil.temp<?x?x?xf64>
    %lap = stencil.apply(%v = %u : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %c = stencil.access %v[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %w = stencil.access %v[-1, 0, 0] : !stencil.temp<?x?x?xf64>
      %e = stencil.access %v[1, 0, 0] : !stencil.temp<?x?x?xf64>
      %s = stencil.access %v[0, -1, 0] : !stencil.temp<?x?x?xf64>
      %n = stencil.access %v[0, 1, 0] : !stencil.temp<?x?x?xf64>
      %b = stencil.access %v[0, 0, -1] : !stencil.temp<?x?x?xf64>
      %t = stencil.access %v[0, 0, 1] : !stencil.temp<?x?x?xf64>
      %x = arith.addf %w, %e : f64
      %y = arith.addf %s, %n : f64
      %z = arith.addf %b, %t : f64
      %xy = arith.addf %x, %y : f64
      %sum = arith.addf %xy, %z : f64
      %six = arith.constant 6.0 : f64
      %cc = arith.mulf %six, %c : f64
      %r = arith.subf %sum, %cc : f64
      %res = stencil.store_result %r : !stencil.result<f64>
      stencil.return %res : !stencil.result<f64>
    }
    stencil.store %lap to %out(<[0, 0, 0], [32, 32, 32]>) : !stencil.temp<?x?x?xf64> to !stencil.field<[-2,34]x[-2,34]x[-2,34]xf64>
    func.return
  }
}
