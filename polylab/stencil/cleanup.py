"""Cleanup: common subexpressions and dead values.

* ``cse``: inside every apply body, an operation equal to an earlier one (same kind, same attributes,
  same operands after the earlier replacements) whose definition is visible is replaced by it (an
  operation inside an ``scf.if`` branch may reuse one of the enclosing block, not the other way);
  loads of the same field are merged. Operations are pure, so each value is unchanged.
* ``dce``: operations whose results nobody reads are removed (in bodies: not the terminators; at the top:
  applies, combines and loads no store depends on), and block arguments nobody reads with them.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from polylab.stencil.control import If, Yield
from polylab.stencil.ir import all_uses, rebuild, results_of, uses_of
from polylab.stencil.ops import Apply, Cast, Combine, FuncReturn, Load, Return, Store
from polylab.stencil.program import Program
from polylab.stencil.rename import substitute

_NOT_KEY = {"result", "results", "loc"}


def _key(op: Any) -> tuple | None:
    if isinstance(op, (If, Yield, Return)):
        return None
    return (type(op).__name__,) + tuple(getattr(op, f.name) for f in fields(op) if f.name not in _NOT_KEY)


def _cse_block(ops: tuple[Any, ...], seen: dict[tuple, tuple[str, ...]], subst: dict[str, str]) -> tuple[Any, ...]:
    out = []
    for op in ops:
        op = rebuild(op, use_fn=lambda v: subst.get(v, v),
                     region_fn=lambda r: _cse_block(r, dict(seen), subst))
        key = _key(op)
        if key is not None and key in seen:
            subst.update(zip(results_of(op), seen[key]))
            continue
        if key is not None:
            seen[key] = results_of(op)
        out.append(op)
    return tuple(out)


def cse(program: Program) -> Program:
    """Common subexpressions eliminated (see the module)."""
    ops, subst, loads = [], {}, {}
    for op in program.ops:
        op = substitute((op,), subst)[0]
        if isinstance(op, Apply):
            op = replace(op, body=_cse_block(op.body, {}, {}))
        elif isinstance(op, Load):
            key = (op.field, op.box)
            if key in loads:
                subst[op.result] = loads[key]
                continue
            loads[key] = op.result
        ops.append(op)
    return replace(program, ops=tuple(ops))


def _dce_block(ops: tuple[Any, ...], live: set[str]) -> tuple[Any, ...]:
    out: list[Any] = []
    for op in reversed(ops):
        res = results_of(op)
        if res and not any(r in live for r in res) and not isinstance(op, (Return, Yield)):
            continue
        if isinstance(op, If):
            op = replace(op, then=_dce_block(op.then, set(live)), other=_dce_block(op.other, set(live)))
            live.update(all_uses(op.then + op.other))
        live.update(uses_of(op))
        out.append(op)
    return tuple(reversed(out))


def dce(program: Program) -> Program:
    """Dead values removed (see the module)."""
    live: set[str] = set()
    out: list[Any] = []
    for op in reversed(program.ops):
        if isinstance(op, (Apply, Combine, Load)) and not any(r in live for r in results_of(op)):
            continue
        if isinstance(op, Apply):
            body = _dce_block(op.body, set())
            used = set(all_uses(body))
            keep = [k for k, a in enumerate(op.args) if a in used]
            op = replace(op, body=body, args=tuple(op.args[k] for k in keep),
                         operands=tuple(op.operands[k] for k in keep),
                         arg_types=tuple(op.arg_types[k] for k in keep))
        if isinstance(op, (Apply, Combine, Load, Store, Cast, FuncReturn)) or uses_of(op):
            live.update(uses_of(op))
        out.append(op)
    return replace(program, ops=tuple(reversed(out)))


def cleanup(program: Program) -> Program:
    """``dce(cse(program))``."""
    return dce(cse(program))
