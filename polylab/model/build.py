"""A :class:`Scop` assembled from statements built elsewhere (by hand in tests, or by the stencil lowering).

:func:`make_statement` makes a statement ``target = value`` of an expression tree over an isl domain, its
accesses derived from the tree. :func:`make_scop` takes the statements (their iteration domains and accesses
isl objects), the arrays with their C types and extents, and the original schedule as an isl union map
``{ S[x] -> [t] }``; it builds the schedule tree, the parameters and the context, and returns the model every
other layer accepts.
"""

from __future__ import annotations

from typing import Iterable

import islpy as isl

from polylab.errors import SourceLocation
from polylab.model.expr import ArrayRef, Assignment, Expr, assignment_to_c, to_c, transform, walk
from polylab.model.scop import Access, Array, Scalar, Scop, Statement


def make_statement(name: str, domain: isl.Set, target: ArrayRef, value: Expr, line: int = 0,
                   column: int = 1) -> Statement:
    """The statement ``target = value`` over ``domain`` (renamed ``name``), at ``line`` and ``column``. Its
    accesses: the write of ``target`` (number 0), then one read per distinct element ``value`` reads, in the
    order of the text (numbers from 1), each the isl map from the domain to the element (subscripts are
    quasi-affine expressions of the domain's iterators and parameters)."""
    domain = domain.set_tuple_name(name)
    space = domain.get_space()
    params = ", ".join(space.get_dim_name(isl.dim_type.param, k) for k in range(space.dim(isl.dim_type.param)))
    iters = tuple(space.get_dim_name(isl.dim_type.set, k) for k in range(space.dim(isl.dim_type.set)))
    reads = {to_c(r): r for r in walk(value) if isinstance(r, ArrayRef)}
    number = {text: k for k, text in enumerate(reads, 1)}
    body = Assignment(ArrayRef(target.array, target.indices, 0), "=", transform(
        value, lambda x: ArrayRef(x.array, x.indices, number[to_c(x)]) if isinstance(x, ArrayRef) else None))
    text = assignment_to_c(body)
    where = SourceLocation(line, column, text, text)

    def access(k: int, kind: str, ref: ArrayRef) -> Access:
        subscripts = ", ".join(map(to_c, ref.indices))
        rel = isl.Map(f"[{params}] -> {{ {name}[{', '.join(iters)}] -> {ref.array}[{subscripts}] }}")
        return Access(k, kind, ref.array, rel.intersect_domain(domain), where, to_c(ref))  # type: ignore[arg-type]

    accesses = (access(0, "write", target), *(access(k, "read", r) for k, r in enumerate(reads.values(), 1)))
    return Statement(name, text, where, iters, domain, accesses, body)


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
