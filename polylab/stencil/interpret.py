"""The reference interpreter: the stencil dialect's semantics evaluated with numpy, independent of every pass.

Written from the dialect's definition (Open Earth's, which xDSL implements), not from xDSL's passes:

* ``stencil.load`` gives a field's values as a temp; ``stencil.store %t to %f(<lb, ub>)`` writes the temp's
  values on that box into the field.
* ``stencil.apply`` computes its results at every point ``x`` of its box by running its body there;
  ``stencil.access %a[o]`` reads the operand at ``x + o`` (with an offset mapping, only the mapped
  dimensions: a field without some dimensions), ``stencil.index d <o>`` is ``x_d + o_d``,
  ``stencil.dyn_access`` reads at computed coordinates, promised to lie within ``x + [lb, ub]``.
* ``stencil.return ... unroll <u>``: the body runs at the points ``lb + u * t`` only and returns
  ``prod(u)`` values per result, **result-major**: operand ``r * prod(u) + c`` is result ``r`` at
  ``x + shift(c)``, the shifts in row-major order of ``range(u_0) x range(u_1) x ...``. A copy whose point
  lies beyond the box is not computed (so nothing is read for it: the box need not be a multiple of ``u``).
* ``stencil.combine d at i``: the lower operands below coordinate ``i`` of dimension ``d``, the upper ones
  from ``i`` on (``lowerext``/``upperext``: results defined on one side only).

Boxes: an operation with bounds in its result type (after shape inference) computes on them, one without on
the hull of what its uses read (the bodies evaluated in the algebra of boxes: :class:`_Reads`). A use that
reads beyond an operation's bounds, or a load beyond its field's, is a located error (so a shape inference
that gives too small a box is caught). Every value is a numpy array over its box, a read a slice of one.

Arithmetic: IEEE double or single, rounded once per operation (as the generated C compiled with
``-ffp-contract=off``); ``scf.if`` evaluates both branches and chooses per point (branches are pure).
"""

from __future__ import annotations

import math
from itertools import product
from math import prod
from typing import Any, Iterator, Mapping

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.dialects.func import ReturnOp as FuncReturn
from xdsl.dialects.stencil import (AccessOp, ApplyOp, BufferOp, CastOp, CombineOp, DynAccessOp, IndexOp, LoadOp,
                                   ReturnOp, StoreOp, StoreResultOp)
from xdsl.ir import BlockArgument, Operation, SSAValue

from polylab.stencil.errors import StencilError, UnsupportedStencilError
from polylab.stencil.program import Box, Program, box_of, name_of

#: the numpy type of each scalar type of the dialect
DTYPES = {"f64": np.float64, "f32": np.float32, "index": np.int64, "i64": np.int64, "i32": np.int32, "i1": np.bool_}
_NUMPY = {"arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
          "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply, "arith.maximumf": np.fmax,
          "arith.minimumf": np.fmin, "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "arith.andi": np.bitwise_and,
          "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor, "math.powf": np.power, "math.sqrt": np.sqrt,
          "math.absf": np.abs, "arith.negf": np.negative, "math.floor": np.floor, "math.ceil": np.ceil}
#: math functions numpy does not compute correctly rounded: the C library's, through Python's math
_LIBM = {"math.exp": math.exp, "math.log": math.log, "math.sin": math.sin, "math.cos": math.cos,
         "math.tanh": math.tanh}
_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal}
CASTS = ("arith.index_cast", "arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf", "arith.fptosi",
         "arith.fptoui")


def dtype_of(t: Any) -> Any:
    return DTYPES.get(str(t), np.float64)


def extents(box: Box) -> tuple[int, ...]:
    return tuple(hi - lo for lo, hi in zip(*box))


def contains(outer: Box, inner: Box) -> bool:
    """``inner`` lies in ``outer`` (an empty ``inner`` everywhere)."""
    return any(n <= 0 for n in extents(inner)) or all(
        a <= b and d <= c for a, b, c, d in zip(outer[0], inner[0], outer[1], inner[1]))


