"""Storage contraction (polylab.storage.contract) and interleaving, checked by brute force."""

import islpy as isl
import pytest

from polylab.errors import IllegalTransformationError, StorageError
from polylab.model.expr import ArrayRef, walk
from polylab.schedule import as_schedule
from polylab.storage import ContractionRefused, contract, fold_live_ins, interleave, remove_dead_writes
from polylab.storage.fold import constant_writers
from polylab.reference.builder import (jacobi1d_time_scop, make_scop, producer_consumer_scop, sl3_scop,
                                      statement)
from polylab.reference.interpret import clobbers, same_live_out


@pytest.fixture(scope="module")
def sl3_ready():
    """sl3 after folding and dead-write removal of the initialisation."""
    f, _ = fold_live_ins(sl3_scop())
    d, _ = remove_dead_writes(f, statements=list(constant_writers(f)))
    return d


def test_interleave_places_init_next_to_the_plane(sl3_ready):
    sched, rep = interleave(sl3_ready)
    T = sched.union_map.intersect_params(sl3_ready.context)
    assert rep.rule == "fused" and rep.producers == ("S0",) and rep.consumers == ("S1",)
    assert T.is_equal(isl.UnionMap("[n] -> { S0[i, j, k] -> [i, 0, j, k]; S1[i, j, k] -> [i, 1, j, k] }")
                      .intersect_domain(sl3_ready.domain).intersect_params(sl3_ready.context))
    assert "legal" in str(rep)


def test_sl3_contracts_to_two_planes(sl3_ready):
    sched, _ = interleave(sl3_ready)
    new, new_sched, rep = contract(sl3_ready, sched, "x")
    assert rep.moduli == (2,) and rep.buffer == "xbuf" and rep.extents == ("2", "n", "n")
    assert [a.safe for a in rep.attempts] == [False, True]
    assert "S1[1, 1, 1] overwrites x[0][1][1]" in rep.attempts[0].conflict
    sweep = new.statement("S1")
    refs = [r for r in walk(sweep.body.value) if isinstance(r, ArrayRef)]
    assert all(r.array == "xbuf" for r in refs)
    assert "xbuf[(i - 1) % 2][j][k]" in sweep.code()
    assert new.array("xbuf").extents == ("2", "n", "n")
    # the printed element is copied out right after its last write; live_out stays on x
    copies = [s for s in new.statements if s.name not in ("S0", "S1")]
    assert copies and all(s.body.target.array == "x" for s in copies)
    assert new.live_out is sl3_ready.live_out
    assert "is empty" in rep._repr_html_() and "mod 2" in str(rep)
    for n in range(1, 8):
        assert same_live_out(sl3_scop(), new, {"n": n}) == []
    # brute force: no read finds its slot overwritten
    for n in (4, 5):
        assert clobbers(sl3_ready, sched.union_map, "x", lambda e: (e[0] % 2, e[1], e[2]), {"n": n}) == []


def test_without_explanations_the_choice_and_proof_are_the_same(sl3_ready, monkeypatch):
    """``explain=False`` skips the full conflicts that only explain refuted moduli: the same attempts,
    verdicts, moduli and proof, fewer conflict computations, and each refusal still says why."""
    import importlib

    C = importlib.import_module("polylab.storage.contract")

    sched, _ = interleave(sl3_ready)
    calls = []
    real = C._conflicts
    monkeypatch.setattr(C, "_conflicts", lambda *a: calls.append(1) or real(*a))
    _, _, full = contract(sl3_ready, sched, "x")
    n_full = len(calls)
    calls.clear()
    new, _, quick = contract(sl3_ready, sched, "x", explain=False)
    assert len(calls) < n_full
    assert [(a.moduli, a.safe) for a in quick.attempts] == [(a.moduli, a.safe) for a in full.attempts]
    assert quick.moduli == full.moduli == (2,) and quick.conflict_set == full.conflict_set
    refused = [a for a in quick.attempts if not a.safe]
    assert refused and all("live" in a.conflict or "same slot" in a.conflict for a in refused)
    assert "overwrites" not in refused[0].conflict and "overwrites" in full.attempts[0].conflict
    for n in range(1, 6):
        assert same_live_out(sl3_scop(), new, {"n": n}) == []


def test_sl3_one_plane_is_refused_with_an_example(sl3_ready):
    sched, _ = interleave(sl3_ready)
    with pytest.raises(StorageError) as exc:
        contract(sl3_ready, sched, "x", modulus=1)
    err = exc.value
    assert isinstance(err, ContractionRefused)
    assert "would lose a value" in err.message and "x[0][1][1]" in err.message
    (att,) = err.attempts
    params = dict(att.params)
    assert clobbers(sl3_ready, sched.union_map, "x", lambda e: (0, e[1], e[2]), params) != []


def test_sl3_before_interleaving_is_refused(sl3_ready):
    with pytest.raises(StorageError) as exc:
        contract(sl3_ready, None, "x", max_modulus=4)
    assert len(exc.value.attempts) == 4
    for att in exc.value.attempts:
        m = att.moduli[0]
        assert clobbers(sl3_ready, None, "x", lambda e, m=m: (e[0] % m, e[1], e[2]), dict(att.params)) != []


def test_unfolded_sl3_cannot_be_contracted():
    scop = sl3_scop()
    with pytest.raises(StorageError):
        contract(scop, None, "x", max_modulus=3)


def test_illegal_schedule_is_refused(sl3_ready):
    bad = isl.UnionMap("[n] -> { S0[i, j, k] -> [1, i, j, k]; S1[i, j, k] -> [0, i, j, k] }")
    with pytest.raises(IllegalTransformationError):
        contract(sl3_ready, as_schedule(sl3_ready, bad), "x")


