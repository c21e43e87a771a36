"""The schedule layer's one legality gate (require_legal), isl text marking its parallel dimensions, and
the storage steps the recipe reader knows about."""

import pytest

import polylab
from polylab.errors import IllegalTransformationError, ScheduleError
from polylab.schedule import legality, parse_schedule, require_legal


@pytest.fixture(scope="module")
def scop():
    return polylab.parse_file(polylab.example_path("sweep2d.c")).scop


def test_legal_schedule_passes_and_verdict_is_cached(scop, monkeypatch):
    s = parse_schedule(scop, "wavefront")
    assert require_legal(s) is s
    calls = []
    monkeypatch.setattr(legality, "check", lambda *a, **k: calls.append(a) or pytest.fail("rechecked"))
    assert require_legal(s) is s and not calls


def test_illegal_schedule_names_dependence_and_pair(scop):
    s = parse_schedule(scop, "reverse(0)")
    with pytest.raises(IllegalTransformationError) as info:
        require_legal(s, "bad", consequence="so it is not run")
    err = info.value
    assert not err.report.legal and err.violations == err.report.violations
    first = err.report.violations[0]
    assert str(err.message if hasattr(err, "message") else err).startswith("bad is illegal, so it is not run: ")
    assert "dependence" in str(err) and first.source in str(err) and first.sink in str(err)
    assert err.dependence is first.dependence and err.source_instance == first.source_instance
    assert err.sink_instance == first.sink_instance and err.violation is first
    with pytest.raises(IllegalTransformationError):  # the cached verdict refuses again
        require_legal(s)


def test_isl_text_marks_exactly_the_parallel_dimensions(scop):
    s = parse_schedule(scop, "{ S0[i, j] -> [i + j, i] }")
    assert s.marked == frozenset(s.parallel_dims) == {1}
    assert s.kinds == ("time", "space")
    assert parse_schedule(scop, "{ S0[i, j] -> [i, j] }").marked == frozenset()


def test_storage_steps_come_from_their_table_not_from_an_import():
    """The schedule layer's table has no storage step; the storage layer's table adds every one of them
    (explicitly, by value: importing polylab.storage registers nothing)."""
    import polylab.storage  # noqa: F401  (imported on purpose: it must not change the schedule layer's table)
    from polylab.schedule import SCHEDULE_STEPS
    from polylab.storage import STORAGE_STEPS, recipe_steps

    # the one name in both: the storage layer's ``optimize`` extends the schedule layer's loop optimizer
    # with the storage steps around it, and recipe_steps() takes the extended one
    assert set(STORAGE_STEPS) & set(SCHEDULE_STEPS) == {"optimize"}
    assert recipe_steps()["optimize"].fn.__wrapped__ is STORAGE_STEPS["optimize"].fn.__wrapped__
    assert set(recipe_steps()) == set(SCHEDULE_STEPS) | set(STORAGE_STEPS)
    scop = polylab.parse_file(polylab.example_path("sl3.sy")).scop
    with pytest.raises(ScheduleError) as info:
        parse_schedule(scop, "fold_live_ins", steps=SCHEDULE_STEPS)
    assert "recipe_steps" in info.value.hint
    assert parse_schedule(scop, "fold_live_ins", steps=recipe_steps()).steps == ("fold_live_ins",)


def test_steps_after_isl_text_are_applied_not_ignored():
    import polylab
    from polylab.errors import ScheduleError
    from polylab.schedule import parse_schedule

    scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    plain = parse_schedule(scop, "{ S0[i, j] -> [i + j, i] }")
    tiled = parse_schedule(scop, "{ S0[i, j] -> [i + j, i] }; tile(4, 4)")
    assert str(tiled.union_map) != str(plain.union_map)
    with pytest.raises(ScheduleError) as info:
        parse_schedule(scop, "{ S0[i, j] -> [i + j, i] }; junk")
    assert "junk" in info.value.message and info.value.location.column == 29
