"""Re-basing the parallel dimensions of a schedule so that consecutive GPU threads touch the closest addresses.

The mapping (:mod:`polylab.codegen.gpumap`) puts thread x on one of a nest's loops; a loop moves the
iterators along a fixed step, and that step may be a poor one. ``S[t, i, j] -> [t, j, i]`` has the parallel
loops ``j, i`` (``i`` inner); the mapping can still pick ``j`` for x, but a point wavefront
``S[i, j, k] -> [i + j + k, i, j]`` leaves only steps inside the wave ``i + j + k = w``: along ``j`` (with
``k = w - i - j``) neighbouring threads are ``N - 1`` elements apart, along ``i`` ``N^2 - 1``, and the loop
order decides which the threads get.

:func:`coalesce` re-bases every run of consecutive parallel (marked) dimensions ``d_s .. d_e`` of a
:class:`~polylab.schedule.Schedule`, statement by statement:

1. every step ``d`` of the iterators with entries in ``{-1, 0, 1}`` that keeps the outer dimensions fixed
   (it stays inside one launch) is scored by how far apart it moves each access ``A[F x + f]``: with
   ``delta = F d`` and ``f`` its first non-zero subscript, ``1000^(rank - 1 - f) * |delta_f|`` (row-major:
   a subscript further left moves the address by a whole row, plane, ...);
2. when the best step ``d`` scores lower than the step of the run's innermost dimension, its image ``q``
   in the run's dimensions (a primitive integer vector) is completed into a unimodular matrix ``V`` whose
   last column is ``q``, and the run's dimensions become ``U theta_{s..e}`` with ``U = V^-1``: the innermost
   new dimension then moves the iterators by exactly ``d``.

A unimodular change of the parallel dimensions is a bijection of the points of each launch: every point
still runs once. The result is accepted only when it is exactly as parallel and as legal as before: every
re-based dimension is coincident (:meth:`Schedule.is_coincident`) and the schedule passes the legality check
(:func:`polylab.schedule.check`); otherwise the schedule is returned unchanged.
"""

from __future__ import annotations

import itertools
from math import gcd

import islpy as isl
import sympy

from polylab.model.scop import Statement
from polylab.schedule import Schedule, check

__all__ = ["coalesce", "unimodular_with_last_row", "wave_inside_tiles"]


def _coefficients(aff: isl.PwAff, n: int) -> list[int] | None:
    """The iterator coefficients of a single affine piece (None for a piecewise or quasi-affine one)."""
    pieces = aff.get_pieces()
    if len(pieces) != 1:
        return None
    a = pieces[0][1]
    if a.dim(isl.dim_type.div):
        return None
    out = []
    for k in range(n):
        v = a.get_coefficient_val(isl.dim_type.in_, k)
        if not v.is_int():
            return None
        out.append(int(v.to_python()))
    return out


def unimodular_with_last_row(p: list[int]) -> list[list[int]] | None:
    """An integer matrix with determinant +-1 whose last row is ``p`` (None when there is none that this
    construction finds: ``gcd(p) != 1`` with more than two entries and no entry +-1)."""
    w = len(p)
    if w == 0 or all(v == 0 for v in p):
        return None
    for r in range(w):
        if abs(p[r]) == 1:
            return [[1 if c == q else 0 for c in range(w)] for q in range(w) if q != r] + [list(p)]
    if w == 2 and gcd(p[0], p[1]) == 1:
        s, t = _bezout(p[0], p[1])     # s p0 + t p1 = 1, so det [[t, -s], p] = t p1 + s p0 = 1
        return [[t, -s], list(p)]
    return None


