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

import itertools
import os
import time
import weakref
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Sequence

import islpy as isl

from polylab.errors import PolylabError, ScheduleError
from polylab.model import Scop, Statement
from polylab.model.islutil import point_coordinates
from polylab.render import Displayable, esc
from polylab.schedule.core import Schedule, const_aff, const_value, floor_div, map_from_affs, skewed
from polylab.schedule.legality import is_legal, is_violated
from polylab.schedule.bandtile import BAND_TILE, tiled_band
from polylab.schedule.jam import group, jammed
from polylab.schedule.pluto import pluto_schedule
from polylab.schedule.shiftfuse import fuse_with_shifts
from polylab.schedule.target import DEFAULT_VECTOR_BYTES, vector_bytes
from polylab.schedule.timetile import time_strips, time_tiled
from polylab.schedule.transform import distribute, mark_parallel

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
#: iterations of a reduction loop jammed into the vector loop inside it (:func:`_jam_reductions`)
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

Aff = isl.PwAff


# --------------------------------------------------------------------------------------------------------
# what a loop is
def iterator_of(aff: Aff, stmt: Statement) -> int | None:
    """The iterator ``k`` when ``aff`` is ``x_k + c`` or ``-x_k + c`` (one piece), else None."""
    if aff.n_piece() != 1 or aff.is_cst():
        return None
    pieces = aff.get_pieces()
    a = pieces[0][1]
    found = None
    for k in range(len(stmt.iterators)):
        v = int(a.get_coefficient_val(isl.dim_type.in_, k).to_python())
        if v == 0:
            continue
        if abs(v) != 1 or found is not None:
            return None
        found = k
    if not a.get_denominator_val().is_one():
        return None
    return found


def stride_score(stmt: Statement, k: int | None) -> int:
    """How well iterator ``k`` suits the innermost loop: per access, +2 when it moves along the last
    subscript with step 1 and no other subscript (stride-1), +1 when the access does not depend on it,
    -2 otherwise (a stride of a whole row or more). None (not a plain iterator) scores 0."""
    if k is None:
        return 0
    score = 0
    for acc in stmt.accesses:
        F = acc.matrix
        if F is None or F.rows == 0:
            continue
        col = [int(F[r, k]) for r in range(F.rows)]
        if all(c == 0 for c in col):
            score += 1
        elif abs(col[-1]) == 1 and all(c == 0 for c in col[:-1]):
            score += 2
        else:
            score -= 2
    return score


def is_stride_one(stmt: Statement, k: int | None) -> bool:
    """Every access that depends on iterator ``k`` moves along its last subscript with step 1, and one
    does (so a loop over ``k`` walks memory contiguously)."""
    if k is None:
        return False
    any_move = False
    for acc in stmt.accesses:
        F = acc.matrix
        if F is None or F.rows == 0:
            continue
        col = [int(F[r, k]) for r in range(F.rows)]
        if all(c == 0 for c in col):
            continue
        if abs(col[-1]) != 1 or any(col[:-1]):
            return False
        any_move = True
    return any_move


def loop_dims(s: Schedule, name: str) -> list[int]:
    """The dimensions that are loops (not constants) for statement ``name``."""
    return [d for d, a in enumerate(s.affs[name]) if not a.is_cst()]


def parallel_loops(s: Schedule) -> dict[str, int]:
    """Per statement, the number of its loops that are marked parallel (a marked dimension that is not
    constant for it): the structural measure the optimizer never lowers."""
    return {st.name: sum(1 for d in loop_dims(s, st.name) if d in s.marked) for st in s.scop.statements}


# --------------------------------------------------------------------------------------------------------
# the structure of the starting schedule
def private_start(s: Schedule, name: str) -> int:
    """The first dimension of ``name``'s private loops: its first loop dimension ``d`` that no other
    statement runs in the same iteration of the enclosing dimensions (another statement shares ``d``
    when it has a loop at ``d`` and equal constants on every dimension before ``d`` that is constant for
    both). ``n_dims`` when every loop is shared."""
    mine = s.affs[name]
    others = [n for n in s.affs if n != name]
    for d in loop_dims(s, name):
        shared = False
        for o in others:
            theirs = s.affs[o]
            if theirs[d].is_cst():
                continue
            if all(not (mine[e].is_cst() and theirs[e].is_cst()) or const_value(mine[e]) == const_value(theirs[e])
                   for e in range(d)):
                shared = True
                break
        if not shared:
            return d
    return s.n_dims


@dataclass(frozen=True)
class Shape:
    """One statement's rewriting: its new private loops and the words that explain them."""

    kind: str
    loops: tuple[Aff, ...]
    text: str


@dataclass(frozen=True)
class Sizes:
    """The sizes the optimizer uses: threads, strip rows, wavefront tile (rows, skewed columns), and
    whether cache tiling is offered (off by default: on the 2-core development machine, whose 32 MiB L3
    holds the reused slices of PolyBench sizes, tiled gemm was slower than the source order; ``--tune``
    times it)."""

    threads: int
    rows: int = STRIP_ROWS
    wave: tuple[int, int] = WAVE_TILE
    tile: bool = False
    #: the vector width in bytes of the build chosen for (:mod:`polylab.schedule.target`)
    vector: int = DEFAULT_VECTOR_BYTES


def shapes(stmt: Statement, loops: Sequence[Aff], names: Sequence[str], sizes: Sizes,
           point_bytes: int = 8, element: int = 8) -> list[Shape]:
    """The candidate rewritings of a statement's private loops (see the module text), identity first.
    ``point_bytes``: the bytes of one element of each array the statement accesses, summed (the cache
    model of :func:`wave_tile_sizes`); ``element``: the largest of them (:func:`stream_tile_sizes`)."""
    m = len(loops)
    out = [Shape("keep", tuple(loops), "source order")]
    if m == 0:
        return out
    for perm in itertools.permutations(range(m)):
        if list(perm) != list(range(m)) and m <= 4:
            out.append(Shape("interchange", tuple(loops[p] for p in perm),
                             "interchange to (" + ", ".join(names[p] for p in perm) + ")"))
    for p in range(m):
        if is_stride_one(stmt, iterator_of(loops[p], stmt)) and m >= 2:
            rest = [loops[q] for q in range(m) if q != p]
            if sizes.threads == 1 and not _reused_across(stmt, rest):
                continue   # one thread: the tile loop's parallelism is unused, the strip walk only costs
            out.append(Shape("strip", (floor_div(loops[p], PAR_STRIP), *rest, loops[p]),
                             f"strip-mine {names[p]} by {PAR_STRIP}: tiles of {names[p]} outside, "
                             f"{names[p]} innermost"))
    order = _tiling_order(stmt, loops)
    if order is not None and sizes.tile and sizes.threads == 1:
        tj, tk = stream_tile_sizes(element)
        rest, mid, inner = [loops[p] for p in order[:-2]], loops[order[-2]], loops[order[-1]]
        out.append(Shape("stream-tile", (floor_div(inner, tj), floor_div(mid, tk), *rest, mid, inner),
                         f"tiles {tk}x{tj} of ({names[order[-2]]}, {names[order[-1]]}) outside "
                         f"{', '.join(names[p] for p in order[:-2])}: the array read again in every "
                         f"iteration of the outer loop stays in the L2 cache ({cache_sizes()[1] // 1024} "
                         f"KiB, cache model) while the vector loop {names[order[-1]]} stays long"))
    if order is not None and sizes.tile:
        tsz = cache_tile_sizes(m, len({acc.array for acc in stmt.accesses}))
        tl = [loops[p] for p in order]
        out.append(Shape("tile", tuple(floor_div(x, t) for x, t in zip(tl, tsz)) + tuple(tl),
                         f"tiles {'x'.join(map(str, tsz))} of ({', '.join(names[p] for p in order)}): an "
                         f"array reused across the outer loop would leave the cache (L2 "
                         f"{cache_sizes()[1] // 1024} KiB)"))
    if m >= 2:
        a, b = loops[-2], loops[-1]
        an, bn = names[-2], names[-1]
        for f in range(MAX_SKEW + 1):
            skew = skewed(b, a, f)
            sk = f"{bn} + {f}{an}" if f > 1 else (f"{bn} + {an}" if f == 1 else bn)
            head = tuple(loops[:-2])
            rows = sizes.rows
            out.append(Shape("strips", head + (floor_div(a, rows), skew, a),
                             f"strips of {rows} rows of {an} along {sk} ({rows} independent chains in flight)"))
            # also for one thread: the strips' only parallel loop is their innermost one, under
            # sequential loops, and OpenMP would start it once per column (seidel2d: 0.15x of the
            # source order); the wave's parallel tile loop gives it one start per wave instead
            A, B = sizes.wave if all(sizes.wave) else wave_tile_sizes(point_bytes, rows)
            wave = floor_div(a, A).add(floor_div(skew, B))
            out.append(Shape("strips+wave", head + (wave, floor_div(a, A), floor_div(a, rows), skew, a),
                             f"tile-level wavefront of {A}x{B} tiles over ({an}, {sk}), strips of "
                             f"{rows} rows inside" + ("" if all(sizes.wave) else
                                                      f" (tile size from the cache model: L2 "
                                                      f"{cache_sizes()[1] // 1024} KiB)")))
        if m >= 3:
            out += _time_tiled_strips(loops, names, sizes)
    return out


