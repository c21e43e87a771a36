"""Time strips of one-dimensional stencils (:func:`polylab.schedule.timetile.time_strips`) and the vector
width of the build the optimizer chooses for (the :class:`~polylab.schedule.optimize.Machine`'s, read from the
build flags by :mod:`polylab.bench.machine`).

Every strip schedule here is checked against brute force: the reference interpreter runs the original
program in its own order and the transformed one under the strip schedule, and every live-out element
must agree bit for bit. The strips are made 4 points wide so that small parameter values span several."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import polylab
from polylab.reference.interpret import same_live_out
from polylab.schedule import check, parse_schedule
from polylab.bench.machine import vector_bytes_of_flags
from polylab.errors import ScheduleError
from polylab.schedule.optimize import DEFAULT_VECTOR_BYTES, Machine, TimeTiling, timed
from polylab.schedule.core import original
from polylab.schedule.timetile import strip_rows, time_strips
from polylab.storage import recipe_steps

JACOBI_1D = """double A[N];
double B[N];
for (t = 0; t < T; t++) {
  for (i = 1; i < N - 1; i++)
    B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
  for (i = 1; i < N - 1; i++)
    A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
}
"""
SMALL = {"N": 23, "T": 7}


def optimized(scop, spec: str, machine: Machine = Machine()):
    return parse_schedule(scop, spec, steps=recipe_steps(machine))


def timing(s) -> TimeTiling:
    return s.provenance.optimize.timing


@pytest.fixture
def narrow(monkeypatch):
    """Strips 4 points wide, whatever the cache model says."""
    monkeypatch.setattr(timed, "strip_width", lambda scop, machine: 4)


def test_jacobi_1d_gets_strips_with_skew_2_and_its_second_statement_shifted(narrow):
    scop = polylab.parse(JACOBI_1D).scop
    s = optimized(scop, "optimize(1, 8, 0, 0, 32)")
    assert timing(s) is TimeTiling.TIME_STRIPS, s.notes
    # 4 points wide along rows + 2t, S1 shifted by one point
    assert s.expressions("S0")[0] == "(floor((2t + i)/4))" and s.expressions("S1")[0] == "(floor((1 + 2t + i)/4))"
    assert check(s).legal
    # the strips run one after the other; each step's loops are vector loops, not OpenMP loops
    assert 0 not in s.parallel_dims and not s.marked
    assert set(s.parallel_dims) >= {3, 4}
    assert same_live_out(scop, s.scop, SMALL, schedule=s.union_map) == []
    # the step that reproduces the choice names the vector width
    assert s.steps == ("optimize(1, 8, 0, 0, 32)",)


def test_no_strips_for_the_default_build_or_with_threads(narrow):
    scop = polylab.parse(JACOBI_1D).scop
    assert timing(optimized(scop, "optimize(1)")) is TimeTiling.NONE
    two = optimized(scop, "optimize(2, 8, 0, 0, 32)")
    assert timing(two) is TimeTiling.NONE and two.marked   # the step-by-step parallel loops stay
    # a time loop of a few steps: nothing to keep in cache
    assert timing(optimized(scop.with_parameters({"T": 3}), "optimize(1, 8, 0, 0, 32)")) is TimeTiling.NONE


def test_the_machine_s_vector_width_is_what_optimize_chooses_for(narrow):
    scop = polylab.parse(JACOBI_1D).scop
    s = optimized(scop, "optimize(1)", Machine(vector_bytes=32))
    assert timing(s) is TimeTiling.TIME_STRIPS and s.steps == ("optimize(1, 8, 0, 0, 32)",)
    # the step's own width wins over the machine's
    assert timing(optimized(scop, "optimize(1, 8, 0, 0, 16)", Machine(vector_bytes=32))) is TimeTiling.NONE
    with pytest.raises(ScheduleError):
        Machine(vector_bytes=0)


def test_vector_width_of_build_flags(monkeypatch):
    monkeypatch.setattr("polylab.bench.machine.native_vector_bytes", lambda: 32)
    assert vector_bytes_of_flags(()) == DEFAULT_VECTOR_BYTES == 16
    assert vector_bytes_of_flags(("-O3",)) == 16
    assert vector_bytes_of_flags(("-march=native", "-ffp-contract=off")) == 32
    assert vector_bytes_of_flags(("-mavx2",)) == 32
    monkeypatch.setattr("polylab.bench.machine.native_vector_bytes", lambda: 16)
    assert vector_bytes_of_flags(("-march=native",)) == 16


def test_a_negative_vector_width_is_an_error_with_a_hint():
    scop = polylab.parse(JACOBI_1D).scop
    with pytest.raises(polylab.PolylabError) as err:
        optimized(scop, "optimize(1, 8, 0, 0, -32)")
    assert "vector width" in err.value.message


def test_a_negative_vector_width_on_the_command_line_is_a_located_error_not_a_traceback(capsys):
    from polylab.cli import main

    assert main(["codegen", "jacobi2d.c", "--schedule", "optimize(1, 8, 0, 0, -32)", "--kernel-only"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "jacobi2d.c:1:1" in err
    assert "vector width of optimize" in err and "hint:" in err


def test_strips_need_one_loop_per_statement_inside_a_time_loop():
    # two-dimensional stencils and a statement of the time loop alone: no strips
    assert strip_rows(original(polylab.parse_file(polylab.example_path("jacobi2d.c")).scop)) is None
    src = "double A[N];\ndouble s[T];\nfor (t = 0; t < T; t++) {\n  s[t] = A[0];\n" \
          "  for (i = 1; i < N - 1; i++)\n    A[i] = 0.5 * (A[i - 1] + A[i + 1]);\n}\n"
    assert strip_rows(original(polylab.parse(src).scop)) is None


@st.composite
def one_d_stencils(draw):
    """A time loop around one to three 1-D stencil loops over two arrays, each statement writing ``A`` or
    ``B`` from random neighbours of either (in place, Jacobi-like or Gauss-Seidel-like)."""
    n = draw(st.integers(1, 3))
    body = []
    for _ in range(n):
        dst = draw(st.sampled_from(["A", "B"]))
        src = draw(st.sampled_from(["A", "B"]))
        offs = draw(st.lists(st.integers(-2, 2), min_size=1, max_size=3, unique=True))
        terms = " + ".join(f"0.{k + 1} * {src}[i + {d}]" for k, d in enumerate(offs))
        body.append(f"  for (i = 2; i < N - 2; i++)\n    {dst}[i] = {terms};\n")
    return "double A[N];\ndouble B[N];\nfor (t = 0; t < T; t++) {\n" + "".join(body) + "}\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_d_stencils())
def test_random_1d_stencils_in_strips_compute_what_the_original_does(src):
    scop = polylab.parse(src).scop
    strips = time_strips(original(scop), 4)
    if strips is None:   # no skew and shifts tried are legal: nothing to check but that it said so
        return
    s = strips[0]
    assert check(s).legal, (src, s.text())
    assert same_live_out(scop, scop, {"N": 21, "T": 6}, schedule=s.union_map) == [], (src, s.text())


def test_optimize_native_on_the_command_line_names_the_width(monkeypatch, capsys, tmp_path):
    from polylab.cli import main

    monkeypatch.setattr("polylab.bench.machine.native_vector_bytes", lambda: 32)
    path = tmp_path / "jacobi1d.c"
    path.write_text(JACOBI_1D)
    assert main(["optimize", str(path), "--threads", "1", "--native"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("spec: optimize(1, 8, 0, 0, 32)")
    assert main(["optimize", str(path), "--threads", "1", "--native", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["time_tiling"] == TimeTiling.TIME_STRIPS.value and data["machine"]["vector_bytes"] == 32
    assert main(["optimize", str(path), "--threads", "1", "--native", "--tune"]) == 2
    err = capsys.readouterr().err
    assert "--tune" in err and "Traceback" not in err


def test_bench_builds_each_variant_for_the_vectors_of_its_timed_build(monkeypatch, tmp_path):
    """``polylab bench --native`` (a case with NATIVE_TIMING_FLAGS) chooses its variants for this
    machine's vectors; a plain case for the default build's."""
    from polylab.bench import runner
    from polylab.bench.sweep import NATIVE_TIMING_FLAGS, Case, load_kernel
    monkeypatch.setattr("polylab.bench.machine.native_vector_bytes", lambda: 32)
    seen = []

    def spy(scop, spec, machine):
        seen.append(machine.vector_bytes)
        raise ScheduleError("stop here: nothing to time in this test")

    monkeypatch.setattr(runner, "prepare_variant", spy)
    path = tmp_path / "jacobi1d.c"
    path.write_text(JACOBI_1D)
    kernel = load_kernel(str(path))
    for flags in (NATIVE_TIMING_FLAGS, ()):
        case = Case(kernel.name, "optimize(1)", "optimize(1)", 1, None, SMALL, SMALL, "openmp", flags)
        result = runner.run_case(kernel, case, None, repeat=1, warmup=0, timeout=10)
        assert result.status == runner.ERROR and "stop here" in result.reason
    assert seen == [32, DEFAULT_VECTOR_BYTES]
