"""A reference interpreter: execute a SCoP's statement instances one by one, in schedule order.

The brute-force oracle of the storage steps. At fixed (small) parameter values isl enumerates every
instance ``S[x]`` with its time vector ``T(S[x])``; instances run in lexicographic order of their time
vectors (ties, which a legal schedule only allows between independent instances, in statement order);
each body is evaluated with C's arithmetic (:mod:`polylab.reference.cvalue`): ``float`` data in single
precision, nothing reassociated, so a transformation that preserves the program's meaning gives
bit-identical values. Memory is a dictionary per array (only touched elements exist), so declared
extents such as ``MAXN = 400`` cost nothing.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import islpy as isl
import numpy as np

from polylab.errors import ModelError
from polylab.model.expr import ArrayRef, Const, walk
from polylab.model.islutil import fix_parameters, maps_of, point_coordinates
from polylab.model.scop import Scop
from polylab.reference.cvalue import FLOAT_TYPES, binary, bits, const_value, convert, evaluate


def default_initial(array: str, index: tuple[int, ...], ctype: str):
    """A deterministic, element-specific initial value (so that live-in values are all different)."""
    h = hashlib.blake2b(f"{array}{index}".encode(), digest_size=4).digest()
    k = struct.unpack("<I", h)[0]
    if ctype.strip() in FLOAT_TYPES:
        return convert(np.float64(1.0 + (k % 1000) / 1000.0), ctype)
    return k % 97


@dataclass
class Memory:
    """The elements written or read by an execution: ``values[array][index] = value``."""

    scop: Scop
    initial: Callable[[str, tuple[int, ...], str], Any]
    values: dict[str, dict[tuple[int, ...], Any]] = field(default_factory=dict)
    trace: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)

    def ctype(self, array: str) -> str:
        return self.scop.array(array).ctype

    def load(self, array: str, index: tuple[int, ...]):
        store = self.values.setdefault(array, {})
        if index not in store:
            store[index] = self.initial(array, index, self.ctype(array))
        return store[index]

    def store(self, array: str, index: tuple[int, ...], value) -> None:
        self.values.setdefault(array, {})[index] = convert(value, self.ctype(array))

    def get(self, array: str, index: tuple[int, ...]):
        return self.load(array, index)


def instances(scop: Scop, params: Mapping[str, int], schedule: isl.UnionMap | None = None
              ) -> list[tuple[tuple[int, ...], int, str, tuple[int, ...]]]:
    """Every instance as ``(time vector, statement position, statement name, iteration vector)``, sorted.

    ``schedule`` is the order, ``{ S[x] -> [t] }`` (a Schedule's ``union_map``); default: the SCoP's own."""
    unknown = [name for name in params if name not in scop.parameters]
    if unknown:
        raise ModelError(f"no parameter named {unknown[0]!r}")
    missing = [p for p in scop.parameters if p not in params]
    if missing:
        raise ModelError(f"give a value to every parameter (missing: {', '.join(missing)})")
    ctx = fix_parameters(scop.context, params)
    T = (schedule if schedule is not None else scop.schedule_map).intersect_domain(scop.domain)
    T = T.intersect_params(ctx)
    order = {s.name: k for k, s in enumerate(scop.statements)}
    out: list = []

    def visit(p: isl.Point) -> None:
        sp = p.get_space().unwrap()
        n_in = sp.dim(isl.dim_type.in_)
        vals = point_coordinates(p)
        name = sp.get_tuple_name(isl.dim_type.in_)
        out.append((vals[n_in:], order[name], name, vals[:n_in]))

    for m in maps_of(T):
        if not m.is_single_valued():
            raise ModelError(f"the schedule of {m.get_tuple_name(isl.dim_type.in_)} is not a function")
        m.wrap().foreach_point(visit)
    out.sort()
    return out


def execute(scop: Scop, params: Mapping[str, int], *, schedule: isl.UnionMap | None = None,
            initial: Callable[[str, tuple[int, ...], str], Any] = default_initial,
            scalars: Mapping[str, Any] | None = None) -> Memory:
    """Run every instance of ``scop`` at ``params`` in the order of ``schedule`` (default: its own)."""
    mem = Memory(scop, initial)
    env: dict[str, Any] = dict(params)
    env.update(dict(scop.constants))
    for sc in scop.scalars:
        if scalars and sc.name in scalars:
            env[sc.name] = convert(scalars[sc.name], sc.ctype)
        elif sc.value is not None:
            env[sc.name] = convert(const_value(Const(sc.value, sc.ctype if sc.ctype in FLOAT_TYPES
                                                     else "int")), sc.ctype)
        else:
            env[sc.name] = default_initial(sc.name, (), sc.ctype)
    stmts = {s.name: s for s in scop.statements}
    for _, _, name, point in instances(scop, params, schedule):
        s = stmts[name]
        local = dict(env)
        local.update(zip(s.iterators, point))

        def load(ref: ArrayRef, idx: list) -> Any:
            return mem.load(ref.array, tuple(int(i) for i in idx))

        def names(n: str) -> Any:
            if n not in local:
                raise ModelError(f"{s.name}: unknown name {n!r}")
            return local[n]

        body = s.body
        tgt = body.target
        idx = tuple(int(evaluate(i, names, load)) for i in tgt.indices)
        value = evaluate(body.value, names, load, element_type=lambda ref: mem.ctype(ref.array))
        if body.op != "=":
            value = binary(body.op[0], mem.load(tgt.array, idx), value)
        mem.store(tgt.array, idx, value)
        mem.trace.append((name, point))
    return mem


def live_out_elements(scop: Scop, params: Mapping[str, int], arrays: Any = None
                      ) -> list[tuple[str, tuple[int, ...]]]:
    """The live-out elements at ``params``: ``scop.live_out``, or when None every element written but
    those of the scalars dead after the region and of a transformation's buffers (``scop.without_dead``)."""
    ctx = fix_parameters(scop.context, params)
    live = scop.live_out if scop.live_out is not None else scop.without_dead(scop.writes.range())
    live = live.intersect_params(ctx)
    out: list = []

    def visit(p: isl.Point) -> None:
        out.append((p.get_space().get_tuple_name(isl.dim_type.set), point_coordinates(p)))

    live.foreach_point(visit)
    if arrays is not None:
        out = [e for e in out if e[0] in arrays]
    return sorted(out)


def same_live_out(original: Scop, transformed: Scop, params: Mapping[str, int], *,
                  schedule: isl.UnionMap | None = None, initial: Callable[[str, tuple[int, ...], str], Any] = default_initial
                  ) -> list[tuple[str, tuple[int, ...], Any, Any]]:
    """The live-out elements whose values differ (bit for bit) between ``original`` run in its own
    order and ``transformed`` run under ``schedule`` (``{ S[x] -> [t] }``, default: its own); empty when they
    agree."""
    m0 = execute(original, params, initial=initial)
    m1 = execute(transformed, params, schedule=schedule, initial=initial)
    out = []
    for arr, idx in live_out_elements(original, params):
        a, b = m0.get(arr, idx), m1.get(arr, idx)
        if bits(a) != bits(b):
            out.append((arr, idx, a, b))
    return out


def clobbers(scop: Scop, schedule: isl.UnionMap | None, array: str, slot: Callable[[tuple[int, ...]], tuple],
             params: Mapping[str, int], live: bool = True) -> list[str]:
    """Brute force, independent of isl's conflict set: run ``scop`` under ``schedule`` with ``array``
    stored by ``slot(element)`` and list every read that would find its slot holding another element's
    value (live-out elements are read right after their last write, as the copy-outs do)."""
    events = []
    env = dict(params)
    env.update(dict(scop.constants))
    stmts = {s.name: s for s in scop.statements}
    order = instances(scop, params, schedule)
    # the last write of every live-out element (in this order), read by a copy-out right after it
    live_elems = set(e for a, e in live_out_elements(scop, params) if a == array) if live else set()
    last_writer: dict[tuple[int, ...], int] = {}
    for pos, (t, k, name, point) in enumerate(order):
        s = stmts[name]
        local = dict(env)
        local.update(zip(s.iterators, point))
        elem_of = lambda ref: tuple(int(evaluate(i, local)) for i in ref.indices)  # noqa: E731
        reads = [elem_of(r) for r in _refs(s.body.value) if r.array == array]
        if s.body.op != "=" and s.body.target.array == array:
            reads.append(elem_of(s.body.target))
        write = elem_of(s.body.target) if s.body.target.array == array else None
        events.append((t, 0, k, name, point, reads, write))
        if write is not None:
            last_writer[write] = len(events) - 1
    out: list[str] = []
    slots: dict[tuple, tuple[int, ...]] = {}
    latest: dict[tuple[int, ...], bool] = {}
    extra = {idx: e for e, idx in last_writer.items() if e in live_elems}
    for n_ev, (t, _, _, name, point, reads, write) in enumerate(events):
        for e in reads:
            if e in latest and slots.get(slot(e)) != e:
                out.append(f"{name}{list(point)} reads {array}{list(e)} but its slot holds "
                           f"{array}{list(slots.get(slot(e), ()))}")
        if write is not None:
            slots[slot(write)] = write
            latest[write] = True
        if n_ev in extra:
            e = extra[n_ev]
            if slots.get(slot(e)) != e:
                out.append(f"copy-out of {array}{list(e)} finds {array}{list(slots.get(slot(e), ()))}")
    return out


def _refs(e):
    return [x for x in walk(e) if isinstance(x, ArrayRef)]
