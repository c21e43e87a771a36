"""The cache models that size tiles and strips, each from the :class:`~polylab.schedule.optimize.machine.Machine`'s
cache sizes: a tile's working set in half of the cache that keeps it (the other half for the streams and
the neighbours' boundaries), the largest power of two that fits, at least a minimum of
:mod:`polylab.schedule.tuning`."""

from __future__ import annotations

from polylab.model import Scop
from polylab.schedule.optimize.machine import Machine, element_bytes
from polylab.schedule.tuning import (MIN_BAND_TILE, MIN_CACHE_TILE, MIN_TIME_TILE, PAR_STRIP, STREAM_TILE_COLUMNS,
                                     STREAM_TILE_ROWS, STRIP_WIDTHS, TIME_TILE)


def wave_tile_sizes(point_bytes: int, rows: int, machine: Machine) -> tuple[int, int]:
    """The tiles ``T x T`` of the strips' tile-level wavefront: the largest power of two ``T`` with
    ``point_bytes * T^2 <= L2 / 2``, and ``T >= 2 * rows``; ``point_bytes`` is the sum over the arrays the
    statement accesses of their element sizes.

    The model: a tile is ``T`` rows of ``a`` by ``T`` skewed columns ``b + f a``; its points touch about
    ``T^2`` elements of each of the ``arrays`` arrays it accesses (a stencil's neighbourhoods overlap and
    the skew moves a row by a bounded number of columns), and each strip of ``rows`` rows re-reads what
    the strip before it wrote. The tile runs on one core, so its elements should stay in that core's L2
    cache from one strip to the next: ``point_bytes * T^2`` bytes in half of L2, the other half for
    the tile's boundary with its neighbours of the previous wave and for the streams. Smaller tiles also
    give a wave more tiles to share among the threads. ``T >= 2 * rows``: a tile holds at least two strips.
    On the development machine (L2 512 KiB): seidel2d (one array of double) gets ``T = 128``, sl3 (one
    array of float) ``T = 256``."""
    t = 2 * max(1, rows)
    while max(1, point_bytes) * (2 * t) ** 2 <= machine.l2_bytes // 2:
        t *= 2
    return t, t


def stream_tile_sizes(element: int, machine: Machine) -> tuple[int, int]:
    """``(T_j, T_k)`` of the stream tiling ``(floor(j / T_j), floor(k / T_k), i, k, j)`` of a statement
    whose array ``B[k][j]`` is read again in every iteration of its outer loop ``i`` (gemm's ``C[i][j] +=
    A[i][k] * B[k][j]``): without tiling each ``i`` streams all of ``B`` from beyond the core's caches; with
    it, a tile of ``T_k x T_j`` elements of ``B`` is read from memory once and from L1 by every ``i``.

    The tile is read at one element per multiply-add, as fast as the vector loop runs, so it belongs in
    the L1 cache, not in L2: ``T_k * T_j * element <= 3/4 L1`` (the last quarter for the row of ``C``
    and the column of ``A`` that each ``i`` brings). ``T_k`` =
    :data:`~polylab.schedule.tuning.STREAM_TILE_ROWS` (four groups of the jammed reduction rows, each
    ``C[i][j]`` loaded once per tile and updated by all four), ``T_j`` the largest power of two up to
    :data:`~polylab.schedule.tuning.STREAM_TILE_COLUMNS` that fits (:func:`stream_tile_rows`): the vector
    loop as long as the budget allows. On a machine of 48 KiB L1 (doubles): ``256 x 16``, 32 KiB.
    Measured there, one thread, PolyBench's LARGE size, whole files, medians of 5 interleaved rounds
    (trmm, covariance, gemm, 2mm, in ms): ``256 x 16`` 19, 39, 63, 72; ``128 x 32`` 25, 48, 62, 71;
    ``64 x 64`` 26, 49, 60, 80; ``128 x 16`` (16 KiB) 24, 42, 63, 92; ``512 x 8`` 21, 48, 64, 76. In
    another run the L2 model's ``1024 x 64`` (512 KiB) ran trmm in 46 ms and covariance in 95 against
    ``64 x 64``'s 29 and 65, and ``64 x 128`` (64 KiB, more than L1) in 46 and 100 (docs/performance.md).
    Offered where the reused slice does not fit in
    that budget (:func:`~polylab.schedule.optimize.shapes.shapes`) or cache tiling is asked for
    (``optimize(1, 8, 0, 1)``, a ``--tune`` candidate)."""
    tj = STREAM_TILE_COLUMNS
    while tj > MIN_CACHE_TILE and STREAM_TILE_ROWS * tj * max(1, element) > stream_tile_budget(machine):
        tj //= 2
    return stream_tile_rows(tj, element, machine)


def stream_tile_budget(machine: Machine) -> int:
    """The bytes of a stream tile: three quarters of the L1 data cache (:func:`stream_tile_sizes`)."""
    return machine.l1_bytes - machine.l1_bytes // 4


def stream_tile_rows(tj: int, element: int, machine: Machine) -> tuple[int, int]:
    """``(T_j, T_k)`` of a stream tiling with ``T_j`` columns: ``T_k`` the largest power of two with
    ``T_k * T_j * element <= 3/4 L1``, at least :data:`~polylab.schedule.tuning.STREAM_TILE_ROWS`."""
    tk = STREAM_TILE_ROWS
    while 2 * tk * tj * max(1, element) <= stream_tile_budget(machine):
        tk *= 2
    return tj, tk


