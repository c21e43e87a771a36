"""Dead-write removal: keep only the statement instances whose value someone still needs.

An instance ``w`` of a statement is *useful* when the value it writes is

* read by a kept instance of the region (exact value-based dataflow, :func:`polylab.analysis.dataflow`:
  ``w`` is the source of that read), or
* live-out: ``w`` is the last write of an element that is read after the region (``Scop.live_out``; all
  elements when it is None).

By default one round: an instance is kept when *some* read of the region (kept or not) uses its value, so
the statements that compute results keep their whole domains and only writes nobody reads disappear
(for ``sl3.sy`` after folding: the initialisation of the elements the sweep no longer reads).
``rounds=k`` repeats the removal ``k`` times, each time counting only the reads of kept instances (the
greatest fixed point of ``K = live-last ∪ sources(reads of K)``, computed from above, is program slicing:
it can cut a sweep down to the cone of the printed element, with much larger domains to print; stopping
early only keeps more, which is always correct).
Each statement's domain is restricted to its kept instances; statements with no instance left disappear.
Removing ``w`` never changes what any kept read sees: a read's source is the last write before it, and a
removed instance is nobody's source.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Iterable

import islpy as isl

from polylab.analysis import dataflow
from polylab.analysis.dataflow import Dataflow, live_elements, source_constant
from polylab.model.budget import budgeted
from polylab.model.islutil import sets_of
from polylab.model.scop import Scop, Statement
from polylab.render import Displayable, esc, text_table
from polylab.storage.report import condition_text


@dataclass(frozen=True, eq=False)
class StatementChange:
    """How dead-write removal changed one statement's domain."""

    statement: str
    line: int
    before: isl.Set
    after: isl.Set | None   # None: the statement was removed

    def removed(self) -> isl.Set:
        return self.before if self.after is None else self.before.subtract(self.after)

    def text_line(self) -> str:
        if self.after is None:
            return f"{self.statement} (line {self.line}): removed (no instance writes a value that is used)"
        if self.removed().is_empty():
            return f"{self.statement} (line {self.line}): unchanged"
        return (f"{self.statement} (line {self.line}): kept only {condition_text(self.after, self.before)}"
                f"\n      new domain {self.after}")


@dataclass(frozen=True, eq=False, repr=False)
class DeadWriteReport(Displayable):
    """What :func:`remove_dead_writes` removed."""

    changes: tuple[StatementChange, ...]
    live_out: str
    rounds: int
    converged: bool
    seconds: float = 0.0
    #: the dataflow of the new SCoP, derived from the old one's (:func:`restricted_dataflow`); None when
    #: it could not be
    dataflow: Dataflow | None = field(default=None, repr=False)

    def text(self) -> str:
        lines = [f"remove_dead_writes (live-out: {self.live_out}; {self.rounds} round(s))"]
        rows = []
        for c in self.changes:
            if c.after is None:
                rows.append((c.statement, c.line, "removed (no instance writes a value that is used)", "-"))
            elif c.removed().is_empty():
                rows.append((c.statement, c.line, "unchanged", str(c.after)))
            else:
                cond = condition_text(c.after, c.before)
                rows.append((c.statement, c.line, "restricted" if cond.startswith("for the instances in")
                             else f"kept only {cond}", str(c.after)))
        if rows:
            lines.append(text_table(("statement", "line", "change", "new domain"), rows, width=110))
        return "\n".join(lines)

    def html(self) -> str:
        rows = "".join(f"<tr><td>{esc(c.statement)}</td><td>{c.line}</td><td><code>{esc(c.before)}</code></td>"
                       f"<td>{'removed' if c.after is None else '<code>' + esc(c.after) + '</code>'}</td></tr>"
                       for c in self.changes)
        return (f"<div class='polylab-dead'><b>remove_dead_writes</b> (live-out: <code>{esc(self.live_out)}"
                f"</code>)<table><tr><th>statement</th><th>line</th><th>domain before</th>"
                f"<th>domain after</th></tr>{rows}</table></div>")


