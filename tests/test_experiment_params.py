"""Parameter values are validated before anything is built (issue 15, section 1): integers only, the range
of the generated code's ``int``, the context, array extents and memory, iterator and schedule values, and
every access proved inside its declared array with isl."""

from __future__ import annotations

import islpy as isl
import pytest

import polylab
from polylab import toolchain as tc
from polylab.cli import main
from polylab.codegen import original_program
from polylab.errors import ModelError, RunFailure
from polylab.experiment import check_params, measure, parameter_value, validate_params, verify
from polylab.experiment.params import INT_MAX
from polylab.schedule import parse_schedule

needs_cc = pytest.mark.skipif(tc.c_compiler() is None, reason="needs a C compiler")


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


def test_parameter_values_are_integers_only():
    assert parameter_value("N", 8) == 8 and parameter_value("N", " -3 ") == -3 and parameter_value("N", "+7") == 7
    assert parameter_value("N", __import__("numpy").int64(5)) == 5
    for bad in (8.5, 8.0, True, "10**20", "1e3", "0x10", "", "8 9", None):
        with pytest.raises(ModelError, match="is not an integer"):
            parameter_value("N", bad)


@pytest.mark.parametrize("value", [2 ** 62, 2 ** 32 + 2, 2 ** 31, 10 ** 20, -(2 ** 31) - 1])
def test_values_beyond_the_generated_int_are_refused(value):
    with pytest.raises(ModelError, match="does not fit the generated code's 32-bit int"):
        check_params(scop_of("sweep2d.c"), {"N": value})


def test_a_negative_extent_is_refused_with_the_array():
    with pytest.raises(ModelError, match=r"array a \(double a\[N\]\[N\]\) would have extent -5 in dimension 0"):
        check_params(scop_of("sweep2d.c"), {"N": -5})


def test_arrays_that_do_not_fit_in_memory_are_refused_with_their_byte_sizes():
    with pytest.raises(ModelError) as info:
        check_params(scop_of("sweep2d.c"), {"N": 30000})
    assert "7,200,000,000 bytes" in info.value.message and "double a[30000][30000]" in info.value.message
    assert "memory limit" in info.value.message
    # the sizes are exact integers
    check = validate_params(scop_of("gemm.c"), {"NI": 9, "NJ": 10, "NK": 11})
    assert {s.name: s.bytes for s in check.sizes} == {"C": 9 * 10 * 8, "A": 9 * 11 * 8, "B": 11 * 10 * 8}


def test_extents_beyond_int_are_refused():
    scop = polylab.parse("double a[4 * N]; for (i = 0; i < 4; i++) a[i] = 1.0;").scop
    with pytest.raises(ModelError, match="would have extent 4294967296"):
        validate_params(scop, {"N": 2 ** 30}, memory_limit_mb=None)


def test_iterator_and_schedule_values_beyond_int_are_refused():
    scop = polylab.parse("double s[4]; for (i = 0; i < 2 * N; i++) s[0] = 1.0;").scop
    with pytest.raises(ModelError, match="the iterator i of S0 reaches 2147483649"):
        check_params(scop, {"N": 2 ** 30 + 1})
    scop = polylab.parse("double s[4]; for (i = 0; i < N; i++) for (j = 0; j < N; j++) s[1] = 2.0;").scop
    times = isl.UnionMap("[N] -> { S0[i, j] -> [i, i + j] }").intersect_domain(scop.domain)
    check_params(scop, {"N": 2 ** 30 + 2})  # the source order's values fit
    with pytest.raises(ModelError, match="time dimension 1 of the schedule of S0 reaches 2147483650"):
        validate_params(scop, {"N": 2 ** 30 + 2}, schedule=times)


def test_unknown_missing_and_out_of_context_values_are_refused():
    scop = scop_of("sweep2d.c")
    with pytest.raises(ModelError, match="no value"):
        check_params(scop, {})
    with pytest.raises(ModelError, match="no parameter named 'T'"):
        check_params(scop, {"N": 4, "T": 2})
    ctx = polylab.parse("double a[N]; for (i = 0; i < N; i++) a[i] = 1.0;").scop
    narrowed = ctx.with_parameters({"N": 4})
    with pytest.raises(ModelError, match="outside the SCoP's context"):
        check_params(narrowed, {"N": 5})


def test_an_access_past_its_array_is_refused_naming_access_element_and_instance():
    scop = polylab.parse("double a[N];\nfor (i = 0; i < N; i++)\n  a[i + 1] = a[i] + 1.0;\n").scop
    with pytest.raises(ModelError) as info:
        check_params(scop, {"N": 8})
    err = info.value
    assert err.message.startswith("a[i + 1] (write) reaches a[8] at i = 7 when N = 8")
    assert "index 8 is outside 0..7 in dimension 0 of double a[N]" in err.message
    assert (err.location.line, err.location.column) == (3, 3)
    assert "^~~~~~~~" in err.render()


