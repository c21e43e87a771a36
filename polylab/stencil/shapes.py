"""Shape inference: the box every temp is computed on, propagated backwards from the store ranges.

Going from the last operation to the first, each value gets the smallest box its uses need:

* a ``stencil.store %t to %f(B)`` needs ``%t`` on ``B``;
* an apply is computed on the hull ``A`` of what its results are needed on; an ``access %a [o]`` in its
  body needs the operand bound to ``%a`` on ``A + o`` (unrolled by ``u`` along ``d``: the body runs at
  the points ``lb_d, lb_d + u, ...`` of ``A``, and the hull is taken over those);
* a combine on ``A`` needs its lower operands on ``A`` below its index and its upper ones from it on;
* a load needs the field's bounds to hold the hull of its uses (in the dimensions the field has).

The hull over several uses is the smallest box holding them: isl is not needed, boxes are closed under
it. The result has every apply, combine and load annotated with its box and every temp type with its
extents (``!stencil.temp<66x66x64xf64>``). A field too small for the accesses is refused, naming the
operator, the access, the offset and the bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from polylab.stencil.errors import located
from polylab.stencil.ir import loc_of, rebuild, walk_ops
from polylab.stencil.ops import Access, Apply, Combine, Load, Store
from polylab.stencil.program import Program
from polylab.stencil.types import Box, TempType


@dataclass(frozen=True)
class Demand:
    """``value`` is needed on ``box`` by ``consumer`` (through ``access`` at ``offset``, when an apply)."""

    box: Box
    consumer: Any
    access: Access | None = None
    offset: tuple[int, ...] | None = None


def base_points_box(box: Box, unroll: tuple[int, ...] | None) -> tuple[Box, tuple[int, ...]]:
    """The box of the points where an apply's body runs (``lb_d + u_d k`` inside ``box``), as a box whose
    upper bounds are the last such point plus one, and the unroll factors (1 when not unrolled)."""
    u = unroll or (1,) * box.rank
    last = tuple(lo + f * (max(0, -(-(hi - lo) // f)) - 1) for lo, hi, f in zip(box.lb, box.ub, u))
    return Box(box.lb, tuple(x + 1 for x in last)), tuple(u)


def access_demands(apply: Apply, box: Box) -> dict[str, list[Demand]]:
    """What an apply computed on ``box`` needs of each operand (one demand per access)."""
    base, _ = base_points_box(box, apply.unroll)
    out: dict[str, list[Demand]] = {}
    operand_of = dict(zip(apply.args, apply.operands))
    for op in walk_ops(apply.body):
        if isinstance(op, Access):
            value = operand_of[op.temp]
            out.setdefault(value, []).append(Demand(base.shifted(op.offset), apply, op, op.offset))
    return out


def hull(demands: list[Demand]) -> Box | None:
    boxes = [d.box for d in demands if d.box.size > 0]
    if not boxes:
        return None
    out = boxes[0]
    for b in boxes[1:]:
        out = out.hull(b)
    return out


def demands_of(program: Program) -> tuple[dict[str, list[Demand]], dict[int, Box]]:
    """Every value's demands, and the box of every apply / combine / load (by position in ``ops``)."""
    need: dict[str, list[Demand]] = {}
    boxes: dict[int, Box] = {}
    for k in range(len(program.ops) - 1, -1, -1):
        op = program.ops[k]
        if isinstance(op, Store):
            need.setdefault(op.temp, []).append(Demand(op.box, op))
        elif isinstance(op, Apply):
            box = hull([d for r in op.results for d in need.get(r, [])])
            if box is None:
                continue
            boxes[k] = box
            for value, ds in access_demands(op, box).items():
                need.setdefault(value, []).extend(ds)
        elif isinstance(op, Combine):
            box = hull([d for r in op.results for d in need.get(r, [])])
            if box is None:
                continue
            boxes[k] = box
            lo, hi = split_box(box, op.dim, op.index)
            for side, part in ((op.lower, lo), (op.upper, hi)):
                for v in side:
                    if part.size:
                        need.setdefault(v, []).append(Demand(part, op))
        elif isinstance(op, Load):
            box = hull(need.get(op.result, []))
            if box is not None:
                boxes[k] = box
    return need, boxes


def split_box(box: Box, dim: int, index: int) -> tuple[Box, Box]:
    """``box`` below ``index`` in ``dim``, and from ``index`` on."""
    cut = min(max(index, box.lb[dim]), box.ub[dim])
    lo = Box(box.lb, tuple(cut if d == dim else u for d, u in enumerate(box.ub)))
    hi = Box(tuple(cut if d == dim else lb for d, lb in enumerate(box.lb)), box.ub)
    return lo, hi


