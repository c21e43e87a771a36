// A separable 2D blur: a 3-point average along i, then along j (two applies), with a negated copy of
// the first pass kept as a second output on a smaller range.
module {
  func @blur2d(%img: !stencil.field<?x?xf64>, %out: !stencil.field<?x?xf64>, %neg: !stencil.field<?x?xf64>) attributes {stencil.program} {
    %fi = stencil.cast %img([-1, -1] : [65, 65]) : (!stencil.field<?x?xf64>) -> !stencil.field<66x66xf64>
    %fo = stencil.cast %out([-1, -1] : [65, 65]) : (!stencil.field<?x?xf64>) -> !stencil.field<66x66xf64>
    %fn = stencil.cast %neg([-1, -1] : [65, 65]) : (!stencil.field<?x?xf64>) -> !stencil.field<66x66xf64>
    %t = stencil.load %fi : (!stencil.field<66x66xf64>) -> !stencil.temp<?x?xf64>
    %h:2 = stencil.apply (%x = %t : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>, !stencil.temp<?x?xf64>) {
      %a = stencil.access %x [-1, 0] : (!stencil.temp<?x?xf64>) -> f64
      %b = stencil.access %x [0, 0] : (!stencil.temp<?x?xf64>) -> f64
      %c = stencil.access %x [1, 0] : (!stencil.temp<?x?xf64>) -> f64
      %ab = addf %a, %b : f64
      %abc = addf %ab, %c : f64
      %w = constant 0.25 : f64
      %b2 = addf %b, %b : f64
      %s = addf %abc, %b2 : f64
      %m = mulf %s, %w : f64
      %nm = negf %m : f64
      %r0 = stencil.store_result %m : (f64) -> !stencil.result<f64>
      %r1 = stencil.store_result %nm : (f64) -> !stencil.result<f64>
      stencil.return %r0, %r1 : !stencil.result<f64>, !stencil.result<f64>
    }
    %v = stencil.apply (%x = %h#0 : !stencil.temp<?x?xf64>) -> !stencil.temp<?x?xf64> {
      %a = stencil.access %x [0, -1] : (!stencil.temp<?x?xf64>) -> f64
      %b = stencil.access %x [0, 0] : (!stencil.temp<?x?xf64>) -> f64
      %c = stencil.access %x [0, 1] : (!stencil.temp<?x?xf64>) -> f64
      %ac = addf %a, %c : f64
      %half = constant 0.5 : f64
      %acw = mulf %ac, %half : f64
      %s = addf %acw, %b : f64
      %m = mulf %s, %half : f64
      %r = stencil.store_result %m : (f64) -> !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    stencil.store %v to %fo([0, 0] : [64, 64]) : !stencil.temp<?x?xf64> to !stencil.field<66x66xf64>
    stencil.store %h#1 to %fn([8, 8] : [56, 56]) : !stencil.temp<?x?xf64> to !stencil.field<66x66xf64>
    return
  }
}