def _time_tiled_strips(loops: Sequence[Aff], names: Sequence[str], sizes: Sizes) -> list[Shape]:
    """The strips inside a tile-level wavefront over the *outer* two of the last three loops
    ``(t, a, b)``: ``(.., floor(t / T) + floor(a' / T), floor(a' / T), t, floor(a' / S), b' + f a', a')``
    with ``a' = a + g t`` and ``b' = b + g t`` (``g`` in 0, 1: the time skew that makes the ``(t, a')``
    rectangle legal where the dependences go back in ``a``) and the strips' skew ``f``. A ``T x T``
    tile of ``(t, a')`` runs ``T`` steps of ``t`` over ``T`` rows of ``a'`` (every ``b``), so each step
    re-reads the rows the step before it wrote while they are in cache, and one OpenMP start runs a whole
    wave of such tiles: ``O(n / T)`` starts instead of the per-step wavefront's ``O(n)`` per step of
    ``t`` (sl3 on two threads: 3.3x of the original against 1.5x, measured). ``T``: :data:`TIME_TILE`,
    or the wavefront size when one is given."""
    t, a, b = loops[-3], loops[-2], loops[-1]
    tn, an, bn = names[-3], names[-2], names[-1]
    head = tuple(loops[:-3])
    size = sizes.wave[0] if all(sizes.wave) else TIME_TILE
    rows = sizes.rows
    out = []
    for g in (0, 1):
        ag, bg = skewed(a, t, g), skewed(b, t, g)
        agn = f"{an} + {tn}" if g else an
        bgn = f"{bn} + {tn}" if g else bn
        for f in range(MAX_SKEW + 1):
            skew = skewed(bg, ag, f)
            sk = f"{bgn} + {f}({agn})" if f > 1 else (f"{bgn} + {agn}" if f == 1 else bgn)
            wave = floor_div(t, size).add(floor_div(ag, size))
            out.append(Shape("strips+skewed-time-wave" if g else "strips+time-wave",
                             head + (wave, floor_div(ag, size), t, floor_div(ag, rows), skew, ag),
                             f"tile-level wavefront of {size}x{size} tiles over ({tn}, {agn}), each running "
                             f"its {size} steps of {tn} with strips of {rows} rows of {agn} along {sk} inside"))
    return out


def _tiling_order(stmt: Statement, loops: Sequence[Aff]) -> tuple[int, ...] | None:
    """The loop order to tile in, when the cache model says tiling pays: at least three private loops,
    all plain iterators, ordered with the best stride-1 loop innermost, and an access that does not
    depend on the outermost of them but on the two innermost (its reuse across the outer loop is a whole
    two-dimensional slice away: gemm's ``B[k][j]`` across ``i``). None otherwise."""
    its = [iterator_of(x, stmt) for x in loops]
    if len(loops) < 3 or any(k is None for k in its):
        return None
    inner = max(range(len(loops)), key=lambda p: (stride_score(stmt, its[p]), p))
    if not is_stride_one(stmt, its[inner]):
        return None
    order = tuple(p for p in range(len(loops)) if p != inner) + (inner,)
    outer, mid = its[order[0]], its[order[-2]]
    for acc in stmt.accesses:
        F = acc.matrix
        if F is None:
            continue
        uses = [any(int(F[r, k]) for r in range(F.rows)) for k in range(len(stmt.iterators))]
        if not uses[outer] and uses[mid] and uses[its[inner]]:
            return order
    return None


# --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StatementChoice:
    """What the optimizer did to one statement, and why."""

    statement: str
    shape: str
    why: str
    parallel: int
    vector: bool


@dataclass(frozen=True, eq=False, repr=False)
class OptimizeReport(Displayable):
    """The optimizer's choices (one line each), the alternatives it rejected, and the result."""

    schedule: Schedule
    lines: tuple[str, ...]
    choices: tuple[StatementChoice, ...]
    source_parallel: MappingProxyType
    seconds: float

    def text(self) -> str:
        return "\n".join(self.lines)

    def html(self) -> str:
        items = "".join(f"<li>{esc(x)}</li>" for x in self.lines)
        return f"<div class='polylab-optimize'><b>optimize</b><ul>{items}</ul></div>"

    def to_json(self) -> dict:
        return {"schedule": self.schedule.text(), "steps": list(self.schedule.steps),
                "parallel_dims": sorted(self.schedule.marked), "explanation": list(self.lines),
                "statements": [{"statement": c.statement, "shape": c.shape, "why": c.why,
                                "parallel_loops": c.parallel, "vector_innermost": c.vector}
                               for c in self.choices],
                "source_parallel_loops": dict(self.source_parallel), "seconds": self.seconds}


class _Layout:
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
        return Schedule(self.scop, MappingProxyType(maps), tuple(steps), frozenset(), (), self.base.deps,
                        MappingProxyType({}))

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


@lru_cache(maxsize=65536)
def value_span(aff: Aff, domain: isl.Set) -> int | None:
    """How many values the time dimension ``aff`` can take over ``domain`` when that number is bounded by
    a constant, for all parameter values together (``max - min + 1`` of the image with the parameters
    projected out, exact); None when it grows with the parameters. A dimension of span 1 is no loop at
    all (``floor(t / 128)`` for ``0 <= t < 10``); a parallel loop of constant span gives a fixed amount
    of parallel work, however large the problem."""
    return _extent(isl.Map.from_pw_aff(aff).intersect_domain(domain).range())


def _extent(values: isl.Set) -> int | None:
    """``max - min + 1`` of a one-dimensional set over all parameter values (0 when it is empty, None when
    it is unbounded)."""
    values = values.project_out(isl.dim_type.param, 0, values.dim(isl.dim_type.param))
    if values.is_empty():
        return 0
    if not values.is_bounded():
        return None
    (lo,) = point_coordinates(values.lexmin().sample_point())
    (hi,) = point_coordinates(values.lexmax().sample_point())
    return hi - lo + 1


def _score(vec: Sequence[Aff], marked: frozenset[int], stmt: Statement) -> tuple:
    """The score of statement ``stmt`` with time vector ``vec`` and parallel dimensions ``marked``
    (larger is better; see the module text). A dimension of constant span 1 (:func:`value_span`) is not
    a loop, and a parallel loop counts as parallel only when its span grows with the parameters or is
    at least :data:`MIN_PARALLEL_SPAN`: a loop of a few iterations gives no parallelism worth a thread
    team (inside a sequential loop, OpenMP would start it once per iteration of that loop for a handful
    of iterations' work: 250 times slower than the original on ``for (t = 0; t < 10; t++) for (i ..;
    i += 2) c[i] += 0.25 * c[i - 2]`` under a tile-level wavefront). The innermost loop counts as a vector
    loop (or as independent chains) when it is parallel, whatever its span: vectors need no thread team."""
    span = {d: value_span(a, stmt.domain) for d, a in enumerate(vec) if not a.is_cst()}

    def at_least(d: int, bound: int) -> bool:  # unbounded (None) and empty (0) spans count as long
        return (span[d] or bound) >= bound

    dims = [d for d in span if span[d] != 1]
    scalable = {d for d in dims if d in marked and at_least(d, MIN_PARALLEL_SPAN)}
    par = [k for k, d in enumerate(dims) if d in scalable]
    if not dims:
        return (0, 0, 0, 0, 0)
    # loops of a few constant iterations inside are unrolled by the compiler (gcc -O3 peels them
    # completely): the loop that runs innermost in the machine code is the last one with more
    # (a 3x3 convolution keeps its 9-term sum in a register and vectorizes the column loop around it)
    long_dims = [d for d in dims if at_least(d, UNROLLED_SPAN)]
    last = long_dims[-1] if long_dims else dims[-1]
    inner = vec[last]
    k = iterator_of(inner, stmt)
    stride1 = is_stride_one(stmt, k)
    # vectors need no thread team: a parallel stride-1 loop of a few dozen iterations still vectorizes
    vector = last in marked and stride1
    inner = 3 if vector else (2 if stride1 else (1 if last in marked else 0))
    return (-(par[0]) if par else -100, inner, stride_score(stmt, k),
            -len(dims), len(par))


def _rank(key: tuple, threads: int) -> tuple:
    """The order of two scores (:func:`_score`): as they are with threads; with one thread a vector
    innermost loop comes first, before the depth of the outermost parallel loop, which no thread uses
    then (``S[i][j] += S[i - 1][j]`` interchanged to put the parallel ``j`` outside the recurrence along
    ``i``, or strip-mined along ``j``, only walks its rows worse: 0.57x of the source order, measured)."""
    return key if threads > 1 else (key[1] == 3,) + key


