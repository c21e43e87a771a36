"""Fusion with shifts: sibling perfect nests of equal depth become one nest, each statement retimed by the
smallest constant shift that keeps every dependence and the innermost loop parallel.

The stencils of a time step (fdtd2d's three field updates, jacobi2d's and heat3d's update and copy) are
sibling loop nests inside the time loop: each sweeps its arrays once per step, so a step streams every
array several times. Fusing them streams each array once, but the statements depend on each other's
neighbouring points: fdtd2d's ``hz[i][j]`` update reads ``ey[i + 1][j]``, which the ``ey`` update of row
``i + 1`` writes. A *shift* runs statement ``S``'s instance ``x`` at the fused iteration ``l(x) + c_S``
(its loops ``l = (l_1, .., l_m)``, a constant vector ``c_S``): the ``hz`` update one row later,
``c = (1, 0)``, reads a row that is already written.

The map, for each member ``S`` of a group of sibling nests (statements that share the loops and constants
``prefix`` before their own ``m`` loops, each alone in its nest, with the same ``m``)::

    theta'_S(x) = (prefix(x), g, l_1(x) + c_S1, .., l_m(x) + c_Sm, k_S)

with ``g`` the group's position among its siblings (its first member's) and ``k_S`` the member's textual
rank (the order inside one fused iteration). The shifts are chosen member by member in textual order:
the lexicographically smallest ``c_S`` in ``{0, 1, 2} x {0, 1}^(m-1)`` such that the schedule of the
members placed so far is legal (exact check on the dependences among them) and its innermost fused loop
is still parallel (exactly coincident on those dependences), preferring one with which, in every fused
outer iteration that two members share, their innermost loops run the same range
(:func:`same_inner_ranges`): the fused loop is then one vector loop of straight-line code. Where the
ranges differ (fdtd2d's updates run columns ``0..NY-1``, ``1..NY-1`` and ``0..NY-2``), the code generator
separates the fused loop into guard-free pieces (:func:`polylab.codegen.ast.shared_innermost`): fdtd2d
fused ran at 1.29x of the source order at one thread, where with guards in the loop it had been 10 %
slower. A member for which no shift qualifies ends the group. The whole schedule is then checked exactly
(:func:`polylab.schedule.legality.is_legal`).

The fused nest's outer loops carry the dependences between the members: they are sequential where
each sibling had them parallel, so :mod:`polylab.schedule.optimize` offers this fusion only for one thread,
where the vector loop is the parallelism that counts.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from types import MappingProxyType

import islpy as isl

from polylab.schedule.core import Schedule, const_aff, const_value, map_from_affs
from polylab.schedule.legality import is_legal
from polylab.schedule.tuning import FIRST_SHIFTS, OTHER_SHIFTS


def _own_loops(s: Schedule, name: str, start: int) -> list[int] | None:
    """The loop dimensions of ``name`` from ``start`` on, None when a later dimension is a constant
    other than 0 (a nest with more than one statement, or a statement not alone in its loops)."""
    dims = []
    for d in range(start, s.n_dims):
        a = s.affs[name][d]
        if a.is_cst():
            if const_value(a) != 0:
                return None
        else:
            dims.append(d)
    return dims


def sibling_groups(s: Schedule, private: dict[str, int]) -> list[list[str]]:
    """Runs of consecutive statements (textual order) that are sibling perfect nests of the same depth:
    each statement's loops from ``private[S]`` on are its own (no other statement shares them), the
    dimension just before them is a constant (its position among the siblings), the dimensions before
    that are equal for all (the loops and constants they share), and they have the same number of own
    loops. Groups of at least two statements."""
    groups: list[list[str]] = []
    key_of = {}
    for st in s.scop.statements:
        p = private.get(st.name, s.n_dims)
        loops = _own_loops(s, st.name, p) if 0 < p < s.n_dims else None
        if not loops or not s.affs[st.name][p - 1].is_cst():
            key_of[st.name] = None
            continue
        # the shape of the shared dimensions: their constants, and where the shared loops are (that they
        # are the same loops private_start established)
        key_of[st.name] = (p, len(loops), tuple(None if a.is_cst() is False else const_value(a)
                                                for a in s.affs[st.name][:p - 1]))
    run: list[str] = []
    for st in s.scop.statements:
        k = key_of[st.name]
        if run and k is not None and k == key_of[run[-1]]:
            run.append(st.name)
            continue
        if len(run) >= 2:
            groups.append(run)
        run = [st.name] if k is not None else []
    if len(run) >= 2:
        groups.append(run)
    return groups


def _vector(s: Schedule, name: str, p: int, group_pos: int, rank: int, shift: tuple[int, ...]) -> list:
    st = s.scop.statement(name)
    pspace = s.scop.context.get_space()
    loops = [s.affs[name][d] for d in _own_loops(s, name, p) or []]
    ctx = pspace.get_ctx()
    moved = [a.add_constant_val(isl.Val.int_from_si(ctx, c)) if c else a for a, c in zip(loops, shift)]
    return list(s.affs[name][:p - 1]) + [const_aff(st, pspace, group_pos)] + moved + [const_aff(st, pspace, rank)]


def _image(s: Schedule, name: str, p: int, shift: tuple[int, ...]) -> isl.Set:
    """The fused iterations of ``name`` shifted by ``shift``: ``{ (l(x) + c) : x in D }``."""
    st = s.scop.statement(name)
    pspace = s.scop.context.get_space()
    loops = [s.affs[name][d] for d in _own_loops(s, name, p) or []]
    ctx = pspace.get_ctx()
    moved = [a.add_constant_val(isl.Val.int_from_si(ctx, c)) if c else a for a, c in zip(loops, shift)]
    m = map_from_affs(st, pspace, moved).intersect_domain(st.domain.align_params(pspace))
    return m.range().intersect_params(s.scop.context)


def same_inner_ranges(a: isl.Set, b: isl.Set) -> bool:
    """In every fused iteration of the outer loops that both sets run, their innermost loops run the same
    range: ``a ∩ (outer(b) x Z) = b ∩ (outer(a) x Z)`` (exact). The fused innermost loop then needs no
    guard (each statement of its body runs in every iteration), so it stays a vector loop of straight-line
    code."""
    n = a.dim(isl.dim_type.set)

    def cylinder(x: isl.Set) -> isl.Set:
        return x.project_out(isl.dim_type.set, n - 1, 1).insert_dims(isl.dim_type.set, n - 1, 1)

    return a.intersect(cylinder(b)).is_equal(b.intersect(cylinder(a)))


def _assemble(s: Schedule, vectors: dict[str, list]) -> Schedule:
    """The schedule with the given vectors (the other statements keep theirs), all padded with zeros to
    one length."""
    pspace = s.scop.context.get_space()
    width = max([s.n_dims] + [len(v) for v in vectors.values()])
    maps = {}
    for st in s.scop.statements:
        vec = list(vectors.get(st.name, s.affs[st.name]))
        vec += [const_aff(st, pspace, 0)] * (width - len(vec))
        maps[st.name] = map_from_affs(st, pspace, vec)
    return Schedule(s.scop, MappingProxyType(maps), s.steps, frozenset(), (), s.deps)


def _shift(s: Schedule, vectors: dict[str, list], placed: dict[str, tuple[int, ...]], name: str, p: int,
           pos: int, m: int, deps) -> tuple[int, ...] | None:
    """The smallest shift of ``name`` that keeps the members placed so far legal and the innermost fused
    loop parallel, one that gives equal inner ranges (:func:`same_inner_ranges`) first; None when no
    shift qualifies."""
    shifts = list(itertools.product(FIRST_SHIFTS, *([OTHER_SHIFTS] * (m - 1))))
    members = set(placed) | {name}
    mine = tuple(d for d in deps if d.source in members and d.sink in members)
    inner = p + m - 1          # the innermost fused loop
    ok: dict[tuple[int, ...], bool] = {}
    for equal in (True, False):
        for shift in shifts:
            if equal and not all(same_inner_ranges(_image(s, name, p, shift), _image(s, n, p, c))
                                 for n, c in placed.items()):
                continue
            if shift not in ok:
                trial = dict(vectors)
                for k, (n, c) in enumerate(list(placed.items()) + [(name, shift)]):
                    trial[n] = _vector(s, n, p, pos, k, c)
                cand = replace(_assemble(s, trial), deps=mine)
                ok[shift] = is_legal(cand) and cand.is_coincident(inner)
            if ok[shift]:
                return shift
    return None


def fuse_with_shifts(s: Schedule, private: dict[str, int]) -> tuple[Schedule, list[str]] | None:
    """``s`` with each group of :func:`sibling_groups` fused with shifts (see the module text), and one
    line per fused group saying its shifts; None when no group fuses or the result is not legal."""
    vectors: dict[str, list] = {}
    lines = []
    deps = s.dependences
    for group in sibling_groups(s, private):
        p = private[group[0]]
        pos = const_value(s.affs[group[0]][p - 1])
        m = len(_own_loops(s, group[0], p) or [])
        placed: dict[str, tuple[int, ...]] = {}
        for name in group:
            found = _shift(s, vectors, placed, name, p, pos, m, deps)
            if found is None:
                break
            placed[name] = found
        if len(placed) < 2:
            continue
        for k, (n, c) in enumerate(placed.items()):
            vectors[n] = _vector(s, n, p, pos, k, c)
        lines.append("fused with shifts: " + ", ".join(f"{n} + ({', '.join(map(str, c))})"
                                                      for n, c in placed.items()))
    if not vectors:
        return None
    out = _assemble(s, vectors)
    return (out, lines) if is_legal(out) else None
