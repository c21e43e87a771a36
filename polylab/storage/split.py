"""Index-set splitting: a loop cut where the dependences it carries start or end.

Floyd-Warshall's update runs ``for k, i, j: path[i][j] = min(path[i][j], path[i][k] + path[k][j])``. Its
``j`` loop carries a dependence: the read ``path[i][k]`` sees the value written at ``j = k`` of the same
``(k, i)`` (and the instances ``j < k`` read it before that write), so the loop cannot run as a vector loop.
But every pair of its instances that depend on each other has one end on the hyperplane ``j = k``. Cut the
domain there, into the pieces ``j < k``, ``j = k`` and ``j > k``, and run them one after the other inside the
same ``(k, i)``: every instance keeps its place in the order, and neither the ``j < k`` loop nor the ``j > k``
loop carries a dependence any more (any pair inside one piece would have neither end on the hyperplane).
Its ``i`` loop is the same case with row ``k`` (``path[k][j]`` is written at ``i = k``): cut at ``i = k``,
the rows before row ``k`` and the rows after it are parallel loops.

:func:`split_index_sets` cuts each loop of a statement ``S``, from the outermost in, on iterator ``x_k``,
that carries a dependence where

* the loop is private to ``S``: no other statement runs in the same iteration of the loops around it
  (checked exactly: no instance of another statement has the same time prefix), so a new dimension that
  orders the pieces changes the order of no other pair of instances;
* the hyperplane is one where two references of ``S`` to the same array meet, one that moves with
  ``x_k`` and one that does not (``path[i][j]`` and ``path[i][k]`` meet where ``j = k``): an equality of
  their affine hull with coefficient +-1 on ``x_k``, so ``x_k = h(other iterators, parameters)``, and
  ``h`` is the same for every instance with the same time prefix (one cut per iteration of the loops
  around);
* **exactly**, every pair ``S[x] -> S[y]`` of the dependences that the loop carries (equal time prefix
  before the loop, different value at it) has ``x`` or ``y`` on the hyperplane.

The rewritten SCoP has the pieces ``Sa``, ``Sb``, ``Sc`` (those not empty, in the order the loop runs
them) in the place of ``S``, each with ``S``'s body and accesses restricted to its piece; the schedule
gets one more dimension, just before the loop, that is the piece's number for them and 0 for every other
statement. In the piece on the hyperplane the loop runs once: its dimension becomes the constant 0 where
the time vector still tells every instance apart. Within one time prefix the loop ran its values in order,
so the pieces run every instance in its original place; the source order of the new SCoP keeps ``S``'s
time vector for each piece. The new schedule is checked exactly (:func:`~polylab.schedule.is_legal`).
The pieces are cut again where one of their loops qualifies (at most :data:`MAX_SPLITS` cuts).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import islpy as isl

from polylab.errors import StorageError
from polylab.model.islutil import equal_until, maps_of
from polylab.model.scop import Statement
from polylab.render import TextDisplay
from polylab.schedule import Schedule, is_legal
from polylab.schedule.core import aff_text
from polylab.schedule.deps import union as dep_union
from polylab.schedule.optimize.loops import iterator_of, loop_dims
from polylab.storage.islutil import schedule_tree


@dataclass(frozen=True)
class Split:
    """One statement split: ``statement`` at its loop on ``iterator`` where ``iterator = at`` (text),
    into ``pieces`` (name, condition text), in the order the loop runs them."""

    statement: str
    iterator: str
    at: str
    pieces: tuple[tuple[str, str], ...]

    def text_line(self) -> str:
        parts = ", ".join(f"{n} ({c})" for n, c in self.pieces)
        return (f"{self.statement}: its {self.iterator} loop carries dependences only from or to "
                f"{self.iterator} = {self.at}; split into {parts}")


@dataclass(frozen=True, eq=False, repr=False)
class SplitReport(TextDisplay):
    """What :func:`split_index_sets` did: the statements split, and for the others whose innermost loop
    carries a dependence, why they were left as they are (statement, reason)."""

    splits: tuple[Split, ...]
    left: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        lines = ["split (index-set splitting)"] + ["  " + s.text_line() for s in self.splits]
        lines += [f"  {name}: left as it is ({why})" for name, why in self.left]
        if not self.splits and not self.left:
            lines.append("  no statement's innermost loop carries a dependence")
        return "\n".join(lines)


def _prefix_pairs(n: int, d: int, differ_at: bool, space: isl.Space) -> isl.Map:
    """``{ [t] -> [u] : t_e = u_e for e < d }`` on ``Z^n`` (and ``t_d != u_d`` when ``differ_at``), in the
    parameters of ``space``."""
    return equal_until(space.get_ctx(), n, d, differ_at).align_params(space)


def _shares_prefix(s: Schedule, name: str, d: int) -> bool:
    """Some instance of another statement has the same time prefix (dimensions ``< d``) as one of
    ``name``'s."""
    space = s.scop.context.get_space()
    mine = s.union_map.intersect_domain(isl.UnionSet.from_set(s.scop.statement(name).domain))
    same = isl.UnionMap.from_map(_prefix_pairs(s.n_dims, d, False, space))
    pairs = mine.apply_range(same).apply_range(s.union_map.reverse())
    return any(m.get_tuple_name(isl.dim_type.out) != name for m in maps_of(pairs.intersect_params(s.scop.context)))


