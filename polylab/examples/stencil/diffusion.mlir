// A horizontal diffusion in the style of weather codes (our own formulation): a 5-point Laplacian, limited
// fluxes in i and j (a flux is zeroed when it would sharpen the gradient), and the update
// out = in - coeff * (divergence of the fluxes). Four applies; the Laplacian has three consumers.
builtin.module {
  func.func @diffusion(%in: !stencil.field<?x?x?xf64>, %coeff: !stencil.field<?x?x?xf64>, %out: !stencil.field<?x?x?xf64>) attributes {stencil.program} {
    %fin = stencil.cast %in : !stencil.field<?x?x?xf64> -> !stencil.field<[-3,35]x[-3,35]x[0,16]xf64>
    %fco = stencil.cast %coeff : !stencil.field<?x?x?xf64> -> !stencil.field<[-3,35]x[-3,35]x[0,16]xf64>
    %fout = stencil.cast %out : !stencil.field<?x?x?xf64> -> !stencil.field<[-3,35]x[-3,35]x[0,16]xf64>
    %u = stencil.load %fin : !stencil.field<[-3,35]x[-3,35]x[0,16]xf64> -> !stencil.temp<?x?x?xf64>
    %k = stencil.load %fco : !stencil.field<[-3,35]x[-3,35]x[0,16]xf64> -> !stencil.temp<?x?x?xf64>
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
    %fli = stencil.apply(%a = %u : !stencil.temp<?x?x?xf64>, %b = %lap : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %l1 = stencil.access %b[1, 0, 0] : !stencil.temp<?x?x?xf64>
      %l0 = stencil.access %b[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %f = arith.subf %l1, %l0 : f64
      %u1 = stencil.access %a[1, 0, 0] : !stencil.temp<?x?x?xf64>
      %u0 = stencil.access %a[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %g = arith.subf %u1, %u0 : f64
      %fg = arith.mulf %f, %g : f64
      %zero = arith.constant 0.0 : f64
      %sharp = arith.cmpf ogt, %fg, %zero : f64
      %lim = arith.select %sharp, %zero, %f : f64
      %r = stencil.store_result %lim : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %flj = stencil.apply(%a = %u : !stencil.temp<?x?x?xf64>, %b = %lap : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %l1 = stencil.access %b[0, 1, 0] : !stencil.temp<?x?x?xf64>
      %l0 = stencil.access %b[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %f = arith.subf %l1, %l0 : f64
      %u1 = stencil.access %a[0, 1, 0] : !stencil.temp<?x?x?xf64>
      %u0 = stencil.access %a[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %g = arith.subf %u1, %u0 : f64
      %fg = arith.mulf %f, %g : f64
      %zero = arith.constant 0.0 : f64
      %sharp = arith.cmpf ogt, %fg, %zero : f64
      %lim = scf.if %sharp -> (f64) {
        scf.yield %zero : f64
      } else {
        scf.yield %f : f64
      }
      %r = stencil.store_result %lim : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %res = stencil.apply(%a = %u : !stencil.temp<?x?x?xf64>, %fi = %fli : !stencil.temp<?x?x?xf64>, %fj = %flj : !stencil.temp<?x?x?xf64>, %kk = %k : !stencil.temp<?x?x?xf64>) -> (!stencil.temp<?x?x?xf64>) {
      %fi0 = stencil.access %fi[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %fim = stencil.access %fi[-1, 0, 0] : !stencil.temp<?x?x?xf64>
      %fj0 = stencil.access %fj[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %fjm = stencil.access %fj[0, -1, 0] : !stencil.temp<?x?x?xf64>
      %di = arith.subf %fi0, %fim : f64
      %dj = arith.subf %fj0, %fjm : f64
      %div = arith.addf %di, %dj : f64
      %kc = stencil.access %kk[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %kd = arith.mulf %kc, %div : f64
      %uc = stencil.access %a[0, 0, 0] : !stencil.temp<?x?x?xf64>
      %new = arith.subf %uc, %kd : f64
      %r = stencil.store_result %new : !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    stencil.store %res to %fout(<[0, 0, 0], [32, 32, 16]>) : !stencil.temp<?x?x?xf64> to !stencil.field<[-3,35]x[-3,35]x[0,16]xf64>
    func.return
  }
}