def _good_enough(key: tuple, best_kind: str, first_private: int, next_kind: str) -> bool:
    """Skip the next shape: the best so far has a parallel loop at the first private depth (or outside)
    and a vectorizable innermost loop (nothing scores higher), or it has a parallel loop and the next
    shapes are the strips, which are only for statements with no parallel loop (a parallel innermost loop
    of any span counts); or the best is the strips'
    time wavefront without a time skew and the next is one with it; or the next is the best's kind of
    strips with a larger skew ``f`` while the best's innermost loop is already parallel (only ``f`` differs,
    and the score does not depend on it then). The tiling shape (only offered when the
    cache model asks for it) is always tried."""
    if next_kind.endswith("tile"):
        return False
    if next_kind == "strips+skewed-time-wave" and best_kind == "strips+time-wave":
        return True   # the time skew only where the plain rectangle is illegal
    if next_kind == best_kind and best_kind.startswith("strips") and key[1] >= 1:
        return True   # a larger skew of the same strips scores the same once the innermost loop is parallel
    if -key[0] <= first_private and key[1] == 3:
        return True
    # a parallel innermost loop (key[1] 1 or 3) is a parallel loop too, however short: no chains to overlap
    return (key[0] > -100 or key[1] in (1, 3)) and next_kind.startswith("strips") \
        and not best_kind.startswith("strips")


def _names(stmt: Statement, loops: Sequence[Aff]) -> list[str]:
    out = []
    for a in loops:
        k = iterator_of(a, stmt)
        out.append(stmt.iterators[k] if k is not None else str(a).split("->")[-1].strip(" }[]()"))
    return out


def _pick(layout: _Layout, rows: dict[str, list[Aff]], n: str, sizes: Sizes, floor_par: int,
          prefix_marked: frozenset[int], open_deps: Sequence, log: list[str]
          ) -> tuple[dict[str, list[Aff]], StatementChoice, frozenset[int]] | None:
    """The best legal shape of statement ``n``'s private loops, the others as in ``rows``.

    Only the dependences into or out of ``n`` are checked: the others keep their time vectors, so they
    stay satisfied. With separate blocks the coincidence of ``n``'s block is exact on those dependences
    too (the other statements are constant there), and that of the prefix dimensions does not change
    (``prefix_marked``, computed once); a dependence whose every pair the prefix dimensions already
    order strictly cannot be affected by any block and is skipped (``open_deps`` are the others). The
    whole schedule is checked exactly at the end. Returns the new rows, the choice, and the marked
    (exactly parallel) dimensions of ``n``'s block (with separate blocks; else empty)."""
    stmt = layout.scop.statement(n)
    names = _names(stmt, layout.private[n])
    mine = tuple(d for d in open_deps if n in (d.source, d.sink))
    best = None
    tried = 0
    first_private = len(loop_dims(layout.base, n)) - len(layout.private[n])
    sizes_of = element_bytes(layout.scop)
    touched = {acc.array for acc in stmt.accesses}
    point_bytes = sum(sizes_of.get(x, 8) for x in touched)
    element = max((sizes_of.get(x, 8) for x in touched), default=8)
    for shape in shapes(stmt, layout.private[n], names, sizes, point_bytes, element):
        if best is not None and _good_enough(best[0], best[1].kind, first_private, shape.kind):
            continue
        trial = dict(rows)
        trial[n] = list(shape.loops)
        cand = replace(layout.build(trial, layout.base.steps), deps=mine)
        tried += 1
        if not is_legal(cand):
            continue
        vec = layout.vectors(trial)[n]
        if layout.separate:
            start = layout.offsets(trial)[n]
            block = range(start, start + len(shape.loops))
            marked = prefix_marked | {d for d in block if not vec[d].is_cst() and cand.is_coincident(d)}
            cand = cand.relabelled(marked=frozenset(marked))
        else:
            cand = cand.relabelled(marked=layout.whole_marks(trial))
        n_par = sum(1 for d, a in enumerate(vec) if not a.is_cst() and d in cand.marked)
        if n_par < floor_par:
            continue
        key = _score(vec, cand.marked, stmt)
        key = key[:3] + (1 if shape.kind.endswith("tile") else 0,) + key[3:]
        if best is None or _rank(key, sizes.threads) > _rank(best[0], sizes.threads):
            best = (key, shape, cand)
    if best is None:
        return None
    key, shape, cand = best
    rows = dict(rows)
    rows[n] = list(shape.loops)
    own = frozenset(cand.marked - prefix_marked) if layout.separate else frozenset()
    choice = StatementChoice(n, shape.kind, shape.text, key[-1], key[1] == 3)
    log.append(f"{n} ({stmt.code()}): {shape.text}; {choice.parallel} parallel loop"
               f"{'s' if choice.parallel != 1 else ''}"
               + ("" if key[0] <= -100 else f", outermost parallel at loop depth {-key[0]}")
               + (", innermost loop parallel and stride-1 (vectorizable)" if choice.vector else "")
               + f"  [{tried} shapes tried, legality exact]")
    return rows, choice, own


def _from_base(base: Schedule, sizes: Sizes, floor_par: dict[str, int], lines: list[str]
               ) -> tuple[Schedule, list[StatementChoice], bool]:
    """Rewrite each statement's private loops in ``base`` (keeping its fusion); ``floor_par``: the parallel
    loops each statement must keep.

    With separate blocks the marked dimensions of the result are the prefix's and each block's, as
    :func:`_pick` found them: exact, since a block's coincidence depends only on the dimensions up to its
    end (the prefix and the earlier blocks, final when it is chosen) and on the dependences of its
    statement (the others are constant there). Otherwise they are marked on the whole (the third value
    says so). The caller checks the legality of the schedule it keeps (:func:`optimize_schedule`)."""
    layout = _Layout(base)
    loops_of = {n: list(layout.private[n]) for n in layout.names}
    if not layout.separate:
        lines.append(f"over {SEPARATE_LIMIT} statements: private loops share schedule dimensions")
    choices = []
    start = layout.build(loops_of, base.steps)
    prefix_marked = frozenset(d for d in range(layout.width) if not start.is_scalar(d) and start.is_coincident(d))
    start = start.relabelled(marked=prefix_marked)
    marked, exact = set(prefix_marked), layout.separate
    prefix_only = layout.build({n: [] for n in layout.names}, base.steps)
    open_deps = [d for d in base.dependences if is_violated(prefix_only, d)]
    for n in layout.names:
        if not layout.private[n]:
            dims = loop_dims(start, n)
            stmt = layout.scop.statement(n)
            vector = bool(dims) and dims[-1] in start.marked and is_stride_one(
                stmt, iterator_of(start.affs[n][dims[-1]], stmt))
            choices.append(StatementChoice(n, "shared", "all its loops are shared", parallel_loops(start)[n],
                                           vector))
            continue
        picked = _pick(layout, loops_of, n, sizes, floor_par[n], prefix_marked, open_deps, lines)
        if picked is None:
            exact = False
            continue
        loops_of, choice, own = picked
        choices.append(choice)
        marked |= own
    result = layout.build(loops_of, base.steps)
    if exact:
        return result.relabelled(marked=frozenset(marked)), choices, False
    if not layout.separate:
        return result.relabelled(marked=layout.whole_marks(loops_of)), choices, True
    return mark_parallel(result), choices, True


def openmp_dims(s: Schedule, threads: int = 2) -> tuple[frozenset[int], list[str]]:
    """The parallel dimensions of ``s`` that keep their OpenMP loop, and a line for each one left out.

    A marked dimension inside a marked dimension of every statement that runs it gets no OpenMP loop: the
    outer one is the parallel loop (a wave of time tiles may hold a single tile, and isl then drops the
    tile loop, which would leave the inner loop as an OpenMP loop started once per row).

    A marked dimension ``d`` is left to the vectorizer (unmarked; it stays exactly parallel) when, for
    every statement with a loop at ``d``, ``d`` is its innermost loop (:func:`_innermost_long`: only
    loops of a few constant iterations, which the compiler unrolls, may run inside it, such as the rows
    of a jam), no loop around it is marked, and a
    loop around it walks the arrays (a plain iterator that some access of the statement is subscripted
    by): OpenMP would start the loop once per row of that walk, each start with one row of work (atax's
    ``y[j] += A[i][j] * tmp[i]``, parallel in ``j`` inside the sequential ``i``: 0.36x of the original
    on two threads, 4000 starts of 4000 iterations). A loop around it that no subscript uses (a time
    loop, jacobi-1d's ``t``) repeats a whole sweep per start: kept, except for one thread, where OpenMP
    only costs: the loop it outlines loses the kernel's ``restrict`` and is not vectorized (jacobi-1d at
    one thread: 0.72x of the original with it)."""
    keep = set(s.marked)
    why = []
    names = [st.name for st in s.scop.statements]
    for d in sorted(s.marked):
        users = [n for n in names if not s.affs[n][d].is_cst()]
        if not users:
            continue
        if all(any(e in keep for e in loop_dims(s, n) if e < d) for n in users):
            keep.discard(d)
            why.append(f"dimension {d} is parallel inside a parallel loop: no OpenMP loop of its own (where "
                       f"the outer parallel loop runs once, OpenMP would start it once per iteration "
                       f"of the loops between them)")
            continue
        rows, per_row = [], True
        for n in users:
            dims = loop_dims(s, n)
            stmt = s.scop.statement(n)
            outer = [e for e in dims if e < d]
            walks = [e for e in outer if any(_subscripted(stmt, k) for k in range(stmt.depth)
                                             if s.affs[n][e].involves_dims(isl.dim_type.in_, k, 1))]
            if not _innermost_long(s, stmt, d) or any(e in keep for e in outer) or not (
                    walks or threads == 1 and outer):
                break
            rows.append(f"{n}: {s.expressions(n)[(walks or outer)[-1]]}")
            per_row = per_row and bool(walks)
        else:
            keep.discard(d)
            why.append(f"dimension {d} is parallel but left to the vectorizer without OpenMP: it is the "
                       f"innermost loop inside sequential loops ({'; '.join(rows)}), and "
                       + ("OpenMP would start it once per row" if per_row else
                          "with one thread OpenMP would only move it out of the kernel, away from its "
                          "restrict arrays"))
            continue
        work = team_work(s, d, users)
        if work is not None and work[1] < MIN_TEAM_WORK * work[0]:
            keep.discard(d)
            why.append(f"dimension {d} is parallel but runs sequentially: OpenMP would start a team "
                       f"{work[0]} time{'s' if work[0] != 1 else ''} for {work[1]} statement instances "
                       f"(about {work[1] // work[0]} per start, fewer than {MIN_TEAM_WORK}), and each "
                       f"start costs microseconds")
    return frozenset(keep), why