def hull(*boxes: Box | None) -> Box | None:
    """The smallest box holding every non-empty box of ``boxes`` (None when there is none)."""
    full = [b for b in boxes if b is not None and all(n > 0 for n in extents(b))]
    return (tuple(map(min, zip(*(b[0] for b in full)))), tuple(map(max, zip(*(b[1] for b in full))))) if full else None


def box_text(box: Box) -> str:
    return f"<[{', '.join(map(str, box[0]))}], [{', '.join(map(str, box[1]))}]>"


def window(data: np.ndarray, origin: tuple[int, ...], box: Box) -> np.ndarray:
    """The elements on ``box`` of ``data``, whose first element is the point ``origin`` (a view)."""
    return data[tuple(slice(lo - o, hi - o) for lo, hi, o in zip(*box, origin))]


def unroll_of(apply: ApplyOp) -> tuple[int, ...]:
    ret = apply.region.block.last_op
    assert isinstance(ret, ReturnOp)
    return tuple(ret.unroll) if ret.unroll is not None else (1,) * apply.get_rank()


def copies(apply: ApplyOp, box: Box) -> Iterator[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """``(c, shift, counts)`` of each unrolled copy with points in ``box``: copy ``c`` computes the points
    ``lb + shift + u * t`` of the box (``0 <= t < counts``)."""
    u = unroll_of(apply)
    for c, shift in enumerate(product(*map(range, u))):
        counts = tuple(len(range(s, n, f)) for s, n, f in zip(shift, extents(box), u))
        if 0 not in counts:
            yield c, shift, counts


def returned(apply: ApplyOp) -> list[SSAValue]:
    ret = apply.region.block.last_op
    assert isinstance(ret, ReturnOp)
    return list(ret.arg)


def split(box: Box, dim: int, index: int) -> tuple[Box, Box]:
    """The parts of ``box`` below ``index`` in ``dim`` and from it on."""
    cut = min(max(index, box[0][dim]), box[1][dim])
    return ((box[0], box[1][:dim] + (cut,) + box[1][dim + 1:]), (box[0][:dim] + (cut,) + box[0][dim + 1:], box[1]))


def combine_parts(op: CombineOp, box: Box) -> list[list[tuple[int, Box, SSAValue]]]:
    """For each result of the combine computed on ``box``: ``(side, part, operand)`` for each non-empty part
    of the box (side 0: below the split, 1: from it on) and the operand the result takes there."""
    parts = split(box, op.dim.value.data, op.index.value.data)
    sides = [[(0, lo), (1, hi)] for lo, hi in zip(op.lower, op.upper)]
    sides += [[(0, v)] for v in op.lowerext] + [[(1, v)] for v in op.upperext]
    return [[(k, parts[k], v) for k, v in pieces if all(n > 0 for n in extents(parts[k]))] for pieces in sides]


def predicate(op: Operation) -> str:
    """The predicate of ``arith.cmpf`` / ``arith.cmpi`` by name (``ogt``, ``slt``)."""
    names = arith.CMPF_COMPARISON_OPERATIONS if op.name == "arith.cmpf" else arith.CMPI_COMPARISON_OPERATIONS
    return names[op.predicate.value.data]


class Body:
    """An apply's body evaluated in some algebra, each value once and only those asked for: the structure is
    read here, and a subclass says what each value is (numpy arrays, boxes, or the lowering's C trees)."""

    def __init__(self, program: Program, apply: ApplyOp) -> None:
        self.program, self.apply, self.rank = program, apply, apply.get_rank()
        self.memo: dict[SSAValue, Any] = {}

    def value(self, v: SSAValue) -> Any:
        if v not in self.memo:
            self.memo[v] = self.define(v)
        return self.memo[v]

    def define(self, v: SSAValue) -> Any:
        op = v.owner
        if isinstance(v, BlockArgument):
            return self.argument(self.apply.args[v.index])
        if isinstance(op, AccessOp):
            dims = list(op.offset_mapping) if op.offset_mapping is not None else list(range(self.rank))
            return self.access(self.apply.args[op.temp.index], dims, list(op.offset), op)
        if isinstance(op, IndexOp):
            return self.index(op.dim.value.data, list(op.offset)[op.dim.value.data])
        if isinstance(op, DynAccessOp):
            return self.dyn_access(op)
        if isinstance(op, StoreResultOp) and op.arg is not None:
            return self.value(op.arg)
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, (FloatAttr, IntegerAttr)):
            return self.constant(op.value.value.data, str(op.value.type))
        if isinstance(op, scf.IfOp):
            k = list(op.results).index(v)
            return self.choose(self.value(op.cond), *(self.value(r.block.last_op.operands[k])
                                                      for r in (op.true_region, op.false_region)))
        if isinstance(op, arith.SelectOp):
            return self.choose(*(self.value(a) for a in op.operands))
        return self.operation(op, [self.value(a) for a in op.operands])

    def refuse(self, message: str, op: Operation | None) -> StencilError:
        return self.program.error(message, op, error=UnsupportedStencilError)

    def dyn_access(self, op: DynAccessOp) -> Any:
        raise self.refuse("stencil.dyn_access reads at computed coordinates: not an affine access", op)

    # the algebra (here: of nothing, every value None; the subclasses' algebras override these)
    def argument(self, operand: SSAValue) -> Any: ...
    def access(self, operand: SSAValue, dims: list[int], offsets: list[int], op: AccessOp) -> Any: ...
    def index(self, dim: int, offset: int) -> Any: ...
    def constant(self, value: float | int, type_name: str) -> Any: ...
    def choose(self, cond: Any, then: Any, other: Any) -> Any: ...
    def operation(self, op: Operation, args: list[Any]) -> Any: ...


