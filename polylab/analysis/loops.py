"""The loops of the original schedule: which schedule dimensions are loops, and which loops two statements share.

A SCoP's original schedule is an isl schedule tree: a *band* member per loop, a *sequence* (or *set*) node
where statements or loops follow each other in the text. Walking the tree from the root to the leaf of a
statement ``S`` gives ``S``'s time vector ``theta_S(x) = (d_0, d_1, ...)``: one coordinate per band member
(an affine function of the iterators, usually the iterator itself) and one constant per sequence node (the
position of ``S``'s branch). Vectors are padded with zeros to a common length, so that the original order of
instances is ``u before v  <=>  theta(u) <lex theta(v)``.

A band member is a **loop** of ``S`` when its function involves ``S``'s iterators; the loops of ``S``,
outermost first, are its loop **levels** 1, 2, ... (the textbook numbering: level 1 is the outermost loop).
Coordinates that involve no iterator are not loops: sequence positions, integer band members, and band
members that depend on the parameters only (a copy-out scheduled at time ``n - 1``), kept exactly.
A statement that never runs (empty domain) keeps the loops of the bands that give it a function. Two statements **share** a loop when it is the same
band member of the same tree node, reached through the same branch of every sequence above it: the loops of
the longest common prefix of their tree paths. This definition works for imperfect nests (``lu``, ``gemm``):
``gemm``'s ``S0`` (``C[i][j] *= beta``) and ``S1`` share only the ``i`` loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import islpy as isl

from polylab.errors import AnalysisError
from polylab.model.budget import tick
from polylab.model.memo import ObjectMemo
from polylab.model.scop import Scop


@dataclass(frozen=True)
class ScheduleDim:
    """One coordinate of a statement's time vector.

    ``key`` identifies the tree node (and band member) it comes from: two statements share a coordinate
    exactly when their keys (and, for non-loop coordinates, their values) agree. ``function`` is the band
    member's affine function for this statement (a ``PwAff`` on its domain) when it involves the
    iterators (a **loop**), else None. A non-loop coordinate is the integer ``value`` (a sequence
    position, or a band member that is a constant), or, when it depends on the parameters (``n - 1``) or
    is piecewise, the exact function ``constant`` (a ``PwAff`` on the statement's domain that involves no
    iterator; ``value`` is then unused). No term is ever dropped: :meth:`LoopStructure.time_map` uses the
    exact function.
    """

    key: tuple
    function: isl.PwAff | None
    value: int = 0
    name: str = ""
    constant: isl.PwAff | None = None
    #: the parameter-only affine function of a non-loop coordinate (None when it is piecewise)
    param_value: isl.Aff | None = None

    @property
    def is_loop(self) -> bool:
        return self.function is not None

    def same_as(self, other: "ScheduleDim") -> bool:
        if self.key != other.key or self.is_loop != other.is_loop:
            return False
        if self.is_loop:
            return True
        if self.constant is None and other.constant is None:
            return self.value == other.value
        a, b = self.param_value, other.param_value
        if a is None or b is None:  # piecewise: shared only when it is the very same function
            return self.constant is other.constant
        try:
            return a.align_params(b.get_space()).plain_is_equal(b.align_params(a.get_space()))
        except isl.Error:  # pragma: no cover - defensive
            return False

    def pw_aff(self, domain: isl.Set) -> isl.PwAff:
        """The coordinate as a function on ``domain`` (the statement's domain)."""
        if self.function is not None:
            return self.function
        if self.constant is not None:
            return self.constant
        return isl.PwAff.from_aff(isl.Aff.val_on_domain(
            isl.LocalSpace.from_space(domain.get_space()), isl.Val.int_from_si(domain.get_ctx(), self.value)))


def _aff_name(pa: isl.PwAff, domain: isl.Set) -> str:
    """``i`` when the function is an iterator, otherwise its affine expression as isl prints it."""
    affs: list = []
    pa.foreach_piece(lambda _s, aff: affs.append(aff))
    if len(affs) == 1:
        aff = affs[0]
        n = aff.dim(isl.dim_type.in_)
        coeffs = [aff.get_coefficient_val(isl.dim_type.in_, k).to_python() for k in range(n)]
        params = [aff.get_coefficient_val(isl.dim_type.param, k).to_python()
                  for k in range(aff.dim(isl.dim_type.param))]
        if (aff.get_constant_val().to_python() == 0 and not any(params)
                and sorted(coeffs) == [0] * (n - 1) + [1] and not aff.dim(isl.dim_type.div)):
            k = coeffs.index(1)
            return domain.get_dim_name(isl.dim_type.set, k) or f"x{k}"
    text = str(pa)
    return text[text.find("[(") + 2: text.rfind(")]")] if "[(" in text else text


def _involves_iterators(pa: isl.PwAff) -> bool:
    found: list[bool] = []

    def piece(_set, aff):
        n = aff.dim(isl.dim_type.in_)
        found.append(any(not aff.get_coefficient_val(isl.dim_type.in_, k).is_zero() for k in range(n))
                     or (aff.dim(isl.dim_type.div) > 0 and aff.involves_dims(isl.dim_type.in_, 0, n)))

    pa.foreach_piece(piece)
    return any(found)


@dataclass(frozen=True, eq=False)
class LoopStructure:
    """The time vectors and loop levels of every statement, derived from ``scop.schedule``.

    ``dims[S]`` is the tuple of :class:`ScheduleDim` of statement ``S`` (all of the same length).
    """

    scop: Scop
    dims: dict[str, tuple[ScheduleDim, ...]]
    #: the whole time maps built so far (:meth:`time_map` without ``positions``), one per statement: the
    #: dependence analysis asks for them once per pair of accesses and kind
    time_maps: dict[str, isl.Map] = field(default_factory=dict, repr=False)

    @staticmethod
    def of(scop: Scop) -> "LoopStructure":
        """The loop structure of ``scop``, read from its schedule tree once per SCoP (a SCoP is an
        immutable value compared by identity; each analysis of one asks for it: adi's search analyses its
        three SCoPs seven times), its time maps shared by every analysis of the SCoP."""
        def read() -> tuple[dict, dict]:
            built = _build(scop)
            return built.dims, built.time_maps

        known = _READ.get(scop, read)
        return LoopStructure(scop, *known)

    # -- per statement --------------------------------------------------------------------------------
    def loop_dims(self, stmt: str) -> tuple[int, ...]:
        """Positions in the time vector of ``stmt``'s loops, outermost first (level l is entry l-1)."""
        return tuple(k for k, d in enumerate(self.dims[stmt]) if d.is_loop)

    def loop_names(self, stmt: str) -> tuple[str, ...]:
        return tuple(self.dims[stmt][k].name for k in self.loop_dims(stmt))

    def depth(self, stmt: str) -> int:
        return len(self.loop_dims(stmt))

    def loop_key(self, stmt: str, level: int) -> tuple:
        """The identity of the loop at ``level`` (1-based) around ``stmt``."""
        return self.dims[stmt][self.loop_dims(stmt)[level - 1]].key

    def common_prefix(self, s: str, t: str) -> int:
        """Length of the common prefix of the time vectors of ``s`` and ``t`` (same node, same branch)."""
        n = 0
        for a, b in zip(self.dims[s], self.dims[t]):
            if not a.same_as(b):
                break
            n += 1
        return n

    def common_loops(self, s: str, t: str) -> tuple[int, ...]:
        """Time-vector positions of the loops that ``s`` and ``t`` share, outermost first."""
        n = self.common_prefix(s, t)
        return tuple(k for k in range(n) if self.dims[s][k].is_loop)

    def time_map(self, stmt: str, positions: tuple[int, ...] | None = None) -> isl.Map:
        """``{ S[x] -> [theta_S(x)] }`` restricted to ``S``'s domain (only ``positions`` when given)."""
        if positions is None:
            if stmt not in self.time_maps:
                self.time_maps[stmt] = self._time_map(stmt, None)
            return self.time_maps[stmt]
        return self._time_map(stmt, positions)

    def _time_map(self, stmt: str, positions: tuple[int, ...] | None) -> isl.Map:
        st = self.scop.statement(stmt)
        dims = self.dims[stmt]
        ctx = st.domain.get_ctx()
        m = isl.Map.from_domain_and_range(st.domain, isl.Set.universe(isl.Space.set_alloc(ctx, 0, 0)))
        for k in (range(len(dims)) if positions is None else positions):
            m = m.flat_range_product(isl.Map.from_pw_aff(dims[k].pw_aff(st.domain)))
        return m.intersect_domain(st.domain)

    @cached_property
    def schedule_map(self) -> isl.UnionMap:
        """The original schedule as one union map (the same order as ``scop.schedule_map``)."""
        out = isl.UnionMap.empty(self.scop.context.get_space())
        for s in self.scop.statements:
            out = out.union(isl.UnionMap.from_map(self.time_map(s.name)))
        return out


#: per SCoP: its time dimensions and time maps (:meth:`LoopStructure.of`); the entries hold no reference to
#: the SCoP, so they go when it does
_READ: ObjectMemo[Scop, tuple[dict, dict]] = ObjectMemo("analysis.loop_structure")


def _build(scop: Scop) -> LoopStructure:
    """The :class:`LoopStructure` of ``scop``, read from its original schedule tree."""
    return _TreeReader(scop).read()


class _TreeReader:
    """One walk over the original schedule tree: the time dimensions of every statement, band by band.

    Statements that never run (empty domains within the context) are dropped by isl from domains and
    filters, so their place in the tree is found from the band functions that mention them (the parser keeps
    one per enclosing loop)."""

    def __init__(self, scop: Scop) -> None:
        self.scop = scop
        self.domains = {s.name: s.domain for s in scop.statements}
        self.empty = {s.name for s in scop.statements if s.domain.intersect_params(scop.context).is_empty()}
        self.found: dict[str, list[ScheduleDim]] = {}

    def read(self) -> LoopStructure:
        root = self.scop.schedule.get_root()
        names0 = self.stmts_of(root)
        names0 += sorted(self.empty - set(names0))
        self.walk(root, (), {n: [] for n in names0}, names0)
        missing = [s.name for s in self.scop.statements if s.name not in self.found]
        if missing:
            raise AnalysisError(f"the original schedule does not schedule {', '.join(missing)}")
        width = max((len(d) for d in self.found.values()), default=0)
        out = {n: tuple(d) + tuple(ScheduleDim(("pad", k), None, 0) for k in range(len(d), width))
               for n, d in self.found.items()}
        return LoopStructure(self.scop, {s.name: out[s.name] for s in self.scop.statements})

    def mentioned(self, node) -> set[str]:
        """The empty statements that some band of the subtree at ``node`` has a function for."""
        out: set[str] = set()
        if not self.empty:
            return out
        if node.get_type() == isl.schedule_node_type.band:
            mupa = node.band_get_partial_schedule()
            for m in range(node.band_n_member()):
                pal = mupa.get_at(m).get_pw_aff_list()
                for k in range(pal.n_pw_aff()):
                    name = pal.get_at(k).get_domain_space().get_tuple_name(isl.dim_type.set)
                    if name in self.empty:
                        out.add(name)
        for c in range(node.n_children()):
            out |= self.mentioned(node.child(c))
        return out

    def stmts_of(self, node) -> list[str]:
        names: list[str] = []
        kind = node.get_type()
        if kind == isl.schedule_node_type.domain:
            dom = node.domain_get_domain()
        elif kind == isl.schedule_node_type.filter:   # (get_domain is what reaches the filter)
            dom = node.get_domain().intersect(node.filter_get_filter())
        else:
            dom = node.get_domain()
        dom.foreach_set(lambda st: names.append(st.get_tuple_name()))
        return [n for n in names if n in self.domains] + sorted(self.mentioned(node) - set(names))

    def walk(self, node, path: tuple, dims: dict[str, list[ScheduleDim]], names: list[str]) -> None:
        kind = node.get_type()
        if kind == isl.schedule_node_type.band:
            self.band(node, path, dims, names)
        elif kind in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
            self.sequence(node, path, dims, names)
        elif kind == isl.schedule_node_type.leaf:
            for n in names:
                if n in self.found:
                    raise AnalysisError(f"statement {n} appears at two leaves of the original schedule",
                                        hint="the analysis expects one leaf per statement")
                self.found[n] = list(dims[n])
        elif kind in (isl.schedule_node_type.extension, isl.schedule_node_type.expansion):
            raise AnalysisError("the original schedule uses an extension or expansion node",
                                hint="dependence analysis expects a plain tree of bands and sequences")
        else:
            self.children(node, path, dims, names)

    def band(self, node, path: tuple, dims: dict[str, list[ScheduleDim]], names: list[str]) -> None:
        """One time dimension per band member: a loop when the member involves an iterator."""
        mupa = node.band_get_partial_schedule()
        members = []
        for m in range(node.band_n_member()):
            upa = mupa.get_at(m)
            per: dict[str, isl.PwAff] = {}
            for k in range(upa.n_pw_aff()):
                pa = upa.get_pw_aff_list().get_at(k)
                per[pa.get_domain_space().get_tuple_name(isl.dim_type.set)] = pa
            members.append(per)
        new = {n: list(dims[n]) for n in names}
        for n in names:
            tick()
            for m, per in enumerate(members):
                pa = per.get(n)
                if pa is None:
                    if n in self.empty:   # nothing runs: any time will do
                        new[n].append(ScheduleDim((path, m), None, 0))
                        continue
                    raise AnalysisError(f"the schedule band at {path} has no function for {n}")
                if _involves_iterators(pa):
                    new[n].append(ScheduleDim((path, m), pa, 0, _aff_name(pa, self.domains[n])))
                else:
                    new[n].append(_non_loop((path, m), pa))
        self.children(node, path, new, names)

    def sequence(self, node, path: tuple, dims: dict[str, list[ScheduleDim]], names: list[str]) -> None:
        """A scalar time dimension: the position of each child."""
        placed: set[str] = set()
        for c in range(node.n_children()):
            child = node.child(c)
            here = set(self.stmts_of(child))
            sub = [n for n in names if n in here and n not in placed]
            if not sub:
                continue
            placed.update(sub)
            new = {n: list(dims[n]) + [ScheduleDim((path, "seq"), None, c)] for n in sub}
            self.walk(child, path + (c,), new, sub)
        for n in names:   # an empty statement mentioned in no branch: it ends here
            if n not in placed and n in self.empty:
                self.found[n] = list(dims[n])

    def children(self, node, path: tuple, dims: dict[str, list[ScheduleDim]], names: list[str]) -> None:
        placed: set[str] = set()
        for c in range(node.n_children()):
            child = node.child(c)
            here = set(self.stmts_of(child))  # once per child, not once per statement (1,000 statements: 40 s)
            sub = [n for n in names if n in here and n not in placed]
            if sub:
                placed.update(sub)
                self.walk(child, path + (c,), {n: dims[n] for n in sub}, sub)
        for n in names:
            if n not in placed and n in self.empty:
                self.found[n] = list(dims[n])


def _non_loop(key: tuple, pa: isl.PwAff) -> ScheduleDim:
    """A coordinate that involves no iterator: an integer, or an exact function of the parameters
    (``n - 1``), or a piecewise one; never reduced to its constant term."""
    affs: list[isl.Aff] = []
    pa.foreach_piece(lambda _s, aff: affs.append(aff))
    if not affs:   # defined nowhere (the statement does not run): any constant is exact
        return ScheduleDim(key, None, 0)
    dropped = [a.drop_dims(isl.dim_type.in_, 0, a.dim(isl.dim_type.in_)) for a in affs]
    one = all(d.plain_is_equal(dropped[0]) for d in dropped[1:])
    if one and dropped[0].is_cst():
        return ScheduleDim(key, None, int(dropped[0].get_constant_val().to_python()))
    return ScheduleDim(key, None, 0, "", pa, dropped[0] if one else None)
