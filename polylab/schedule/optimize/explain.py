"""The words of the optimizer's report, written from its enums and values (never read back: the search and
the report's readers use the values).

Each function turns one record of :mod:`polylab.schedule.optimize.records` (or a kind of
:mod:`polylab.schedule.optimize.kinds` and its values) into a line of the explanation.
"""

from __future__ import annotations

from typing import Sequence

from polylab.schedule.optimize.kinds import (Innermost, JamKind, JamOutcome, SerialReason, ShapeKind, Structure,
                                             TimeTiling)
from polylab.schedule.optimize.machine import Machine
from polylab.schedule.optimize.records import Jam, ProgramScore, SerialLoop, ShapeFacts, StatementChoice
from polylab.schedule.tuning import MIN_TEAM_WORK, PAR_STRIP, SEPARATE_LIMIT


def _along(b: str, a: str, f: int, grouped: bool = False) -> str:
    """``b + f a``: the strips' skewed column (``b + f(a)`` when ``a`` is a sum)."""
    if f == 0:
        return b
    if f == 1:
        return f"{b} + {a}"
    return f"{b} + {f}({a})" if grouped else f"{b} + {f}{a}"


def shape_text(shape: ShapeFacts, machine: Machine) -> str:
    """What a shape does to a statement's loops, in words."""
    k, names, sizes = shape.kind, shape.names, shape.sizes
    l1, l2 = f"{machine.l1_bytes // 1024} KiB", f"{machine.l2_bytes // 1024} KiB"
    if k is ShapeKind.KEEP:
        return "source order"
    if k is ShapeKind.SHARED:
        return "all its loops are shared"
    if k is ShapeKind.BAND_TILE:
        return "the Pluto-style band tiled"
    if k is ShapeKind.INTERCHANGE:
        return "interchange to (" + ", ".join(names) + ")"
    if k is ShapeKind.STRIP:
        p = names[0]
        return f"strip-mine {p} by {sizes[0]}: tiles of {p} outside, {p} innermost"
    if k is ShapeKind.STREAM_TILE:
        tk, tj = sizes
        return (f"tiles {tk}x{tj} of ({names[-2]}, {names[-1]}) outside {', '.join(names[:-2])}: the array read "
                f"again in every iteration of the outer loop is read from the L1 cache ({l1}, the tile in three "
                f"quarters of it, cache model), one element per multiply-add of the vector loop {names[-1]}")
    if k is ShapeKind.TILE:
        return (f"tiles {'x'.join(map(str, sizes))} of ({', '.join(names)}): an array reused across the outer "
                f"loop would leave the cache (L2 {l2})")
    if k is ShapeKind.TILE_OUTER and names[0] == names[1]:     # the rows' strips around stream tiles
        rows, tk, tj = sizes
        return (f"strips of {rows} rows of {names[0]} outermost, stream tiles {tk}x{tj} of ({names[2]}, "
                f"{names[3]}) inside them: each strip reads every tile from the L1 cache "
                f"({l1}, cache model) for all its rows, and a parallel strip loop "
                f"starts one thread team for the band")
    if k is ShapeKind.TILE_OUTER:
        others = [n for n in names[1:] if n != names[0]]
        return (f"tiles of {names[0]} by {sizes[0]} outermost, tiles {'x'.join(map(str, sizes[1:]))} of "
                f"({', '.join(others)}) inside them, then ({', '.join(names[1:])}): an array reused across the "
                f"outer loop would leave the cache (L2 {l2}), and a parallel tile loop outside the others starts "
                f"one thread team for the band")
    if k is ShapeKind.STRIPS:
        an, bn = names
        rows = sizes[0]
        return f"strips of {rows} rows of {an} along {_along(bn, an, shape.skew)} ({rows} independent chains in flight)"
    if k is ShapeKind.STRIPS_WAVE:
        an, bn = names
        rows, a, b = sizes
        return (f"tile-level wavefront of {a}x{b} tiles over ({an}, {_along(bn, an, shape.skew)}), strips of "
                f"{rows} rows inside" + (f" (tile size from the cache model: L2 {l2})" if shape.modelled else ""))
    tn, an, bn = names
    rows, size = sizes
    agn = f"{an} + {tn}" if shape.time_skew else an
    bgn = f"{bn} + {tn}" if shape.time_skew else bn
    return (f"tile-level wavefront of {size}x{size} tiles over ({tn}, {agn}), each running its {size} steps of "
            f"{tn} with strips of {rows} rows of {agn} along {_along(bgn, agn, shape.skew, True)} inside")


