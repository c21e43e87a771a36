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

Boxes: an operation with bounds in its result type (after shape inference) computes on them; one without
computes on the hull of what its uses demand (the interpreter's own, independent demand analysis). Every
read is checked against the box of what it reads: a demand beyond a load's, an apply's or a field's box is
a located error (this is how a shape inference that gives too small a box is caught).

Arithmetic: IEEE double or single, rounded once per operation (as the generated C compiled with
``-ffp-contract=off``); ``scf.if`` evaluates both branches and chooses per point (branches are pure).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from math import prod
from typing import Any, Iterable, Mapping

import numpy as np
from xdsl.dialects import arith, math as xmath, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.dialects.stencil import (AccessOp, ApplyOp, BufferOp, CastOp, CombineOp, DynAccessOp, IndexOp, LoadOp,
                                   ReturnOp, StoreOp, StoreResultOp)
from xdsl.dialects.func import ReturnOp as FuncReturn
from xdsl.ir import BlockArgument, Operation, SSAValue

from polylab.stencil.errors import StencilError, UnsupportedStencilError
from polylab.stencil.program import Box, Program, box_of, name_of

_CMPF = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal}
_CMPI = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
         "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal}
_BINARY = {"arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
           "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
           "arith.maximumf": np.fmax, "arith.minimumf": np.fmin, "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
           "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
           "math.powf": np.power}
#: math functions numpy computes correctly rounded (others call the C library through Python's math)
_UNARY = {"math.sqrt": np.sqrt, "math.absf": np.abs, "arith.negf": np.negative, "math.floor": np.floor,
          "math.ceil": np.ceil}
_LIBM = {"math.exp": math.exp, "math.log": math.log, "math.sin": math.sin, "math.cos": math.cos,
         "math.tanh": math.tanh}


def dtype_of(t: Any) -> Any:
    """The numpy type of an MLIR element type."""
    text = str(t)
    return {"f64": np.float64, "f32": np.float32, "index": np.int64, "i64": np.int64, "i32": np.int32,
            "i1": np.bool_}.get(text, np.float64)


@dataclass(frozen=True)
class Temp:
    """Values on ``box`` (``data`` has the box's extents, in the temp's own dimensions)."""

    box: Box
    data: np.ndarray


