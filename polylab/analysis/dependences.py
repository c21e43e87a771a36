"""Exact dependences of a SCoP, memory-based and value-based, with isl.

Two statement instances ``u`` (of ``S``) and ``v`` (of ``T``) *depend* when they access the same array
element, at least one of them writes it (both read, for *input* dependences), and ``u`` runs before ``v`` in
the original schedule. Within one instance the right-hand side is read before the target is written, so
accesses are ordered by the **extended time** ``(theta_S(u), o)`` with ``o = 0`` for reads and ``o = 1`` for
the write; pairs of accesses of the *same* instance are never dependences between instances.

- **flow** (read after write, RAW): ``u`` writes, ``v`` reads;
- **anti** (write after read, WAR): ``u`` reads, ``v`` writes;
- **output** (write after write, WAW): both write;
- **input** (read after read, RAR, for locality only): both read.

*Memory-based* dependences (``value_based=False``) relate every such pair:
``{ S[x] -> T[y] : A_S(x) = A_T(y) and (theta_S(x), o_S) <lex (theta_T(y), o_T) }``.
*Value-based* dependences (dataflow) keep only the pairs with **no write to the element in between**: for a
flow dependence ``v`` reads the value ``u`` wrote (``u`` is the last write before the read); for anti,
output and input dependences likewise the pairs between two consecutive writes of the element. They are
computed per pair of references as the memory-based pairs minus the pairs that a write ``w`` separates,
``D - U_w (D1(u -> w) ; D2(w -> v))`` (exact Presburger arithmetic, the same answer as isl's
``compute_flow`` with must-sources, which the tests check, and much faster on disjunctive domains).

Each :class:`Dependence` is one pair of references (source access, sink access) and one kind. Its views, all
in the loops that the two statements share in the original schedule (see :mod:`polylab.analysis.loops`):
the *distance set* ``{ theta_L(v) - theta_L(u) }`` (for statements of different depth, the common loops only:
the prefix of the schedule tree that both share), the constant *distance vectors* when that set is a finite
set of constant vectors, a *direction vector* (``<`` when the sink's iteration of that loop is later,
``=``, ``>``, ``*`` for several), and the **levels** that carry it: level ``l`` when the pair agrees on the
first ``l - 1`` common loops and differs at the ``l``-th, *loop-independent* when it agrees on all of them
(the order then comes from the textual order of the statements).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Iterator

import islpy as isl

from polylab import render
from polylab.analysis.loops import LoopStructure
from polylab.errors import AnalysisError
from polylab.model.islutil import constant_point, equal_until, point_coordinates, readable
from polylab.model.budget import bounded, tick
from polylab.model.memo import ObjectMemo, memo
from polylab.model.scop import Access, Scop

KINDS = ("flow", "anti", "output", "input")
KIND_WORDS = {"flow": "RAW", "anti": "WAR", "output": "WAW", "input": "RAR"}
_PAIR = {"flow": ("write", "read"), "anti": ("read", "write"), "output": ("write", "write"),
         "input": ("read", "read")}
#: distance sets with at most this many points are listed as vectors
MAX_LISTED_DISTANCES = 32
#: a distance set is enumerated only when its bounding box holds at most this many points
MAX_ENUMERATED_BOX = 100_000


def _order_map(ctx: isl.Context, n: int, level: int | None) -> isl.Map:
    """``{ [a] -> [b] }`` on ``n`` coordinates: equal before ``level`` and ``a_level != b_level``
    (``level`` 1-based), or equal everywhere when ``level`` is None."""
    if level is None:
        return equal_until(ctx, n, n)
    return equal_until(ctx, n, level - 1, differ=True)


def _points(s: isl.Set, limit: int) -> list[tuple[int, ...]] | None:
    """The points of a parameter-free set when it is finite with at most ``limit`` points, else None."""
    if s.is_empty():
        return []
    if not s.is_bounded():
        return None
    n = s.dim(isl.dim_type.set)
    box = []
    for k in range(n):
        lo = s.dim_min(k)
        hi = s.dim_max(k)
        if not (lo.is_cst() and hi.is_cst()):
            return None
        lo_v = _cst(lo)
        hi_v = _cst(hi)
        box.append((lo_v, hi_v))
    if math.prod(hi_v - lo_v + 1 for lo_v, hi_v in box) > MAX_ENUMERATED_BOX:
        return None
    pts: list = []
    s.foreach_point(pts.append)
    if len(pts) > limit:
        return None
    return sorted(point_coordinates(p) for p in pts)


def _cst(pa: isl.PwAff) -> int:
    vals: list[int] = []
    pa.foreach_piece(lambda _s, aff: vals.append(aff.get_constant_val().to_python()))
    return int(vals[0])


def _no_params(s: isl.Set) -> isl.Set:
    return s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param))


@dataclass(frozen=True, eq=False)
class Dependence(render.Rendered):
    """One dependence between two references: ``relation = { S[x] -> T[y] }`` (instance pairs).

    ``source_access`` and ``sink_access`` index ``Statement.accesses`` of ``source`` and ``sink``.
    ``loops`` names the common loops (outermost first) in which distances, directions and levels are
    expressed; ``common`` holds their positions in the time vectors (see :class:`LoopStructure`).
    """

    kind: str
    source: str
    sink: str
    array: str
    source_access: int
    sink_access: int
    relation: isl.Map
    value_based: bool = False
    loops: tuple[str, ...] = ()
    structure: LoopStructure | None = field(default=None, repr=False)

    # -- references ------------------------------------------------------------------------------------
    @property
    def source_ref(self) -> Access:
        return self._scop.statement(self.source).accesses[self.source_access]

    @property
    def sink_ref(self) -> Access:
        return self._scop.statement(self.sink).accesses[self.sink_access]

    @property
    def _scop(self) -> Scop:
        if self.structure is None:
            raise AnalysisError("this dependence is not attached to a SCoP")
        return self.structure.scop

    @property
    def common(self) -> tuple[int, ...]:
        if self.structure is None:
            return ()
        return self.structure.common_loops(self.source, self.sink)

    # -- distances ----------------------------------------------------------------------------------------
    @cached_property
    def loop_relation(self) -> isl.Map:
        """``{ [theta_L(u)] -> [theta_L(v)] }``: the pairs seen in the common loops only."""
        st = self.structure
        assert st is not None
        src = st.time_map(self.source, self.common)
        snk = st.time_map(self.sink, self.common)
        return self.relation.apply_domain(src).apply_range(snk)

    @cached_property
    def distance_set(self) -> isl.Set:
        """``{ theta_L(v) - theta_L(u) : u -> v in relation }`` (parametric), in the common loops."""
        return self.loop_relation.deltas().coalesce()

    @cached_property
    def _distance_union(self) -> isl.Set:
        return _no_params(self.distance_set)

    @cached_property
    def distances(self) -> tuple[tuple[int, ...], ...] | None:
        """The distance vectors when they are finitely many constants (for some parameter values), else
        None (then :attr:`distance_description` describes the polyhedron)."""
        pts = _points(self._distance_union, MAX_LISTED_DISTANCES)
        return None if pts is None else tuple(pts)

    @property
    def distance(self) -> tuple[int, ...] | None:
        """The distance vector when it is one constant vector."""
        d = self.distances
        return d[0] if d is not None and len(d) == 1 else None

    @property
    def distance_description(self) -> str:
        """The distance vectors in words and isl set notation."""
        d = self.distances
        if d is not None:
            return ", ".join("(" + ", ".join(map(str, v)) + ")" for v in d)
        return readable(self.distance_set)

    @cached_property
    def direction(self) -> tuple[str, ...]:
        """One symbol per common loop: ``<`` (the sink runs in a later iteration), ``=``, ``>`` or ``*``."""
        s = self._distance_union
        out = []
        for k in range(s.dim(isl.dim_type.set)):
            signs = [sym for sym in ("<", "=", ">") if not s.intersect(_sign_set(s, k, sym)).is_empty()]
            out.append(signs[0] if len(signs) == 1 else "*")
        return tuple(out)

    @cached_property
    def directions(self) -> tuple[tuple[str, ...], ...]:
        """The exact set of direction vectors (sign patterns of the distance vectors)."""
        s = self._distance_union
        n = s.dim(isl.dim_type.set)
        out = []
        for pattern in itertools.product(("<", "=", ">"), repeat=n):
            t = s
            for k, sym in enumerate(pattern):
                t = t.intersect(_sign_set(s, k, sym))
                if t.is_empty():
                    break
            else:
                out.append(pattern)
        return tuple(out)

    # -- levels -------------------------------------------------------------------------------------------
    @cached_property
    def by_level(self) -> tuple[tuple[int | None, isl.Map], ...]:
        """``(level, sub-relation)`` for each level that carries some pair, outermost first; level None
        (loop-independent) last."""
        st = self.structure
        assert st is not None
        n = len(self.common)
        src = st.time_map(self.source, self.common)
        snk = st.time_map(self.sink, self.common)
        out = []
        for level in list(range(1, n + 1)) + [None]:
            order = src.apply_range(_order_map(src.get_ctx(), n, level)).apply_range(snk.reverse())
            sub = self.relation.intersect(order)
            if not sub.is_empty():
                out.append((level, sub.coalesce()))
        return tuple(out)

    @property
    def levels(self) -> tuple[int | None, ...]:
        return tuple(lv for lv, _ in self.by_level)

    @property
    def carried_level(self) -> int | None:
        """The outermost loop level (1-based) that carries the dependence, None if none does."""
        lv = [x for x in self.levels if x is not None]
        return min(lv) if lv else None

    @property
    def loop_independent(self) -> bool:
        """Some pair is ordered only by the textual order (equal in every common loop)."""
        return None in self.levels

    def carried_by(self, level: int) -> isl.Map | None:
        for lv, m in self.by_level:
            if lv == level:
                return m
        return None

    def carried_text(self) -> str:
        parts = []
        for lv in self.levels:
            if lv is None:
                parts.append("loop-independent")
            else:
                name = self.loops[lv - 1] if lv - 1 < len(self.loops) else "?"
                parts.append(f"level {lv} ({name})")
        return ", ".join(parts)

    # -- views --------------------------------------------------------------------------------------------
    @property
    def label(self) -> str:
        try:
            a, b = self.source_ref.text, self.sink_ref.text
        except AnalysisError:
            a, b = f"#{self.source_access}", f"#{self.sink_access}"
        return f"{self.kind} ({KIND_WORDS[self.kind]}) {self.source} {a} -> {self.sink} {b}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "source": self.source, "sink": self.sink, "array": self.array,
                "source_access": self.source_access, "sink_access": self.sink_access,
                "source_ref": self.ref_text(self.source, self.source_access),
                "sink_ref": self.ref_text(self.sink, self.sink_access),
                "relation": str(self.relation), "loops": list(self.loops),
                "distances": [list(v) for v in self.distances] if self.distances is not None else None,
                "distance_set": str(self.distance_set),
                "direction": list(self.direction),
                "carried_level": self.carried_level,
                "levels": [lv for lv in self.levels],
                "loop_independent": self.loop_independent}

    def ref_text(self, stmt: str, idx: int) -> str | None:
        """The text of access ``idx`` of statement ``stmt`` (None when the dependence has no SCoP)."""
        try:
            return self._scop.statement(stmt).accesses[idx].text
        except (AnalysisError, IndexError):
            return None

    def __str__(self) -> str:
        d = "(" + ", ".join(self.direction) + ")" if self.loops else "()"
        return (f"{self.label}  on {self.array}\n    distance {self.distance_description}"
                f"  direction {d}  carried: {self.carried_text()}\n    {readable(self.relation)}")


def _sign_set(s: isl.Set, k: int, sym: str) -> isl.Set:
    """The distances of ``s``'s space whose coordinate ``k`` has the direction ``sym``: ``<`` (positive: the
    sink runs later), ``=`` (zero) or ``>`` (negative)."""
    v = isl.make_zero_and_vars([f"d{q}" for q in range(s.dim(isl.dim_type.set))], ctx=s.get_ctx())
    x = v[f"d{k}"]
    return {"<": x.gt_set, "=": x.eq_set, ">": x.lt_set}[sym](v[0])


@dataclass(frozen=True, eq=False)
class DependenceGraph(render.Rendered):
    """All dependences of a SCoP of the kinds asked for."""

    scop: Scop
    value_based: bool
    dependences: tuple[Dependence, ...]
    kinds: tuple[str, ...] = ("flow", "anti", "output")
    structure: LoopStructure | None = field(default=None, repr=False)

    def union(self, kinds: Iterable[str] | None = None) -> isl.UnionMap:
        """``{ S[x] -> T[y] }``: the instance pairs of the dependences of ``kinds`` (all when None)."""
        kinds = tuple(kinds) if kinds is not None else None
        if kinds is not None:
            _check_kinds(kinds)
        out = isl.UnionMap.empty(self.scop.context.get_space())
        for d in self.dependences:
            if kinds is None or d.kind in kinds:
                out = out.union(isl.UnionMap.from_map(d.relation))
        return out.coalesce()

    def of_kind(self, *kinds: str) -> tuple[Dependence, ...]:
        return tuple(d for d in self.dependences if d.kind in kinds)

    def between(self, source: str | None = None, sink: str | None = None,
                array: str | None = None) -> tuple[Dependence, ...]:
        return tuple(d for d in self.dependences
                     if (source is None or d.source == source) and (sink is None or d.sink == sink)
                     and (array is None or d.array == array))

    def __iter__(self) -> Iterator[Dependence]:
        return iter(self.dependences)

    def __len__(self) -> int:
        return len(self.dependences)

    def to_json(self) -> dict:
        return {"scop": self.scop.name, "value_based": self.value_based, "kinds": list(self.kinds),
                "dependences": [d.to_json() for d in self.dependences]}

    def __str__(self) -> str:
        head = (f"{'value' if self.value_based else 'memory'}-based dependences of {self.scop.name} "
                f"({', '.join(self.kinds)}): {len(self.dependences)}")
        return "\n".join([head] + ["  " + str(d).replace("\n", "\n  ") for d in self.dependences])


def _check_kinds(kinds: tuple[str, ...]) -> None:
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise AnalysisError(f"unknown dependence kind {bad[0]!r}",
                            hint="the kinds are flow (RAW), anti (WAR), output (WAW) and input (RAR)")


# -- computing them -------------------------------------------------------------------------------------------
def _extended_time(st: LoopStructure, stmt: str, acc: Access) -> isl.Map:
    """``{ S[x] -> [theta_S(x), o] }`` with ``o = 0`` for a read, 1 for the write."""
    base = st.time_map(stmt)
    o = isl.Map.from_domain_and_range(base.domain(), constant_point(base.get_ctx(), (0 if acc.kind == "read" else 1,)))
    return base.flat_range_product(o)


def compute_dependences(scop: Scop, *, value_based: bool = False,
                        kinds: Iterable[str] = ("flow", "anti", "output")) -> DependenceGraph:
    """The exact dependences of ``scop`` (see the module documentation for the definitions).

    ``value_based=False``: memory-based (every pair of accesses to the same element in order);
    ``value_based=True``: only the pairs with no intervening write to the element (dataflow).
    ``kinds``: any of ``"flow"``, ``"anti"``, ``"output"``, ``"input"``.
    Relations are restricted to ``scop.context`` and never empty.
    """
    kinds = tuple(kinds)
    _check_kinds(kinds)
    found: list[Dependence] = []
    with bounded("the dependence analysis", hint=_TOO_COMPLEX_HINT):
        st = LoopStructure.of(scop)
        if value_based:
            for kind in kinds:
                found.extend(_value_based(scop, st, kind))
        else:
            for kind in kinds:
                found.extend(_memory_based(scop, st, kind))
    order = {s.name: k for k, s in enumerate(scop.statements)}
    found.sort(key=lambda d: (KINDS.index(d.kind), order[d.source], d.source_access, order[d.sink],
                              d.sink_access))
    return DependenceGraph(scop, value_based, tuple(found), kinds, st)


#: what to do when the analysis passes its bound
_TOO_COMPLEX_HINT = ("analyse a smaller part of the program (fewer statements, shallower nests), fix parameters "
                     "with --param, or raise the bound: POLYLAB_MAX_OPERATIONS, POLYLAB_MAX_SECONDS (0 = none)")


def _make(scop: Scop, st: LoopStructure, kind: str, s: str, a: int, t: str, b: int, array: str,
          rel: isl.Map, value_based: bool) -> Dependence | None:
    tick()
    rel = rel.intersect_params(scop.context)
    if rel.is_empty():
        return None
    if not value_based:  # (coalescing a value-based relation with integer divisions can take seconds)
        rel = rel.coalesce()
    loops = tuple(st.dims[s][k].name for k in st.common_loops(s, t))
    return Dependence(kind, s, t, array, a, b, rel, value_based, loops, st)


def _raw_pairs(scop: Scop, st: LoopStructure, kind: str) -> dict[tuple[str, int, str, int], isl.Map]:
    """Per pair of references of ``kind``: ``{ S[x] -> T[y] : same element, (theta_S(x), o_S) <lex
    (theta_T(y), o_T) }`` within the context, *including* a read and the write of one instance."""
    want_src, want_snk = _PAIR[kind]
    known = _EXTENDED.get(scop, dict)

    def times(stmt: str, acc: Access) -> isl.Map:
        # one extended time map per statement and access kind of the SCoP, built when a pair first needs it
        key = (stmt, acc.kind)
        if key not in known:
            known[key] = _extended_time(st, stmt, acc)
        return known[key]

    out = {}
    for s, a in scop.accesses():
        if a.kind != want_src:
            continue
        for t, b in scop.accesses():
            if b.kind != want_snk or b.array != a.array:
                continue
            tick()
            ts, tt = times(s.name, a), times(t.name, b)
            rel = _ordered_pairs(a.relation, b.relation, ts, tt, scop.context)
            if rel is not None:
                out[(s.name, a.index, t.name, b.index)] = rel
    return out


@memo("analysis.ordered_pairs", named=(0, 1, 2, 3))
def _ordered_pairs(access_s: isl.Map, access_t: isl.Map, time_s: isl.Map, time_t: isl.Map,
                   context: isl.Set) -> isl.Map | None:
    """``{ S[x] -> T[y] : access_s(x) = access_t(y), time_s(x) <lex time_t(y) }`` within ``context``, or
    None when empty. Remembered by content (:mod:`polylab.model.memo`, the maps' dimension names in the
    key): the SCoPs the storage steps make from one another share most statements, accesses and time maps
    (adi's three SCoPs: most pairs)."""
    same = access_s.apply_range(access_t.reverse()).intersect_params(context)
    if same.is_empty():
        return None
    rel = same.intersect(time_s.lex_lt_map(time_t))
    return None if rel.is_empty() else rel.coalesce()


#: the pairs of :func:`_raw_pairs` of each SCoP analysed, per kind. A SCoP is an immutable value compared
#: by identity, so the pairs one analysis computed serve the next: a value-based analysis needs the
#: memory-based flow and output pairs, and the storage steps ask for both analyses of each SCoP they
#: make (adi's search: 7 analyses of 3 SCoPs). Kept while the SCoP lives.
_RAW_PAIRS: ObjectMemo[Scop, dict[str, dict]] = ObjectMemo("analysis.raw_pairs")


#: the extended time maps (:func:`_extended_time`) of each SCoP analysed, per statement and access kind
_EXTENDED: ObjectMemo[Scop, dict[tuple[str, str], isl.Map]] = ObjectMemo("analysis.extended_time")


def _pairs(scop: Scop, st: LoopStructure, kind: str) -> dict[tuple[str, int, str, int], isl.Map]:
    """:func:`_raw_pairs`, computed once per SCoP and kind."""
    per_kind = _RAW_PAIRS.get(scop, dict)
    if kind not in per_kind:
        per_kind[kind] = _raw_pairs(scop, st, kind)
    return per_kind[kind]


def _without_self(key: tuple[str, int, str, int], rel: isl.Map) -> isl.Map:
    return rel.subtract(isl.Map.identity(rel.get_space())) if key[0] == key[2] else rel


def _memory_based(scop: Scop, st: LoopStructure, kind: str) -> list[Dependence]:
    out = []
    for key, rel in _pairs(scop, st, kind).items():
        s, a, t, b = key
        dep = _make(scop, st, kind, s, a, t, b, scop.statement(s).accesses[a].array,
                    _without_self(key, rel), False)
        if dep is not None:
            out.append(dep)
    return out


#: a pair (u, v) of ``kind`` is killed by a write w between them: (u -> w of kind1) then (w -> v of kind2)
_KILL = {"flow": ("output", "flow"), "anti": ("anti", "output"), "output": ("output", "output"),
         "input": ("anti", "flow")}


@memo("analysis.not_killed", named=(0,))
def _not_killed(rel: isl.Map, same_statement: bool, kills: tuple[tuple[isl.Map, isl.Map], ...]) -> isl.Map:
    """``rel`` (less the identity when source and sink are one statement) minus ``r1 ; r2`` for every
    kill ``(r1, r2)``. Remembered by content like :func:`_ordered_pairs` (``rel``'s dimension names in the
    key: the result's are those of ``rel``)."""
    if same_statement:
        rel = rel.subtract(isl.Map.identity(rel.get_space()))
    for r1, r2 in kills:
        tick()
        rel = rel.subtract(r1.apply_range(r2))
        if rel.is_empty():
            break
    return rel


def _value_based(scop: Scop, st: LoopStructure, kind: str) -> list[Dependence]:
    """Memory-based pairs minus those with a write ``w`` to the element strictly between:
    ``D_value = D_memory - U_w (D_1(u -> w) ; D_2(w -> v))`` (``;`` is composition, each ``D`` relates
    accesses to one element, so the composed pairs touch the same element as ``w``)."""
    first, second = _KILL[kind]
    writes = [(s.name, a.index) for s in scop.statements for a in s.writes]
    to_w, from_w = _pairs(scop, st, first), _pairs(scop, st, second)
    out = []
    for key, rel in _pairs(scop, st, kind).items():
        s, a, t, b = key
        kills = []
        for w in writes:
            tick()
            r1 = to_w.get((s, a) + w)
            r2 = from_w.get(w + (t, b))
            if r1 is not None and r2 is not None:
                kills.append((r1, r2))
        rel = _not_killed(rel, s == t, tuple(kills))
        dep = _make(scop, st, kind, s, a, t, b, scop.statement(s).accesses[a].array, rel, True)
        if dep is not None:
            out.append(dep)
    return out