def statement_line(choice: StatementChoice) -> str:
    """The line of a statement the per-statement search rewrote."""
    sc = choice.score
    depth = sc.outermost_parallel if sc is not None else None
    return (f"{choice.statement} ({choice.code}): {choice.why}; {choice.parallel} parallel loop"
            f"{'s' if choice.parallel != 1 else ''}"
            + ("" if depth is None else f", outermost parallel at loop depth {depth}")
            + (", innermost loop parallel and stride-1 (vectorizable)" if choice.vector else "")
            + (", innermost loop carries no chain (its iterations overlap already: no strips of rows to overlap them)"
               if sc is not None and sc.innermost in (Innermost.NONE, Innermost.STRIDE_ONE) and not sc.chain
               else "")
            + f"  [{choice.tried} shapes tried, legality exact]")


def rewritten_lines(choices: Sequence[StatementChoice], shared_blocks: bool) -> list[str]:
    """The lines of one fusion structure's per-statement search."""
    head = [f"over {SEPARATE_LIMIT} statements: private loops share schedule dimensions"] if shared_blocks else []
    return head + [statement_line(c) for c in choices if c.kind is not ShapeKind.SHARED]


def structure_label(structure: Structure, timing: TimeTiling, *, level: int = 0, shifts: Sequence[str] = (),
                    band_size: int = 0, band_order: Sequence[int] = (), members: Sequence[str] = ()) -> str:
    """The name of a candidate's fusion structure (with its tiles across the outer loop)."""
    base = {
        Structure.KEPT: "fusion kept as in the starting schedule",
        Structure.SHIFT_FUSED: f"sibling nests fused with shifts ({'; '.join(shifts)})",
        Structure.DISTRIBUTED_INSIDE: f"statements distributed inside the outermost loop (level {level})",
        Structure.FULLY_DISTRIBUTED: "statements fully distributed (level 0)",
        Structure.PLUTO_BAND: (f"the Pluto-style band tiled {band_size}x.. as a wavefront, points in the order "
                               f"({', '.join(f'row {p + 1}' for p in band_order)})"),
        Structure.STRIP_SUNK: (f"the loop at dimension {level} shared by {', '.join(members)} strip-mined by "
                               f"{PAR_STRIP}, its points innermost in each statement"),
    }[structure]
    return base + {TimeTiling.NONE: "", TimeTiling.TIME_TILES: ", time tiles",
                   TimeTiling.TIME_STRIPS: ", time strips"}[timing]


def structure_reason(structure: Structure, timing: TimeTiling, machine: Machine) -> str:
    """Why the kept structure pays."""
    if timing is TimeTiling.TIME_TILES:
        return ("the time loop and the rows are tiled: a tile keeps its rows in cache for its steps, the tiles "
                "of a wave run in parallel, the vector loops stay")
    if timing is TimeTiling.TIME_STRIPS:
        return (f"one thread and {machine.vector_bytes}-byte vectors: the rows stay in the L1 cache for every "
                f"step of a strip, the vector loops stay")
    if structure is Structure.PLUTO_BAND:
        return ("a statement had no parallel loop in the other structures: the Pluto-style search's permutable "
                "band gives every statement the tiles of a wave as its parallel loop")
    if structure is Structure.STRIP_SUNK:
        return ("the shared loop is the stride-1 loop of statements that ran their other loops inside it: its "
                "strips stay shared, so each strip's columns are read from the cache by every statement after the "
                "first, and each statement walks its own loops with the strip's columns as its vector loop")
    if structure is Structure.SHIFT_FUSED:
        return ("one thread: the nests' vector loops stay, their outer loops now carry the dependences between "
                "them, and each array is streamed once per outer iteration instead of once per nest")
    return ("loops shared by statements stay shared, so none of their parallel loops is lost; distribution only "
            "when it scores better")


