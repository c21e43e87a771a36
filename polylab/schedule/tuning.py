"""The tuning constants of the optimizer (:mod:`polylab.schedule.optimize`) and of the transformations it
searches (time tiles and strips, fusion with shifts, the tiled band), in one place, each with what it
bounds and why it has its value.

None of these describes the machine: the threads, the vector width and the cache sizes are a
:class:`polylab.schedule.optimize.Machine` value, given to the search by whoever runs it. These are the
search's own choices: how far it looks, and the sizes it starts from where no cache model decides.
"""

from __future__ import annotations

from types import MappingProxyType

# -- how far the search looks ---------------------------------------------------------------------------
#: statements beyond this number share private schedule dimensions (keeps the time vectors short), keep
#: their fusion, and get no band tiles (the search stays fast)
SEPARATE_LIMIT = 16
#: a statement's private loops are permuted only up to this many loops (4! = 24 interchanges)
MAX_PERMUTED_LOOPS = 4
#: skew factors ``f`` tried for the strips, 0 .. MAX_SKEW
MAX_SKEW = 4
#: time skews ``g`` tried for the time tiles of the outer band, smallest first
#: (:func:`polylab.schedule.timetile.time_tiled`)
TIME_TILE_SKEWS = (0, 1, 2)
#: time skews ``g`` of the strips' wavefront over the outer loop and the rows (``a + g t``)
TIME_WAVE_SKEWS = (0, 1)
#: time skews of the time strips, smallest first, and the shifts tried for each statement
#: (:func:`polylab.schedule.timetile.time_strips`)
STRIP_SKEWS = (1, 2, 3)
STRIP_SHIFTS = (0, 1, 2, 3)
#: shifts tried on the first loop of sibling nests fused with shifts, and on each of the others
#: (:func:`polylab.schedule.shiftfuse.fuse_with_shifts`)
FIRST_SHIFTS = (0, 1, 2)
OTHER_SHIFTS = (0, 1)

# -- what counts as a loop ------------------------------------------------------------------------------
#: a parallel loop with fewer iterations than this for every parameter value does not count as parallel
#: (a team of threads for a few iterations' work: 250 times slower than the original on a 10-step time loop
#: around a strided recurrence under a tile-level wavefront)
MIN_PARALLEL_SPAN = 32
#: with threads, a statement's outermost loop (one team for its whole nest) counts as parallel from this many
#: iterations per thread (up to MIN_PARALLEL_SPAN): a contraction over 20 values of ``p`` keeps its stride-1
#: innermost loop on two threads; the two strips of 32 rows of a 40-row matrix would leave one thread 80 %
#: of the work
OUTER_ITERATIONS_PER_THREAD = 4
#: a loop with fewer iterations than this for every parameter value is unrolled by the compiler (gcc -O3
#: peels it completely), so the loop around it is the innermost one of the machine code
UNROLLED_SPAN = 8
#: an OpenMP loop whose team would get fewer statement instances than this per start, on average, where
#: the sizes are constants or bounded by the arrays' declared sizes, stays sequential: a start costs
#: microseconds (doitgen at its small size, 500 starts of 3 strips of 8 columns: 0.04x of the original on
#: two threads with them)
MIN_TEAM_WORK = 1 << 15
#: the most rows (points of a set less its last dimension) a set may have for the team's work to be counted
#: at the arrays' declared sizes, about 1.4 million isl operations: larger ones are left unknown (their
#: loop keeps OpenMP)
COUNT_ROWS = 1 << 17

# -- sizes where no cache model decides -------------------------------------------------------------------
#: rows advanced together by the strips (independent chains in flight), and rows jammed around a chain
STRIP_ROWS = 8
#: the tile-level wavefront of the strips: tile sizes (rows, skewed columns); 0 = from the cache model
#: (:func:`polylab.schedule.optimize.cachemodel.wave_tile_sizes`)
WAVE_TILE = (0, 0)
#: iterations of a reduction loop jammed into the vector loop inside it (gemm, 800^3, one thread: 1.15-1.32x
#: of the ``(i, k, j)`` order with 4, slower with 8: SSE2 runs out of registers)
REDUCTION_ROWS = 4
#: strip-mining size of a parallel stride-1 loop
PAR_STRIP = 32
#: the tile size of the strips' wavefront over an outer loop and the strips' rows (a two-dimensional
#: stencil's time tiles): PLUTO's default size; sl3 (n = 384) at two threads measured 2.97x, 3.29x and
#: 3.20x of the original with 16, 32 and 64 (``--tune`` tries others)
TIME_TILE = 32
#: the smallest sizes the cache models give (:mod:`polylab.schedule.optimize.cachemodel`): a time tile of a
#: deeper stencil, a row of the tiled band, a cache tile or a stream tile's rows
MIN_TIME_TILE = 4
MIN_BAND_TILE = 16
MIN_CACHE_TILE = 8
#: the tile size of every band row when no cache model is asked (:mod:`polylab.schedule.bandtile`)
BAND_TILE = 32
#: the stream tiles' widest vector loop, and their fewest rows: four groups of the jammed reduction rows
#: (:func:`polylab.schedule.optimize.cachemodel.stream_tile_sizes`)
STREAM_TILE_COLUMNS = 1024
STREAM_TILE_ROWS = 4 * REDUCTION_ROWS
#: the smallest and the largest width of the time strips (points per strip, powers of two)
STRIP_WIDTHS = (256, 8192)
#: time strips only for programs that may run at least this many steps, and only for builds with vectors
#: at least this wide (bytes): with two-lane SSE2 vectors a one-dimensional stencil is bound by its
#: arithmetic, not by the cache the strips save
STRIP_MIN_STEPS = 4
STRIP_MIN_VECTOR = 32

# -- the data ----------------------------------------------------------------------------------------------
#: bytes of an element of a C type (others: 8)
ELEMENT_BYTES = MappingProxyType({"char": 1, "short": 2, "int": 4, "float": 4, "long": 8, "double": 8})

# -- what ``optimize --tune`` tries besides the optimizer's choice ----------------------------------------
#: strip rows and wavefront tile sizes (0: the cache model's tile size)
TUNE_STRIPS = ((16, 0), (8, 256), (8, 64))
#: time and band tile sizes
TUNE_TILES = (8, 16, 64)