def _bezout(a: int, b: int) -> tuple[int, int]:
    if b == 0:
        return (1 if a > 0 else -1), 0
    s, t = _bezout(b, a % b)
    return t, s - (a // b) * t


def _runs(schedule: Schedule) -> list[list[int]]:
    """Maximal runs of consecutive marked (parallel) dimensions."""
    runs: list[list[int]] = []
    for d in sorted(schedule.marked):
        if runs and runs[-1][-1] == d - 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    return runs


def _cost(stmt: Statement, d: list[int]) -> int | None:
    """How far apart consecutive threads' addresses are when the iterators move by ``d``, summed over the
    statement's accesses: ``1000^(r - 1 - f) * |delta_f|`` for each access, where ``delta = F d`` and ``f``
    is its first non-zero subscript (0 when nothing moves). The weight grows with each dimension to the
    left, as the row-major extents do. None when an access is not affine."""
    total = 0
    for acc in stmt.accesses:
        f = acc.matrix
        if f is None:
            return None
        delta = [sum(int(f[r, k]) * d[k] for k in range(f.cols)) for r in range(f.rows)]
        first = next((r for r, v in enumerate(delta) if v != 0), None)
        if first is not None:
            total += 1000 ** (len(delta) - 1 - first) * abs(delta[first])
    return total


def _run_direction(schedule: Schedule, stmt: Statement, run: list[int]) -> list[int] | None:
    """``q``: the step of the run's dimensions (the outer ones fixed) along which consecutive threads touch the
    closest addresses (module text), when it is better than the step of the run's innermost dimension; None
    when the current one is already best or the statement's time is not an injective affine function."""
    n = len(stmt.iterators)
    affs = schedule.affs[stmt.name]
    rows = [_coefficients(affs[d], n) for d in range(run[-1] + 1)]
    if any(r is None for r in rows):
        return None
    outer = [rows[d] for d in range(run[0])]
    inner = [rows[d] for d in run]
    full = sympy.Matrix(outer + inner)
    if full.rank() < n:                 # inner sequential loops also move the iterators: leave it
        return None
    target = sympy.Matrix([0] * len(outer) + [0] * (len(run) - 1) + [1])
    try:
        sol, free = full.gauss_jordan_solve(target)
        current = [sol[k] for k in range(n)] if not free else None
    except ValueError:                  # the innermost dimension does not move alone (several statements)
        current = None
    best: tuple[int, list[int]] | None = None
    for d in itertools.product((-1, 0, 1), repeat=n):
        if not any(d) or any(sum(r[k] * d[k] for k in range(n)) for r in outer):
            continue
        q = [sum(r[k] * d[k] for k in range(n)) for r in inner]
        g = 0
        for v in q:
            g = gcd(g, v)
        cost = _cost(stmt, list(d))
        if g != 1 or cost is None:
            continue
        if best is None or cost < best[0]:
            best = (cost, q)
    if best is None:
        return None
    if current is not None and all(v.is_integer for v in current):
        now = _cost(stmt, [int(v) for v in current])
        if now is not None and now <= best[0]:
            return None
    return best[1]


def coalesce(schedule: Schedule) -> tuple[Schedule, tuple[str, ...]]:
    """``schedule`` with each run of parallel dimensions re-based so that its last dimension drives the
    stride-1 iterator (module text), and notes saying what changed; unchanged when nothing needs to or the
    exact checks refuse it."""
    if not schedule.marked:
        return schedule, ()
    affs = {name: list(a) for name, a in schedule.affs.items()}
    notes: list[str] = []
    for run in _runs(schedule):
        for stmt in schedule.scop.statements:
            if all(schedule.affs[stmt.name][d].is_cst() for d in run):
                continue
            q = _run_direction(schedule, stmt, run)
            if q is None:
                continue
            vt = unimodular_with_last_row(q)     # V with last column q; U = V^-1 maps q to the last unit vector
            if vt is None:
                continue
            u = [[int(v) for v in row] for row in sympy.Matrix(vt).T.inv().tolist()]
            old = [schedule.affs[stmt.name][d] for d in run]
            for row, d in zip(u, run):
                new = None
                for c, a in zip(row, old):
                    if c == 0:
                        continue
                    term = a.scale_val(isl.Val.int_from_si(a.get_ctx(), c))
                    new = term if new is None else new.add(term)
                affs[stmt.name][d] = new if new is not None else old[0].scale_val(isl.Val.int_from_si(
                    old[0].get_ctx(), 0))
            notes.append(f"{stmt.name}: parallel dimensions {run} re-based by {u} so that consecutive threads "
                         "touch the closest addresses")
    if not notes:
        return schedule, ()
    out = schedule.with_affs(affs, None, marked=schedule.marked, notes=schedule.notes, provenance=schedule.provenance)
    if not all(out.is_coincident(d) for run in _runs(schedule) for d in run) or not check(out).legal:
        return schedule, ()
    return out, tuple(notes)


def wave_inside_tiles(schedule: Schedule) -> tuple[Schedule, tuple[str, ...]]:
    """A tile-level wavefront whose tiles' points are themselves scanned as a wavefront, so that a thread
    block can share a tile: the sequential point dimensions ``p_1 .. p_k`` (``k >= 2``) that follow the last
    run of parallel (tile) dimensions in the same permutable band become ``(p_1 + ... + p_k, p_2, .., p_k)``
    (a unimodular change), and ``p_2 .. p_k`` are marked parallel where they are exactly coincident.

    Inside a permutable band every dependence not carried outside it has non-negative distances on the
    band's dimensions, so the sum of the point dimensions grows along every dependence inside a tile: the
    points of one inner wave are independent. The result is accepted only when it passes the legality check
    and at least one new dimension is coincident (both exact); otherwise the schedule is returned unchanged."""
    runs = _runs(schedule)
    if not runs:
        return schedule, ()
    last = runs[-1][-1]
    band = next((b for b in schedule.bands if last in b.dims), None)
    if band is None or not band.permutable:
        return schedule, ()
    points = [d for d in band.dims if d > last and not schedule.is_scalar(d)]
    if len(points) < 2 or any(d in schedule.marked for d in points):
        return schedule, ()
    affs = {name: list(a) for name, a in schedule.affs.items()}
    for name, a in affs.items():
        total = a[points[0]]
        for d in points[1:]:
            total = total.add(a[d])
        a[points[0]] = total
    trial = schedule.with_affs(affs, None, marked=schedule.marked, notes=schedule.notes, provenance=schedule.provenance)
    inner = frozenset(d for d in points[1:] if trial.is_coincident(d))
    if not inner or not check(trial).legal:
        return schedule, ()
    out = schedule.with_affs(affs, None, marked=schedule.marked | inner, notes=schedule.notes,
                             provenance=schedule.provenance)
    return out, (f"the points of each tile run as a wavefront: dimension {points[0]} becomes the sum of dimensions "
                 f"{points}, dimensions {sorted(inner)} are parallel inside a tile (one thread block per tile)",)
