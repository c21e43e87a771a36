"""One spec reader: ``polylab run`` / ``codegen`` (experiment.schedule_from_spec), ``polylab bench``
(bench.prepare_variant) and the magics read the same specs with the same legality rule.

Before the consolidation the bench had its own splitter and skipped the legality check of SCoPs that a
contraction rewrote, while ``run`` refused isl text written after storage steps (its reader split the isl
text on its own ``;``). The documented rule, pinned here: isl text may follow storage steps and replaces the
schedule of the SCoP they produced; the *final* schedule passes the one gate against the dependences of
its own SCoP, contracted or not.
"""

from __future__ import annotations

import pytest

import polylab
from polylab.bench import prepare_variant
from polylab.cli import main
from polylab.errors import IllegalTransformationError, ScheduleError
from polylab.experiment import schedule_from_spec
from polylab.notebook import backend
from polylab.schedule import parse_schedule, split_spec
from polylab.storage import recipe_steps

FOLD = "fold_live_ins; remove_dead_writes"
INTERLEAVED = "{ S0[i, j, k] -> [i, 0, j, k]; S1[i, j, k] -> [i, 1, j, k] }"
BACKWARDS = "{ S0[i, j, k] -> [i, 0, j, k]; S1[i, j, k] -> [-i, 1, j, k] }"


@pytest.fixture(scope="module")
def sl3():
    return polylab.parse_file(polylab.example_path("sl3.sy")).scop


def test_split_counts_braces_brackets_and_parentheses():
    spec = f"{FOLD}\n{INTERLEAVED}; contract(x, 2)  # a comment part is dropped\n# a comment"
    assert split_spec(spec) == ["fold_live_ins", "remove_dead_writes", INTERLEAVED,
                                "contract(x, 2)  # a comment part is dropped"]
    assert split_spec("[N] -> { S0[i] -> [i]; S1[i] -> [0] }; tile([4, 4])") == [
        "[N] -> { S0[i] -> [i]; S1[i] -> [0] }", "tile([4, 4])"]


def test_isl_text_after_storage_steps_reads_the_same_everywhere(sl3):
    spec = f"{FOLD}; {INTERLEAVED}; contract(x)"
    run = schedule_from_spec(sl3, spec)                 # polylab run / codegen
    bench = prepare_variant(sl3, spec).schedule         # polylab bench
    magic = backend.parse_schedule(sl3, spec)           # %%schedule
    assert run.text() == bench.text() == magic.text()
    assert run.steps == ("fold_live_ins", "remove_dead_writes", INTERLEAVED, "contract(x)")
    assert any(a.name == "xbuf" and a.extents[0] == "2" for a in run.scop.arrays)
    assert [name for name, _ in run.provenance.storage] == ["fold_live_ins", "remove_dead_writes", "contract(x)"]


def test_an_illegal_isl_text_after_storage_steps_is_refused_everywhere(sl3):
    spec = f"{FOLD}; {BACKWARDS}; parallel"
    for read in (lambda: schedule_from_spec(sl3, spec), lambda: prepare_variant(sl3, spec)):
        with pytest.raises(IllegalTransformationError, match="flow dependence S. -> S1"):
            read()
    assert not parse_schedule(sl3, spec, steps=recipe_steps()).scop is sl3   # reading alone does not judge


def test_the_final_schedule_of_a_contracted_scop_is_checked(sl3):
    """A schedule after contract(x) is checked against the contracted SCoP's own dependences (the buffer's
    reuse included): the bench no longer skips it."""
    ok = f"{FOLD}; {INTERLEAVED}; contract(x); parallel"
    assert schedule_from_spec(sl3, ok).scop.array("xbuf").extents[0] == "2"
    bad = f"{FOLD}; {INTERLEAVED}; contract(x); reverse(0)"
    for read in (lambda: schedule_from_spec(sl3, bad), lambda: prepare_variant(sl3, bad)):
        with pytest.raises(IllegalTransformationError):
            read()


def test_isl_text_after_contraction_names_the_copy_outs(sl3):
    spec = f"{FOLD}; {INTERLEAVED}; contract(x); {INTERLEAVED}"
    for read in (lambda: schedule_from_spec(sl3, spec), lambda: prepare_variant(sl3, spec)):
        with pytest.raises(ScheduleError, match="does not mention S2") as info:
            read()
        assert info.value.location is not None and info.value.location.column > 40


def test_codegen_command_reads_isl_text_after_storage_steps(capsys):
    rc = main(["codegen", "sl3.sy", "--schedule", f"{FOLD}; {INTERLEAVED}; contract(x)", "--kernel-only"])
    assert rc == 0
    assert "xbuf" in capsys.readouterr().out
