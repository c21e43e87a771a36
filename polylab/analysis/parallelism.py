"""Which loops of the original schedule are parallel.

A loop is **parallel** (its iterations may run in any order, at the same time) exactly when it carries no
dependence: no pair ``u -> v`` of a flow, anti or output dependence agrees on all the loops outside it and
differs in it. Dependences between instances of the *same* iteration of the loop (carried by an inner loop,
or loop-independent) do not prevent it. A loop is one band member of the schedule tree: it is shared by
every statement below it, so a dependence between two other statements inside it also prevents it.

Memory-based dependences are used by default: a value-based analysis would ignore anti and output
dependences, which a parallel loop must still respect unless the storage is privatised or expanded.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from polylab.analysis.dependences import Dependence, DependenceGraph, compute_dependences
from polylab.model.budget import budgeted
from polylab.model.scop import Scop
from polylab.render import TextDisplay, text_table


@dataclass(frozen=True, eq=False, repr=False)
class LoopParallelism(TextDisplay):
    """Loop ``level`` (1-based) around ``statement``: ``parallel`` and, if not, the dependences carried."""

    statement: str
    level: int
    iterator: str
    parallel: bool
    preventing: tuple[Dependence, ...]

    def to_json(self, graph: DependenceGraph | None = None) -> dict:
        idx = []
        if graph is not None:
            ids = {id(d): k for k, d in enumerate(graph.dependences)}
            idx = [ids[id(d)] for d in self.preventing if id(d) in ids]
        return {"statement": self.statement, "level": self.level, "iterator": self.iterator,
                "parallel": self.parallel, "prevented_by": idx,
                "preventing": [d.label for d in self.preventing]}

    def __str__(self) -> str:
        if self.parallel:
            return f"{self.statement} level {self.level} ({self.iterator}): parallel"
        return (f"{self.statement} level {self.level} ({self.iterator}): not parallel, carries "
                + "; ".join(d.label for d in self.preventing))


@dataclass(frozen=True, eq=False, repr=False)
class Parallelism(TextDisplay):
    """One :class:`LoopParallelism` per statement and loop level of the original schedule."""

    graph: DependenceGraph
    loops: tuple[LoopParallelism, ...]

    def of(self, statement: str) -> tuple[LoopParallelism, ...]:
        return tuple(p for p in self.loops if p.statement == statement)

    def is_parallel(self, statement: str, level: int) -> bool:
        for p in self.loops:
            if p.statement == statement and p.level == level:
                return p.parallel
        from polylab.errors import AnalysisError

        raise AnalysisError(f"statement {statement} has no loop level {level}",
                            hint=f"its loops: {', '.join(str(p.level) for p in self.of(statement)) or 'none'}")

    def parallel_loops(self, statement: str) -> tuple[int, ...]:
        return tuple(p.level for p in self.of(statement) if p.parallel)

    def to_json(self) -> dict:
        out: dict[str, list] = {}
        for p in self.loops:
            out.setdefault(p.statement, []).append(p.to_json(self.graph))
        return out

    def __str__(self) -> str:
        """A table: one row per statement and loop level."""
        if not self.loops:
            return f"parallel loops of the original schedule of {self.graph.scop.name}: no loops"
        rows = [(p.statement, p.level, p.iterator, "yes" if p.parallel else "no",
                 "; ".join(d.label for d in p.preventing) or "-") for p in self.loops]
        return "\n".join([f"parallel loops of the original schedule of {self.graph.scop.name}",
                          text_table(("statement", "level", "loop", "parallel", "carried dependences"), rows,
                                     width=100)])

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{p.statement}</td><td>{p.level}</td><td>{html.escape(p.iterator)}</td>"
            f"<td>{'yes' if p.parallel else '<b>no</b>'}</td>"
            f"<td>{html.escape('; '.join(d.label for d in p.preventing)) or '—'}</td></tr>"
            for p in self.loops)
        return ("<table class='polylab-parallelism'><tr><th>statement</th><th>level</th><th>loop</th>"
                f"<th>parallel</th><th>carried dependences</th></tr>{rows}</table>")


@budgeted("the parallelism analysis")
def parallelism(scop_or_graph: Scop | DependenceGraph) -> Parallelism:
    """The parallel loops of the original schedule (see the module documentation).

    Given a :class:`Scop`, its memory-based flow, anti and output dependences are used; given a graph,
    its dependences other than input (read after read) ones.
    """
    graph = (scop_or_graph if isinstance(scop_or_graph, DependenceGraph)
             else compute_dependences(scop_or_graph))
    st = graph.structure
    assert st is not None
    deps = [d for d in graph.dependences if d.kind != "input"]
    # loop key -> dependences carried by that loop
    carried: dict[tuple, list[Dependence]] = {}
    for d in deps:
        for lv in d.levels:
            if lv is not None:
                carried.setdefault(st.loop_key(d.source, lv), []).append(d)
    out = []
    for s in graph.scop.statements:
        names = st.loop_names(s.name)
        for level in range(1, st.depth(s.name) + 1):
            prev = tuple(carried.get(st.loop_key(s.name, level), ()))
            out.append(LoopParallelism(s.name, level, names[level - 1], not prev, prev))
    return Parallelism(graph, tuple(out))
