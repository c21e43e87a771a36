"""Whole time vectors assembled from each statement's prefix and private loops."""

from __future__ import annotations

from types import MappingProxyType
from typing import Sequence

import islpy as isl

from polylab.schedule.core import Schedule, const_aff, map_from_affs
from polylab.schedule.optimize.loops import Aff, loop_dims, private_start
from polylab.schedule.transform import mark_parallel
from polylab.schedule.tuning import SEPARATE_LIMIT


class Layout:
    """Assembles whole time vectors from each statement's prefix and private loops.

    Statement ``S``'s vector is ``prefix_S`` (its dimensions before its private loops), padded with zeros to
    the longest prefix, then one block of dimensions per statement (its own private loops in its block,
    zeros elsewhere) when the statements are few, else one block shared by all."""

    def __init__(self, base: Schedule) -> None:
        self.base = base
        self.scop = base.scop
        self.pspace = base.scop.context.get_space()
        self.names = [st.name for st in base.scop.statements]
        self.start = {n: private_start(base, n) for n in self.names}
        self.prefix = {n: list(base.affs[n][: self.start[n]]) for n in self.names}
        self.private = {n: [base.affs[n][d] for d in loop_dims(base, n) if d >= self.start[n]]
                        for n in self.names}
        self.separate = len(self.names) <= SEPARATE_LIMIT
        #: (statement, time vector) -> its map: a search rebuilds one statement at a time, the others'
        #: vectors repeat (isl affine functions compare and hash by value)
        self.maps: dict[tuple, isl.Map] = {}
        #: rows -> their parallel dimensions on the whole (shared blocks only, :meth:`whole_marks`)
        self.marks: dict[tuple, frozenset[int]] = {}

    @property
    def width(self) -> int:
        return max((len(p) for p in self.prefix.values()), default=0)

    def offsets(self, rows: dict[str, Sequence[Aff]]) -> dict[str, int]:
        """Where each statement's block of private loops starts (after the prefix)."""
        out, pos = {}, self.width
        for n in self.names:
            out[n] = pos
            pos += len(rows[n]) if self.separate else 0
        return out

    def vectors(self, rows: dict[str, Sequence[Aff]]) -> dict[str, list[Aff]]:
        """Each statement's whole time vector."""
        width = self.width
        offset = self.offsets(rows)
        total = (sum(len(r) for r in rows.values()) if self.separate
                 else max((len(r) for r in rows.values()), default=0))
        affs: dict[str, list[Aff]] = {}
        for n in self.names:
            st = self.scop.statement(n)
            zero = const_aff(st, self.pspace, 0)
            vec = self.prefix[n] + [zero] * (width - len(self.prefix[n]))
            block = [zero] * total
            for k, a in enumerate(rows[n]):
                block[offset[n] - width + k] = a
            affs[n] = vec + block
        return affs

    def build(self, rows: dict[str, Sequence[Aff]], steps: Sequence[str]) -> Schedule:
        # every vector has the same length and comes from map_from_affs: no normalisation needed
        maps = {n: self.map_of(n, a) for n, a in self.vectors(rows).items()}
        return Schedule(self.scop, MappingProxyType(maps), tuple(steps), frozenset(), (), self.base.deps)

    def whole_marks(self, rows: dict[str, Sequence[Aff]]) -> frozenset[int]:
        """The exactly parallel dimensions of the schedule of ``rows`` on all dependences (shared blocks:
        a block dimension's coincidence depends on every statement), once per distinct ``rows``."""
        key = tuple((n, tuple(rows[n])) for n in self.names)
        if key not in self.marks:
            self.marks[key] = mark_parallel(self.build(rows, self.base.steps)).marked
        return self.marks[key]

    def map_of(self, n: str, affs: Sequence[Aff]) -> isl.Map:
        """``{ n[x] -> [affs(x)] }``, built once per distinct vector."""
        key = (n, tuple(affs))
        if key not in self.maps:
            self.maps[key] = map_from_affs(self.scop.statement(n), self.pspace, affs)
        return self.maps[key]