def hull(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    return tuple(map(min, a[0], b[0])), tuple(map(max, a[1], b[1]))


def contains(outer: Box, inner: Box) -> bool:
    if any(lo >= hi for lo, hi in zip(*inner)):
        return True
    return all(a <= b and d <= c for a, b, c, d in zip(outer[0], inner[0], outer[1], inner[1]))


def box_text(box: Box) -> str:
    return f"<[{', '.join(map(str, box[0]))}], [{', '.join(map(str, box[1]))}]>"


def unroll_of(apply: ApplyOp) -> tuple[int, ...]:
    ret = apply.region.block.last_op
    assert isinstance(ret, ReturnOp)
    rank = apply.get_rank()
    return tuple(ret.unroll) if ret.unroll is not None else (1,) * rank


def copies(apply: ApplyOp, box: Box) -> list[tuple[int, tuple[int, ...], Box]]:
    """``(c, shift, base)`` for each unrolled copy: the box of base points ``lb + u * t`` whose shifted point
    ``x + shift`` lies in ``box`` (stepped by ``u``: :class:`Points`)."""
    u = unroll_of(apply)
    out = []
    for c, shift in enumerate(product(*(range(f) for f in u))):
        out.append((c, tuple(shift), (box[0], tuple(hi - s for hi, s in zip(box[1], shift)))))
    return out


@dataclass(frozen=True)
class Points:
    """The points ``lb + step * t`` inside the box ``[lb, ub)``, as a dense grid."""

    lb: tuple[int, ...]
    ub: tuple[int, ...]
    step: tuple[int, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(max(0, len(range(lo, hi, s))) for lo, hi, s in zip(self.lb, self.ub, self.step))

    @property
    def last(self) -> tuple[int, ...]:
        return tuple(lo + s * (n - 1) for lo, s, n in zip(self.lb, self.step, self.shape))

    @property
    def empty(self) -> bool:
        return 0 in self.shape

    def shifted_box(self, offset: Iterable[int], dims: Iterable[int]) -> Box:
        """The box spanned by the points plus ``offset`` in dimensions ``dims``."""
        dims = list(dims)
        return (tuple(self.lb[d] + o for d, o in zip(dims, offset)),
                tuple(self.last[d] + o + 1 for d, o in zip(dims, offset)))


def returned(apply: ApplyOp) -> list[SSAValue]:
    ret = apply.region.block.last_op
    assert isinstance(ret, ReturnOp)
    return list(ret.arg)


def slice_ops(value: SSAValue) -> list[Operation]:
    """The operations of the body that ``value`` depends on (a ``scf.if``: with everything inside it)."""
    seen: dict[int, Operation] = {}
    stack = [value]
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, Operation) or id(op) in seen or isinstance(op, ApplyOp):
            continue
        seen[id(op)] = op
        for inner in op.walk():
            stack.extend(inner.operands)
            if inner is not op:
                seen[id(inner)] = inner
    return list(seen.values())


def _demand(program: Program) -> dict[SSAValue, Box]:
    """The box of each temp that the program's stores need, propagated backwards through the operations."""
    need: dict[SSAValue, Box] = {}

    def add(v: SSAValue, box: Box) -> None:
        if all(lo < hi for lo, hi in zip(*box)):
            need[v] = hull(need.get(v), box)

    for op in reversed(program.ops):
        if isinstance(op, StoreOp):
            add(op.temp, (tuple(op.bounds.lb), tuple(op.bounds.ub)))
        elif isinstance(op, BufferOp) and op.res in need:
            add(op.temp, need[op.res])
        elif isinstance(op, ApplyOp):
            box = compute_box(op, need)
            if box is not None:
                for v, b in apply_reads(op, box).items():
                    add(v, b)
        elif isinstance(op, CombineOp):
            for v, b in combine_reads(op, need).items():
                add(v, b)
    return need


def compute_box(op: ApplyOp | CombineOp, need: Mapping[SSAValue, Box]) -> Box | None:
    """The box ``op`` computes on: the bounds of its result type, or the hull of its results' demand."""
    declared = box_of(op.results[0].type) if op.results else None
    if declared is not None:
        return declared
    box = None
    for r in op.results:
        if r in need:
            box = hull(box, need[r])
    return box


def apply_reads(op: ApplyOp, box: Box) -> dict[SSAValue, Box]:
    """The box of each operand that the apply reads to compute its results on ``box``."""
    out: dict[SSAValue, Box] = {}
    rank = op.get_rank()
    u = unroll_of(op)
    values = returned(op)
    n = prod(u)
    for r in range(len(op.results)):
        for c, shift, base in copies(op, box):
            pts = Points(base[0], base[1], u)
            if pts.empty:
                continue
            for inner in slice_ops(values[r * n + c]):
                if isinstance(inner, AccessOp) and isinstance(inner.temp, BlockArgument):
                    dims = list(inner.offset_mapping) if inner.offset_mapping is not None else list(range(rank))
                    operand = op.args[inner.temp.index]
                    out[operand] = hull(out.get(operand), pts.shifted_box(list(inner.offset), dims))
                elif isinstance(inner, DynAccessOp) and isinstance(inner.temp, BlockArgument):
                    operand = op.args[inner.temp.index]
                    lo = pts.shifted_box(list(inner.lb), range(rank))
                    hi = pts.shifted_box(list(inner.ub), range(rank))
                    out[operand] = hull(out.get(operand), (lo[0], hi[1]))
    return out


def combine_reads(op: CombineOp, need: Mapping[SSAValue, Box]) -> dict[SSAValue, Box]:
    box = compute_box(op, need)
    if box is None:
        return {}
    lower, upper = split(box, op.dim.value.data, op.index.value.data)
    out: dict[SSAValue, Box] = {}
    for v in list(op.lower) + list(op.lowerext):
        out[v] = lower
    for v in list(op.upper) + list(op.upperext):
        out[v] = upper
    return out


def split(box: Box, dim: int, index: int) -> tuple[Box, Box]:
    """The parts of ``box`` below ``index`` in ``dim`` and from it on."""
    lb, ub = list(box[0]), list(box[1])
    cut = min(max(index, lb[dim]), ub[dim])
    lo_ub, hi_lb = list(ub), list(lb)
    lo_ub[dim], hi_lb[dim] = cut, cut
    return (tuple(lb), tuple(lo_ub)), (tuple(hi_lb), tuple(ub))


def interpret(program: Program, fields: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The stored fields after the program: ``fields`` maps each field argument's name (``arg0``) to its
    values over its bounds; the result maps each stored field to a new array (inputs are not changed)."""
    return _Run(program, fields).run()


class _Run:
    def __init__(self, program: Program, fields: Mapping[str, np.ndarray]) -> None:
        self.p = program
        self.fields = fields
        self.need = _demand(program)
        self.env: dict[SSAValue, Any] = {}
        self.out: dict[str, np.ndarray] = {}

    def run(self) -> dict[str, np.ndarray]:
        with np.errstate(all="ignore"):
            for op in self.p.ops:
                self.top(op)
        return self.out

    def field_data(self, value: SSAValue) -> tuple[Box, np.ndarray]:
        name = self.p.argument_name(value)
        bounds = self.p.field_bounds(value)
        if name not in self.fields:
            raise StencilError(f"no values given for the field {name}")
        data = np.asarray(self.fields[name])
        want = tuple(hi - lo for lo, hi in zip(*bounds))
        if data.shape != want:
            raise StencilError(f"the values of {name} have the shape {data.shape}; its bounds "
                               f"{box_text(bounds)} need {want}")
        return bounds, data

    def top(self, op: Operation) -> None:
        if isinstance(op, (CastOp, FuncReturn)):
            return
        if isinstance(op, LoadOp):
            bounds, data = self.field_data(op.field)
            box = box_of(op.res.type) or self.need.get(op.res)
            if box is None:
                return
            self.check(op, op.res, box, f"the field {self.p.argument_name(op.field)}", bounds)
            self.env[op.res] = Temp(box, data[tuple(slice(lo - b, hi - b) for lo, hi, b in zip(*box, bounds[0]))])
        elif isinstance(op, BufferOp):
            if op.temp in self.env:
                self.env[op.res] = self.env[op.temp]
        elif isinstance(op, ApplyOp):
            self.apply(op)
        elif isinstance(op, CombineOp):
            self.combine(op)
        elif isinstance(op, StoreOp):
            self.store(op)
        elif isinstance(op, (arith.ConstantOp,)):
            self.env[op.result] = _constant(op)
        else:
            raise self.p.error(f"the interpreter does not run {op.name} outside an apply", op)

    def scalar(self, value: SSAValue, op: Operation) -> Any:
        """A scalar operand of an apply: a function argument (its value from ``fields``) or a constant."""
        if value in self.env and not isinstance(self.env[value], Temp):
            return self.env[value]
        if isinstance(value, BlockArgument) and value in self.p.func.body.block.args:
            name = self.p.argument_name(value)
            if name not in self.fields:
                raise StencilError(f"no value given for the scalar argument {name}")
            return dtype_of(value.type)(self.fields[name])
        raise self.p.error(f"{name_of(value)} is a temp: read it with stencil.access", op)

    def check(self, op: Operation, value: SSAValue, box: Box, what: str, outer: Box) -> None:
        """The demand on ``value`` lies in ``box``, and ``box`` in ``outer`` (the box it is computed from)."""
        need = self.need.get(value)
        if need is not None and not contains(box, need):
            raise self.p.error(f"{op.name} gives {name_of(value)} on {box_text(box)}, but its uses read "
                               f"{box_text(need)}", op, hint="shape inference gave this operation too small a box")
        if not contains(outer, box):
            raise self.p.error(f"{op.name} reads {what} on {box_text(box)}, outside its bounds {box_text(outer)}",
                               op, hint="the field is too small for what the program reads: enlarge its bounds")

    def temp(self, value: SSAValue, box: Box, op: Operation) -> np.ndarray:
        """The values of ``value`` on ``box`` (an error when ``box`` is not inside its computed box)."""
        t = self.env.get(value)
        if not isinstance(t, Temp):
            raise self.p.error(f"{name_of(value)} is read before it is computed", op)
        if not contains(t.box, box):
            raise self.p.error(f"reads {name_of(value)} on {box_text(box)}, outside the box {box_text(t.box)} it "
                               f"was computed on", op, hint="shape inference gave the producer too small a box")
        return t.data[tuple(slice(lo - b, hi - b) for lo, hi, b in zip(*box, t.box[0]))]

    def apply(self, op: ApplyOp) -> None:
        box = compute_box(op, self.need)
        if box is None:
            return
        for r in op.results:
            if r in self.need and not contains(box, self.need[r]):
                self.check(op, r, box, "", box)
        u = unroll_of(op)
        n = prod(u)
        values = returned(op)
        results = [np.full(tuple(hi - lo for lo, hi in zip(*box)), np.nan, dtype=dtype_of(r.type.get_element_type()))
                   for r in op.results]
        for c, shift, base in copies(op, box):
            pts = Points(base[0], base[1], u)
            if pts.empty:
                continue
            body = _Body(self, op, pts)
            for r, out in enumerate(results):
                value = np.broadcast_to(body.value(values[r * n + c]), pts.shape)
                idx = tuple(slice(lo - b + s, lo - b + s + f * k, f)
                            for lo, b, s, f, k in zip(pts.lb, box[0], shift, u, pts.shape))
                out[idx] = value
        for r, data in zip(op.results, results):
            self.env[r] = Temp(box, data)

    def combine(self, op: CombineOp) -> None:
        box = compute_box(op, self.need)
        if box is None:
            return
        lower, upper = split(box, op.dim.value.data, op.index.value.data)
        shape = tuple(hi - lo for lo, hi in zip(*box))
        results = list(op.results)
        outs = []
        for lo_v, hi_v in zip(op.lower, op.upper):
            outs.append([(lower, lo_v), (upper, hi_v)])
        outs += [[(lower, v)] for v in op.lowerext] + [[(upper, v)] for v in op.upperext]
        for r, pieces in zip(results, outs):
            data = np.full(shape, np.nan, dtype=dtype_of(r.type.get_element_type()))
            for part, v in pieces:
                if all(a < b for a, b in zip(*part)):
                    idx = tuple(slice(a - o, b - o) for a, b, o in zip(*part, box[0]))
                    data[idx] = self.temp(v, part, op)
            self.env[r] = Temp(box, data)

    def store(self, op: StoreOp) -> None:
        name = self.p.argument_name(op.field)
        bounds, data = self.field_data(op.field)
        box = (tuple(op.bounds.lb), tuple(op.bounds.ub))
        if not contains(bounds, box):
            raise self.p.error(f"stencil.store writes {box_text(box)}, outside the field's bounds {box_text(bounds)}",
                               op, hint="store on a box inside the field's bounds")
        if name not in self.out:
            self.out[name] = np.array(data, copy=True)
        self.out[name][tuple(slice(lo - b, hi - b) for lo, hi, b in zip(*box, bounds[0]))] = \
            self.temp(op.temp, box, op)


class _Body:
    """An apply's body evaluated at the points ``pts`` (values memoised; only what is asked is computed)."""

    def __init__(self, run: _Run, apply: ApplyOp, pts: Points) -> None:
        self.run, self.apply, self.pts = run, apply, pts
        self.rank = apply.get_rank()
        self.memo: dict[SSAValue, Any] = {}

    def value(self, v: SSAValue) -> Any:
        if v in self.memo:
            return self.memo[v]
        if isinstance(v, BlockArgument) and v.owner is self.apply.region.block:
            result = self.run.scalar(self.apply.args[v.index], self.apply)
        else:
            result = self.evaluate(v.owner, v)
        self.memo[v] = result
        return result

    def grid(self, offsets: list[int], dims: list[int]) -> Box:
        return self.pts.shifted_box(offsets, dims)

    def evaluate(self, op: Any, v: SSAValue) -> Any:
        if not isinstance(op, Operation):
            raise StencilError(f"internal: {name_of(v)} has no defining operation")
        if isinstance(op, AccessOp):
            return self.access(op)
        if isinstance(op, IndexOp):
            d = op.dim.value.data
            start = self.pts.lb[d] + list(op.offset)[d]
            coords = np.arange(self.pts.shape[d], dtype=np.int64) * self.pts.step[d] + start
            return coords.reshape(tuple(-1 if k == d else 1 for k in range(self.rank)))
        if isinstance(op, DynAccessOp):
            return self.dyn_access(op)
        if isinstance(op, StoreResultOp):
            if op.arg is None:
                raise self.run.p.error("stencil.store_result without a value is not supported", op,
                                       error=UnsupportedStencilError)
            return self.value(op.arg)
        if isinstance(op, arith.ConstantOp):
            return _constant(op)
        if isinstance(op, scf.IfOp):
            cond = self.value(op.cond)
            k = list(op.results).index(v)
            then = self.branch(op.true_region, k)
            other = self.branch(op.false_region, k)
            return np.where(cond, then, other)
        return self.arith(op)

    def branch(self, region: Any, k: int) -> Any:
        y = region.block.last_op
        assert isinstance(y, scf.YieldOp)
        return self.value(y.operands[k])

    def access(self, op: AccessOp) -> Any:
        dims = list(op.offset_mapping) if op.offset_mapping is not None else list(range(self.rank))
        operand = self.apply.args[op.temp.index]
        box = self.grid(list(op.offset), dims)
        data = self.run.temp(operand, box, op)
        data = data[tuple(slice(None, None, self.pts.step[d]) for d in dims)]
        return data.reshape(tuple(data.shape[dims.index(d)] if d in dims else 1 for d in range(self.rank)))

    def dyn_access(self, op: DynAccessOp) -> Any:
        operand = self.apply.args[op.temp.index]
        t = self.run.env.get(operand)
        if not isinstance(t, Temp):
            raise self.run.p.error(f"{name_of(operand)} is read before it is computed", op)
        coords = np.broadcast_arrays(*[np.broadcast_to(self.value(i), self.pts.shape) for i in op.offset])
        idx = tuple(c.astype(np.int64) - lo for c, lo in zip(coords, t.box[0]))
        for d, (i, ext) in enumerate(zip(idx, t.data.shape)):
            if i.size and (i.min() < 0 or i.max() >= ext):
                raise self.run.p.error(f"stencil.dyn_access reads outside the box {box_text(t.box)} of "
                                       f"{name_of(operand)} in dimension {d}", op,
                                       hint="the coordinates must stay within the access's promised range")
        return t.data[idx]

    def arith(self, op: Operation) -> Any:
        name = op.name
        args = [self.value(a) for a in op.operands]
        dtype = dtype_of(op.results[0].type) if op.results else None
        if name in _BINARY:
            return _BINARY[name](args[0], args[1])
        if name in _UNARY:
            return _UNARY[name](args[0])
        if name in _LIBM:
            return _libm(_LIBM[name], args[0], dtype)
        if name == "arith.divsi":
            return np.trunc(np.divide(args[0], args[1])).astype(dtype)
        if name == "arith.select":
            return np.where(args[0], args[1], args[2])
        if name == "arith.cmpf":
            return _cmpf(str(op.predicate.value.data), args[0], args[1], op)
        if name == "arith.cmpi":
            return _CMPI[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]](args[0], args[1])
        if name in ("arith.index_cast", "arith.sitofp", "arith.extf", "arith.truncf", "arith.uitofp"):
            return np.asarray(args[0]).astype(dtype)
        if name in ("arith.fptosi", "arith.fptoui"):
            return np.trunc(args[0]).astype(dtype)
        raise self.run.p.error(f"the interpreter does not run {name}", op, error=UnsupportedStencilError)


def _cmpf(predicate: Any, a: Any, b: Any, op: Any) -> Any:
    """``arith.cmpf``: ordered predicates are false on NaN, unordered ones true."""
    code = int(predicate) if str(predicate).isdigit() else predicate
    name = arith.CMPF_COMPARISON_OPERATIONS[code] if isinstance(code, int) else str(code)
    if name in ("false", "true"):
        return np.full(np.broadcast(a, b).shape, name == "true")
    base = name[1:]
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    if base == "ne":
        ordered = np.logical_or(np.less(a, b), np.greater(a, b))
    elif base == "rd":
        return nan if name == "uno" else np.logical_not(nan)
    else:
        ordered = _CMPF[base](a, b)
    return ordered if name.startswith("o") else np.logical_or(ordered, nan)


def _constant(op: arith.ConstantOp) -> Any:
    value = op.value
    if isinstance(value, FloatAttr):
        return dtype_of(value.type)(value.value.data)
    if isinstance(value, IntegerAttr):
        return dtype_of(value.type)(value.value.data)
    raise StencilError(f"the interpreter does not run the constant {value}")


def _libm(fn: Any, a: Any, dtype: Any) -> Any:
    arr = np.asarray(a, dtype=np.float64)
    out = np.array([_safe(fn, x) for x in arr.reshape(-1)], dtype=np.float64).reshape(arr.shape)
    return out.astype(dtype)


def _safe(fn: Any, x: float) -> float:
    try:
        return float(fn(x))
    except (ValueError, OverflowError):
        return math.inf if fn is math.exp and x > 0 else math.nan
