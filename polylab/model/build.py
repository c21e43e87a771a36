"""A :class:`Scop` assembled from statements built elsewhere (by hand in tests, or by the stencil lowering).

:func:`make_scop` takes the statements (their iteration domains and accesses already isl objects), the arrays
with their C types and extents, and the original schedule as an isl union map ``{ S[x] -> [t] }``; it builds
the schedule tree, the parameters and the context, and returns the model every other layer accepts.
"""

from __future__ import annotations

from typing import Iterable

import islpy as isl

from polylab.model.scop import Array, Scalar, Scop, Statement


def make_scop(name: str, statements: Iterable[Statement], *, arrays: Iterable[tuple[str, str, tuple]],
              schedule: str, context: str | None = None, live_out: str | None = None,
              scalars: Iterable[tuple[str, str, str | None]] = (), language: str = "c") -> Scop:
    """A SCoP from hand-built statements; ``schedule`` is an isl union map ``{ S[x] -> [t] }``."""
    stmts = tuple(statements)
    sched = isl.UnionMap(schedule)
    params = tuple(sched.get_space().get_dim_name(isl.dim_type.param, k)
                   for k in range(sched.get_space().dim(isl.dim_type.param)))
    dom = None
    for s in stmts:
        d = isl.UnionSet.from_set(s.domain)
        dom = d if dom is None else dom.union(d)
    assert dom is not None
    ctx = isl.Set(context) if context else isl.Set.universe(dom.params().get_space())
    sched_tree = isl.Schedule.from_domain(dom).insert_partial_schedule(
        isl.MultiUnionPwAff.from_union_map(sched.intersect_domain(dom)))
    dom_params = tuple(dom.get_space().get_dim_name(isl.dim_type.param, k)
                       for k in range(dom.get_space().dim(isl.dim_type.param)))
    return Scop(name=name, statements=stmts,
                arrays=tuple(Array(a, t, tuple(str(x) for x in ext)) for a, t, ext in arrays),
                parameters=dom_params or params, context=ctx, schedule=sched_tree,
                scalars=tuple(Scalar(n, t, v) for n, t, v in scalars),
                live_out=isl.UnionSet(live_out) if live_out else None,
                source="\n".join(s.text for s in stmts), language=language)  # type: ignore[arg-type]
