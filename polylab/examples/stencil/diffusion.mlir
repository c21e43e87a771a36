// A horizontal diffusion in the style of weather codes (our own formulation): a 5-point Laplacian, limited
// fluxes in i and j (a flux is zeroed when it would sharpen the gradient), and the update
// out = in - coeff * (divergence of the fluxes). Four applies; the Laplacian has three consumers.
module {
  func @diffusion(%in: !stencil.field<?x?x?xf64>, %coeff: !stencil.field<?x?x?xf64>, %out: !stencil.field<?x?x?xf64>) attributes {stencil.program} {
    %fin = stencil.cast %in([-3, -3, 0] : [35, 35, 16]) : (!stencil.field<?x?x?xf64>) -> !stencil.field<38x38x16xf64>
    %fco = stencil.cast %coeff([-3, -3, 0] : [35, 35, 16]) : (!stencil.field<?x?x?xf64>) -> !stencil.field<38x38x16xf64>
    %fout = stencil.cast %out([-3, -3, 0] : [35, 35, 16]) : (!stencil.field<?x?x?xf64>) -> !stencil.field<38x38x16xf64>
    %u = stencil.load %fin : (!stencil.field<38x38x16xf64>) -> !stencil.temp<?x?x?xf64>
    %k = stencil.load %fco : (!stencil.field<38x38x16xf64>) -> !stencil.temp<?x?x?xf64>
    %lap = stencil.apply (%a = %u : !stencil.temp<?x?x?xf64>) -> !stencil.temp<?x?x?xf64> {
      %c = stencil.access %a [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %w = stencil.access %a [-1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %e = stencil.access %a [1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %s = stencil.access %a [0, -1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %n = stencil.access %a [0, 1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %we = addf %w, %e : f64
      %sn = addf %s, %n : f64
      %nb = addf %we, %sn : f64
      %four = constant 4.0 : f64
      %c4 = mulf %four, %c : f64
      %l = subf %nb, %c4 : f64
      %r = stencil.store_result %l : (f64) -> !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %fli = stencil.apply (%a = %u : !stencil.temp<?x?x?xf64>, %b = %lap : !stencil.temp<?x?x?xf64>) -> !stencil.temp<?x?x?xf64> {
      %l1 = stencil.access %b [1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %l0 = stencil.access %b [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %f = subf %l1, %l0 : f64
      %u1 = stencil.access %a [1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %u0 = stencil.access %a [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %g = subf %u1, %u0 : f64
      %fg = mulf %f, %g : f64
      %zero = constant 0.0 : f64
      %sharp = cmpf "ogt", %fg, %zero : f64
      %lim = select %sharp, %zero, %f : f64
      %r = stencil.store_result %lim : (f64) -> !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %flj = stencil.apply (%a = %u : !stencil.temp<?x?x?xf64>, %b = %lap : !stencil.temp<?x?x?xf64>) -> !stencil.temp<?x?x?xf64> {
      %l1 = stencil.access %b [0, 1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %l0 = stencil.access %b [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %f = subf %l1, %l0 : f64
      %u1 = stencil.access %a [0, 1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %u0 = stencil.access %a [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %g = subf %u1, %u0 : f64
      %fg = mulf %f, %g : f64
      %zero = constant 0.0 : f64
      %sharp = cmpf "ogt", %fg, %zero : f64
      %lim = scf.if %sharp -> (f64) {
        scf.yield %zero : f64
      } else {
        scf.yield %f : f64
      }
      %r = stencil.store_result %lim : (f64) -> !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %res = stencil.apply (%a = %u : !stencil.temp<?x?x?xf64>, %fi = %fli : !stencil.temp<?x?x?xf64>, %fj = %flj : !stencil.temp<?x?x?xf64>, %kk = %k : !stencil.temp<?x?x?xf64>) -> !stencil.temp<?x?x?xf64> {
      %fi0 = stencil.access %fi [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %fim = stencil.access %fi [-1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %fj0 = stencil.access %fj [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %fjm = stencil.access %fj [0, -1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %di = subf %fi0, %fim : f64
      %dj = subf %fj0, %fjm : f64
      %div = addf %di, %dj : f64
      %kc = stencil.access %kk [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %kd = mulf %kc, %div : f64
      %uc = stencil.access %a [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %new = subf %uc, %kd : f64
      %r = stencil.store_result %new : (f64) -> !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    stencil.store %res to %fout([0, 0, 0] : [32, 32, 16]) : !stencil.temp<?x?x?xf64> to !stencil.field<38x38x16xf64>
    return
  }
}
