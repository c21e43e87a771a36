"""Stencil passes, lowering and verification: shapes, inlining, unrolling, cleanup, the model, the engine on it."""

from __future__ import annotations

import numpy as np
import pytest

from polylab.corpus import example_path
from polylab.stencil import (StencilError, check, cleanup, cse, dce, infer_shapes, inline, interpret, lower,
                             parse, print_program, run_passes, unroll, with_domain)
from polylab.stencil.ops import Return
from polylab.toolchain import supports_openmp


def program(name: str):
    return parse(example_path(f"stencil/{name}.mlir").read_text())


def test_shapes_propagate_backwards_from_the_store_range():
    p = infer_shapes(program("diffusion"))
    lap, fli, flj, res = p.applies
    assert res.box.lb == (0, 0, 0) and res.box.ub == (32, 32, 16)
    assert fli.box.lb == (-1, 0, 0) and fli.box.ub == (32, 32, 16)      # read at [-1, 0, 0]
    assert flj.box.lb == (0, -1, 0) and flj.box.ub == (32, 32, 16)
    assert lap.box.lb == (-1, -1, 0) and lap.box.ub == (33, 33, 16)     # hull over both fluxes
    load = p.loads[0]
    assert load.box.lb == (-2, -2, 0) and load.box.ub == (34, 34, 16)
    assert lap.result_types[0].shape == (34, 34, 16)
    assert "to ([-1, -1, 0] : [33, 33, 16])" in print_program(p)
    assert parse(print_program(p)) == p


def test_a_field_too_small_is_refused_naming_operator_access_offset_and_bound():
    src = example_path("stencil/laplace3d.mlir").read_text().replace(
        "%src([-2, -2, -2] : [34, 34, 34])", "%src([0, -2, -2] : [34, 34, 34])")
    with pytest.raises(StencilError) as info:
        infer_shapes(parse(src))
    msg = info.value.message
    assert "the field %src is too small" in msg and "stencil.apply (line 8)" in msg
    assert "stencil.access %v [-1, 0, 0] (line 10)" in msg and "offset -1 in dimension 0" in msg
    assert "index -1 of dimension 0" in msg and "lower bound 0" in msg
    assert info.value.location.line == 10


def test_an_access_outside_a_given_range_is_refused():
    p = infer_shapes(program("diffusion"))
    text = print_program(p).replace("to ([-1, -1, 0] : [33, 33, 16])", "to ([0, -1, 0] : [33, 33, 16])")
    with pytest.raises(StencilError, match="outside the range"):
        interpret(parse(text), {})