def test_sl3_refuses_n_larger_than_its_declared_array():
    with pytest.raises(ModelError) as info:
        check_params(scop_of("sl3.sy"), {"n": 512})
    assert "reaches x[0][0][400]" in info.value.message and "float x[400][400][400]" in info.value.message
    check_params(scop_of("sl3.sy"), {"n": 400})  # the largest n that fits


def test_context_allowing_out_of_bounds_values_is_a_warning():
    scop = polylab.parse("double a[M];\nfor (i = 0; i < N; i++)\n  a[i] = a[i] + 1.0;\n").scop
    check = validate_params(scop, {"N": 5, "M": 10})
    assert len(check.warnings) == 1
    assert "a[i] (line 3) can leave double a[M]" in check.warnings[0]
    assert "the values given here are safe" in check.warnings[0]
    with pytest.raises(ModelError, match=r"reaches a\[10\] at i = 10 when N = 11, M = 10"):
        check_params(scop, {"N": 11, "M": 10})
    assert not validate_params(scop_of("jacobi2d.c"), {"T": 3, "N": 12}).warnings


def test_inferred_arrays_are_exempt_above_but_not_below_zero():
    scop = polylab.parse("for (i = 0; i < N; i++)\n  b[i] = b[i] + 1.0;\n").scop
    assert not scop.array("b").declared
    assert check_params(scop, {"N": 9}) == {"N": 9}
    below = polylab.parse("for (i = 0; i < N; i++)\n  b[i - 1] = 1.0;\n").scop
    with pytest.raises(ModelError, match=r"reaches b\[-1\] at i = 0 when N = 3: index -1 is below 0"):
        check_params(below, {"N": 3})


@needs_cc
def test_nothing_is_compiled_when_the_parameters_are_refused(monkeypatch):
    compiled: list[str] = []
    monkeypatch.setattr(tc, "compile", lambda *a, **k: compiled.append("x"))
    scop = scop_of("sweep2d.c")
    for bad in (2 ** 31, -5, 30000):
        with pytest.raises(ModelError):
            verify(scop, None, "c", params={"N": bad})
        with pytest.raises(ModelError):
            measure(scop, None, "c", params={"N": bad}, verify_params={"N": 6})
    assert compiled == []


@pytest.mark.parametrize("value,words", [
    ("4611686018427387904", "does not fit"), ("4294967298", "does not fit"), ("2147483648", "does not fit"),
    ("-5", "would have extent -5"), ("100000000000000000000", "does not fit"), ("10**20", "bad --param"),
    ("1.5", "bad --param")])
def test_cli_refuses_the_issues_values_with_exit_2(value, words, capsys):
    assert main(["run", "sweep2d.c", "--param", f"N={value}"]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_codegen_cli_checks_its_param_values(capsys):
    assert main(["codegen", "sweep2d.c", "--param", "N=-5"]) == 2
    assert "would have extent -5" in capsys.readouterr().err
    assert main(["codegen", "sl3.sy", "--param", "n=512"]) == 2
    assert "reaches x[0][0][400]" in capsys.readouterr().err


@needs_cc
@pytest.mark.parametrize("args,words", [
    (["abc"], "N = 'abc' is not an integer"), (["2147483648"], "N = '2147483648' is not an integer"),
    (["8x"], "N = '8x' is not an integer"), ([""], "N = '' is not an integer"),
    (["-5"], "array a would have extent -5"), (["8", "0"], "REPEAT = '0' is not an integer"),
    (["8", "1", "2"], "usage")])
def test_the_harness_checks_its_own_arguments(args, words):
    binary = tc.compile(original_program(scop_of("sweep2d.c")))
    with pytest.raises(RunFailure) as info:
        tc.run(binary, args)
    assert info.value.result is not None and info.value.result.returncode == tc.EXIT_USAGE
    assert words in info.value.result.stderr
    assert "refused its arguments" in info.value.message


@needs_cc
def test_the_harness_computes_sizes_in_64_bits():
    binary = tc.compile(original_program(polylab.parse("double A[2*N+6]; for (i = 0; i < N; i++) A[i] = 1.0;").scop))
    with pytest.raises(RunFailure) as info:
        tc.run(binary, [str(INT_MAX // 2)])  # 2 N + 6 > INT_MAX: refused before any allocation
    assert "array A would have extent 2147483652" in info.value.result.stderr
    # 2^31 - 2 elements (16 GiB): sized without overflow, then refused by the run's memory limit
    done = tc.run(binary, ["1073741820"], check=False, memory_limit_mb=1024)
    assert done.returncode == tc.EXIT_OUT_OF_MEMORY and f"{(2 * 1073741820 + 6) * 8} bytes" in done.stderr


def test_recipes_keep_time_values_checked():
    scop = scop_of("sweep2d.c")
    sched = parse_schedule(scop, "wavefront")
    assert validate_params(scop, {"N": 12}, schedule=sched.union_map).values == {"N": 12}