def team_work(s: Schedule, d: int, users: Sequence[str]) -> tuple[int, int] | None:
    """``(starts, instances)`` of an OpenMP loop at dimension ``d`` run by the statements ``users``, where
    the sizes are constants (no parameter): ``starts = |{ theta_{<d}(x) : x in D_n, n in users }|`` is the
    number of distinct values of the dimensions around ``d`` (each starts a team), ``instances =
    sum_n |D_n|`` the statement instances they share (exact counts). None where the program has
    parameters (the sizes are known only when it runs)."""
    scop = s.scop
    if scop.parameters:
        return None
    starts, instances = None, 0
    try:
        for n in users:
            stmt = scop.statement(n)
            domain = stmt.domain
            instances += int(domain.count_val().to_python())
            around = map_from_affs(stmt, domain.get_space(), list(s.affs[n][:d]))
            prefix = around.intersect_domain(domain).range()
            starts = prefix if starts is None else starts.union(prefix)
        count = int(starts.count_val().to_python()) if d else 1
    except isl.Error:  # isl could not count a set: unknown, as with parameters
        return None
    return max(count, 1), instances


def _innermost_long(s: Schedule, stmt: Statement, d: int) -> bool:
    """Dimension ``d`` is a loop of ``stmt`` in ``s`` and every loop of ``stmt`` inside it runs at most
    :data:`UNROLLED_SPAN` iterations for all parameter values (the rows of a jam; the compiler unrolls
    them completely: ``d`` is the innermost loop of the machine code)."""
    domain = stmt.domain.intersect_params(s.scop.context)
    dims = loop_dims(s, stmt.name)
    v = s.affs[stmt.name]
    return d in dims and all((local_span(stmt, v[:e], v[e], domain) or UNROLLED_SPAN + 1) <= UNROLLED_SPAN
                             for e in dims if e > d)


@lru_cache(maxsize=4096)
def local_span(stmt: Statement, outer: tuple[Aff, ...], aff: Aff, domain: isl.Set) -> int | None:
    """How many values the time dimension ``aff`` takes at one value of the dimensions ``outer`` around
    it, at most, when that is bounded by a constant (the row loop of a jam, ``i`` from ``8 c`` to
    ``8 c + 7`` inside ``c = floor(i / 8)``: 8); None when it grows with the parameters. Exact: with
    ``R = { outer(x) -> aff(x) : x in domain }``, one more than the largest difference of two values of
    ``aff`` that ``R`` relates to the same outer values (the differences run from ``-m`` to ``m``).
    ``stmt``: the statement whose time dimensions ``outer`` and ``aff`` are, ``domain`` its instances."""
    if not outer:
        return value_span(aff, domain)
    prefix = map_from_affs(stmt, domain.get_space(), list(outer))
    R = prefix.intersect_domain(domain).reverse().apply_range(isl.Map.from_pw_aff(aff))
    # the differences are symmetric (-m .. m): their extent 2m + 1 gives the largest one, m
    extent = _extent(R.reverse().apply_range(R).deltas())
    return None if extent is None else (extent + 1) // 2 if extent else 0


def _uses(acc, k: int) -> bool:
    """Access ``acc``'s subscripts depend on iterator ``k``."""
    return acc.matrix is not None and any(int(acc.matrix[r, k]) for r in range(acc.matrix.rows))


def _subscripted(stmt: Statement, k: int | None) -> bool:
    """Some access of ``stmt`` is subscripted by iterator ``k``."""
    return k is not None and any(_uses(acc, k) for acc in stmt.accesses)


def exact_parallel_loops(s: Schedule) -> dict[str, int]:
    """Per statement, its loops that are exactly parallel in ``s`` (marked for OpenMP or not)."""
    par = set(s.parallel_dims)
    return {st.name: sum(1 for d in loop_dims(s, st.name) if d in par) for st in s.scop.statements}


def innermost_parallel(s: Schedule) -> set[str]:
    """The statements whose innermost loop is marked parallel in ``s``."""
    return {n for n in s.affs if loop_dims(s, n) and loop_dims(s, n)[-1] in s.marked}


def vector_floor(source: Schedule) -> dict[str, int]:
    """The parallel loops a statement must keep when only its innermost one counts (one thread): one for
    a statement whose innermost loop is parallel in ``source``, else none."""
    inner = innermost_parallel(source)
    return {n: 1 if n in inner else 0 for n in source.affs}


def keeps_vectors(source: Schedule, s: Schedule) -> bool:
    """Every statement whose innermost loop is parallel in ``source`` has a parallel innermost loop in
    ``s`` (a rewriting never takes a vector loop away)."""
    return innermost_parallel(source) <= innermost_parallel(s)


def fused_pairs(s: Schedule) -> set[tuple[str, str]]:
    """The pairs of statements that share at least one loop in ``s`` (a dimension that is a loop for
    both, with equal constants on every earlier dimension constant for both)."""
    out = set()
    names = [st.name for st in s.scop.statements]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for d in range(s.n_dims):
                x, y = s.affs[a][d], s.affs[b][d]
                if x.is_cst() and y.is_cst():
                    if const_value(x) != const_value(y):
                        break
                    continue
                if not x.is_cst() and not y.is_cst():
                    out.add((a, b))
                break
    return out


def shared_loops(s: Schedule, a: str, b: str) -> int:
    """How many loops statements ``a`` and ``b`` share in ``s`` (the loop dimensions of both before the
    first dimension where they part: a constant that differs, or a loop of only one)."""
    n = 0
    for x, y in zip(s.affs[a], s.affs[b]):
        if x.is_cst() and y.is_cst():
            if const_value(x) != const_value(y):
                break
        elif x.is_cst() or y.is_cst():
            break
        else:
            n += 1
    return n


def reuse_gained(source: Schedule, s: Schedule) -> int:
    """Over the pairs of statements that access a common array, the loops they share in ``s`` beyond
    those they share in ``source`` (a fusion: each such loop keeps the common elements of one iteration
    in cache for both instead of streaming them once per statement)."""
    arrays = {st.name: {a.array for a in st.accesses} for st in s.scop.statements}
    names = [st.name for st in s.scop.statements]
    return sum(max(0, shared_loops(s, a, b) - shared_loops(source, a, b))
               for i, a in enumerate(names) for b in names[i + 1:] if arrays[a] & arrays[b])


def reuse_lost(source: Schedule, s: Schedule) -> int:
    """Pairs of statements that read a common array inside a shared loop of ``source`` and no longer
    share a loop in ``s`` (each such distribution streams that array once more)."""
    reads = {st.name: {a.array for a in st.reads} for st in s.scop.statements}
    kept = fused_pairs(s)
    return sum(1 for a, b in fused_pairs(source) if (a, b) not in kept and reads[a] & reads[b])


def innermost_pairs(s: Schedule) -> set[tuple[str, str]]:
    """The pairs of statements that run in one body of their innermost loop in ``s``: both have their
    last loop at the same dimension ``d`` and share it (:func:`fused_pairs`' condition on every
    dimension up to ``d``), so one iteration of that loop runs both."""
    out = set()
    last = {n: (loop_dims(s, n) or [None])[-1] for n in s.affs}
    names = [st.name for st in s.scop.statements]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            d = last[a]
            if d is None or last[b] != d:
                continue
            if all(const_value(s.affs[a][e]) == const_value(s.affs[b][e])
                   for e in range(d) if s.affs[a][e].is_cst() and s.affs[b][e].is_cst()):
                out.add((a, b))
    return out


def chain_shadowed(source: Schedule, s: Schedule) -> set[str]:
    """Statements whose work the source order hides behind a dependence chain and ``s`` no longer does.

    A statement ``X`` that shares its innermost loop with ``Y`` in ``source``, where ``Y``'s innermost
    loop in ``s`` is still sequential (a dependence chain: each iteration waits for the previous one's
    result, e.g. bicg's ``q[i] += A[i][j] * p[j]`` along ``j``): the loop's time is the chain's latency
    ``n * latency(+)``, and ``X``'s independent work runs in its shadow. Splitting ``X`` off gives it a
    vector loop but adds its time, ``n / vector width`` cycles, to the chain's, which does not shrink: a
    vector loop won that way is no gain (bicg distributed ran at 0.6x of its source order)."""
    split = innermost_pairs(source) - innermost_pairs(s)
    chain = {n for n in s.affs if loop_dims(s, n) and loop_dims(s, n)[-1] not in s.marked}
    return {x for a, b in split for x, y in ((a, b), (b, a)) if y in chain}


