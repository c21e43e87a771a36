"""Reading schedules (isl text, recipes), user errors with carets, displays, space-time views, the CLI."""

from __future__ import annotations

import json

import pytest

import polylab
from polylab.cli import main
from polylab.errors import ScheduleError
from polylab.schedule import (SCHEDULE_STEPS, check, make_step, parse_schedule, processor_allocation, space_time,
                              with_steps)


def scop_of(name):
    return polylab.parse_file(polylab.example_path(name)).scop


def test_isl_text_and_recipe_agree():
    scop = scop_of("sweep2d.c")
    a = parse_schedule(scop, "{ S0[i, j] -> [i + j, j] }")
    b = parse_schedule(scop, "wavefront")
    assert a.text() == b.text() == "[N] -> { S0[i, j] -> [i + j, j] }"
    assert parse_schedule(scop, "interchange(i, j)").text() == "[N] -> { S0[i, j] -> [j, i] }"
    multi = parse_schedule(scop, "skew(1, 0)\n tile(4, 4) ; parallel")
    assert multi.steps == ("skew(1, 0, 1)", "tile(4, 4)", "parallel")


@pytest.mark.parametrize("spec, column, words", [
    ("wavefront; tilez(3)", 12, "unknown schedule step"),
    ("tile(4, x y)", 1, "bad argument"),
    ("skew(1)", 1, "wrong arguments"),
    ("interchange(0, 5)", 1, "does not exist"),
])
def test_bad_recipe_step_has_column_and_hint(spec, column, words):
    with pytest.raises(ScheduleError) as err:
        parse_schedule(scop_of("sweep2d.c"), spec)
    e = err.value
    assert words in e.message and e.location.column == column
    assert e.hint
    assert "^" in e.render()


def test_unknown_step_hint_lists_valid_steps():
    with pytest.raises(ScheduleError) as err:
        parse_schedule(scop_of("sweep2d.c"), "wavefrnt")
    for name in ("auto", "wavefront", "tile", "tile_wavefront", "parallel", "isl", "skew"):
        assert name in err.value.hint


@pytest.mark.parametrize("spec, words", [
    ("{ S0[i, j] -> [i] : i > 2 }", "not defined on all"),
    ("{ S7[i] -> [i] }", "not a statement"),
    ("{ S0[i] -> [i] }", "iterators"),
    ("{ S0[i, j] -> [i, j] ", "cannot read"),
    ("[Q] -> { S0[i, j] -> [i + Q, j] }", "unknown parameter"),
])
def test_bad_isl_text(spec, words):
    with pytest.raises(ScheduleError) as err:
        parse_schedule(scop_of("sweep2d.c"), spec)
    assert words in err.value.message


def test_isl_text_must_mention_every_statement():
    with pytest.raises(ScheduleError) as err:
        parse_schedule(scop_of("jacobi2d.c"), "{ S0[t, i, j] -> [t, i, j] }")
    assert "S1" in err.value.message and "S1[t, i, j]" in err.value.hint


def test_every_step_documents_its_map_and_legality():
    for name, step in SCHEDULE_STEPS.items():
        if not step.fn.__module__.startswith("polylab.schedule"):
            continue
        doc = step.fn.__doc__ or ""
        assert "legal" in doc.lower() or name in ("original",), name


def test_a_step_of_ones_own_goes_into_a_new_table():
    def twice_skew(s, f: int = 1):
        """Skew twice (test step); legal when skew is."""
        from polylab.schedule import skew
        return skew(skew(s, 1, 0, f), 1, 0, f)

    mine = with_steps(SCHEDULE_STEPS, make_step("twice_skew_test", twice_skew))
    s = parse_schedule(scop_of("sweep2d.c"), "twice_skew_test(1)", steps=mine)
    assert s.expressions("S0") == ["i", "2i + j"]
    assert "twice_skew_test" not in SCHEDULE_STEPS      # the table it came from is unchanged
    with pytest.raises(ScheduleError):
        parse_schedule(scop_of("sweep2d.c"), "twice_skew_test(1)")


def test_displays_and_space_time():
    scop = scop_of("sweep2d.c")
    s = parse_schedule(scop, "wavefront; parallel")
    assert "space" in str(s) and "<table>" in s._repr_html_() and "$$" in s._repr_latex_()
    st = space_time(s)
    assert st.kinds == ("time", "space")
    assert st.statements[0].Theta.tolist() == [[1, 1], [0, 1]]
    alloc = processor_allocation(s, 4)["S0"]
    assert "floor((j)/4)" in str(alloc) or "4o0" in str(alloc)
    r = check(parse_schedule(scop, "{ S0[i, j] -> [-i, j] }"))
    assert "illegal" in r._repr_html_() and "ILLEGAL" in str(r) and "preceq" in r._repr_latex_()


def test_cli_json_legal_and_illegal(capsys):
    assert main(["schedule", "sweep2d.c", "--schedule", "wavefront; parallel", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["legal"] is True and out["parallel"] == [1] and out["violations"] == []
    assert out["schedule"] == "[N] -> { S0[i, j] -> [i + j, j] }"
    assert main(["schedule", "sweep2d.c", "-s", "{ S0[i, j] -> [j, -i] }", "--param", "N=6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["legal"] is False
    v = out["violations"][0]
    assert v["dependence"] == {"kind": "flow", "source": "S0", "sink": "S0", "array": "a"}
    assert v["source_instance"] == [1, 1] and v["sink_instance"] == [2, 1]


def test_cli_bad_spec_exits_2_with_caret(capsys):
    assert main(["schedule", "sweep2d.c", "--schedule", "wavefront; bogus"]) == 2
    err = capsys.readouterr().err
    assert "unknown schedule step 'bogus'" in err and "^" in err


def test_sequential_unmarks_every_loop_and_keeps_the_order():
    """isl text marks its exactly parallel loops; ``sequential`` takes every mark away (no OpenMP loop in
    the code) without changing the order or what is known to be parallel."""
    from polylab.codegen import generate

    scop = scop_of("jacobi2d.c")
    marked = parse_schedule(scop, "parallel")
    assert marked.marked
    seq = parse_schedule(scop, "parallel; sequential")
    assert seq.marked == frozenset() and seq.text() == marked.text()
    assert seq.parallel_dims == marked.parallel_dims
    assert "#pragma omp" in generate(scop, marked, "openmp").kernel
    assert "#pragma omp" not in generate(scop, seq, "openmp").kernel