def fields_for(p, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for name, _ in p.arguments:
        casts = [op for op in p.ops if getattr(op, "field", None) == name and hasattr(op, "box")]
        box = casts[0].box
        present = casts[0].to_type.present
        out[name] = rng.standard_normal(tuple(e for e, q in zip(box.extent, present) if q))
    return out


@pytest.mark.parametrize("name", ["diffusion", "chain", "blur2d", "laplace3d"])
@pytest.mark.parametrize("spec", ["inline", "inline(recompute)", "inline,cleanup", "unroll(i=2)",
                                  "inline,unroll(j=2),cse"])
def test_passes_preserve_the_interpreted_results(name, spec):
    p = program(name)
    fields = fields_for(p)
    want = interpret(p, fields)
    try:
        q = run_passes(p, spec)
        got = interpret(q, fields)
    except StencilError as err:                      # a refusal must say why
        assert "too small" in err.message or "divisible" in err.message
        return
    assert want.keys() == got.keys()
    for k in want:
        assert np.array_equal(want[k], got[k])


def test_inlining_removes_producers_and_trades_storage_for_recomputation():
    p = program("diffusion")
    q = cleanup(inline(p))
    assert len(q.applies) == 1 and len(p.applies) == 4
    from polylab.stencil.arith import Binary

    arithmetic = sum(isinstance(op, Binary) for op in q.applies[0].body)
    assert arithmetic > sum(isinstance(op, Binary) for a in p.applies for op in a.body)   # recomputation
    assert len(lower(q).temps) == 0 and len(lower(p).temps) == 3


def two_consumers():
    from polylab.stencil import Builder

    b = Builder("two", rank=3)
    f = b.field("f", lb=(-2, -2, 0), ub=(18, 18, 4))
    g = b.field("g", lb=(-2, -2, 0), ub=(18, 18, 4))
    h = b.field("h", lb=(-2, -2, 0), ub=(18, 18, 4))
    t = b.load(f)
    sm = b.apply([t], lambda x: 0.5 * (x[0, 0, 0] + x[1, 0, 0]))
    a = b.apply([sm], lambda x: x[1, 0, 0] - x[-1, 0, 0])
    c = b.apply([sm], lambda x: x[0, 1, 0] - x[0, -1, 0])
    b.store(a, g, lb=(0, 0, 0), ub=(16, 16, 4))
    b.store(c, h, lb=(0, 0, 0), ub=(16, 16, 4))
    return b.build()


def test_rerouting_gives_the_first_consumer_extra_results():
    p = two_consumers()
    q = inline(p)                                   # %sm is rerouted through its first consumer
    assert len(q.applies) == 2
    first, second = q.applies
    assert len(first.results) == 2 and second.operands == (first.results[1],)
    shaped = infer_shapes(q)
    assert shaped.applies[0].box.lb == (0, -1, 0)   # it now also computes what the second reads
    recompute = inline(p, reroute=False)
    assert len(recompute.applies) == 2 and all(len(a.results) == 1 for a in recompute.applies)
    assert check(shaped).verified and check(recompute).verified
    assert check(cleanup(inline(program("chain")))).verified


def test_unrolling_returns_the_copies_and_lowering_checks_divisibility():
    p = unroll(program("laplace3d"), 2, 1)
    apply = p.applies[0]
    ret = apply.body[-1]
    assert isinstance(ret, Return) and ret.unroll == (1, 2, 1) and len(ret.operands) == 2
    assert "stencil.return unroll [1, 2, 1]" in print_program(p)
    assert check(p).verified
    q = unroll(program("laplace3d"), 3, 1)
    with pytest.raises(StencilError, match="divisible by the unroll factor.*unrolled by 3 in dimension 1.*32"):
        lower(q)


def test_cse_and_dce_shrink_the_body_without_changing_it():
    p = unroll(program("diffusion"), 2, 2)
    q = cse(p)
    n = lambda prog: sum(len(a.body) for a in prog.applies)  # noqa: E731
    assert n(q) < n(p)
    f = fields_for(p)
    assert all(np.array_equal(a, b) for a, b in zip(interpret(p, f).values(), interpret(q, f).values()))


def test_dce_removes_unread_applies_body_values_and_arguments():
    from polylab.stencil import Builder

    b = Builder("dead", rank=3)
    f = b.field("f", lb=(-1, -1, -1), ub=(5, 5, 5))
    g = b.field("g", lb=(-1, -1, -1), ub=(5, 5, 5))
    t = b.load(f)
    b.apply([t], lambda x: x[1, 0, 0] * 2.0)                     # nobody reads it
    u = b.apply([t, t], lambda x, y: x[0, 0, 0] * 1.5)             # y is never read
    b.store(u, g, lb=(0, 0, 0), ub=(4, 4, 4))
    p = b.build()
    q = dce(p)
    assert len(q.applies) == 1 and len(p.applies) == 2
    assert len(q.applies[0].args) == 1                           # the unread block argument is gone
    src = print_program(p).replace("stencil.store_result %1", "stencil.store_result %1")
    body_dead = parse(src.replace("%2 = stencil.store_result %1", "%9 = mulf %1, %1 : f64\n      "
                                  "%2 = stencil.store_result %1"))
    assert len(dce(body_dead).applies[0].body) < len(body_dead.applies[-1].body) + 1
    assert "%9 = mulf" not in print_program(dce(body_dead))


def test_index_cmpi_and_unordered_predicates():
    from polylab.stencil import Builder, index, select
    from polylab.stencil.interpret import compare

    b = Builder("idx", rank=3)
    f = b.field("f", lb=(0, 0, 0), ub=(6, 6, 6))
    g = b.field("g", lb=(0, 0, 0), ub=(6, 6, 6))
    t = b.load(f)
    r = b.apply([t], lambda x: select(index(x, 2, 1) > 3, x[0, 0, 0], -1.0))
    b.store(r, g, lb=(0, 0, 0), ub=(6, 6, 5))
    p = b.build()
    assert "stencil.index 2 [0, 0, 1]" in print_program(p) and "cmpi \"sgt\"" in print_program(p)
    assert parse(print_program(p)) == p
    assert check(p).verified
    nan = np.array([np.nan, 1.0, 2.0])
    one = np.array([1.0, 1.0, 1.0])
    assert list(compare("cmpf", "ogt", nan, one)) == [False, False, True]
    assert list(compare("cmpf", "ugt", nan, one)) == [True, False, True]
    assert list(compare("cmpf", "une", nan, one)) == [True, False, True]
    assert list(compare("cmpf", "one", nan, one)) == [False, False, True]
    assert list(compare("cmpf", "ueq", nan, one)) == [True, True, False]


def test_mlir_names_become_c_identifiers():
    src = example_path("stencil/laplace3d.mlir").read_text().replace("%src", "%int").replace("%dst", "%for.x")
    low = lower(parse(src))
    names = dict(low.fields)
    assert names["%int"] == "int_" and names["%for.x"] == "for_x"
    assert check(low).verified


def test_lowered_model_has_one_statement_per_apply_result_and_inferred_temp_shapes():
    low = lower(program("diffusion"))
    scop = low.scop
    assert len(scop.statements) == 4
    arrays = {a.name: a.extents for a in scop.arrays}
    assert arrays["lap"] == ("34", "34", "16") and arrays["fli"] == ("33", "32", "16")
    assert arrays["in"] == ("38", "38", "16")
    assert dict(low.fields)["%out"] == "out"


def test_lowered_model_feeds_dependence_analysis():
    from polylab.analysis import compute_dependences

    graph = compute_dependences(lower(program("diffusion")).scop)
    kinds = {(d.source, d.sink) for d in graph if d.kind == "flow"}
    assert ("S0", "S1") in kinds and ("S1", "S3") in kinds and ("S2", "S3") in kinds


@pytest.mark.parametrize("name", ["laplace3d", "diffusion", "chain", "blur2d"])
def test_lowered_programs_match_the_interpreter_bit_for_bit(name):
    result = check(program(name))
    assert result.verified is True, str(result)
    assert result.elements > 0 and result.changed > 0


def test_a_wrong_lowering_would_be_caught():
    from polylab.stencil.check import compare, reference, run_lowered

    low = lower(program("laplace3d"))
    actual, _, _ = run_lowered(low)
    values, flat = actual["dst"]
    broken = values.copy()
    broken[17] = np.nextafter(broken[17], np.inf)
    verdict = compare(low, reference(low), {"dst": (broken, flat)}, "c")
    assert verdict.verified is False and verdict.first_difference[0] == "dst"


@pytest.mark.parametrize("spec", ["tile(8,8)", "interleave; contract(gi)"])
def test_engine_schedules_and_storage_on_the_lowered_model(spec):
    result = check(lower(program("chain")), spec, "c")
    assert result.verified is True, str(result)


@pytest.mark.skipif(not supports_openmp(), reason="no OpenMP")
def test_openmp_variant_is_bit_for_bit():
    assert check(program("diffusion"), "tile(8,8); parallel", "openmp", threads=2).verified


def test_with_domain_moves_store_ranges_and_field_bounds():
    p = with_domain(program("laplace3d"), (16, 8, 4))
    assert p.stores[0].box.ub == (16, 8, 4)
    assert p.bounds("%in").ub == (18, 10, 6) and p.bounds("%in").lb == (-2, -2, -2)
    assert check(p).verified
    with pytest.raises(StencilError, match="needs 3 positive extents"):
        with_domain(program("laplace3d"), (16, 8))


def test_unknown_pass_is_refused_with_the_list():
    with pytest.raises(StencilError, match="unknown pass 'fuse'") as info:
        run_passes(program("chain"), "inline,fuse")
    assert "unroll(j=2)" in info.value.hint


def test_lowered_mlir_is_emitted():
    from polylab.stencil import lowered_mlir, stencil_mlir

    text = lowered_mlir(program("blur2d"))
    assert "affine.for" in text and "memref<66x66xf64>" in text
    assert stencil_mlir(program("blur2d")).startswith("module {")