def _hyperplanes(stmt: Statement, k: int) -> list[isl.Aff]:
    """The affine functions ``a`` with ``a(x) = 0`` where two references of ``stmt`` to one array meet, one
    moving with iterator ``k`` and one not, and coefficient +-1 on ``x_k`` (``j - k`` for
    ``path[i][j]`` and ``path[i][k]``); each once."""
    out: list[isl.Aff] = []
    seen: set[str] = set()
    accs = [a for a in stmt.accesses if a.matrix is not None]
    for a in accs:
        for b in accs:
            if a.array != b.array or (a.kind == "read" and b.kind == "read") or a.index >= b.index:
                continue
            moves = [any(int(x.matrix[r, k]) for r in range(x.matrix.rows)) for x in (a, b)]
            if moves[0] == moves[1]:
                continue
            meet = a.relation.intersect(b.relation).domain()
            if meet.is_empty():
                continue
            for c in meet.affine_hull().get_constraints():
                if not c.is_equality():
                    continue
                coef = c.get_coefficient_val(isl.dim_type.set, k).to_python()
                if abs(coef) != 1:
                    continue
                aff = c.get_aff()
                aff = aff if coef == 1 else aff.neg()
                if any(aff.get_coefficient_val(isl.dim_type.div, q).to_python()
                       for q in range(aff.dim(isl.dim_type.div))):
                    continue
                key = str(aff)
                if key not in seen:
                    seen.add(key)
                    out.append(aff)
    return out


def _at_text(aff: isl.Aff, stmt: Statement, k: int) -> str:
    """``h`` in ``x_k = h`` for ``aff = x_k - h`` (text in the statement's names)."""
    rest = aff.set_coefficient_val(isl.dim_type.in_, k, 0).neg()
    return aff_text(isl.PwAff.from_aff(rest), stmt)


def _restricted(stmt: Statement, name: str, piece: isl.Set) -> Statement:
    """``stmt`` on ``piece`` of its domain, named ``name``."""
    dom = stmt.domain.intersect(piece).set_tuple_name(name)
    accs = tuple(replace(a, relation=a.relation.intersect_domain(piece).set_tuple_name(isl.dim_type.in_, name))
                 for a in stmt.accesses)
    return replace(stmt, name=name, domain=dom, accesses=accs)