def check_load(program: Program, load: Load, demands: list[Demand]) -> None:
    """Refuse a load whose field's bounds do not hold every demand (naming the operator, the access,
    the offset and the bound)."""
    bounds = program.bounds(load.field)
    present = program.field_type(load.field).present
    name = program.field_argument(load.field)
    for d in demands:
        for dim in range(bounds.rank):
            if not present[dim] or d.box.size == 0:
                continue
            low, high = d.box.lb[dim] < bounds.lb[dim], d.box.ub[dim] > bounds.ub[dim]
            if not (low or high):
                continue
            index = d.box.lb[dim] if low else d.box.ub[dim] - 1
            bound = (f"its lower bound {bounds.lb[dim]}" if low
                     else f"its upper bound {bounds.ub[dim]} (exclusive)")
            via = ""
            if d.access is not None:
                line = f" (line {loc_of(d.access).line})" if loc_of(d.access) else ""
                via = (f" through stencil.access {d.access.temp} {list(d.offset or ())}{line}, offset "
                       f"{(d.offset or ())[dim]} in dimension {dim}")
            who = f"stencil.apply{f' (line {loc_of(d.consumer).line})' if loc_of(d.consumer) else ''}"
            raise located(f"the field {name} is too small: {who} reads it{via} at index {index} of dimension "
                          f"{dim}, beyond {bound} (the field's bounds are {bounds})", loc_of(d.access or load),
                          hint="give the field larger bounds in its stencil.cast, or store a smaller range")


def typed(shape_box: Box | None, t: TempType) -> TempType:
    """``t`` with the extents of ``shape_box`` (absent dimensions stay 0)."""
    if shape_box is None:
        return t
    return TempType(tuple(0 if s == 0 else e for s, e in zip(t.shape, shape_box.extent)), t.element)


def infer_shapes(program: Program) -> Program:
    """The program with every apply, combine and load annotated with its box and every temp type with its
    extents (see the module's documentation); a field too small for the accesses is refused."""
    need, boxes = demands_of(program)
    types: dict[str, TempType] = {}
    ops = list(program.ops)
    for k, op in enumerate(ops):
        box = boxes.get(k)
        if isinstance(op, Load):
            if box is not None:
                check_load(program, op, need.get(op.result, []))
            ops[k] = replace(op, box=box, to_type=typed(box, op.to_type))
            types[op.result] = ops[k].to_type
        elif isinstance(op, (Apply, Combine)):
            rts = tuple(typed(box, t) for t in op.result_types)
            ops[k] = replace(op, box=box, result_types=rts)
            types.update(zip(op.results, rts))
    return retype(replace(program, ops=tuple(ops)), types)


def retype(program: Program, types: dict[str, TempType]) -> Program:
    """Every type annotation of a temp (operands of applies and combines, their accesses, stores) made
    equal to ``types``."""
    out = []
    for op in program.ops:
        if isinstance(op, Apply):
            arg_types = tuple(types.get(o, t) if isinstance(t, TempType) else t
                              for o, t in zip(op.operands, op.arg_types))
            of_arg = dict(zip(op.args, arg_types))
            body = tuple(_retype_body(o, of_arg) for o in op.body)
            op = replace(op, arg_types=arg_types, body=body)
        elif isinstance(op, Combine):
            op = replace(op, lower_types=tuple(types.get(v, t) for v, t in zip(op.lower, op.lower_types)),
                         upper_types=tuple(types.get(v, t) for v, t in zip(op.upper, op.upper_types)))
        elif isinstance(op, Store):
            op = replace(op, temp_type=types.get(op.temp, op.temp_type))
        out.append(op)
    return replace(program, ops=tuple(out))


def _retype_body(op: Any, of_arg: dict[str, Any]) -> Any:
    if isinstance(op, Access):
        return replace(op, temp_type=of_arg.get(op.temp, op.temp_type))
    return rebuild(op, region_fn=lambda r: tuple(_retype_body(o, of_arg) for o in r))


def require_shapes(program: Program) -> Program:
    """The program with its boxes: inferred when some apply has none, else checked (every access inside
    the box its operand is computed on, every store range inside its temp's box)."""
    if any(op.box is None for op in program.ops if isinstance(op, (Apply, Combine, Load))):
        return infer_shapes(program)
    check_ranges(program)
    return program


def check_ranges(program: Program) -> None:
    """Refuse an access outside the range its operand is computed on (programs whose boxes were given)."""
    box_of: dict[str, Box] = {}
    for op in program.ops:
        if isinstance(op, (Apply, Combine)):
            box_of.update({r: op.box for r in op.results})
        elif isinstance(op, Load):
            box_of[op.result] = op.box
            check_load(program, op, [Demand(op.box, op)])
    for op in program.ops:
        if isinstance(op, Store) and not box_of[op.temp].contains(op.box):
            raise located(f"stencil.store writes {op.temp} on {op.box}, outside the range {box_of[op.temp]} it "
                          f"is computed on", loc_of(op))
        if not isinstance(op, Apply):
            continue
        present = {v: t.present for v, t in zip(op.operands, op.arg_types) if isinstance(t, TempType)}
        for value, ds in access_demands(op, op.box).items():
            have = box_of[value]
            for d in ds:
                mask = present.get(value, (True,) * have.rank)
                ok = all(not p or (h0 <= b0 and b1 <= h1)
                         for p, b0, b1, h0, h1 in zip(mask, d.box.lb, d.box.ub, have.lb, have.ub))
                if not ok:
                    raise located(f"stencil.access {d.access.temp} {list(d.offset or ())} reads {value} on "
                                  f"{d.box}, outside the range {have} it is computed on", loc_of(d.access),
                                  hint="run shape inference again after changing the program")