def program_key(s: Schedule, choices: Sequence[StatementChoice], threads: int, lost: int = 0,
                shadowed: frozenset[str] = frozenset(), gained: int = 0, time_tiles: bool = False) -> tuple:
    """How good a whole schedule is (larger is better), compared in this order: the number of the
    deepest statements (where the work is) whose innermost loop is vectorizable, not counting those a
    distribution took out of a dependence chain's shadow (``shadowed``, :func:`chain_shadowed`); the
    number of statements tiled for the cache (all the deepest ones under time tiles of the outer band,
    ``time_tiles``, :mod:`polylab.schedule.timetile`); the reuse a distribution loses (``lost``,
    :func:`reuse_lost`: fewer is better); the loops a fusion adds to statements that share an array
    (``gained``, :func:`reuse_gained`); with more than one thread, the number of statements that have a
    parallel loop, again not counting the shadowed ones (the chain still runs alone after them); the loops
    outside the deepest statements' outermost parallel loops (:func:`first_parallel_depth`: fewer is
    better; a shadowed statement counts as having none). On a tie the earlier fusion structure of
    :func:`bases` wins (no distribution that buys nothing)."""
    par = parallel_loops(s)
    with_par = sum(1 for n, v in par.items() if v and n not in shadowed) if threads > 1 else 0
    deepest = max((st.depth for st in s.scop.statements), default=0)
    deep = {st.name for st in s.scop.statements if st.depth == deepest}
    vector = sum(1 for c in choices if c.vector and c.statement in deep and c.statement not in shadowed)
    starts = sum(NO_PARALLEL if n in shadowed else first_parallel_depth(s, n) for n in deep)
    tiled = len(deep) if time_tiles else sum(1 for c in choices if c.shape.endswith("tile"))
    return (vector, tiled, -lost, gained, with_par, -starts)


def first_parallel_depth(s: Schedule, name: str) -> int:
    """How many of statement ``name``'s loops in ``s`` run outside its outermost marked parallel loop
    (:data:`NO_PARALLEL` when it has none): each of them starts the parallel loop again, so fewer is
    better (the wavefront of sl3's time tiles is started once per wave, the per-plane one once per
    wave of every plane)."""
    dims = loop_dims(s, name)
    return next((k for k, d in enumerate(dims) if d in s.marked), NO_PARALLEL)


def bases(s: Schedule, threads: int = 2) -> list[tuple[str, Schedule]]:
    """The fusion structures tried: the starting schedule, its statements distributed just inside its
    outermost loop, and fully distributed (each a scalar dimension with the textual order,
    :func:`polylab.schedule.transform.distribute`), those that are legal (exact check); and its sibling
    perfect nests fused with shifts (:mod:`polylab.schedule.shiftfuse`: the nests' outer loops become
    sequential, their vector loops stay; with more than one thread :func:`optimize_schedule` keeps it
    only with time tiles, whose wave gives back a parallel loop), unless the data fits in cache
    (:func:`fits_in_cache`). Programs of more than :data:`SEPARATE_LIMIT`
    statements keep their fusion (the search stays fast)."""
    out = [("fusion kept as in the starting schedule", s)]
    if not 2 <= len(s.scop.statements) <= SEPARATE_LIMIT or not s.loop_dims:
        return out
    # the fusion streams each array once per outer iteration instead of once per nest: nothing to gain
    # where the data stays in cache anyway (heat-3d at its small size: 0.51x of the original fused)
    fused = None if fits_in_cache(s.scop) else fuse_with_shifts(s, {n: private_start(s, n) for n in s.affs})
    if fused is not None:
        out.append((f"{SHIFT_FUSED} ({'; '.join(fused[1])})", fused[0]))
    first = s.loop_dims[0]
    for level, label in ((first + 1, f"statements distributed inside the outermost loop (level {first + 1})"),
                         (0, "statements fully distributed (level 0)")):
        d = distribute(s, level)
        if is_legal(d):
            out.append((label, d))
    return out


def optimize_schedule(s: Schedule, threads: int | None = None, rows: int = STRIP_ROWS,
                      wave: int | Sequence[int] = WAVE_TILE, tile: bool | int = False,
                      vector: int = 0) -> OptimizeReport:
    """Run the optimizer on schedule ``s`` (see the module text) and return its report; the optimized
    schedule is ``report.schedule`` (legal, parallel dimensions marked, explanation in its notes).
    ``threads``: the threads the code will run on (default :func:`available_threads`); ``rows``: rows of
    the strips; ``wave``: the tile sizes of the strips' wavefront (one number for both; 0: from the cache
    model, :func:`wave_tile_sizes`); ``tile``: offer
    cache tiling; ``vector``: the vector width in bytes of the build (0: the build in effect,
    :func:`polylab.schedule.target.vector_bytes`)."""
    t0 = time.perf_counter()
    threads = available_threads() if threads is None else max(1, int(threads))
    wave_t = (int(wave), int(wave)) if isinstance(wave, int) else (int(wave[0]), int(wave[1]))
    if min(wave_t) < 0:
        raise ScheduleError(f"the tile size of optimize must be 0 (from the cache model) or positive, not "
                            f"{min(wave_t)}", hint="for example optimize(2, 8, 64), or optimize(2) for the model's")
    if vector < 0:
        raise ScheduleError(f"the vector width of optimize is a number of bytes (16, 32, 64) or 0 for the "
                            f"build's, not {vector}", hint="for example optimize(1, 8, 0, 0, 32) for AVX2")
    sizes = Sizes(threads, max(1, int(rows)), wave_t, bool(tile), vector_bytes(vector))
    source = mark_parallel(s)
    source_par = parallel_loops(source)
    lines = [f"optimize ({threads} thread{'s' if threads != 1 else ''}): starting from "
             + ("the source order" if not s.steps else "; ".join(s.steps))]
    best = None
    tried, ranked = [], []
    deepest = max((st.depth for st in s.scop.statements), default=0)
    size = sizes.wave[0] if all(sizes.wave) else time_tile_size(deepest)
    for order, (label, base) in enumerate(bases(s, threads)):
        log: list[str] = []
        fused = label.startswith(SHIFT_FUSED)
        # with threads, a fusion with shifts is only kept with time tiles (their wave is parallel)
        floor = vector_floor(source) if fused and threads == 1 else source_par
        result, choices, on_whole = _from_base(base, sizes, floor, log)
        plain = [] if fused and threads > 1 else [(result, label, log, on_whole, False)]
        for cand, cand_label, cand_log, whole, timed in (plain + _time_tiles(result, size, label, log)
                                                         + _time_strips(result, sizes, label, log)):
            if any(parallel_loops(cand)[n] < v for n, v in floor.items()) or (
                    fused and not keeps_vectors(source, cand)) or (timed and not keeps_vectors(result, cand)):
                continue
            key = program_key(cand, choices, threads, reuse_lost(s, base),
                              frozenset(chain_shadowed(source, cand)), reuse_gained(s, base), timed)
            tried.append(f"{cand_label}: score {key}")
            ranked.append((key, -order, cand_label, cand, choices, cand_log, whole))
    band = _band_tiles(s, ranked, threads, source_par, len(ranked),
                       sizes.wave[0] if all(sizes.wave) else band_tile_size(s.scop))
    if band is not None:
        tried.append(f"{band[2]}: score {band[0]}")
        ranked.append(band)
    # the best first (the earlier structure on a tie); the whole schedule is checked exactly and its
    # parallel dimensions marked anew on all dependences before it is kept
    for key, _, label, result, choices, log, on_whole in sorted(ranked, key=lambda r: r[:2], reverse=True):
        whole = result if on_whole else mark_parallel(result)
        if is_legal(whole) and whole.marked == result.marked:
            best = (key, label, whole, choices, log)
            break
        tried.append(f"{label}: refused by the check of the whole schedule")
    if best is None:
        final, choices = source, []
        lines.append("no rewriting kept every parallel loop: the starting schedule, parallel loops marked")
    else:
        _, label, final, choices, log = best
        why = ("the time loop and the rows are tiled: a tile keeps its rows in cache for its steps, the "
               "tiles of a wave run in parallel, the vector loops stay" if label.endswith("time tiles") else
               f"one thread and {sizes.vector}-byte vectors: the rows stay in the L1 cache for every step "
               f"of a strip, the vector loops stay" if label.endswith("time strips") else
               "a statement had no parallel loop in the other structures: the Pluto-style search's permutable "
               "band gives every statement the tiles of a wave as its parallel loop"
               if label.startswith("the Pluto-style band") else
               "one thread: the nests' vector loops stay, their outer loops now carry the dependences "
               "between them, and each array is streamed once per outer iteration instead of once per nest"
               if label.startswith(SHIFT_FUSED) else
               "loops shared by statements stay shared, so none of their parallel loops is lost; "
               "distribution only when it scores better")
        lines.append(f"fusion: {label} ({why})")
        if len(tried) > 1:
            lines.append("  fusion structures compared (deepest statements with a vectorizable innermost loop "
                         "not taken out of a dependence chain's shadow, tiled statements, minus shared reads "
                         "split apart, loops fused onto shared arrays, statements with a parallel loop when "
                         "threads > 1): " + "; ".join(tried))
        lines += log
    if best is not None:
        floor = source_par if threads == 1 else parallel_loops(final)
        chains = _jam_rows(final, sizes.rows, floor, lines)
        # the code generator isolates the full strips of one depth per band, so a reduction jam at another
        # depth would run with min() bounds: none after a chain's jam (see _jam_reductions)
        final = chains if chains is not final else _jam_reductions(final, floor, lines)
    final = final.relabelled(steps=s.steps + (step_text(threads, sizes),))
    lines.append(f"result: {final.text()}")
    lines.append(f"parallel loops per statement: {parallel_loops(final)} (starting schedule with "
                 f"parallel: {source_par})")
    openmp, why = openmp_dims(final, threads)
    if openmp != final.marked:
        final = final.relabelled(marked=openmp)
        lines += why
    final = final.relabelled(notes=tuple(lines))
    return OptimizeReport(final, tuple(lines), tuple(choices), MappingProxyType(source_par),
                          time.perf_counter() - t0)


