"""What a loop is: plain iterators, strides, the loops of a statement in a schedule, its private loops
(those no other statement shares), the exact spans of time dimensions, the parallel and vector loops
counted."""

from __future__ import annotations

from typing import Sequence

import islpy as isl

from polylab.model import Scop, Statement
from polylab.model.islutil import point_coordinates, union_all
from polylab.model.memo import memo
from polylab.schedule.core import Schedule, const_value, map_from_affs, on_domains
from polylab.schedule.optimize.machine import at_sizes, declared_sizes


Aff = isl.PwAff


# what a loop is
def iterator_of(aff: Aff, stmt: Statement) -> int | None:
    """The iterator ``k`` when ``aff`` is ``x_k + c`` or ``-x_k + c`` (one piece), else None."""
    if aff.n_piece() != 1 or aff.is_cst():
        return None
    pieces = aff.get_pieces()
    a = pieces[0][1]
    found = None
    for k in range(len(stmt.iterators)):
        v = int(a.get_coefficient_val(isl.dim_type.in_, k).to_python())
        if v == 0:
            continue
        if abs(v) != 1 or found is not None:
            return None
        found = k
    if not a.get_denominator_val().is_one():
        return None
    return found


def stride_score(stmt: Statement, k: int | None) -> int:
    """How well iterator ``k`` suits the innermost loop: per access, +2 when it moves along the last
    subscript with step 1 and no other subscript (stride-1), +1 when the access does not depend on it,
    -2 otherwise (a stride of a whole row or more). None (not a plain iterator) scores 0."""
    if k is None:
        return 0
    score = 0
    for acc in stmt.accesses:
        F = acc.matrix
        if F is None or F.rows == 0:
            continue
        col = [int(F[r, k]) for r in range(F.rows)]
        if all(c == 0 for c in col):
            score += 1
        elif abs(col[-1]) == 1 and all(c == 0 for c in col[:-1]):
            score += 2
        else:
            score -= 2
    return score


def is_stride_one(stmt: Statement, k: int | None) -> bool:
    """Every access that depends on iterator ``k`` moves along its last subscript with step 1, and one
    does (so a loop over ``k`` walks memory contiguously)."""
    if k is None:
        return False
    any_move = False
    for acc in stmt.accesses:
        F = acc.matrix
        if F is None or F.rows == 0:
            continue
        col = [int(F[r, k]) for r in range(F.rows)]
        if all(c == 0 for c in col):
            continue
        if abs(col[-1]) != 1 or any(col[:-1]):
            return False
        any_move = True
    return any_move


def loop_dims(s: Schedule, name: str) -> list[int]:
    """The dimensions that are loops (not constants) for statement ``name``."""
    return [d for d, a in enumerate(s.affs[name]) if not a.is_cst()]


def parallel_loops(s: Schedule) -> dict[str, int]:
    """Per statement, the number of its loops that are marked parallel (a marked dimension that is not
    constant for it): the structural measure the optimizer never lowers."""
    return {st.name: sum(1 for d in loop_dims(s, st.name) if d in s.marked) for st in s.scop.statements}


# the structure of the starting schedule
def private_start(s: Schedule, name: str) -> int:
    """The first dimension of ``name``'s private loops: its first loop dimension ``d`` that no other
    statement runs in the same iteration of the enclosing dimensions (another statement shares ``d``
    when it has a loop at ``d`` and equal constants on every dimension before ``d`` that is constant for
    both). ``n_dims`` when every loop is shared."""
    mine = s.affs[name]
    others = [n for n in s.affs if n != name]
    for d in loop_dims(s, name):
        shared = False
        for o in others:
            theirs = s.affs[o]
            if theirs[d].is_cst():
                continue
            if all(not (mine[e].is_cst() and theirs[e].is_cst()) or const_value(mine[e]) == const_value(theirs[e])
                   for e in range(d)):
                shared = True
                break
        if not shared:
            return d
    return s.n_dims


