"""The optimizer's report."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from polylab.render import Displayable, esc
from polylab.schedule.core import Schedule


@dataclass(frozen=True)
class StatementChoice:
    """What the optimizer did to one statement, and why."""

    statement: str
    shape: str
    why: str
    parallel: int
    vector: bool


@dataclass(frozen=True, eq=False, repr=False)
class OptimizeReport(Displayable):
    """The optimizer's choices (one line each), the alternatives it rejected, and the result."""

    schedule: Schedule
    lines: tuple[str, ...]
    choices: tuple[StatementChoice, ...]
    source_parallel: MappingProxyType
    seconds: float

    def text(self) -> str:
        return "\n".join(self.lines)

    def html(self) -> str:
        items = "".join(f"<li>{esc(x)}</li>" for x in self.lines)
        return f"<div class='polylab-optimize'><b>optimize</b><ul>{items}</ul></div>"

    def to_json(self) -> dict:
        return {"schedule": self.schedule.text(), "steps": list(self.schedule.steps),
                "parallel_dims": sorted(self.schedule.marked), "explanation": list(self.lines),
                "statements": [{"statement": c.statement, "shape": c.shape, "why": c.why,
                                "parallel_loops": c.parallel, "vector_innermost": c.vector}
                               for c in self.choices],
                "source_parallel_loops": dict(self.source_parallel), "seconds": self.seconds}
