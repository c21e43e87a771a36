"""The optimizer's report: what it compared, what it kept and why, as values (the schedule it returns carries
it, ``schedule.provenance.optimize``), with the explanation written from them (``lines``).

This module imports nothing that imports :class:`~polylab.schedule.Schedule`, so the schedule can name the
report's type.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from polylab.render import Displayable, esc
from polylab.schedule.optimize.kinds import Structure, TimeTiling
from polylab.schedule.optimize.machine import Machine
from polylab.schedule.optimize.records import Jam, ProgramScore, SerialLoop, StatementChoice


@dataclass(frozen=True)
class Compared:
    """One candidate of the search: its structure, its tiles across the outer loop, its name in the
    explanation, its score, and whether the check of the whole schedule refused it."""

    label: str
    structure: Structure
    timing: TimeTiling
    score: ProgramScore
    refused: bool = False


@dataclass(frozen=True, eq=False, repr=False)
class OptimizeReport(Displayable):
    """The optimizer's choices and the alternatives it compared.

    ``structure`` / ``timing``: the fusion structure kept and its tiles across the outer loop (None when no
    rewriting kept every parallel loop: the starting schedule); ``score``: its score; ``compared``: every
    candidate, best first; ``choices``: per statement; ``jams``: the unroll-and-jams asked for;
    ``serial``: the parallel dimensions left without an OpenMP loop; ``source_parallel``: the parallel loops
    of each statement in the starting schedule; ``machine``: what it chose for; ``lines``: the explanation
    (the storage steps' lines around the search's)."""

    lines: tuple[str, ...]
    choices: tuple[StatementChoice, ...]
    source_parallel: Mapping[str, int]
    seconds: float
    machine: Machine
    structure: Structure | None = None
    timing: TimeTiling = TimeTiling.NONE
    score: ProgramScore | None = None
    compared: tuple[Compared, ...] = ()
    jams: tuple[Jam, ...] = ()
    serial: tuple[SerialLoop, ...] = ()

    def text(self) -> str:
        return "\n".join(self.lines)

    def html(self) -> str:
        items = "".join(f"<li>{esc(x)}</li>" for x in self.lines)
        return f"<div class='polylab-optimize'><b>optimize</b><ul>{items}</ul></div>"

    def to_json(self) -> dict:
        """The report as JSON values (the schedule itself is its holder's: ``polylab optimize --json`` adds
        it)."""
        return {"explanation": list(self.lines),
                "structure": self.structure.value if self.structure else None, "time_tiling": self.timing.value,
                "statements": [{"statement": c.statement, "shape": c.kind.value, "why": c.why,
                                "parallel_loops": c.parallel, "vector_innermost": c.vector}
                               for c in self.choices],
                "jams": [{"kind": j.kind.value, "outcome": j.outcome.value, "dimension": j.dim,
                          "statements": list(j.statements)} for j in self.jams],
                "serial_dims": [{"dimension": x.dim, "reason": x.reason.value} for x in self.serial],
                "source_parallel_loops": dict(self.source_parallel), "seconds": self.seconds,
                "machine": {"threads": self.machine.threads, "vector_bytes": self.machine.vector_bytes,
                            "l1_bytes": self.machine.l1_bytes, "l2_bytes": self.machine.l2_bytes}}


def frozen_counts(counts: Mapping[str, int]) -> Mapping[str, int]:
    """A read-only copy of per-statement counts."""
    return MappingProxyType(dict(counts))
