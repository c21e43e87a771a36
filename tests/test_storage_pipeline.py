"""The sl3 story end to end: fold -> remove dead writes -> interleave -> contract, found automatically."""

import shutil
import tempfile

import pytest

import polylab
from polylab.model.expr import ArrayRef, walk
from polylab.storage import StoragePlan, storage_pipeline
from polylab.reference.builder import jacobi1d_time_scop, sl3_scop
from polylab.reference.interpret import same_live_out


@pytest.fixture(scope="module")
def sl3():
    return polylab.parse_file(polylab.example_path("sl3.sy")).scop


@pytest.fixture(scope="module")
def plan(sl3):
    return storage_pipeline(sl3)


def test_chain_is_found(plan):
    names = plan.step_names()
    assert names[0] == "fold_live_ins" and names[1] == "remove_dead_writes"
    assert names[-2:] == ("interleave", "contract(x)")
    assert any(n.startswith("contract(x) under") for n in names)    # the source order was refuted first
    rep = dict(plan.steps)["contract(x)"]
    assert rep.moduli == (2,)


def test_result_has_two_planes_and_a_copy_out(plan, sl3):
    scop = plan.scop
    assert scop.array("xbuf").extents == ("2", "n", "n")
    sweep = scop.statement("S1")
    assert "xbuf[(i - 1) % 2][j][k]" in sweep.code()
    assert sum(1 for r in walk(sweep.body.value) if isinstance(r, ArrayRef)) == 4
    copies = [s for s in scop.statements if s.body.target.array == "x"]
    assert copies and all(s.code() == "x[i][j][k] = xbuf[i % 2][j][k];" for s in copies)
    assert scop.live_out is sl3.live_out


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 8])
def test_oracle_bit_identical(plan, sl3, n):
    assert same_live_out(sl3, plan.scop, {"n": n}, schedule=plan.schedule.union_map) == []


def test_displays(plan):
    text = str(plan)
    assert "fold_live_ins" in text and "xbuf[i0 % 2]" in text and "is empty" in text
    html = plan._repr_html_()
    assert "<ol>" in html and "contract" in html
    assert isinstance(plan, StoragePlan)


def test_hand_built_sl3_gives_the_same_chain():
    p = storage_pipeline(sl3_scop())
    assert p.step_names()[-1] == "contract(x)"
    assert dict(p.steps)["contract(x)"].moduli == (2,)


def test_jacobi1d_time_planes_need_no_interleaving():
    scop = jacobi1d_time_scop()
    p = storage_pipeline(scop)
    assert "interleave" not in p.step_names()
    assert dict(p.steps)["contract(A)"].moduli == (2,)
    assert same_live_out(scop, p.scop, {"T": 3, "N": 5}) == []


def test_recipe_steps_on_schedule_values(sl3):
    from polylab.schedule.core import original
    from polylab.storage.steps import (step_contract, step_fold_live_ins, step_interleave,
                                       step_remove_dead_writes)

    s = original(sl3)
    s = step_fold_live_ins(s)
    s = step_remove_dead_writes(s)
    s = step_interleave(s)
    s = step_contract(s, "x")
    assert s.scop.array("xbuf").extents[0] == "2"
    assert same_live_out(sl3, s.scop, {"n": 5}, schedule=s.union_map) == []


def _has_cc() -> bool:
    return any(shutil.which(c) for c in ("gcc", "cc", "clang"))


@pytest.mark.skipif(not _has_cc(), reason="no C compiler")
def test_compiled_contracted_sl3_matches_the_original(plan, sl3):
    from polylab import toolchain as tc
    from polylab.codegen import generate, original_program
    from polylab.experiment.verify import VERIFY_FLAGS, compile_variant, param_args

    code = generate(plan.scop, plan.schedule, "c")
    assert "xbuf[(c0 - 1) % 2]" in code.kernel or "% 2" in code.kernel
    ref = tc.compile(original_program(sl3), flags=VERIFY_FLAGS)
    var = compile_variant(code, VERIFY_FLAGS)
    with tempfile.TemporaryDirectory() as tmp:
        for n in (3, 10, 33):
            tc.run(ref, param_args(sl3, {"n": n}), timeout=60, output_dir=f"{tmp}/o{n}")
            tc.run(var, param_args(plan.scop, {"n": n}), timeout=60, output_dir=f"{tmp}/v{n}")
            cmp = tc.compare_outputs(f"{tmp}/o{n}", f"{tmp}/v{n}")
            assert cmp.equal, str(cmp)


def test_storage_steps_in_a_recipe(sl3):
    from polylab.errors import StorageError
    from polylab.schedule import parse_schedule
    from polylab.storage import recipe_steps

    sch = parse_schedule(sl3, "fold_live_ins; remove_dead_writes; interleave; contract(x)", steps=recipe_steps())
    assert sch.steps == ("fold_live_ins", "remove_dead_writes", "interleave", "contract(x)")
    assert sch.scop.array("xbuf").extents == ("2", "n", "n")
    assert "S1[i, j, k] -> [i, 1, j, k, 0]" in str(sch)
    for n in (2, 5):
        assert same_live_out(sl3, sch.scop, {"n": n}, schedule=sch.union_map) == []
    with pytest.raises(StorageError) as exc:
        parse_schedule(sl3, "fold_live_ins; remove_dead_writes; contract(x, 1)", steps=recipe_steps())
    assert exc.value.location is not None and "contract(x, 1)" in exc.value.location.text
    auto = parse_schedule(sl3, "storage", steps=recipe_steps())
    assert auto.scop.array("xbuf").extents[0] == "2"


@pytest.mark.parametrize("name", polylab.examples())
def test_pipeline_on_the_corpus(name):
    prog = polylab.parse_file(polylab.example_path(name))
    for scop in prog.scops:
        plan = storage_pipeline(scop)
        assert plan.step_names()[0] == "fold_live_ins"
        params = {p: 3 for p in scop.parameters}
        assert same_live_out(scop, plan.scop, params, schedule=plan.schedule.union_map) == []


def test_a_producer_nobody_reads_is_placed_at_the_first_consumer_time():
    # issue 28, item 3 (PolyBench's adi): a producer whose values no statement of the region reads has no
    # first consumer; its placement map was built in a space without the parameters (isl: "parameters need
    # to match"), a traceback in optimize and in codegen --schedule "optimize(1)"
    from polylab.experiment import verify
    from polylab.experiment.schedules import schedule_from_spec
    from polylab.reference.interpret import same_live_out
    from polylab.storage import interleave

    scop = polylab.parse("double a[N];\ndouble s;\ns = 1.0;\nfor (t = 0; t < T; t++)\n"
                         "  for (i = 1; i < N; i++)\n    a[i] = a[i - 1] + 1.0;\n").scop
    sched, rep = interleave(scop)
    assert rep.rule == "first consumer" and ("fused", "a producer has no loop") in rep.tried
    for n, t in ((0, 0), (1, 2), (5, 3)):
        assert same_live_out(scop, sched.scop, {"N": n, "T": t}, schedule=sched.union_map) == []
    if shutil.which("gcc"):
        assert verify(scop, schedule_from_spec(scop, "optimize(1)"), "c", params={"N": 9, "T": 3}).verified is True