@budgeted("the dead-write removal (remove_dead_writes)")
def remove_dead_writes(scop: Scop, *, live_out: isl.UnionSet | str | None = None, rounds: int = 1,
                       statements: Iterable[str] | None = None, flow: Dataflow | None = None
                       ) -> tuple[Scop, DeadWriteReport]:
    """Restrict every statement to the instances whose value is read in the region or is live-out.

    ``live_out``: an isl union set (or its text) of the elements read after the region; default
    ``scop.live_out``, and every element of every array when that is None too. ``rounds``: how many
    times to remove (see the module text; 1 keeps every instance that some read of the region uses).
    ``statements``: restrict only these statements (default: all), e.g. only the initialisation.
    ``flow``: the dataflow of ``scop`` when the caller has it (``fold_live_ins`` reports its new SCoP's),
    used when its live set is the one asked for; analysed here otherwise.
    """
    t0 = time.perf_counter()
    only = set(statements) if statements is not None else None
    if live_out is None:
        live = scop.live_out
    elif isinstance(live_out, str):
        live = isl.UnionSet(live_out)
    else:
        live = live_out
    if flow is None or flow.scop is not scop or not flow.live.is_equal(live_elements(scop, live)):
        flow = dataflow(scop, live=live)
    F = flow.flow_map()
    live_last = flow.last_write_instances()
    kept = scop.domain.intersect_params(scop.context)
    done, converged = 0, False
    while done < rounds:
        done += 1
        used = F.intersect_range(kept).domain().union(live_last)
        new_kept = kept.intersect(used).coalesce()
        if new_kept.is_equal(kept):
            converged = True
            break
        kept = new_kept
    per_stmt = {s.get_tuple_name(): s for s in sets_of(kept)}
    changes: list[StatementChange] = []
    stmts: list[Statement | None] = []
    for s in scop.statements:
        before = s.domain.intersect_params(scop.context)
        after = per_stmt.get(s.name)
        if only is not None and s.name not in only:
            after = before
        if after is None or after.is_empty():
            changes.append(StatementChange(s.name, s.line, before, None))
            stmts.append(None)
            continue
        after = after.coalesce()
        changes.append(StatementChange(s.name, s.line, before, after))
        if after.is_equal(before):
            stmts.append(s)
            continue
        dom = s.domain.intersect(after).coalesce()
        stmts.append(replace(s, domain=dom, accesses=tuple(
            replace(a, relation=a.relation.intersect_domain(dom)) for a in s.accesses)))
    kept = replace(scop, statements=tuple(_keep_array_writers(scop, stmts)))
    new_scop = replace(kept, schedule=scop.schedule.intersect_domain(kept.domain))
    report = DeadWriteReport(tuple(changes), "all arrays" if live is None else str(live), done, converged,
                             time.perf_counter() - t0, restricted_dataflow(flow, new_scop))
    return new_scop, report


def _keep_array_writers(scop: Scop, stmts: list[Statement | None]) -> list[Statement]:
    """The kept statements (None: removed). When ``Scop.live_out`` is None the live-out data is every array
    the region writes (:func:`polylab.codegen.harness.live_outs`), so a removed statement that was the
    only writer of an array (it never runs: nothing it writes is used) stays, with no instance: the region
    still writes that array, none of its elements, and the live-out data stays the original's."""
    if scop.live_out is None:
        written = {a.array for s in stmts if s is not None for a in s.writes}
        for k, s in enumerate(scop.statements):
            if stmts[k] is None and any(a.array not in written for a in s.writes):
                empty = s.domain.subtract(s.domain)
                stmts[k] = replace(s, domain=empty, accesses=tuple(
                    replace(a, relation=a.relation.intersect_domain(empty)) for a in s.accesses))
                written |= {a.array for a in s.writes}
    return [s for s in stmts if s is not None]


def restricted_dataflow(flow: Dataflow, scop: Scop) -> Dataflow | None:
    """The dataflow of ``scop``, a SCoP whose statements are some of ``flow.scop``'s, in the same order and
    with the same accesses and schedule, each on a subset of its domain (what :func:`remove_dead_writes`
    makes), derived from ``flow`` instead of analysed anew; None when some removed instance is the source
    of a kept read or the last write of a live element (then the sources change).

    Otherwise nothing a kept read sees changes: its source ``w`` is the last write of the element before
    it, still there, and the writes removed are a subset of the others, so ``w`` stays the last; a read
    with no write before it still has none; a live element's last write stays. So every relation is
    ``flow``'s restricted to the kept instances (exact), and only a read's constant
    (:func:`~polylab.analysis.dataflow.source_constant`) is found again, its live-in part and sources
    being fewer."""
    doms = {s.name: s.domain for s in scop.statements}
    reads = []
    for r in flow.reads:
        if r.statement not in doms:
            continue
        sink = doms[r.statement]
        sources = []
        for src in r.sources:
            rel = src.relation.intersect_range(sink)
            if rel.is_empty():
                continue
            if src.statement not in doms or not rel.domain().is_subset(doms[src.statement]):
                return None
            sources.append(replace(src, relation=rel))
        live_in = r.live_in.intersect_domain(sink)
        reads.append(replace(r, sources=tuple(sources), live_in=live_in,
                             constant=source_constant(scop, tuple(sources), live_in)))
    if any(s not in doms or not m.domain().is_subset(doms[s]) for s, _, m in flow.last_writes):
        return None
    return Dataflow(scop, tuple(reads), flow.last_writes, flow.live)
