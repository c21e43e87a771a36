"""The tuning constants of the optimizer (:mod:`polylab.schedule.optimize`), each with the reason for its value."""

from __future__ import annotations

from types import MappingProxyType


#: statements beyond this number share private schedule dimensions (keeps the time vectors short)
SEPARATE_LIMIT = 16
#: rows advanced together by the strips (independent chains in flight)
STRIP_ROWS = 8
#: skew factors tried for the strips
MAX_SKEW = 4
#: the tile-level wavefront of the strips: tile sizes (rows, skewed columns); 0 = from the cache model
#: (:func:`wave_tile_sizes`)
WAVE_TILE = (0, 0)
#: bytes of an element of a C type (others: 8)
ELEMENT_BYTES = MappingProxyType({"char": 1, "short": 2, "int": 4, "float": 4, "long": 8, "double": 8})
#: the label of the fusion structure of :mod:`polylab.schedule.shiftfuse`
SHIFT_FUSED = "sibling nests fused with shifts"
#: a parallel loop with fewer iterations than this for every parameter value does not count as parallel
MIN_PARALLEL_SPAN = 32
#: a loop with fewer iterations than this for every parameter value is unrolled by the compiler
UNROLLED_SPAN = 8
#: iterations of a reduction loop jammed into the vector loop inside it (:func:`jam_reductions`)
REDUCTION_ROWS = 4
#: the depth counted for a statement without a parallel loop (:func:`first_parallel_depth`)
NO_PARALLEL = 100
#: strip-mining size of a parallel stride-1 loop
PAR_STRIP = 32
#: an OpenMP loop whose team would get fewer statement instances than this per start, on average, where
#: the sizes are constants, stays sequential: a start costs microseconds (doitgen at its small size,
#: 500 starts of 3 strips of 8 columns: 0.04x of the original on two threads with them)
MIN_TEAM_WORK = 1 << 15
#: the tile size of the strips' wavefront over an outer loop and the strips' rows
#: (:func:`_time_tiled_strips`): PLUTO's default size; sl3 (n = 384) at two threads measured 2.97x, 3.29x and
#: 3.20x of the original with 16, 32 and 64 (``--tune`` tries others)
TIME_TILE = 32
#: time strips (:func:`polylab.schedule.timetile.time_strips`) only for programs that may run at least this
#: many steps, and only for builds with vectors at least this wide (bytes): with two-lane SSE2 vectors a
#: one-dimensional stencil is bound by its arithmetic, not by the cache the strips save
STRIP_MIN_STEPS = 4
STRIP_MIN_VECTOR = 32
