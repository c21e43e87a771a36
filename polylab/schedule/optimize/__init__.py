"""``optimize``: the whole schedule chosen automatically, each choice explained and checked exactly.

The optimizer starts from the schedule it is given (the source order, or what storage steps such as
``interleave`` produced) and keeps its *fusion*: loops that several statements share stay shared, so no
parallel loop of the source order is lost by fusing statements (the Pluto-style search, ``auto``, fuses
whatever it can and may put a dependence-carrying loop outside every parallel one). Each statement's
*private* loops (those no other statement shares: from its first loop that no other statement runs in
the same iteration of the enclosing loops) are then rewritten, statement by statement, by one of these
affine maps of its private loops ``(l_1, .., l_m)``:

* a permutation ``(l_{p(1)}, .., l_{p(m)})`` (loop interchange);
* *parallel strip-mining*: ``(floor(l_p / T), the other loops, l_p)`` for a parallel loop ``l_p`` whose
  accesses are stride-1: the tile loop runs in parallel and the point loop, innermost, is vectorizable;
* *strips* (independent-chain interleaving) of the last two loops ``(a, b)``:
  ``(.., floor(a / S), b + f a, a)`` with the smallest skew ``f >= 0`` that makes the innermost loop ``a``
  parallel: ``S`` independent dependence chains advance together, so a latency-bound loop (each point
  waits for its neighbour) overlaps ``S`` chains; and a tile-level wavefront
  ``(.., floor(a / A) + floor((b + f a) / B), floor(a / A), floor(a / S), b + f a, a)`` runs the tiles of
  one wave in parallel (with one thread too: the strips' own parallel loop is innermost, and OpenMP
  would start it once per column), with ``A = B`` from a cache model (:func:`wave_tile_sizes`: a tile's elements in
  half the L2 cache of the core that runs it);
* *time-tiled strips* of the last three loops ``(t, a, b)`` (:func:`_time_tiled_strips`): the strips of
  ``(a, b)`` inside a tile-level wavefront over ``(t, a + g t)``, ``g`` in 0, 1: each tile runs ``T``
  steps of ``t`` over ``T`` rows while they stay in cache, and a wave of tiles is one OpenMP start
  (sl3 after folding, seidel2d with the skew ``g = 1``);
* *time strips* of a one-dimensional stencil (:func:`polylab.schedule.timetile.time_strips`): strips
  ``W`` skewed points wide that run every time step while their points stay in the L1 cache
  (:func:`strip_width`), for one thread and a build with vectors of at least :data:`STRIP_MIN_VECTOR`
  bytes (:mod:`polylab.schedule.target`: ``optimize``'s fifth argument, or the build in effect);
* *tiling* of a permutable band of private loops with sizes from a cache model
  (:func:`cache_tile_sizes`): ``(floor(l_1 / T_1), .., floor(l_k / T_k), l_1, .., l_k)``, offered when
  asked for (``optimize(T, rows, wave, 1)``; ``--tune`` times it) and where an array is reused across the
  outer loop at a distance of a whole slice (:func:`_tiling_order`).

Every candidate is checked exactly (:func:`polylab.schedule.legality.is_legal`: ``theta(u) <lex theta(v)``
for every dependence) and its parallel dimensions are marked exactly (:func:`mark_parallel`); a statement
keeps the legal candidate with the best score, compared lexicographically:

1. the depth of its outermost parallel loop (smaller is better; none is worst);
2. an innermost loop that is parallel and stride-1 (vectorizable), else one that is stride-1, else one
   that is parallel (independent chains the processor overlaps);
3. how well the innermost loop walks memory (:func:`stride_score`);
4. tiling, when the cache model asks for it (:func:`_tiling_order`);
5. fewer loops (no strip-mining or tiling that buys nothing of the above);
6. the number of its parallel loops.

Loops are counted by what they do for every parameter value (:func:`value_span`, exact): a time
dimension that takes one value is no loop; a parallel loop of fewer than :data:`MIN_PARALLEL_SPAN`
iterations is not counted as parallel; loops of fewer than :data:`UNROLLED_SPAN` iterations inside are
unrolled by the compiler, so "innermost" means the last loop with more.

The fusion structures compared (:func:`bases`, scored by :func:`program_key`): the starting schedule's;
its statements distributed inside the outermost loop or fully; and, for one thread, its sibling perfect
nests fused with the smallest shifts that keep the dependences, the innermost loop parallel and the
members' inner ranges equal (:mod:`polylab.schedule.shiftfuse`: jacobi2d's update and copy stream each
array once per time step instead of twice). A distribution only counts the vector loops it wins for
statements it does not take out of a dependence chain's *shadow* (:func:`chain_shadowed`: bicg's
``s[j] +=`` costs nothing while it shares its loop with the chain ``q[i] +=``; split off, its vector loop
adds its time to the chain's).

Private loops of different statements get separate schedule dimensions (up to
:data:`SEPARATE_LIMIT` statements), so a loop that is parallel for one statement is not reported
sequential because another statement's loop at the same depth carries a dependence (isl's coincidence is
per band member, i.e. per dimension); the parallel dimensions of the result are then the prefix's and
each block's as found for its statement (exact, see :func:`_from_base`), and those of the structure kept
are marked once more on the whole schedule, which must agree. The result never has fewer parallel loops
per statement than the source order with :func:`polylab.schedule.parallel` (a candidate with fewer is
refused), see :func:`parallel_loops`; for one thread, a fusion with shifts may trade a statement's outer
parallel loops for locality but never its parallel innermost (vector) loop (:func:`vector_floor`).

After the structure is chosen, the rows of the loop around a *chain* (a statement that sums into one
element along its innermost loop, or a recurrence that reads what it wrote a few iterations before along
it, adi's tridiagonal sweeps; :func:`chain_loop`) are jammed: ``k`` rows run together,
``(.., floor(i / k), j, .., i)`` (:mod:`polylab.schedule.jam`, :func:`_jam_rows`), where that is legal
(exact), keeps the parallel loops and breaks at least as many chains as it takes vector loops; the code
generator isolates the full strips, whose constant-bound row loop gcc unrolls: unroll-and-jam. A
*reduction loop* around a vector loop (gemm's ``k`` around ``j``, :func:`reduction_loop`) is jammed the
other way: 4 of its iterations run inside the vector loop, so each element takes 4 updates between one
load and one store, in the original order (:func:`_jam_reductions`).

Storage steps (folding, dead writes, contraction) change the SCoP and live in the storage layer, which
adds them around this search in its own ``optimize`` recipe step (:mod:`polylab.storage.steps`).
"""