@memo("optimize.value_span", maxsize=65536, named=())
def value_span(aff: Aff, domain: isl.Set) -> int | None:
    """How many values the time dimension ``aff`` can take over ``domain`` when that number is bounded by
    a constant, for all parameter values together (``max - min + 1`` of the image with the parameters
    projected out, exact); None when it grows with the parameters. A dimension of span 1 is no loop at
    all (``floor(t / 128)`` for ``0 <= t < 10``); a parallel loop of constant span gives a fixed amount
    of parallel work, however large the problem."""
    return _extent(isl.Map.from_pw_aff(aff).intersect_domain(domain).range())


def declared_span(scop: Scop, stmt: Statement, aff: Aff) -> int | None:
    """How many values the time dimension ``aff`` of statement ``stmt`` takes over its domain at the arrays'
    declared sizes (:func:`~polylab.schedule.optimize.machine.declared_sizes`; ``max - min + 1``, exact):
    trmm's column loop ``j`` at PolyBench's LARGE size, 1200; None where those sizes are unknown or the
    values unbounded."""
    sizes = declared_sizes(scop)
    if sizes is None:
        return None
    return _extent(at_sizes(isl.Map.from_pw_aff(aff).intersect_domain(stmt.domain).range(), sizes))


def _extent(values: isl.Set) -> int | None:
    """``max - min + 1`` of a one-dimensional set over all parameter values (0 when it is empty, None when
    it is unbounded)."""
    values = values.project_out(isl.dim_type.param, 0, values.dim(isl.dim_type.param))
    if values.is_empty():
        return 0
    if not values.is_bounded():
        return None
    (lo,) = point_coordinates(values.lexmin().sample_point())
    (hi,) = point_coordinates(values.lexmax().sample_point())
    return hi - lo + 1


@memo("optimize.local_span", named=())
def local_span(stmt: Statement, outer: tuple[Aff, ...], aff: Aff, domain: isl.Set) -> int | None:
    """How many values the time dimension ``aff`` takes at one value of the dimensions ``outer`` around
    it, at most, when that is bounded by a constant (the row loop of a jam, ``i`` from ``8 c`` to
    ``8 c + 7`` inside ``c = floor(i / 8)``: 8); None when it grows with the parameters. Exact: with
    ``R = { outer(x) -> aff(x) : x in domain }``, one more than the largest difference of two values of
    ``aff`` that ``R`` relates to the same outer values (the differences run from ``-m`` to ``m``).
    ``stmt``: the statement whose time dimensions ``outer`` and ``aff`` are, ``domain`` its instances."""
    if not outer:
        return value_span(aff, domain)
    prefix = map_from_affs(stmt, domain.get_space(), list(outer))
    R = prefix.intersect_domain(domain).reverse().apply_range(isl.Map.from_pw_aff(aff))
    # the differences are symmetric (-m .. m): their extent 2m + 1 gives the largest one, m
    extent = _extent(R.reverse().apply_range(R).deltas())
    return None if extent is None else (extent + 1) // 2 if extent else 0


def carries_chain(s: Schedule, name: str, d: int) -> bool:
    """Dimension ``d`` of statement ``name`` in ``s`` carries a *chain*: within one iteration of the
    dimensions before ``d``, some instance waits for a value that was itself computed from a value of an
    earlier instance along ``d`` (a path of two flow dependences of the statement on itself, each carried
    by ``d``). Exact: with ``C = { x -> y in R : theta(x) and theta(y) equal before d, theta(x)_d <
    theta(y)_d }`` for ``R`` the statement's flow dependences on itself, a chain is ``C o C`` non-empty.
    A chain is latency-bound (``S[i][j] = S[i][j - 1] + ..``, a sum into one element: each iteration
    waits for the previous one's result); without one, every instance waits for at most one other, so the
    processor overlaps the iterations as it does independent ones (floyd-warshall's ``path[i][j]`` along
    ``j`` reads ``path[i][k]``, written by the one instance ``j = k`` of the same row). Anti and output
    dependences only order memory accesses, they make no instance wait for a result."""
    flows = [on_domains(dep.relation, s.scop, name, name) for dep in s.dependences
             if dep.kind == "flow" and dep.source == dep.sink == name]
    if not flows:
        return False
    pspace = s.scop.context.get_space()
    theta = s.maps[name].align_params(pspace)
    times = theta.get_space().range()
    later = isl.Map.universe(isl.Space.map_from_domain_and_range(times, times))
    for e in range(d):
        later = later.equate(isl.dim_type.in_, e, isl.dim_type.out, e)
    later = later.order_lt(isl.dim_type.in_, d, isl.dim_type.out, d)
    carried = theta.apply_range(later).apply_range(theta.reverse())
    chain = union_all([rel.intersect(carried) for rel in flows], isl.Map.empty(carried.get_space()))
    return not chain.apply_range(chain).is_empty()