def _band_tiles(s: Schedule, ranked: list[tuple], threads: int, floor: dict[str, int], order: int,
                size: int = BAND_TILE) -> tuple | None:
    """The Pluto-style band tiled as a wavefront (:mod:`polylab.schedule.bandtile`), as one more ranked
    candidate, when the best candidate so far leaves a deepest statement without any exactly parallel
    loop (lu's lower part) and inside the tiles every deepest statement gets a vector loop (a parallel,
    stride-1 innermost loop); None otherwise, or when the search's band cannot be tiled. ``size``: the
    tile size of every row (:data:`polylab.schedule.bandtile.BAND_TILE`, or the wavefront size given to
    ``optimize``)."""
    if not ranked or len(s.scop.statements) > SEPARATE_LIMIT:
        return None
    best = max(ranked, key=lambda r: r[:2])[3]
    deepest = max(st.depth for st in s.scop.statements)
    deep = [st for st in s.scop.statements if st.depth == deepest]
    if all(exact_parallel_loops(best)[st.name] for st in deep) or deepest < 3:
        return None
    # a vector loop in the tiles needs, for each deepest statement, a stride-1 iterator that its write
    # depends on (along an iterator the write does not depend on, the statement is a reduction: that
    # loop carries the statement's own dependence and is never parallel); cheap, and it spares the search
    if not all(any(is_stride_one(st, k) and all(_uses(w, k) for w in st.writes) for k in range(st.depth))
               for st in deep):
        return None
    try:
        searched = pluto_schedule(s.scop, s.deps, fallback=False).schedule
    except PolylabError:   # no Pluto-style schedule (or over the search's budget): nothing to tile
        return None

    def vectors(c: Schedule) -> int:
        return sum(1 for st in deep if _vector_innermost(c, st))

    tiled = tiled_band(searched, size, vectors)
    if tiled is None:
        return None
    cand, perm = tiled
    # every deepest statement must get a vector loop inside the tiles (bicg's tiles keep the chain
    # q[i] += A[i][j] * p[j] innermost: 0.4x of the original, measured)
    if vectors(cand) < len(deep) or any(parallel_loops(cand)[n] < v for n, v in floor.items()):
        return None
    choices = [StatementChoice(st.name, "band-tile", "the Pluto-style band tiled", parallel_loops(cand)[st.name],
                               _vector_innermost(cand, st)) for st in s.scop.statements]
    label = (f"the Pluto-style band tiled {size}x.. as a wavefront, points in the order "
             f"({', '.join(f'row {p + 1}' for p in perm)})")
    key = program_key(cand, choices, threads, 0, frozenset(), 0, True)
    log = [f"{label}: {searched.text()} tiled"]
    return key, -order, label, cand, choices, log, True


def chain_loop(s: Schedule, st: Statement) -> tuple[int, int] | None:
    """``(d, p)`` when statement ``st``'s innermost loop in ``s`` (dimension ``p``, the last one of at
    least :data:`UNROLLED_SPAN` iterations) is a *chain*: no write of ``st`` depends on its iterator and
    ``st`` reads the element it writes (an accumulation, ``q[i] = q[i] + A[i][j] * p[j]`` along ``j``:
    each iteration waits for the previous one's add), or ``p`` carries a dependence (it is not exactly
    parallel) and ``st`` reads what it wrote a constant distance along ``p`` (a recurrence,
    ``S[i][j] = S[i][j] + S[i][j - 1]``, :func:`_recurrence`), and ``d`` is the innermost loop outside ``p`` whose
    iterator every write depends on (its rows accumulate into different elements: independent chains);
    None otherwise. A syntactic cost-model fact: whether jamming the rows is legal is checked exactly
    (:func:`polylab.schedule.jam.jammed`)."""
    v = s.affs[st.name]
    domain = st.domain.intersect_params(s.scop.context)
    live = [e for e in loop_dims(s, st.name) if (value_span(v[e], domain) or UNROLLED_SPAN) >= UNROLLED_SPAN]
    if len(live) < 2 or not st.writes:
        return None
    p = live[-1]
    k = iterator_of(v[p], st)
    if k is None:
        return None
    accumulates = not any(_uses(w, k) for w in st.writes) and any(
        r.array == w.array and r.relation.is_equal(w.relation) for w in st.writes for r in st.reads)
    if not accumulates and not (p not in s.parallel_dims and any(_recurrence(w, r, k) for w in st.writes
                                                                  for r in st.reads)):
        return None
    for d in reversed(live[:-1]):
        kd = iterator_of(v[d], st)
        if kd is not None and all(_uses(w, kd) for w in st.writes):
            return d, p
    return None


def _reused_across(stmt: Statement, loops: Sequence[Aff]) -> bool:
    """Some write of ``stmt`` is the same element for every value of one of ``loops`` (a plain iterator
    none of its subscripts uses): a strip of it stays in registers across that loop (mvt's
    ``x2[i] += A[j][i] * y2[j]`` strip-mined along ``i`` with ``j`` inside: 32 sums kept over all of ``j``);
    without such a write a strip-mined loop only walks the arrays in narrower strips (``S[i][j] +=
    S[i - 1][j]`` by strips of ``j``: 0.57x of the source order's row walk on one thread, measured)."""
    its = [iterator_of(a, stmt) for a in loops]
    return any(k is not None and not _uses(w, k) for w in stmt.writes for k in its)


def _recurrence(w, r, k: int) -> bool:
    """Read ``r`` sees the element write ``w`` wrote a constant number of iterations of iterator ``k``
    earlier or later, along ``k`` only: same array, same linear part ``F``, and the offsets differ only in
    subscripts that are ``k`` plus a constant (``S[i][j - 1]`` read by ``S[i][j] = ..`` along ``j``)."""
    F, G = w.matrix, r.matrix
    if r.array != w.array or F is None or G is None or F != G:
        return False
    diff = [r_ for r_ in range(F.rows) if w.offset[r_, 0] != r.offset[r_, 0]]
    return bool(diff) and all(int(F[r_, k]) == 1 and sum(abs(int(x)) for x in F.row(r_)) == 1 for r_ in diff)


def _jam_rows(s: Schedule, rows: int, floor: dict[str, int], lines: list[str]) -> Schedule:
    """``s`` with ``rows`` rows jammed (:mod:`polylab.schedule.jam`) around every chain
    (:func:`chain_loop`), where that is legal, keeps the parallel loops ``floor`` asks for, and the group
    has at least as many chains as statements whose vector loop it takes away (the row loop becomes
    the innermost loop of those with a vector loop inside it; one whose innermost loop is the row loop
    keeps it, in strips: bicg's ``s[j] += r[i] * A[i][j]`` loses its vector loop, ``q[i]``'s chain of
    4-cycle adds becomes 8 chains in flight; 1.95x of the source order, measured)."""
    if rows < 2:
        return s
    done: set[str] = set()
    for st in s.scop.statements:
        found = chain_loop(s, st) if st.name not in done else None
        if found is None:
            continue
        d = found[0]
        names = group(s, st.name, d)
        done |= names
        chains = sorted(n for n in names if (chain_loop(s, s.scop.statement(n)) or (None,))[0] == d)
        # a statement whose innermost loop is the row loop itself keeps it (in strips of ``rows``)
        lost = sorted(n for n in names if _vector_innermost(s, s.scop.statement(n))
                      and loop_dims(s, n)[-1] != d)
        if len(chains) < len(lost):
            lines.append(f"jam: not around {', '.join(chains)}: {', '.join(lost)} would lose more vector "
                         f"loops than chains are broken")
            continue
        cand, why = _kept_jam(s, d, names, rows, floor)
        if cand is None:
            lines.append(f"jam: {rows} rows around the chain{'s' if len(chains) > 1 else ''} of "
                         f"{', '.join(chains)} {why}")
            continue
        s = cand
        lines.append(f"jam: {rows} rows of dimension {d} run together in {', '.join(sorted(names))} "
                     f"(unroll-and-jam): {len(chains)} chain{'s' if len(chains) > 1 else ''} "
                     f"({', '.join(chains)}) of dependent operations run {rows} in flight instead of one")
    return s


