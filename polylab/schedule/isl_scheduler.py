"""isl's own scheduler (the one inside PPCG and Polly); :mod:`polylab.schedule.compare` sets it beside the
Pluto-style search.

isl is given the iteration domain and the dependences as *validity* constraints (must be respected),
*proximity* constraints (distances to minimise: locality) and *coincidence* constraints (distances it
tries to make zero: parallel band members); ``ScheduleConstraints.compute_schedule`` returns a schedule
tree. Like Pluto, isl's algorithm builds permutable bands of hyperplanes with the Farkas lemma, but it
allows negative coefficients and parametric shifts, prefers coincident rows, and may split statements
with its own clustering heuristics, so its answers can differ.
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from polylab.errors import ScheduleError
from polylab.model import Scop
from polylab.model.budget import budgeted, isolated
from polylab.model.islutil import maps_of, portable_text, read_portable
from polylab.schedule.core import Schedule, map_from_affs
from polylab.schedule.deps import dependences, union
from polylab.schedule.transform import mark_parallel


@budgeted("isl's scheduler")
def isl_schedule(scop: Scop, deps=None) -> Schedule:
    """The schedule computed by isl (validity = proximity = coincidence = the memory-based dependences),
    flattened to per-statement maps, parallel dimensions marked.

    isl's search is one call that can run for minutes on a large SCoP (adi) and counts few operations: it
    runs in a child process (:func:`~polylab.model.budget.isolated`), so the time budget and an interrupt
    stop it, and its map comes back as exact isl text."""
    dl = dependences(scop, deps)
    d = union(dl, scop)
    text = isolated(lambda: _isl_schedule_text(scop.domain, scop.context, d))
    if text == _NONE:
        raise ScheduleError("isl's scheduler found no schedule for this SCoP",
                            hint="use auto (the Pluto-style search) or write the schedule by hand")
    maps = {}
    for m in maps_of(read_portable(text, scop.context.get_space())):
        name = m.get_tuple_name(isl.dim_type.in_)
        dom = scop.statement(name).domain
        for k in range(m.dim(isl.dim_type.in_)):  # the iterators' names (the text carries stand-ins)
            if dom.get_dim_name(isl.dim_type.set, k):
                m = m.set_dim_name(isl.dim_type.in_, k, dom.get_dim_name(isl.dim_type.set, k))
        maps[name] = m.reset_tuple_id(isl.dim_type.out)
    for st in scop.statements:  # a statement with an empty domain does not appear in isl's map
        if st.name not in maps:
            maps[st.name] = map_from_affs(st, scop.context.get_space(), [])
    s = mark_parallel(Schedule.from_maps(scop, maps, steps=("isl",), deps=dl))
    return replace(s, notes=(f"isl's scheduler: {s.text()}",))


_NONE = "no schedule"


def _isl_schedule_text(domain: isl.UnionSet, context: isl.Set, d: isl.UnionMap) -> str:
    """isl's schedule map as :func:`~polylab.model.islutil.portable_text` (``_NONE`` when isl finds none)."""
    for coincidence in (True, False):  # isl may fail to carry dependences when asked for coincidence
        sc = isl.ScheduleConstraints.on_domain(domain).set_context(context)
        sc = sc.set_validity(d).set_proximity(d)
        if coincidence:
            sc = sc.set_coincidence(d)
        try:
            return portable_text(sc.compute_schedule().get_map())
        except isl.Error:
            continue
    return _NONE


@budgeted("isl's scheduler")
def isl_step(s: Schedule) -> Schedule:
    """The ``isl`` step: replace the schedule by isl's (see :func:`isl_schedule`).

    Affine map: whatever isl's band-by-band search returns (per statement ``t' = Theta_S x + theta_S``,
    possibly with parametric shifts). Legal by construction (validity constraints), re-checked exactly.
    """
    out = isl_schedule(s.scop, s.deps)
    return replace(out, steps=s.steps + ("isl",))
