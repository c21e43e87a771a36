"""Issue 15, section 2 (the schedule, storage and code-generation items): located errors, never tracebacks.

* parameters (and iterators) named like isl's keywords (``max``, ``mod``, ``floord``, ``exists``, ...):
  every search and step builds its isl objects through the API or with stand-in names, and the generated
  bounds call ``polylab_imin`` / ``polylab_imax`` / ``polylab_ifloord``, which a C name cannot hide;
* a loop that never runs (``for (i = 1; i > 2; i++)``) under every schedule;
* recipe arguments that are not small integers -> a :class:`ScheduleError` at the step, with the usage;
* the storage steps in other orders on ``sl3.sy`` -> correct (legal, and verified once) or a located refusal.
"""

from __future__ import annotations

import islpy as isl
import pytest

import polylab
from polylab.codegen import generate
from polylab.errors import PolylabError, ScheduleError
from polylab.experiment.schedules import variant_scop
from polylab.model.islutil import isl_identifier, restore_identifiers
from polylab.schedule import check, parse_schedule
from polylab.storage import recipe_steps

KEYWORDS = ["max", "min", "mod", "floor", "floord", "ceil", "and", "or", "not", "exists", "infty"]


def _kernel(p: str) -> str:
    return (f"void f(int {p}, double a[{p}][{p} + 1]) {{\n#pragma scop\n"
            f"for (int i = 1; i < {p}; i++)\n  for (int j = 1; j < {p}; j++)\n"
            f"    a[i][j] = a[i - 1][j] + a[i][j - 1];\n#pragma endscop\n}}\n")


def test_keywords_are_not_isl_names_and_the_stand_ins_give_them_back():
    for p in KEYWORDS:
        with pytest.raises(isl.Error):
            isl.Set(f"[{p}] -> {{ [x] : x = {p} }}")
        s = restore_identifiers(isl.Set(f"[{isl_identifier(p)}] -> {{ [x] : 0 <= x < {isl_identifier(p)} }}"))
        assert s.get_dim_name(isl.dim_type.param, 0) == p
    assert isl_identifier("N") == "N"


@pytest.mark.parametrize("p", KEYWORDS)
def test_auto_and_tiling_with_a_parameter_named_like_an_isl_keyword(p):
    scop = polylab.parse(_kernel(p)).scop
    assert scop.parameters == (p,)
    for spec in ("auto", "isl", "wavefront; tile(3, 3)", "tile_wavefront(2)", "auto; tile(2, 2)"):
        sched = parse_schedule(scop, spec, steps=recipe_steps())
        assert check(sched).legal, spec
        code = generate(scop, sched, "c").kernel
        # the generated bounds call polylab's helpers, never a function the parameter would hide
        assert f"{p}(" not in code.replace(f"polylab_i{p}(", ""), (spec, code)


def test_a_parameter_named_max_compiles_and_verifies():
    from polylab.experiment import verify

    scop = polylab.parse(_kernel("max")).scop
    sched = parse_schedule(scop, "wavefront; tile(3, 3)", steps=recipe_steps())
    report = verify(scop, sched, target="c", params={"max": 9})
    assert report.verified and report.census.elements > 0


def test_an_iterator_named_like_a_keyword_in_the_storage_steps():
    src = ("double x[12][12];\nvoid f(int max) {\n#pragma scop\n"
           "for (int min = 0; min < max; min++) for (int mod = 0; mod < max; mod++) x[min][mod] = 1.0;\n"
           "for (int min = 1; min < max - 1; min++) for (int mod = 1; mod < max - 1; mod++)\n"
           "  x[min][mod] = (x[min - 1][mod] + x[min + 1][mod] + x[min][mod - 1]) / 3.0;\n#pragma endscop\n}\n")
    scop = polylab.parse(src).scop
    for spec in ("auto", "isl", "interleave", "fold_live_ins; remove_dead_writes; interleave"):
        sched = parse_schedule(scop, spec, steps=recipe_steps())
        assert check(sched).legal, spec
        generate(variant_scop(scop, sched), sched, "c")


NEVER = "double a[100];\nfor (i = 1; i > 2; i++)\n  a[i] = a[i] + 1.0;\n"


@pytest.mark.parametrize("spec", ["original", "auto", "isl", "wavefront", "parallel", "tile(4)",
                                  "tile_wavefront(4)", "reverse(0)", "scale(0, 3)"])
def test_a_loop_that_never_runs_under_every_schedule(spec):
    scop = polylab.parse(NEVER).scop
    assert scop.statements[0].domain.is_empty()
    sched = parse_schedule(scop, spec, steps=recipe_steps())
    assert check(sched).legal
    code = generate(scop, sched, "c").kernel
    assert "a[" not in code.split("{", 1)[1]  # no statement instance is generated


def test_a_never_running_statement_beside_a_running_one():
    scop = polylab.parse("double a[N]; double b[N];\nfor (i = 0; i < N; i++) a[i] = 1.0;\n"
                         "for (i = 1; i > 2; i++) b[i] = a[i];\n").scop
    for spec in ("auto", "wavefront", "tile(4)", "isl"):
        sched = parse_schedule(scop, spec, steps=recipe_steps())
        assert check(sched).legal
        assert "a[" in generate(scop, sched, "c").kernel


