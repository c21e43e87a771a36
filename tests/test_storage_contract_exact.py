"""contract(): the exact modulus (live distances Delta) and the parallel marks it keeps, checked by brute force."""

import time

import pytest

import polylab
from polylab.codegen import generate
from polylab.schedule import parallel, parse_schedule
from polylab.storage import ContractionRefused, contract, recipe_steps, storage_pipeline
from polylab.reference.builder import make_scop, statement
from polylab.reference.interpret import clobbers, same_live_out

READY = "fold_live_ins; remove_dead_writes; interleave"


@pytest.fixture(scope="module")
def sl3():
    return polylab.parse_file(polylab.example_path("sl3.sy")).scop


@pytest.fixture(scope="module")
def tiled4(sl3):
    """sl3 folded, dead writes removed, interleaved, then a 4x4 tile-level wavefront over (i, j)."""
    return parse_schedule(sl3, READY + "; tile_wavefront(4, 4)", steps=recipe_steps())


def _planes(e, m):
    return (e[0] % m, e[1], e[2])


def test_tile_wavefront_modulus_is_computed_not_capped(tiled4, sl3):
    new, sched, rep = contract(tiled4.scop, tiled4, "x")
    assert rep.moduli == (9,)                         # 2 * 4 + 1 planes: beyond the old search (1..8)
    assert [a.moduli[0] for a in rep.attempts] == list(range(1, 10))
    assert [a.safe for a in rep.attempts] == [False] * 8 + [True]
    assert "|delta| <= 8" in rep.live_distances and "xbuf[9][n][n]" in str(rep)
    # every refusal is a real clobber (brute force, at the parameters of its counterexample)
    for att in rep.attempts[:-1]:
        m = att.moduli[0]
        assert att.params, att
        assert clobbers(tiled4.scop, tiled4.union_map, "x", lambda e, m=m: _planes(e, m), dict(att.params)) != []
    # the first refusals are explained by a full conflict, with an example element
    assert "overwrites x[0][1][1]" in rep.attempts[0].conflict
    assert "are live at the same time" in rep.attempts[5].conflict
    # the chosen modulus loses nothing: no read finds its slot overwritten, and the live-out is identical
    for n in (11, 12):
        assert clobbers(tiled4.scop, tiled4.union_map, "x", lambda e: _planes(e, 9), {"n": n}) == []
    for n in (3, 12):
        assert same_live_out(sl3, new, {"n": n}, schedule=sched.union_map) == []


def test_tile_wavefront_keeps_its_parallel_mark_and_openmp(tiled4):
    # the modulus given explicitly: the old code also found it, but dropped the coincident marks
    assert tiled4.marked == frozenset({1})
    new, sched, rep = contract(tiled4.scop, tiled4, "x", modulus=9)
    assert sched.marked == frozenset({1}) and rep.parallel_kept == (1,) and rep.parallel_dropped == ()
    assert sched.is_coincident(1)
    assert "parallel dimension(s) kept" in str(rep)
    code = generate(new, sched, target="openmp")
    assert "#pragma omp" in code.kernel and code.parallel_loops >= 1
    # the time functions are the user's ones (plus the copy-out dimension), not one piece per face
    assert sched.expressions("S1") == tiled4.expressions("S1") + ["0"]


def test_recipe_contract_step_keeps_marks(sl3):
    s = parse_schedule(sl3, READY + "; tile_wavefront(4, 4); contract(x)", steps=recipe_steps())
    assert s.marked == frozenset({1})
    rep = dict(s.provenance.storage)["contract(x)"]
    assert rep.moduli == (9,)
    assert "#pragma omp" in generate(s.scop, s, target="openmp").kernel


def _pointwise():
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "tmp[i]", "2.0 * In[i]")
    s1 = statement("S1", "[N] -> { S1[i] : 0 <= i < N }", "Out[i]", "tmp[i] * 3.0")
    return make_scop("pw", [s0, s1], arrays=[("tmp", "double", ("N",)), ("In", "double", ("N",)),
                                            ("Out", "double", ("N",))],
                     schedule="[N] -> { S0[i] -> [0, i]; S1[i] -> [1, i] }", context="[N] -> { : N >= 0 }",
                     live_out="[N] -> { Out[i] : 0 <= i < N }")


