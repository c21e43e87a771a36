"""The optimizer's vocabulary: what a statement's loops become (:class:`ShapeKind`), the fusion structures
(:class:`Structure`), the tiles across the outer loop (:class:`TimeTiling`), the innermost loop's quality
(:class:`Innermost`), and the outcomes of the jams and of the OpenMP check.

The search decides with these values; the explanation (:mod:`polylab.schedule.optimize.explain`) is
written from them, and whoever reads a report (``--tune``, the tests) reads them, never its prose. The
values of :class:`ShapeKind` are the names the JSON report gives.
"""

from __future__ import annotations

from enum import Enum, IntEnum


class ShapeKind(Enum):
    """What one statement's private loops become (a candidate of the per-statement search)."""

    KEEP = "keep"                                        #: the source order
    INTERCHANGE = "interchange"                          #: a permutation of the loops
    STRIP = "strip"                                      #: a parallel stride-1 loop strip-mined, innermost
    STREAM_TILE = "stream-tile"                          #: tiles of the two inner loops outside the outer one
    TILE = "tile"                                        #: the whole band tiled for the cache
    TILE_OUTER = "tile-outer"                            #: ... with one tile loop moved outermost
    STRIPS = "strips"                                    #: strips of independent chains
    STRIPS_WAVE = "strips+wave"                          #: the strips inside a tile-level wavefront
    STRIPS_TIME_WAVE = "strips+time-wave"                #: ... over the outer loop and the rows
    STRIPS_SKEWED_TIME_WAVE = "strips+skewed-time-wave"  #: ... with the rows skewed by the outer loop
    SHARED = "shared"                                    #: no private loop: all its loops are shared
    BAND_TILE = "band-tile"                              #: the Pluto-style band tiled (a whole structure)

    @property
    def tiled(self) -> bool:
        """Tiled for the cache (a score counts it; the search always tries it)."""
        return self in (ShapeKind.STREAM_TILE, ShapeKind.TILE, ShapeKind.TILE_OUTER, ShapeKind.BAND_TILE)

    @property
    def strips(self) -> bool:
        """Strips of independent chains, with or without a wavefront around them."""
        return self in (ShapeKind.STRIPS, ShapeKind.STRIPS_WAVE, ShapeKind.STRIPS_TIME_WAVE,
                        ShapeKind.STRIPS_SKEWED_TIME_WAVE)


class Structure(Enum):
    """A fusion structure the search compares (its candidates: each statement's best shape in it)."""

    KEPT = "kept"                          #: the starting schedule's fusion
    SHIFT_FUSED = "shift-fused"            #: sibling perfect nests fused with shifts
    DISTRIBUTED_INSIDE = "distributed"     #: statements distributed just inside the outermost loop
    FULLY_DISTRIBUTED = "fully-distributed"  #: statements fully distributed (level 0)
    PLUTO_BAND = "pluto-band"              #: the Pluto-style search's permutable band, tiled as a wavefront
    STRIP_SUNK = "strip-sunk"              #: a shared loop strip-mined, its points sunk into each statement


class TimeTiling(Enum):
    """Tiles across the outer (time) loop of a structure's candidate."""

    NONE = "none"
    TIME_TILES = "time-tiles"     #: tiles of the outer band (:mod:`polylab.schedule.timetile`)
    TIME_STRIPS = "time-strips"   #: strips of a one-dimensional stencil that run every step


class Innermost(IntEnum):
    """How good a statement's innermost loop is, worst first (the order is the score's)."""

    NONE = 0          #: neither parallel nor stride-1
    PARALLEL = 1      #: parallel: independent chains the processor overlaps
    STRIDE_ONE = 2    #: stride-1 but carrying a dependence
    VECTOR = 3        #: parallel and stride-1: vectorizable


class JamKind(Enum):
    """The two unroll-and-jams of :mod:`polylab.schedule.optimize.jams`."""

    CHAINS = "chains"          #: rows of the loop around dependence chains run together
    REDUCTION = "reduction"    #: iterations of a reduction loop run inside the vector loop


class JamOutcome(Enum):
    """What became of a jam the model asked for."""

    DONE = "done"
    VECTORS_LOST = "vectors-lost"    #: more vector loops lost than chains broken
    ILLEGAL = "illegal"              #: refused by the exact check
    PARALLEL_LOST = "parallel-lost"  #: would lose a parallel loop


class SerialReason(Enum):
    """Why an exactly parallel dimension gets no OpenMP loop (:mod:`polylab.schedule.optimize.openmp`)."""

    INSIDE_PARALLEL = "inside-parallel"      #: inside a parallel loop of every statement that runs it
    PER_ROW = "per-row"                      #: innermost under loops that walk the arrays: a start per row
    ONE_THREAD = "one-thread"                #: one thread: no team to share it
    LITTLE_WORK = "little-work"              #: too few instances per team start (constant sizes)
