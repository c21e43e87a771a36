"""The storage chain found automatically: fold, drop dead writes, interleave, contract.

For ``sl3.sy`` no single step suffices: contraction of ``x`` under the source order is refuted (the whole
initialisation runs before the sweep, so all planes are live at once); folding removes the reads of the
"future" planes, dead-write removal then keeps only the initialisation of the boundary faces the sweep
still reads, interleaving runs each face next to the sweep plane that reads it, and only then does
contraction to two planes succeed. :func:`storage_pipeline` tries exactly that order, keeps each step
that helps, and records every step's report, so the chain can be inspected and replayed step by step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from polylab.errors import PolylabError
from polylab.model.budget import budgeted
from polylab.model.scop import Scop
from polylab.schedule import Schedule, original
from polylab.storage.contract import contract
from polylab.storage.dead import remove_dead_writes
from polylab.storage.fold import constant_writers, fold_live_ins
from polylab.storage.interleave import interleave
from polylab.storage.islutil import writes_map
from polylab.render import Displayable, esc


@dataclass(frozen=True, eq=False, repr=False)
class StoragePlan(Displayable):
    """The result of :func:`storage_pipeline`: the final SCoP and schedule and each step's report."""

    scop: Scop
    schedule: Schedule
    steps: tuple[tuple[str, Displayable], ...]
    seconds: float = 0.0

    def step_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.steps)

    def text(self) -> str:
        lines = [f"storage pipeline ({self.seconds:.2f} s): " + " -> ".join(self.step_names())]
        for name, rep in self.steps:
            lines.append(f"[{name}]")
            lines += ["  " + ln for ln in str(rep).splitlines()]
        lines.append("statements now:")
        lines += [f"  {s.name}: {s.code()}" for s in self.scop.statements]
        return "\n".join(lines)

    def html(self) -> str:
        parts = "".join(f"<li><b>{esc(n)}</b>{r.html()}</li>" for n, r in self.steps)
        code = "<br>".join(f"{esc(s.name)}: <code>{esc(s.code())}</code>" for s in self.scop.statements)
        return f"<div class='polylab-storage'><b>storage pipeline</b><ol>{parts}</ol>{code}</div>"


@dataclass(frozen=True, repr=False)
class Skipped(Displayable):
    """A step that was tried and not kept, with the reason."""

    reason: str

    def text(self) -> str:
        return self.reason

    def html(self) -> str:
        return f"<p>{esc(self.reason)}</p>"


@budgeted("the storage pipeline (storage)")
def storage_pipeline(scop: Scop, schedule: Schedule | None = None, *,
                     initial_values: Mapping[str, Any] | None = None,
                     arrays: Iterable[str] | None = None, max_modulus: int | None = None) -> StoragePlan:
    """Find a chain of storage steps for ``scop`` (see the module text); every step is exact and legal.

    ``arrays``: the arrays to contract (default: every array of rank >= 1 written in the region).
    """
    t0 = time.perf_counter()
    steps: list[tuple[str, Displayable]] = []
    cur, sched = scop, schedule
    folded, frep = fold_live_ins(cur, initial_values=initial_values)
    steps.append(("fold_live_ins", frep))
    if frep.folded:
        cur = folded
        inits = list(constant_writers(cur))
        if inits:
            dead, drep = remove_dead_writes(cur, statements=inits)
            steps.append(("remove_dead_writes", drep))
            cur = dead
    targets = list(arrays) if arrays is not None else [
        a.name for a in cur.arrays if a.rank >= 1 and any(w.array == a.name for _, w in
                                                           ((s, w) for s in cur.statements for w in s.writes))]
    for arr in targets:
        written = writes_map(cur, arr).range()
        if arrays is None and (cur.live_out is None or written.is_subset(cur.live_out)):
            steps.append((f"contract({arr})", Skipped(f"skipped: every element of {arr} written in the "
                                                      f"region is live after it")))
            continue
        try:
            new, new_sched, crep = contract(cur, sched, arr, max_modulus=max_modulus)
            steps.append((f"contract({arr})", crep))
            cur, sched = new, new_sched
            continue
        except PolylabError as exc:
            first_failure = exc
            steps.append((f"contract({arr}) under the current schedule",
                          Skipped(f"refused: {exc.message}")))
        try:
            inter, irep = interleave(cur, sched)
            new, new_sched, crep = contract(cur, inter, arr, max_modulus=max_modulus)
        except PolylabError as exc:
            steps.append((f"contract({arr})", Skipped(f"not contracted: {first_failure.message}; "
                                                      f"after interleaving: {exc.message}")))
            continue
        steps.append(("interleave", irep))
        steps.append((f"contract({arr})", crep))
        cur, sched = new, new_sched
    if sched is None:
        sched = original(cur)
    return StoragePlan(cur, sched, tuple(steps), time.perf_counter() - t0)