def test_false_dependence_drops_the_mark_with_the_reason():
    scop = _pointwise()
    s = parallel(parse_schedule(scop, "{ S0[i] -> [i, 0]; S1[i] -> [i, 1] }"))
    assert s.marked == frozenset({0})
    new, sched, rep = contract(scop, s, "tmp")
    assert rep.moduli == (1,)                        # one cell: every i now shares tmpbuf[0]
    assert sched.marked == frozenset() and rep.parallel_kept == ()
    (d, why), = rep.parallel_dropped
    assert d == 0 and "false dependence through the buffer tmpbuf" in why
    assert "dropped" in str(rep) and "dropped" in rep._repr_html_()
    assert not sched.is_coincident(0)                # the schedule layer agrees
    assert "#pragma omp" not in generate(new, sched, target="openmp").kernel
    for n in range(0, 5):
        assert same_live_out(scop, new, {"N": n}, schedule=sched.union_map) == []


def test_kept_marks_are_exactly_the_coincident_ones(sl3):
    s = parse_schedule(sl3, READY + "; tile_wavefront(4, 4, 4)", steps=recipe_steps())
    assert s.marked == frozenset({1, 2})
    new, sched, rep = contract(s.scop, s, "x")
    assert rep.moduli == (13,)                       # 3 * 4 + 1 planes
    from dataclasses import replace
    bare = replace(sched, marked=frozenset())
    assert sched.marked == frozenset(d for d in s.marked if bare.is_coincident(d))
    assert set(rep.parallel_kept) | {d for d, _ in rep.parallel_dropped} == set(s.marked)
    assert same_live_out(sl3, new, {"n": 15}, schedule=sched.union_map) == []


def test_unbounded_live_distances_are_refused_with_a_pair(sl3):
    s = parse_schedule(sl3, "fold_live_ins; remove_dead_writes", steps=recipe_steps())
    t0 = time.perf_counter()
    with pytest.raises(ContractionRefused) as exc:
        contract(s.scop, s, "x")
    assert time.perf_counter() - t0 < 30
    msg = exc.value.message
    assert "unbounded" in msg and "are live at the same time" in msg and "no number of planes" in msg
    assert "x[0][1][1]" in msg                       # m = 1 still refuted with an example element
    for att in exc.value.attempts[:4]:
        m = att.moduli[0]
        assert clobbers(s.scop, s.union_map, "x", lambda e, m=m: _planes(e, m), dict(att.params)) != []


def test_large_tiles_need_no_hint(sl3):
    s = parse_schedule(sl3, READY + "; tile_wavefront(32, 32)", steps=recipe_steps())
    t0 = time.perf_counter()
    new, sched, rep = contract(s.scop, s, "x")
    assert time.perf_counter() - t0 < 30
    assert rep.moduli == (65,) and sched.marked == frozenset({1})
    assert rep.attempts[-1].safe and not any(a.safe for a in rep.attempts[:-1])


def test_pipeline_under_a_tile_wavefront(sl3):
    plan = storage_pipeline(sl3, parse_schedule(sl3, "tile_wavefront(4, 4)"))
    assert plan.step_names()[-2:] == ("interleave", "contract(x)")
    rep = dict(plan.steps)["contract(x)"]
    assert rep.moduli == (9,)
    for n in (3, 12):
        assert same_live_out(sl3, plan.scop, {"n": n}, schedule=plan.schedule.union_map) == []


def test_a_modulus_that_keeps_every_plane_is_refused():
    # the hand-built sl3 bounds n <= 400: under the source order the live distances are bounded only by
    # the array itself (up to 398 apart), so the "smallest safe modulus" would keep all 399 planes
    from polylab.storage import fold_live_ins, remove_dead_writes
    from polylab.storage.fold import constant_writers
    from polylab.reference.builder import sl3_scop

    f, _ = fold_live_ins(sl3_scop())
    d, _ = remove_dead_writes(f, statements=list(constant_writers(f)))
    t0 = time.perf_counter()
    with pytest.raises(ContractionRefused) as exc:
        contract(d, None, "x")
    assert time.perf_counter() - t0 < 30
    msg = exc.value.message
    assert "keeps all the planes" in msg and "398 apart" in msg
    assert max(a.moduli[0] for a in exc.value.attempts) == 398
    assert not any(a.safe for a in exc.value.attempts)
