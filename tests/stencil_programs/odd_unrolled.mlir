// A 3-point sum on 5 points, unrolled by 2: the last block has one copy only, so the load needs
// [-1, 6) and no more (a shape inference that rounds up to whole blocks would ask for [-1, 7)).
builtin.module {
  func.func @odd(%in: !stencil.field<?xf64>, %out: !stencil.field<?xf64>) {
    %fi = stencil.cast %in : !stencil.field<?xf64> -> !stencil.field<[-1,6]xf64>
    %fo = stencil.cast %out : !stencil.field<?xf64> -> !stencil.field<[-1,6]xf64>
    %t = stencil.load %fi : !stencil.field<[-1,6]xf64> -> !stencil.temp<[-1,6]xf64>
    %r = stencil.apply(%x = %t : !stencil.temp<[-1,6]xf64>) -> (!stencil.temp<[0,5]xf64>) {
      %l0 = stencil.access %x[-1] : !stencil.temp<[-1,6]xf64>
      %c0 = stencil.access %x[0] : !stencil.temp<[-1,6]xf64>
      %r0 = stencil.access %x[1] : !stencil.temp<[-1,6]xf64>
      %s0 = arith.addf %l0, %c0 : f64
      %v0 = arith.addf %s0, %r0 : f64
      %l1 = stencil.access %x[0] : !stencil.temp<[-1,6]xf64>
      %c1 = stencil.access %x[1] : !stencil.temp<[-1,6]xf64>
      %r1 = stencil.access %x[2] : !stencil.temp<[-1,6]xf64>
      %s1 = arith.addf %l1, %c1 : f64
      %v1 = arith.addf %s1, %r1 : f64
      stencil.return %v0, %v1 unroll <[2]> : f64, f64
    }
    stencil.store %r to %fo(<[0], [5]>) : !stencil.temp<[0,5]xf64> to !stencil.field<[-1,6]xf64>
    func.return
  }
}
