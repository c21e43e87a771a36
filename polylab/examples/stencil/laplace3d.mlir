// A 7-point Laplacian in 3D: out = sum of the six neighbours - 6 * centre, on a 32^3 domain
// (fields with a halo of 2).
module {
  func @laplace3d(%src: !stencil.field<?x?x?xf64>, %dst: !stencil.field<?x?x?xf64>) attributes {stencil.program} {
    %in = stencil.cast %src([-2, -2, -2] : [34, 34, 34]) : (!stencil.field<?x?x?xf64>) -> !stencil.field<36x36x36xf64>
    %out = stencil.cast %dst([-2, -2, -2] : [34, 34, 34]) : (!stencil.field<?x?x?xf64>) -> !stencil.field<36x36x36xf64>
    %u = stencil.load %in : (!stencil.field<36x36x36xf64>) -> !stencil.temp<?x?x?xf64>
    %lap = stencil.apply (%v = %u : !stencil.temp<?x?x?xf64>) -> !stencil.temp<?x?x?xf64> {
      %c = stencil.access %v [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %w = stencil.access %v [-1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %e = stencil.access %v [1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %s = stencil.access %v [0, -1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %n = stencil.access %v [0, 1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %b = stencil.access %v [0, 0, -1] : (!stencil.temp<?x?x?xf64>) -> f64
      %t = stencil.access %v [0, 0, 1] : (!stencil.temp<?x?x?xf64>) -> f64
      %x = addf %w, %e : f64
      %y = addf %s, %n : f64
      %z = addf %b, %t : f64
      %xy = addf %x, %y : f64
      %sum = addf %xy, %z : f64
      %six = constant 6.0 : f64
      %cc = mulf %six, %c : f64
      %r = subf %sum, %cc : f64
      %res = stencil.store_result %r : (f64) -> !stencil.result<f64>
      stencil.return %res : !stencil.result<f64>
    }
    stencil.store %lap to %out([0, 0, 0] : [32, 32, 32]) : !stencil.temp<?x?x?xf64> to !stencil.field<36x36x36xf64>
    return
  }
}