def uses(acc, k: int) -> bool:
    """Access ``acc``'s subscripts depend on iterator ``k``."""
    return acc.matrix is not None and any(int(acc.matrix[r, k]) for r in range(acc.matrix.rows))


def accumulates_along(stmt: Statement, k: int | None) -> bool:
    """``stmt`` accumulates along iterator ``k``: it writes, no write's subscripts use ``k``, and it reads
    a written element with the write's own subscripts (the same affine map, ``C[i][j] += ..`` along ``k``):
    every iteration of ``k``'s loop updates the same element, each after the one before."""
    return (k is not None and bool(stmt.writes) and not any(uses(w, k) for w in stmt.writes)
            and any(r.array == w.array and r.relation.is_equal(w.relation) for w in stmt.writes for r in stmt.reads))


def reads_own_array(stmt: Statement) -> bool:
    """Some read of ``stmt`` has the array of one of its writes with other subscripts (trmm's ``B[k][j]``
    beside ``B[i][j]``): restrict cannot tell the compiler that they never overlap, so it checks at run
    time, at every start of the vector loop, and a strip of 32 columns starts it 8 times as often as a row
    of 240 (trmm at PolyBench's MEDIUM size, one thread: 1.3 ms in strips, 1.0 ms in whole rows; symm's
    and gramschmidt's sums, in arrays of their own, run 14 % and 13 % faster in strips)."""
    return any(r.array == w.array and not r.relation.is_equal(w.relation) for w in stmt.writes for r in stmt.reads)


def subscripted(stmt: Statement, k: int | None) -> bool:
    """Some access of ``stmt`` is subscripted by iterator ``k``."""
    return k is not None and any(uses(acc, k) for acc in stmt.accesses)


def exact_parallel_loops(s: Schedule) -> dict[str, int]:
    """Per statement, its loops that are exactly parallel in ``s`` (marked for OpenMP or not)."""
    par = set(s.parallel_dims)
    return {st.name: sum(1 for d in loop_dims(s, st.name) if d in par) for st in s.scop.statements}


def innermost_parallel(s: Schedule) -> set[str]:
    """The statements whose innermost loop is marked parallel in ``s``."""
    return {n for n in s.affs if loop_dims(s, n) and loop_dims(s, n)[-1] in s.marked}


def vector_floor(source: Schedule) -> dict[str, int]:
    """The parallel loops a statement must keep when only its innermost one counts (one thread): one for
    a statement whose innermost loop is parallel in ``source``, else none."""
    inner = innermost_parallel(source)
    return {n: 1 if n in inner else 0 for n in source.affs}


def keeps_vectors(source: Schedule, s: Schedule) -> bool:
    """Every statement whose innermost loop is parallel in ``source`` has a parallel innermost loop in
    ``s`` (a rewriting never takes a vector loop away)."""
    return innermost_parallel(source) <= innermost_parallel(s)


def vector_innermost(s: Schedule, st: Statement) -> bool:
    """Statement ``st``'s innermost loop in ``s`` is exactly parallel and stride-1 (a vector loop)."""
    dims = loop_dims(s, st.name)
    return bool(dims) and dims[-1] in s.parallel_dims and is_stride_one(st, iterator_of(s.affs[st.name][dims[-1]], st))


def loop_names(stmt: Statement, loops: Sequence[Aff]) -> list[str]:
    out = []
    for a in loops:
        k = iterator_of(a, stmt)
        out.append(stmt.iterators[k] if k is not None else str(a).split("->")[-1].strip(" }[]()"))
    return out