def _try(s: Schedule, stmt: Statement, deps: isl.UnionMap, names: set[str]
         ) -> tuple[tuple[Split, list[tuple[Statement, isl.Set]], int] | None, str]:
    """The first of ``stmt``'s loops under ``s``, from the outermost, that one cut frees: ((split, [(piece
    statement, piece)], its dimension), '') or (None, why its innermost loop could not be cut; '' when
    that loop carries no dependence)."""
    own = [m for m in maps_of(deps) if m.get_tuple_name(isl.dim_type.in_) == stmt.name
           and m.get_tuple_name(isl.dim_type.out) == stmt.name]
    if not own:
        return None, ""
    dims = loop_dims(s, stmt.name)
    why = ""
    for d in dims:
        found, reason = _try_loop(s, stmt, own[0], names, d)
        if found is not None:
            return found, ""
        why = reason if d == dims[-1] else why
    return None, why


def _try_loop(s: Schedule, stmt: Statement, own: isl.Map, names: set[str], d: int
              ) -> tuple[tuple[Split, list[tuple[Statement, isl.Set]], int] | None, str]:
    """The cut of ``stmt``'s loop at dimension ``d`` (``own``: its dependences on itself), or None and
    why not ('' when the loop carries no dependence)."""
    aff = s.affs[stmt.name][d]
    k = iterator_of(aff, stmt)
    space = s.scop.context.get_space()
    T = s.maps[stmt.name].intersect_domain(stmt.domain).align_params(space)
    carried = T.apply_range(_prefix_pairs(s.n_dims, d, True, space)).apply_range(T.reverse())
    C = own.intersect(carried).intersect_params(s.scop.context)
    if C.is_empty():
        return None, ""
    if k is None:
        return None, "a loop that carries a dependence is not one of its iterators"
    it = stmt.iterators[k]
    if _shares_prefix(s, stmt.name, d):
        return None, f"another statement runs in the same iteration of the loops around its {it} loop"
    same = T.apply_range(_prefix_pairs(s.n_dims, d, False, space)).apply_range(T.reverse())
    dom = stmt.domain
    for h in _hyperplanes(stmt, k):
        if not _fixed_by(same, h, k):
            continue
        on = dom.intersect(h.zero_basic_set().set_tuple_name(stmt.name))
        off = dom.subtract(on)
        if not C.intersect_domain(off).intersect_range(off).is_empty():
            continue
        lt = dom.intersect(h.neg_basic_set().set_tuple_name(stmt.name))
        gt = dom.intersect(h.neg().neg_basic_set().set_tuple_name(stmt.name))
        step = aff.get_pieces()[0][1].get_coefficient_val(isl.dim_type.in_, k).to_python()
        ordered = [(lt, "<"), (on, "="), (gt, ">")]
        if step < 0:
            ordered.reverse()
        pieces = [(p, op) for p, op in ordered if not p.intersect_params(s.scop.context).is_empty()]
        if len(pieces) < 2:
            continue
        at = _at_text(h, stmt, k)
        out, named = [], []
        for q, (p, op) in enumerate(pieces):
            name = f"{stmt.name}{'abc'[q]}"
            if name in names:
                return None, f"the name {name} is taken"
            out.append((_restricted(stmt, name, p), p))
            named.append((name, f"{it} {op} {at}"))
        return (Split(stmt.name, it, at, tuple(named)), out, d), ""
    return None, (f"some pair of instances of its {it} loop that depend on each other has neither end where "
                  f"two of its references meet")


def _fixed_by(same: isl.Map, h: isl.Aff, k: int) -> bool:
    """``x_k - h(x)`` with the ``x_k`` term left out (the cut's place) is equal on every pair of
    instances in ``same`` (the same time prefix before the loop): the loop is cut at one place per
    iteration of the loops around it."""
    rest = isl.Map.from_aff(h.set_coefficient_val(isl.dim_type.in_, k, 0))
    pairs = same.apply_domain(rest).apply_range(rest)
    return pairs.is_subset(isl.Map.identity(pairs.get_space()))


