builtin.module {
  func.func @smooth(%in: !stencil.field<?x?xf64>, %out: !stencil.field<?x?xf64>) {
    %fi = stencil.cast %in : !stencil.field<?x?xf64> -> !stencil.field<[-1,17]x[-1,17]xf64>
    %fo = stencil.cast %out : !stencil.field<?x?xf64> -> !stencil.field<[-1,17]x[-1,17]xf64>
    %u = stencil.load %fi : !stencil.field<[-1,17]x[-1,17]xf64> -> !stencil.temp<?x?xf64>
    %v = stencil.apply(%a = %u : !stencil.temp<?x?xf64>) -> (!stencil.temp<?x?xf64>) {
      BODY
    }
    stencil.store %v to %fo(<[0, 0], [16, 16]>) : !stencil.temp<?x?xf64> to !stencil.field<[-1,17]x[-1,17]xf64>
    func.return
  }
}
