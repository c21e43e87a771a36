"""A Pluto-style scheduler: permutable bands of hyperplanes found one at a time with the Farkas lemma.

For every statement ``S`` with iterators ``x`` we look for a hyperplane (one schedule row)

    phi_S(x) = c_S . x + c_S0          (integer c_S >= 0, shift c_S0 >= 0)

such that, for every dependence ``S[x] -> T[y]`` not yet carried by an earlier band,

    validity:  phi_T(y) - phi_S(x) >= 0                       (so the band stays permutable: tilable)
    bounding:  u . p + w - (phi_T(y) - phi_S(x)) >= 0          (p = parameters, u >= 0, w >= 0)

hold on the whole dependence polyhedron. Both are "an affine form is non-negative on a polyhedron";
the affine form of the Farkas lemma turns each into linear constraints on the unknowns ``(u, w, c)``
(isl computes the set of valid coefficients, ``Set.coefficients``, and eliminates the multipliers).
Pluto's cost function is then minimised lexicographically with isl's exact ``lexmin``:

    minimise (u, w, then the coefficients, innermost iterator first, then the shifts)

``u = 0, w = 0`` means every remaining dependence has distance 0: the hyperplane is a parallel loop.
Small ``w`` means short dependences: good locality and small tile-to-tile communication.

To avoid the trivial solution and repeated rows, each statement's new row must be linearly independent
of its earlier rows (Pluto's orthogonal-subspace constraint ``h . c_S >= 0`` for every ``h`` of a basis
of the null space of the earlier rows, ``sum h . c_S >= 1``; if that convex approximation has no
solution, the exact disjunction ``h . c_S != 0`` for some ``h`` is tried). When no row is found, the band
is closed: dependences carried by it (non-zero distance on some band row) are dropped, and a new band
starts. When even a fresh band has no row, the statements are *distributed*: a scalar dimension orders
the strongly connected components of the remaining dependence graph topologically. The search stops
when every statement has as many independent rows as loops; a final scalar dimension orders the
statements that still share time vectors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from graphlib import TopologicalSorter
from typing import Iterable

import islpy as isl
import sympy

from polylab import render
from polylab.analysis import DependenceGraph
from polylab.errors import ScheduleError, TooComplexError
from polylab.model import Scop
from polylab.model.budget import bounded, exhausted, tick
from polylab.model.islutil import point_coordinates
from polylab.schedule.core import (Schedule, aff_text, const_aff, farkas_coefficients, iter_aff, lexmin_point,
                                   map_from_affs, original, stmt_affs)
from polylab.schedule.deps import Dep, dependences
from polylab.schedule.isl_scheduler import isl_schedule
from polylab.schedule.legality import is_legal
from polylab.schedule.transform import mark_parallel

COEFF_MAX = 8   #: bound on each hyperplane coefficient (keeps the integer programs small, as in Pluto)
SHIFT_MAX = 16  #: bound on each statement shift
#: the exact independence constraint is a disjunction with up to this many pieces (2 per missing row and
#: statement, multiplied); beyond it only the convex (Pluto) form is tried
MAX_EXACT_PIECES = 32


@dataclass(frozen=True)
class Row:
    """One schedule row found by the search."""

    band: int
    kind: str                      # 'hyperplane' or 'scalar'
    coefficients: dict[str, tuple[int, ...]]
    shifts: dict[str, int]
    u: tuple[int, ...] = ()
    w: int = 0
    why: str = ""

    def expression(self, scop: Scop, stmt: str) -> str:
        st = scop.statement(stmt)
        terms = []
        for c, x in zip(self.coefficients[stmt], st.iterators):
            if c:
                terms.append(x if c == 1 else f"{c}{x}")
        sh = self.shifts.get(stmt, 0)
        if sh or not terms:
            terms.append(str(sh))
        return " + ".join(terms)


@dataclass(frozen=True, eq=False)
class PlutoResult(render.Rendered):
    """The scheduler's answer: the schedule and the rows in the order found, with explanations."""

    schedule: Schedule
    rows: tuple[Row, ...]
    explanation: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        return "\n".join(self.explanation)