def interpret(program: Program, fields: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The stored fields after the program: ``fields`` maps each argument's name (``arg0``) to its values
    (a field's over its bounds); the result maps each stored field to a new array (inputs are not changed)."""
    run = _Run(program, fields)
    with np.errstate(all="ignore"):
        for op in program.ops:
            if isinstance(op, StoreOp):
                run.store(op)
            elif not isinstance(op, (CastOp, FuncReturn, LoadOp, ApplyOp, CombineOp, BufferOp, arith.ConstantOp)):
                raise program.error(f"the interpreter does not run {op.name} outside an apply", op)
    return run.out


class _Run:
    def __init__(self, program: Program, fields: Mapping[str, Any]) -> None:
        self.p, self.fields = program, fields
        self.needs: dict[SSAValue, Box | None] = {}
        self.memo: dict[SSAValue, np.ndarray] = {}
        self.out: dict[str, np.ndarray] = {}

    def field(self, value: SSAValue) -> tuple[Box, np.ndarray]:
        name, bounds = self.p.argument_name(value), self.p.field_bounds(value)
        if name not in self.fields:
            raise StencilError(f"no values given for the field {name}")
        data = np.asarray(self.fields[name])
        if data.shape != extents(bounds):
            raise StencilError(f"the values of {name} have the shape {data.shape}; its bounds "
                               f"{box_text(bounds)} need {extents(bounds)}")
        return bounds, data

    def store(self, op: StoreOp) -> None:
        name = self.p.argument_name(op.field)
        bounds, data = self.field(op.field)
        box = box_of(op.bounds)
        if not contains(bounds, box):
            raise self.p.error(f"stencil.store writes {box_text(box)}, outside the field's bounds {box_text(bounds)}",
                               op, hint="store on a box inside the field's bounds")
        window(self.out.setdefault(name, np.array(data, copy=True)), bounds[0], box)[...] = \
            self.read(op.temp, box, op)

    # -- boxes: what the uses of a temp read, and where an operation computes -----------------------------------
    def need(self, value: SSAValue) -> Box | None:
        """The hull of the boxes the uses of ``value`` read (None: nothing reads it)."""
        if value not in self.needs:
            boxes = []
            for use in value.uses:
                op = use.operation
                if isinstance(op, StoreOp):
                    boxes.append(box_of(op.bounds))
                elif isinstance(op, BufferOp):
                    boxes.append(self.need(op.res))
                elif isinstance(op, (ApplyOp, CombineOp)) and (box := self.box(op)) is not None:
                    boxes.append(self.reads(op, box).get(value))
            self.needs[value] = hull(*boxes)
        return self.needs[value]

    def box(self, op: Operation) -> Box | None:
        """The box ``op`` computes on: the bounds of its result type, or the hull of its results' demand."""
        return box_of(op.results[0].type) or hull(*map(self.need, op.results))

    def reads(self, op: ApplyOp | CombineOp, box: Box) -> dict[SSAValue, Box]:
        """The box of each operand that ``op`` reads to compute its results on ``box`` (an apply's body
        evaluated in the algebra of boxes)."""
        out: dict[SSAValue, Box] = {}
        if isinstance(op, CombineOp):
            for _, part, v in (piece for pieces in combine_parts(op, box) for piece in pieces):
                out[v] = hull(out.get(v), part)
            return out
        values, n = returned(op), prod(unroll_of(op))
        for c, shift, counts in copies(op, box):
            body = _Reads(self, op, box[0], counts, out)
            for r in range(len(op.results)):
                body.value(values[r * n + c])
        return out

    # -- values ----------------------------------------------------------------------------------------------------
    def read(self, value: SSAValue, box: Box, user: Operation) -> np.ndarray:
        """The values of the temp ``value`` on ``box`` (inside what its producer computes), for ``user``."""
        op = value.owner
        if not isinstance(op, (LoadOp, BufferOp, ApplyOp, CombineOp)):
            raise self.p.error(f"{name_of(value)} is not a temp: {user.name} cannot read it", user)
        where, need = self.box(op), self.need(value)
        if need is not None and not contains(where, need):
            raise self.p.error(f"{op.name} gives {name_of(value)} on {box_text(where)}, but its uses read "
                               f"{box_text(need)}", op, hint="shape inference gave this operation too small a box")
        if value not in self.memo:
            self.memo.update(zip(op.results, self.compute(op, where)))
        return window(self.memo[value], where[0], box)

    def compute(self, op: Operation, box: Box) -> list[np.ndarray]:
        if isinstance(op, LoadOp):
            bounds, data = self.field(op.field)
            if not contains(bounds, box):
                raise self.p.error(f"stencil.load reads the field {self.p.argument_name(op.field)} on "
                                   f"{box_text(box)}, outside its bounds {box_text(bounds)}", op,
                                   hint="the field is too small for what the program reads: enlarge its bounds")
            return [window(data, bounds[0], box)]
        if isinstance(op, BufferOp):
            return [self.read(op.temp, box, op)]
        results = [np.full(extents(box), np.nan, dtype=dtype_of(r.type.get_element_type())) for r in op.results]
        if isinstance(op, CombineOp):
            for data, pieces in zip(results, combine_parts(op, box)):
                for _, part, v in pieces:
                    window(data, box[0], part)[...] = self.read(v, part, op)
            return results
        u, values = unroll_of(op), returned(op)
        for c, shift, counts in copies(op, box):
            body = _Values(self, op, box[0], counts)
            for r, data in enumerate(results):
                data[tuple(slice(s, None, f) for s, f in zip(shift, u))] = \
                    np.broadcast_to(body.value(values[r * prod(u) + c]), counts)
        return results


class _Points(Body):
    """The body at the base points ``lb + u * t`` (``0 <= t < counts``, ``u``: the apply's unroll factors)."""

    def __init__(self, run: _Run, apply: ApplyOp, lb: tuple[int, ...], counts: tuple[int, ...]) -> None:
        super().__init__(run.p, apply)
        self.run, self.lb, self.step, self.counts = run, lb, unroll_of(apply), counts

    def span(self, offsets: list[int], dims: list[int] | range) -> Box:
        """The box of the points moved by ``offsets`` in dimensions ``dims``."""
        return (tuple(self.lb[d] + o for d, o in zip(dims, offsets)),
                tuple(self.lb[d] + self.step[d] * (self.counts[d] - 1) + o + 1 for d, o in zip(dims, offsets)))

    def promised(self, op: DynAccessOp) -> Box:
        """The box a ``stencil.dyn_access`` promises to read within."""
        return self.span(list(op.lb), range(self.rank))[0], self.span(list(op.ub), range(self.rank))[1]


class _Reads(_Points):
    """The body in the algebra of boxes: the box each access reads joins ``out`` (its operand's demand)."""

    def __init__(self, run: _Run, apply: ApplyOp, lb: tuple[int, ...], counts: tuple[int, ...],
                 out: dict[SSAValue, Box]) -> None:
        super().__init__(run, apply, lb, counts)
        self.out = out

    def access(self, operand: SSAValue, dims: list[int], offsets: list[int], op: AccessOp) -> None:
        self.out[operand] = hull(self.out.get(operand), self.span(offsets, dims))

    def dyn_access(self, op: DynAccessOp) -> None:
        for v in op.offset:
            self.value(v)
        operand = self.apply.args[op.temp.index]
        self.out[operand] = hull(self.out.get(operand), self.promised(op))


class _Values(_Points):
    """The body's values at the points, as numpy arrays of the shape ``counts``."""

    def argument(self, operand: SSAValue) -> Any:
        """A scalar operand: a constant, or a function argument (its value from ``fields``)."""
        if isinstance(operand.owner, arith.ConstantOp):
            return dtype_of(operand.type)(operand.owner.value.value.data)
        if operand not in self.program.func.body.block.args:
            raise self.program.error(f"{name_of(operand)} is a temp: read it with stencil.access", self.apply)
        name = self.program.argument_name(operand)
        if name not in self.run.fields:
            raise StencilError(f"no value given for the scalar argument {name}")
        return dtype_of(operand.type)(self.run.fields[name])

    def access(self, operand: SSAValue, dims: list[int], offsets: list[int], op: AccessOp) -> Any:
        data = self.run.read(operand, self.span(offsets, dims), op)[tuple(slice(None, None, self.step[d])
                                                                          for d in dims)]
        return data.reshape(tuple(self.counts[d] if d in dims else 1 for d in range(self.rank)))

    def index(self, dim: int, offset: int) -> Any:
        coords = self.lb[dim] + offset + self.step[dim] * np.arange(self.counts[dim], dtype=np.int64)
        return coords.reshape(tuple(-1 if k == dim else 1 for k in range(self.rank)))

    def dyn_access(self, op: DynAccessOp) -> Any:
        box = self.promised(op)
        data = self.run.read(self.apply.args[op.temp.index], box, op)
        coords = [np.broadcast_to(self.value(i), self.counts).astype(np.int64) - lo for i, lo in zip(op.offset, box[0])]
        if any(c.size and (c.min() < 0 or c.max() >= n) for c, n in zip(coords, data.shape)):
            raise self.program.error(f"stencil.dyn_access reads outside its promised box {box_text(box)}", op,
                                     hint="the coordinates must stay within the access's promised range")
        return data[tuple(coords)]

    def constant(self, value: float | int, type_name: str) -> Any:
        return dtype_of(type_name)(value)

    def choose(self, cond: Any, then: Any, other: Any) -> Any:
        return np.where(cond, then, other)

    def operation(self, op: Operation, args: list[Any]) -> Any:
        name, dtype = op.name, dtype_of(op.results[0].type) if op.results else None
        if name in _NUMPY:
            return _NUMPY[name](*args)
        if name in _LIBM:
            flat = np.asarray(args[0], dtype=np.float64).reshape(-1)
            return np.array([_libm(_LIBM[name], x) for x in flat]).reshape(np.shape(args[0])).astype(dtype)
        if name == "arith.cmpf":
            p = predicate(op)
            if p in ("false", "true"):
                return np.full(np.broadcast(*args).shape, p == "true")
            nan = np.isnan(args[0]) | np.isnan(args[1])
            if p in ("ord", "uno"):
                return ~nan if p == "ord" else nan
            return _COMPARE[p[1:]](*args) | nan if p[0] == "u" else _COMPARE[p[1:]](*args) & ~nan
        if name == "arith.cmpi":
            return _COMPARE[predicate(op).lstrip("su")](*args)
        if name in CASTS:
            return (np.trunc(args[0]) if name.startswith("arith.fpto") else np.asarray(args[0])).astype(dtype)
        if name == "arith.divsi":
            return np.trunc(np.divide(args[0], args[1])).astype(dtype)
        raise self.refuse(f"the interpreter does not run {name}", op)


def _libm(fn: Any, x: float) -> float:
    try:
        return float(fn(x))
    except (ValueError, OverflowError):
        return math.inf if fn is math.exp and x > 0 else math.nan