def reduction_loop(s: Schedule, st: Statement) -> int | None:
    """The dimension ``d`` of statement ``st``'s loop just outside its innermost one in ``s`` when the
    innermost loop is a vector loop (exactly parallel, stride-1) and ``d`` is a *reduction* loop around it:
    ``st`` accumulates into the element it writes (it reads it with the same subscripts) and no write
    subscript uses ``d``'s iterator (gemm's ``C[i][j] += alpha * A[i][k] * B[k][j]`` in the order
    ``(i, k, j)``: ``k`` around the vector loop ``j``); both loops of at least :data:`UNROLLED_SPAN`
    iterations, the vector loop not strip-mined. None otherwise. A syntactic cost-model fact; legality is
    checked exactly."""
    v = s.affs[st.name]
    domain = st.domain.intersect_params(s.scop.context)
    live = [e for e in loop_dims(s, st.name) if (value_span(v[e], domain) or UNROLLED_SPAN) >= UNROLLED_SPAN]
    if len(live) < 2 or not st.writes or live[-1] != loop_dims(s, st.name)[-1] or not _vector_innermost(s, st):
        return None
    d, p = live[-2], live[-1]
    k, kp = iterator_of(v[d], st), iterator_of(v[p], st)
    # k must be the loop itself (no tile or strip division in its dimension)
    if k is None or kp is None or v[d].get_pieces()[0][1].dim(isl.dim_type.div) or any(
            _uses(w, k) for w in st.writes):
        return None
    # a strip of the vector loop (mvt's floor(i / 32) around j and i) already keeps its sums in
    # registers across the reduction loop: nothing to gain
    if any(v[e].involves_dims(isl.dim_type.in_, kp, 1) for e in loop_dims(s, st.name) if e != p):
        return None
    accumulates = any(r.array == w.array and r.relation.is_equal(w.relation) for w in st.writes for r in st.reads)
    return d if accumulates else None


def _kept_jam(s: Schedule, d: int, names: frozenset[str], rows: int,
              floor: dict[str, int]) -> tuple[Schedule | None, str]:
    """:func:`polylab.schedule.jam.jammed` when it is legal and keeps the parallel loops ``floor`` asks
    for; else None and why not."""
    cand = jammed(s, d, names, rows)
    if cand is None:
        return None, "illegal (exact check)"
    if any(parallel_loops(cand)[n] < v for n, v in floor.items()):
        return None, "would lose a parallel loop"
    return cand, ""


def _jam_reductions(s: Schedule, floor: dict[str, int], lines: list[str]) -> Schedule:
    """``s`` with :data:`REDUCTION_ROWS` iterations of the first reduction loop (:func:`reduction_loop`)
    jammed into the vector loop inside it (:func:`polylab.schedule.jam.jammed`): ``(.., floor(k / R), j, .., k)``,
    where that is legal (exact) and keeps the parallel loops ``floor`` asks for. Each element of the vector
    loop then takes ``R`` updates in a register between one load and one store, in the order of ``k`` (the
    sums are bit for bit those of the original); the code generator isolates the full strips, whose
    constant-bound ``k`` loop gcc unrolls inside the vector loop. gemm (800^3, one thread): 1.15-1.32x of
    the ``(i, k, j)`` order with ``R = 4``, slower with 8 (SSE2 runs out of registers)."""
    # the code generator isolates the full strips of one depth per band: a second jam at another depth
    # (2mm's two products) would run with min() bounds that gcc neither unrolls nor vectorizes (2mm: 0.3x
    # of the unjammed order, measured), so only the first group is jammed (and the caller jams none after
    # a chain's jam)
    done: set[str] = set()
    for st in s.scop.statements:
        if st.name in done:
            continue
        d = reduction_loop(s, st)
        if d is None:
            continue
        names = group(s, st.name, d)
        done |= names
        # every statement of the group must be such a reduction around its vector loop at d
        if any(reduction_loop(s, s.scop.statement(n)) != d for n in names):
            continue
        cand, why = _kept_jam(s, d, names, REDUCTION_ROWS, floor)
        if cand is None:
            lines.append(f"jam: {REDUCTION_ROWS} iterations of the reduction loop of {', '.join(sorted(names))} "
                         f"{why}")
            continue
        lines.append(f"jam: {REDUCTION_ROWS} iterations of the reduction loop at dimension {d} run inside the "
                     f"vector loop of {', '.join(sorted(names))} (unroll-and-jam): each element takes "
                     f"{REDUCTION_ROWS} updates between one load and one store, in the original order")
        return cand
    return s


def _vector_innermost(s: Schedule, st: Statement) -> bool:
    """Statement ``st``'s innermost loop in ``s`` is exactly parallel and stride-1 (a vector loop)."""
    dims = loop_dims(s, st.name)
    return bool(dims) and dims[-1] in s.parallel_dims and is_stride_one(st, iterator_of(s.affs[st.name][dims[-1]], st))


def time_tile_size(depth: int) -> int:
    """The size ``T`` of the time tiles of a nest of ``depth`` loops (:mod:`polylab.schedule.timetile`):
    :data:`TIME_TILE` for a two-dimensional stencil (time, rows, columns), divided by 4 for each further
    dimension, at least 4. A tile holds ``T`` rows for ``T`` steps; the row of a three-dimensional stencil
    is a plane, so the same ``T`` holds a plane's worth more data per row and leaves fewer tiles per wave:
    heat3d (N = 120, T = 50) on two threads ran at 1.48x of the original with 32, 1.82x with 16 and 2.02x
    with 8 (the step-by-step parallel order 1.79x)."""
    return max(4, TIME_TILE >> (2 * max(0, depth - 3)))


def _time_tiles(result: Schedule, size: int, label: str, log: list[str]) -> list[tuple]:
    """The time tiles of ``result``'s outer band (:mod:`polylab.schedule.timetile`), parallel loops
    marked exactly, as one more candidate ``(schedule, label, log, marked on the whole, True)``; none when
    the outer loop is not a time loop (a plain loop of every statement that no subscript of an array
    written in the region uses), is already parallel, runs fewer than ``size`` steps for every parameter
    value, or cannot be tiled, and where the region's data fits in cache (:func:`fits_in_cache`)."""
    if not _tileable_time_loop(result, size):
        return []
    tiled = time_tiled(result, size)
    if tiled is None:
        return []
    return [(mark_parallel(tiled[0]), f"{label}, time tiles", log + [tiled[1]], True, True)]


def strip_width(scop: Scop) -> int:
    """The width ``W`` of the time strips (:func:`polylab.schedule.timetile.time_strips`): the largest power
    of two with ``arrays * W * element <= L1 / 2`` (one step of a strip holds ``W`` elements of each array
    the statements access), from 256 to 8192. jacobi-1d (two arrays of doubles) on a 32 KiB L1: 1024 (at
    N = 200000, T = 500, one thread, ``-march=native``: 1.26x of the original with 1024, 1.15x with
    4096)."""
    l1, _ = cache_sizes()
    sizes_of = element_bytes(scop)
    arrays = {a.array for st in scop.statements for a in st.accesses}
    per_point = sum(sizes_of.get(a, 8) for a in arrays) or 8
    w = 256
    while w < 8192 and 2 * w * per_point <= l1 // 2:
        w *= 2
    return w


def _time_strips(result: Schedule, sizes: Sizes, label: str, log: list[str]) -> list[tuple]:
    """The time strips of a one-dimensional stencil (:func:`polylab.schedule.timetile.time_strips`),
    parallel loops marked exactly, as one more candidate ``(schedule, label, log, marked on the whole,
    True)``; none with more than one thread (the strips run one after the other), for builds with vectors
    narrower than :data:`STRIP_MIN_VECTOR` bytes, where the outer loop is not a time loop (as for
    :func:`_time_tiles`), runs fewer than :data:`STRIP_MIN_STEPS` steps for every parameter value, or the
    region's data fits in cache."""
    if sizes.threads != 1 or sizes.vector < STRIP_MIN_VECTOR or not _tileable_time_loop(result, STRIP_MIN_STEPS):
        return []
    strips = time_strips(result, strip_width(result.scop))
    if strips is None:
        return []
    return [(mark_parallel(strips[0]), f"{label}, time strips", log + [strips[1]], True, True)]


def _tileable_time_loop(result: Schedule, steps: int) -> bool:
    """Tiles across the outer loop of ``result`` (time tiles, time strips) can keep data in cache: it is a
    time loop (:func:`_time_loop`) that runs at least ``steps`` steps for some parameter value, and the
    region's data does not fit in cache anyway (:func:`fits_in_cache`)."""
    if not _time_loop(result):
        return False
    context = result.scop.context
    spans = [value_span(result.affs[n][0], result.scop.statement(n).domain.intersect_params(context))
             for n in result.affs]
    return not all(x is not None and x < steps for x in spans) and not fits_in_cache(result.scop)


