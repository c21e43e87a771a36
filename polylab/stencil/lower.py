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
from itertools import product
from math import prod

import islpy as isl
from xdsl.dialects.stencil import ApplyOp, CombineOp, DynAccessOp, LoadOp, StencilBoundsAttr, StoreOp, TempType
from xdsl.ir import Operation, SSAValue

from polylab.errors import SourceLocation
from polylab.model.build import make_scop
from polylab.model.expr import ArrayRef, Assignment, Expr, assignment_to_c, to_c, transform, walk
from polylab.model.scop import Access as MAccess, Scop, Statement
from polylab.stencil.cnames import CNames
from polylab.stencil.errors import StencilError, UnsupportedStencilError
from polylab.stencil.expressions import CTYPES, MAX_NODES, BodyTrees, Storage, tree_size
from polylab.stencil.interpret import Box, returned, split, unroll_of
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


def has_shapes(program: Program) -> bool:
    return all(isinstance(r.type, TempType) and isinstance(r.type.bounds, StencilBoundsAttr)
               for op in program.ops if isinstance(op, (ApplyOp, CombineOp, LoadOp)) for r in op.results)


def require_shapes(program: Program) -> Program:
    """The program with its shapes (xDSL's ``shape-inference`` when it has none)."""
    if has_shapes(program):
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
        self.dims = _field_dims(program)
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
        name = f"S{self.count}"
        self.count += 1
        domain = domain.set_tuple_name(name)
        refs: dict[tuple[str, str], int] = {}
        reads: list[ArrayRef] = []
        for r in walk(value):
            if isinstance(r, ArrayRef) and (r.array, to_c(r)) not in refs:
                refs[(r.array, to_c(r))] = len(refs) + 1
                reads.append(r)
        body_value = transform(value, lambda x: ArrayRef(x.array, x.indices, refs[(x.array, to_c(x))])
                               if isinstance(x, ArrayRef) else None)
        body = Assignment(ArrayRef(target.array, target.indices, 0), "=", body_value)
        text = assignment_to_c(body)
        loc = self.p.location(op)
        where = SourceLocation(loc.line if loc else 0, loc.column if loc else 1, text, text)
        accesses = [self.access(0, "write", target, domain, where)]
        accesses += [self.access(k + 1, "read", r, domain, where) for k, r in enumerate(reads)]
        return Statement(name, text, where, self.iters, domain, tuple(accesses), body)

    def access(self, index: int, kind: str, ref: ArrayRef, domain: isl.Set, where: SourceLocation) -> MAccess:
        name = domain.get_tuple_name()
        subscripts = ", ".join(to_c(i) for i in ref.indices)
        rel = isl.Map(f"{{ {name}[{', '.join(self.iters)}] -> {ref.array}[{subscripts}] }}")
        return MAccess(index, kind, ref.array, rel.intersect_domain(domain), where, to_c(ref))  # type: ignore[arg-type]

    def domain(self, box: Box, step: tuple[int, ...] | None = None, shift: tuple[int, ...] | None = None) -> isl.Set:
        """``{ x : lb <= x, x + shift < ub, (x - lb) mod step = 0 }``."""
        step = step or (1,) * self.rank
        shift = shift or (0,) * self.rank
        cons = [f"{lo} <= {it} < {hi - s}" for it, lo, hi, s in zip(self.iters, box[0], box[1], shift)]
        cons += [f"({it} - ({lo})) mod {f} = 0" for it, lo, f in zip(self.iters, box[0], step) if f > 1]
        return isl.Set(f"{{ S[{', '.join(self.iters)}] : {' and '.join(cons)} }}")

    # -- operations -----------------------------------------------------------------------------------------
    def run(self) -> Lowering:
        stored: dict[SSAValue, list[StoreOp]] = {}
        for s in self.p.stores:
            stored.setdefault(s.temp, []).append(s)
        for op in self.p.ops:
            if isinstance(op, (ApplyOp, CombineOp)):
                for r in op.results:
                    s = stored.get(r, [])
                    if len(s) == 1 and box_of(r.type) == (tuple(s[0].bounds.lb), tuple(s[0].bounds.ub)):
                        self.direct[r] = s[0]
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
        storage = {k: self.storage[v] for k, v in enumerate(op.args) if v in self.storage}
        outs = [self.temp(r, box) for r in op.results]
        trees = BodyTrees(storage, self.iters, self.located)
        u = unroll_of(op)
        values = returned(op)
        statements = []
        for c, shift in enumerate(product(*(range(f) for f in u))):
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
        for r, out in zip(op.results, outs):
            self.storage[r] = out
        self.nests.append((g, statements))

    def combine(self, g: int, op: CombineOp) -> None:
        box = box_of(op.results[0].type)
        if box is None:
            raise self.located("a combine without a shape is not lowered", op)
        lower, upper = split(box, op.dim.value.data, op.index.value.data)
        outs = [self.temp(r, box) for r in op.results]
        zero = (0,) * self.rank
        sides = [[(lower, lo), (upper, hi)] for lo, hi in zip(op.lower, op.upper)]
        sides += [[(lower, v)] for v in op.lowerext] + [[(upper, v)] for v in op.upperext]
        for part_index in range(2):
            statements = []
            for out, pieces in zip(outs, sides):
                for part, v in pieces:
                    if (part is lower) == (part_index == 0) and all(a < b for a, b in zip(*part)):
                        src = self.storage[v].ref(self.iters, zero)
                        statements.append(self.statement(out.ref(self.iters, zero), src, self.domain(part), op))
            if statements:
                self.nests.append((g, statements))
        for r, out in zip(op.results, outs):
            self.storage[r] = out

    def copy(self, g: int, op: StoreOp) -> None:
        zero = (0,) * self.rank
        target = self.field(op.field).ref(self.iters, zero)
        src = self.storage[op.temp].ref(self.iters, zero)
        box = (tuple(op.bounds.lb), tuple(op.bounds.ub))
        self.nests.append((g, [self.statement(target, src, self.domain(box), op)]))

    def finish(self) -> Lowering:
        pieces, live = [], []
        for g, statements in self.nests:
            for c, s in enumerate(statements):
                pieces.append(f"{s.name}[{', '.join(self.iters)}] -> [{g}, {', '.join(self.iters)}, {c}]")
        for st in self.p.stores:
            ref = self.field(st.field)
            idx = [f"{it} - ({o})" for it, o, p in zip(self.iters, ref.origin, ref.present) if p]
            cons = " and ".join(f"{lo} <= {it} < {hi}" for it, lo, hi, p in
                                zip(self.iters, st.bounds.lb, st.bounds.ub, ref.present) if p) or "true"
            live.append(f"{ref.array}[a{', a'.join(str(d) for d in range(len(idx)))}] : exists "
                        f"{', '.join(self.iters)} : {cons} and " +
                        " and ".join(f"a{d} = {e}" for d, e in enumerate(idx)))
        statements = [s for _, n in self.nests for s in n]
        if not statements:
            raise StencilError("the program computes nothing", hint="store the result of an apply into a field")
        scop = make_scop(self.p.name, statements, arrays=self.arrays, schedule="{ " + "; ".join(pieces) + " }",
                         live_out="{ " + "; ".join(live) + " }")
        scop = replace(scop, source=self.source(), location=SourceLocation(1, 1, "", ""))
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


def _field_dims(program: Program) -> dict[SSAValue, list[int]]:
    """The domain dimensions of each field argument of lower rank (from its accesses' offset mappings)."""
    from xdsl.dialects.stencil import AccessOp

    out: dict[SSAValue, list[int]] = {}
    for apply in program.applies:
        for inner in apply.walk():
            if isinstance(inner, AccessOp) and inner.offset_mapping is not None:
                operand = apply.args[inner.temp.index]
                if isinstance(operand.owner, LoadOp):
                    out[program.argument(operand.owner.field)] = list(inner.offset_mapping)
    return out


def lower(program: Program) -> Lowering:
    """The model of ``program`` (shapes are inferred first when it has none; see the module)."""
    program = require_shapes(program)
    if not program.stores:
        raise StencilError("the program stores nothing", hint="store an apply's result: stencil.store %r to %f(...)")
    return _Lowerer(program).run()
