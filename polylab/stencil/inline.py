"""Producer-consumer inlining: an apply's computation copied into the applies that read its results.

For a producer ``P`` whose results are read by a consumer ``C`` only through ``stencil.access %a [o]``:
each such access is replaced by a copy of ``P``'s body computing that result at the point plus ``o``
(every access of the copy shifted by ``o``, its block arguments bound to ``P``'s operands, which become
operands of ``C``). Values are the same at every point, so the program's results do not change; what
changes is the trade: ``P``'s temp is no longer stored and read back (memory traffic and storage), and
its values are recomputed at every offset ``C`` reads (arithmetic).

When ``P`` has several consumers there are two ways:

* ``reroute=True`` (the Open Earth compiler's way): ``P`` is inlined into its first consumer ``C1``,
  which also returns ``P``'s results (at offset 0) as extra results; the other consumers read those
  instead of ``P``. ``C1`` then runs on the hull of its own box and the points the others read;
* ``reroute=False``: ``P`` is inlined into every consumer (each recomputes it).

``P`` is removed once nothing reads it. A producer that is stored, unrolled, or read by a combine stays.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from polylab.stencil.ir import all_uses, rebuild
from polylab.stencil.ops import Access, Apply, Return, StoreResult
from polylab.stencil.program import Program
from polylab.stencil.rename import Fresh, all_names, clone, shifted_by, substitute
from polylab.stencil.resize import without_shapes
from polylab.stencil.types import ResultType


def result_values(apply: Apply) -> list[str]:
    """The value (in the body) of each result of a not-unrolled apply (through its ``store_result``)."""
    producers = {op.result: op for op in apply.body if isinstance(op, StoreResult)}
    return [producers[v].operand if v in producers else v for v in apply.ret.operands]


def computation(producer: Apply, result: int, offset: tuple[int, ...], args: dict[str, str],
                fresh: Fresh) -> tuple[tuple[Any, ...], str]:
    """The operations computing ``producer``'s result number ``result`` at the point plus ``offset``
    (``args``: the producer's block arguments -> the consumer's), and the value computed."""
    body = tuple(op for op in producer.body if not isinstance(op, (Return, StoreResult)))
    mapping = dict(args)
    ops = clone(body, mapping, fresh, shifted_by(offset))
    value = result_values(producer)[result]
    return ops, mapping.get(value, value)


def _bind_operands(consumer: Apply, producer: Apply, fresh: Fresh) -> tuple[Apply, dict[str, str]]:
    """``consumer`` with ``producer``'s operands added (reusing block arguments bound to the same value)."""
    args, operands, types = list(consumer.args), list(consumer.operands), list(consumer.arg_types)
    binding = {}
    for a, o, t in zip(producer.args, producer.operands, producer.arg_types):
        if o in operands:
            binding[a] = args[operands.index(o)]
        else:
            new = fresh(a)
            args.append(new)
            operands.append(o)
            types.append(t)
            binding[a] = new
    return replace(consumer, args=tuple(args), operands=tuple(operands), arg_types=tuple(types)), binding


def inline_into(consumer: Apply, producer: Apply, fresh: Fresh) -> Apply:
    """``consumer`` with every access of ``producer``'s results replaced by its computation."""
    consumer, binding = _bind_operands(consumer, producer, fresh)
    of_arg = {a: producer.results.index(o) for a, o in zip(consumer.args, consumer.operands)
              if o in producer.results}

    def rewrite(block: tuple[Any, ...]) -> tuple[Any, ...]:
        out: list[Any] = []
        subst: dict[str, str] = {}
        for op in block:
            op = substitute((op,), subst)[0]
            if isinstance(op, Access) and op.temp in of_arg:
                ops, value = computation(producer, of_arg[op.temp], op.offset, binding, fresh)
                out.extend(ops)
                subst[op.result] = value
                continue
            out.append(rebuild(op, region_fn=rewrite))
        return tuple(out)

    consumer = replace(consumer, body=rewrite(consumer.body))
    keep = [k for k, a in enumerate(consumer.args) if a not in of_arg]
    return replace(consumer, args=tuple(consumer.args[k] for k in keep),
                   operands=tuple(consumer.operands[k] for k in keep),
                   arg_types=tuple(consumer.arg_types[k] for k in keep))


def _inlinable(program: Program, op: Any) -> bool:
    if not isinstance(op, Apply) or op.unroll is not None:
        return False
    users = [u for r in op.results for u in program.consumers(r)]
    return bool(users) and all(isinstance(u, Apply) for u in users)


def _reroute(program: Program, producer: Apply, first: Apply, fresh: Fresh) -> Program:
    """Inline ``producer`` into ``first`` and give ``first`` the producer's results as extra results."""
    merged = inline_into(first, producer, fresh)
    others = {r for r in producer.results for u in program.consumers(r) if u is not first}
    extra = [r for r in producer.results if r in others]
    binding = _bind_operands(merged, producer, fresh)
    merged, args = binding
    ops, values = [], []
    for r in extra:
        body, value = computation(producer, producer.results.index(r), (0,) * program.rank, args, fresh)
        ops.extend(body)
        stored = fresh("res")
        ops.append(StoreResult(stored, value))
        values.append(stored)
    ret = merged.ret
    new_ret = replace(ret, operands=ret.operands + tuple(values),
                      types=ret.types + tuple(ResultType(t.element) for t in
                                              (producer.result_types[producer.results.index(r)] for r in extra)))
    names = fresh.group(len(merged.results) + len(extra))
    types = merged.result_types + tuple(producer.result_types[producer.results.index(r)] for r in extra)
    merged = replace(merged, results=names, result_types=types, body=merged.body[:-1] + tuple(ops) + (new_ret,))
    merged = _drop_unused_args(merged)
    rename = dict(zip(first.results + tuple(extra), names))
    new_ops = []
    for op in program.ops:
        if op is producer:
            continue
        new_ops.append(merged if op is first else substitute((op,), rename)[0])
    return replace(program, ops=tuple(new_ops))


def _drop_unused_args(apply: Apply) -> Apply:
    used = set(all_uses(apply.body))
    keep = [k for k, a in enumerate(apply.args) if a in used]
    return replace(apply, args=tuple(apply.args[k] for k in keep), operands=tuple(apply.operands[k] for k in keep),
                   arg_types=tuple(apply.arg_types[k] for k in keep))


def inline_once(program: Program, reroute: bool, fresh: Fresh) -> Program | None:
    """One inlining step (the last inlinable producer first), or None when there is nothing to inline."""
    for producer in reversed(program.ops):
        if not _inlinable(program, producer):
            continue
        users: list[Apply] = []
        for r in producer.results:
            for u in program.consumers(r):
                if all(u is not x for x in users):
                    users.append(u)
        position = {id(op): k for k, op in enumerate(program.ops)}
        users.sort(key=lambda u: position[id(u)])
        if len(users) > 1 and reroute and users[0].unroll is None:
            return _reroute(program, producer, users[0], fresh)
        if any(u.unroll is not None for u in users):
            continue
        new_of = {id(u): _drop_unused_args(inline_into(u, producer, fresh)) for u in users}
        ops = tuple(new_of.get(id(op), op) for op in program.ops if op is not producer)
        return replace(program, ops=ops)
    return None


def inline(program: Program, *, reroute: bool = True) -> Program:
    """Every producer inlined into its consumers, as long as some can be (see the module). Shapes are
    reset: run shape inference again on the result."""
    fresh = Fresh(all_names(program), "i")
    program = without_shapes(program)
    while True:
        nxt = inline_once(program, reroute, fresh)
        if nxt is None:
            return program
        program = nxt