def score_text(score: ProgramScore) -> str:
    """A whole schedule's score, field by field."""
    return (f"{score.vector} vector, {score.tiled} tiled, {score.reuse_lost} shared reads split, "
            f"{score.reuse_gained} loops fused, {score.with_parallel} with a parallel loop, "
            f"{score.without_parallel} without, {score.outer_loops} loops outside")


COMPARED = ("  fusion structures compared (deepest statements with a vectorizable innermost loop not taken out of "
            "a dependence chain's shadow, tiled statements, shared reads split apart, loops fused onto shared "
            "arrays, statements with a parallel loop when threads > 1, deepest statements without a parallel "
            "loop, loops outside their parallel loops): ")


def jam_line(jam: Jam) -> str:
    """The line of an unroll-and-jam, done or refused."""
    names = ", ".join(jam.statements)
    if jam.kind is JamKind.REDUCTION:
        if jam.outcome is JamOutcome.DONE:
            return (f"jam: {jam.rows} iterations of the reduction loop at dimension {jam.dim} run inside the "
                    f"vector loop of {names} (unroll-and-jam): each element takes {jam.rows} updates between "
                    f"one load and one store, in the original order")
        return f"jam: {jam.rows} iterations of the reduction loop of {names} {_refusal(jam.outcome)}"
    chains = ", ".join(jam.chains)
    plural = "s" if len(jam.chains) > 1 else ""
    if jam.outcome is JamOutcome.VECTORS_LOST:
        return (f"jam: not around {chains}: {', '.join(jam.lost)} would lose more vector loops than chains are "
                f"broken")
    if jam.outcome is JamOutcome.DONE:
        return (f"jam: {jam.rows} rows of dimension {jam.dim} run together in {names} (unroll-and-jam): "
                f"{len(jam.chains)} chain{plural} ({chains}) of dependent operations run {jam.rows} in flight "
                f"instead of one")
    return f"jam: {jam.rows} rows around the chain{plural} of {chains} {_refusal(jam.outcome)}"


def _refusal(outcome: JamOutcome) -> str:
    return "illegal (exact check)" if outcome is JamOutcome.ILLEGAL else "would lose a parallel loop"


def serial_line(loop: SerialLoop) -> str:
    """Why an exactly parallel dimension runs without an OpenMP loop."""
    d = loop.dim
    if loop.reason is SerialReason.INSIDE_PARALLEL:
        return (f"dimension {d} is parallel inside a parallel loop: no OpenMP loop of its own (where the outer "
                f"parallel loop runs once, OpenMP would start it once per iteration of the loops between them)")
    if loop.reason is SerialReason.ONE_THREAD:
        return (f"dimension {d} is parallel but gets no OpenMP loop: with one thread there is no team to share it, "
                f"and OpenMP would only move it into a function of its own, away from the sizes and the restrict "
                f"arrays the compiler sees in the kernel")
    if loop.reason is SerialReason.PER_ROW:
        return (f"dimension {d} is parallel but left to the vectorizer without OpenMP: it is the innermost loop "
                f"inside sequential loops ({'; '.join(loop.rows)}), and OpenMP would start it once per row")
    return (f"dimension {d} is parallel but runs sequentially: OpenMP would start a team {loop.starts} "
            f"time{'s' if loop.starts != 1 else ''} for {'at most ' if loop.bounded else ''}{loop.instances} "
            f"statement instances ({'at most' if loop.bounded else 'about'} {loop.instances // loop.starts} per "
            f"start, fewer than {loop.least or MIN_TEAM_WORK}), and each "
            f"start costs microseconds"
            + (f" (counted at {', '.join(f'{p} = {v}' for p, v in loop.sizes)}, the largest sizes the arrays' "
               f"declarations allow)" if loop.sizes else ""))
