"""The experiment layer's contract with the schedule and storage layers.

* storage recipe steps are understood wherever schedules are read from text (``polylab run``/``codegen``);
* the variant is generated from the schedule's own (transformed) SCoP, the reference from the original;
* one legality gate: an illegal schedule is never compiled, whatever form it comes in;
* isl text gets exactly its parallel dimensions marked coincident (OpenMP pragmas on those loops only);
* ``force=True`` reaches the toolchain's ``compile``.
"""

from __future__ import annotations

import subprocess
import sys

import islpy as isl
import pytest

import polylab
from polylab import toolchain as tc
from polylab.cli import main
from polylab.errors import IllegalTransformationError
from polylab.experiment import measure, verify
import polylab.experiment.schedules as schedules
from polylab.experiment.schedules import schedule_from_spec

needs_cc = pytest.mark.skipif(tc.c_compiler() is None or not tc.supports_openmp(),
                              reason="needs a C compiler with OpenMP")

STORAGE = "fold_live_ins; remove_dead_writes; interleave; contract(x)"
ILLEGAL = ["{ S0[i, j] -> [-i, j] }", "reverse(0)", "interchange(0, 1); reverse(1)"]


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


# -- 1. storage steps are registered by the experiment layer ----------------------------------------------
def test_storage_steps_are_known_to_the_experiment_layer_in_a_fresh_process():
    code = ("import sys, polylab\n"
            "from polylab.experiment.schedules import schedule_from_spec\n"
            "assert 'polylab.storage' in sys.modules\n"
            "scop = polylab.parse_file(polylab.example_path('sl3.sy')).scop\n"
            f"s = schedule_from_spec(scop, {STORAGE!r})\n"
            "print(sorted(a.name for a in s.scop.arrays))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "xbuf" in out.stdout


def test_codegen_cli_accepts_storage_steps_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-m", "polylab", "codegen", "sl3.sy", "--schedule", STORAGE,
                          "--kernel-only"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # the code of the transformed SCoP: the contracted buffer, not the original 3-D x in the sweep
    assert "xbuf" in out.stdout


# -- 2. the variant is the schedule's own SCoP --------------------------------------------------------------
@needs_cc
def test_storage_recipe_verifies_against_the_original_program():
    scop = scop_of("sl3.sy")
    sched = schedule_from_spec(scop, STORAGE)
    assert sched.scop is not scop and any(a.name == "xbuf" for a in sched.scop.arrays)
    v = verify(scop, sched, "c", params={"n": 12})
    assert v.verified is True, str(v)
    assert "xbuf" in v.code.kernel
    report = measure(scop, sched, "c", params={"n": 14}, verify_params={"n": 12}, repeat=1, warmup=0)
    assert report.verified is True, str(report)
    assert "xbuf" in report.code.kernel and report.baseline is not None


@needs_cc
def test_run_cli_with_storage_steps(capsys):
    assert main(["run", "sl3.sy", "--schedule", STORAGE, "--param", "n=12", "--repeat", "1", "--json"]) == 0
    data = __import__("json").loads(capsys.readouterr().out)
    assert data["verified"] is True


# -- 3. one legality gate ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ILLEGAL)
def test_illegal_schedules_are_refused_with_the_dependence_and_a_pair(spec):
    scop = scop_of("sweep2d.c")
    with pytest.raises(IllegalTransformationError) as info:
        schedule_from_spec(scop, spec)
    err = info.value
    assert err.dependence.kind == "flow" and err.dependence.source == "S0" and err.dependence.array == "a"
    v = err.violation   # the first violation; the error's instances are its (tuples, as documented)
    assert v.source.startswith("S0[") and v.sink.startswith("S0[")
    assert (err.source_instance, err.sink_instance) == (v.source_instance, v.sink_instance)
    assert "flow dependence S0 -> S0 on a" in err.message
    assert v.source in err.message and v.sink in err.message


@pytest.mark.parametrize("spec", ILLEGAL)
def test_illegal_schedules_are_never_compiled(spec, monkeypatch):
    from polylab.schedule import parse_schedule

    scop = scop_of("sweep2d.c")
    unchecked = parse_schedule(scop, spec)  # the schedule layer reads it; the experiment layer refuses it
    compiled: list[str] = []
    monkeypatch.setattr(tc, "compile", lambda *a, **k: compiled.append("x"))
    for form in (unchecked, unchecked.tree, unchecked.union_map):
        with pytest.raises(IllegalTransformationError, match="flow dependence"):
            verify(scop, form, "c", params={"N": 6})
        with pytest.raises(IllegalTransformationError, match="flow dependence"):
            measure(scop, form, "openmp", params={"N": 6}, check=False)
    assert compiled == []


@pytest.mark.parametrize("command", ["run", "codegen"])
def test_cli_refuses_illegal_schedules_with_exit_2(command, capsys):
    extra = ["--param", "N=6"] if command == "run" else []
    assert main([command, "sweep2d.c", "--schedule", "{ S0[i, j] -> [-i, j] }", *extra]) == 2
    captured = capsys.readouterr()
    assert "illegal transformation" in captured.err and "flow dependence S0 -> S0 on a" in captured.err
    assert "S0[1, 1]" in captured.err and "#pragma" not in captured.out and "kernel" not in captured.out


def test_legal_schedules_pass_the_gate_once():
    scop = scop_of("sweep2d.c")
    sched = schedule_from_spec(scop, "wavefront")
    assert schedules.require_legal(sched) is sched


# -- coincidence of isl text ---------------------------------------------------------------------------------
def test_isl_text_marks_exactly_the_parallel_dimensions():
    scop = scop_of("sweep2d.c")
    wave = schedule_from_spec(scop, "{ S0[i, j] -> [i + j, i] }")
    assert wave.marked == frozenset({1})
    band = wave.tree.get_root().child(0)
    flags = [band.band_member_get_coincident(k) for k in range(band.band_n_member())]
    assert flags == [False, True] or (not flags[0] and band.child(0).band_member_get_coincident(0))
    assert schedule_from_spec(scop, "{ S0[i, j] -> [i, j] }").marked == frozenset()
    # a raw isl union map is read the same way
    assert schedules.as_schedule(scop, isl.UnionMap("[N] -> { S0[i, j] -> [i + j, i] }")).marked == frozenset({1})


def test_codegen_cli_puts_the_pragma_on_the_inner_wavefront_loop(capsys):
    assert main(["codegen", "sweep2d.c", "--schedule", "{ S0[i,j] -> [i+j, i] }", "--target", "openmp",
                 "--kernel-only"]) == 0
    out = capsys.readouterr().out
    kernel = out[out.index("void kernel"):]
    lines = [ln.strip() for ln in kernel.splitlines()]
    assert lines.count("#pragma omp parallel for") == 1
    k = lines.index("#pragma omp parallel for")
    assert lines[k - 1].startswith("for (int c0") and lines[k + 1].startswith("for (int c1")
    assert main(["codegen", "sweep2d.c", "--schedule", "{ S0[i,j] -> [i, j] }", "--target", "openmp",
                 "--kernel-only"]) == 0
    assert "#pragma omp" not in capsys.readouterr().out.split("void kernel", 1)[1]


# -- 4. force reaches the toolchain --------------------------------------------------------------------------
def _record_force(monkeypatch) -> list[bool]:
    seen: list[bool] = []
    real = tc.compile

    def recording(*args, **kwargs):
        seen.append(bool(kwargs.get("force", False)))
        return real(*args, **kwargs)

    monkeypatch.setattr(tc, "compile", recording)
    return seen


@needs_cc
@pytest.mark.parametrize("force", [True, False])
def test_measure_passes_force_to_every_compile(force, monkeypatch):
    seen = _record_force(monkeypatch)
    scop = scop_of("sweep2d.c")
    report = measure(scop, "{ S0[i, j] -> [i + j, i] }", "openmp", params={"N": 10}, repeat=1, warmup=0,
                     threads=2, force=force)
    assert report.verified is True
    assert len(seen) == 4 and all(f is force for f in seen)  # reference, variant (verify), variant, -O3
    seen.clear()
    assert verify(scop, None, "c", params={"N": 6}, force=force).verified is True
    assert seen == [force, force]


@needs_cc
def test_polyrun_force_reaches_compile(monkeypatch):
    from polylab.notebook import backend

    seen = _record_force(monkeypatch)
    scop = scop_of("sweep2d.c")
    backend.experiment(scop, schedule_from_spec(scop, "wavefront; parallel"), target="openmp",
                       params={"N": 10}, threads=2, repeat=1, force=True)
    assert seen and all(seen)


def test_a_schedule_of_another_program_is_refused():
    from polylab.errors import ScheduleError

    sweep, sl3 = scop_of("sweep2d.c"), scop_of("sl3.sy")
    with pytest.raises(ScheduleError, match="another program"):
        verify(sweep, schedule_from_spec(sl3, "wavefront"), "c", params={"N": 6})
