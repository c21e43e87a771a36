"""The reference interpreter: a stencil program evaluated with numpy, in a fixed order.

The operations run in program order; an apply is evaluated on its whole box at once, its body's
operations in order, each one a numpy operation on all the points (IEEE double or single, rounded once
per operation, as in the generated C compiled with ``-ffp-contract=off``). ``scf.if`` evaluates both
branches and chooses per point with ``numpy.where`` (branches are pure, so this equals evaluating the
taken one). Math functions other than ``sqrt``/``absf``/``fmax``/``fmin`` (correctly rounded in numpy and C
alike) call Python's :mod:`math`, which is the C library's, so results agree with the C code bit for bit.

A field is a numpy array over its bounds (its present dimensions only); a temp is an array over its box
(absent dimensions of size 1, broadcast).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import Any, Mapping

import numpy as np

from polylab.stencil.arith import Binary, Compare, Constant, MathCall, Negate, Select
from polylab.stencil.control import If, Yield
from polylab.stencil.errors import StencilError, located
from polylab.stencil.ir import loc_of
from polylab.stencil.ops import (Access, Apply, Assert, Cast, Combine, FuncReturn, Index, Load, Return, Store,
                                 StoreResult)
from polylab.stencil.program import Program
from polylab.stencil.shapes import base_points_box, require_shapes, split_box
from polylab.stencil.types import Box

_DTYPES = {"f64": np.float64, "f32": np.float32, "index": np.int64, "i64": np.int64, "i32": np.int32,
           "i1": np.bool_}
_NUMPY_MATH = {"sqrt": np.sqrt, "absf": np.abs, "maxf": np.fmax, "minf": np.fmin}


@dataclass(frozen=True)
class Temp:
    """Values on ``box`` (``data`` has the box's extents; size 1 in the dimensions not ``present``)."""

    box: Box
    data: np.ndarray
    present: tuple[bool, ...]

    def on(self, box: Box, step: tuple[int, ...] | None = None) -> np.ndarray:
        """The values at the points ``box.lb + step * k`` inside ``box``."""
        step = step or (1,) * box.rank
        idx = []
        for d in range(box.rank):
            if not self.present[d]:
                idx.append(slice(0, 1))
                continue
            lo = box.lb[d] - self.box.lb[d]
            hi = box.ub[d] - self.box.lb[d]
            if lo < 0 or hi > self.data.shape[d]:
                raise StencilError(f"internal: a read on {box} outside the temp's box {self.box}")
            idx.append(slice(lo, hi, step[d]))
        return self.data[tuple(idx)]


def interpret(program: Program, fields: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The fields after the program: ``fields`` maps each field argument (``%arg0``) to its values over its
    bounds (present dimensions); the result maps each stored field to a new array (inputs are not
    modified). Shapes are inferred first when the program has none."""
    program = require_shapes(program)
    env: dict[str, Any] = {}
    out: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for op in program.ops:
            _top(program, op, env, fields, out)
    return out


def _top(program: Program, op: Any, env: dict[str, Any], fields: Mapping[str, np.ndarray],
         out: dict[str, np.ndarray]) -> None:
    match op:
        case Cast() | Assert() | FuncReturn():
            return
        case Load():
            if op.box is None:
                return
            name = program.field_argument(op.field)
            bounds = program.bounds(op.field)
            present = program.field_type(op.field).present
            data = _field_view(fields, name, bounds, present)
            env[op.result] = Temp(bounds, data, present)
        case Apply():
            if op.box is not None:
                env.update(zip(op.results, apply_values(op, env, program.rank)))
        case Combine():
            if op.box is not None:
                env.update(zip(op.results, _combine(op, env)))
        case Store():
            name = program.field_argument(op.field)
            bounds = program.bounds(op.field)
            present = program.field_type(op.field).present
            if name not in out:
                out[name] = np.array(fields[name], copy=True)
            target = out[name].reshape(_full_shape(bounds, present))
            idx = tuple(slice(lo - b, hi - b) if p else slice(0, 1)
                        for lo, hi, b, p in zip(op.box.lb, op.box.ub, bounds.lb, present))
            target[idx] = env[op.temp].on(op.box)
        case _:
            raise located(f"the interpreter cannot run {type(op).__name__}", loc_of(op))


def _full_shape(bounds: Box, present: tuple[bool, ...]) -> tuple[int, ...]:
    return tuple(e if p else 1 for e, p in zip(bounds.extent, present))


def _field_view(fields: Mapping[str, np.ndarray], name: str, bounds: Box, present: tuple[bool, ...]) -> np.ndarray:
    if name not in fields:
        raise StencilError(f"no values given for the field {name}")
    data = np.asarray(fields[name])
    want = tuple(e for e, p in zip(bounds.extent, present) if p)
    if data.shape != want:
        raise StencilError(f"the values of {name} have the shape {data.shape}, its bounds {bounds} need {want}")
    return data.reshape(_full_shape(bounds, present))


def apply_values(op: Apply, env: Mapping[str, Any], rank: int) -> list[Temp]:
    """The results of an apply on its box (unrolled: the body runs at every ``u``-th point and its
    returned values fill the points ``x + c`` for each copy ``c``)."""
    assert op.box is not None
    base, u = base_points_box(op.box, op.unroll)
    shape = tuple(len(range(lo, hi, f)) for lo, hi, f in zip(base.lb, base.ub, u))
    local: dict[str, Any] = {}
    for arg, value in zip(op.args, op.operands):
        local[arg] = env[value]
    values = _block(op.body, local, base, u, shape)
    results = [np.empty(op.box.extent, dtype=_DTYPES[t.element]) for t in op.result_types]
    copies = list(product(*(range(f) for f in u)))
    n = len(op.results)
    for c, shift in enumerate(copies):
        idx = tuple(slice(s, s + f * k, f) for s, f, k in zip(shift, u, shape))
        for r in range(n):
            block = np.broadcast_to(values[c * n + r], shape)
            sub = results[r][idx]
            results[r][idx] = block[tuple(slice(0, m) for m in sub.shape)]
    return [Temp(op.box, data, (True,) * rank) for data in results]


def _block(ops: tuple[Any, ...], env: dict[str, Any], base: Box, step: tuple[int, ...],
           shape: tuple[int, ...]) -> list[Any]:
    """Run ``ops`` (a body or a branch); the values of its terminator (return or yield)."""
    for op in ops:
        match op:
            case Access():
                env[op.result] = env[op.temp].on(base.shifted(op.offset), step)
            case Index():
                coords = np.arange(shape[op.dim], dtype=np.int64) * step[op.dim] + base.lb[op.dim] + op.offset[op.dim]
                env[op.result] = coords.reshape(tuple(-1 if d == op.dim else 1 for d in range(len(shape))))
            case Constant():
                env[op.result] = _DTYPES[op.type.name](op.value)
            case Binary():
                env[op.result] = _binary(op.op, env[op.lhs], env[op.rhs])
            case Negate():
                env[op.result] = np.negative(env[op.operand])
            case Compare():
                env[op.result] = compare(op.op, op.predicate, env[op.lhs], env[op.rhs])
            case Select():
                env[op.result] = np.where(env[op.cond], env[op.then], env[op.other])
            case MathCall():
                env[op.result] = math_call(op.func, [env[a] for a in op.args], _DTYPES[op.type.name])
            case StoreResult():
                env[op.result] = env[op.operand]
            case If():
                then = _block(op.then, dict(env), base, step, shape)
                other = _block(op.other, dict(env), base, step, shape)
                for r, a, b in zip(op.results, then, other):
                    env[r] = np.where(env[op.cond], a, b)
            case Return() | Yield():
                return [env[v] for v in op.operands]
            case _:
                raise located(f"the interpreter cannot run {type(op).__name__}", loc_of(op))
    return []


def _binary(op: str, a: Any, b: Any) -> Any:
    if op in ("addf", "addi"):
        return np.add(a, b)
    if op in ("subf", "subi"):
        return np.subtract(a, b)
    if op in ("mulf", "muli"):
        return np.multiply(a, b)
    return np.divide(a, b)


def compare(kind: str, predicate: str, a: Any, b: Any) -> Any:
    """``cmpf``/``cmpi``: ordered predicates are false on NaN, unordered ones true."""
    if kind == "cmpi":
        return {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
                "sge": np.greater_equal}[predicate](a, b)
    base = predicate[1:]
    ordered = {"eq": np.equal(a, b), "gt": np.greater(a, b), "ge": np.greater_equal(a, b),
               "lt": np.less(a, b), "le": np.less_equal(a, b),
               "ne": np.logical_or(np.less(a, b), np.greater(a, b))}[base]
    if predicate.startswith("o"):
        return ordered
    unordered = np.logical_or(np.isnan(a), np.isnan(b))
    return np.logical_or(ordered, unordered)


def math_call(func: str, args: list[Any], dtype: Any) -> Any:
    """A math function, elementwise (numpy where it is correctly rounded, the C library's otherwise)."""
    if func in _NUMPY_MATH:
        return _NUMPY_MATH[func](*args)
    fn = {"exp": math.exp, "log": math.log, "sin": math.sin, "cos": math.cos, "tanh": math.tanh,
          "floorf": math.floor, "ceilf": math.ceil, "pow": math.pow, "powf": math.pow}[func]
    arrays = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
    flat = [x.reshape(-1) for x in arrays]
    out = np.array([_safe(fn, *vals) for vals in zip(*flat)], dtype=np.float64).reshape(arrays[0].shape)
    return out.astype(dtype)


def _safe(fn: Any, *vals: float) -> float:
    try:
        return float(fn(*vals))
    except (ValueError, OverflowError):
        return math.nan if any(math.isnan(v) for v in vals) or fn is not math.exp else math.inf


def _combine(op: Combine, env: Mapping[str, Any]) -> list[Temp]:
    assert op.box is not None
    lo, hi = split_box(op.box, op.dim, op.index)
    out = []
    for lower, upper, t in zip(op.lower, op.upper, op.result_types):
        data = np.empty(op.box.extent, dtype=_DTYPES[t.element])
        for part, value in ((lo, lower), (hi, upper)):
            if part.size:
                idx = tuple(slice(a - b, c - b) for a, c, b in zip(part.lb, part.ub, op.box.lb))
                data[idx] = env[value].on(part)
        out.append(Temp(op.box, data, (True,) * op.box.rank))
    return out
