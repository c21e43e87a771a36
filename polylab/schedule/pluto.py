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

import islpy as isl
import sympy

from polylab.errors import ScheduleError
from polylab.model import Scop
from polylab.schedule.core import Schedule, aff_text, farkas_coefficients, lexmin_point, map_from_affs, stmt_affs
from polylab.schedule.deps import Dep, dependences
from polylab.schedule.transform import mark_parallel

COEFF_MAX = 8   #: bound on each hyperplane coefficient (keeps the integer programs small, as in Pluto)
SHIFT_MAX = 16  #: bound on each statement shift


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
class PlutoResult:
    """The scheduler's answer: the schedule and the rows in the order found, with explanations."""

    schedule: Schedule
    rows: tuple[Row, ...]
    explanation: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        return "\n".join(self.explanation)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        from polylab.schedule.display import explanation_html

        return explanation_html("Pluto-style scheduler", self.explanation, self.schedule)


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


def _sccs(nodes: list[str], edges: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components in topological order (ties: textual order)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []
    counter = [0]
    succ = {n: [b for a, b in sorted(edges) if a == n] for n in nodes}

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp, key=nodes.index))

    for n in nodes:
        if n not in index:
            visit(n)
    comps.reverse()  # Tarjan yields reverse topological order
    # stable topological order preferring textual order
    comp_of = {n: i for i, c in enumerate(comps) for n in c}
    cedges = {(comp_of[a], comp_of[b]) for a, b in edges if comp_of[a] != comp_of[b]}
    indeg = {i: 0 for i in range(len(comps))}
    for _, b in cedges:
        indeg[b] += 1
    order: list[int] = []
    ready = sorted((i for i in indeg if indeg[i] == 0), key=lambda i: nodes.index(comps[i][0]))
    while ready:
        i = ready.pop(0)
        order.append(i)
        for a, b in sorted(cedges):
            if a == i:
                indeg[b] -= 1
                if indeg[b] == 0:
                    ready.append(b)
        ready.sort(key=lambda k: nodes.index(comps[k][0]))
    return [comps[i] for i in order]


def _row_text(scop: Scop, stmt: str, row: Row, orient: dict[str, isl.Map]) -> str:
    st = scop.statement(stmt)
    return aff_text(stmt_affs(_row_map(scop, stmt, [row], orient))[0], st)


def orientation(scop: Scop) -> dict[str, isl.Map]:
    """Per statement ``S[x] -> S[y]``: ``y`` = the loop dimensions of the source order (``-i`` for a loop
    that runs downwards). The search looks for hyperplanes ``c . y + c0`` with ``c >= 0`` in these
    coordinates, in which every dependence of the source order is lexicographically positive."""
    from polylab.schedule.core import original

    out: dict[str, isl.Map] = {}
    try:
        o = original(scop, ())
    except Exception:  # noqa: BLE001 - identity orientation
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
    st = scop.statement(stmt)
    exprs = []
    for r in rows:
        terms = [f"{c} * {x}" for c, x in zip(r.coefficients[stmt], st.iterators) if c]
        terms.append(str(r.shifts.get(stmt, 0)))
        exprs.append(" + ".join(terms))
    params = f"[{', '.join(scop.parameters)}] -> " if scop.parameters else ""
    m = isl.Map(f"{params}{{ {stmt}[{', '.join(st.iterators)}] -> [{', '.join(exprs)}] }}")
    if orient and stmt in orient:
        m = orient[stmt].apply_range(m.align_params(orient[stmt].get_space()))
    return m


def _equal_rows(scop: Scop, source: str, sink: str, rows: list[Row],
                orient: dict[str, isl.Map] | None = None) -> isl.Map:
    ms, mt = _row_map(scop, source, rows, orient), _row_map(scop, sink, rows, orient)
    return ms.apply_range(mt.reverse())