def parallel_stream_tile_sizes(columns: int | None, element: int, machine: Machine) -> tuple[int, int]:
    """``(T_j, T_k)`` of the stream tiling (:func:`stream_tile_sizes`) whose column tiles ``floor(j / T_j)``
    are the parallel loop shared among ``threads > 1`` threads: ``T_j`` the one-thread width, narrowed
    (halved) until it leaves at least ``4 * threads`` tiles of the ``columns`` the loop ``j`` runs (at the
    arrays' declared sizes), so that the threads' shares differ by at most about a quarter of a share; at
    least :data:`~polylab.schedule.tuning.PAR_STRIP` columns, so the vector loop stays long; ``4 *
    PAR_STRIP`` at most where ``columns`` is unknown (None). ``T_k`` then fills the tile's L1 budget
    (:func:`stream_tile_rows`).

    trmm at PolyBench's LARGE size (``j < 1200``) on two threads, 48 KiB L1: ``T_j = 128`` (10 tiles, 5 per
    thread), ``T_k = 32``; the band's tiles of 32 columns outermost ran 131 ms against PLUTO's 125 ms, and
    ``T_j = 1024`` leaves 2 tiles of 1,024 and 176 columns, one thread doing most of the work."""
    tj = stream_tile_sizes(element, machine)[0]
    if columns is None:
        tj = min(tj, 4 * PAR_STRIP)
    while tj > PAR_STRIP and columns is not None and -(-columns // tj) < 4 * machine.threads:
        tj //= 2
    return stream_tile_rows(tj, element, machine)


def band_tile_size(scop: Scop, machine: Machine) -> int:
    """The size ``T`` of every row of the tiled Pluto-style band (:mod:`polylab.schedule.bandtile`): the
    largest power of two with ``slices * T^2 * element <= L2 / 2``, at least 16, where ``slices`` is the
    largest number of distinct accesses of one deepest statement (each a ``T x T`` slice of an array in a
    tile of a three-dimensional band) and ``element`` the largest element size. lu (``A[i][j]``,
    ``A[i][k]``, ``A[k][j]``, doubles) on this machine's 512 KiB L2: ``T = 64`` (measured at N = 800,
    two threads: 1.38x of the original with 16, 2.02x with 32, 2.49x with 64, 2.19x with 128)."""
    deepest = max((st.depth for st in scop.statements), default=0)
    sizes_of = element_bytes(scop)
    slices, element = 1, 1
    for st in scop.statements:
        if st.depth == deepest:
            slices = max(slices, len({(acc.array, acc.text) for acc in st.accesses}))
            element = max([element] + [sizes_of.get(acc.array, 8) for acc in st.accesses])
    t = MIN_BAND_TILE
    while slices * (2 * t) ** 2 * element <= machine.l2_bytes // 2:
        t *= 2
    return t


def cache_tile_sizes(depth: int, arrays: int, element: int, machine: Machine) -> tuple[int, ...]:
    """Tile sizes of a ``depth``-dimensional band touching ``arrays`` arrays of ``element``-byte values:
    the largest power of two ``T`` with ``arrays * T^2 * element <= L2 / 2`` (two-dimensional slices of
    every array in half the L2 cache; the third dimension streams), the innermost size 4x larger for
    long vector loops, at least 8."""
    t = MIN_CACHE_TILE
    while arrays * (2 * t) ** 2 * element <= machine.l2_bytes // 2:
        t *= 2
    sizes = [t] * depth
    if sizes:
        sizes[-1] = 4 * t
    return tuple(sizes)


def strip_width(scop: Scop, machine: Machine) -> int:
    """The width ``W`` of the time strips (:func:`polylab.schedule.timetile.time_strips`): the largest power
    of two with ``arrays * W * element <= L1 / 2`` (one step of a strip holds ``W`` elements of each array
    the statements access), from 256 to 8192. jacobi-1d (two arrays of doubles) on a 32 KiB L1: 1024 (at
    N = 200000, T = 500, one thread, ``-march=native``: 1.26x of the original with 1024, 1.15x with
    4096)."""
    sizes_of = element_bytes(scop)
    arrays = {a.array for st in scop.statements for a in st.accesses}
    per_point = sum(sizes_of.get(a, 8) for a in arrays) or 8
    w, widest = STRIP_WIDTHS
    while w < widest and 2 * w * per_point <= machine.l1_bytes // 2:
        w *= 2
    return w


def time_tile_size(depth: int) -> int:
    """The size ``T`` of the time tiles of a nest of ``depth`` loops (:mod:`polylab.schedule.timetile`):
    :data:`~polylab.schedule.tuning.TIME_TILE` for a two-dimensional stencil (time, rows, columns), divided
    by 4 for each further dimension, at least 4. A tile holds ``T`` rows for ``T`` steps; the row of a
    three-dimensional stencil is a plane, so the same ``T`` holds a plane's worth more data per row and leaves
    fewer tiles per wave: heat3d (N = 120, T = 50) on two threads ran at 1.48x of the original with 32, 1.82x
    with 16 and 2.02x with 8 (the step-by-step parallel order 1.79x)."""
    return max(MIN_TIME_TILE, TIME_TILE >> (2 * max(0, depth - 3)))
