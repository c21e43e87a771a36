"""Lowering: a stencil program as a polyhedral model (:class:`polylab.model.Scop`).

After shape inference (run here when the program has no shapes) every apply has a box ``A``. The lowering
makes

* one array per field argument (its own dimensions, extents from its bounds; ``x`` is stored at
  ``x - lb``), and one array per temp an apply or combine computes, with the box's extents (``x`` at
  ``x - A.lb``). A temp stored once, on exactly its box, is written straight into its field;
* one statement per apply result and unrolled copy: copy ``c`` (shift ``s``) of result ``r`` is
  ``S[x]`` for the base points ``x = lb + u t`` with ``x + s`` in ``A``, writing ``x + s``; its right-hand
  side is the returned value ``r * prod(u) + c`` (result-major, as the dialect defines) as an expression
  tree (:mod:`polylab.stencil.expressions`) reading the operands' arrays at the access offsets;
* copy statements for each combine result (below and from the split index) and for each other store;
* the schedule of the program's order: statement ``S`` of operation number ``g`` at ``[g, x, c]``;
* the live-out elements: the store ranges of the output fields.

The model's own C text (``Scop.source``) is the original program every schedule is verified against, so
dependences, schedules, tiling, storage contraction of temps and code generation apply unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import reduce
from itertools import product
from math import prod

import islpy as isl
from xdsl.dialects.stencil import ApplyOp, CombineOp, DynAccessOp, LoadOp, StoreOp
from xdsl.ir import Operation, SSAValue

from polylab.errors import SourceLocation
from polylab.model.build import make_scop, make_statement
from polylab.model.expr import ArrayRef, Expr
from polylab.model.scop import Scop, Statement
from polylab.stencil.cnames import CNames
from polylab.stencil.errors import StencilError, UnsupportedStencilError
from polylab.stencil.expressions import CTYPES, MAX_NODES, Storage, Trees, tree_size
from polylab.stencil.interpret import Box, combine_parts, returned, unroll_of
from polylab.stencil.program import Program, box_of, name_of

ITERATORS = ("i", "j", "k", "l", "m", "n", "p", "q")


@dataclass(frozen=True, eq=False)
class Lowering:
    """A stencil program and its model: ``program`` (with its boxes), ``scop``, the array of each field
    argument (``fields``: argument name -> array) and of each computed temp (``temps``: value name -> array)."""

    program: Program
    scop: Scop
    fields: tuple[tuple[str, str], ...]
    temps: tuple[tuple[str, str], ...]

    def field_array(self, field: str) -> str:
        return dict(self.fields)[field]

    def __str__(self) -> str:
        return str(self.scop)

    def _repr_html_(self) -> str:
        return self.scop._repr_html_()


def require_shapes(program: Program) -> Program:
    """The program with its shapes (xDSL's ``shape-inference`` when some temp has none)."""
    if all(box_of(r.type) is not None for op in program.ops if isinstance(op, (ApplyOp, CombineOp, LoadOp))
           for r in op.results):
        return program
    from polylab.stencil.passes import run_passes

    return run_passes(program, "shape-inference")


class _Lowerer:
    def __init__(self, program: Program) -> None:
        self.p = program
        self.rank = program.rank
        if self.rank > len(ITERATORS):
            raise StencilError(f"the program has {self.rank} dimensions; polylab lowers at most {len(ITERATORS)}")
        self.iters = ITERATORS[: self.rank]
        self.names = CNames(self.iters)
        self.storage: dict[SSAValue, Storage] = {}
        self.arrays: list[tuple[str, str, tuple[int, ...]]] = []
        self.fields: dict[str, str] = {}
        self.temps: list[tuple[str, str]] = []
        self.nests: list[tuple[int, list[Statement]]] = []
        self.count = 0
        self.direct: dict[SSAValue, StoreOp] = {}
        self.dims = program.field_dims()
        self.steps: dict[str, tuple[int, ...]] = {}

    def located(self, message: str, op: Operation | None) -> StencilError:
        return self.p.error(message, op, error=UnsupportedStencilError)

    # -- arrays ---------------------------------------------------------------------------------------------
    def field(self, value: SSAValue) -> Storage:
        name = self.p.argument_name(value)
        lb, ub = self.p.field_bounds(value)
        dims = self.dims.get(self.p.argument(value), list(range(self.rank)))
        if name not in self.fields:
            self.fields[name] = self.names("%" + name, "f")
            element = CTYPES.get(str(value.type.get_element_type()), "double")
            self.arrays.append((self.fields[name], element, tuple(h - lo for lo, h in zip(lb, ub))))
        origin = [0] * self.rank
        for d, lo in zip(dims, lb):
            origin[d] = lo
        return Storage(self.fields[name], tuple(origin), tuple(d in dims for d in range(self.rank)))

    def temp(self, value: SSAValue, box: Box) -> Storage:
        if value in self.direct:
            return self.field(self.direct[value].field)
        key = name_of(value) if value.name_hint else f"%t{len(self.temps)}"
        if isinstance(value.owner, Operation) and len(value.owner.results) > 1:
            key += f"#{value.index}"
        name = self.names(key, "t")
        self.temps.append((key, name))
        element = CTYPES.get(str(value.type.get_element_type()), "double")
        self.arrays.append((name, element, tuple(h - lo for lo, h in zip(*box))))
        return Storage(name, box[0], (True,) * self.rank)

    # -- statements -----------------------------------------------------------------------------------------
    def statement(self, target: ArrayRef, value: Expr, domain: isl.Set, op: Operation) -> Statement:
        loc = self.p.location(op)
        self.count += 1
        return make_statement(f"S{self.count - 1}", domain, target, value, loc.line if loc else 0,
                              loc.column if loc else 1)

    def domain(self, box: Box, step: tuple[int, ...] | None = None, shift: tuple[int, ...] | None = None) -> isl.Set:
        """``{ x : lb <= x, x + shift < ub, (x - lb) mod step = 0 }``."""
        step = step or (1,) * self.rank
        shift = shift or (0,) * self.rank
        cons = [f"{lo} <= {it} < {hi - s}" for it, lo, hi, s in zip(self.iters, box[0], box[1], shift)]
        cons += [f"({it} - ({lo})) mod {f} = 0" for it, lo, f in zip(self.iters, box[0], step) if f > 1]
        return isl.Set(f"{{ S[{', '.join(self.iters)}] : {' and '.join(cons)} }}")

    # -- operations -----------------------------------------------------------------------------------------
    def run(self) -> Lowering:
        temps = [s.temp for s in self.p.stores]
        self.direct = {s.temp: s for s in self.p.stores if temps.count(s.temp) == 1 and box_of(s.temp.type) ==
                       box_of(s.bounds) and isinstance(s.temp.owner, (ApplyOp, CombineOp))}
        for g, op in enumerate(self.p.ops):
            if isinstance(op, LoadOp):
                self.storage[op.res] = self.field(op.field)
            elif isinstance(op, ApplyOp):
                self.apply(g, op)
            elif isinstance(op, CombineOp):
                self.combine(g, op)
            elif isinstance(op, StoreOp) and op.temp not in self.direct:
                self.copy(g, op)
        return self.finish()

    def apply(self, g: int, op: ApplyOp) -> None:
        box = box_of(op.results[0].type) if op.results else None
        if box is None:
            raise self.located("an apply without results (the bufferized form) is not lowered", op)
        for inner in op.walk():
            if isinstance(inner, DynAccessOp):
                raise self.located("stencil.dyn_access reads at computed coordinates: not an affine access, so the "
                                   "program has no polyhedral model", inner)
        outs = [self.temp(r, box) for r in op.results]
        trees = Trees(self.p, op, self.storage, self.iters)
        u, values = unroll_of(op), returned(op)
        statements = []
        for c, shift in enumerate(product(*map(range, u))):
            domain = self.domain(box, u, shift)
            if domain.is_empty():
                continue
            for r, out in enumerate(outs):
                value = trees.value(values[r * prod(u) + c])
                if tree_size(value) > MAX_NODES:
                    raise self.located(f"the body of this apply is too large to lower as one expression "
                                       f"({tree_size(value)} nodes)", op)
                statements.append(self.statement(out.ref(self.iters, shift), value, domain, op))
                self.steps[statements[-1].name] = u
        self.storage.update(zip(op.results, outs))
        self.nests.append((g, statements))

    def combine(self, g: int, op: CombineOp) -> None:
        box = box_of(op.results[0].type)
        if box is None:
            raise self.located("a combine without a shape is not lowered", op)
        outs = [self.temp(r, box) for r in op.results]
        zero = (0,) * self.rank
        parts = combine_parts(op, box)
        for side in (0, 1):
            statements = [self.statement(out.ref(self.iters, zero), self.storage[v].ref(self.iters, zero),
                                         self.domain(part), op)
                          for out, pieces in zip(outs, parts) for k, part, v in pieces if k == side]
            if statements:
                self.nests.append((g, statements))
        self.storage.update(zip(op.results, outs))

    def copy(self, g: int, op: StoreOp) -> None:
        zero = (0,) * self.rank
        target = self.field(op.field).ref(self.iters, zero)
        src = self.storage[op.temp].ref(self.iters, zero)
        self.nests.append((g, [self.statement(target, src, self.domain(box_of(op.bounds)), op)]))

    def finish(self) -> Lowering:
        statements = [s for _, n in self.nests for s in n]
        if not statements:
            raise StencilError("the program computes nothing", hint="store the result of an apply into a field")
        its = ", ".join(self.iters)
        schedule = "; ".join(f"{s.name}[{its}] -> [{g}, {its}, {c}]" for g, n in self.nests for c, s in enumerate(n))
        live = reduce(isl.UnionSet.union, [isl.UnionSet.from_set(s.accesses[0].relation.range()) for s in statements
                                           if s.accesses[0].array in self.fields.values()])
        scop = make_scop(self.p.name, statements, arrays=self.arrays, schedule="{ " + schedule + " }")
        scop = replace(scop, source=self.source(), location=SourceLocation(1, 1, "", ""), live_out=live)
        return Lowering(self.p, scop, tuple(self.fields.items()), tuple(self.temps))

    def source(self) -> str:
        """The C text of the original program: each statement's loops over its domain, in order."""
        lines = []
        for _, statements in self.nests:
            for s in statements:
                for d, it in enumerate(self.iters):
                    lo = s.domain.dim_min_val(d).to_python()
                    hi = s.domain.dim_max_val(d).to_python()
                    step = self.steps.get(s.name, (1,) * self.rank)[d]
                    lines.append("  " * d + f"for ({it} = {lo}; {it} <= {hi}; "
                                 + (f"{it}++)" if step == 1 else f"{it} += {step})"))
                lines.append("  " * self.rank + s.text)
        return "\n".join(lines) + "\n"


def lower(program: Program) -> Lowering:
    """The model of ``program`` (shapes are inferred first when it has none; see the module)."""
    program = require_shapes(program)
    if not program.stores:
        raise StencilError("the program stores nothing", hint="store an apply's result: stencil.store %r to %f(...)")
    return _Lowerer(program).run()
