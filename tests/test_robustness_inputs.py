"""Inputs that used to end in a Python traceback (issue 28, item 6): each is a located PolylabError with a
hint now. Non-UTF-8 bytes in every file of user text (a source, a header it includes, a schedule spec file),
parameter values beyond 64 bits, a schedule map that is a function only on a domain the parameters empty."""

from __future__ import annotations

import json

import pytest

import polylab
from polylab.cli import main
from polylab.errors import SourceEncodingError
from polylab.frontend import read_text_file
from polylab.model.islutil import count_points

LATIN1 = b"double a[N];\n/* caf\xe9 */\nfor (i = 0; i < N; i++)\n  a[i] = a[i] + 1.0;\n"


def test_a_source_that_is_not_utf8_is_a_located_error(tmp_path, capsys):
    path = tmp_path / "latin1.c"
    path.write_bytes(LATIN1)
    with pytest.raises(SourceEncodingError) as info:
        polylab.parse_file(path)
    err = info.value
    assert (err.location.line, err.location.column) == (2, 7) and "0xe9" in err.message and "UTF-8" in err.hint
    assert err.location.source_line == "/* caf\\xe9 */"
    for command in ("analyze", "deps", "codegen", "run"):
        assert main([command, str(path)]) == 2
        text = capsys.readouterr().err
        assert f"{path}:2:7: encoding error" in text and "Traceback" not in text and "hint:" in text
    # the doors that read the whole file again to rewrite it (optimize -o) or to build it (bench --own-main)
    for argv in (["optimize", str(path), "-o", str(tmp_path / "out.c")], ["bench", "--own-main", str(path)]):
        assert main(argv) == 2, argv
        text = capsys.readouterr().err
        assert f"{path}:2:7: encoding error" in text and "Traceback" not in text and "hint:" in text, argv


def test_a_header_and_a_spec_file_that_are_not_utf8_are_located_in_their_own_files(tmp_path, capsys):
    (tmp_path / "h.h").write_bytes(b"#define K 3 /* \xff */\n")
    main_file = tmp_path / "main.c"
    main_file.write_text('#include "h.h"\ndouble a[N];\nfor (i = 0; i < N; i++)\n  a[i] = a[i] + K;\n')
    assert main(["analyze", str(main_file)]) == 2
    assert f"{tmp_path / 'h.h'}:1:16: encoding error" in capsys.readouterr().err
    spec = tmp_path / "spec.txt"
    spec.write_bytes(b"wavefront;\ntile(\xe9)\n")
    assert main(["codegen", "sweep2d.c", "--schedule", str(spec)]) == 2
    assert f"{spec}:2:6: encoding error" in capsys.readouterr().err


def test_read_text_file_reads_utf8_and_refuses_a_missing_file(tmp_path):
    path = tmp_path / "ok.c"
    path.write_text("/* é */\n", encoding="utf-8")
    assert read_text_file(path) == "/* é */\n"
    with pytest.raises(polylab.errors.FrontendError, match="cannot read"):
        read_text_file(tmp_path / "missing.c")


@pytest.mark.parametrize("value", ["99999999999999999999", "-99999999999999999999", "2147483648"])
def test_parameters_beyond_64_bits_are_exact_or_refused(value, capsys):
    assert main(["analyze", "sweep2d.c", "--param", f"N={value}", "--json"]) == 0
    (stmt,) = json.loads(capsys.readouterr().out)["scops"][0]["statements"]
    n = int(value)
    assert stmt["instances"] == max(n - 1, 0) ** 2  # a box: counted as the product of its extents
    assert main(["deps", "sweep2d.c", "--param", f"N={value}"]) == 0
    capsys.readouterr()
    assert main(["codegen", "sweep2d.c", "--param", f"N={value}"]) == 2
    assert "does not fit the generated code's 32-bit int" in capsys.readouterr().err


def test_instance_counts_are_exact_when_small_and_left_out_when_too_many_to_enumerate():
    import islpy as isl
    tri = "[N] -> { S[i, j] : 0 <= j <= i < N and N = %d }"
    assert count_points(isl.Set(tri % 100)) == 5050
    assert count_points(isl.Set(tri % 10 ** 9)) is None  # 5 * 10^17 points: not enumerated
    assert count_points(isl.Set("[N] -> { S[i] : 0 <= i and N = 3 }")) is None  # unbounded
    assert count_points(isl.Set("[N] -> { S[i] : 0 <= i < N and N = 0 }")) == 0


@pytest.mark.parametrize("spec", ["{ S0[i, j] -> [i]; S0[i, j] -> [j] }", "[N] -> { S0[i, j] -> [t] : 0 <= t <= 1 }"])
def test_a_map_that_is_a_function_only_where_no_instance_runs(spec, capsys):
    # at N = 1 sweep2d's domain is empty: every map is a function on it; at N = 8 it is refused
    assert main(["schedule", "sweep2d.c", "--param", "N=1", "--schedule", spec]) == 0
    assert "legal" in capsys.readouterr().out
    # (codegen's --param specialises the code only, the schedule is read for every N: refused, located)
    assert main(["codegen", "sweep2d.c", "--param", "N=1", "--schedule", spec, "--kernel-only"]) in (0, 2)
    assert "Traceback" not in capsys.readouterr().err
    assert main(["schedule", "sweep2d.c", "--param", "N=8", "--schedule", spec]) == 2
    assert "several times" in capsys.readouterr().err


def test_an_extent_that_uses_a_loop_counter_is_refused_where_it_is_declared():
    # a fuzz finding: float x[MAXN][MAXN][k] with k a loop counter of the region reached isl's AST builder
    # in the harness ("unbounded optimum") instead of a located refusal
    with pytest.raises(polylab.errors.NotAffineError) as info:
        polylab.parse("double x[N][k];\nfor (k = 0; k < N; k++)\n  x[k][0] = 1.0;\n")
    assert (info.value.location.line, info.value.location.column) == (1, 13)
    assert "loop counter" in info.value.message


@pytest.mark.parametrize("line", ["for (i = 1; i < N; i++)#pragma endscop", "for (i = 1; i < N; i++) # pragma scop"])
def test_a_pragma_after_other_text_on_its_line_is_a_located_error(line, capsys):
    # fuzz case 59413 of seed 28 (and issue 15's campaign): an IndexError in Source.text
    source = f"double a[N];\n{line}\n  a[i] = a[i - 1];\n"
    with pytest.raises(polylab.errors.SourceSyntaxError, match="a #pragma must begin its line") as info:
        polylab.parse(source)
    assert (info.value.location.line, info.value.location.column) == (2, line.index("#") + 1)
    ok = polylab.parse('double a[N];\nfor (i = 1; i < N; i++)\n  a[i] = a[i - 1] + (double) sizeof("#pragma");\n')
    assert ok.scop is not None  # inside a string it is text
