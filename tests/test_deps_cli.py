"""``polylab deps``: text, JSON, memory/value-based, parameters, bad input (exit 2, no traceback)."""

from __future__ import annotations

import json
import re

import pytest

import polylab
from polylab.cli import main


def run(capsys, *argv):
    code = main(["deps", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_sweep2d(capsys):
    code, out, err = run(capsys, str(polylab.example_path("sweep2d.c")), "--json")
    assert code == 0, err
    data = json.loads(out)
    deps = data["dependences"]
    assert {tuple(map(tuple, d["distances"]))[0] for d in deps} == {(1, 0), (0, 1)}
    for d in deps:
        assert set(d) >= {"kind", "source", "sink", "array", "relation", "distances", "direction",
                          "carried_level"}
        assert d["kind"] == "flow" and d["array"] == "a" and "S0[" in d["relation"]
    assert sorted(d["carried_level"] for d in deps) == [1, 2]
    assert [p["parallel"] for p in data["parallel"]["S0"]] == [False, False]
    assert data["parallel"]["S0"][0]["prevented_by"]


def test_json_value_based_sl3_by_name(capsys):
    code, out, _ = run(capsys, "sl3.sy", "--json", "--value-based")
    assert code == 0
    data = json.loads(out)
    assert data["value_based"] is True
    init_to_sweep = [d for d in data["dependences"] if d["source"] == "S0" and d["kind"] == "flow"]
    assert len(init_to_sweep) == 7 and all(d["carried_level"] is None for d in init_to_sweep)
    assert all(d["distances"] == [[]] and d["direction"] == [] for d in init_to_sweep)
    assert [p["parallel"] for p in data["parallel"]["S1"]] == [False, False, False]
    assert "memory_dependences" in data


def test_params_kinds_and_text(capsys):
    code, out, _ = run(capsys, "gemm.c", "--param", "NI=4", "--kinds", "flow,input")
    assert code == 0
    deps_part = out.split("parallel loops")[0]
    assert "flow (RAW)" in deps_part and "input (RAR)" in deps_part and "anti (WAR)" not in deps_part
    assert re.search(r"^\s*S1\s+2\s+k\s+no\s", out, re.M) and re.search(r"^\s*S1\s+3\s+j\s+yes\s", out, re.M)
    code, out, _ = run(capsys, "jacobi2d.c", "--param", "N=6", "--param", "T=2", "--json")
    data = json.loads(out)
    assert "N = 6" in data["context"] and "T = 2" in data["context"]


@pytest.mark.parametrize("argv, words", [
    (["no/such/file.c"], "no such file"),
    (["sweep2d.c", "--param", "N"], "bad --param"),
    (["sweep2d.c", "--param", "Q=3"], "no parameter named"),
    (["sweep2d.c", "--kinds", "true"], "unknown dependence kind"),
    ([str(polylab.example_path("reject/syntax.c"))], ""),
])
def test_bad_input_exit_2(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert "Traceback" not in err and err.strip()
    assert words in err


def test_directory_and_no_scop(capsys, tmp_path):
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2 and "directory" in err
    f = tmp_path / "empty.c"
    f.write_text("int x;\n")
    code, _, err = run(capsys, str(f))
    assert code == 2 and "Traceback" not in err


def test_subprocess_entry_point(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "polylab", "deps", "shift.c", "--json"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    waw = [d for d in data["dependences"] if d["kind"] == "output"]
    assert waw and waw[0]["distances"] is None and waw[0]["carried_level"] == 2
    assert [p["parallel"] for p in data["parallel"]["S0"]] == [True, False]
