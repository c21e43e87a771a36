"""Lowering: a stencil program as a polyhedral model (:class:`polylab.model.Scop`).

After shape inference every apply has a box ``A``. The lowering makes

* one array per field argument (its present dimensions, extents from its bounds; ``x`` is stored at
  ``x - lb``), and one array per temp an apply or combine computes, with the temp's inferred extents
  (``x`` at ``x - A.lb``). A temp stored once, on exactly its box, is written straight into its field;
* one statement per apply result (and per unrolled copy): ``S[i, j, k]`` for ``(i, j, k)`` in ``A``
  (unrolled by ``u``: the points ``lb + u t``, and copy ``c`` writes ``x + c``), whose right-hand side is
  the body's returned value as an expression tree (:mod:`polylab.stencil.expressions`), reading the
  operands' arrays at the access offsets;
* two copy statements per combine result (below and from the split index), and one per other store;
* the schedule of the program's order: statement ``S`` of operation number ``g`` at ``[g, i, j, k, c]``
  (the results and copies of one apply share a loop nest);
* the live-out elements: the store ranges of the output fields.

The model's own C text (``Scop.source``: the loops of that schedule) is the original program every
schedule is verified against, so dependences, schedules, tiling, storage contraction of temps and code
generation apply unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product
from math import prod
import islpy as isl

from polylab.errors import SourceLocation
from polylab.model.expr import ArrayRef, Assignment, Expr, assignment_to_c, to_c, transform, walk
from polylab.model.scop import Access as MAccess, Scop, Statement
from polylab.reference.builder import make_scop
from polylab.stencil.cnames import CNames
from polylab.stencil.errors import StencilError, located
from polylab.stencil.expressions import CTYPES, MAX_NODES, BodyTrees, Storage, tree_size
from polylab.stencil.ir import loc_of
from polylab.stencil.ops import Apply, Combine, Load, Store
from polylab.stencil.program import Program
from polylab.stencil.shapes import base_points_box, require_shapes, split_box
from polylab.stencil.types import Box, TempType

ITERATORS = ("i", "j", "k", "l", "m", "n", "p", "q")


@dataclass(frozen=True, eq=False)
class Lowering:
    """A stencil program and its model: ``program`` (with its boxes), ``scop``, the array of each field
    argument (``fields``) and of each computed temp (``temps``), as ``(value, array)`` pairs."""

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


@dataclass
class _Nest:
    """One loop nest of the original program: a box, its step, and its statements."""

    group: int
    box: Box
    step: tuple[int, ...]
    statements: list[Statement]


class _Lowerer:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.rank = program.rank
        if self.rank > len(ITERATORS):
            raise StencilError(f"the program has {self.rank} dimensions; polylab lowers at most {len(ITERATORS)}")
        self.iters = ITERATORS[: self.rank]
        self.names = CNames(self.iters)
        self.storage: dict[str, Storage] = {}
        self.arrays: list[tuple[str, str, tuple[int, ...]]] = []
        self.fields: list[tuple[str, str]] = []
        self.temps: list[tuple[str, str]] = []
        self.nests: list[_Nest] = []
        self.count = 0
        self.direct: dict[str, Store] = {}

    # -- arrays ---------------------------------------------------------------------------------------------
    def field(self, value: str) -> Storage:
        arg = self.program.field_argument(value)
        bounds = self.program.bounds(value)
        ftype = self.program.field_type(value)
        present = ftype.present
        if arg not in dict(self.fields):
            name = self.names(arg, "f")
            self.fields.append((arg, name))
            self.arrays.append((name, CTYPES[ftype.element], tuple(e for e, p in zip(bounds.extent, present) if p)))
        return Storage(dict(self.fields)[arg], bounds.lb, present)

    def temp(self, value: str, box: Box, t: TempType) -> Storage:
        if value in self.direct:
            return self.field(self.direct[value].field)
        name = self.names(value, "t")
        self.temps.append((value, name))
        self.arrays.append((name, CTYPES[t.element], box.extent))
        return Storage(name, box.lb, (True,) * self.rank)

    # -- statements -----------------------------------------------------------------------------------------
    def statement(self, target: ArrayRef, value: Expr, domain: isl.Set, loc: SourceLocation | None) -> Statement:
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
        where = SourceLocation(loc.line if loc else 0, loc.column if loc else 1, text, text)
        accesses = [self.access(0, "write", target, domain, where)]
        accesses += [self.access(k + 1, "read", r, domain, where) for k, r in enumerate(reads)]
        return Statement(name, text, where, self.iters, domain, tuple(accesses), body)

    def access(self, index: int, kind: str, ref: ArrayRef, domain: isl.Set, where: SourceLocation) -> MAccess:
        name = domain.get_tuple_name()
        rel = isl.Map(f"{{ {name}[{', '.join(self.iters)}] -> {ref.array}[{', '.join(to_c(i) for i in ref.indices)}] }}")
        return MAccess(index, kind, ref.array, rel.intersect_domain(domain), where, to_c(ref))  # type: ignore[arg-type]

    def domain(self, box: Box, step: tuple[int, ...]) -> isl.Set:
        cons = [f"{lo} <= {it} < {hi}" for it, lo, hi in zip(self.iters, box.lb, box.ub)]
        cons += [f"({it} - ({lo})) mod {f} = 0" for it, lo, f in zip(self.iters, box.lb, step) if f > 1]
        return isl.Set(f"{{ S[{', '.join(self.iters)}] : {' and '.join(cons)} }}")

    # -- operations -----------------------------------------------------------------------------------------
    def run(self) -> Lowering:
        stored = {s.temp: s for s in self.program.stores}
        for op in self.program.ops:
            if isinstance(op, (Apply, Combine)) and op.box is not None:
                for r in op.results:
                    s = stored.get(r)
                    if s is not None and s.box == op.box:
                        self.direct[r] = s
        for g, op in enumerate(self.program.ops):
            if isinstance(op, Load) and op.box is not None:
                self.storage[op.result] = self.field(op.field)
            elif isinstance(op, Apply) and op.box is not None:
                self.apply(g, op)
            elif isinstance(op, Combine) and op.box is not None:
                self.combine(g, op)
            elif isinstance(op, Store) and op.temp not in self.direct:
                self.copy(g, op)
        return self.finish()

    def apply(self, g: int, op: Apply) -> None:
        assert op.box is not None
        base, u = base_points_box(op.box, op.unroll)
        for d, (lo, hi, f) in enumerate(zip(op.box.lb, op.box.ub, u)):
            if (hi - lo) % f:
                raise located(f"lowering needs the domain to be divisible by the unroll factor: this apply is "
                              f"unrolled by {f} in dimension {d}, and its box {op.box} has {hi - lo} points "
                              f"there", loc_of(op),
                              hint=f"choose a factor that divides {hi - lo}, or a domain whose extent is a "
                                   f"multiple of {f}")
        storage = {a: self.storage[o] for a, o, t in zip(op.args, op.operands, op.arg_types)
                   if isinstance(t, TempType)}
        outs = [self.temp(r, op.box, t) for r, t in zip(op.results, op.result_types)]
        trees = BodyTrees(op.body, storage, self.iters).returned()
        domain = self.domain(base, u)
        nest = _Nest(g, base, u, [])
        copies = list(product(*(range(f) for f in u)))
        for c, shift in enumerate(copies):
            for r, out in enumerate(outs):
                value = trees[c * len(outs) + r]
                if tree_size(value) > MAX_NODES:
                    raise located(f"the body of this apply is too large to lower as one expression "
                                  f"({tree_size(value)} nodes)", loc_of(op), hint="run cse first")
                nest.statements.append(self.statement(out.ref(self.iters, shift), value, domain, loc_of(op)))
        for r, out in zip(op.results, outs):
            self.storage[r] = out
        self.nests.append(nest)

    def combine(self, g: int, op: Combine) -> None:
        assert op.box is not None
        lo, hi = split_box(op.box, op.dim, op.index)
        outs = [self.temp(r, op.box, t) for r, t in zip(op.results, op.result_types)]
        zero = (0,) * self.rank
        for part, side in ((lo, op.lower), (hi, op.upper)):
            if part.size == 0:
                continue
            nest = _Nest(g, part, (1,) * self.rank, [])
            domain = self.domain(part, (1,) * self.rank)
            for out, v in zip(outs, side):
                src = self.storage[v].ref(self.iters, zero)
                nest.statements.append(self.statement(out.ref(self.iters, zero), src, domain, loc_of(op)))
            self.nests.append(nest)
        for r, out in zip(op.results, outs):
            self.storage[r] = out

    def copy(self, g: int, op: Store) -> None:
        zero = (0,) * self.rank
        target = self.field(op.field).ref(self.iters, zero)
        src = self.storage[op.temp].ref(self.iters, zero)
        domain = self.domain(op.box, (1,) * self.rank)
        self.nests.append(_Nest(g, op.box, (1,) * self.rank, [self.statement(target, src, domain, loc_of(op))]))

    def finish(self) -> Lowering:
        pieces, live = [], []
        for nest in self.nests:
            for c, s in enumerate(nest.statements):
                pieces.append(f"{s.name}[{', '.join(self.iters)}] -> [{nest.group}, {', '.join(self.iters)}, {c}]")
        for st in self.program.stores:
            ref = self.field(st.field)
            idx = [f"{it} - ({o})" for it, o, p in zip(self.iters, ref.origin, ref.present) if p]
            cons = " and ".join(f"{lo} <= {it} < {hi}" for it, lo, hi, p in
                                zip(self.iters, st.box.lb, st.box.ub, ref.present) if p) or "true"
            live.append(f"{ref.array}[a{', a'.join(str(d) for d in range(len(idx)))}] : exists "
                        f"{', '.join(self.iters)} : {cons} and " +
                        " and ".join(f"a{d} = {e}" for d, e in enumerate(idx)))
        statements = [s for n in self.nests for s in n.statements]
        scop = make_scop(self.program.name, statements, arrays=self.arrays, schedule="{ " + "; ".join(pieces) + " }",
                         live_out="{ " + "; ".join(live) + " }")
        scop = replace(scop, source=self.source(), location=SourceLocation(1, 1, "", ""))
        return Lowering(self.program, scop, tuple(self.fields), tuple(self.temps))

    def source(self) -> str:
        """The C text of the original program: one loop nest per nest, in order."""
        lines = []
        for nest in self.nests:
            for d, (it, lo, hi, f) in enumerate(zip(self.iters, nest.box.lb, nest.box.ub, nest.step)):
                step = f"{it}++" if f == 1 else f"{it} += {f}"
                lines.append("  " * d + f"for ({it} = {lo}; {it} < {hi}; {step})")
            pad = "  " * self.rank
            lines.append(pad[:-2] + "  {" if nest.statements else "")
            lines += [pad + "  " + s.text for s in nest.statements]
            lines.append(pad + "}")
        return "\n".join(lines) + "\n"


def lower(program: Program) -> Lowering:
    """The model of ``program`` (shapes are inferred first when it has none; see the module)."""
    program = require_shapes(program)
    if prod(len(s.box.extent) for s in program.stores) == 0:
        raise StencilError("the program stores nothing")
    return _Lowerer(program).run()
