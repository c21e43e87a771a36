"""Property-based checks of the storage steps against brute force (hypothesis, bounded examples)."""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import islpy as isl

from polylab.errors import StorageError
from polylab.model.expr import Const, walk
from polylab.storage import contract, fold_live_ins, storage_pipeline
from polylab.reference.cvalue import literal_value
from polylab.reference.builder import make_scop, sl3_scop, statement
from polylab.reference.interpret import clobbers, same_live_out
from polylab.schedule import as_schedule, check

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=8, **SETTINGS)
@given(value=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, width=32),
       n=st.integers(min_value=0, max_value=6))
def test_sl3_with_any_init_value(value, n):
    scop = sl3_scop(init=f"f32({float(value)!r})")
    folded, rep = fold_live_ins(scop)
    assert len(rep.folded) == 3
    consts = [c for c in walk(folded.statement("S1").body.value)
              if isinstance(c, Const) and c.ctype == "float"]
    assert len(consts) == 3
    assert all(np.float32(literal_value(c)) == np.float32(value) for c in consts)
    plan = storage_pipeline(scop)
    assert dict(plan.steps)["contract(x)"].moduli == (2,)
    assert same_live_out(scop, plan.scop, {"n": n}) == []


# a 2D sweep A[i][j] = 0.5 * (A[i-1][j] + A[i][j-1]) + B[i][j] with its boundary initialised first
S1_SCHEDULES = ["[i, j]", "[j, i]", "[i + j, i]", "[i + j, j]", "[2i + j, i]", "[i + 2j, j]",
                "[i, -j]", "[-i, j]", "[j, -i]", "[i - j, i]"]


def _sweep2d():
    s0 = statement("S0", "[N] -> { S0[j] : 0 <= j < N }", "A[0][j]", "1.0")
    s2 = statement("S2", "[N] -> { S2[i] : 1 <= i < N }", "A[i][0]", "2.0")
    s1 = statement("S1", "[N] -> { S1[i, j] : 1 <= i < N and 1 <= j < N }", "A[i][j]",
                   "0.5 * (A[i - 1][j] + A[i][j - 1]) + B[i][j]")
    return make_scop("sweep2d", [s0, s2, s1], arrays=[("A", "double", ("N", "N")), ("B", "double", ("N", "N"))],
                     schedule="[N] -> { S0[j] -> [-1, 0, j]; S2[i] -> [i, 0, -1]; S1[i, j] -> [i, j, 0] }",
                     context="[N] -> { : N >= 0 }", live_out="[N] -> { A[N - 1, N - 1] : N >= 1 }")


def _schedule(s1: str) -> isl.UnionMap:
    """S0 (the first row) runs first, S2 (A[i][0]) just before row i of the sweep's original order."""
    return isl.UnionMap(f"[N] -> {{ S0[j] -> [-1, 0, j]; S2[i] -> [i, 0, -1]; S1[i, j] -> [{s1[1:-1]}, 0] }}")


@settings(max_examples=25, **SETTINGS)
@given(sched=st.sampled_from(S1_SCHEDULES), dim=st.sampled_from([0, 1]), m=st.integers(1, 3))
def test_contraction_agrees_with_brute_force(sched, dim, m):
    scop = _sweep2d()
    T = _schedule(sched)
    S = as_schedule(scop, T)
    legal = check(S).legal
    assume(legal)

    def slot(e, dim=dim, m=m):
        return tuple(x % m if k == dim else x for k, x in enumerate(e))

    try:
        new, new_sched, rep = contract(scop, S, "A", dims=(dim,), modulus=m)
    except StorageError as exc:
        (att,) = exc.attempts
        assert clobbers(scop, T, "A", slot, dict(att.params)) != []
        return
    for n in range(0, 6):
        assert clobbers(scop, T, "A", slot, {"N": n}) == []
        assert same_live_out(scop, new, {"N": n}) == []


def test_some_schedules_are_illegal_and_some_contract():
    # the property above is not vacuous: both verdicts occur
    scop = _sweep2d()
    verdicts = set()
    for sched in S1_SCHEDULES:
        T = _schedule(sched)
        S = as_schedule(scop, T)
        legal = check(S).legal
        verdicts.add(("legal", legal))
        if legal:
            try:
                contract(scop, S, "A", dims=(0,), modulus=2)
                verdicts.add(("contract", True))
            except StorageError:
                verdicts.add(("contract", False))
    assert verdicts == {("legal", True), ("legal", False), ("contract", True), ("contract", False)}
