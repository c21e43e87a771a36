"""Variant specs of a benchmark: a schedule spec, the tile-size placeholder ``$T``, and labels.

A *variant spec* is what ``polylab bench --schedules`` takes: ``original`` (the program's own order) or any
spec the one reader reads (:func:`polylab.experiment.schedule_from_spec`: recipe steps, storage steps and
isl text in any order, separated by ``;`` or new lines; isl text replaces the schedule of the *current*
SCoP, the one the storage steps before it produced). ``polylab run`` and ``polylab codegen`` read the same
specs with the same legality rule: the final schedule passes the one gate against the dependences of its
own SCoP.

The bench adds one thing: the placeholder ``$T`` stands for a tile size, and a spec that contains it is
expanded once per value of ``--tile-sizes`` (:func:`expand_tile`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from polylab.errors import ScheduleError
from polylab.experiment import schedule_from_spec
from polylab.experiment.schedules import is_original, variant_scop
from polylab.model.scop import Scop
from polylab.schedule import Machine, Schedule

__all__ = ["TILE_PLACEHOLDER", "Variant", "expand_tile", "has_tile_placeholder", "is_original",
           "prepare_variant", "short_label"]

#: the placeholder for a tile size in a variant spec
TILE_PLACEHOLDER = "$T"


@dataclass(frozen=True)
class Variant:
    """A variant ready for code generation: the (possibly rewritten) SCoP and its schedule.

    ``schedule`` is None for the original program order; ``text`` is a readable form of the schedule.
    """

    spec: str
    scop: Scop
    schedule: Schedule | None

    @property
    def text(self) -> str:
        return "original" if self.schedule is None else self.schedule.text()

    @property
    def steps(self) -> tuple[str, ...]:
        return () if self.schedule is None else self.schedule.steps


def has_tile_placeholder(spec: str) -> bool:
    return TILE_PLACEHOLDER in spec


def expand_tile(spec: str, size: int) -> str:
    """``spec`` with every ``$T`` replaced by ``size``."""
    return spec.replace(TILE_PLACEHOLDER, str(int(size)))


def prepare_variant(scop: Scop, spec: str, machine: Machine | None = None) -> Variant:
    """The variant ``spec`` describes for ``scop``, read and gated by
    :func:`polylab.experiment.schedule_from_spec`.

    Raises :class:`~polylab.errors.ScheduleError` (a step that does not exist, a placeholder left in
    the spec) or :class:`~polylab.errors.IllegalTransformationError` (an illegal schedule, with the
    violated dependence and a violating pair)."""
    if is_original(spec):
        return Variant("original", scop, None)
    if has_tile_placeholder(spec):
        raise ScheduleError(f"the spec {spec!r} still contains the tile-size placeholder {TILE_PLACEHOLDER}",
                            hint="give --tile-sizes, e.g. --tile-sizes 16,32")
    schedule = schedule_from_spec(scop, spec, machine=machine)
    return Variant(spec, variant_scop(scop, schedule), schedule)


_NAME_RE = re.compile(r"\s+")


def short_label(spec: str, width: int = 48) -> str:
    """A one-line label for tables and charts (long specs are shortened in the middle)."""
    text = _NAME_RE.sub(" ", spec.strip())
    if len(text) <= width:
        return text
    keep = (width - 3) // 2
    return text[:keep] + "..." + text[-keep:]
