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

* the web does not hold the value the scalar keeps after the region (``Scop.dead_after``: the function
  does not read it), and no read of the web sees a value from before the region;
* its statements share loops (the longest common prefix of their iterators' names): the buffer has one
  dimension per shared loop, its extent the loop's largest value + 1 (the loops start at 0 or above);
* **the rewritten program has the original's dataflow** (:func:`polylab.analysis.dataflow`, exact): every
  read has the same source instances and live-in part, every live element the same last write. Each
  instance then computes the same value from the same values.

The buffer is an ``Array`` marked ``temporary``: local to the region, never live after it.
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from polylab.analysis import Dataflow, dataflow
from polylab.model.budget import budgeted
from polylab.model.expr import ArrayRef, Name
from polylab.model.scop import Array, Scop
from polylab.storage.homes import HomesReport, Web, each_web, rewrite_web, same_dataflow
from polylab.storage.islutil import extent_text


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
    if any(not last.intersect(isl.UnionSet.from_set(s.domain)).is_empty() for s in stmts):
        return refuse("it holds the value the scalar keeps after the region")
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
    new = replace(scop, statements=new_stmts,
                  arrays=scop.arrays + (Array(buf, ctype, tuple(extents), declared=False, temporary=True),),
                  notes=scop.notes + (f"expand_scalars: {scalar} of {', '.join(group)} kept in {element}",))
    why = same_dataflow(flow, dataflow(new))
    if why is not None:
        return refuse(why)
    return Web(scalar, tuple(group), None, element, True), new
