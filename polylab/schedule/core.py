"""The :class:`Schedule` value: one affine time vector per statement instance.

A schedule gives every instance ``S[x]`` of every statement a time vector ``theta_S(x)`` in ``Z^n`` (the
same ``n`` for all statements; shorter vectors are padded with zeros); instances run in lexicographic order
of their time vectors. The simple view is one isl map per statement, ``{ S[x] -> [theta_S(x)] }``; the
tree view (:attr:`Schedule.tree`) is the isl schedule tree that code generation consumes: nested *bands*
(consecutive dimensions), each marked *permutable* when it can be tiled, whose members are marked
*coincident* when they may run in parallel (isl's conventions).

Everything about order is decided exactly on the set of *time distances*

    Delta = { theta_T(y) - theta_S(x) : (S[x] -> T[y]) a dependence }      (an isl set in Z^n)

* legal          iff every delta is lexicographically positive;
* dimension d is parallel (coincident) iff no delta has ``delta_0 = ... = delta_{d-1} = 0, delta_d != 0``;
* dimensions [s, e) form a permutable band iff every delta with ``delta_0 = ... = delta_{s-1} = 0`` has
  ``delta_k >= 0`` for ``s <= k < e`` (then any order of those loops, and rectangular tiling, is legal).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping, Protocol, Sequence

import islpy as isl

from polylab import render
from polylab.errors import ScheduleError
from polylab.model import Scop, Statement
from polylab.model.budget import budgeted, isolated, tick
from polylab.model.islutil import has_large_coefficients, in_child, maps_of, union_all
from polylab.model.memo import memo
from polylab.schedule.deps import Dep, dependences

if TYPE_CHECKING:
    from polylab.schedule.optimize.report import OptimizeReport


@memo("schedule.pair_deltas", named=(1, 2))
def pair_deltas(relation: isl.Map, theta_s: isl.Map, theta_t: isl.Map) -> isl.Set:
    """``{ theta_t(y) - theta_s(x) : x -> y in relation }``: the time distances of one statement pair's
    dependences. Remembered by content (:mod:`polylab.model.memo`, the time maps' dimension names in the
    key): the candidates of a search change a few statements' time maps at a time, so most pairs'
    distances are those of a schedule already seen (adi: 8 schedules of 27 statements, 102 pairs each)."""
    return relation.apply_domain(theta_s).apply_range(theta_t).deltas()


def on_domains(relation: isl.Map, scop: Scop, source: str, sink: str) -> isl.Map:
    """``relation`` (pairs ``source[x] -> sink[y]``) with the parameters of the context, restricted to the
    two statements' iteration domains."""
    pspace = scop.context.get_space()
    return (relation.align_params(pspace).intersect_domain(scop.statement(source).domain.align_params(pspace))
            .intersect_range(scop.statement(sink).domain.align_params(pspace)))


#: the names of the relations are those of the SCoP's statements, which is compared by identity
@memo("schedule.pair_relations", maxsize=64, named=())
def pair_relations(deps: tuple[Dep, ...], scop: Scop) -> tuple[tuple[str, str, isl.Map], ...]:
    """``(S, T, R_ST)`` for every statement pair with a dependence: ``R_ST`` the union of the dependences
    from ``S`` to ``T``, restricted to the two iteration domains, parameters aligned with the context.
    Remembered per dependence tuple and SCoP (a search's schedules share them)."""
    out: dict[tuple[str, str], isl.Map] = {}
    for d in deps:
        key = (d.source, d.sink)
        rel = on_domains(d.relation, scop, d.source, d.sink)
        out[key] = out[key].union(rel) if key in out else rel
    return tuple((src, snk, rel) for (src, snk), rel in out.items())


@dataclass(frozen=True)
class Band:
    """Dimensions ``start .. start + size - 1`` of the schedule, one band node of the tree."""

    start: int
    size: int
    permutable: bool

    @property
    def dims(self) -> range:
        return range(self.start, self.start + self.size)