def pluto_schedule(scop: Scop, deps=None, *, max_rows: int | None = None, fallback: bool = True
                   ) -> PlutoResult:
    """Run the Pluto-style search on ``scop`` (see the module docstring) and explain its choices.

    The result is checked exactly. When the search fails, or ends with statements that share time
    vectors while depending on each other both ways (a case this simplified search does not resolve),
    ``fallback`` replaces the answer by isl's scheduler and says so in the explanation."""
    from polylab.schedule.legality import is_legal

    dlist = list(dependences(scop, deps))
    try:
        res = _search(scop, dlist, max_rows)
        if is_legal(res.schedule):
            return res
        why = "its rows leave statements that depend on each other both ways at equal times"
    except ScheduleError as err:
        if not fallback:
            raise
        why = err.message
    if not fallback:
        raise ScheduleError("the Pluto-style search produced no legal schedule: " + why,
                            hint="use the isl step")
    from polylab.schedule.core import original
    from polylab.schedule.isl_scheduler import isl_schedule

    try:
        s = isl_schedule(scop, dlist)
        instead = "isl's scheduler"
    except ScheduleError:
        s = mark_parallel(original(scop, dlist))
        instead = "the source order"
    expl = (f"the Pluto-style search failed ({why}); using {instead} instead",
            f"result: {s.text()}")
    s = replace(s, steps=("auto",), notes=expl, details={"fallback": "isl"})
    return PlutoResult(s, (), expl)


