"""The optimizer's records: the scores it compares and what it chose, as named values (the explanation is
written from them, :mod:`polylab.schedule.optimize.explain`; the report holds them,
:mod:`polylab.schedule.optimize.report`).

Scores compare by an explicit key (:meth:`StatementScore.key`, :meth:`ProgramScore.key`): larger is better,
field by field in the order the key lists them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from polylab.schedule.optimize.kinds import Innermost, JamKind, JamOutcome, SerialReason, ShapeKind


@dataclass(frozen=True)
class StatementScore:
    """How good one statement's loops are (:func:`polylab.schedule.optimize.scoring.statement_score`).

    ``outermost_parallel``: the depth of its outermost parallel loop that scales (counting only loops of
    more than one value; None: none; a statement without any loop counts as parallel at depth 0, nothing
    of it runs in sequence); ``innermost``: its innermost loop; ``stride``: how well the innermost loop
    walks memory (:func:`~polylab.schedule.optimize.loops.stride_score`); ``tiled``: tiled for the cache;
    ``loops``: its loops; ``parallel``: its parallel loops that scale; ``chain``: its innermost loop
    carries a chain of flow dependences (:func:`~polylab.schedule.optimize.loops.carries_chain`: an
    iteration waits for a result computed from an earlier one's), which the strips of independent chains
    are for."""

    outermost_parallel: int | None
    innermost: Innermost
    stride: int
    tiled: bool
    loops: int
    parallel: int
    chain: bool = False
    #: the loop just around the innermost one is a reduction loop of the statement: its write is the same
    #: element at every iteration of it and the statement reads that element (the sums stay in registers
    #: across it, 4 of its iterations jammed into the vector loop)
    reduction: bool = False

    def key(self, threads: int) -> tuple:
        """The order of two scores, larger is better: a parallel loop, then the shallower; the innermost
        loop; its stride; tiling; fewer loops; more parallel loops. With one thread a vector innermost loop
        comes first, before the depth of the outermost parallel loop, which no thread uses then
        (``S[i][j] += S[i - 1][j]`` interchanged to put the parallel ``j`` outside the recurrence along
        ``i``, or strip-mined along ``j``, only walks its rows worse: 0.57x of the source order,
        measured). With one thread a reduction loop just around a vector loop comes next (the row of sums
        stays in registers across it, trmm's ``(i, k, j)``: 0.86 ms at PolyBench's MEDIUM size against
        1.2 ms for ``(k, i, j)``, whose parallel ``i`` no thread uses and whose rows of sums go through the
        cache at every ``k``)."""
        depth = (self.outermost_parallel is not None, -(self.outermost_parallel or 0))
        key = depth + (self.innermost, self.stride, self.tiled, -self.loops, self.parallel)
        return key if threads > 1 else (self.innermost is Innermost.VECTOR, self.vector and self.reduction) + key

    @property
    def vector(self) -> bool:
        return self.innermost is Innermost.VECTOR


@functools.total_ordering
@dataclass(frozen=True)
class ProgramScore:
    """How good a whole schedule is (:func:`polylab.schedule.optimize.scoring.program_score`), compared by
    :meth:`key`: the deepest statements with a vectorizable innermost loop (not counting those a
    distribution took out of a dependence chain's shadow); the statements tiled for the cache; fewer shared
    reads split apart; more loops fused onto shared arrays; with threads, the statements with a parallel
    loop; fewer deepest statements without a parallel loop; fewer loops outside the deepest statements'
    outermost parallel loops."""

    vector: int
    tiled: int
    reuse_lost: int
    reuse_gained: int
    with_parallel: int
    without_parallel: int
    outer_loops: int

    def key(self) -> tuple[int, ...]:
        return (self.vector, self.tiled, -self.reuse_lost, self.reuse_gained, self.with_parallel,
                -self.without_parallel, -self.outer_loops)

    def __lt__(self, other: "ProgramScore") -> bool:
        return self.key() < other.key()


@dataclass(frozen=True)
class ShapeFacts:
    """What a shape of a statement's private loops is, without the loops
    (:class:`polylab.schedule.optimize.shapes.Shape`): its kind and the values that explain it.

    ``names``: the loops it names, as the statement calls them (the permutation of an interchange; the
    strip-mined loop; the tiled loops, innermost last; the strips' ``(a, b)`` or ``(t, a, b)``);
    ``sizes``: its sizes (the strip, the tiles; the strips' rows, then the wavefront's tile sizes);
    ``skew``: the strips' ``f``; ``time_skew``: the time wave's ``g``; ``modelled``: its tile sizes come
    from the cache model."""

    kind: ShapeKind
    names: tuple[str, ...] = ()
    sizes: tuple[int, ...] = ()
    skew: int = 0
    time_skew: int = 0
    modelled: bool = False


@dataclass(frozen=True)
class StatementChoice:
    """What the optimizer did to one statement, and why (``why``: the words of :attr:`shape`): its parallel
    loops, whether its innermost loop is a vector loop, its score and the shapes tried (None and 0 for a
    statement whose loops are all shared, or a whole structure's), its code."""

    statement: str
    shape: ShapeFacts
    why: str
    parallel: int
    vector: bool
    score: StatementScore | None = None
    tried: int = 0
    code: str = ""

    @property
    def kind(self) -> ShapeKind:
        return self.shape.kind


@dataclass(frozen=True)
class Jam:
    """An unroll-and-jam the model asked for, and what became of it: ``rows`` rows (or iterations) of
    dimension ``dim`` run together in ``statements``; ``chains``: the chains it breaks; ``lost``: the
    statements whose vector loop it would take."""

    kind: JamKind
    outcome: JamOutcome
    rows: int
    dim: int | None
    statements: tuple[str, ...]
    chains: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()


@dataclass(frozen=True)
class SerialLoop:
    """An exactly parallel dimension left without an OpenMP loop, and why: ``rows`` the loop around it per
    statement (``statement: loop``); ``starts`` and ``instances`` the team starts and the statement
    instances they would share, counted at the parameter values ``sizes`` where those come from the
    arrays' declarations (:func:`~polylab.schedule.optimize.machine.declared_sizes`); ``least`` the
    instances a start needed (:func:`~polylab.schedule.optimize.openmp.team_least`); ``bounded``: the
    instances are an upper bound (:func:`~polylab.schedule.optimize.openmp.team_work_bound`)."""

    dim: int
    reason: SerialReason
    rows: tuple[str, ...] = ()
    starts: int = 0
    instances: int = 0
    sizes: tuple[tuple[str, int], ...] = ()
    least: int = 0
    bounded: bool = False
