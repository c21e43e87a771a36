"""The polyhedral model (imports no other layer of polylab).

The package imports :mod:`polylab.model.display`, which registers the renderers of the model's values
with :mod:`polylab.render` (so ``Scop._repr_html_`` works without the core importing its display).
"""

from polylab.model import display
from polylab.model.expr import (ArrayRef, Assignment, Binary, Call, Cast, Cond, Const, Expr, Name, Unary,
                                assignment_to_c, to_c, transform, walk)
from polylab.model.scop import (Access, Array, DomainMatrix, Placement, Program, Rejection, Scalar, Scop, Statement,
                                affine_function, domain_matrices)

__all__ = ["Access", "Array", "ArrayRef", "Assignment", "Binary", "Call", "Cast", "Cond", "Const",
           "DomainMatrix", "Expr", "Name", "Placement", "Program", "Rejection", "Scalar", "Scop", "Statement", "Unary",
           "affine_function", "assignment_to_c", "display", "domain_matrices", "to_c", "transform", "walk"]
