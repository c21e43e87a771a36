"""``optimize``: the whole schedule chosen automatically, each choice explained and checked exactly.

The optimizer starts from the schedule it is given (the source order, or what storage steps such as
``interleave`` produced) and keeps its *fusion*: loops that several statements share stay shared, so no
parallel loop of the source order is lost by fusing statements (the Pluto-style search, ``auto``, fuses
whatever it can and may put a dependence-carrying loop outside every parallel one). It chooses for a
:class:`Machine` (threads, vector width, cache sizes) that it is given; nothing in it reads the machine it
runs on. The files, in the order a reader may take them:

* :mod:`~polylab.schedule.optimize.machine`: the :class:`Machine` value; element sizes and footprints;
* :mod:`~polylab.schedule.optimize.kinds`: the vocabulary (:class:`ShapeKind`, :class:`Structure`,
  :class:`TimeTiling`, ...), enums the search decides with and the report's readers read;
* :mod:`~polylab.schedule.optimize.loops`: what a loop is (plain iterators, strides, spans, private loops);
* :mod:`~polylab.schedule.optimize.cachemodel`: the cache models that size tiles and strips;
* :mod:`~polylab.schedule.optimize.shapes`: each statement's candidate rewritings of its private loops;
* :mod:`~polylab.schedule.optimize.records` and :mod:`~polylab.schedule.optimize.scoring`: the named scores
  a statement and a whole schedule get, compared by an explicit key;
* :mod:`~polylab.schedule.optimize.layout` and :mod:`~polylab.schedule.optimize.statements`: the
  per-statement search (every candidate checked exactly, parallel dimensions marked exactly);
* :mod:`~polylab.schedule.optimize.structures`: the fusion structures compared;
* :mod:`~polylab.schedule.optimize.timed`: time tiles and time strips across the outer loop;
* :mod:`~polylab.schedule.optimize.candidates`: a structure's candidates, and the Pluto-style band tiled;
* :mod:`~polylab.schedule.optimize.jams`: unroll-and-jam of chains and reduction loops;
* :mod:`~polylab.schedule.optimize.openmp`: which parallel loops keep their OpenMP loop;
* :mod:`~polylab.schedule.optimize.search`: the search and the ``optimize`` step;
* :mod:`~polylab.schedule.optimize.explain` and :mod:`~polylab.schedule.optimize.report`: the words, written
  from the values, and the report the optimized schedule carries (``schedule.provenance.optimize``).

The tuning constants are in :mod:`polylab.schedule.tuning`. Storage steps (folding, dead writes,
contraction) change the SCoP and live in the storage layer, which adds them around this search in its own
``optimize`` recipe step (:mod:`polylab.storage.optimize`).
"""

from __future__ import annotations

from polylab.schedule.optimize.cachemodel import (band_tile_size, cache_tile_sizes, stream_tile_sizes, strip_width,
                                                  time_tile_size, wave_tile_sizes)
from polylab.schedule.optimize.candidates import Candidate
from polylab.schedule.optimize.jams import chain_loop, chain_rows, reduction_loop
from polylab.schedule.optimize.kinds import (Innermost, JamKind, JamOutcome, SerialReason, ShapeKind, Structure,
                                             TimeTiling)
from polylab.schedule.optimize.loops import (carries_chain, exact_parallel_loops, is_stride_one, iterator_of,
                                             local_span, loop_dims, parallel_loops, private_start, value_span)
from polylab.schedule.optimize.machine import DEFAULT_VECTOR_BYTES, Machine, fits_in_cache, footprint_bytes
from polylab.schedule.optimize.openmp import openmp_dims, team_work
from polylab.schedule.optimize.records import (Jam, ProgramScore, SerialLoop, ShapeFacts, StatementChoice,
                                               StatementScore)
from polylab.schedule.optimize.report import Compared, OptimizeReport
from polylab.schedule.optimize.search import optimize, optimize_schedule, settings_of, step_text
from polylab.schedule.optimize.shapes import Settings, Shape, shapes
from polylab.schedule.optimize.structures import chain_shadowed, innermost_pairs
from polylab.schedule.tuning import MIN_PARALLEL_SPAN, MIN_TEAM_WORK, STRIP_ROWS, TIME_TILE, WAVE_TILE

__all__ = ["Candidate", "Compared", "DEFAULT_VECTOR_BYTES", "Innermost", "Jam", "JamKind", "JamOutcome",
           "MIN_PARALLEL_SPAN", "MIN_TEAM_WORK", "Machine", "OptimizeReport", "ProgramScore", "STRIP_ROWS",
           "SerialLoop", "SerialReason", "Settings", "Shape", "ShapeFacts", "ShapeKind", "StatementChoice",
           "StatementScore", "Structure", "TIME_TILE", "TimeTiling", "WAVE_TILE", "band_tile_size", "cache_tile_sizes",
           "carries_chain", "chain_loop", "chain_rows", "chain_shadowed", "exact_parallel_loops", "fits_in_cache",
           "footprint_bytes", "innermost_pairs", "is_stride_one", "iterator_of", "local_span", "loop_dims",
           "openmp_dims", "optimize", "optimize_schedule", "parallel_loops", "private_start", "reduction_loop",
           "settings_of", "shapes", "step_text", "stream_tile_sizes", "strip_width", "team_work", "time_tile_size",
           "value_span", "wave_tile_sizes"]
