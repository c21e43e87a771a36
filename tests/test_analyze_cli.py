"""``polylab analyze``: text and JSON forms, --param, refusals with exit status 2 and the caret on stderr."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import polylab
from polylab.cli import main


def run(capsys, *args):
    code = main(["analyze", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output(capsys):
    code, out, err = run(capsys, polylab.example_path("shift.c"))
    assert code == 0 and err == ""
    assert "S0" in out and "[N, M] -> { S0[i, j] : 0 < i < N and 0 <= j < M }" in out
    assert "F = [[1, 0]], c = [-1]" in out


def test_json_schema_shift(capsys):
    code, out, _ = run(capsys, polylab.example_path("shift.c"), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["rejected"] == []
    (scop,) = data["scops"]
    assert scop["parameters"] == ["N", "M"]
    (st,) = scop["statements"]
    assert st["name"] == "S0" and st["line"] == 7 and st["iterators"] == ["i", "j"]
    assert st["domain"] == "[N, M] -> { S0[i, j] : 0 < i < N and 0 <= j < M }"
    read, write = st["accesses"]
    assert read["kind"] == "read" and write["kind"] == "write"
    assert read["array"] == "Z"
    assert read["matrix"] == [[1, 0]] and read["offset"] == [-1]
    assert read["relation"].startswith("[N, M] -> { S0[i, j] -> Z[-1 + i]")
    assert (read["line"], read["column"]) == (7, 16)
    assert (write["line"], write["column"]) == (7, 5)


def test_json_non_affine_access_has_null_matrix(tmp_path, capsys):
    f = tmp_path / "mod.c"
    f.write_text("for (t = 0; t < T; t++)\n  for (i = 0; i < N; i++)\n    a[(t + 1) % 2][i] = a[t % 2][i] + c;\n")
    code, out, _ = run(capsys, f, "--json")
    acc = json.loads(out)["scops"][0]["statements"][0]["accesses"]
    assert code == 0 and all(a["matrix"] is None and a["offset"] is None for a in acc)
    assert "mod 2" in acc[0]["relation"] or "%" in acc[0]["relation"] or "floor" in acc[0]["relation"]


def test_json_parametric_offset(tmp_path, capsys):
    f = tmp_path / "p.c"
    f.write_text("for (i = 0; i < N; i++)\n  a[i + N - 1] = 0;\n")
    _, out, _ = run(capsys, f, "--json")
    acc = json.loads(out)["scops"][0]["statements"][0]["accesses"][0]
    assert acc["matrix"] == [[1]] and acc["offset"] == ["N - 1"]


def test_param_fixes_context(capsys):
    code, out, _ = run(capsys, polylab.example_path("sweep2d.c"), "--param", "N=5", "--json")
    scop = json.loads(out)["scops"][0]
    assert code == 0
    assert "N = 5" in scop["context"]
    st = scop["statements"][0]
    assert st["instances"] == 16
    assert "N = 5" in st["domain"]
    code, out, _ = run(capsys, polylab.example_path("sweep2d.c"), "--param", "N=5")
    assert "16 instances" in out


def test_sysy_json(capsys):
    code, out, _ = run(capsys, polylab.example_path("sl3.sy"), "--json")
    data = json.loads(out)
    assert code == 0 and data["language"] == "sysy"
    assert len(data["scops"]) == 1
    assert [s["line"] for s in data["scops"][0]["statements"]] == [18, 32]
    assert [r["line"] for r in data["rejected"]] == [10, 43, 44, 45]
    assert all({"line", "column", "reason"} <= set(r) for r in data["rejected"])
    assert data["scops"][0]["live_out"].startswith("[n] -> { x[")


@pytest.mark.parametrize("name, line", [("call.c", 4), ("datawhile.c", 4), ("indirect.c", 5),
                                        ("nonlinear.c", 5), ("syntax.c", 4)])
def test_refused_input_exits_2_with_caret(capsys, name, line):
    path = polylab.example_path(f"reject/{name}")
    code, out, err = run(capsys, path)
    assert code == 2 and out == ""
    assert f":{line}:" in err and "^" in err and "Traceback" not in err


def test_bad_param_and_unknown_param(capsys):
    code, _, err = run(capsys, polylab.example_path("shift.c"), "--param", "N")
    assert code == 2 and "--param" in err
    code, _, err = run(capsys, polylab.example_path("shift.c"), "--param", "Q=3")
    assert code == 2 and "no parameter named 'Q'" in err


def test_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, tmp_path / "none.c")
    assert code == 2 and "no such file" in err  # the same message as every other command


def test_rejections_in_text_form(capsys):
    code, out, _ = run(capsys, polylab.example_path("sl3.sy"))
    assert code == 0 and "left out of any static control part" in out and "getint" in out


def test_module_entry_point_subprocess():
    proc = subprocess.run([sys.executable, "-m", "polylab", "analyze", str(polylab.example_path("lu.c")),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["scops"][0]["statements"]) == 3
    proc = subprocess.run([sys.executable, "-m", "polylab", "analyze",
                           str(polylab.example_path("reject/nonlinear.c"))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "i * j" in proc.stderr and "Traceback" not in proc.stderr
