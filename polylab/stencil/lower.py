"""Lowering: a stencil program as a polyhedral model (:class:`polylab.model.Scop`).

After shape inference (run here when the program has no shapes) every apply has a box ``A``. The lowering
makes

* one array per field argument (its own dimensions, extents from its bounds; ``x`` is stored at
  ``x - lb``), and one array per temp an apply or combine computes, with the box's extents (``x`` at
  ``x - A.lb``). A temp stored once, on exactly its box, is written straight into its field;
* one statement per apply result and unrolled copy: copy ``c`` (shift ``s``) of result ``r`` is
  ``S[x]`` for the base points ``x = lb + u t`` with ``x + s`` in ``A``, writing ``x + s``; its right-hand
  side is the returned value ``r * prod(u) + c`` (result-major, as the dialect defines) as an expression
  tree reading the operands' arrays at the access offsets;
* copy statements for each combine result (below and from the split index) and for each other store;
* the schedule of the program's order: statement ``S`` of operation number ``g`` at ``[g, x, c]``;
* the live-out elements: the store ranges of the output fields.

The trees (:mod:`polylab.model.expr`) are a body read in the algebra of C (:class:`Trees`): a value used twice
appears twice (the operations are pure; the C compiler shares the work again); an unordered ``cmpf``
predicate is the negation of the opposite ordered one, true on NaN as it must be (``ugt``: ``(a <= b) ? 0 :
1``). The model's own C text (``Scop.source``) is the original every schedule is verified against.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import reduce
from itertools import product
from math import prod
from typing import Any

import islpy as isl
from xdsl.dialects.stencil import AccessOp, ApplyOp, CombineOp, DynAccessOp, LoadOp, StoreOp
from xdsl.ir import Operation, SSAValue

from polylab.errors import SourceLocation
from polylab.model.build import make_scop, make_statement
from polylab.model.expr import ArrayRef, Binary as CBinary, Call, Cast, Cond, Const, Expr, Name, Unary, children
from polylab.model.scop import Scop, Statement
from polylab.reference.cvalue import literal
from polylab.stencil.errors import StencilError, UnsupportedStencilError
from polylab.stencil.interpret import Body, Box, combine_parts, predicate, returned, unroll_of
from polylab.stencil.program import Program, box_of, name_of

ITERATORS = ("i", "j", "k", "l", "m", "n", "p", "q")
C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Bool _Complex _Imaginary main kernel min max floord sqrt exp log fabs pow sin cos tanh floor ceil
fmax fmin abs""".split())
_BINARY = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/", "arith.addi": "+",
           "arith.subi": "-", "arith.muli": "*"}
_MATH = {"math.sqrt": "sqrt", "math.absf": "fabs", "math.exp": "exp", "math.log": "log", "math.sin": "sin",
         "math.cos": "cos", "math.tanh": "tanh", "math.floor": "floor", "math.ceil": "ceil", "math.powf": "pow",
         "arith.maximumf": "fmax", "arith.minimumf": "fmin"}
#: a cmpf predicate without its o/u prefix, or a signed cmpi predicate without its s -> the C comparison
_CMP = {"eq": "==", "ne": "!=", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}
_CASTS = ("arith.index_cast", "arith.sitofp", "arith.fptosi", "arith.extf", "arith.truncf")
_OPPOSITE = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}

#: the C type of each scalar type of the dialect
CTYPES = {"f64": "double", "f32": "float", "index": "int", "i64": "long long", "i32": "int", "i1": "int"}
#: the largest expression tree one statement may hold (a DAG written as a tree can grow exponentially)
MAX_NODES = 200_000


@dataclass(frozen=True)
class Storage:
    """Where a temp's values live: ``array[x - origin]`` in the ``present`` dimensions."""

    array: str
    origin: tuple[int, ...]
    present: tuple[bool, ...]

    def ref(self, iterators: tuple[str, ...], offset: tuple[int, ...]) -> ArrayRef:
        """The element of the point ``iterators + offset`` (the access number is set later)."""
        idx = tuple(shifted(Name(it), off - o)
                    for it, off, o, p in zip(iterators, offset, self.origin, self.present) if p)
        return ArrayRef(self.array, idx, -1)


def shifted(e: Expr, c: int) -> Expr:
    """``e + c`` (``e - |c|`` for a negative ``c``; ``e`` for 0)."""
    if c == 0:
        return e
    return CBinary("+", e, Const(str(c))) if c > 0 else CBinary("-", e, Const(str(-c)))


def type_name(t: Any) -> str:
    return str(t) if str(t) in CTYPES else "f64"


