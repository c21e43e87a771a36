"""Time tiles of the outer band: a nest whose outer loop every statement shares (the time loop of a
stencil, after its sibling nests are fused with shifts) runs ``T`` of its steps over ``T`` rows at a time.

A stencil program sweeps its arrays once per time step; when they do not fit in the cache, every step
streams them from memory again. Tiling the outer loop ``t`` together with the rows ``a`` of the fused
nest keeps a tile's rows in cache for ``T`` steps. The map, for every statement ``S`` with time vector
``(v_0, v_1, .., v_n)`` (``v_0`` the shared outer loop, ``v_r`` the dimension of the rows: the first
loop after ``v_0`` of the deepest statements; a shallower statement contributes its value there, a
constant for a boundary statement such as fdtd2d's ``ey[0][j] = fict[t]``)::

    a'  = v_r + g v_0
    theta'_S = (floor(v_0 / T) + floor(a' / T), floor(a' / T), v_0, v_1, .., v_{r-1}, a', v_{r+1}, .., v_n)

The first dimension is the wavefront of the ``T x T`` tiles of ``(v_0, a')`` (the tiles of one wave are
independent when the tiling is legal: the tile loop inside it is parallel, which the exact marking
confirms or not), the rest runs a tile's points in the fused order. ``g`` is the smallest time skew in
``0, 1, 2`` that makes the schedule legal (exact check): a stencil that reads row ``a - 1`` of the step
before needs ``g = 1``. The inner loops (a statement's vector loop) are not changed.

*Time strips* (:func:`time_strips`) are the tiles of a one-dimensional stencil, whose rows are single
points: a ``T x T`` tile of them holds too little to pay for its loops. A strip is ``W`` skewed points
wide and spans every time step; for every statement ``S`` with time vector ``(t, .., v_r, ..)`` (its one
loop ``v_r`` inside the time loop ``t``)::

    k_S = v_r + g t + c_S
    theta'_S = (floor(k_S / W), t, .., k_S, ..)

A strip runs all steps of its ``W`` points while they stay in the L1 cache (each step's statements keep
their loops, each a vector loop), then the next strip. The skew ``g`` (1, 2, 3) and the shifts ``c_S``
(0 .. 3, chosen statement by statement in textual order, the smallest that keeps the dependences among
the statements placed so far) make every dependence go to the same or a later strip (exact checks).
jacobi-1d needs ``g = 2`` and ``c = 1`` for its second statement: ``A[i]`` of step ``t`` reads ``B[i + 1]``
of the same step, and ``B[i]`` of step ``t + 1`` reads ``A[i - 1]`` of step ``t``. The strips are
sequential, so only the one-thread optimizer offers them, and only for builds with vectors of at least 32
bytes (the :class:`~polylab.schedule.optimize.Machine`'s ``vector_bytes``): jacobi-1d (N = 200000, T = 500,
one thread) with ``W = 1024`` ran at 0.70x of the original with plain ``-O3``, whose two-lane SSE2 arithmetic
bounds the original more than the L3 cache does; with ``-march=native`` (AVX2) at 1.25x, 1.45x and 1.40x in
three bench runs once the harness aligned the kernel's loops (before, 0.88x-1.27x: the strips' short loops ran
at a speed set by where unrelated code placed them, ``docs/performance.md``).

Measured at one thread (fdtd2d, NX = NY = 1000, T = 50; the arrays fit the 32 MiB last-level cache but
not L2): the source order 1.0x, the updates fused with shifts 1.3x, fused and tiled in time 3.7x of the
original program (PLUTO's diamond tiles: 1.5x).
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from polylab.schedule.core import Schedule, floor_div, skewed
from polylab.schedule.legality import is_legal
from polylab.schedule.tuning import STRIP_SHIFTS, STRIP_SKEWS, TIME_TILE_SKEWS


def rows_dimension(s: Schedule) -> int | None:
    """The dimension of the rows that the outer loop is tiled with: the first loop dimension after the
    outermost one of the deepest statements, when they all have it there; None when the outermost
    dimension is not a loop of every statement or the deepest statements have their rows at different
    dimensions (their nests were not fused)."""
    if s.n_dims < 2 or any(s.affs[n][0].is_cst() for n in s.affs):
        return None
    depth = {st.name: len([a for a in s.affs[st.name] if not a.is_cst()]) for st in s.scop.statements}
    deepest = [n for n, d in depth.items() if d == max(depth.values())]
    if max(depth.values()) < 2:
        return None
    firsts = {next(d for d in range(1, s.n_dims) if not s.affs[n][d].is_cst()) for n in deepest}
    if len(firsts) != 1:
        return None
    r = firsts.pop()
    # the rows are a plain loop (a shifted iterator), not already a tile or wavefront dimension
    return r if all(_plain(s.affs[n][r]) for n in deepest) else None


def _plain(aff: isl.PwAff) -> bool:
    """``aff`` is ``x_k + c``: one piece, one input coefficient 1, the others 0, no division."""
    if aff.n_piece() != 1:
        return False
    a = aff.get_pieces()[0][1]
    if not a.get_denominator_val().is_one():
        return False
    coeffs = [a.get_coefficient_val(isl.dim_type.in_, k).to_python() for k in range(a.dim(isl.dim_type.in_))]
    return sorted(coeffs) == [0] * (len(coeffs) - 1) + [1] and a.dim(isl.dim_type.div) == 0


def time_tiled(s: Schedule, size: int) -> tuple[Schedule, str] | None:
    """``s`` with the ``size x size`` time tiles of its outer band (module text) and a line saying what
    was done, the smallest legal skew ``g``; None when there is no such band or no skew is legal. The
    parallel dimensions are not marked (the caller marks them exactly)."""
    r = rows_dimension(s)
    if r is None:
        return None
    for g in TIME_TILE_SKEWS:
        vecs = {}
        for st in s.scop.statements:
            v = list(s.affs[st.name])
            t = v[0]
            a = skewed(v[r], t, g)
            vecs[st.name] = [floor_div(t, size).add(floor_div(a, size)), floor_div(a, size), t, *v[1:r], a,
                             *v[r + 1:]]
        cand = s.with_affs(vecs, None)
        if is_legal(cand):
            skew = f" + {g}t" if g > 1 else (" + t" if g else "")
            return cand, (f"time tiles {size}x{size} of the outer loop and the rows (rows{skew}): each tile "
                          f"runs {size} steps over {size} rows while they stay in cache, the tiles of a wave "
                          f"in parallel")
    return None


def strip_rows(s: Schedule) -> dict[str, int] | None:
    """Statement name -> the dimension of its one loop inside the outer loop, when every statement has
    exactly two loops in ``s``, the first of them the outermost dimension, both plain iterators (a
    one-dimensional stencil whose statements each sweep their row in every step); None otherwise."""
    out = {}
    for name, vec in s.affs.items():
        loops = [d for d, a in enumerate(vec) if not a.is_cst()]
        if len(loops) != 2 or loops[0] != 0 or not all(_plain(vec[d]) for d in loops):
            return None
        out[name] = loops[1]
    return out


def _strip_vector(s: Schedule, name: str, r: int, width: int, g: int, c: int) -> list[isl.PwAff]:
    v = list(s.affs[name])
    key = skewed(v[r], v[0], g)
    if c:
        key = key.add_constant_val(isl.Val.int_from_si(key.get_ctx(), c))
    return [floor_div(key, width), *v[:r], key, *v[r + 1:]]


def time_strips(s: Schedule, width: int) -> tuple[Schedule, str] | None:
    """``s`` with the time strips ``width`` skewed points wide of the module text, and a line saying what
    was done; None when ``s`` is not a one-dimensional stencil (:func:`strip_rows`) or no skew and shifts
    tried are legal. The parallel dimensions are not marked (the caller marks them exactly)."""
    rows = strip_rows(s)
    if rows is None:
        return None
    names = [st.name for st in s.scop.statements]
    deps = s.dependences
    for g in STRIP_SKEWS:
        shifts: dict[str, int] = {}
        for name in names:
            placed = set(shifts) | {name}
            mine = tuple(d for d in deps if d.source in placed and d.sink in placed)
            for c in STRIP_SHIFTS:
                trial = {n: _strip_vector(s, n, rows[n], width, g, {**shifts, name: c}.get(n, 0)) for n in names}
                if is_legal(replace(s.with_affs(trial, None), deps=mine)):
                    shifts[name] = c
                    break
            else:
                break
        if len(shifts) < len(names):
            continue
        cand = s.with_affs({n: _strip_vector(s, n, rows[n], width, g, shifts[n]) for n in names}, None)
        if not is_legal(cand):
            continue
        moved = ", ".join(f"{n} + {c}" for n, c in shifts.items() if c)
        return cand, (f"time strips {width} points wide over every step (rows + {g}t"
                      f"{'; shifted: ' + moved if moved else ''}): a strip runs all steps of its points while "
                      f"they stay in the L1 cache, each step's loops stay vector loops")
    return None