# --------------------------------------------------------------------------------------------------------
# isl helpers on per-statement affine functions
def stmt_affs(m: isl.Map) -> list[isl.PwAff]:
    """The time dimensions of a single-valued map ``{ S[x] -> [t0, ..] }`` as piecewise affine functions."""
    pma = isl.PwMultiAff.from_map(m)
    return [pma.get_pw_aff(k) for k in range(m.dim(isl.dim_type.out))]


def zero_aff(stmt: Statement, params_space: isl.Space) -> isl.PwAff:
    space = stmt.domain.get_space().align_params(params_space)
    return isl.PwAff.from_aff(isl.Aff.zero_on_domain_space(space))


def floor_div(aff: isl.PwAff, size: int) -> isl.PwAff:
    """``floor(aff / size)``: the tile coordinate of ``aff`` for tiles of ``size`` (exact, isl's floor)."""
    return aff.scale_down_val(isl.Val.int_from_si(aff.get_ctx(), size)).floor()


def skewed(b: isl.PwAff, a: isl.PwAff, f: int) -> isl.PwAff:
    """``b + f a``: loop ``b`` skewed by ``f`` times loop ``a`` (``b`` itself when ``f = 0``)."""
    return b.add(a.scale_val(isl.Val.int_from_si(a.get_ctx(), f))) if f else b


def const_aff(stmt: Statement, params_space: isl.Space, value: int) -> isl.PwAff:
    return zero_aff(stmt, params_space).add_constant_val(isl.Val.int_from_si(params_space.get_ctx(), value))


def iter_aff(stmt: Statement, params_space: isl.Space, k: int) -> isl.PwAff:
    space = stmt.domain.get_space().align_params(params_space)
    ls = isl.LocalSpace.from_space(space)
    return isl.PwAff.from_aff(isl.Aff.var_on_domain(ls, isl.dim_type.set, k))


def map_from_affs(stmt: Statement, params_space: isl.Space, affs: Sequence[isl.PwAff]) -> isl.Map:
    """``{ S[x] -> [affs(x)] }`` (an anonymous range tuple)."""
    if not affs:
        dom = stmt.domain.align_params(params_space)
        return isl.Map.from_domain_and_range(isl.Set.universe(dom.get_space()),
                                             isl.Set.universe(isl.Space.set_alloc(
                                                 params_space.get_ctx(), 0, 0).align_params(params_space)))
    m = isl.Map.from_pw_aff(affs[0])
    for a in affs[1:]:
        m = m.flat_range_product(isl.Map.from_pw_aff(a))
    return m.reset_tuple_id(isl.dim_type.out)


def lexmin_point(s: isl.Set) -> isl.Point:
    """The lexicographically smallest point of ``s`` (isl ``lexmin``); if isl gives up on an unusual set
    (local variables it cannot eliminate), after simplification, and as a last resort any point. A set with
    large coefficients (:data:`~polylab.model.islutil.LARGE_COEFFICIENT`) is solved in a child process,
    where the seconds budget can stop it: isl's integer programming on such numbers can take minutes in one
    call, before its operation limit or :func:`~polylab.model.budget.tick` is reached."""
    for attempt in (lambda x: x, lambda x: x.detect_equalities().remove_redundancies().coalesce()):
        try:
            x = attempt(s)
            return in_child(x.lexmin, x, when=has_large_coefficients(x)).sample_point()
        except isl.Error:
            continue
    return s.sample_point()


