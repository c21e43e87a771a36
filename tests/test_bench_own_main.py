"""``polylab bench FILE.c --own-main`` (issue 31, item 2): the user's own programs, built with one command,
verified by what they print (the toolchain's differential run over printed output) and timed by their own
timer; and the harness mode's table says its baseline has restrict."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import polylab
from polylab import toolchain as tc
from polylab.bench import ownmain
from polylab.bench.report import RESTRICT_NOTE
from polylab.cli import main
from polylab.errors import ToolchainError

needs_omp = pytest.mark.skipif(tc.c_compiler() is None or not tc.openmp_status(),
                               reason="needs a C compiler with OpenMP")
POLYBENCH = Path(polylab.__file__).parent / "examples" / "polybench"

DUMP = """==BEGIN DUMP_ARRAYS==
begin dump: s
0.00 1.25 2.50
end   dump: s
begin dump: q
-3.00 nan
end   dump: q
==END   DUMP_ARRAYS==
"""


def test_printed_dump_and_timer():
    out = tc.printed_outputs("0.012345\n", DUMP)
    assert set(out.arrays) == {"s", "q"}
    assert np.array_equal(out.arrays["s"], [0.0, 1.25, 2.5]) and np.isnan(out.arrays["q"][1])
    assert tc.printed_time("0.012345\n") == pytest.approx(0.012345)
    assert tc.printed_time("took 3 s\n") is None and tc.printed_time("1\n2\n") is None
    text = tc.printed_outputs("result: 42\n", "")
    assert list(text.arrays) == [tc.printed.PRINTED] and bytes(text.arrays["printed"]) == b"result: 42"
    with pytest.raises(ToolchainError, match="more than the runner keeps"):
        tc.printed_outputs("", DUMP, truncated=True)
    with pytest.raises(ToolchainError, match="not a number"):
        tc.printed_outputs("", "begin dump: s\n1.0 x\nend   dump: s\n")


def test_printed_outputs_are_judged_by_the_differential_run():
    ref = tc.printed_outputs("0.5\n", DUMP)
    assert tc.judge(ref, tc.printed_outputs("0.7\n", DUMP)).verified is True   # the timer is not compared
    other = tc.judge(ref, tc.printed_outputs("", DUMP.replace("1.25", "1.26")))
    assert other.verified is False and "s[1]" in other.first_difference
    nothing = tc.judge(tc.printed_outputs("", ""), tc.printed_outputs("", ""))
    assert nothing.verified is None and nothing.reason


def test_the_build_command():
    cmd = ownmain.BuildCommand("gcc -O3 util.c {src} -o {exe} -lm", ("-DMINI_DATASET", "-Iinc"))
    argv = cmd.argv(Path("/t/k.c"), Path("/t/k"), ("-DPOLYBENCH_DUMP_ARRAYS",), Path("/src/bicg"))
    assert argv == ["gcc", "-DMINI_DATASET", "-Iinc", "-DPOLYBENCH_DUMP_ARRAYS", "-I", "/src/bicg", "-fopenmp",
                    "-O3", "util.c", "/t/k.c", "-o", "/t/k", "-lm"]
    bare = ownmain.BuildCommand("cc -O2 -fopenmp").argv(Path("a.c"), Path("a"))
    assert bare == ["cc", "-O2", "-fopenmp", "a.c", "-o", "a"]
    assert ownmain.verify_flags_for('#include "polybench.h"\n') == ("-DPOLYBENCH_DUMP_ARRAYS", "-ffp-contract=off")
    assert ownmain.verify_flags_for("int main(void) {}") == ("-ffp-contract=off",)


@needs_omp
def test_own_main_measures_the_users_programs(tmp_path, capsys):
    report = tmp_path / "own.json"
    code = main(["bench", str(POLYBENCH / "bicg.c"), "--own-main", "--threads", "2", "-DMINI_DATASET",
                 "--build", "cc -O2 {src} -o {exe} -lm", "--repeat", "2", "--rounds", "2", "--warmup", "0",
                 "--no-progress", "--json", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(report.read_text())
    rows = {(r["program"].split("(")[0], r["threads"]): r for r in data["results"]}
    assert rows[("original", 1)]["status"] == "verified"
    mine = rows[("polylab optimize", 2)]
    assert mine["status"] == "verified" and len(mine["runs"]) == 2 and mine["timer"] == "wall"
    assert "chosen for" in mine["note"]
    assert data["mode"] == "own-main" and data["settings"]["build"].startswith("cc -DMINI_DATASET")
    assert "vs original" in out and "geomean, polylab optimize x2:" in out
    policy = data["settings"]["omp_wait_policy"]
    assert f"OpenMP programs run with OMP_WAIT_POLICY={policy}" in out    # the reader knows how teams wait


@needs_omp
def test_a_program_that_prints_something_else_is_not_timed(tmp_path):
    text = (POLYBENCH / "bicg.c").read_text()
    wrong = text.replace("q[i] = q[i] + A[i][j] * p[j];", "q[i] = q[i] + A[i][j] * p[j] * 1.5;")
    assert wrong != text
    kernel = ownmain._Kernel("bicg.c", POLYBENCH, [])
    cmd = ownmain.BuildCommand("cc -O2 {src} -o {exe} -lm", ("-DMINI_DATASET",))
    flags = ownmain.verify_flags_for(text)
    ref = ownmain._verify(kernel, ownmain.Contender("original", "original", text, (1,)), cmd, flags, tmp_path, 0, 60)
    bad = ownmain._verify(kernel, ownmain.Contender("wrong", "polylab", wrong, (2,)), cmd, flags, tmp_path, 1, 60)
    assert ref[0].status == "verified" and bad[0].status == "unverified" and bad[0].binary is None
    assert bad[0].first_difference.startswith("q[")


def test_the_harness_table_says_its_baseline_has_restrict():
    from polylab.bench import BenchReport

    assert "restrict" in RESTRICT_NOTE and RESTRICT_NOTE in BenchReport((), {}).table()
