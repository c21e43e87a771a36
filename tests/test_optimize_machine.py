"""State made explicit (issue 30): the optimizer chooses for the :class:`~polylab.schedule.optimize.Machine` it
is given and reads nothing else; step tables are values (``%load_ext polylab`` changes none); the engine's
memos are registered and cleared in one place, and clearing them changes no result.

* with the machine given, the same search gives the same schedule whatever ``OMP_NUM_THREADS`` says, and
  whether or not ``%load_ext polylab`` ran (before, while loaded, after ``%unload_ext``);
* ``parse_schedule(scop, "contract(x)")`` answers the same in all those states (the storage steps are in
  the storage layer's table, never in the schedule layer's);
* the machine's values decide: the thread count and the vector width the machine says (the step's own
  arguments win over them), the caches the cache models read;
* only the layer that meets the world reads the world (:func:`polylab.bench.machine.detect_machine`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import polylab
from polylab.errors import ScheduleError
from polylab.model.memo import clear_all, registry
from polylab.schedule import SCHEDULE_STEPS, parse_schedule
from polylab.schedule.optimize import Machine, TimeTiling
from polylab.storage import recipe_steps

EXAMPLES = Path(polylab.example_path("sweep2d.c")).parent


def scop_of(name: str):
    return polylab.parse_file(EXAMPLES / name).scop


def fingerprint(s) -> tuple:
    """What a schedule is: its text, its OpenMP dimensions, its steps and its SCoP's statements."""
    return s.text(), tuple(sorted(s.marked)), s.steps, tuple(st.name for st in s.scop.statements)


SPECS = ("optimize", "optimize(2)")


def searches(machine: Machine) -> dict:
    out = {}
    for name in ("seidel2d.c", "polybench/bicg.c"):
        for spec in SPECS:
            out[(name, spec)] = fingerprint(parse_schedule(scop_of(name), spec, steps=recipe_steps(machine)))
    return out


def test_omp_num_threads_does_not_change_a_search_given_its_machine(monkeypatch):
    machine = Machine(threads=2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    want = searches(machine)
    for value in ("1", "7,1", "junk"):
        monkeypatch.setenv("OMP_NUM_THREADS", value)
        assert searches(machine) == want, value
    # the bare step takes the machine's threads
    assert all(want[(n, "optimize")][:2] == want[(n, "optimize(2)")][:2] for n, _ in want)


#: storage steps: in the storage layer's table only
STORAGE = "fold_live_ins; remove_dead_writes; interleave; contract(x)"


def test_the_same_search_with_or_without_the_notebook_extension(global_ipython):
    scop, seidel = scop_of("sl3.sy"), scop_of("seidel2d.c")
    machine = Machine()

    def answers():
        plain = parse_schedule(scop, "wavefront; parallel")
        with pytest.raises(ScheduleError) as err:
            parse_schedule(scop, STORAGE)
        return (fingerprint(plain), err.value.message, set(SCHEDULE_STEPS),
                fingerprint(parse_schedule(seidel, "optimize(2)", steps=recipe_steps(machine))),
                fingerprint(parse_schedule(scop, STORAGE, steps=recipe_steps(machine))))

    shell = global_ipython
    shell.run_line_magic("unload_ext", "polylab")
    before = answers()
    shell.run_line_magic("load_ext", "polylab")
    assert answers() == before
    shell.run_line_magic("unload_ext", "polylab")
    assert answers() == before
    assert shell.find_cell_magic("scop") is None and shell.find_cell_magic("schedule") is None
    shell.run_line_magic("load_ext", "polylab")       # as the other modules of the session expect it


def test_the_machine_decides_threads_and_vectors_the_step_overrides_them():
    scop = polylab.parse("double A[N]; double B[N];\nfor (t = 0; t < T; t++) {\n"
                         "  for (i = 1; i < N - 1; i++) B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);\n"
                         "  for (i = 1; i < N - 1; i++) A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);\n}").scop

    def timing(spec, machine):
        s = parse_schedule(scop, spec, steps=recipe_steps(machine))
        return s.provenance.optimize.timing, s.provenance.optimize.machine

    assert timing("optimize", Machine(threads=1, vector_bytes=32)) == (TimeTiling.TIME_STRIPS,
                                                                      Machine(threads=1, vector_bytes=32))
    assert timing("optimize", Machine(threads=2, vector_bytes=32))[0] is TimeTiling.NONE   # strips: one thread
    assert timing("optimize(1)", Machine(threads=2, vector_bytes=32))[0] is TimeTiling.TIME_STRIPS
    assert timing("optimize(1, 8, 0, 0, 16)", Machine(vector_bytes=32))[0] is TimeTiling.NONE


def test_only_the_world_layer_reads_the_world(monkeypatch):
    from polylab.bench.machine import cache_sizes, detect_machine

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    m = detect_machine()
    assert m.threads == 3 and (m.l1_bytes, m.l2_bytes, m.l3_bytes) == cache_sizes()
    assert detect_machine(5).threads == 5
    with pytest.raises(ScheduleError):
        Machine(threads=0)


def test_every_engine_memo_is_registered_and_clearing_them_changes_no_result():
    scop = scop_of("polybench/adi.c")
    first = fingerprint(parse_schedule(scop, "optimize(1)", steps=recipe_steps(Machine())))
    names = {m.name for m in registry()}
    assert {"analysis.ordered_pairs", "analysis.not_killed", "analysis.raw_pairs", "schedule.pair_deltas",
            "schedule.dependences", "legality.breaks", "legality.verdicts", "optimize.value_span",
            "optimize.footprint"} <= names
    assert any(m.entries for m in registry())
    clear_all()
    assert all(m.entries == 0 for m in registry())
    again = fingerprint(parse_schedule(scop_of("polybench/adi.c"), "optimize(1)", steps=recipe_steps(Machine())))
    assert again == first