def _search(scop: Scop, dlist: list[Dep], max_rows: int | None) -> PlutoResult:
    orient = orientation(scop)
    prob = _Problem(scop, orient)
    names = [s.name for s in scop.statements]
    depth = {s.name: s.depth for s in scop.statements}
    rows: list[Row] = []
    found: dict[str, list[tuple[int, ...]]] = {n: [] for n in names}
    expl: list[str] = [
        "Pluto-style search: one hyperplane phi_S(x) = c_S . x + c_S0 per statement and row,",
        "  validity phi_T(y) - phi_S(x) >= 0 and bounding u.p + w >= phi_T(y) - phi_S(x) on every",
        "  dependence not carried by an earlier band (Farkas lemma, isl coefficients),",
        "  cost: lexmin (u, w, coefficients innermost first, shifts).",
    ]
    # remaining dependences: (dep, relation restricted to pairs not yet ordered)
    remaining: list[tuple[Dep, isl.Map]] = [(d, d.relation) for d in dlist if not d.relation.is_empty()]
    band, band_rows = 0, 0
    limit = max_rows or (sum(depth.values()) + 2 * len(names) + 4)

    def full(n: str) -> bool:
        return len(found[n]) >= depth[n] and (
            depth[n] == 0 or sympy.Matrix(found[n]).rank() >= depth[n])

    def close_band() -> None:
        nonlocal remaining, band, band_rows
        band_part = [r for r in rows if r.band == band]
        new = []
        for d, rel in remaining:
            r2 = rel.intersect(_equal_rows(scop, d.source, d.sink, band_part, orient)) if band_part else rel
            if not r2.is_empty():
                new.append((d, r2))
        expl.append(f"band {band} closed ({band_rows} row{'s' if band_rows != 1 else ''}); "
                    f"{len(remaining) - len(new)} of {len(remaining)} remaining dependences are carried by it")
        remaining = new
        band += 1
        band_rows = 0

    while not all(full(n) for n in names) and len(rows) < limit:
        base = prob.universe
        for d, rel in remaining:
            base = base.intersect(prob.farkas(rel, d.source, d.sink))
        sol = None
        for exact in (False, True):
            cons = base
            pieces = 1
            for n in names:
                ind = prob.independence(n, found[n], exact)
                if ind is not None:
                    cons = cons.intersect(ind)
                    pieces *= 2 * (depth[n] - len(found[n]))
            if exact and pieces > 32:
                break
            if not cons.is_empty():
                sol = lexmin_point(cons)
                break
        if sol is not None and not sol.is_void():
            val = {nm: int(sol.get_coordinate_val(isl.dim_type.set, k).to_python())
                   for k, nm in enumerate(prob.names)}
            coeffs = {n: tuple(val[c] for c in prob.coef[n]) for n in names}
            shifts = {n: val[prob.shift[n]] for n in names}
            u = tuple(val[f"u{k}"] for k in range(len(prob.params)))
            row = Row(band, "hyperplane", coeffs, shifts, u, val["w"])
            bound = " + ".join([(p if c == 1 else f"{c}{p}") for c, p in zip(u, prob.params) if c]
                               + ([str(val["w"])] if val["w"] or not any(u) else []))
            why = ("every remaining dependence has distance 0: a parallel loop" if not any(u) and val["w"] == 0
                   else f"dependence distances bounded by {bound}")
            row = replace(row, why=why)
            rows.append(row)
            band_rows += 1
            for n in names:
                if not full(n) and any(coeffs[n]):
                    found[n].append(coeffs[n])
            expl.append(f"row {len(rows) - 1} (band {band}): " + "; ".join(
                f"{n}: {_row_text(scop, n, row, orient)}" for n in names) + f"   [{why}]")
            continue
        if band_rows:
            close_band()
            continue
        # no hyperplane even for a fresh band: distribute the strongly connected components
        edges = {(d.source, d.sink) for d, _ in remaining}
        comps = _sccs(names, edges)
        if len(comps) <= 1:
            raise ScheduleError("the Pluto-style search found no legal hyperplane",
                                hint="try the isl step (isl's scheduler) or write the schedule by hand")
        if not any(pos_differs for pos_differs in
                   ((next(k for k, c in enumerate(comps) if d.source in c)
                     != next(k for k, c in enumerate(comps) if d.sink in c)) for d, _ in remaining)):
            raise ScheduleError("the Pluto-style search found no legal hyperplane",
                                hint="try the isl step (isl's scheduler) or write the schedule by hand")
        pos = {n: i for i, c in enumerate(comps) for n in c}
        row = Row(band, "scalar", {n: (0,) * depth[n] for n in names}, pos,
                  why="distribution of " + " | ".join("{" + ", ".join(c) + "}" for c in comps))
        rows.append(row)
        expl.append(f"row {len(rows) - 1}: no common hyperplane; {row.why} (scalar dimension)")
        band_rows = 1
        close_band()
    def shared_times() -> bool:
        if not rows:
            return True
        imgs = {n: _row_map(scop, n, rows, orient).intersect_domain(
            scop.statement(n).domain.align_params(scop.context.get_space())).range() for n in names}
        return any(not imgs[a].intersect(imgs[b]).is_empty()
                   for k, a in enumerate(names) for b in names[k + 1:])

    if len(names) > 1 and shared_times():
        band_part = [r for r in rows]
        rest = [(d, rel) for d, rel in remaining
                if not rel.intersect(_equal_rows(scop, d.source, d.sink, band_part, orient)).is_empty()] if rows \
            else remaining
        comps = _sccs(names, {(d.source, d.sink) for d, _ in rest})
        pos = {n: i for i, c in enumerate(comps) for n in c}
        rows.append(Row(band + 1, "scalar", {n: (0,) * depth[n] for n in names}, pos,
                        why="order of statements that share a time vector"))
        expl.append(f"row {len(rows) - 1}: scalar dimension ordering statements at equal times: "
                    + ", ".join(f"{n}={pos[n]}" for n in names))
    maps = {n: _row_map(scop, n, rows, orient) for n in names}
    sched = Schedule.from_maps(scop, maps, steps=("auto",), deps=dlist)
    sched = mark_parallel(sched)
    expl.append(f"result: {sched.text()}")
    expl.append("bands (exact): " + ", ".join(
        f"{list(b.dims)}{' permutable' if b.permutable else ''}" for b in sched.bands)
        + f"; parallel dimensions: {list(sched.parallel_dims) or 'none'}")
    sched = replace(sched, notes=tuple(expl), details={"pluto_rows": tuple(rows)})
    return PlutoResult(sched, tuple(rows), tuple(expl))


def auto(s: Schedule) -> Schedule:
    """The ``auto`` step: replace the schedule by the Pluto-style search's (see the module docstring).

    Affine map: per statement ``t' = (phi^1_S(x), ..., phi^n_S(x))``, rows in permutable bands. Legal by
    construction (every dependence gets a non-negative distance in every row of its band and a positive
    one in some row), and re-checked exactly; parallel dimensions are marked.
    """
    res = pluto_schedule(s.scop, s.deps)
    return replace(res.schedule, steps=s.steps + ("auto",))
