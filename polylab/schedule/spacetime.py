"""Space-time mapping: which schedule dimensions are time (sequential) and which are space (parallel).

For each statement the schedule is an affine map ``(p, t) = Theta x + theta``: the rows of ``Theta``
marked *space* (coincident: they carry no dependence once the outer dimensions agree) say on which
processor an instance runs, the *time* rows say when. A processor allocation groups consecutive space
coordinates into blocks of ``T``: ``p = floor(theta_space(x) / T)`` (one processor or thread block per
block of ``T`` iterations).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import islpy as isl
import sympy

from polylab import render
from polylab.errors import ScheduleError
from polylab.model import affine_function
from polylab.model.budget import budgeted
from polylab.schedule.core import Schedule, floor_div, map_from_affs


@dataclass(frozen=True)
class StatementMapping:
    """``Theta`` (one row per schedule dimension, one column per iterator) and ``theta`` for a statement;
    None when a dimension is not affine without division (after tiling: see the isl map)."""

    statement: str
    iterators: tuple[str, ...]
    Theta: sympy.Matrix | None
    theta: sympy.Matrix | None
    map: isl.Map


@dataclass(frozen=True, eq=False)
class SpaceTimeMapping(render.Rendered):
    schedule: Schedule
    kinds: tuple[str, ...]                  # per dimension: 'space', 'time' or 'scalar'
    statements: tuple[StatementMapping, ...] = field(default=())

    @property
    def space_dims(self) -> tuple[int, ...]:
        return tuple(d for d, k in enumerate(self.kinds) if k == "space")

    @property
    def time_dims(self) -> tuple[int, ...]:
        return tuple(d for d, k in enumerate(self.kinds) if k == "time")


@budgeted("the space-time mapping")
def space_time(s: Schedule) -> SpaceTimeMapping:
    """The space-time view of ``s``: dimensions marked parallel are space, when none is marked the
    exactly parallel loop dimensions are; the other loops are time."""
    marked = set(s.marked) or set(s.parallel_dims)
    kinds = tuple("scalar" if s.is_scalar(d) else ("space" if d in marked else "time")
                  for d in range(s.n_dims))
    out = []
    for st in s.scop.statements:
        m = s.maps[st.name]
        fc = affine_function(m)
        out.append(StatementMapping(st.name, st.iterators, fc[0] if fc else None, fc[1] if fc else None, m))
    return SpaceTimeMapping(s, kinds, tuple(out))


@budgeted("the space-time mapping")
def processor_allocation(s: Schedule, block: int | Sequence[int], dims: Sequence[int] | None = None
                         ) -> dict[str, isl.Map]:
    """``{ S[x] -> P[floor(theta_d(x) / T), ...] }`` per statement for the space dimensions ``dims``
    (default: the marked, else the exactly parallel, loop dimensions) with block sizes ``block``."""
    if dims is None:
        dims = sorted(set(s.marked) or set(s.parallel_dims))
    dims = list(dims)
    if not dims:
        raise ScheduleError("the schedule has no parallel dimension to allocate to processors",
                            hint="apply wavefront, tile_wavefront or auto first, then parallel")
    sizes = [block] * len(dims) if isinstance(block, int) else list(block)
    if len(sizes) != len(dims) or any(b <= 0 for b in sizes):
        raise ScheduleError("one positive block size per space dimension is needed",
                            hint=f"space dimensions: {dims}")
    pspace = s.scop.context.get_space()
    out = {}
    for st in s.scop.statements:
        a = s.affs[st.name]
        procs = [floor_div(a[d], T) for d, T in zip(dims, sizes)]
        out[st.name] = map_from_affs(st, pspace, procs).set_tuple_name(isl.dim_type.out, "P")
    return out
