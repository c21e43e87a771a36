"""The preprocessor options of ``%%scop`` (``-DNAME=VALUE``, ``-I DIR``), as on the command line, and its
C-file input (a whole PolyBench-style file in a cell)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from IPython.utils.capture import capture_output  # noqa: E402

import polylab  # noqa: E402

CELL = "#ifndef N\n# define N 4\n#endif\ndouble a[N];\nfor (i = 1; i < N; i++)\n  a[i] = SCALE * a[i - 1];\n"


def run_cell(ip, line: str, cell: str):
    with capture_output() as cap:
        res = ip.run_cell(f"%%{line}\n{cell}")
    text = "\n".join(o.data.get("text/plain", "") for o in cap.outputs) + cap.stdout + cap.stderr
    return res, text


def test_defines_on_the_magic_line(ip):
    res, _ = run_cell(ip, "scop pre -DN=9 -D SCALE=0.5 --no-picture -q", CELL)
    assert res.error_in_exec is None
    scop = ip.user_ns["pre"]
    assert dict(scop.constants) == {"N": 9}
    assert "0.5 * a[i - 1]" in scop.statements[0].text
    assert scop.statements[0].domain.count_val().to_python() == 8


def test_include_dirs_on_the_magic_line(ip, tmp_path):
    (tmp_path / "sizes.h").write_text("#define N 3\n#define SCALE 2.0\n")
    cell = '#include "sizes.h"\n' + CELL
    res, text = run_cell(ip, "scop pre2 --no-picture -q", cell)
    assert res.error_in_exec is None and "pre2" not in ip.user_ns
    assert "sizes.h" in text and "-I" in text
    res, _ = run_cell(ip, f"scop pre2 -I {tmp_path} --no-picture -q", cell)
    assert dict(ip.user_ns["pre2"].constants) == {"N": 3}


def test_a_bad_define_is_a_message(ip):
    res, text = run_cell(ip, "scop pre3 -D3N=1 --no-picture -q", CELL)
    assert res.error_in_exec is None and "pre3" not in ip.user_ns
    assert "not a macro name" in text and "Traceback" not in text


def test_a_whole_polybench_file_in_a_cell(ip):
    text = polylab.example_path("2mm.c").read_text().replace('#include "polybench.h"', "")
    header = polylab.example_path("polybench/polybench.h")
    res, _ = run_cell(ip, f"scop mm -DMINI_DATASET -I {header.parent} --no-picture -q",
                      '#include "polybench.h"\n' + text)
    assert res.error_in_exec is None
    scop = ip.user_ns["mm"]
    assert len(scop.statements) == 4 and dict(scop.constants)["NI"] == 16
