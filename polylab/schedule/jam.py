"""Unroll-and-jam as a schedule: ``k`` rows of a loop run together, one iteration of the inner loops at a
time, so that ``k`` independent dependence chains are in flight instead of one.

A statement that accumulates into one element along its innermost loop (bicg's
``q[i] = q[i] + A[i][j] * p[j]`` along ``j``) is a *chain*: each iteration waits for the previous one's
sum, so the loop runs at the latency of a floating-point add (4 cycles) per iteration, not at the rate
the processor can issue them. The rows of the loop around it (``i``) accumulate into different elements,
so ``k`` of them can run side by side. The map, for a loop dimension ``d`` shared by the statements of a
group ``G`` (those whose time vectors agree on every constant dimension before ``d`` and have a loop at
``d``), with ``q`` the dimension after the last loop of any statement of ``G``::

    S in G:    (v_0, .., v_{d-1}, floor(v_d / k), v_{d+1}, .., v_{q-1}, v_d, v_q, ..)
    S not in G: (v_0, .., v_{q-1}, 0, v_q, ..)

The strip loop ``floor(v_d / k)`` takes the place of ``v_d``; the row ``v_d`` itself runs innermost, inside
every loop of the group and before the constant dimensions that order the statements of one iteration,
so the statements of one iteration stay together (``s[j] += ..; q[i] += ..`` for the ``k`` rows of a strip,
then the next ``j``). It is legal when no dependence goes from a later row of a strip to an earlier one at
a later iteration of the inner loops (exact check). The code generator isolates the full strips
(:func:`polylab.codegen.ast.full_strips`): their row loop has the constant bounds ``k c .. k c + k - 1``,
gcc unrolls it completely and keeps the ``k`` sums in registers: the unroll-and-jam of the textbooks.
Where gcc cannot tell the sums from the elements the loop reads (cholesky's ``A[i][j]`` and ``A[i][k]``), the
C printer holds them in registers itself (:func:`polylab.codegen.ast.register_rows`, exact).

Measured on bicg and atax (N = M = 4000, one thread, gcc -O3): 1.95x and 2.5x of the source order.
"""

from __future__ import annotations

from polylab.schedule.core import Schedule, const_aff, const_value, floor_div, pair_relations
from polylab.schedule.legality import pair_broken
from polylab.schedule.transform import mark_parallel


def group(s: Schedule, name: str, d: int) -> frozenset[str]:
    """The statements that share statement ``name``'s loop at dimension ``d``: a loop at ``d`` and the
    same constant at every constant dimension of ``name`` before ``d``."""
    ref = s.affs[name]
    consts = {e: const_value(ref[e]) for e in range(d) if ref[e].is_cst()}
    return frozenset(n for n, v in s.affs.items()
                     if not v[d].is_cst() and all(const_value(v[e]) == c for e, c in consts.items()))


def jammed(s: Schedule, d: int, names: frozenset[str], rows: int) -> Schedule | None:
    """``s`` with ``rows`` rows of dimension ``d`` jammed into the loops of the statements ``names`` (the
    map of the module text), parallel dimensions marked exactly; None when it is illegal."""
    affs = s.affs
    q = 1 + max(max((e for e, a in enumerate(affs[n]) if not a.is_cst()), default=d) for n in names)
    pspace = s.scop.context.get_space()
    new = {}
    for st in s.scop.statements:
        v = list(affs[st.name])
        if st.name in names:
            new[st.name] = v[:d] + [floor_div(v[d], rows)] + v[d + 1:q] + [v[d]] + v[q:]
        else:
            new[st.name] = v[:q] + [const_aff(st, pspace, 0)] + v[q:]
    cand = s.with_affs(new, None, notes=s.notes, provenance=s.provenance)
    # exact legality of ``cand``, checked on ``s`` where the two agree: the time vectors of two statements
    # outside ``names`` both get the constant 0 at ``q``, so their distance is the one under ``s`` with a 0
    # inserted, which is lexicographically negative exactly when the old one is. Checked per statement
    # pair: the distances are those that ``s``'s parallel loops were found from and that ``cand``'s will
    # be (cache hits)
    pairs = pair_relations(cand.dependences, cand.scop)
    if any(pair_broken(cand, a, b, rel) for a, b, rel in pairs if a in names or b in names) or any(
            pair_broken(s, a, b, rel) for a, b, rel in pairs if a not in names and b not in names):
        return None
    return mark_parallel(cand)