@budgeted("the Farkas step")
def farkas_coefficients(s: isl.Set) -> isl.Set:
    """The affine form of the Farkas lemma, by isl: the set of ``(c0, c_params, c)`` such that
    ``c0 + c_params . p + c . x >= 0`` for every ``(p, x)`` in ``s`` (rationally), as a flat set.

    isl's ``coefficients`` needs sets without local (existential) variables; a basic set that has some
    is *lifted* (its local variables become ordinary ones) and their coefficients are fixed to 0, which
    gives exactly the affine forms valid on the projection. For a union, the valid forms are those valid
    on every piece."""
    n = s.dim(isl.dim_type.set)
    np_ = s.dim(isl.dim_type.param)
    width = 1 + np_ + n
    out = None
    for b in s.get_basic_sets():
        tick()
        if _free_dims(b) >= ISOLATE_DIMS or b.dim(isl.dim_type.div):
            # one isl call that can take minutes and counts no operations: in a child process, waited
            # for in Python (bounded in seconds, interruptible); its isl text is exact
            c = isl.Set(isolated(lambda: _anonymous_text(_basic_coefficients(b, n, width))))
        else:
            c = _basic_coefficients(b, n, width)
        out = c if out is None else out.intersect(c)
    if out is None:
        out = isl.Set.universe(isl.Space.set_alloc(s.get_ctx(), 0, width))
        for k in range(width):
            out = out.set_dim_name(isl.dim_type.set, k, f"x{k}")
    return out


#: basic sets with at least this many free dimensions (:func:`_free_dims`), or with local variables, get
#: their Farkas coefficients in a child process (:func:`polylab.model.budget.isolated`); below it isl
#: answers in milliseconds (the 4-deep ``a[i0 + i1 + i2 + i3]`` has 7 and takes about a second, heat3d's
#: have 5 and take 1 ms; the shipped kernels' searches make 394 calls, none with local variables, at most 5
#: free dimensions), so the fork is paid only where an interrupt would otherwise wait. Local variables
#: (floor, mod, tiles) make isl's lifting slow at any size: sweep2d's tiled ``optimize; wavefront`` has a
#: distance set with 6 free dimensions, 3 of them local, that took minutes (issue 28, item 7)
ISOLATE_DIMS = 6


def _free_dims(b: isl.BasicSet) -> int:
    """Dimensions and local variables of ``b`` less its equalities: what ``coefficients`` really works in."""
    equalities = sum(1 for c in b.get_constraints() if c.is_equality())
    return b.dim(isl.dim_type.set) + b.dim(isl.dim_type.div) - equalities


def _basic_coefficients(b: isl.BasicSet, n: int, width: int) -> isl.Set:
    """The valid affine forms ``(c0, c_params, c)`` of one basic set (see :func:`farkas_coefficients`)."""
    if b.dim(isl.dim_type.div):
        lifted = isl.Set.from_basic_set(b.lift()).flatten()
    else:
        lifted = isl.Set.from_basic_set(b)
    c = lifted.coefficients()
    c = (isl.Set.from_basic_set(c) if isinstance(c, isl.BasicSet) else c).flatten()
    extra = lifted.dim(isl.dim_type.set) - n
    for k in range(extra):
        c = c.fix_val(isl.dim_type.set, width + k, isl.Val.int_from_si(c.get_ctx(), 0))
    if extra:
        c = c.project_out(isl.dim_type.set, width, extra)
    return c


def _anonymous_text(s: isl.Set) -> str:
    """``s`` as isl text with its dimensions named ``x0, x1, ...`` (no name a program chose, so it reads
    back whatever the program called its variables)."""
    s = s.reset_tuple_id()
    for k in range(s.dim(isl.dim_type.set)):
        s = s.set_dim_name(isl.dim_type.set, k, f"x{k}")
    return str(s)


def is_constant(aff: isl.PwAff) -> bool:
    return aff.is_cst()


def const_value(aff: isl.PwAff) -> int | None:
    """The value of a constant time dimension (None when it is not one constant)."""
    if not aff.is_cst():
        return None
    vals = {int(a.get_constant_val().to_python()) for _, a in aff.get_pieces()}
    return vals.pop() if len(vals) == 1 else None


def aff_text(aff: isl.PwAff, stmt: Statement) -> str:
    """``i + j`` for ``{ S[i, j] -> [(i + j)] }`` (isl's own notation for anything piecewise)."""
    s = str(aff)
    body = s[s.index("{") + 1: s.rindex("}")].strip()
    if ";" in body:
        return body
    rng = body.split("->", 1)[1].strip() if "->" in body else body
    if ":" in rng:
        return rng
    rng = rng.strip()
    if rng.startswith("[") and rng.endswith("]"):
        rng = rng[1:-1].strip()
    if rng.startswith("(") and rng.endswith(")") and rng.count("(") == 1:
        rng = rng[1:-1]
    return rng


