"""Scalar expansion: a scalar's live range that stays inside one iteration of the loops around it kept
in an element of its own, one per iteration of those loops.

PolyBench's symm accumulates in the scalar ``temp2``::

    for (i ..) for (j ..) { temp2 = 0; for (k < i) { C[k][j] += ...; temp2 += B[k][j] * A[i][k]; }
                            C[i][j] = beta * C[i][j] + ... + alpha * temp2; }

Every ``(i, j)`` writes and reads the one location ``temp2``, so no two iterations of ``j`` can be
reordered, and the ``k`` loop, which walks ``C`` and ``B`` down their columns, stays inside ``j``. Each
value of ``temp2`` lives within one ``(i, j)``, though: kept in ``temp2_x[i][j]`` instead, the iterations
are independent, and the optimizer may run ``j`` innermost (rows of ``C`` and ``B``, a vector loop).
Contraction (:mod:`polylab.storage.contract`) then shrinks the buffer under the chosen schedule
(``temp2_x[i][j]`` to one row).

:func:`expand_scalars` does that for each *web* of a scalar (:func:`polylab.storage.homes.home_scalars`'s
webs: the statements its values flow between) that home_scalars left, where

* no read of the web sees a value from before the region; where the web holds the value the scalar keeps
  after the region (a scalar the function reads after it, or a fragment's scalar, which is not
  ``Scop.dead_after``), a copy statement ``scalar = buffer[..]`` runs right after each instance that
  writes that value (on those instances only: one, or one per piece of the parameters' values, where
  different statements write the last value), so the scalar ends with what it ended with;
* its statements share loops (the longest common prefix of their iterators' names): the buffer has one
  dimension per shared loop, its extent the loop's largest value + 1 (the loops start at 0 or above);
* **the rewritten program has the original's dataflow** (:func:`polylab.analysis.dataflow`, exact): every
  read has the same source instances and live-in part, every live element the same last write (a copy's
  write of the scalar counting as its writer's, and each copy reading exactly what its writer's instance
  wrote). Each instance then computes the same value from the same values.

The buffer is an ``Array`` marked ``temporary``: local to the region, never live after it.
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from polylab.analysis import Dataflow, dataflow
from polylab.model.budget import budgeted
from polylab.model.expr import ArrayRef, Assignment, Name, assignment_to_c, to_c
from polylab.model.scop import Access, Array, Scop, Statement
from polylab.schedule.core import original
from polylab.storage.homes import HomesReport, Web, each_web, home_relation, rewrite_web, same_dataflow
from polylab.storage.islutil import after_writers, extent_text, fresh_statement_names, padded_map, schedule_tree


@budgeted("the scalar expansion (expand_scalars)")
def expand_scalars(scop: Scop) -> tuple[Scop, HomesReport]:
    """Every web of every scalar written in ``scop`` kept in a buffer with one element per iteration of
    the loops its statements share, where the rewritten program has the original's dataflow (see the
    module text): the new SCoP (same statements, the buffers added) and the report (a
    :class:`~polylab.storage.homes.HomesReport` whose homed webs are the expanded ones, each kept in its
    buffer's element)."""
    cur, webs = each_web(scop, _try_web)
    return cur, HomesReport(tuple(webs), step="expand_scalars")


def _shared_loops(names: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest common prefix of the statements' iterators."""
    out: list[str] = []
    for its in zip(*names):
        if len(set(its)) != 1:
            break
        out.append(its[0])
    return tuple(out)


def _try_web(scop: Scop, flow: Dataflow, scalar: str, group: list[str]) -> tuple[Web, Scop | None]:
    """One web: the new SCoP with it expanded, or None with the reason in the :class:`Web`."""
    stmts = [scop.statement(n) for n in group]

    def refuse(why: str) -> tuple[Web, None]:
        return Web(scalar, tuple(group), None, None, False, why), None

    if any(s.body is None for s in stmts):
        return refuse("a statement of it is not an assignment")
    last = flow.last_write_instances(scalar)
    finals = [(s, _instances(last, s)) for s in stmts]
    finals = [(s, d) for s, d in finals if not d.is_empty()]
    if any(r.array == scalar and r.statement in group and r.is_live_in for r in flow.reads):
        return refuse("a read sees its value from before the region")
    loops = _shared_loops([s.iterators for s in stmts])
    if not loops:
        return refuse("its statements share no loop")
    used = {s.name for s in scop.statements} | {a.name for a in scop.arrays} | set(scop.parameters)
    buf = f"{scalar}_x"
    while buf in used:
        buf += "_"
    target = ArrayRef(buf, tuple(Name(x) for x in loops), 0)
    element = f"{buf}[{']['.join(loops)}]"
    new_stmts, outside = rewrite_web(scop, scalar, group, target, element)
    if outside is not None:
        return refuse(f"isl cannot read {element}")
    ranges = [a.relation.range() for s in new_stmts for a in s.accesses if a.array == buf]
    elements = ranges[0]
    for r in ranges[1:]:
        elements = elements.union(r)
    extents = []
    for d in range(len(loops)):
        negative = elements.intersect_params(scop.context)
        negative = negative.upper_bound_val(isl.dim_type.set, d, isl.Val.negone(negative.get_ctx()))
        if not negative.is_empty():
            return refuse(f"its {loops[d]} loop runs below 0")
        text = extent_text(scop, elements, d)
        if text is None:
            return refuse(f"the extent of its {loops[d]} loop is not one affine expression")
        extents.append(text)
    ctype = scop.array(scalar).ctype
    copies = _copy_backs(scop, scalar, target, finals)
    new = replace(scop, statements=new_stmts + tuple(c for c, _ in copies),
                  arrays=scop.arrays + (Array(buf, ctype, tuple(extents), declared=False, temporary=True),),
                  notes=scop.notes + (f"expand_scalars: {scalar} of {', '.join(group)} kept in {element}",))
    if copies:
        new = replace(new, schedule=_schedule_with_copies(scop, new, copies))
    after = dataflow(new)
    why = _copies_read_their_writers(after, copies) or same_dataflow(flow, _as_before(after, copies))
    if why is not None:
        return refuse(why)
    return Web(scalar, tuple(group), None, element, True, copies=tuple((c.name, w) for c, w in copies)), new


def _instances(instances: isl.UnionSet, s: Statement) -> isl.Set:
    """The instances of statement ``s`` among ``instances``."""
    return instances.intersect(isl.UnionSet.from_set(s.domain)).extract_set(s.domain.get_space())


def _copy_backs(scop: Scop, scalar: str, target: ArrayRef, finals) -> list[tuple[Statement, str]]:
    """For each web statement ``s`` with instances ``d`` that write the value the scalar keeps after the
    region (``finals``): a statement ``scalar = target`` on ``d`` (``s``'s iterators, a fresh name), and
    ``s``'s name."""
    out = []
    for (s, dom), name in zip(finals, fresh_statement_names(scop, len(finals))):
        cdom = dom.coalesce().set_tuple_name(name)
        write = next(a for a in s.writes if a.array == scalar)
        wrel = write.relation.intersect_domain(dom).set_tuple_name(isl.dim_type.in_, name)
        rrel = home_relation(scop, s, target).intersect_domain(dom).set_tuple_name(isl.dim_type.in_, name)
        tgt, src = ArrayRef(scalar, (), 0), ArrayRef(target.array, target.indices, 1)
        body = Assignment(tgt, "=", src)
        accs = (Access(0, "write", scalar, wrel, s.location, to_c(tgt)),
                Access(1, "read", target.array, rrel, s.location, to_c(src)))
        out.append((Statement(name, assignment_to_c(body), s.location, s.iterators, cdom, accs, body), s.name))
    return out


def _schedule_with_copies(scop: Scop, new: Scop, copies) -> isl.Schedule:
    """``scop``'s order with each copy right after its writer's instance (:func:`after_writers
    <polylab.storage.islutil.after_writers>`)."""
    T_new = after_writers(padded_map(original(scop)), [(writer, c.domain) for c, writer in copies])
    domain = isl.UnionSet.empty(scop.context.get_space())
    for st in new.statements:
        domain = domain.union(isl.UnionSet.from_set(st.domain))
    return schedule_tree(T_new.coalesce(), domain)


def _copies_read_their_writers(after: Dataflow, copies) -> str | None:
    """None when each copy reads exactly the element its writer's instance wrote (that same instance)."""
    for c, writer in copies:
        r = after.read(c.name, 1)
        same = isl.Map.identity(isl.Space.map_from_set(c.domain.get_space())).intersect_domain(c.domain)
        src = r.sources
        if (not r.live_in.is_empty() or len(src) != 1 or src[0].statement != writer
                or not src[0].relation.set_tuple_name(isl.dim_type.in_, c.name).is_equal(same)):
            return f"the copy {c.name} would not read the value {writer} wrote there"
    return None


def _as_before(after: Dataflow, copies) -> Dataflow:
    """``after`` without the copies' reads, each copy's last write of the scalar given to its writer (as
    the write of the scalar it was before): what :func:`~polylab.storage.homes.same_dataflow` compares."""
    if not copies:
        return after
    names = {c.name: (c, w) for c, w in copies}
    reads = tuple(r for r in after.reads if r.statement not in names)
    last: dict[tuple[str, int], isl.Map] = {}     # (same_dataflow reads a missing entry as an empty one)
    for st, a, m in after.last_writes:
        if m.is_empty():
            continue
        if st in names:
            c, w = names[st]
            a = next(x.index for x in after.scop.statement(w).accesses
                     if x.kind == "write" and x.array == c.accesses[1].array)
            st, m = w, m.set_tuple_name(isl.dim_type.in_, w)
        last[(st, a)] = last[(st, a)].union(m) if (st, a) in last else m
    return replace(after, reads=reads, last_writes=tuple((st, a, m) for (st, a), m in last.items()))
