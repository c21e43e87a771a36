"""The dependences a schedule must respect, taken from :mod:`polylab.analysis`.

Legality is judged against the memory-based dependences (flow, anti and output) of a SCoP: a schedule
``theta`` is legal when ``theta(u) <lex theta(v)`` for every dependent pair ``u -> v``. This module only
adapts the analysis layer's :class:`DependenceGraph` to what the schedule layer needs (a list of
``(kind, source, sink, array, relation)`` and their union) and caches it per SCoP value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import islpy as isl

from polylab.analysis import DependenceGraph, compute_dependences
from polylab.model import Scop
from polylab.model.islutil import maps_of
from polylab.model.memo import ObjectMemo

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


#: the memory-based dependences of each SCoP analysed (kept while the SCoP lives)
_CACHE: ObjectMemo[Scop, tuple[Dep, ...]] = ObjectMemo("schedule.dependences")


def _from_graph(graph: DependenceGraph) -> tuple[Dep, ...]:
    return tuple(Dep(d.kind, d.source, d.sink, d.array, d.relation) for d in graph.dependences
                 if d.kind in KINDS and not d.relation.is_empty())


def _from_union_map(umap: isl.UnionMap) -> tuple[Dep, ...]:
    return tuple(Dep("dependence", m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out),
                     "?", m) for m in maps_of(umap) if not m.is_empty())


def dependences(scop: Scop, deps: DependenceGraph | Iterable[Dep] | isl.UnionMap | isl.Map | None = None
                ) -> tuple[Dep, ...]:
    """The memory-based flow/anti/output dependences of ``scop`` as :class:`Dep` values.

    ``deps`` may be a :class:`polylab.analysis.DependenceGraph`, an ``isl.UnionMap`` (or ``isl.Map``) of
    instance pairs, an iterable of :class:`Dep`, or None (computed with
    :func:`polylab.analysis.compute_dependences` and cached per SCoP value).
    """
    if isinstance(deps, (isl.UnionMap, isl.Map)):
        return _from_union_map(isl.UnionMap.from_map(deps) if isinstance(deps, isl.Map) else deps)
    if isinstance(deps, DependenceGraph):
        return _from_graph(deps)
    if deps is not None:
        return tuple(deps)
    return _CACHE.get(scop, lambda: _from_graph(compute_dependences(scop, value_based=False, kinds=KINDS)))


def union(deps: Iterable[Dep], scop: Scop) -> isl.UnionMap:
    """The union of the dependence relations (an empty union map in the SCoP's parameter space)."""
    out = isl.UnionMap.empty(scop.context.get_space())
    for d in deps:
        out = out.union(isl.UnionMap.from_map(d.relation))
    return out