def test_live_in_reads_are_refused():
    scop = producer_consumer_scop()
    with pytest.raises(StorageError) as exc:
        contract(scop, None, "In")
    assert "before the region" in exc.value.message


def test_jacobi1d_time_planes_contract_to_two():
    scop = jacobi1d_time_scop()
    new, _, rep = contract(scop, None, "A")
    assert rep.moduli == (2,) and rep.extents == ("2", "N")
    assert len(rep.copy_outs) >= 1
    for T in range(0, 4):
        for N in range(0, 5):
            assert same_live_out(scop, new, {"T": T, "N": N}) == []
    assert clobbers(scop, None, "A", lambda e: (e[0] % 2, e[1]), {"T": 3, "N": 4}) == []
    assert clobbers(scop, None, "A", lambda e: (0, e[1]), {"T": 3, "N": 4}) != []


def test_jacobi1d_float_is_bit_identical():
    scop = jacobi1d_time_scop("float")
    new, _, _ = contract(scop, None, "A")
    assert same_live_out(scop, new, {"T": 3, "N": 6}) == []


def test_producer_consumer_needs_interleaving():
    scop = producer_consumer_scop()
    with pytest.raises(StorageError):
        contract(scop, None, "tmp", max_modulus=3)
    sched, rep = interleave(scop)
    new, _, crep = contract(scop, sched, "tmp")
    assert crep.moduli == (2,) and crep.copy_outs == ()      # tmp is not live-out: no copy-out
    for n in range(0, 6):
        assert same_live_out(scop, new, {"N": n}) == []


def test_two_dimensional_mapping():
    # b[i][j] = a[i][j] + b[i][j-1] over a 2D nest; only the previous column of the row is needed
    s0 = statement("S0", "[N] -> { S0[i, j] : 0 <= i < N and 0 <= j < N }", "b[i][j]", "0.5 * a[i][j]")
    s1 = statement("S1", "[N] -> { S1[i, j] : 0 <= i < N and 1 <= j < N }", "c[i][j]",
                   "b[i][j] + b[i][j - 1]")
    scop = make_scop("t2", [s0, s1], arrays=[("a", "double", ("N", "N")), ("b", "double", ("N", "N")),
                                            ("c", "double", ("N", "N"))],
                     schedule="[N] -> { S0[i, j] -> [i, j, 0]; S1[i, j] -> [i, j, 1] }",
                     context="[N] -> { : N >= 0 }", live_out="[N] -> { c[i, j] : 0 <= i < N and 1 <= j < N }")
    new, _, rep = contract(scop, None, "b", dims=(0, 1), max_modulus=3)
    assert rep.moduli == (1, 2)
    assert "bbuf[0][j % 2]" in new.statement("S0").code()
    for n in range(0, 5):
        assert same_live_out(scop, new, {"N": n}) == []


def test_time_iterated_in_place_array_is_refused():
    # jacobi-like in place on a rows: a row is still read after the next rows were overwritten
    s0 = statement("S0", "[T, N] -> { S0[t, i] : 0 <= t < T and 1 <= i < N - 1 }", "B[i]",
                   "A[i - 1] + A[i + 1]")
    s1 = statement("S1", "[T, N] -> { S1[t, i] : 0 <= t < T and 1 <= i < N - 1 }", "A[i]", "B[i]")
    s_init = statement("S2", "[T, N] -> { S2[i] : 0 <= i < N }", "A[i]", "1.5")
    scop = make_scop("jac", [s_init, s0, s1], arrays=[("A", "double", ("N",)), ("B", "double", ("N",))],
                     schedule="[T, N] -> { S2[i] -> [0, 0, 0, i]; S0[t, i] -> [1, t, 0, i]; "
                              "S1[t, i] -> [1, t, 1, i] }", context="[T, N] -> { : T >= 0 and N >= 0 }")
    with pytest.raises(StorageError) as exc:
        contract(scop, None, "A", max_modulus=3)
    assert "A[" in exc.value.message


def test_interleave_falls_back_to_the_first_consumer():
    # S1 reads one element ahead, so fusing S0[i] with S1[i] is illegal; S0[i] must run with S1[i - 1]
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "tmp[i]", "In[i] * 2.0")
    s1 = statement("S1", "[N] -> { S1[i] : 0 <= i < N - 1 }", "Out[i]", "tmp[i] + tmp[i + 1]")
    scop = make_scop("ahead", [s0, s1],
                     arrays=[("tmp", "double", ("N",)), ("In", "double", ("N",)), ("Out", "double", ("N",))],
                     schedule="[N] -> { S0[i] -> [0, i]; S1[i] -> [1, i] }", context="[N] -> { : N >= 0 }",
                     live_out="[N] -> { Out[i] : 0 <= i < N - 1 }")
    sched, rep = interleave(scop)
    assert rep.rule == "first consumer"
    assert rep.tried[0][0] == "fused" and rep.tried[0][1] != "legal"
    T = sched.union_map
    assert isl.Map("[N] -> { S0[2] -> [1, 0, 2] : N = 5 }").is_subset(
        isl.Map.from_union_map(T.intersect_domain(isl.UnionSet("[N] -> { S0[2] : N = 5 }"))))
    new, _, crep = contract(scop, sched, "tmp")
    assert crep.moduli == (2,)
    for n in range(0, 6):
        assert same_live_out(scop, new, {"N": n}) == []
        assert clobbers(scop, sched.union_map, "tmp", lambda e: (e[0] % 2,), {"N": n}) == []
