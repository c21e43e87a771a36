"""The candidates of the search: each fusion structure with its statements' best shapes
(:func:`structure_candidates`), with time tiles or time strips across its outer loop where they apply, and
the Pluto-style band tiled as a wavefront (:func:`band_candidate`), each scored as a whole
(:func:`~polylab.schedule.optimize.scoring.program_score`).

A candidate never has fewer parallel loops per statement than the starting schedule with
:func:`polylab.schedule.parallel` (one with fewer is dropped); for one thread, a fusion with shifts may trade
a statement's outer parallel loops for locality but never its parallel innermost (vector) loop
(:func:`~polylab.schedule.optimize.loops.vector_floor`); with more than one thread it is kept only with time
tiles, whose wave gives back a parallel loop.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from polylab.errors import PolylabError
from polylab.schedule.bandtile import tiled_band
from polylab.schedule.core import Schedule, const_aff, const_value
from polylab.schedule.legality import is_legal
from polylab.schedule.optimize.explain import rewritten_lines, shape_text, structure_label
from polylab.schedule.optimize.jams import chain_rows, jam_rows
from polylab.schedule.optimize.kinds import JamOutcome, ShapeKind, Structure, TimeTiling
from polylab.schedule.optimize.loops import (exact_parallel_loops, is_stride_one, keeps_vectors, loop_dims,
                                             parallel_loops, uses, vector_floor, vector_innermost)
from polylab.schedule.optimize.machine import fits_in_cache, footprint_bytes
from polylab.schedule.optimize.records import Jam, ProgramScore, ShapeFacts, StatementChoice
from polylab.schedule.optimize.scoring import program_score
from polylab.schedule.optimize.shapes import Settings
from polylab.schedule.optimize.statements import from_base
from polylab.schedule.optimize.structures import Base, chain_shadowed, reuse_gained, reuse_lost
from polylab.schedule.optimize.timed import with_time_strips, with_time_tiles
from polylab.schedule.pluto import pluto_schedule
from polylab.schedule.transform import mark_parallel
from polylab.schedule.tuning import SEPARATE_LIMIT


@dataclass(frozen=True)
class Candidate:
    """A whole schedule the search may keep: its structure, its tiles across the outer loop, its
    structure's place among the bases (``order``: the earlier wins a tie), the schedule, the statements'
    choices, whether its parallel dimensions were marked on the whole schedule, its score, and its name and
    lines in the explanation."""

    structure: Structure
    timing: TimeTiling
    order: int
    schedule: Schedule
    choices: tuple[StatementChoice, ...]
    on_whole: bool
    score: ProgramScore
    label: str
    lines: tuple[str, ...]

    def rank(self) -> tuple:
        """Larger is better: the score, then the earlier structure."""
        return self.score.key(), -self.order


def structure_candidates(start: Schedule, source: Schedule, base: Base, order: int, settings: Settings,
                         time_tile: int) -> list[Candidate]:
    """The candidates of one fusion structure ``base`` of the starting schedule ``start`` (``source``: it
    with its parallel loops marked): its statements' private loops rewritten
    (:func:`~polylab.schedule.optimize.statements.from_base`), alone (not for a fusion with shifts on
    several threads), with time tiles of ``time_tile`` steps and with time strips, each kept when it keeps
    the parallel loops (see the module text)."""
    threads = settings.threads
    fused = base.structure is Structure.SHIFT_FUSED
    source_par = parallel_loops(source)
    floor = vector_floor(source) if fused and threads == 1 else source_par
    rewritten = from_base(base.schedule, settings, floor)
    result, choices = rewritten.schedule, rewritten.choices
    lines = rewritten_lines(choices, rewritten.shared_blocks)
    options = [] if fused and threads > 1 else [(result, TimeTiling.NONE, None, rewritten.on_whole)]
    for timing, timed in ((TimeTiling.TIME_TILES, with_time_tiles(result, time_tile, settings.machine)),
                          (TimeTiling.TIME_STRIPS, with_time_strips(result, settings.machine))):
        if timed is not None:
            options.append((timed[0], timing, timed[1], True))
    out = []
    for cand, timing, text, whole in options:
        tiled = timing is not TimeTiling.NONE
        if any(parallel_loops(cand)[n] < v for n, v in floor.items()) or (
                fused and not keeps_vectors(source, cand)) or (tiled and not keeps_vectors(result, cand)):
            continue
        score = program_score(cand, choices, threads, reuse_lost(start, base.schedule),
                              frozenset(chain_shadowed(source, cand)), reuse_gained(start, base.schedule), tiled)
        label = structure_label(base.structure, timing, level=base.level, shifts=base.shifts, members=base.members)
        out.append(Candidate(base.structure, timing, order, cand, choices, whole, score, label,
                             tuple(lines) + ((text,) if text else ())))
    return out


def band_candidate(s: Schedule, ranked: Sequence[Candidate], settings: Settings, floor: dict[str, int],
                   size: int) -> Candidate | None:
    """The Pluto-style band tiled as a wavefront (:mod:`polylab.schedule.bandtile`), as one more candidate,
    when the best candidate so far leaves a deepest statement without any exactly parallel loop (lu's lower
    part), or with parallel loops but neither a vector loop nor its chains' rows jammed (LU in its column
    form, whose parallel loop walks down a column in every order of the source's band: 3.4x the original
    at one thread, where the source order ran 1.0x, measured), and inside the tiles every deepest
    statement gets a vector loop (a parallel, stride-1 innermost loop), or, with data that does not fit in half the L2 cache
    (:func:`~polylab.schedule.optimize.machine.fits_in_cache`), the rows around its chain run together
    (:func:`_chains_jammed`: cholesky, whose rows cannot be jammed in the source order), or, with data
    beyond the threads' L2 caches, a band of two rows whose tiles keep what their rows read again
    (nussinov); None otherwise, or
    when the search's band cannot be tiled. ``size``: the tile size of every row (the cache model's,
    :func:`~polylab.schedule.optimize.cachemodel.band_tile_size`, or the wavefront size given to
    ``optimize``)."""
    if not ranked or len(s.scop.statements) > SEPARATE_LIMIT:
        return None
    top = max(ranked, key=Candidate.rank)
    best = top.schedule
    deepest = max(st.depth for st in s.scop.statements)
    deep = [st for st in s.scop.statements if st.depth == deepest]
    if deepest < 3:
        return None
    vector = {c.statement for c in top.choices if c.vector}
    plain = [st for st in deep if st.name not in vector]
    if all(exact_parallel_loops(best)[st.name] for st in deep) and (
            not plain or _chains_jammed(best, plain, settings.rows, floor)):
        return None
    # a vector loop in the tiles needs, for each deepest statement, a stride-1 iterator that its write
    # depends on (along an iterator the write does not depend on, the statement is a reduction: that
    # loop carries the statement's own dependence and is never parallel); the jam needs
    # a chain with rows around it that cannot be jammed in the best order, and data that does not fit in
    # half the L2 cache (there the tiles' partial strips cost more than the jam gains: cholesky at
    # PolyBench's SMALL size, 115 KiB, 0.92x of the source order, measured); cheap, and it spares the search
    # (at any number of threads: the tiles of a wave are the parallel loop; cholesky, two threads, MEDIUM:
    # 4.8 ms of CPU for both threads against the source order's 14.3 and PLUTO's 8.7, measured)
    rows_jam = (not fits_in_cache(s.scop, settings.machine)
                and _unjammed_chains(best, deep, settings.rows, floor))
    if not rows_jam and not all(any(is_stride_one(st, k) and all(uses(w, k) for w in st.writes)
                                    for k in range(st.depth)) for st in deep):
        return None
    def vectors(c: Schedule) -> int:
        return sum(1 for st in deep if st.name in c.affs and vector_innermost(c, st))

    try:
        searched = pluto_schedule(s.scop, s.deps, fallback=False).schedule
    except PolylabError:   # no Pluto-style schedule (or over the search's budget): nothing to tile
        searched = None
    tiled = tiled_band(searched, size, vectors) if searched is not None else None
    if tiled is not None:
        detail = f"{searched.text()} tiled"
    else:
        part = _component_band(s, best, deep, size, vectors)
        if part is None:
            return None
        tiled, searched = part
        names = ", ".join(st.name for st in searched.scop.statements)
        detail = f"the search on {names} alone (one top-level loop nest): {searched.text()} tiled"
    cand, perm = tiled
    # every deepest statement must get a vector loop inside the tiles (bicg's tiles keep the chain
    # q[i] += A[i][j] * p[j] innermost: 0.4x of the original, measured), or its chain's rows jammed; or,
    # with data beyond the threads' whole L2 caches, the tiles are those of a band of two rows around a
    # deepest statement's own chain: what a tile's rows read again stays in cache (nussinov at LARGE, 25 MB: each
    # column table[k + 1][j] its k loop reads serves a tile's rows, 1.39 s against 2.12 s in the source
    # order; at MEDIUM, 1 MB, within a 1 MiB L2, 0.96x of it)
    footprint = footprint_bytes(s.scop)
    reuse = (footprint is not None and footprint > settings.machine.threads * settings.machine.l2_bytes
             and len(perm) == 2 and all(len(loop_dims(cand, st.name)) > len(perm) for st in deep))
    if any(parallel_loops(cand)[n] < v for n, v in floor.items()) or (
            vectors(cand) < len(deep) and not reuse
            and not (rows_jam and _chains_jammed(cand, deep, settings.rows, floor))):
        return None
    shown = ShapeFacts(ShapeKind.BAND_TILE, sizes=(size,))
    choices = tuple(StatementChoice(st.name, shown, shape_text(shown, settings.machine), parallel_loops(cand)[st.name],
                                    vector_innermost(cand, st), code=st.code()) for st in s.scop.statements)
    label = structure_label(Structure.PLUTO_BAND, TimeTiling.NONE, band_size=size, band_order=perm)
    score = program_score(cand, choices, settings.threads, 0, frozenset(), 0, True)
    return Candidate(Structure.PLUTO_BAND, TimeTiling.NONE, len(ranked), cand, choices, True, score, label,
                     (f"{label}: {detail}",))


def _component_band(s: Schedule, best: Schedule, deep: Sequence, size: int, inner_score
                    ) -> tuple[tuple[Schedule, tuple[int, ...]], Schedule] | None:
    """The band of one top-level component, where the whole program has none to tile: when ``best``'s first
    dimension is a constant per statement (the program's top-level loop nests, in order) and one value of
    it holds every deepest statement, the Pluto-style search runs on that component's statements alone
    (with the dependences between them), its outermost band is tiled (:func:`tiled_band`), and every
    other statement keeps its rows of ``best``: the tiled schedule with the order of the band's rows, and
    the component's searched schedule. The whole schedule is checked exactly. PolyBench's ludcmp,
    after its scalar's homes: the factorization is lu's, but the search over the whole program, with the
    two substitutions after it, ends with a scalar dimension between the lower and the upper update and no
    band of three rows; the factorization alone has lu's band."""
    if not best.n_dims or not best.is_scalar(0):
        return None
    place = {n: const_value(a[0]) for n, a in best.affs.items()}
    holding = {place[st.name] for st in deep}
    if len(holding) != 1:
        return None
    first = holding.pop()
    names = {st.name for st in s.scop.statements if place[st.name] == first}
    if len(names) == len(s.scop.statements):
        return None
    members = tuple(st for st in s.scop.statements if st.name in names)
    part = replace(s.scop, statements=members)
    part = replace(part, schedule=s.scop.schedule.intersect_domain(part.domain))
    deps = [d for d in s.dependences if d.source in names and d.sink in names]
    try:
        searched = pluto_schedule(part, deps, fallback=False).schedule
    except PolylabError:   # no Pluto-style schedule for the component either
        return None
    tiled = tiled_band(searched, size, inner_score)
    if tiled is None:
        return None
    inner, perm = tiled
    # the other statements' rows go after the component's (zeros beside them): a dimension that orders
    # their statements would otherwise count as carrying a dependence at a loop of the band's tiles
    pspace = s.scop.context.get_space()
    band = max(len(inner.affs[n]) for n in names)

    def zeros(st, k: int) -> list:
        return [const_aff(st, pspace, 0)] * k

    rows = {st.name: [best.affs[st.name][0], *inner.affs[st.name]] if st.name in names
            else [best.affs[st.name][0], *zeros(st, band), *best.affs[st.name][1:]] for st in s.scop.statements}
    width = max(len(r) for r in rows.values())
    whole = s.with_affs({st.name: rows[st.name] + zeros(st, width - len(rows[st.name])) for st in s.scop.statements},
                        None)
    if not is_legal(whole):
        return None
    return (mark_parallel(whole), perm), searched


def _unjammed_chains(s: Schedule, deep: Sequence, rows: int, floor: dict[str, int]) -> bool:
    """Every statement of ``deep`` without a vector loop in ``s`` has a chain with rows around it
    (:func:`~polylab.schedule.optimize.jams.chain_rows`), and some chain's rows cannot be jammed in ``s``
    (:func:`~polylab.schedule.optimize.jams.jam_rows` jams none of them)."""
    plain = [st for st in deep if not vector_innermost(s, st)]
    if not plain or any(chain_rows(s, st) is None for st in plain):
        return False
    return not _chains_jammed(s, plain, rows, floor)


def _chains_jammed(s: Schedule, deep: Sequence, rows: int, floor: dict[str, int]) -> bool:
    """In ``s``, every statement of ``deep`` has a vector loop or the rows around its chain jammed by
    :func:`~polylab.schedule.optimize.jams.jam_rows` (legal, exact): its chains run ``rows`` in flight.
    That is what a band pays for where its tiles get no vector loop: inside the tiles of a
    permutable band the rows of an outer loop can be jammed where the source order forbids it
    (cholesky's ``A[i][j] -= A[i][k] * A[j][k]``, 8 rows of ``i``, their elements in registers across
    ``k``: 3.5x of the source order in PolyBench's harness at MEDIUM, one thread, CPU time, measured; in
    the source order no jam is legal)."""
    jams: list[Jam] = []
    jam_rows(s, rows, floor, jams)
    broken = {n for j in jams if j.outcome is JamOutcome.DONE for n in j.chains}
    return all(vector_innermost(s, st) or st.name in broken for st in deep)
