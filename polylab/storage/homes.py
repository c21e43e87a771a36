"""Scalar homes: each live range of a scalar kept in the array element it ends in.

A scalar written in the region (a 0-dimensional array, ``w``) serializes every statement that uses it: all
its instances write one location, so every pair of them depends on every other, and no loop around them
can be reordered. PolyBench's ludcmp is lu with its updates accumulated in ``w``::

    w = A[i][j];  for (k ..) w -= A[i][k] * A[k][j];  A[i][j] = w / A[j][j];

Here every value of ``w`` ends in one element, ``A[i][j]``: the *home* of that live range. Keeping the
live range there instead (``A[i][j] -= A[i][k] * A[k][j]; A[i][j] = A[i][j] / A[j][j]``, the copy
``A[i][j] = A[i][j]`` dropped) gives the loop optimizer lu's dependences. :func:`home_scalars` does that
for each *web* of a scalar (the statements its values flow between, exact value-based dataflow), where:

* the web has one *sink*: one statement that reads the scalar and writes an element of another array
  (of rank 1 or more) with affine subscripts; the home of an instance of a web statement is that
  element's subscripts read with the instance's iterators of the same names (every name must be one of
  its iterators);
* the web does not hold the region's last write of the scalar (its value after the region stays where
  it was), and no read of the web sees a value from before the region;
* **the rewritten program has the original's dataflow**: every read (of the scalar's former reads, now
  of the home, and of every other reference) has exactly the same source instances and the same live-in
  part, and every live element the same last write (:func:`polylab.analysis.dataflow`, exact). Each
  statement instance then computes the same function of the same values, so every value, and the
  output, is the original's; a web for which this does not hold is left as it is, with the reason.

A statement that becomes ``X[e] = X[e]`` (the start ``w = A[i][j]`` and the end ``A[i][j] = w`` of a
live range homed in ``A[i][j]``) stores what is there already and is removed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import islpy as isl

from polylab.analysis import Dataflow, dataflow
from polylab.model.budget import budgeted
from polylab.model.expr import ArrayRef, Assignment, Name, assignment_to_c, to_c, transform, walk
from polylab.model.scop import Scop, Statement
from polylab.render import TextDisplay


@dataclass(frozen=True)
class Web:
    """One web of scalar ``scalar``: its ``statements`` (in the region's order), the ``sink`` whose
    written element is the home (``home``, its text; no sink for a buffer of :func:`expand_scalars
    <polylab.storage.expand.expand_scalars>`, one element per iteration of the web's loops), and the
    outcome: ``homed`` or the ``reason`` it was left alone."""

    scalar: str
    statements: tuple[str, ...]
    sink: str | None
    home: str | None
    homed: bool
    reason: str = ""
    #: ``(copy, writer)``: the statements that copy the web's last value back to the scalar, each right
    #: after the instance of ``writer`` that wrote it (an expanded web that holds the value the scalar
    #: keeps after the region)
    copies: tuple[tuple[str, str], ...] = ()

    def text_line(self) -> str:
        names = ", ".join(self.statements)
        if self.homed:
            where = f"the element {self.sink} stores it to" if self.sink else "one element per iteration of its loops"
            back = "".join(f"; {c} copies its last value back to {self.scalar} after {w}" for c, w in self.copies)
            return f"{self.scalar} in {names}: kept in {self.home} ({where}{back})"
        return f"{self.scalar} in {names}: left as it is ({self.reason})"


@dataclass(frozen=True, eq=False, repr=False)
class HomesReport(TextDisplay):
    """What :func:`home_scalars` (or ``step``, :func:`~polylab.storage.expand.expand_scalars`) did: every
    web of every scalar written in the region, and the copy statements it removed."""

    webs: tuple[Web, ...]
    removed: tuple[str, ...] = ()
    step: str = "home_scalars"

    @property
    def homed(self) -> tuple[Web, ...]:
        return tuple(w for w in self.webs if w.homed)

    def __str__(self) -> str:
        lines = [self.step] + ["  " + w.text_line() for w in self.webs]
        if self.removed:
            lines.append(f"  removed (they store what is there already): {', '.join(self.removed)}")
        if not self.webs:
            lines.append("  no scalar is written in the region")
        return "\n".join(lines)


def _webs(scop: Scop, flow: Dataflow, scalar: str) -> list[list[str]]:
    """The statements that write or read ``scalar``, grouped by the flow of its values (union-find over
    the pairs source statement -> reading statement), each group in the region's order."""
    users = [s.name for s in scop.statements if any(a.array == scalar for a in s.accesses)]
    parent = {n: n for n in users}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for r in flow.reads:
        if r.array != scalar:
            continue
        for src in r.sources:
            parent[find(src.statement)] = find(r.statement)
    groups: dict[str, list[str]] = {}
    for n in users:
        groups.setdefault(find(n), []).append(n)
    return list(groups.values())


def home_relation(scop: Scop, st: Statement, target: ArrayRef) -> isl.Map | None:
    """``{ S[x] -> X[e(x)] }``: the sink's written element ``target`` with ``st``'s iterators of the same names, on
    ``st``'s domain; None when a subscript names something that is not one of ``st``'s iterators or a
    parameter, or isl cannot read it."""
    known = set(st.iterators) | set(scop.parameters)
    for e in target.indices:
        for x in walk(e):
            if isinstance(x, Name) and x.name not in known:
                return None
            if isinstance(x, ArrayRef):
                return None
    subs = ", ".join(to_c(e) for e in target.indices)
    text = (f"[{', '.join(scop.parameters)}] -> {{ {st.name}[{', '.join(st.iterators)}] -> "
            f"{target.array}[{subs}] }}")
    try:
        rel = isl.Map(text)
    except isl.Error:
        return None
    rel = rel.align_params(st.domain.get_space())
    return rel.intersect_domain(st.domain)


def _rewritten(st: Statement, scalar: str, target: ArrayRef, home: str, rel: isl.Map) -> Statement:
    """``st`` with every reference to ``scalar`` replaced by the home ``target`` (its text ``home``,
    relation ``rel``)."""
    def sub(x):
        if isinstance(x, ArrayRef) and x.array == scalar:
            return ArrayRef(target.array, target.indices, x.access)
        return None

    body = st.body
    new_body = Assignment(transform(body.target, sub), body.op, transform(body.value, sub))
    accs = tuple(replace(a, array=target.array, relation=rel, text=home) if a.array == scalar else a
                 for a in st.accesses)
    return replace(st, body=new_body, accesses=accs, text=assignment_to_c(new_body))


def rewrite_web(scop: Scop, scalar: str, group: Sequence[str], target: ArrayRef, text: str
                ) -> tuple[tuple[Statement, ...], str | None]:
    """``scop``'s statements with every reference to ``scalar`` in the web's statements (``group``)
    replaced by the element ``target`` (its text ``text``), read with each statement's iterators of the
    same names: ``(statements, None)``, or ``((), name)`` for the first web statement that cannot read
    ``target`` (a subscript names something that is not one of its iterators or a parameter)."""
    out = []
    for s in scop.statements:
        if s.name not in group:
            out.append(s)
            continue
        rel = home_relation(scop, s, target)
        if rel is None:
            return (), s.name
        out.append(_rewritten(s, scalar, target, text, rel))
    return tuple(out), None


def _same_map(a: isl.Map, b: isl.Map) -> bool:
    """The same relation (two empty relations are the same whatever array they name)."""
    if a.is_empty() and b.is_empty():
        return True
    if a.get_tuple_name(isl.dim_type.out) != b.get_tuple_name(isl.dim_type.out):
        return False
    return a.is_equal(b)


def same_dataflow(before: Dataflow, after: Dataflow) -> str | None:
    """None when every read of ``after`` has exactly the source instances and the live-in part it has
    in ``before`` (the same statements and access numbers; a former read of the scalar now reads its
    home), and every element the same last write; else what differs, in words."""
    old = {(r.statement, r.access): r for r in before.reads}
    for r in after.reads:
        o = old.get((r.statement, r.access))
        if o is None:
            return f"{r.statement} {r.text} would be a new read"
        if not _same_map(r.live_in, o.live_in):
            return f"{r.statement} {r.text} would see other values from before the region"
        src_new = {(x.statement, x.access): x.relation for x in r.sources}
        src_old = {(x.statement, x.access): x.relation for x in o.sources}
        if set(src_new) != set(src_old) or any(not src_new[k].is_equal(src_old[k]) for k in src_new):
            return f"{r.statement} {r.text} would read values that other instances wrote"
    lw_old = {(st, a): m for st, a, m in before.last_writes}
    lw_new = {(st, a): m for st, a, m in after.last_writes}
    for key in set(lw_old) | set(lw_new):
        a, b = lw_old.get(key), lw_new.get(key)
        if a is None or b is None:
            if not (a if a is not None else b).is_empty():
                return f"{key[0]} would change which write an element keeps after the region"
        elif not _same_map(a, b):
            return f"{key[0]} would change which write an element keeps after the region"
    return None


def each_web(scop: Scop, try_web: Callable[[Scop, Dataflow, str, list[str]], tuple[Web, Scop | None]]
             ) -> tuple[Scop, list[Web]]:
    """``try_web(scop, flow, scalar, group)`` on every web of every scalar written in ``scop``, in order,
    each on the SCoP (and its dataflow) that the webs before it left: the last SCoP and the webs."""
    scalars = [a.name for a in scop.arrays if a.rank == 0
               and any(w.array == a.name for s in scop.statements for w in s.writes)]
    webs: list[Web] = []
    cur = scop
    flow = dataflow(cur) if scalars else None
    for scalar in scalars:
        for group in _webs(cur, flow, scalar):
            web, new = try_web(cur, flow, scalar, group)
            webs.append(web)
            if new is not None:
                cur = new
                flow = dataflow(cur)
    return cur, webs


@budgeted("the scalar homes (home_scalars)")
def home_scalars(scop: Scop) -> tuple[Scop, HomesReport]:
    """Every web of every scalar written in ``scop`` kept in its home element where the rewritten program
    has the original's dataflow (see the module text); the new SCoP (same statement names, the copies
    that store what is there already removed, the schedule restricted to the rest) and the report."""
    cur, webs = each_web(scop, _try_web)
    homed = {n for w in webs if w.homed for n in w.statements}
    removed = tuple(s.name for s in cur.statements if s.name in homed and _stores_itself(s))
    if removed:
        kept = replace(cur, statements=tuple(s for s in cur.statements if s.name not in removed))
        cur = replace(kept, schedule=kept.schedule.intersect_domain(kept.domain),
                      notes=kept.notes + (f"home_scalars removed {', '.join(removed)}",))
    return cur, HomesReport(tuple(webs), removed)


def _stores_itself(s: Statement) -> bool:
    """``s`` is ``X[e] = X[e]``: it stores what is there already."""
    b = s.body
    return (b is not None and b.op == "=" and isinstance(b.value, ArrayRef) and b.value.array == b.target.array
            and b.value.indices == b.target.indices)


def _try_web(scop: Scop, flow: Dataflow, scalar: str, group: list[str]) -> tuple[Web, Scop | None]:
    """One web: the new SCoP with it homed, or None with the reason in the :class:`Web`."""
    stmts = [scop.statement(n) for n in group]
    last = flow.last_write_instances(scalar)

    def refuse(why: str, sink: str | None = None, home: str | None = None) -> tuple[Web, None]:
        return Web(scalar, tuple(group), sink, home, False, why), None

    if any(s.body is None for s in stmts):
        return refuse("a statement of it is not an assignment")
    sinks = [s for s in stmts if any(a.array == scalar for a in s.reads)
             and not any(a.array == scalar for a in s.writes)]
    if len(sinks) != 1:
        return refuse(f"{len(sinks)} statements end its values, not one")
    sink = sinks[0]
    target = sink.body.target
    if not isinstance(target, ArrayRef) or target.array == scalar:
        return refuse("its end stores no array element", sink.name)
    if scop.array(target.array).rank == 0:  # another scalar: no array dependences gained
        return refuse(f"its end stores to the scalar {target.array}", sink.name)
    home = to_c(ArrayRef(target.array, target.indices, 0))
    if any(not last.intersect(isl.UnionSet.from_set(s.domain)).is_empty() for s in stmts):
        return refuse("it holds the last value of the scalar, which stays after the region", sink.name, home)
    if any(r.array == scalar and r.statement in group and r.is_live_in for r in flow.reads):
        return refuse("a read sees its value from before the region", sink.name, home)
    new_stmts, outside = rewrite_web(scop, scalar, group, target, home)
    if outside is not None:
        return refuse(f"{home} names a loop that {outside} is not in", sink.name, home)
    new = replace(scop, statements=new_stmts,
                  notes=scop.notes + (f"home_scalars: {scalar} of {', '.join(group)} kept in {home}",))
    why = same_dataflow(flow, dataflow(new))
    if why is not None:
        return refuse(why, sink.name, home)
    return Web(scalar, tuple(group), sink.name, home, True), new
