"""The ``optimize`` recipe step with its storage steps: fold, drop dead writes, interleave, split, optimize the
schedule, contract.

The schedule layer's optimizer (:mod:`polylab.schedule.optimize`) rewrites loops; this layer adds, around
it, the storage steps that apply, each kept only when it is exact and legal:

0. ``home_scalars``: each live range of a scalar kept in the array element it ends in, where the
   rewritten program has the original's dataflow (ludcmp's ``w`` in ``A[i][j]``: lu's dependences
   instead of one location that every statement writes);
   ``expand_scalars`` then keeps each live range that home_scalars left, where it stays inside one
   iteration of the loops around it, in a buffer with one element per iteration (symm's ``temp2`` in
   ``temp2_x[i][j]``; contraction below shrinks the buffer under the chosen schedule);
1. ``fold_live_ins``: reads whose value comes from no write in the region but from a constant
   initialisation become that constant (then ``remove_dead_writes`` drops the initialisation writes
   nobody reads any more): fewer dependences, so more freedom for the loops;
2. ``interleave``: producers (statements that read nothing written in the region) run next to the outer
   iteration that first needs them, when the source order keeps them apart;
3. ``split``: a loop cut where the only dependences it carries start or end (index-set splitting,
   Floyd-Warshall's ``i`` and ``j`` loops at ``k``): each piece a parallel loop;
4. the loop optimizer, on the SCoP these steps produced;
5. ``contract(x)`` for each array whose elements are not all live after the region (each buffer of
   ``expand_scalars`` among them): the smallest modulus that the storage layer proves safe under the
   *optimized* schedule (a buffer that fits in cache instead of the whole array), unless, with more than
   one thread, it would make an OpenMP loop of that schedule sequential (the iterations would share the
   buffer's elements).

A step that does not apply, or that is refused, is reported with its reason and skipped; nothing here
approximates: every SCoP rewrite is the storage layer's exact one, every schedule passes the exact
legality check.
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from polylab.errors import PolylabError
from polylab.model.budget import budgeted
from polylab.model.islutil import maps_of
from polylab.schedule import Schedule
from polylab.schedule.optimize import (STRIP_ROWS, WAVE_TILE, Machine, OptimizeReport, Settings, iterator_of,
                                       loop_dims, optimize_schedule, parallel_loops, settings_of, step_text)
from polylab.storage.contract import contract
from polylab.storage.dead import remove_dead_writes
from polylab.storage.expand import expand_scalars
from polylab.storage.fold import constant_writers, fold_live_ins
from polylab.storage.homes import home_scalars
from polylab.storage.interleave import interleave
from polylab.storage.islutil import after_writers, writes_map
from polylab.storage.split import split_index_sets


def _same_times(schedule: Schedule, scop, step: str, after: dict[str, str] | None = None) -> Schedule:
    """The time vectors of ``schedule`` for the statements of ``scop`` (a SCoP a storage step rewrote
    without changing the order of its statements' instances). ``after``: statements the step added, each
    to run right after the instance of another (``{copy: writer}``, on the copy's instances;
    :func:`~polylab.storage.islutil.after_writers`)."""
    maps = {s.name: schedule.maps[s.name] for s in scop.statements if s.name not in (after or {})}
    if after:
        timed = isl.UnionMap.empty(scop.context.get_space())
        for m in maps.values():
            timed = timed.union(isl.UnionMap.from_map(m))
        timed = after_writers(timed, [(w, scop.statement(c).domain) for c, w in after.items()])
        maps = {m.get_tuple_name(isl.dim_type.in_): m for m in maps_of(timed)}
    return Schedule.from_maps(scop, maps, steps=schedule.steps + (step,))


def _prepare(schedule: Schedule, lines: list[str]) -> Schedule:
    """Scalar homes and expansion, folding, dead writes and interleaving, where they apply (see the module
    text)."""
    for step, name in ((home_scalars, "home_scalars"), (expand_scalars, "expand_scalars")):
        try:
            new, rep = step(schedule.scop)
        except PolylabError as exc:
            lines.append(f"{name}: not applied ({exc.message})")
            continue
        if rep.homed:
            lines += [f"{name}: " + w.text_line() for w in rep.homed]
            if rep.removed:
                lines.append(f"{name}: removed {', '.join(rep.removed)} (they store what is there already)")
            after = {c: w for web in rep.homed for c, w in web.copies}
            schedule = _same_times(schedule, new, name, after)
    scop = schedule.scop
    folded, frep = fold_live_ins(scop)
    if not frep.folded:
        lines.append("fold_live_ins: nothing to fold (no read of a constant initialisation)")
        return schedule
    lines.append(f"fold_live_ins: {len(frep.folded)} read(s) of a constant initialisation folded "
                 f"({', '.join(f'{f.statement}: {f.text} = {f.constant.text}' for f in frep.folded)})")
    cur = _same_times(schedule, folded, "fold_live_ins")
    inits = list(constant_writers(folded))
    flow = None
    if inits:
        dead, drep = remove_dead_writes(folded, statements=inits, flow=frep.dataflow)
        lines.append(f"remove_dead_writes: initialisations {', '.join(inits)} restricted to the elements "
                     f"still read")
        cur = _same_times(cur, dead, "remove_dead_writes")
        flow = drep.dataflow
    try:
        inter, irep = interleave(cur.scop, cur, explain=False, flow=flow)
        lines.append(f"interleave: producers {', '.join(irep.producers)} run in the iteration of their "
                     f"first consumer ({irep.rule})")
        cur = inter
    except PolylabError as exc:
        lines.append(f"interleave: not applied ({exc.message})")
    return cur


def _split(schedule: Schedule, lines: list[str]) -> Schedule:
    """Index-set splitting where a loop carries dependences only from or to one hyperplane
    (:mod:`polylab.storage.split`)."""
    try:
        out, rep = split_index_sets(schedule)
    except PolylabError as exc:  # (the split schedule is checked exactly; refused, the search goes on unsplit)
        lines.append(f"split: not applied ({exc.message})")
        return schedule
    lines += ["split: " + x.text_line() for x in rep.splits]
    return out.relabelled(steps=out.steps + ("split",)) if rep.splits else out


def _contract_all(schedule: Schedule, lines: list[str], threads: int = 1) -> Schedule:
    """``contract(x)`` for every array of rank >= 1 written in the region and not entirely live after it,
    each kept when the storage layer proves it safe under ``schedule`` and, with more than one thread
    (``threads``), when it leaves every OpenMP loop parallel."""
    cur = schedule
    scop = schedule.scop
    for arr in scop.arrays:
        if arr.rank < 1 or not any(w.array == arr.name for s in cur.scop.statements for w in s.writes):
            continue
        written = writes_map(cur.scop, arr.name).range()
        if not arr.temporary and (cur.scop.live_out is None or written.is_subset(cur.scop.live_out)):
            continue
        try:
            _, new, crep = contract(cur.scop, cur, arr.name, explain=False)
        except PolylabError as exc:
            lines.append(f"contract({arr.name}): refused ({exc.message})")
            continue
        walked = _vector_modulo(cur, arr.name, crep)
        if walked:
            lines.append(f"contract({arr.name}): not applied ({crep.mapping} would index the innermost loop "
                         f"{walked} modulo {crep.moduli[list(crep.dims).index(arr.rank - 1)]}: gcc vectorizes no "
                         f"loop whose subscript is a remainder)")
            continue
        if crep.parallel_dropped and threads > 1:  # a buffer shared by an OpenMP loop's iterations orders them
            d, why = crep.parallel_dropped[0]
            lines.append(f"contract({arr.name}): not applied ({crep.mapping} would make the OpenMP loop at "
                         f"dimension {d} sequential: {why})")
            continue
        lines.append(f"contract({arr.name}): {crep.mapping}")
        cur = new
    return cur


def _vector_modulo(schedule: Schedule, array: str, crep) -> str | None:
    """The innermost loop of ``schedule`` (``statement: loop``) whose iterator the last subscript of an
    access to ``array`` uses, when the contraction ``crep`` takes that subscript modulo ``m > 1``: the loop
    would index ``x[j % m]``, and gcc vectorizes no loop over a remainder (deriche's column buffers
    ``tm1[j % 32]`` in its strips of 32 columns: the sweep ran scalar); None otherwise. A modulo of 1
    (the dimension collapsed to one element) or of an outer subscript keeps the vector loop's
    subscript as it was."""
    rank = schedule.scop.array(array).rank
    if rank - 1 not in crep.dims or crep.moduli[list(crep.dims).index(rank - 1)] <= 1:
        return None
    for st in schedule.scop.statements:
        dims = loop_dims(schedule, st.name)
        k = iterator_of(schedule.affs[st.name][dims[-1]], st) if dims else None
        if k is None:
            continue
        for acc in st.accesses:
            F = acc.matrix
            if acc.array == array and F is not None and F.rows == rank and int(F[rank - 1, k]):
                return f"{st.name}: {st.iterators[k]}"
    return None


@budgeted("the storage optimizer")
def optimize_program(schedule: Schedule, settings: Settings, threads_given: bool = True
                     ) -> tuple[Schedule, OptimizeReport]:
    """Storage steps and the loop optimizer (see the module text): the final schedule (of the rewritten
    SCoP) and the report of every choice (also its ``provenance.optimize``). ``settings``: as for
    :func:`polylab.schedule.optimize.optimize_schedule`; ``threads_given``: the step named its threads (else
    it is recorded as plain ``optimize`` where nothing else was asked: the threads of the machine it runs
    on)."""
    lines: list[str] = []
    prepared = _split(_prepare(schedule, lines), lines)
    optimized = optimize_schedule(prepared, settings)
    report = optimized.provenance.optimize
    assert report is not None
    after: list[str] = []
    out = _contract_all(optimized, after, settings.threads)
    all_lines = tuple(lines) + report.lines + tuple(after)
    if out is not optimized:
        all_lines += (f"after contraction: {out.text()}",
                      f"parallel loops per statement: {parallel_loops(out)}")
    report = replace(report, lines=all_lines)
    step = step_text(settings.threads if threads_given else None, settings)
    out = out.relabelled(steps=schedule.steps + (step,), notes=all_lines,
                         provenance=replace(out.provenance, optimize=report))
    return out, report


def step_optimize(schedule: Schedule, threads: int | None = None, rows: int = STRIP_ROWS,
                  wave: int = WAVE_TILE[0], tile: int = 0, vector: int = 0, *, machine: Machine = Machine()
                  ) -> Schedule:
    """Recipe step ``optimize`` (``optimize(T)`` for ``T`` threads, ``optimize(T, rows, wave[, tile[,
    vector]]])`` with ``vector`` the vector width in bytes of the build, 0 for the machine's): storage steps
    where they apply and the loop optimizer of :mod:`polylab.schedule.optimize`, choosing for ``machine``
    (bound by the step table, :func:`polylab.storage.recipe_steps`); the report is
    ``provenance.optimize``."""
    settings = settings_of(machine, threads, rows, wave, tile, vector)
    return optimize_program(schedule, settings, threads is not None)[0]