class Trees(Body):
    """The trees of one apply's body at the points ``iterators`` (``storage``: where each operand's values
    live)."""

    def __init__(self, program: Program, apply: ApplyOp, storage: dict[SSAValue, Storage],
                 iterators: tuple[str, ...]) -> None:
        super().__init__(program, apply)
        self.storage, self.iterators = storage, iterators

    def argument(self, operand: SSAValue) -> Expr:
        raise self.refuse("a scalar argument of an apply is not lowered to the model", self.apply)

    def access(self, operand: SSAValue, dims: list[int], offsets: list[int], op: AccessOp) -> Expr:
        full = [0] * self.rank
        for d, o in zip(dims, offsets):
            full[d] = o
        return self.storage[operand].ref(self.iterators, tuple(full))

    def index(self, dim: int, offset: int) -> Expr:
        return shifted(Name(self.iterators[dim]), offset)

    def constant(self, value: float | int, kind: str) -> Expr:
        """The exact C literal (:func:`polylab.reference.cvalue.literal`; infinities and NaN as in math.h)."""
        ctype = CTYPES[type_name(kind)]
        if math.isfinite(value):
            return literal(value, ctype)
        return Const({"inf": "HUGE_VAL", "-inf": "-HUGE_VAL"}.get(repr(float(value)), "NAN"), ctype)

    def choose(self, cond: Expr, then: Expr, other: Expr) -> Expr:
        return Cond(cond, then, other)

    def operation(self, op: Operation, args: list[Expr]) -> Expr:
        name = op.name
        if name in _BINARY:
            return CBinary(_BINARY[name], *args)
        if name == "arith.negf":
            return Unary("-", args[0])
        if name in _MATH:
            return Call(_MATH[name] + ("f" if type_name(op.results[0].type) == "f32" else ""), tuple(args))
        if name == "arith.cmpi" and predicate(op).lstrip("s") in _CMP:
            return CBinary(_CMP[predicate(op).lstrip("s")], *args)
        if name == "arith.cmpf" and predicate(op)[1:] in _CMP:
            return comparison(predicate(op), *args)
        if name in _CASTS:
            return Cast(CTYPES[type_name(op.results[0].type)], args[0])
        raise self.refuse(f"{name} is not lowered to the model's expressions", op)


def comparison(pred: str, a: Expr, b: Expr) -> Expr:
    """``cmpf`` with predicate ``pred`` as a C condition (see the module's documentation)."""
    c, unordered = _CMP[pred[1:]], pred[0] == "u"
    if c == "!=" and not unordered:      # one: ordered and different
        return CBinary("||", CBinary("<", a, b), CBinary(">", a, b))
    if c == "==" and unordered:          # ueq: unordered or equal
        return Cond(CBinary("||", CBinary("<", a, b), CBinary(">", a, b)), Const("0"), Const("1"))
    if not unordered or c == "!=":
        return CBinary(c, a, b)
    return Cond(CBinary(_OPPOSITE[c], a, b), Const("0"), Const("1"))


def c_name(name: str, used: set[str], prefix: str) -> str:
    """A C identifier for the MLIR name ``name`` (``%arg0``, ``%5#1``, ``%for.x``, ``%int`` become ``arg0``,
    ``t5_1``, ``for_x``, ``int_``), not in ``used`` (then added to it): characters outside ``[A-Za-z0-9_]``
    become ``_``, a leading digit gets ``prefix``, C keywords, the statements' names (``S0``) and the harness's
    reserved ``polylab`` prefix a trailing ``_``, and a name already taken a numeric suffix."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", name.lstrip("%").replace("#", "_")) or prefix
    base = prefix + base if base[0].isdigit() else base
    if base in C_KEYWORDS or base.startswith(("polylab", "__")) or re.fullmatch(r"S\d+", base):
        base += "_"
    name, n = base, 1
    while name in used:
        name, n = f"{base}_{n}", n + 1
    used.add(name)
    return name


def tree_size(e: Expr) -> int:
    """The number of nodes of ``e`` written as a tree (shared subtrees counted each time)."""
    memo: dict[int, int] = {}

    def size(x: Any) -> int:
        if id(x) not in memo:
            memo[id(x)] = 1 + sum(size(c) for c in children(x))
        return memo[id(x)]

    return size(e)


@dataclass(frozen=True, eq=False)
class Lowering:
    """A stencil program (with its boxes) and its model; the array of each field argument (``fields``) and of
    each computed temp (``temps``), by name."""

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
        self.used = set(self.iters)
        self.storage: dict[SSAValue, Storage] = {}
        self.arrays: list[tuple[str, str, tuple[int, ...]]] = []
        self.fields: dict[str, str] = {}
        self.temps: list[tuple[str, str]] = []
        self.nests: list[tuple[int, list[Statement]]] = []
        self.count = 0
        self.direct: dict[SSAValue, StoreOp] = {}
        self.dims = program.field_dims()

    def located(self, message: str, op: Operation | None) -> StencilError:
        return self.p.error(message, op, error=UnsupportedStencilError)

    # -- arrays ---------------------------------------------------------------------------------------------
    def field(self, value: SSAValue) -> Storage:
        name = self.p.argument_name(value)
        lb, ub = self.p.field_bounds(value)
        dims = self.dims.get(self.p.argument(value), list(range(self.rank)))
        if name not in self.fields:
            self.fields[name] = c_name(name, self.used, "f")
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
        name = c_name(key, self.used, "t")
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
                    lo, hi, step = s.domain.dim_min_val(d), s.domain.dim_max_val(d), s.domain.get_stride(d).to_python()
                    lines.append("  " * d + f"for ({it} = {lo}; {it} <= {hi}; " + (f"{it}++)" if step == 1 else
                                                                                   f"{it} += {step})"))
                lines.append("  " * self.rank + s.text)
        return "\n".join(lines) + "\n"


def lower(program: Program) -> Lowering:
    """The model of ``program`` (shapes are inferred first when it has none; see the module)."""
    program = require_shapes(program)
    if not program.stores:
        raise StencilError("the program stores nothing", hint="store an apply's result: stencil.store %r to %f(...)")
    return _Lowerer(program).run()
