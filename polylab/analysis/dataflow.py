"""Dataflow facts of a SCoP: where each read's value comes from, what enters and what leaves the region.

For a read ``r`` of statement ``T`` (access ``T[y] -> A[g(y)]``), its **sources** are the value-based flow
dependences ending at ``r``: pairs ``S[x] -> T[y]`` where ``S[x]`` is the *last* write of ``A[g(y)]`` before
``T[y]`` in the original order (the value-based flow dependences of
:func:`~polylab.analysis.compute_dependences`). Instances of ``r`` with no earlier write of the element at
all read a value from before the region: they are **live-in**, and ``A[g(y)]`` for those ``y`` are the
live-in elements.

The **live-out** writes of an array are its *last* writes: ``W[x]`` writes ``A[f(x)]`` and no later
instance writes that element. Only elements that are live after the region matter; which those are is
``live`` (an isl union set of array elements), by default ``Scop.live_out`` or, when unknown, every array.

A read has a **constant source** when every one of its instances has a source (none is live-in) and every
source statement writes one and the same constant expression (``x[i][j][k] = 1.0``); the storage step folds
such a read to the constant.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import islpy as isl

from polylab.analysis.dependences import compute_dependences
from polylab.errors import AnalysisError
from polylab.model.budget import budgeted
from polylab.model.expr import ArrayRef, Call, Expr, Name, walk
from polylab.model.islutil import in_child
from polylab.model.scop import Scop, Statement
from polylab.render import TextDisplay, text_table


@dataclass(frozen=True, eq=False)
class Source:
    """``relation = { S[x] -> T[y] }``: instance ``S[x]`` (access ``access`` of ``statement``) wrote the value
    that ``T[y]`` reads."""

    statement: str
    access: int
    relation: isl.Map


@dataclass(frozen=True, eq=False, repr=False)
class ReadSources(TextDisplay):
    """The sources of one read reference and its live-in part.

    ``live_in``: ``{ T[y] -> A[e] }`` for the instances whose value comes from before the region.
    ``constant``: the constant expression written by every source, when the read is fully sourced by
    writes of one constant (see the module documentation), else None.
    """

    statement: str
    access: int
    array: str
    text: str
    sources: tuple[Source, ...]
    live_in: isl.Map
    constant: Expr | None = None

    @property
    def live_in_elements(self) -> isl.Set:
        return self.live_in.range().coalesce()

    @property
    def is_live_in(self) -> bool:
        return not self.live_in.is_empty()

    @property
    def live_in_instances(self) -> isl.Set:
        """``{ T[y] }``: the instances of the read that see a value from before the region."""
        return self.live_in.domain()

    @property
    def source_map(self) -> isl.UnionMap:
        """``{ S[x] -> T[y] }``: every source instance with the read instance it feeds (all sources)."""
        out = isl.UnionMap.empty(self.live_in.get_space().params())
        for s in self.sources:
            out = out.union(isl.UnionMap.from_map(s.relation))
        return out

    def __str__(self) -> str:
        src = ", ".join(f"{s.statement}#{s.access}" for s in self.sources) or "none"
        out = f"{self.statement} {self.text}: sources {src}"
        if self.is_live_in:
            out += f"; live-in {self.live_in_elements}"
        if self.constant is not None:
            from polylab.model.expr import to_c

            out += f"; constant {to_c(self.constant)}"
        return out


def constant_expression(stmt: Statement) -> Expr | None:
    """The right-hand side of ``stmt`` when it is ``target = e`` with ``e`` free of array references,
    iterators and calls (literals, and scalars that are not iterators, such as ``alpha``)."""
    body = stmt.body
    if body is None or body.op != "=":
        return None
    for e in walk(body.value):
        if isinstance(e, (ArrayRef, Call)):
            return None
        if isinstance(e, Name) and e.name in stmt.iterators:
            return None
    return body.value


def source_constant(scop: Scop, sources: tuple[Source, ...], live_in: isl.Map) -> Expr | None:
    """The constant a read sees: the one constant expression every source statement stores
    (:func:`constant_expression`) when the read has sources and no live-in instance; else None."""
    if not sources or not live_in.is_empty():
        return None
    exprs = [constant_expression(scop.statement(s.statement)) for s in sources]
    return exprs[0] if all(e is not None for e in exprs) and all(e == exprs[0] for e in exprs) else None


@dataclass(frozen=True, eq=False, repr=False)
class Dataflow(TextDisplay):
    """Sources of every read, live-in reads, last writes; see the module documentation."""

    scop: Scop
    reads: tuple[ReadSources, ...]
    last_writes: tuple[tuple[str, int, isl.Map], ...]
    live: isl.UnionSet = field(repr=False)

    def read(self, statement: str, access: int) -> ReadSources:
        for r in self.reads:
            if r.statement == statement and r.access == access:
                return r
        raise AnalysisError(f"no read with access index {access} in statement {statement}")

    @property
    def live_in(self) -> isl.UnionSet:
        """Every array element read before any write in the region reaches it."""
        out = isl.UnionSet.empty(self.scop.context.get_space())
        for r in self.reads:
            out = out.union(isl.UnionSet.from_set(r.live_in_elements))
        return out.coalesce()

    @property
    def live_in_reads(self) -> tuple[ReadSources, ...]:
        return tuple(r for r in self.reads if r.is_live_in)

    def live_out(self, array: str | None = None) -> isl.UnionMap:
        """``{ S[x] -> A[e] }``: the last writes of live elements (of ``array`` when given)."""
        out = isl.UnionMap.empty(self.scop.context.get_space())
        for _s, _a, m in self.last_writes:
            if array is None or m.get_tuple_name(isl.dim_type.out) == array:
                out = out.union(isl.UnionMap.from_map(m))
        return out.coalesce()

    def flow_map(self, array: str | None = None) -> isl.UnionMap:
        """``{ S[x] -> T[y] }``: the value-based flow of every read (of ``array`` when given): ``T[y]``
        reads the value that ``S[x]`` wrote."""
        out = isl.UnionMap.empty(self.scop.context.get_space())
        for r in self.reads:
            if array is None or r.array == array:
                out = out.union(r.source_map)
        return out

    def last_write_instances(self, array: str | None = None) -> isl.UnionSet:
        """``{ S[x] }``: the write instances that are the last to write a live element."""
        return self.live_out(array).domain()

    @property
    def constant_reads(self) -> tuple[ReadSources, ...]:
        return tuple(r for r in self.reads if r.constant is not None)

    def __str__(self) -> str:
        """Two tables: the reads (sources, live-in elements, constant) and the live-out writes."""
        from polylab.model.expr import to_c

        lines = [f"dataflow of {self.scop.name}"]
        rows = [(r.statement, r.text, ", ".join(f"{s.statement}#{s.access}" for s in r.sources) or "-",
                 str(r.live_in_elements) if r.is_live_in else "-",
                 to_c(r.constant) if r.constant is not None else "-") for r in self.reads]
        if rows:
            lines.append(text_table(("statement", "read", "sources", "live-in elements", "constant"), rows))
        else:
            lines.append("  no reads")
        if self.last_writes:
            lines.append("live-out (last) writes")
            lines.append(text_table(("statement", "write", "instances -> elements"),
                                    [(s, self.scop.statement(s).accesses[a].text, str(m))
                                     for s, a, m in self.last_writes], width=100))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from polylab.model.expr import to_c

        rows = "".join(
            f"<tr><td>{r.statement}</td><td><code>{html.escape(r.text)}</code></td>"
            f"<td>{html.escape(', '.join(f'{s.statement}#{s.access}' for s in r.sources) or '—')}</td>"
            f"<td><code>{html.escape(str(r.live_in_elements)) if r.is_live_in else '—'}</code></td>"
            f"<td>{html.escape(to_c(r.constant)) if r.constant is not None else '—'}</td></tr>"
            for r in self.reads)
        return ("<table class='polylab-dataflow'><tr><th>statement</th><th>read</th><th>sources</th>"
                f"<th>live-in elements</th><th>constant</th></tr>{rows}</table>")


def _all_elements(scop: Scop) -> isl.UnionSet:
    """Every element an access of the region touches."""
    return scop.reads.union(scop.writes).range().coalesce()


@budgeted("the dataflow analysis")
def dataflow(scop: Scop, *, live: isl.UnionSet | str | None = None) -> Dataflow:
    """Sources, live-in reads and last writes of ``scop``.

    ``live``: the array elements read after the region (isl union set or its text, or the name of
    arrays separated by commas, e.g. ``"A, B"``); default ``scop.live_out``, or when that is None every
    array but the scalars dead after the region and a transformation's buffers (``scop.without_dead``).
    """
    graph = compute_dependences(scop, value_based=True, kinds=("flow",))
    by_read: dict[tuple[str, int], list[Source]] = {}
    for d in graph.dependences:
        by_read.setdefault((d.sink, d.sink_access), []).append(Source(d.source, d.source_access, d.relation))
    # live-in instances: no write of the element at all before the read. A read instance has an earlier
    # write of its element exactly when it has a last one, its value-based source: the sourced instances
    # are the ranges of the value-based flows
    sourced: dict[tuple[str, int], isl.Set] = {}
    for d in graph.dependences:
        key = (d.sink, d.sink_access)
        rng = d.relation.range()
        sourced[key] = sourced[key].union(rng) if key in sourced else rng
    nosrc: dict[tuple[str, int], isl.Map] = {}
    for stmt in scop.statements:
        for acc in stmt.reads:
            m = acc.relation.intersect_params(scop.context)
            if (stmt.name, acc.index) in sourced:
                src = sourced[(stmt.name, acc.index)]
                m = in_child(lambda: m.subtract_domain(src), m, src)
            nosrc[(stmt.name, acc.index)] = m.coalesce()
    reads = []
    for stmt in scop.statements:
        for acc in stmt.reads:
            srcs = tuple(by_read.get((stmt.name, acc.index), ()))
            li = nosrc.get((stmt.name, acc.index))
            if li is None:
                li = isl.Map.empty(acc.relation.get_space())
            reads.append(ReadSources(stmt.name, acc.index, acc.array, acc.text, srcs, li,
                                     source_constant(scop, srcs, li)))
    live_set = live_elements(scop, live)
    memory = compute_dependences(scop, kinds=("output",))
    last = []
    for stmt in scop.statements:
        for acc in stmt.writes:
            killed = isl.Set.empty(stmt.domain.get_space())
            for d in memory.between(source=stmt.name):
                if d.kind == "output" and d.source_access == acc.index:
                    killed = killed.union(d.relation.domain())
            m = in_child(lambda: acc.relation.subtract_domain(killed), acc.relation, killed)
            m = m.intersect_params(scop.context)
            m = isl.UnionMap.from_map(m).intersect_range(live_set)
            if not m.is_empty():
                got: list[isl.Map] = []
                m.foreach_map(got.append)
                last.append((stmt.name, acc.index, got[0].coalesce()))
    return Dataflow(scop, tuple(reads), tuple(last), live_set)


def live_elements(scop: Scop, live) -> isl.UnionSet:
    """The elements live after the region as :func:`dataflow` reads its ``live`` argument."""
    everything = _all_elements(scop)
    if live is None:
        live = scop.live_out
    if live is None:
        return scop.without_dead(everything)
    if isinstance(live, str):
        text = live.strip()
        if "{" in text:
            try:
                live = isl.UnionSet(text)
            except isl.Error as exc:
                raise AnalysisError(f"cannot read the live-out set {text!r}: {exc}",
                                    hint="write an isl set such as '{ A[i, j] }' or array names 'A, B'")
        else:
            names = [n.strip() for n in text.split(",") if n.strip()]
            known = {a.name for a in scop.arrays}
            for n in names:
                if n not in known:
                    raise AnalysisError(f"no array named {n!r}", hint="the arrays are " + ", ".join(sorted(known)))
            out = isl.UnionSet.empty(scop.context.get_space())
            sets: list[isl.Set] = []
            everything.foreach_set(sets.append)
            for s in sets:
                if s.get_tuple_name() in names:
                    out = out.union(isl.UnionSet.from_set(s))
            return out
    return live
