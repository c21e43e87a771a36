"""Variant specifications of a benchmark: schedule recipes, isl text and storage steps in one string.

A *variant spec* is what ``polylab bench --schedules`` takes: ``original`` (the program's own order), or a
sequence of parts separated by ``;`` or new lines, applied left to right:

* recipe steps of :mod:`polylab.schedule` (``wavefront``, ``tile(32, 32)``, ``tile_wavefront(16, 16)``,
  ``auto``, ``parallel``, ...) and the storage steps that :mod:`polylab.storage` registers
  (``fold_live_ins``, ``remove_dead_writes``, ``interleave``, ``contract(x)``, ``contract(x, 2)``,
  ``storage``);
* isl text ``{ S0[i, j, k] -> [i, 0, j, k]; S1[i, j, k] -> [i, 1, j, k] }``, which replaces the schedule
  of the *current* SCoP (the one the storage steps before it produced) by the given affine map; it is
  checked for legality exactly like any schedule.

The placeholder ``$T`` stands for a tile size: a spec that contains it is expanded once per value of
``--tile-sizes`` (:func:`expand_tile`). Each storage step returns a new SCoP; :func:`build_variant`
returns the final SCoP together with its schedule, which is what code generation and verification need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from polylab.errors import ScheduleError
from polylab.model.scop import Scop

#: the placeholder for a tile size in a variant spec
TILE_PLACEHOLDER = "$T"


@dataclass(frozen=True)
class BuiltVariant:
    """A variant ready for code generation: the (possibly rewritten) SCoP and its schedule.

    ``schedule`` is None for the original program order; ``text`` is a readable form of the schedule.
    """

    spec: str
    scop: Scop
    schedule: Any

    @property
    def text(self) -> str:
        if self.schedule is None:
            return "original"
        text = getattr(self.schedule, "text", None)
        return text() if callable(text) else str(self.schedule)

    @property
    def steps(self) -> tuple[str, ...]:
        return tuple(getattr(self.schedule, "steps", ()) or ())


def split_parts(spec: str) -> list[str]:
    """The parts of a spec: split on ``;`` and new lines outside ``()``, ``[]`` and ``{}``."""
    parts, depth, cur = [], 0, []
    for ch in spec:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch in ";\n" and depth <= 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip() and not p.strip().startswith("#")]


def _is_isl(part: str) -> bool:
    return part.startswith("{") or (part.startswith("[") and "->" in part and "{" in part)


def has_tile_placeholder(spec: str) -> bool:
    return TILE_PLACEHOLDER in spec


def expand_tile(spec: str, size: int) -> str:
    """``spec`` with every ``$T`` replaced by ``size``."""
    return spec.replace(TILE_PLACEHOLDER, str(int(size)))


def is_original(spec: str | None) -> bool:
    return spec is None or spec.strip() in ("", "original")


def build_variant(scop: Scop, spec: str) -> BuiltVariant:
    """Apply ``spec`` (module text) to ``scop``.

    Raises :class:`~polylab.errors.ScheduleError` (a step that does not exist, a placeholder left in
    the spec) or :class:`~polylab.errors.IllegalTransformationError` (an illegal schedule, with the
    violated dependence) exactly as :func:`polylab.schedule.parse_schedule` does."""
    import polylab.storage  # noqa: F401  - registers the storage recipe steps
    from polylab.schedule import parse_schedule
    from polylab.schedule.recipe import parse_recipe

    if is_original(spec):
        return BuiltVariant("original", scop, None)
    if TILE_PLACEHOLDER in spec:
        raise ScheduleError(f"the spec {spec!r} still contains the tile-size placeholder {TILE_PLACEHOLDER}",
                            hint="give --tile-sizes, e.g. --tile-sizes 16,32")
    parts = split_parts(spec)
    if len(parts) == 1 or not any(_is_isl(p) for p in parts):
        # the common case: one recipe, or isl text alone (the schedule layer gives the best messages)
        sched = parse_schedule(scop, spec)
        _require_legal(sched, spec, scop)
        return BuiltVariant(spec, getattr(sched, "scop", scop), sched)
    current = None
    pending: list[str] = []

    def flush() -> None:
        nonlocal current
        if pending:
            base = current.scop if current is not None else scop
            current = parse_recipe(base, "; ".join(pending), start=current)
            pending.clear()

    for part in parts:
        if _is_isl(part):
            flush()
            base = current.scop if current is not None else scop
            current = parse_schedule(base, part)
            _require_legal(current, part, base)
        else:
            pending.append(part)
    flush()
    _require_legal(current, spec, scop)
    return BuiltVariant(spec, current.scop if current is not None else scop, current)


def _require_legal(schedule: Any, spec: str, scop: Scop) -> None:
    """Refuse an illegal schedule before any code is generated (neither isl text nor recipe steps such
    as ``reverse`` are checked when they are read).

    The check is against the memory-based dependences of the schedule's SCoP in its source order, which
    is meaningful while the statements are those of ``scop`` (folding and dead-write removal keep them);
    a contraction adds copy-out statements that have no source order, and proves its own schedule legal
    (it refuses an illegal one), so a contracted SCoP is not checked again here: verification runs anyway.
    Raises :class:`~polylab.errors.IllegalTransformationError` with the first violated dependence (the
    schedule layer's one gate, :func:`polylab.schedule.require_legal`)."""
    from polylab.schedule import Schedule, require_legal

    if not isinstance(schedule, Schedule):
        return
    if {st.name for st in schedule.scop.statements} - {st.name for st in scop.statements}:
        return
    require_legal(schedule, f"the schedule {short_label(spec)!r}", consequence="",
                  hint="every dependence u -> v needs theta(u) <lex theta(v)")


_NAME_RE = re.compile(r"\s+")


def short_label(spec: str, width: int = 48) -> str:
    """A one-line label for tables and charts (long specs are shortened in the middle)."""
    text = _NAME_RE.sub(" ", spec.strip())
    if len(text) <= width:
        return text
    keep = (width - 3) // 2
    return text[:keep] + "..." + text[-keep:]