from __future__ import annotations

from polylab.schedule.optimize.loops import (Aff, iterator_of, stride_score, is_stride_one, loop_dims,
                                             parallel_loops, private_start, value_span, local_span, uses,
                                             subscripted, exact_parallel_loops, innermost_parallel, vector_floor,
                                             keeps_vectors, vector_innermost, loop_names)
from polylab.schedule.optimize.machine import (available_threads, cache_sizes, element_bytes, footprint_bytes,
                                               fits_in_cache)
from polylab.schedule.optimize.cachemodel import (wave_tile_sizes, stream_tile_sizes, band_tile_size,
                                                  cache_tile_sizes, strip_width, time_tile_size)
from polylab.schedule.optimize.shapes import (Shape, Sizes, shapes)
from polylab.schedule.optimize.layout import Layout
from polylab.schedule.optimize.scoring import (statement_score, statement_rank, good_enough, program_key,
                                               first_parallel_depth)
from polylab.schedule.optimize.statements import from_base
from polylab.schedule.optimize.structures import (fused_pairs, shared_loops, reuse_gained, reuse_lost,
                                                  innermost_pairs, chain_shadowed, bases)
from polylab.schedule.optimize.timed import (time_tile_candidates, time_strip_candidates)
from polylab.schedule.optimize.band import band_tile_candidate
from polylab.schedule.optimize.jams import (chain_loop, jam_rows, reduction_loop, jam_reductions)
from polylab.schedule.optimize.openmp import (openmp_dims, team_work)
from polylab.schedule.optimize.report import (StatementChoice, OptimizeReport)
from polylab.schedule.optimize.search import (optimize_schedule, step_text, optimize)
from polylab.schedule.tuning import (SEPARATE_LIMIT, STRIP_ROWS, MAX_SKEW, WAVE_TILE, ELEMENT_BYTES, SHIFT_FUSED,
                                     MIN_PARALLEL_SPAN, UNROLLED_SPAN, REDUCTION_ROWS, NO_PARALLEL, PAR_STRIP,
                                     MIN_TEAM_WORK, TIME_TILE, STRIP_MIN_STEPS, STRIP_MIN_VECTOR)