# --------------------------------------------------------------------------------------------------------
class _Problem:
    """The unknowns ``[u_0.., w, (c_S reversed, c_S0) per statement]`` and the Farkas constraints."""

    def __init__(self, scop: Scop, orient: dict[str, isl.Map] | None = None):
        self.scop = scop
        self.orient = orient or {}
        self.params = list(scop.parameters)
        self.names: list[str] = [f"u{k}" for k in range(len(self.params))] + ["w"]
        self.coef: dict[str, list[str]] = {}
        self.shift: dict[str, str] = {}
        for si, st in enumerate(scop.statements):
            cs = [f"c{si}_{k}" for k in range(st.depth)]
            self.coef[st.name] = cs
            self.shift[st.name] = f"s{si}"
            self.names += list(reversed(cs)) + [f"s{si}"]
        self.tuple = "[" + ", ".join(self.names) + "]"
        bounds = [f"{n} >= 0" for n in self.names]
        bounds += [f"{c} <= {COEFF_MAX}" for cs in self.coef.values() for c in cs]
        bounds += [f"{s} <= {SHIFT_MAX}" for s in self.shift.values()]
        self.universe = isl.Set(f"{{ {self.tuple} : {' and '.join(bounds)} }}")
        self._farkas_cache: dict[int, tuple[isl.Map, isl.Set]] = {}

    def farkas(self, dep_rel: isl.Map, source: str, sink: str) -> isl.Set:
        """Validity and bounding constraints of one dependence polyhedron, on the unknowns."""
        key = id(dep_rel)  # the cache keeps the relation alive, so the id cannot be reused
        hit = self._farkas_cache.get(key)
        if hit is not None and hit[0] is dep_rel:
            return hit[1]
        pspace = self.scop.context.get_space()
        rel = dep_rel.align_params(pspace).intersect_params(self.scop.context)
        if source in self.orient and sink in self.orient:
            rel = rel.apply_domain(self.orient[source]).apply_range(self.orient[sink])
        flat = rel.wrap().flatten()
        coeff = farkas_coefficients(flat)
        # the cost (bounding) is only needed for meaningful parameter values: p >= 0, as in Pluto
        nonneg = isl.Set.universe(flat.get_space())
        for k in range(flat.dim(isl.dim_type.param)):
            nonneg = nonneg.lower_bound_val(isl.dim_type.param, k, isl.Val.int_from_si(flat.get_ctx(), 0))
        coeff_bnd = farkas_coefficients(flat.intersect(nonneg))
        np_ = flat.dim(isl.dim_type.param)
        # the parameters of ``flat`` are in pspace order; ``self.params`` follows scop.parameters
        pnames = [flat.get_dim_name(isl.dim_type.param, k) for k in range(np_)]
        cs, ct = self.coef[source], self.coef[sink]
        ss, st_ = self.shift[source], self.shift[sink]
        n_x, n_y = len(cs), len(ct)

        # validity: phi_T(y) - phi_S(x) >= 0
        val_cst = f"{st_} - {ss}" if source != sink else "0"
        val = [val_cst] + ["0"] * np_ + [f"-{c}" for c in cs] + list(ct)
        # bounding: u.p + w - (phi_T(y) - phi_S(x)) >= 0
        ui = {p: f"u{self.params.index(p)}" if p in self.params else "0" for p in pnames}
        bnd_cst = f"w - {st_} + {ss}" if source != sink else "w"
        bnd = [bnd_cst] + [ui[p] for p in pnames] + list(cs) + [f"-{c}" for c in ct]
        assert len(val) == 1 + np_ + n_x + n_y
        out = self.universe
        for exprs, cset in ((val, coeff), (bnd, coeff_bnd)):
            m = isl.Map(f"{{ {self.tuple} -> [{', '.join(exprs)}] }}")
            out = out.intersect(cset.apply(m.reverse()).reset_tuple_id())
        out = out.coalesce()
        self._farkas_cache[key] = (dep_rel, out)
        return out

    def independence(self, stmt: str, rows: list[tuple[int, ...]], exact: bool) -> isl.Set | None:
        """Constraints making statement ``stmt``'s next row independent of ``rows`` (None if full rank)."""
        depth = len(self.coef[stmt])
        cs = self.coef[stmt]
        if depth == 0:
            return None
        H = sympy.Matrix(rows) if rows else sympy.zeros(0, depth)
        if H.rows and H.rank() >= depth:
            return None
        basis = H.nullspace() if H.rows else [sympy.eye(depth)[:, k] for k in range(depth)]
        vecs = []
        for b in basis:
            den = 1
            for x in b:
                den = int(sympy.ilcm(den, int(sympy.fraction(x)[1])))
            v = [int(x * den) for x in b]
            g = 0
            for x in v:
                g = math.gcd(g, abs(x))
            v = [x // (g or 1) for x in v]
            if sum(v) < 0:
                v = [-x for x in v]
            vecs.append(v)

        def dot(v):
            return "(" + (" + ".join(f"{x} * {c}" for x, c in zip(v, cs) if x) or "0") + ")"
        if not exact:
            cons = [f"{dot(v)} >= 0" for v in vecs] + [f"{' + '.join(dot(v) for v in vecs)} >= 1"]
            return isl.Set(f"{{ {self.tuple} : {' and '.join(cons)} }}")
        pieces = " or ".join(f"({dot(v)} >= 1 or {dot(v)} <= -1)" for v in vecs)
        return isl.Set(f"{{ {self.tuple} : {pieces} }}")


def _components(nodes: list[str], edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of the graph (Tarjan), each in textual order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    comps: list[list[str]] = []
    succ = {n: [b for a, b in sorted(edges) if a == n] for n in nodes}

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            k = stack.index(v)
            comps.append(sorted(stack[k:], key=nodes.index))
            del stack[k:]

    for n in nodes:
        if n not in index:
            visit(n)
    return comps


def _sccs(nodes: list[str], edges: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components in a topological order of the component graph
    (:class:`graphlib.TopologicalSorter`); among the components ready at a time, the one whose first
    statement comes first in the text goes first."""
    comps = _components(nodes, edges)
    comp_of = {n: i for i, c in enumerate(comps) for n in c}
    preds: dict[int, set[int]] = {i: set() for i in range(len(comps))}
    for a, b in edges:
        if comp_of[a] != comp_of[b]:
            preds[comp_of[b]].add(comp_of[a])
    sorter = TopologicalSorter(preds)
    sorter.prepare()
    ready: list[int] = []
    order: list[int] = []
    while sorter.is_active():
        ready.extend(sorter.get_ready())
        ready.sort(key=lambda i: nodes.index(comps[i][0]))
        order.append(ready.pop(0))
        sorter.done(order[-1])
    return [comps[i] for i in order]


def _row_text(scop: Scop, stmt: str, row: Row, orient: dict[str, isl.Map]) -> str:
    st = scop.statement(stmt)
    return aff_text(stmt_affs(_row_map(scop, stmt, [row], orient))[0], st)


def orientation(scop: Scop) -> dict[str, isl.Map]:
    """Per statement ``S[x] -> S[y]``: ``y`` = the loop dimensions of the source order (``-i`` for a loop
    that runs downwards). The search looks for hyperplanes ``c . y + c0`` with ``c >= 0`` in these
    coordinates, in which every dependence of the source order is lexicographically positive."""
    out: dict[str, isl.Map] = {}
    try:
        o = original(scop, ())
    except (ScheduleError, isl.Error):  # no usable source order: the search keeps the iterators as they are
        return out
    pspace = scop.context.get_space()
    for st in scop.statements:
        loops = [a for a in o.affs[st.name] if not a.is_cst()]
        if len(loops) != st.depth or st.depth == 0:
            continue
        m = map_from_affs(st, pspace, loops).set_tuple_name(isl.dim_type.out, st.name)
        if not m.is_injective():
            continue
        out[st.name] = m
    return out


def _row_map(scop: Scop, stmt: str, rows: list[Row], orient: dict[str, isl.Map] | None = None) -> isl.Map:
    """``{ S[x] -> [c_r . x + c_r0 for each row r] }``, built with isl's API (so parameters and iterators
    named like isl's keywords, ``max`` or ``floord``, need no quoting), then in the orientation's
    coordinates."""
    st = scop.statement(stmt)
    pspace = scop.context.get_space()
    affs = []
    for r in rows:
        aff = const_aff(st, pspace, r.shifts.get(stmt, 0))
        for k, c in enumerate(r.coefficients[stmt]):
            if c:
                aff = aff.add(iter_aff(st, pspace, k).scale_val(isl.Val.int_from_si(pspace.get_ctx(), c)))
        affs.append(aff)
    m = map_from_affs(st, pspace, affs)
    if orient and stmt in orient:
        m = orient[stmt].apply_range(m.align_params(orient[stmt].get_space()))
    return m


def _equal_rows(scop: Scop, source: str, sink: str, rows: list[Row],
                orient: dict[str, isl.Map] | None = None) -> isl.Map:
    ms, mt = _row_map(scop, source, rows, orient), _row_map(scop, sink, rows, orient)
    return ms.apply_range(mt.reverse())


def pluto_schedule(scop: Scop, deps: DependenceGraph | Iterable[Dep] | None = None, *, max_rows: int | None = None,
                   fallback: bool = True) -> PlutoResult:
    """Run the Pluto-style search on ``scop`` (see the module docstring) and explain its choices.

    The result is checked exactly. When the search fails, or ends with statements that share time
    vectors while depending on each other both ways (a case this simplified search does not resolve),
    ``fallback`` replaces the answer by isl's scheduler and says so in the explanation."""
    with bounded("the Pluto-style search (auto)", hint=_TOO_COMPLEX_HINT):
        return _pluto(scop, deps, max_rows, fallback)


#: what to do when the search passes its bound
_TOO_COMPLEX_HINT = ("try the isl step (isl's scheduler), a recipe (wavefront; tile(...)) or a schedule written by "
                     "hand; or raise the bound: POLYLAB_MAX_OPERATIONS, POLYLAB_MAX_SECONDS (0 = none)")


#: seconds the search itself may take before ``auto`` falls back to isl's scheduler (the Farkas step of a
#: deep nest with a coupled subscript, ``a[i0 + i1 + i2 + i3 + i4]``, takes isl minutes; issue 28, item 7)
SEARCH_SECONDS = 5.0


def _pluto(scop: Scop, deps: DependenceGraph | Iterable[Dep] | None, max_rows: int | None,
           fallback: bool) -> PlutoResult:
    dlist = list(dependences(scop, deps))
    try:
        with bounded("the Pluto-style search (auto)", hint=_TOO_COMPLEX_HINT,
                     seconds=SEARCH_SECONDS if fallback else None):
            res = _Search(scop, dlist, max_rows).run()
        if is_legal(res.schedule):
            return res
        why = "its rows leave statements that depend on each other both ways at equal times"
    except TooComplexError as err:
        if not fallback or exhausted():  # the budget itself is used up: nothing can answer in it
            raise
        why = err.message
    except ScheduleError as err:
        if not fallback:
            raise
        why = err.message
    if not fallback:
        raise ScheduleError("the Pluto-style search produced no legal schedule: " + why,
                            hint="use the isl step")
    try:
        s = isl_schedule(scop, dlist)
        instead = "isl's scheduler"
    except ScheduleError:
        s = mark_parallel(original(scop, dlist))
        instead = "the source order"
    expl = (f"the Pluto-style search failed ({why}); using {instead} instead",
            f"result: {s.text()}")
    s = replace(s, steps=("auto",), notes=expl)
    return PlutoResult(s, (), expl)


class _Search:
    """One run of the search: the rows found so far, per statement its independent rows, the dependences
    not yet carried by a closed band, and the explanation of every choice."""

    def __init__(self, scop: Scop, dlist: list[Dep], max_rows: int | None) -> None:
        self.scop = scop
        self.dlist = dlist
        self.orient = orientation(scop)
        self.prob = _Problem(scop, self.orient)
        self.names = [s.name for s in scop.statements]
        self.depth = {s.name: s.depth for s in scop.statements}
        self.rows: list[Row] = []
        self.found: dict[str, list[tuple[int, ...]]] = {n: [] for n in self.names}
        self.expl: list[str] = [
            "Pluto-style search: one hyperplane phi_S(x) = c_S . x + c_S0 per statement and row,",
            "  validity phi_T(y) - phi_S(x) >= 0 and bounding u.p + w >= phi_T(y) - phi_S(x) on every",
            "  dependence not carried by an earlier band (Farkas lemma, isl coefficients),",
            "  cost: lexmin (u, w, coefficients innermost first, shifts).",
        ]
        #: (dependence, its pairs not yet ordered by a closed band)
        self.remaining: list[tuple[Dep, isl.Map]] = [(d, d.relation) for d in dlist
                                                      if not d.relation.is_empty()]
        self.band = 0
        self.band_rows = 0
        self.limit = max_rows or (sum(self.depth.values()) + 2 * len(self.names) + 4)

    def run(self) -> PlutoResult:
        while not all(self.full(n) for n in self.names) and len(self.rows) < self.limit:
            tick()
            sol = self.solve()
            if sol is not None:
                self.add_hyperplane(sol)
            elif self.band_rows:
                self.close_band()
            else:
                self.distribute()
        if len(self.names) > 1 and self.shared_times():
            self.order_equal_times()
        return self.result()

    def full(self, n: str) -> bool:
        """Statement ``n`` has as many linearly independent rows as loops."""
        return len(self.found[n]) >= self.depth[n] and (
            self.depth[n] == 0 or sympy.Matrix(self.found[n]).rank() >= self.depth[n])

    def solve(self) -> isl.Point | None:
        """The next hyperplane: the lexmin of the Farkas constraints of every remaining dependence and the
        independence constraints (the convex form first, then the exact disjunction when it is small)."""
        base = self.prob.universe
        for d, rel in self.remaining:
            tick()
            base = base.intersect(self.prob.farkas(rel, d.source, d.sink))
        for exact in (False, True):
            cons = base
            pieces = 1
            for n in self.names:
                ind = self.prob.independence(n, self.found[n], exact)
                if ind is not None:
                    cons = cons.intersect(ind)
                    pieces *= 2 * (self.depth[n] - len(self.found[n]))
            if exact and pieces > MAX_EXACT_PIECES:
                break
            if not cons.is_empty():
                sol = lexmin_point(cons)
                return None if sol.is_void() else sol
        return None

    def add_hyperplane(self, sol: isl.Point) -> None:
        prob, names = self.prob, self.names
        val = dict(zip(prob.names, point_coordinates(sol)))
        coeffs = {n: tuple(val[c] for c in prob.coef[n]) for n in names}
        shifts = {n: val[prob.shift[n]] for n in names}
        u = tuple(val[f"u{k}"] for k in range(len(prob.params)))
        bound = " + ".join([(p if c == 1 else f"{c}{p}") for c, p in zip(u, prob.params) if c]
                           + ([str(val["w"])] if val["w"] or not any(u) else []))
        why = ("every remaining dependence has distance 0: a parallel loop" if not any(u) and val["w"] == 0
               else f"dependence distances bounded by {bound}")
        row = Row(self.band, "hyperplane", coeffs, shifts, u, val["w"], why)
        self.rows.append(row)
        self.band_rows += 1
        for n in names:
            if not self.full(n) and any(coeffs[n]):
                self.found[n].append(coeffs[n])
        self.expl.append(f"row {len(self.rows) - 1} (band {self.band}): " + "; ".join(
            f"{n}: {_row_text(self.scop, n, row, self.orient)}" for n in names) + f"   [{why}]")

    def close_band(self) -> None:
        """Drop the dependences the current band carries (a non-zero distance on one of its rows)."""
        band_part = [r for r in self.rows if r.band == self.band]
        new = []
        for d, rel in self.remaining:
            if band_part:
                rel = rel.intersect(_equal_rows(self.scop, d.source, d.sink, band_part, self.orient))
            if not rel.is_empty():
                new.append((d, rel))
        self.expl.append(f"band {self.band} closed ({self.band_rows} row{'s' if self.band_rows != 1 else ''}); "
                         f"{len(self.remaining) - len(new)} of {len(self.remaining)} remaining dependences "
                         f"are carried by it")
        self.remaining = new
        self.band += 1
        self.band_rows = 0

    def distribute(self) -> None:
        """No hyperplane even for a fresh band: a scalar dimension orders the strongly connected
        components of the remaining dependence graph topologically."""
        comps = _sccs(self.names, {(d.source, d.sink) for d, _ in self.remaining})
        pos = {n: i for i, c in enumerate(comps) for n in c}
        if len(comps) <= 1 or all(pos[d.source] == pos[d.sink] for d, _ in self.remaining):
            raise ScheduleError("the Pluto-style search found no legal hyperplane",
                                hint="try the isl step (isl's scheduler) or write the schedule by hand")
        row = Row(self.band, "scalar", {n: (0,) * self.depth[n] for n in self.names}, pos,
                  why="distribution of " + " | ".join("{" + ", ".join(c) + "}" for c in comps))
        self.rows.append(row)
        self.expl.append(f"row {len(self.rows) - 1}: no common hyperplane; {row.why} (scalar dimension)")
        self.band_rows = 1
        self.close_band()

    def shared_times(self) -> bool:
        """Do two statements share a time vector under the rows found (always, with no row)?"""
        if not self.rows:
            return True
        pspace = self.scop.context.get_space()
        imgs = {n: _row_map(self.scop, n, self.rows, self.orient).intersect_domain(
            self.scop.statement(n).domain.align_params(pspace)).range() for n in self.names}
        return any(not imgs[a].intersect(imgs[b]).is_empty()
                   for k, a in enumerate(self.names) for b in self.names[k + 1:])

    def order_equal_times(self) -> None:
        """A last scalar dimension orders the statements that share time vectors."""
        rest = self.remaining
        if self.rows:
            rest = [(d, rel) for d, rel in self.remaining
                    if not rel.intersect(_equal_rows(self.scop, d.source, d.sink, self.rows,
                                                     self.orient)).is_empty()]
        comps = _sccs(self.names, {(d.source, d.sink) for d, _ in rest})
        pos = {n: i for i, c in enumerate(comps) for n in c}
        self.rows.append(Row(self.band + 1, "scalar", {n: (0,) * self.depth[n] for n in self.names}, pos,
                             why="order of statements that share a time vector"))
        self.expl.append(f"row {len(self.rows) - 1}: scalar dimension ordering statements at equal times: "
                         + ", ".join(f"{n}={pos[n]}" for n in self.names))

    def result(self) -> PlutoResult:
        maps = {n: _row_map(self.scop, n, self.rows, self.orient) for n in self.names}
        sched = mark_parallel(Schedule.from_maps(self.scop, maps, steps=("auto",), deps=self.dlist))
        self.expl.append(f"result: {sched.text()}")
        self.expl.append("bands (exact): " + ", ".join(
            f"{list(b.dims)}{' permutable' if b.permutable else ''}" for b in sched.bands)
            + f"; parallel dimensions: {list(sched.parallel_dims) or 'none'}")
        sched = replace(sched, notes=tuple(self.expl))
        return PlutoResult(sched, tuple(self.rows), tuple(self.expl))


def auto(s: Schedule) -> Schedule:
    """The ``auto`` step: replace the schedule by the Pluto-style search's (see the module docstring).

    ``auto`` stays the plain scheduler the labs teach (the Farkas-lemma search, its bands and their
    skewing): it fuses whatever it can, which may leave a dependence-carrying loop outside every parallel
    one. For speed, use ``optimize`` (:mod:`polylab.schedule.optimize`), which keeps every parallel loop
    of the source order and chooses strips, strip-mining and distribution by a model.

    Affine map: per statement ``t' = (phi^1_S(x), ..., phi^n_S(x))``, rows in permutable bands. Legal by
    construction (every dependence gets a non-negative distance in every row of its band and a positive
    one in some row), and re-checked exactly; parallel dimensions are marked.
    """
    res = pluto_schedule(s.scop, s.deps)
    return replace(res.schedule, steps=s.steps + ("auto",))