#: the most cuts one search makes (each one at most triples a statement)
MAX_SPLITS = 12


def split_index_sets(schedule: Schedule) -> tuple[Schedule, SplitReport]:
    """Each loop that carries dependences only from or to one hyperplane cut there (see the module text),
    from the outermost loops in: the schedule of the new SCoP (one dimension more per cut, checked
    exactly) and the report. The schedule is returned unchanged when nothing is cut."""
    s = schedule
    splits: list[Split] = []
    left: dict[str, str] = {}
    deps = dep_union(s.dependences, s.scop)
    progress = True
    while progress and len(splits) < MAX_SPLITS:
        progress = False
        for stmt in s.scop.statements:
            found, why = _try(s, stmt, deps, {x.name for x in s.scop.statements})
            if found is None:
                if why:
                    left[stmt.name] = why
                continue
            split, pieces, d = found
            s = _apply(s, stmt, pieces, d)
            deps = dep_union(s.dependences, s.scop)
            splits.append(split)
            progress = True
            break
    if not splits:
        return schedule, SplitReport((), tuple(left.items()))
    if not is_legal(s):  # the pieces run in the order of the original instances: never refused
        raise StorageError("split: the split schedule does not respect the dependences",
                           hint="this is a bug in polylab's index-set splitting: please report it")
    names = {x.name for x in s.scop.statements}
    return s, SplitReport(tuple(splits), tuple((n, w) for n, w in left.items() if n in names))


def _apply(s: Schedule, stmt: Statement, pieces: list[tuple[Statement, isl.Set]], d: int) -> Schedule:
    """``s`` with ``stmt`` replaced by ``pieces``: the new SCoP (the pieces keep ``stmt``'s source time)
    and a dimension inserted before ``d``, the piece's number for the pieces and 0 for the others."""
    scop = s.scop
    statements: list[Statement] = []
    for x in scop.statements:
        statements.extend([p for p, _ in pieces] if x.name == stmt.name else [x])
    source = scop.schedule_map
    umap = isl.UnionMap.empty(scop.context.get_space())
    for m in maps_of(source):
        if m.get_tuple_name(isl.dim_type.in_) == stmt.name:
            for p, piece in pieces:
                umap = umap.union(isl.UnionMap.from_map(
                    m.intersect_domain(piece).set_tuple_name(isl.dim_type.in_, p.name)))
        else:
            umap = umap.union(isl.UnionMap.from_map(m))
    new = replace(scop, statements=tuple(statements))
    new = replace(new, schedule=schedule_tree(umap, new.domain),
                  notes=scop.notes + (f"split {stmt.name} into {', '.join(p.name for p, _ in pieces)}",))
    maps: dict[str, isl.Map] = {}
    for x in scop.statements:
        m = s.maps[x.name].insert_dims(isl.dim_type.out, d, 1)
        if x.name != stmt.name:
            maps[x.name] = _fixed(m, d, 0)
            continue
        for q, (p, piece) in enumerate(pieces):
            mp = _fixed(m, d, q)
            loop_gone = mp.project_out(isl.dim_type.out, d + 1, 1).insert_dims(isl.dim_type.out, d + 1, 1)
            once = _fixed(loop_gone, d + 1, 0)
            if once.intersect_domain(piece).is_injective():
                mp = once  # the loop runs once here (x_k = h): a constant, not a loop of one iteration
            maps[p.name] = mp.set_tuple_name(isl.dim_type.in_, p.name)
    return Schedule.from_maps(new, maps, steps=s.steps, notes=s.notes, provenance=s.provenance)


def _fixed(m: isl.Map, d: int, value: int) -> isl.Map:
    """``m`` with output dimension ``d`` equal to ``value``."""
    return m.fix_val(isl.dim_type.out, d, isl.Val.int_from_si(m.get_ctx(), value))
