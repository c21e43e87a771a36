"""Variant specs and sweep plans of ``polylab bench`` (mostly without compiling anything)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from polylab.bench import expand_tile, load_kernel, plan, prepare_variant
from polylab.bench.runner import run_case
from polylab.bench.sweep import Case
from polylab.errors import IllegalTransformationError, PolylabError, ScheduleError
from polylab.schedule import split_spec as split_parts


def test_split_keeps_isl_text_and_arguments_whole():
    spec = "fold_live_ins; remove_dead_writes\n{ S0[i,j,k] -> [i,0,j,k]; S1[i,j,k] -> [i,1,j,k] }; contract(x, 2)"
    assert split_parts(spec) == ["fold_live_ins", "remove_dead_writes",
                                 "{ S0[i,j,k] -> [i,0,j,k]; S1[i,j,k] -> [i,1,j,k] }", "contract(x, 2)"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["wavefront", "tile(4, 8)", "parallel", "{ S0[i] -> [i]; S1[i] -> [0] }",
                                 "skew(1, 0, 2)"]), min_size=1, max_size=5))
def test_split_inverts_joining(parts):
    assert split_parts("; ".join(parts)) == parts
    assert split_parts("\n".join(parts)) == parts


def test_tile_placeholder():
    assert expand_tile("auto; tile_wavefront($T, $T)", 16) == "auto; tile_wavefront(16, 16)"
    k = load_kernel("sweep2d")
    with pytest.raises(ScheduleError):
        prepare_variant(k.scop, "tile($T, $T)")


def test_plan_expands_tiles_and_threads_and_runs_the_original_once():
    ks = [load_kernel("sweep2d.c"), load_kernel("jacobi2d")]
    cases = plan(ks, ["original", "wavefront; parallel", "tile($T, $T)"], threads=[1, 2], tile_sizes=[4, 8],
                 params={"N": 30, "T": 2, "unused": 5}, verify_params={"N": 10})
    assert len(cases) == 2 * (1 + 2 + 2 * 2)
    assert [c.threads for c in cases if c.label == "original"] == [1, 1]
    assert {c.label for c in cases} == {"original", "wavefront; parallel", "tile(4, 4)", "tile(8, 8)"}
    jac = [c for c in cases if c.kernel == "jacobi2d.c"]
    assert all(c.params == {"N": 30, "T": 2} and c.verify_params == {"N": 10, "T": 2} for c in jac)


def test_missing_parameter_value_is_a_user_error(tmp_path):
    src = tmp_path / "k.c"
    src.write_text("double a[Q];\nfor (i = 1; i < Q; i++)\n  a[i] = a[i - 1] + 1.0;\n")
    k = load_kernel(str(src))
    with pytest.raises(PolylabError, match="Q"):
        plan([k], ["original"])


def test_illegal_isl_text_is_refused_before_code_generation():
    k = load_kernel("sweep2d.c")
    with pytest.raises(IllegalTransformationError, match="flow"):
        prepare_variant(k.scop, "{ S0[i, j] -> [-i, j] }")


def test_storage_steps_then_isl_text_then_contraction_builds_and_verifies():
    """The mixed form: storage steps, then a schedule of the *new* SCoP in isl text, then contraction."""
    k = load_kernel("sl3.sy")
    spec = ("fold_live_ins; remove_dead_writes; "
            "{ S0[i,j,k] -> [i,0,j,k,0]; S1[i,j,k] -> [i,1,floor(j/4),j+k,j] }; contract(x)")
    built = prepare_variant(k.scop, spec)
    assert any(a.name == "xbuf" and a.extents[0] == "2" for a in built.scop.arrays)
    assert "contract(x)" in built.steps
    case = Case(k.name, spec, "strips", 1, None, {"n": 14}, {"n": 11}, "openmp")
    r = run_case(k, case, None, repeat=1, warmup=0, timeout=60)
    assert r.status == "verified", r.reason
    assert r.seconds is not None and r.speedup is None   # no baseline given: nothing to compare with


@pytest.mark.parametrize("text,name,spec", [
    ("folded, 2 planes: fold_live_ins; contract(x)", "folded, 2 planes", "fold_live_ins; contract(x)"),
    ("tile wavefront 32^3: tile_wavefront(32, 32, 32)", "tile wavefront 32^3", "tile_wavefront(32, 32, 32)"),
    ("{ S0[i, j] -> [i + j, j] : i > 0 }", None, "{ S0[i, j] -> [i + j, j] : i > 0 }"),
    ("[N] -> { S0[i, j] -> [i, j] }", None, "[N] -> { S0[i, j] -> [i, j] }"),
    ("wavefront; { S0[i] -> [i] : i > 0 }", None, "wavefront; { S0[i] -> [i] : i > 0 }"),
    ("tile(4, 4)", None, "tile(4, 4)"),
])
def test_named_specs(text, name, spec):
    from polylab.bench.sweep import split_name

    assert split_name(text) == (name, spec)
    k = load_kernel("sweep2d.c")
    if spec.startswith("tile(") or spec.startswith("{ S0[i, j]"):
        (case,) = plan([k], [text], params={"N": 8})
        assert case.label == (name or spec) and case.spec == spec


def test_isl_text_followed_by_recipe_steps():
    k = load_kernel("sweep2d.c")
    built = prepare_variant(k.scop, "{ S0[i, j] -> [i + j, j] }; parallel")
    assert built.schedule.marked == frozenset({1})
    assert "parallel" in built.steps
