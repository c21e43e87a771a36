"""What every operation of the IR shares: roles of its fields, and generic traversal.

Operations are frozen dataclasses. Each field that holds SSA values says its role in its metadata:
``use`` / ``uses`` (a value or a tuple of values the operation reads), ``def`` / ``defs`` (the values it
defines: results, or block arguments of its region), ``region`` (a tuple of operations). Passes walk and
rewrite operations through :func:`uses`, :func:`defs`, :func:`regions` and :func:`rebuild`, so a new
operation kind needs no change in them. Values are named by their SSA names (``%3``, ``%5#1``, ``%arg2``);
the source location of an operation is not part of its value (``compare=False``), so a program printed
and parsed again equals the original.
"""

from __future__ import annotations

from dataclasses import field, fields, replace
from typing import Any, Callable, Iterator

from polylab.errors import SourceLocation


def use() -> Any:
    return field(metadata={"role": "use"})


def uses() -> Any:
    return field(metadata={"role": "uses"})


def define() -> Any:
    return field(metadata={"role": "def"})


def defines() -> Any:
    return field(metadata={"role": "defs"})


def region() -> Any:
    return field(metadata={"role": "region"})


def location() -> Any:
    """The operation's place in the source text (not part of its value)."""
    return field(default=None, compare=False, repr=False)


def _fields(op: Any, *roles: str) -> Iterator[tuple[str, Any, str]]:
    for f in fields(op):
        role = f.metadata.get("role")
        if role in roles:
            yield f.name, getattr(op, f.name), role


def uses_of(op: Any) -> tuple[str, ...]:
    """The values ``op`` itself reads (not those read inside its regions)."""
    out: list[str] = []
    for _, v, role in _fields(op, "use", "uses"):
        out.extend([v] if role == "use" else v)
    return tuple(out)


def defs_of(op: Any) -> tuple[str, ...]:
    """The values ``op`` defines (its results and its regions' block arguments)."""
    out: list[str] = []
    for _, v, role in _fields(op, "def", "defs"):
        out.extend([v] if role == "def" else v)
    return tuple(out)


def results_of(op: Any) -> tuple[str, ...]:
    """The results of ``op`` (``result`` or ``results``)."""
    if hasattr(op, "results"):
        return tuple(op.results)
    if hasattr(op, "result"):
        return (op.result,)
    return ()


def regions_of(op: Any) -> tuple[tuple[Any, ...], ...]:
    return tuple(v for _, v, _ in _fields(op, "region"))


def rebuild(op: Any, *, use_fn: Callable[[str], str] | None = None, def_fn: Callable[[str], str] | None = None,
            region_fn: Callable[[tuple[Any, ...]], tuple[Any, ...]] | None = None) -> Any:
    """``op`` with every used value renamed by ``use_fn``, every defined value by ``def_fn`` and every
    region replaced by ``region_fn(region)`` (each None: unchanged)."""
    changes: dict[str, Any] = {}
    for name, v, role in _fields(op, "use", "uses", "def", "defs", "region"):
        if role == "use" and use_fn:
            changes[name] = use_fn(v)
        elif role == "uses" and use_fn:
            changes[name] = tuple(use_fn(x) for x in v)
        elif role == "def" and def_fn:
            changes[name] = def_fn(v)
        elif role == "defs" and def_fn:
            changes[name] = tuple(def_fn(x) for x in v)
        elif role == "region" and region_fn:
            changes[name] = region_fn(v)
    return replace(op, **changes) if changes else op


def walk_ops(ops: tuple[Any, ...]) -> Iterator[Any]:
    """Every operation of ``ops`` and of their regions, in textual order (pre-order)."""
    for op in ops:
        yield op
        for r in regions_of(op):
            yield from walk_ops(r)


def all_uses(ops: tuple[Any, ...]) -> Iterator[str]:
    """Every value read in ``ops``, regions included."""
    for op in walk_ops(ops):
        yield from uses_of(op)


def loc_of(op: Any) -> SourceLocation | None:
    return getattr(op, "loc", None)


def op_name(op: Any) -> str:
    """The operation's name in the text (``stencil.apply``, ``addf``, ...)."""
    return getattr(op, "opname", None) or type(op).OPNAME