def _distance_vars(n: int) -> dict:
    """The coordinates ``d0, .., d_{n-1}`` of a time distance (and ``0``) as affine functions on ``Z^n``."""
    return isl.make_zero_and_vars([f"d{k}" for k in range(n)])


@memo("schedule.zero_before", maxsize=None, named=())
def zero_before(n: int, d: int) -> isl.Set:
    """``{ delta in Z^n : delta_0 = .. = delta_{d-1} = 0 }`` (built once per ``(n, d)``; isl sets are values,
    so sharing one is safe)."""
    v = _distance_vars(n)
    out = isl.Set.universe(v[0].get_domain_space())
    for k in range(d):
        out = out.intersect(v[f"d{k}"].eq_set(v[0]))
    return out


@memo("schedule.first_nonzero", maxsize=None, named=())
def first_nonzero(n: int, d: int, sign: str) -> isl.Set:
    """``{ delta in Z^n : delta_0 = .. = delta_{d-1} = 0, delta_d <sign> 0 }`` for ``sign`` one of ``"<"``,
    ``">"``, ``"!="``: the distances that dimension ``d`` is the first to order (backwards, forwards, or
    either way)."""
    v = _distance_vars(n)
    x, zero = v[f"d{d}"], v[0]
    cond = {"<": x.lt_set, ">": x.gt_set, "!=": x.ne_set}[sign](zero)
    return zero_before(n, d).intersect(cond)


def negative_in(n: int, start: int, stop: int) -> isl.Set:
    """``{ delta in Z^n : delta_0 = .. = delta_{start-1} = 0, delta_k < 0 for some start <= k < stop }``."""
    v = _distance_vars(n)
    neg = isl.Set.empty(v[0].get_domain_space())
    for k in range(start, stop):
        neg = neg.union(v[f"d{k}"].lt_set(v[0]))
    return zero_before(n, start).intersect(neg)


#: the cached properties of a :class:`Schedule` that depend only on its SCoP, maps and dependences (not on
#: the marks, steps, notes or provenance), carried over by :meth:`Schedule.relabelled`
MAP_FACTS = ("affs", "union_map", "dependences", "deltas", "parallel_dims", "bands")


class StepReport(Protocol):
    """What a step reports: a value that writes itself as text (the storage steps' reports)."""

    def text(self) -> str: ...


@dataclass(frozen=True)
class Tiles:
    """The tiles a ``tile`` step made: the tile dimensions, the point dimensions they tile, the sizes."""

    dims: tuple[int, ...]
    points: tuple[int, ...]
    sizes: tuple[int, ...]


@dataclass(frozen=True)
class Provenance:
    """What the steps that made a schedule found, one typed field per kind of step: the optimizer's report
    (:mod:`polylab.schedule.optimize`), each storage step's name and report in order (the storage layer's
    steps), the tiles of the last ``tile`` step. Steps after them keep them."""

    optimize: "OptimizeReport | None" = None
    storage: tuple[tuple[str, StepReport], ...] = ()
    tiles: Tiles | None = None


NO_PROVENANCE = Provenance()