def _time_loop(result: Schedule) -> bool:
    """The outermost dimension of ``result`` is a time loop: a plain loop of every statement, not already
    parallel, that no subscript of an array written in the region uses (fdtd2d's input ``fict[t]`` may)."""
    dims0 = [result.affs[n][0] for n in result.affs]
    if 0 in result.marked or not dims0 or any(a.is_cst() for a in dims0):
        return False
    written = {w.array for st in result.scop.statements for w in st.writes}
    for n, a in zip(result.affs, dims0):
        stmt = result.scop.statement(n)
        k = iterator_of(a, stmt)
        if k is None or any(acc.array in written and _uses(acc, k) for acc in stmt.accesses):
            return False
    return True


def step_text(threads: int | None, sizes: Sizes | None = None) -> str:
    """``optimize``, ``optimize(2)``, ``optimize(2, 16, 128)``, ``optimize(1, 8, 0, 0, 32)``: the step that
    reproduces a choice (the vector width is written where it is not the default build's)."""
    if sizes is None or (sizes.rows == STRIP_ROWS and sizes.wave == WAVE_TILE and not sizes.tile
                         and sizes.vector == DEFAULT_VECTOR_BYTES):
        return "optimize" if threads is None else f"optimize({threads})"
    wave = sizes.wave[0] if sizes.wave[0] == sizes.wave[1] else f"({sizes.wave[0]}, {sizes.wave[1]})"
    tile = f", {int(sizes.tile)}, {sizes.vector}" if sizes.vector != DEFAULT_VECTOR_BYTES else (
        ", 1" if sizes.tile else "")
    return f"optimize({threads if threads is not None else sizes.threads}, {sizes.rows}, {wave}{tile})"


def optimize(s: Schedule, threads: int | None = None, rows: int = STRIP_ROWS, wave: int = WAVE_TILE[0],
             tile: int = 0, vector: int = 0) -> Schedule:
    """The ``optimize`` step (``optimize``, ``optimize(threads)``, ``optimize(threads, rows, wave[, tile[,
    vector]]])`` with cache tiling offered when ``tile`` is 1 and ``vector`` the vector width in bytes of the
    build, 0 for the build in effect, :mod:`polylab.schedule.target`): keep the fusion of the schedule,
    rewrite each statement's private loops by the best legal affine map among interchange, parallel
    strip-mining, strips of independent chains (with a tile-level wavefront when threads > 1) and tiling
    (see :mod:`polylab.schedule.optimize`).

    Affine map per statement: ``t' = (prefix_S(x), 0.., rho_S(l_1(x), .., l_m(x)), 0..)`` where ``rho_S`` is
    the chosen rewriting. Legal: every candidate is checked exactly; parallel dimensions are marked
    exactly; no statement ends with fewer parallel loops than the starting schedule with ``parallel``.
    """
    return optimize_schedule(s, threads, rows, wave, tile, vector).schedule


# --------------------------------------------------------------------------------------------------------
def available_threads() -> int:
    """The threads a run will have: ``OMP_NUM_THREADS`` when set, else the CPUs this process may use."""
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@lru_cache(maxsize=1)
def cache_sizes() -> tuple[int, int]:
    """(L1 data, L2) cache sizes in bytes of CPU 0, from Linux's sysfs; 32 KiB and 1 MiB when unknown."""
    l1, l2 = 32 * 1024, 1024 * 1024
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(root.glob("index*")) if root.is_dir() else []:
        try:
            level = int((idx / "level").read_text())
            kind = (idx / "type").read_text().strip()
            text = (idx / "size").read_text().strip().upper()
        except (OSError, ValueError):  # a cache entry without these files: keep the defaults
            continue
        mult = 1024 if text.endswith("K") else (1024 * 1024 if text.endswith("M") else 1)
        size = int(text.rstrip("KM")) * mult
        if level == 1 and kind in ("Data", "Unified"):
            l1 = size
        elif level == 2:
            l2 = size
    return l1, l2


def wave_tile_sizes(point_bytes: int, rows: int = STRIP_ROWS) -> tuple[int, int]:
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
    _, l2 = cache_sizes()
    t = 2 * max(1, rows)
    while max(1, point_bytes) * (2 * t) ** 2 <= l2 // 2:
        t *= 2
    return t, t


def stream_tile_sizes(element: int = 8) -> tuple[int, int]:
    """``(T_j, T_k)`` of the stream tiling ``(floor(j / T_j), floor(k / T_k), i, k, j)`` of a statement
    whose array ``B[k][j]`` is read again in every iteration of its outer loop ``i`` (gemm's ``C[i][j] +=
    A[i][k] * B[k][j]``): without tiling each ``i`` streams all of ``B`` from beyond L2; with it, a tile of
    ``T_k x T_j`` elements of ``B`` is read from memory once and from L2 by every ``i``.

    ``T_j = 1024``: the vector loop ``j`` stays long (a row of the PolyBench sizes is one tile); ``T_k``
    the largest power of two with ``T_k * T_j * element <= L2 / 2`` (the tile in half of L2, the rest for
    the rows of ``C`` and ``A``), at least 8. On this machine (L2 512 KiB, doubles): ``T_k = 32``. Offered
    with the cache tiling (``optimize(1, 8, 0, 1)``, a ``--tune`` candidate), not by default: in one run
    at one thread it made 2mm (500^3) 5.4x faster than the original against 3.2x without, but gemm
    (800^3) 0.59x against 1.14x (its ``B``, 5 MB, streams fast enough from this machine's 32 MiB L3)."""
    _, l2 = cache_sizes()
    tj, tk = 1024, 8
    while 2 * tk * tj * max(1, element) <= l2 // 2:
        tk *= 2
    return tj, tk


#: the footprint of each SCoP already measured (a SCoP is immutable; the entry goes when it does)
_FOOTPRINTS: "weakref.WeakKeyDictionary[Scop, int]" = weakref.WeakKeyDictionary()


def footprint_bytes(scop: Scop) -> int | None:
    """The bytes of every array element the region touches, ``sum_A |{ F_a(x) : x in D_S, a of A }| *
    sizeof(A)`` (exact counts of the union of the accessed elements); None where the program has
    parameters (its sizes are known only when it runs)."""
    if scop.parameters:
        return None
    if scop not in _FOOTPRINTS:
        try:
            _FOOTPRINTS[scop] = _count_footprint(scop)
        except isl.Error:  # isl could not count a set: unknown, as with parameters
            return None
    return _FOOTPRINTS[scop]


def _count_footprint(scop: Scop) -> int:
    sizes_of = element_bytes(scop)
    touched: dict[str, isl.Set] = {}
    for stmt in scop.statements:
        for acc in stmt.accesses:
            img = acc.relation.intersect_domain(stmt.domain).range()
            touched[acc.array] = img if acc.array not in touched else touched[acc.array].union(img)
    return sum(int(e.count_val().to_python()) * sizes_of.get(a, 8) for a, e in touched.items())


def fits_in_cache(scop: Scop) -> bool:
    """The region's data (:func:`footprint_bytes`, constant sizes only) fits in half the L2 cache: then
    the tiles that keep data in cache (time tiles) only add loop overhead (heat-3d at its small size,
    20^3 points of two arrays, 128 KiB: 0.71x of the original with time tiles)."""
    b = footprint_bytes(scop)
    return b is not None and b <= cache_sizes()[1] // 2


def element_bytes(scop) -> dict[str, int]:
    """Array name -> the bytes of one element (:data:`ELEMENT_BYTES`, 8 for other types)."""
    return {a.name: ELEMENT_BYTES.get(a.ctype.split()[-1], 8) for a in scop.arrays}


def band_tile_size(scop) -> int:
    """The size ``T`` of every row of the tiled Pluto-style band (:mod:`polylab.schedule.bandtile`): the
    largest power of two with ``slices * T^2 * element <= L2 / 2``, at least 16, where ``slices`` is the
    largest number of distinct accesses of one deepest statement (each a ``T x T`` slice of an array in a
    tile of a three-dimensional band) and ``element`` the largest element size. lu (``A[i][j]``,
    ``A[i][k]``, ``A[k][j]``, doubles) on this machine's 512 KiB L2: ``T = 64`` (measured at N = 800,
    two threads: 1.38x of the original with 16, 2.02x with 32, 2.49x with 64, 2.19x with 128)."""
    _, l2 = cache_sizes()
    deepest = max((st.depth for st in scop.statements), default=0)
    sizes_of = element_bytes(scop)
    slices, element = 1, 1
    for st in scop.statements:
        if st.depth == deepest:
            slices = max(slices, len({(acc.array, acc.text) for acc in st.accesses}))
            element = max([element] + [sizes_of.get(acc.array, 8) for acc in st.accesses])
    t = 16
    while slices * (2 * t) ** 2 * element <= l2 // 2:
        t *= 2
    return t


def cache_tile_sizes(depth: int, arrays: int, element: int = 8) -> tuple[int, ...]:
    """Tile sizes of a ``depth``-dimensional band touching ``arrays`` arrays of ``element``-byte values:
    the largest power of two ``T`` with ``arrays * T^2 * element <= L2 / 2`` (two-dimensional slices of
    every array in half the L2 cache; the third dimension streams), the innermost size 4x larger for
    long vector loops, at least 8."""
    _, l2 = cache_sizes()
    t = 8
    while arrays * (2 * t) ** 2 * element <= l2 // 2:
        t *= 2
    sizes = [t] * depth
    if sizes:
        sizes[-1] = 4 * t
    return tuple(sizes)

