"""The dependences a schedule must respect, taken from :mod:`polylab.analysis`.

Legality is judged against the memory-based dependences (flow, anti and output) of a SCoP: a schedule
``theta`` is legal when ``theta(u) <lex theta(v)`` for every dependent pair ``u -> v``. This module only
adapts the analysis layer's :class:`DependenceGraph` to what the schedule layer needs (a list of
``(kind, source, sink, array, relation)`` and their union) and caches it per SCoP value.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Iterable

import islpy as isl

from polylab.errors import ScheduleError
from polylab.model import Scop

KINDS = ("flow", "anti", "output")


@dataclass(frozen=True, eq=False)
class Dep:
    """One dependence: ``relation = { S[x] -> T[y] }`` pairs where ``T[y]`` must run after ``S[x]``."""

    kind: str
    source: str
    sink: str
    array: str
    relation: isl.Map

    def describe(self) -> str:
        return f"{self.kind} dependence {self.source} -> {self.sink} on {self.array}"


def maps_of(umap: isl.UnionMap) -> list[isl.Map]:
    """The maps of a union map (one per pair of spaces)."""
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


_CACHE: "weakref.WeakKeyDictionary[Scop, tuple[Dep, ...]]" = weakref.WeakKeyDictionary()


def _from_graph(graph: Any) -> tuple[Dep, ...]:
    out = []
    for d in graph.dependences:
        if d.kind not in KINDS:
            continue
        rel = d.relation
        if isinstance(rel, isl.UnionMap):
            for m in maps_of(rel):
                out.append(Dep(d.kind, d.source, d.sink, d.array, m))
        elif not rel.is_empty():
            out.append(Dep(d.kind, d.source, d.sink, d.array, rel))
    return tuple(out)


def _from_union_map(umap: isl.UnionMap) -> tuple[Dep, ...]:
    return tuple(Dep("dependence", m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out),
                     "?", m) for m in maps_of(umap) if not m.is_empty())


def dependences(scop: Scop, deps: Any = None) -> tuple[Dep, ...]:
    """The memory-based flow/anti/output dependences of ``scop`` as :class:`Dep` values.

    ``deps`` may be a :class:`polylab.analysis.DependenceGraph`, an ``isl.UnionMap`` of instance pairs, an
    iterable of :class:`Dep`, or None (computed with ``polylab.analysis.compute_dependences`` and cached).
    """
    if deps is not None:
        if isinstance(deps, isl.UnionMap):
            return _from_union_map(deps)
        if isinstance(deps, isl.Map):
            return _from_union_map(isl.UnionMap.from_map(deps))
        if hasattr(deps, "dependences"):
            return _from_graph(deps)
        return tuple(deps)
    cached = _CACHE.get(scop)
    if cached is not None:
        return cached
    try:
        from polylab.analysis import compute_dependences
    except ImportError as exc:  # pragma: no cover - only while the analysis layer is missing
        raise ScheduleError("dependence analysis is not available",
                            hint="pass the dependences explicitly (deps=...)") from exc
    result = _from_graph(compute_dependences(scop, value_based=False, kinds=KINDS))
    _CACHE[scop] = result
    return result


def union(deps: Iterable[Dep], scop: Scop) -> isl.UnionMap:
    """The union of the dependence relations (an empty union map in the SCoP's parameter space)."""
    out = isl.UnionMap.empty(scop.context.get_space())
    for d in deps:
        out = out.union(isl.UnionMap.from_map(d.relation))
    return out


def seed(scop: Scop, deps: Iterable[Dep]) -> None:
    """Record the dependences of ``scop`` (used when they were computed elsewhere)."""
    _CACHE[scop] = tuple(deps)
