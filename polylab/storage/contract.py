"""Storage contraction: keep only ``m`` planes of an array, ``x[i][j][k] -> xbuf[i % m][j][k]``, with a proof.

For an array ``x``, a schedule ``T`` and a modulo mapping ``s(e)`` (selected dimensions of the element
``e`` taken modulo ``m``, the others unchanged) the contraction is safe when no value is overwritten in
its slot before its last read. With the exact value-based dataflow ``F = { w -> r }`` (``r`` reads the
value that ``w`` writes, for the element ``e = W(w)``), the set of conflicts is

    C = { (w, w', r) : (w -> r) in F,  w' writes e' = W(w') with e' != e and s(e') = s(e),
                       T(w) <=lex T(w'),  and  T(w') <lex T(r)  or  (T(w') = T(r) and w' != r) }

(``w'`` reuses the slot after ``w`` wrote it and before ``r`` reads it; instances at the same time are
unordered, so they count as conflicts; a statement instance reads its operands before it writes, so
``w' = r`` is no conflict). The mapping is proven safe when isl finds ``C`` empty for every parameter
value of the SCoP's context; otherwise a point of ``C`` is the counterexample. Elements live after the
region (``Scop.live_out``, every element when None) are copied back by a copy-out statement
``x[e] = xbuf[s(e)]`` that runs right after the last write of ``e`` (time ``T(w)`` followed by 1, every
other instance gets 0); the copy-outs are reads of the new schedule, so the proof covers them too.
Reads of ``x`` that see a value from before the region (live-in) are refused: ``xbuf`` starts empty.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, replace
from typing import Sequence

import islpy as isl

from polylab.analysis import Dataflow, dataflow
from polylab.errors import ModelError, StorageError
from polylab.model.budget import budgeted
from polylab.model.expr import ArrayRef, Assignment, Binary, Const, Expr, assignment_to_c, to_c, transform, walk
from polylab.model.islutil import (equal_until, fix_parameters, maps_of, parameter_values, point_coordinates,
                                   sets_of)
from polylab.model.scop import Access, Array, Scop, Statement
from polylab.render import Displayable, esc, text_table
from polylab.schedule import Schedule, require_legal, smallest_example
from polylab.storage.islutil import (after_writers, example_text, extent_text, fresh_statement_names, padded_map,
                                     param_text, restrict_order, schedule_of, schedule_on, schedule_tree,
                                     set_example_text, time_function, writes_map)

EXPLAINED = 3          # refuted moduli explained with a full (w, w', r) conflict; later ones by a pair
EXEMPLIFIED = 8        # refuted moduli with an example pair of live elements; later ones by their difference
UNBOUNDED_SCAN = 16    # moduli scanned against an unbounded Delta when no max_modulus is given
LISTED_DIFFERENCES = 12  # a bounded Delta with at most this many vectors is listed in the report


@dataclass(frozen=True)
class Attempt:
    """One modulo mapping that was tried: proven safe, or refuted by a concrete conflict."""

    moduli: tuple[int, ...]
    safe: bool
    conflict: str = ""
    params: tuple[tuple[str, int], ...] = ()   # the parameter values of the counterexample

    def text_line(self, array: str, dims: Sequence[int]) -> str:
        m = ", ".join(f"dim {d} mod {k}" for d, k in zip(dims, self.moduli))
        if self.safe:
            return f"{m}: safe (the conflict set is empty)"
        return f"{m}: refuted: {self.conflict}"


@dataclass(frozen=True, eq=False, repr=False)
class ContractionReport(Displayable):
    """The modulo mapping chosen by :func:`contract`, the proof, and every mapping that was tried."""

    array: str
    buffer: str
    dims: tuple[int, ...]
    moduli: tuple[int, ...]
    mapping: str
    extents: tuple[str, ...]
    attempts: tuple[Attempt, ...]
    conflict_set: str
    copy_outs: tuple[tuple[str, str], ...]
    seconds: float = 0.0
    live_distances: str = ""                         # Delta (see LiveDistances); "" when m was given
    parallel_kept: tuple[int, ...] = ()              # schedule dimensions still marked parallel
    parallel_dropped: tuple[tuple[int, str], ...] = ()   # (dimension, the dependence that now forbids it)

    @property
    def modulus(self) -> int:
        return self.moduli[0]

    def text(self) -> str:
        lines = [f"contract {self.array}: {self.mapping}   ({self.buffer}"
                 + "".join(f"[{e}]" for e in self.extents) + ")"]
        lines.append("  proof: the conflict set { (w, w', r) : w -> r a flow of the value of e, w' writes "
                     "e' != e into the same slot, T(w) <= T(w') < T(r) } is empty:")
        lines.append(f"    {self.conflict_set}")
        lines.append(text_table(("tried", "verdict"), [
            (", ".join(f"dim {d} mod {k}" for d, k in zip(self.dims, a.moduli)),
             "safe (the conflict set is empty)" if a.safe else f"refuted: {a.conflict}") for a in self.attempts],
            width=110))
        if self.live_distances:
            lines.append(f"  live distances Delta (dimension(s) {', '.join(map(str, self.dims))}): "
                         f"{self.live_distances}")
        if self.copy_outs:
            lines.append(text_table(("copy-out", "domain"), self.copy_outs, width=110))
        lines += self._parallel_lines()
        return "\n".join(lines)

    def _parallel_lines(self) -> list[str]:
        out = []
        if self.parallel_kept:
            out.append(f"  parallel dimension(s) kept (still coincident for the contracted SCoP): "
                       f"{', '.join(map(str, self.parallel_kept))}")
        for d, why in self.parallel_dropped:
            out.append(f"  parallel mark of dimension {d} dropped: {why}")
        return out

    def html(self) -> str:
        tried = "".join(f"<li>{esc(a.text_line(self.array, self.dims))}</li>" for a in self.attempts)
        cps = "".join(f"<li>copy-out <b>{esc(n)}</b>: <code>{esc(d)}</code></li>" for n, d in self.copy_outs)
        cps += "".join(f"<li>{esc(ln.strip())}</li>" for ln in self._parallel_lines())
        return (f"<div class='polylab-contract'><b>contract {esc(self.array)}</b>: "
                f"<code>{esc(self.mapping)}</code> ({esc(self.buffer)}"
                f"{''.join('[' + esc(e) + ']' for e in self.extents)})<br>proof: the conflict set "
                f"<code>{esc(self.conflict_set)}</code> is empty<ul>{tried}{cps}</ul></div>")


class ContractionRefused(StorageError):
    """A contraction that would lose a value still read in the region (``.attempts`` lists the tries)."""

    def __init__(self, message: str, *, attempts: tuple[Attempt, ...] = (), hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.attempts: tuple[Attempt, ...] = attempts


def _element_space(space_params: isl.Space, array: str, rank: int) -> isl.Space:
    """The space ``x[a_0, .., a_{rank-1}]`` of the elements of ``array`` with the parameters of
    ``space_params``."""
    space = isl.Space.set_alloc(space_params.get_ctx(), 0, rank).set_tuple_name(isl.dim_type.set, array)
    for k in range(rank):
        space = space.set_dim_name(isl.dim_type.set, k, f"a{k}")
    return space.align_params(space_params)


def _slot_map(space_params: isl.Space, array: str, rank: int, dims: Sequence[int], moduli: Sequence[int],
              target: str | None = None) -> isl.Map:
    """``{ x[a] -> x[b] : b_d = a_d mod m_d }`` (to ``target`` when given: the storage mapping)."""
    ls = isl.LocalSpace.from_space(_element_space(space_params, array, rank))
    out = None
    for k in range(rank):
        a = isl.PwAff.from_aff(isl.Aff.var_on_domain(ls, isl.dim_type.set, k))
        if k in dims:
            a = a.mod_val(isl.Val.int_from_si(ls.get_ctx(), moduli[list(dims).index(k)]))
        m = isl.Map.from_pw_aff(a)
        out = m if out is None else out.flat_range_product(m)
    assert out is not None
    return out.set_tuple_name(isl.dim_type.out, target or array)


def _same_slot(space_params: isl.Space, array: str, rank: int, dims: Sequence[int],
               moduli: Sequence[int]) -> isl.Map:
    """``{ x[a] -> x[b] : a != b, s(a) = s(b) }``."""
    s = _slot_map(space_params, array, rank, dims, moduli)
    same = s.apply_range(s.reverse())
    ident = isl.Map.identity(isl.Space.map_from_set(same.domain().get_space()))
    return same.subtract(ident)


def _same_other_dims(space_params: isl.Space, array: str, rank: int, dims: Sequence[int]) -> isl.Map:
    """``{ x[a] -> x[b] : a != b, a_o = b_o for every dimension o not contracted }``: the pairs of
    elements that *some* modulo mapping of ``dims`` could put into one slot."""
    space = _element_space(space_params, array, rank)
    rel = isl.Map.universe(isl.Space.map_from_set(space))
    for k in range(rank):
        if k not in dims:
            rel = rel.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
    ident = isl.Map.identity(isl.Space.map_from_set(rel.domain().get_space()))
    return rel.subtract(ident)


def _conflicts(W: isl.UnionMap, F: isl.UnionMap, T: isl.UnionMap, same: isl.Map,
               context: isl.Set) -> isl.UnionMap:
    """``{ w -> [w' -> r] }`` of the module text."""
    f = time_function(T)
    C1 = W.apply_range(isl.UnionMap.from_map(same)).apply_range(W.reverse()).intersect_params(context)
    C1 = restrict_order(C1, f, "<=")
    triples = C1.range_product(F.intersect_params(context))
    pairs = triples.range().unwrap()          # { w' -> r } that occur in some triple
    bad = restrict_order(pairs, f, "<").union(
        restrict_order(pairs, f, "=").subtract(pairs.domain().identity()))
    return triples.intersect_range(bad.wrap()).intersect_params(context)


def _explain(conf: isl.UnionMap, W: isl.UnionMap, array: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    for m in maps_of(conf):
        if m.is_empty():
            continue
        p = smallest_example(m.wrap())
        sp = m.get_space()
        n_w = sp.dim(isl.dim_type.in_)
        inner = sp.range().unwrap()
        n_w2, n_r = inner.dim(isl.dim_type.in_), inner.dim(isl.dim_type.out)
        w = point_coordinates(p, 0, n_w)
        w2 = point_coordinates(p, n_w, n_w2)
        r = point_coordinates(p, n_w + n_w2, n_r)
        wn, w2n = m.get_tuple_name(isl.dim_type.in_), inner.get_tuple_name(isl.dim_type.in_)
        rn = inner.get_tuple_name(isl.dim_type.out)

        def elem(name: str, vals: tuple[int, ...]) -> str:
            pts = [q for q in maps_of(W) if q.get_tuple_name(isl.dim_type.in_) == name]
            if not pts:
                return "?"
            q = fix_parameters(pts[0], parameter_values(p))
            for k, v in enumerate(vals):
                q = q.fix_val(isl.dim_type.in_, k, isl.Val.int_from_si(q.get_ctx(), v))
            e = q.range()
            if e.is_empty():
                return "?"
            return f"{array}[{']['.join(map(str, point_coordinates(e.sample_point())))}]"

        e, e2 = elem(wn, w), elem(w2n, w2)
        pt = param_text(p)
        params = tuple(parameter_values(p).items())
        return (f"{w2n}[{', '.join(map(str, w2))}] overwrites {e} (written by {wn}[{', '.join(map(str, w))}]) "
                f"with {e2} before {rn}[{', '.join(map(str, r))}] reads it" + (f" ({pt})" if pt else ""),
                params)
    return "(no example)", ()


@dataclass(frozen=True)
class LiveDistances:
    """``Delta``: the differences ``e'_d - e_d`` (over the contracted dimensions ``d``) between distinct
    elements ``e``, ``e'`` that agree on every other dimension and are *simultaneously live*: ``e'`` is
    written (by ``w'``) while the value of ``e`` written by ``w`` is still to be read by ``r``, i.e.
    ``(w, w', r)`` is in the conflict set of the module text without the condition ``s(e) = s(e')``.

    A modulo mapping ``m`` is safe iff no vector of ``Delta`` has every component ``delta_k`` a multiple
    of ``m_k`` (``Delta`` never holds 0). ``pairs`` is ``{ x[e] -> x[e'] }`` itself (for examples);
    ``vectors`` the set of differences over all parameter values of the context (parameters projected
    out, which is exact: a mapping must be safe for every parameter value); ``points`` its elements when
    it is bounded, else None.
    """

    pairs: isl.UnionMap
    vectors: isl.Set
    points: frozenset[tuple[int, ...]] | None

    @property
    def bounded(self) -> bool:
        return self.points is not None

    def bound(self) -> tuple[int, ...]:
        """``max |delta_k|`` per contracted dimension (0 when Delta is empty)."""
        n = self.vectors.dim(isl.dim_type.set)
        pts = self.points or frozenset()
        return tuple(max((abs(p[k]) for p in pts), default=0) for k in range(n))

    def witness(self, moduli: Sequence[int]) -> tuple[int, ...] | None:
        """A difference of Delta that is a multiple of ``moduli`` (then the mapping is refuted), or None."""
        if self.points is not None:
            hits = [p for p in self.points if all(v % m == 0 for v, m in zip(p, moduli))]
            return min(hits, key=lambda p: (sum(abs(v) for v in p), tuple(-v for v in p))) if hits else None
        n = self.vectors.dim(isl.dim_type.set)
        v = isl.make_zero_and_vars([f"d{k}" for k in range(n)], ctx=self.vectors.get_ctx())
        mult = isl.Set.universe(v[0].get_domain_space())     # { d : d_k = m_k q_k for some integers q }
        for k, m in enumerate(moduli):
            mult = mult.intersect(v[f"d{k}"].mod_val(isl.Val.int_from_si(mult.get_ctx(), m)).eq_set(v[0]))
        hit = self.vectors.intersect(mult.align_params(self.vectors.get_space()))
        if hit.is_empty():
            return None
        return point_coordinates(smallest_example(hit))

    def text(self) -> str:
        if self.points is not None:
            pts = sorted(self.points)
            bound = f"|delta| <= {', '.join(map(str, self.bound()))}"
            if len(pts) <= LISTED_DIFFERENCES:
                return "{ " + ", ".join("(" + ", ".join(map(str, p)) + ")" if len(p) > 1 else str(p[0])
                                        for p in pts) + f" }} ({bound})"
            return f"{len(pts)} differences, {bound}"
        return str(self.vectors.coalesce())


def _live_distances(W: isl.UnionMap, F: isl.UnionMap, T: isl.UnionMap, array: str, rank: int,
                    dims: Sequence[int], context: isl.Set) -> LiveDistances:
    """:class:`LiveDistances` of ``array`` under ``T`` (exact; one conflict computation)."""
    rel = _same_other_dims(context.get_space(), array, rank, dims)
    conf = _conflicts(W, F, T, rel, context)               # { w -> [w' -> r] }
    ww = conf.uncurry().domain().unwrap()                    # { w -> w' }
    pairs = ww.apply_domain(W).apply_range(W).intersect(isl.UnionMap.from_map(rel)).coalesce()
    n = len(dims)
    space = isl.Space.set_alloc(context.get_ctx(), 0, n)
    vec = isl.Set.empty(space)
    for m in maps_of(pairs):
        d = m.deltas()
        keep = set(dims)
        for k in reversed(range(rank)):        # keep the contracted dimensions only (others are 0)
            if k not in keep:
                d = d.project_out(isl.dim_type.set, k, 1)
        npar = d.dim(isl.dim_type.param)
        d = d.project_out(isl.dim_type.param, 0, npar).reset_tuple_id()
        vec = vec.union(d)
    vec = vec.coalesce()
    points: frozenset[tuple[int, ...]] | None = None
    if vec.is_bounded():
        acc: list[tuple[int, ...]] = []
        vec.foreach_point(lambda p: acc.append(point_coordinates(p)))
        points = frozenset(acc)
    return LiveDistances(pairs, vec, points)


def _spans(scop: Scop, W: isl.UnionMap, array: str, dims: Sequence[int]) -> list[int | None]:
    """Per contracted dimension, how many consecutive indices the region uses at most (over every
    parameter value of the context), or None when that is unbounded."""
    used = W.range().union(scop.reads.range()).intersect_params(scop.context)
    elems = [q for q in sets_of(used) if q.get_tuple_name() == array]
    out: list[int | None] = []
    for d in dims:
        if not elems:
            out.append(None)
            continue
        e = elems[0]
        n = e.dim(isl.dim_type.set)
        # { [w] : w = b_d - a_d for a, b used } with the parameters projected out
        pair = isl.Map.from_domain_and_range(e, e).deltas()
        pair = pair.project_out(isl.dim_type.set, d + 1, n - d - 1).project_out(isl.dim_type.set, 0, d)
        pair = pair.project_out(isl.dim_type.param, 0, pair.dim(isl.dim_type.param))
        if pair.is_empty() or not pair.is_bounded():
            out.append(None)
            continue
        out.append(point_coordinates(pair.lexmax().sample_point())[0] + 1)
    return out


def _pair_example(live: LiveDistances, dims: Sequence[int], delta: Sequence[int] | None,
                  ) -> tuple[str, tuple[tuple[str, int], ...]]:
    """Two simultaneously live elements (whose difference is ``delta`` when given), at small parameters."""
    for m in maps_of(live.pairs):
        rel = m
        if delta is not None:
            for d, v in zip(dims, delta):
                # e'_d - e_d = v
                c = isl.Constraint.equality_alloc(isl.LocalSpace.from_space(rel.get_space()))
                c = c.set_coefficient_val(isl.dim_type.out, d, isl.Val.int_from_si(rel.get_ctx(), 1))
                c = c.set_coefficient_val(isl.dim_type.in_, d, isl.Val.int_from_si(rel.get_ctx(), -1))
                c = c.set_constant_val(isl.Val.int_from_si(rel.get_ctx(), -int(v)))
                rel = rel.add_constraint(c)
        if rel.is_empty():
            continue
        p = smallest_example(rel.wrap())
        name = rel.get_tuple_name(isl.dim_type.in_)
        n_in = rel.dim(isl.dim_type.in_)
        e, e2 = point_coordinates(p, 0, n_in), point_coordinates(p, n_in, n_in)
        params = tuple(parameter_values(p).items())
        pt = param_text(p)
        text = (f"{name}[{']['.join(map(str, e))}] and {name}[{']['.join(map(str, e2))}] are live at the "
                f"same time" + (f" ({pt})" if pt else ""))
        return text, params
    return "(no example)", ()


def _extent(scop: Scop, elements: isl.Set, d: int, declared: str) -> str:
    """A C expression for the extent of dimension ``d`` of the accessed elements (max index + 1), or the
    declared one where isl cannot write it as one piece."""
    return extent_text(scop, elements, d) or declared


@dataclass(frozen=True, eq=False)
class _Setup:
    """What the search and the rewrite of :func:`contract` share (the maps of the module text)."""

    scop: Scop
    array: str
    arr: Array
    dims: tuple[int, ...]
    buf: str
    T: isl.UnionMap          # the schedule, every piece of one width, on the domains
    W: isl.UnionMap          # the writes of the array
    F: isl.UnionMap          # the flow of the array's values, the copy-outs' reads included
    T_new: isl.UnionMap      # the schedule with the copy-outs (one more, innermost dimension)
    copies: tuple[tuple[Statement, str, isl.Set], ...]   # (writer, copy-out name, its domain)


@budgeted("the contraction (contract)")
def contract(scop: Scop, schedule: Schedule | None = None, array: str = "", *,
             dims: Sequence[int] | None = None, modulus: int | Sequence[int] | None = None,
             max_modulus: int | None = None, buffer: str | None = None, explain: bool = True
             ) -> tuple[Scop, Schedule, ContractionReport]:
    """The smallest modulo mapping of ``array`` under ``schedule`` that loses no value (module text).

    ``schedule``: a :class:`~polylab.schedule.Schedule` of ``scop`` (None: its source order).
    ``dims``: the dimensions taken modulo (default ``(0,)``, the outermost); ``modulus``: try only this
    ``m`` (an int, or one per dimension). Otherwise the smallest safe ``m`` is computed exactly: the
    set ``Delta`` of differences between simultaneously live elements (:class:`LiveDistances`, one isl
    computation) refutes every ``m`` that divides one of its vectors; when ``Delta`` is bounded the
    smallest ``m`` it does not refute is at most ``max |delta| + 1`` and is found by scanning the
    candidates against ``Delta``, then proven with the conflict set of the module text. When ``Delta``
    is unbounded (all planes live at once) the moduli up to ``max_modulus`` (default
    ``UNBOUNDED_SCAN``) are scanned and, as a rule, all refused with the reason. ``max_modulus`` also
    caps the bounded search. The first refuted moduli are explained by a full conflict
    ``(w, w', r)``, the next ones by a pair of simultaneously live elements; ``explain=False`` (for
    callers that only need the choice, such as ``optimize``) skips the full conflicts, which are most of
    the step's time when many moduli are refused (sl3 under its time tiles): the choice and its proof
    are the same.
    The parallel (coincident) marks of ``schedule`` are kept where they are still exactly coincident
    for the contracted SCoP (its buffer adds false dependences); the report lists the dropped ones.
    Returns the new SCoP (``array`` replaced by ``buffer``, default ``<array>buf``, in every statement,
    copy-out statements appended, its schedule the new one), the new schedule (the steps of ``schedule``
    followed by ``contract(array)``) and the report. Raises :class:`ContractionRefused` (a
    :class:`StorageError`, with an example element and instances) when no tried mapping is safe, and
    :class:`~polylab.schedule.IllegalScheduleError` when ``schedule`` itself is illegal.
    """
    t0 = time.perf_counter()
    arr = scop.array(array)
    if arr.rank == 0:
        raise ModelError(f"{array} is a scalar: there is nothing to contract")
    dims = tuple(dims) if dims is not None else (0,)
    if any(d < 0 or d >= arr.rank for d in dims) or len(set(dims)) != len(dims):
        raise ModelError(f"invalid dimensions {dims} for {array} of rank {arr.rank}")
    base = require_legal(schedule_on(scop, schedule), f"the schedule of {scop.name}",
                         consequence="so it is not contracted", hint="contract under a legal schedule")
    if padded_map(base).is_empty():  # no statement instance runs (``for (i = 1; i > 2; i++)``)
        raise StorageError(f"no statement instance of {scop.name} runs: there is no storage of {array} to "
                           "contract", hint="contract an array that the program writes")
    setup = _setup(scop, base, arr, dims, buffer)
    chosen, attempts, conflict_text, live = _search(setup, modulus, max_modulus, explain)
    new_scop, smap, extents = _rewrite(setup, chosen, base)
    umap = setup.T_new if setup.copies else setup.T
    out = schedule_of(new_scop, umap.coalesce(), steps=base.steps + (f"contract({array})",))
    rank_vars = [f"i{k}" for k in range(arr.rank)]
    mapping = (f"{array}[{']['.join(rank_vars)}] -> {setup.buf}[" + "][".join(
        (f"{v} % {chosen[dims.index(k)]}" if k in dims else v) for k, v in enumerate(rank_vars)) + "]")
    out, kept, dropped = _keep_parallel(base, out, setup.buf)
    report = ContractionReport(array, setup.buf, dims, chosen, mapping, extents, attempts,
                               conflict_text, tuple((n, str(d)) for _, n, d in setup.copies),
                               time.perf_counter() - t0, live.text() if live is not None else "",
                               kept, dropped)
    return new_scop, out, report


def _setup(scop: Scop, base: Schedule, arr: Array, dims: tuple[int, ...], buffer: str | None) -> _Setup:
    """The maps of the module text: the schedule, the writes, the flow (refusing live-in reads) and the
    copy-outs of the live-out elements, which run right after their last write."""
    array = arr.name
    T = padded_map(base)
    W = writes_map(scop, array).intersect_params(scop.context)
    live = scop.live_out if scop.live_out is not None else scop.without_dead(W.range())
    live_x = isl.UnionSet.empty(scop.context.get_space())
    for s_ in sets_of(live):
        if s_.get_tuple_name() == array:
            live_x = live_x.union(isl.UnionSet.from_set(s_))
    # the exact value-based dataflow (under the SCoP's own order: T is legal, so the flow is the same)
    flow = dataflow(scop, live=live_x)
    _refuse_live_in(scop, flow, array, buffer)
    used = {s.name for s in scop.statements} | {a.name for a in scop.arrays}
    buf = buffer or f"{array}buf"
    while buf in used and buffer is None:
        buf += "_"
    copies = _copy_outs(scop, array, flow.last_write_instances(array))
    T_new = after_writers(T, [(s.name, dom) for s, _, dom in copies])
    F_all = flow.flow_map(array).coalesce()
    for s, name, dom in copies:
        ren = isl.Map.identity(isl.Space.map_from_set(s.domain.get_space())).intersect_domain(
            dom.set_tuple_name(s.name)).set_tuple_name(isl.dim_type.out, name)
        F_all = F_all.union(isl.UnionMap.from_map(ren))
    return _Setup(scop, array, arr, dims, buf, T, W, F_all, T_new, copies)


def _refuse_live_in(scop: Scop, flow: Dataflow, array: str, buffer: str | None) -> None:
    for rf in flow.reads:
        if rf.array != array or not rf.is_live_in:
            continue
        acc = scop.statement(rf.statement).accesses[rf.access]
        raise StorageError(
            f"{acc.text} at line {acc.location.line} reads values of {array} from before "
            f"the region (e.g. {set_example_text(rf.live_in_instances)}); {buffer or array + 'buf'} would not "
            f"hold them", hint="fold them first (fold_live_ins) or declare their initial value")


def _copy_outs(scop: Scop, array: str, last: isl.UnionSet) -> tuple[tuple[Statement, str, isl.Set], ...]:
    """Per statement writing ``array``: a new statement name and the instances that write a live-out
    element last (the copy-out's domain)."""
    names = iter(fresh_statement_names(scop, len(scop.statements)))
    out = []
    for s in scop.statements:
        if not any(a.array == array for a in s.writes):
            continue
        dom_last = [q for q in sets_of(last) if q.get_tuple_name() == s.name]
        if not dom_last or dom_last[0].is_empty():
            continue
        name = next(names)
        out.append((s, name, dom_last[0].coalesce().set_tuple_name(name)))
    return tuple(out)


def _candidates(st: _Setup, live: LiveDistances, max_modulus: int | None) -> tuple[list[tuple[int, ...]], str]:
    """The moduli to try, smallest product first, and why none may suffice ("" when some may)."""
    dims = st.dims
    reason = ""
    if live.bounded:
        # m_k = max|delta_k| + 1 is always safe (then delta_k = 0 mod m_k forces delta_k = 0)
        limits = [b + 1 for b in live.bound()]
    else:
        cap = max_modulus if max_modulus is not None else UNBOUNDED_SCAN
        limits = [cap] * len(dims)
        reason = (f"the differences in dimension(s) {', '.join(map(str, dims))} between elements "
                  f"live at the same time are unbounded ({live.text()})")
    if max_modulus is not None:
        limits = [min(b, max_modulus) for b in limits]
    # a modulus >= the number of indices in a dimension keeps every plane of it: no saving at all
    spans = _spans(st.scop, st.W, st.array, dims)
    limits = [min(b, sp) if sp is not None else b for b, sp in zip(limits, spans)]
    candidates = sorted((t for t in itertools.product(*[range(1, b + 1) for b in limits])
                         if not (all(sp is not None and m >= sp for m, sp in zip(t, spans))
                                 and any(sp is not None and sp > 1 for sp in spans))),
                        key=lambda t: (math.prod(t), t))
    if live.bounded and all(sp is not None and b + 1 >= sp for b, sp in zip(live.bound(), spans)):
        reason = (f"elements up to {', '.join(map(str, live.bound()))} apart in dimension(s) "
                  f"{', '.join(map(str, dims))} are live at the same time, while the indices "
                  f"used span only {', '.join(map(str, spans))}: every safe mapping keeps all "
                  f"the planes")
    return candidates, reason


def _refutation(st: _Setup, live: LiveDistances, mods: tuple[int, ...], delta: tuple[int, ...],
                refuted: int, last: bool) -> Attempt:
    """An attempt refuted by the difference ``delta`` of Delta, explained by a full conflict for the first
    ones, by a pair of live elements for the next ones, by the difference alone after that."""
    dims = st.dims
    if refuted < EXPLAINED:
        same = _same_slot(st.scop.context.get_space(), st.array, st.arr.rank, dims, mods)
        text, params = _explain(_conflicts(st.W, st.F, st.T_new, same, st.scop.context), st.W, st.array)
    elif refuted < EXEMPLIFIED or last:
        ex, params = _pair_example(live, dims, delta)
        text = (f"{ex}, {', '.join(map(str, delta))} apart in dimension(s) "
                f"{', '.join(map(str, dims))}: the same slot")
    else:
        params = ()
        text = (f"elements {', '.join(map(str, delta))} apart in dimension(s) "
                f"{', '.join(map(str, dims))} are live at the same time (a difference in Delta)")
    return Attempt(mods, False, text, params)


def _search(st: _Setup, modulus: int | Sequence[int] | None, max_modulus: int | None, explain: bool = True
            ) -> tuple[tuple[int, ...], tuple[Attempt, ...], str, LiveDistances | None]:
    """The chosen moduli, every attempt, the (empty) conflict set of the choice and Delta (None when the
    modulus was given); :class:`ContractionRefused` when no candidate is safe."""
    live: LiveDistances | None = None
    reason = ""
    if modulus is None:
        live = _live_distances(st.W, st.F, st.T_new, st.array, st.arr.rank, st.dims, st.scop.context)
        candidates, reason = _candidates(st, live, max_modulus)
    else:
        mods = (modulus,) if isinstance(modulus, int) else tuple(modulus)
        if len(mods) != len(st.dims) or any(m < 1 for m in mods):
            raise ModelError(f"give one modulus >= 1 per contracted dimension {st.dims}: {modulus}")
        candidates = [mods]
    attempts: list[Attempt] = []
    for mods in map(tuple, candidates):
        delta = live.witness(mods) if live is not None else None
        if live is not None and delta is not None:      # refuted by Delta
            # without explanations, every refutation counts as one past those a full conflict explains
            refuted = sum(1 for a in attempts if not a.safe) + (0 if explain else EXPLAINED)
            attempts.append(_refutation(st, live, mods, delta, refuted, mods == tuple(candidates[-1])))
            continue
        same = _same_slot(st.scop.context.get_space(), st.array, st.arr.rank, st.dims, mods)
        conf = _conflicts(st.W, st.F, st.T_new, same, st.scop.context)     # the proof (or the refutation)
        if conf.is_empty():
            attempts.append(Attempt(mods, True))
            return mods, tuple(attempts), str(conf), live
        text, params = _explain(conf, st.W, st.array)
        attempts.append(Attempt(mods, False, text, params))
    if live is not None and live.bounded and not reason:
        reason = (f"elements up to {', '.join(map(str, live.bound()))} apart are live at the same "
                  f"time: the smallest safe modulus is above max_modulus={max_modulus}")
    raise _refused(st, attempts, reason)


def _refused(st: _Setup, attempts: list[Attempt], reason: str) -> ContractionRefused:
    shown = attempts[:2] + (attempts[-1:] if len(attempts) > 2 else [])
    why = ""
    if reason:
        why = (reason + (", so no number of planes fixed in advance suffices"
                         if reason.startswith("the differences") else "")
               + (f" (moduli up to {attempts[-1].moduli[0]} tried; e.g. {attempts[-1].conflict})"
                  if attempts else "") + "; ")
    return ContractionRefused(
        f"contracting {st.array} along dimension(s) {', '.join(map(str, st.dims))} would lose a value that "
        f"is still read: " + why + "; ".join(f"modulo {', '.join(map(str, a.moduli))}: {a.conflict}"
                                             for a in shown),
        attempts=tuple(attempts),
        hint="choose a schedule that consumes each value sooner (e.g. interleave the initialisation "
             "with the sweep), or keep more planes")


def _rewrite(st: _Setup, chosen: tuple[int, ...], base: Schedule) -> tuple[Scop, isl.Map, tuple[str, ...]]:
    """The contracted SCoP (every access to the array through the buffer, the copy-outs appended, the
    schedule tree of the new order), the storage mapping and the buffer's extents."""
    scop, array, buf, dims = st.scop, st.array, st.buf, st.dims
    smap = _slot_map(scop.context.get_space(), array, st.arr.rank, dims, chosen, buf)

    def sub(idx: tuple[Expr, ...]) -> tuple[Expr, ...]:
        out = []
        for k, e in enumerate(idx):
            if k in dims:
                m = chosen[dims.index(k)]
                if m == 1:
                    out.append(Const("0"))
                elif isinstance(e, Const) and e.text.lstrip("-").isdigit():
                    out.append(Const(str(int(e.text) % m)))
                else:
                    out.append(Binary("%", e, Const(str(m))))
            else:
                out.append(e)
        return tuple(out)

    new_stmts = [s if not any(a.array == array for a in s.accesses) else _through_buffer(s, array, buf, sub, smap)
                 for s in scop.statements]
    copies = []
    for s, name, dom in st.copies:
        tgt = ArrayRef(array, s.body.target.indices, 0)
        src = ArrayRef(buf, sub(s.body.target.indices), 1)
        body = Assignment(tgt, "=", src)
        wrel = [a for a in s.writes if a.array == array][0].relation
        wrel = wrel.intersect_domain(dom.set_tuple_name(s.name)).set_tuple_name(isl.dim_type.in_, name)
        rrel = wrel.apply_range(smap.align_params(wrel.get_space()))
        accs = (Access(0, "write", array, wrel, s.location, to_c(tgt)),
                Access(1, "read", buf, rrel, s.location, to_c(src)))
        copies.append(Statement(name, assignment_to_c(body), s.location, s.iterators, dom, accs, body))
    accessed = st.W.range().union(scop.reads.range())
    elems = [q for q in sets_of(accessed) if q.get_tuple_name() == array]
    extents = tuple(str(chosen[dims.index(k)]) if k in dims
                    else (_extent(scop, elems[0], k, st.arr.extents[k]) if elems else st.arr.extents[k])
                    for k in range(st.arr.rank))
    all_stmts = tuple(new_stmts) + tuple(copies)
    dom_all = isl.UnionSet.empty(scop.context.get_space())
    for s in all_stmts:
        dom_all = dom_all.union(isl.UnionSet.from_set(s.domain))
    tree = schedule_tree(st.T_new.coalesce(), dom_all) if copies else base.tree
    new_scop = replace(scop, statements=all_stmts,
                       arrays=scop.arrays + (Array(buf, st.arr.ctype, extents, declared=False, temporary=True),),
                       schedule=tree,
                       notes=scop.notes + (f"{array} contracted to {buf} under the storage mapping {smap}",))
    return new_scop, smap, extents


def _through_buffer(s: Statement, array: str, buf: str, sub, smap: isl.Map) -> Statement:
    """Statement ``s`` with every reference to ``array`` rewritten to ``buf`` at the slot ``sub(index)``."""
    def rewrite(x: Expr):
        if isinstance(x, ArrayRef) and x.array == array:
            return ArrayRef(buf, sub(x.indices), x.access)
        return None

    body = s.body
    new_body = Assignment(transform(body.target, rewrite), body.op, transform(body.value, rewrite))
    refs = {r.access: r for r in [new_body.target] + _refs(new_body.value)}
    accs = tuple(replace(a, array=buf, relation=a.relation.apply_range(smap.align_params(
        a.relation.get_space())), text=to_c(refs[a.index]) if a.index in refs else a.text)
        if a.array == array else a for a in s.accesses)
    return replace(s, body=new_body, accesses=accs, text=assignment_to_c(new_body))


def _keep_parallel(template: Schedule, out: Schedule, buf: str
                   ) -> tuple[Schedule, tuple[int, ...], tuple[tuple[int, str], ...]]:
    """Carry the parallel marks of ``template`` over to ``out`` (the schedule of the contracted SCoP).

    Contraction changes no time vector (dimension ``d`` of ``out`` is dimension ``d`` of ``template``; the
    copy-outs only add an innermost dimension), but the buffer adds dependences: instances that now share
    a cell of the buffer. A marked dimension stays marked iff it is still exactly coincident w.r.t. the
    dependences of the contracted SCoP (the schedule layer's :meth:`Schedule.is_coincident`); otherwise
    the mark is dropped, with the dependence that is now carried by it.
    """
    out = _same_functions(template, out)
    marked = template.marked
    if not marked:
        return out, (), ()
    kept: list[int] = []
    dropped: list[tuple[int, str]] = []
    for d in sorted(marked):
        if d < out.n_dims and d in out.loop_dims and out.is_coincident(d):
            kept.append(d)
        else:
            dropped.append((d, _carried_by(out, d, buf)))
    return replace(out, marked=frozenset(kept)), tuple(kept), tuple(dropped)


def _same_functions(template: Schedule, out: Schedule) -> Schedule:
    """``out`` with the time functions the user gave (``template``'s, followed by 0) for the statements
    that kept their instances, where they agree with ``out`` on the domain (they do by construction; the
    round trip through one isl band would otherwise print them one piece per face of the domain)."""
    tmaps = template.maps
    new = dict(out.maps)
    changed = False
    for s in out.scop.statements:
        if s.name not in tmaps or s.name not in new:
            continue
        m = tmaps[s.name]
        k = m.dim(isl.dim_type.out)
        if k + 1 != new[s.name].dim(isl.dim_type.out):
            continue
        m = m.add_dims(isl.dim_type.out, 1).fix_val(isl.dim_type.out, k, isl.Val.zero(m.get_ctx()))
        dom = s.domain.intersect_params(out.scop.context)
        try:
            m = m.align_params(new[s.name].get_space())
            same = m.intersect_domain(dom.align_params(m.get_space().domain())).is_equal(
                new[s.name].intersect_domain(dom.align_params(m.get_space().domain())))
        except isl.Error:  # maps isl cannot compare: keep the contracted schedule's own function
            continue
        if same:
            new[s.name] = m
            changed = True
    if not changed:
        return out
    return Schedule.from_maps(out.scop, new, steps=out.steps, marked=out.marked, notes=out.notes,
                               provenance=out.provenance)


def _carried_by(sched: Schedule, d: int, buf: str) -> str:
    """A dependence of ``sched.scop`` whose instances agree in time before ``d`` and differ at ``d``."""
    n = sched.n_dims
    pspace = sched.scop.context.get_space()
    for dep in sched.dependences:
        try:
            rel = dep.relation.align_params(pspace)
            ts = sched.maps[dep.source].align_params(rel.get_space())
            tt = sched.maps[dep.sink].align_params(rel.get_space())
            times = rel.domain_map().apply_range(ts).range_product(rel.range_map().apply_range(tt))
            want = equal_until(rel.get_ctx(), n, d, differ=True).wrap()
            bad = times.intersect_range(want.align_params(times.get_space().range())).domain().unwrap()
            bad = bad.intersect_params(sched.scop.context)
        except isl.Error:  # a dependence isl cannot relate to the times: look at the next one
            continue
        if bad.is_empty():
            continue
        what = (f"a false dependence through the buffer {buf}" if dep.array == buf
                else f"a {dep.kind} dependence on {dep.array}")
        return (f"{what} ({dep.kind} {dep.source} -> {dep.sink}) is carried by it, e.g. "
                f"{example_text(bad)}")
    return "it is not coincident for the contracted SCoP"


def _refs(e: Expr) -> list[ArrayRef]:
    return [x for x in walk(e) if isinstance(x, ArrayRef)]
