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
from polylab.model.islutil import maps_of
from polylab.schedule.core import Schedule, map_from_affs
from polylab.schedule.deps import dependences, union
from polylab.schedule.transform import mark_parallel


def isl_schedule(scop: Scop, deps=None) -> Schedule:
    """The schedule computed by isl (validity = proximity = coincidence = the memory-based dependences),
    flattened to per-statement maps, parallel dimensions marked. isl's tree is kept in
    ``details['isl_tree']``."""
    dl = dependences(scop, deps)
    d = union(dl, scop)
    tree = None
    for coincidence in (True, False):  # isl may fail to carry dependences when asked for coincidence
        sc = isl.ScheduleConstraints.on_domain(scop.domain).set_context(scop.context)
        sc = sc.set_validity(d).set_proximity(d)
        if coincidence:
            sc = sc.set_coincidence(d)
        try:
            tree = sc.compute_schedule()
            break
        except isl.Error:
            continue
    if tree is None:
        raise ScheduleError("isl's scheduler found no schedule for this SCoP",
                            hint="use auto (the Pluto-style search) or write the schedule by hand")
    maps = {}
    for m in maps_of(tree.get_map()):
        maps[m.get_tuple_name(isl.dim_type.in_)] = m.reset_tuple_id(isl.dim_type.out)
    for st in scop.statements:  # a statement with an empty domain does not appear in isl's map
        if st.name not in maps:
            maps[st.name] = map_from_affs(st, scop.context.get_space(), [])
    s = Schedule.from_maps(scop, maps, steps=("isl",), deps=dl, details={"isl_tree": tree})
    s = mark_parallel(s)
    return replace(s, notes=(f"isl's scheduler: {s.text()}",), details={"isl_tree": tree})


def isl_step(s: Schedule) -> Schedule:
    """The ``isl`` step: replace the schedule by isl's (see :func:`isl_schedule`).

    Affine map: whatever isl's band-by-band search returns (per statement ``t' = Theta_S x + theta_S``,
    possibly with parametric shifts). Legal by construction (validity constraints), re-checked exactly.
    """
    out = isl_schedule(s.scop, s.deps)
    return replace(out, steps=s.steps + ("isl",))
