"""Renaming values: fresh names for copies of operations, and substitution of uses.

Passes that copy a body (inlining, unrolling) give every value they define a fresh name with
:class:`Fresh`, so no name is defined twice; :func:`substitute` replaces the uses of values (in nested
regions too).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from dataclasses import replace

from polylab.stencil.ir import defs_of, rebuild, walk_ops
from polylab.stencil.ops import Access, Index


class Fresh:
    """Fresh value names ``%<prefix><n>_<old>`` never used in ``taken``."""

    def __init__(self, taken: set[str], prefix: str) -> None:
        self.taken = set(taken)
        self.prefix = prefix
        self.n = 0

    def __call__(self, old: str = "") -> str:
        stem = re.sub(r"[^A-Za-z0-9_]", "_", old.lstrip("%"))
        while True:
            self.n += 1
            name = f"%{self.prefix}{self.n}" + (f"_{stem}" if stem else "")
            if name not in self.taken:
                self.taken.add(name)
                return name

    def group(self, count: int) -> tuple[str, ...]:
        """``count`` result names of one fresh group (``%g#0``, ``%g#1``, ...; one result: ``%g``)."""
        g = self()
        return (g,) if count == 1 else tuple(f"{g}#{k}" for k in range(count))


def substitute(ops: tuple[Any, ...], mapping: Mapping[str, str]) -> tuple[Any, ...]:
    """``ops`` with every use of a key of ``mapping`` replaced by its value (regions included)."""
    if not mapping:
        return ops
    use: Callable[[str], str] = lambda v: mapping.get(v, v)  # noqa: E731
    return tuple(rebuild(op, use_fn=use, region_fn=lambda r: substitute(r, mapping)) for op in ops)


def clone(ops: tuple[Any, ...], mapping: dict[str, str], fresh: Fresh,
          edit: Callable[[Any], Any] | None = None) -> tuple[Any, ...]:
    """A copy of ``ops`` whose defined values get fresh names (``mapping`` gains old -> new, and maps the
    uses of values defined outside); ``edit`` may change each copied operation (shift an offset)."""
    out = []
    for op in ops:
        new = rebuild(op, use_fn=lambda v: mapping.get(v, v), def_fn=None,
                      region_fn=lambda r: clone(r, dict(mapping), fresh, edit))
        defs = {}
        new = rebuild(new, def_fn=lambda v: defs.setdefault(v, fresh(v)))
        mapping.update(defs)
        out.append(edit(new) if edit else new)
    return tuple(out)


def all_names(program: Any) -> set[str]:
    """Every value name the program defines (to stay clear of)."""
    names = {n for n, _ in program.arguments}
    for op in walk_ops(program.ops):
        names.update(defs_of(op))
    return names


def shifted_by(offset: tuple[int, ...]) -> Callable[[Any], Any]:
    """An edit for :func:`clone`: every ``stencil.access`` and ``stencil.index`` (in nested regions too)
    moved by ``offset`` -- the copy computes the value at the point plus ``offset``."""
    def edit(op: Any) -> Any:
        if isinstance(op, (Access, Index)):
            return replace(op, offset=tuple(a + b for a, b in zip(op.offset, offset)))
        return rebuild(op, region_fn=lambda r: tuple(edit(o) for o in r))
    return edit