# --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Schedule(render.Rendered):
    """A schedule of a SCoP (an immutable value; every transformation returns a new one).

    ``maps``: statement name -> ``{ S[x] -> [t_0, ..., t_{n-1}] }`` (all with the same ``n``).
    ``steps``: the recipe steps that produced it (``("wavefront", "tile(32, 32)")``).
    ``marked``: the dimensions marked parallel (coincident in :attr:`tree`); only dimensions that are
    exactly parallel are ever marked (see :func:`polylab.schedule.parallel`).
    ``notes``: explanations attached by the steps (the search's choices, the wavefront's constraints).
    ``deps``: the dependences it must respect (None: the memory-based ones of its SCoP).
    ``provenance``: what the steps that made it found (:class:`Provenance`).
    """

    scop: Scop
    maps: Mapping[str, isl.Map]
    steps: tuple[str, ...] = ()
    marked: frozenset[int] = frozenset()
    notes: tuple[str, ...] = ()
    deps: tuple[Dep, ...] | None = field(default=None, repr=False)
    provenance: Provenance = field(default=NO_PROVENANCE, repr=False)

    # -- construction ---------------------------------------------------------------------------------
    @classmethod
    def from_maps(cls, scop: Scop, maps: Mapping[str, isl.Map], *, steps: Sequence[str] = (),
                  marked: frozenset[int] = frozenset(), notes: Sequence[str] = (), deps=None,
                  provenance: Provenance = NO_PROVENANCE) -> "Schedule":
        """Normalise per-statement maps (align parameters, pad with zeros) into a Schedule."""
        pspace = scop.context.get_space()
        maps = dict(maps)
        for st in scop.statements:  # a statement that never runs needs no time
            if st.name not in maps and st.domain.intersect_params(scop.context).is_empty():
                maps[st.name] = map_from_affs(st, pspace, [])
        missing = [s.name for s in scop.statements if s.name not in maps]
        if missing:
            raise ScheduleError(f"the schedule does not mention {', '.join(missing)}",
                                hint="give a time vector for every statement: "
                                     + "; ".join(f"{s.name}[{', '.join(s.iterators)}] -> [...]"
                                                 for s in scop.statements))
        affs = {s.name: stmt_affs(maps[s.name].align_params(pspace)) for s in scop.statements}
        dep_tuple = dependences(scop, deps) if deps is not None else None
        return cls._of_affs(scop, affs, tuple(steps), frozenset(marked), tuple(notes), dep_tuple, provenance)

    @classmethod
    def _of_affs(cls, scop: Scop, affs: Mapping[str, Sequence[isl.PwAff]], *fields) -> "Schedule":
        """The schedule whose statement ``S`` has the time vector ``affs[S]``, padded with zeros to the
        longest; ``fields``: the dataclass fields after ``maps``."""
        pspace = scop.context.get_space()
        n = max((len(affs[s.name]) for s in scop.statements), default=0)
        norm = {s.name: map_from_affs(s, pspace, [a.align_params(pspace) for a in affs[s.name]]
                                      + [zero_aff(s, pspace)] * (n - len(affs[s.name])))
                for s in scop.statements}
        return cls(scop, MappingProxyType(norm), *fields)

    def with_maps(self, maps: Mapping[str, isl.Map], step: str | None, *, marked: frozenset[int] = frozenset(),
                  notes: Sequence[str] = (), provenance: Provenance = NO_PROVENANCE) -> "Schedule":
        """A new schedule of the same SCoP (same dependences) after one more step."""
        out = Schedule.from_maps(self.scop, maps, steps=self.steps + ((step,) if step else ()),
                                 marked=marked, notes=tuple(notes), provenance=provenance)
        return replace(out, deps=self.deps)

    def with_affs(self, affs: Mapping[str, Sequence[isl.PwAff]], step: str | None, *,
                  marked: frozenset[int] = frozenset(), notes: Sequence[str] = (),
                  provenance: Provenance = NO_PROVENANCE) -> "Schedule":
        """Like :meth:`with_maps`, from the time vectors as affine functions (one map built per statement)."""
        return Schedule._of_affs(self.scop, affs, self.steps + ((step,) if step else ()), frozenset(marked),
                                 tuple(notes), self.deps, provenance)

    def relabelled(self, **changes) -> "Schedule":
        """``dataclasses.replace(self, **changes)`` for the fields other than the SCoP, the maps and the
        dependences (steps, marks, notes, provenance), keeping the exact facts already computed that depend
        only on those three (:data:`MAP_FACTS`: time vectors, distances, parallel dimensions, bands)."""
        if {"scop", "maps", "deps"} & changes.keys():
            raise ValueError("relabelled keeps the SCoP, the maps and the dependences; use with_maps")
        out = replace(self, **changes)
        for name in MAP_FACTS:
            if name in self.__dict__:
                out.__dict__[name] = self.__dict__[name]
        return out

    # -- simple views ---------------------------------------------------------------------------------
    @property
    def n_dims(self) -> int:
        return next(iter(self.maps.values())).dim(isl.dim_type.out) if self.maps else 0

    @cached_property
    def affs(self) -> Mapping[str, tuple[isl.PwAff, ...]]:
        """Statement name -> the time dimensions as piecewise affine functions of its iterators."""
        return MappingProxyType({name: tuple(stmt_affs(m)) for name, m in self.maps.items()})

    @cached_property
    def union_map(self) -> isl.UnionMap:
        """``{ S[x] -> [theta_S(x)] }`` for every statement, restricted to the iteration domains."""
        out = isl.UnionMap.empty(self.scop.context.get_space())
        for s in self.scop.statements:
            out = out.union(isl.UnionMap.from_map(
                self.maps[s.name].intersect_domain(s.domain.align_params(self.scop.context.get_space()))))
        return out

    def expressions(self, name: str) -> list[str]:
        """The time dimensions of statement ``name`` as text (``['i + j', 'j']``)."""
        stmt = self.scop.statement(name)
        return [aff_text(a, stmt) for a in self.affs[name]]

    def is_scalar(self, d: int) -> bool:
        """True when dimension ``d`` is a constant for every statement (it only orders statements)."""
        return all(is_constant(a[d]) for a in self.affs.values())

    @property
    def loop_dims(self) -> tuple[int, ...]:
        """The dimensions that become loops (not constant for at least one statement)."""
        return tuple(d for d in range(self.n_dims) if not self.is_scalar(d))

    def text(self) -> str:
        """The schedule as isl text, one piece per statement."""
        parts = []
        for s in self.scop.statements:
            parts.append(f"{s.name}[{', '.join(s.iterators)}] -> [{', '.join(self.expressions(s.name))}]")
        params = f"[{', '.join(self.scop.parameters)}] -> " if self.scop.parameters else ""
        return params + "{ " + "; ".join(parts) + " }"

    # -- dependences and time distances ---------------------------------------------------------------
    @cached_property
    def dependences(self) -> tuple[Dep, ...]:
        """The dependences the schedule must respect: ``deps`` when given, else the memory-based flow, anti
        and output dependences of its SCoP (:func:`polylab.schedule.deps.dependences`)."""
        return self.deps if self.deps is not None else dependences(self.scop)

    @cached_property
    def deltas(self) -> isl.Set:
        """``Delta``: the time distances ``theta(v) - theta(u)`` of all dependent pairs ``u -> v``,
        the union over statement pairs ``(S, T)`` of ``{ theta_T(y) - theta_S(x) : S[x] -> T[y] in R_ST }``
        (``R_ST`` the union of the dependences from ``S`` to ``T`` on the two domains, see
        :func:`pair_relations` and :func:`pair_deltas`)."""
        pspace = self.scop.context.get_space()
        space = isl.Space.set_alloc(self.scop.context.get_ctx(), 0, self.n_dims).align_params(pspace)
        out = union_all([pair_deltas(rel, self.maps[src].align_params(pspace),
                                     self.maps[snk].align_params(pspace)).align_params(space)
                         for src, snk, rel in pair_relations(self.dependences, self.scop)],
                        isl.Set.empty(space))
        # not coalesced: the queries below intersect it with one constraint set and test emptiness, which
        # costs less on the raw union than coalescing it does (deriche: 0.1 s per schedule)
        return out.intersect_params(self.scop.context)

    def _within(self, distances: isl.Set) -> isl.Set:
        """The time distances of the schedule in ``distances`` (a parameter-free set of ``Z^n``)."""
        return self.deltas.intersect(distances.align_params(self.deltas.get_space()))

    def open_deltas(self, start: int) -> isl.Set:
        """The time distances of the dependences not carried before dimension ``start``:
        ``{ delta in Delta : delta_0 = ... = delta_{start-1} = 0 }``."""
        return self._within(zero_before(self.n_dims, start))

    def is_coincident(self, d: int) -> bool:
        """Exactly: no dependence whose time distance is zero on dimensions ``< d`` is carried by ``d``."""
        return self._within(first_nonzero(self.n_dims, d, "!=")).is_empty()

    def carries(self, d: int) -> bool:
        """True when dimension ``d`` carries a dependence (distance 0 before ``d``, positive at ``d``)."""
        return not self._within(first_nonzero(self.n_dims, d, ">")).is_empty()

    def is_permutable(self, start: int, stop: int) -> bool:
        """Exactly: dimensions ``start .. stop-1`` have non-negative distances for every dependence not
        already carried before ``start`` (then they may be interchanged and tiled)."""
        return self._within(negative_in(self.n_dims, start, stop)).is_empty()

    @cached_property
    def parallel_dims(self) -> tuple[int, ...]:
        """The loop dimensions that may run in parallel (exactly coincident), whether marked or not."""
        return tuple(d for d in self.loop_dims if self.is_coincident(d))

    @cached_property
    def bands(self) -> tuple[Band, ...]:
        """Maximal permutable bands of consecutive dimensions, outermost first (exact)."""
        out, s, n = [], 0, self.n_dims
        while s < n:
            e = s + 1
            while e < n and self.is_permutable(s, e + 1):
                e += 1
            out.append(Band(s, e - s, self.is_permutable(s, e)))
            s = e
        return tuple(out)

    @property
    def kinds(self) -> tuple[str, ...]:
        """``'space'`` for dimensions marked parallel, ``'time'`` for loops that run in sequence,
        ``'scalar'`` for dimensions that only order statements."""
        return tuple("scalar" if self.is_scalar(d) else ("space" if d in self.marked else "time")
                     for d in range(self.n_dims))

    # -- tree -----------------------------------------------------------------------------------------
    @cached_property
    def tree(self) -> isl.Schedule:
        """The isl schedule tree: one band node per :attr:`bands` entry, permutable and coincident flags
        set (coincident = marked parallel)."""
        pspace = self.scop.context.get_space()
        sched = isl.Schedule.from_domain(self.scop.domain)
        if self.n_dims == 0:
            return sched
        for band in reversed(self.bands):
            part = whole = isl.UnionMap.empty(pspace)
            for s in self.scop.statements:
                m = map_from_affs(s, pspace, list(self.affs[s.name][band.start: band.start + band.size]))
                whole = whole.union(isl.UnionMap.from_map(m))
                part = part.union(isl.UnionMap.from_map(m.intersect_domain(s.domain.align_params(pspace))))
            # no statement runs at all (``for (i = 1; i > 2; i++)``): isl needs a non-empty map to know
            # the band's space; the functions on the whole spaces give the same (empty) set of instances
            sched = sched.insert_partial_schedule(isl.MultiUnionPwAff.from_union_map(
                whole if part.is_empty() else part))
        node = sched.get_root().child(0)
        for band in self.bands:
            node = node.band_set_permutable(1 if band.permutable else 0)
            for k in range(band.size):
                node = node.band_member_set_coincident(k, 1 if band.start + k in self.marked else 0)
            node = node.child(0)
        return node.get_schedule()

    # -- displays -------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"<Schedule {self.text()}>"


def original(scop: Scop, deps=None) -> Schedule:
    """The source order as a Schedule: the SCoP's original schedule tree, flattened (sequence positions
    become scalar dimensions), one time vector per statement."""
    maps: dict[str, isl.Map] = {}
    smap = scop.schedule.get_map()
    for m in maps_of(smap):
        name = m.get_tuple_name(isl.dim_type.in_)
        maps[name] = m.reset_tuple_id(isl.dim_type.out)
    return Schedule.from_maps(scop, maps, steps=(), deps=deps)