@pytest.mark.parametrize("spec, says", [
    ("tile(a, b)", "tile needs an integer for sizes, not 'a'"),
    ("tile_wavefront(x)", "tile_wavefront needs an integer for sizes, not 'x'"),
    ("shift(S0, 0, x)", "shift needs an integer for amount, not 'x'"),
    ("distribute(x)", "distribute needs an integer for dim, not 'x'"),
    ("tile(2**70)", "bad argument '2**70' to tile"),
    ("skew(1, 0, 2**70)", "bad argument '2**70' to skew"),
    ("tile(1180591620717411303424)", "the argument 1180591620717411303424 of tile is too large"),
    ("skew(1, 0, 99999999999)", "the argument 99999999999 of skew is too large"),
    ("tile([4, 4])", "tile needs an integer for sizes"),
    ("scale(0, x)", "scale needs an integer for factor"),
])
def test_recipe_arguments_that_are_not_small_integers(spec, says):
    scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    with pytest.raises(ScheduleError) as exc:
        parse_schedule(scop, "wavefront\n" + spec, steps=recipe_steps())
    err = exc.value
    assert says in err.message
    assert err.location is not None and (err.location.line, err.location.column) == (2, 1)
    assert err.hint and "usage" in err.hint


def test_contract_with_a_name_for_its_modulus():
    scop = polylab.parse_file(polylab.example_path("sl3.sy")).scop
    with pytest.raises(ScheduleError, match="contract needs an integer for modulus, not 'A'") as exc:
        parse_schedule(scop, "contract(i, A)", steps=recipe_steps())
    assert exc.value.location is not None


def test_dimension_arguments_still_take_iterator_names_and_lists():
    scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    assert parse_schedule(scop, "skew(j, i)").steps == ("skew(1, 0, 1)",)
    assert parse_schedule(scop, "permute([1, 0])").steps == ("permute(1, 0)",)
    assert parse_schedule(scop, "interchange(i, j)").steps == ("interchange(0, 1)",)


@pytest.mark.parametrize("spec", ["interleave", "interleave; auto", "interleave; parallel", "fuse_producers; isl",
                                  "fuse_producers; fold_live_ins; fold_live_ins"])
def test_storage_steps_in_other_orders_on_sl3_are_legal_or_refused_at_their_place(spec):
    scop = polylab.parse_file(polylab.example_path("sl3.sy")).scop
    try:
        sched = parse_schedule(scop, spec, steps=recipe_steps())
    except PolylabError as err:
        assert err.location is not None and err.hint
        return
    assert check(sched).legal
    generate(variant_scop(scop, sched), sched, "c")


def test_interleave_alone_on_sl3_verifies():
    from polylab.experiment import verify

    scop = polylab.parse_file(polylab.example_path("sl3.sy")).scop
    sched = parse_schedule(scop, "interleave", steps=recipe_steps())
    report = verify(scop, sched, target="c", params={"n": 6})
    assert report.verified and report.census.elements > 0


def test_contracting_an_array_of_a_program_that_never_runs_is_refused_at_the_step():
    from polylab.errors import StorageError

    scop = polylab.parse(NEVER).scop
    with pytest.raises(StorageError, match="no statement instance of .* runs") as exc:
        parse_schedule(scop, "contract(a)", steps=recipe_steps())
    assert exc.value.location is not None and exc.value.hint


def test_parameters_are_fixed_at_values_beyond_64_bits():
    from polylab.model.islutil import fix_parameters

    dom = polylab.parse_file(polylab.example_path("sweep2d.c")).scop.statements[0].domain
    fixed = fix_parameters(dom, {"N": 10**30})
    assert not fixed.is_empty()
    assert fixed.params().is_equal(isl.Set(f"[N] -> {{ : N = {10**30} }}"))


def test_a_whole_array_passed_on_is_dumped_within_its_extents():
    """Found by the fuzz suite: an undeclared array handed whole to a call made the live-out set
    unbounded, and the harness's element loops an isl error."""
    src = polylab.example_path("sl3.sy").read_text().replace("float x[MAXN][MAXN][MAXN];\n", "")
    k = src.index("starttime")
    src = src[:k] + src[k:].replace("    int j = 1;", "    intputint(x); j = 1;", 1)
    scop = polylab.parse(src, language="sysy").scop
    sched = parse_schedule(scop, "skew(1, 0, 2)", steps=recipe_steps())
    assert "polylab_write_outputs" in generate(scop, sched, "c").source


def test_a_step_argument_that_must_be_a_list():
    scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    with pytest.raises(ScheduleError, match=r"distribute needs a \[list\] for order, not 1"):
        parse_schedule(scop, "distribute(2, 1)")
    assert parse_schedule(scop, "distribute(0, [S0])").steps == ("distribute(0)",)
