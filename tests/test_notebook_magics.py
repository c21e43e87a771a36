"""The magics driven through an IPython shell on the corpus: stored values, displayed content, errors."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from IPython.core.error import UsageError  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import polylab  # noqa: E402
from polylab.model import Program, Scop  # noqa: E402

EXAMPLES = Path(str(polylab.example_path("sweep2d.c"))).parent
KERNELS = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".c", ".sy"))
REJECTS = sorted(p.name for p in (EXAMPLES / "reject").iterdir() if p.is_file())
SHARED_REJECTS = Path(__file__).resolve().parents[1] / ".." / "shared" / "kernels" / "reject"


def run_cell(ip, line: str, cell: str):
    """Run a cell magic through ``run_cell`` (as a notebook does); return (result, outputs, captured)."""
    with capture_output() as cap:
        res = ip.run_cell(f"%%{line}\n{cell}")
    return res, [o.data for o in cap.outputs], cap


def texts(outputs) -> str:
    return "\n".join(d.get("text/plain", "") for d in outputs)


@pytest.mark.parametrize("name", KERNELS)
def test_scop_on_every_kernel(ip, name):
    src = (EXAMPLES / name).read_text()
    res, outs, _ = run_cell(ip, "scop model --param " + ("n=6" if name.endswith(".sy") else "N=6"), src) \
        if name in ("sweep2d.c", "sl3.sy", "jacobi2d.c", "seidel2d.c") else run_cell(ip, "scop model", src)
    assert res.error_in_exec is None and res.error_before_exec is None
    model = ip.user_ns["model"]
    assert isinstance(model, (Scop, Program))
    scop = model if isinstance(model, Scop) else model.scop
    text = texts(outs)
    html = "".join(d.get("text/html", "") for d in outs)
    assert "SCoP stored as `model`" in text
    for s in scop.statements:
        assert s.name in text
    assert "access functions (F x + c)" in text and "F = [" in text
    assert "dependences (memory-based, exact)" in text
    assert ">= 0" in text  # domains as inequalities
    if any(1 <= len(s.iterators) <= 3 for s in scop.statements):
        assert "<img" in html and "data:image/png;base64" in html


def test_scop_summary_of_sweep2d_is_exact(ip):
    res, outs, _ = run_cell(ip, "scop sw --param N=5", (EXAMPLES / "sweep2d.c").read_text())
    text = texts(outs)
    assert "F = [[1, 0], [0, 1]], c = [-1, 0]" in text
    assert "distance (1, 0)" in text and "distance (0, 1)" in text
    assert "N = 5" in text
    assert isinstance(ip.user_ns["sw"], Scop)


@pytest.mark.parametrize("name", REJECTS)
def test_every_refusal_shows_line_column_and_caret(ip, name):
    src = (EXAMPLES / "reject" / name).read_text()
    ip.user_ns.pop("bad", None)
    res, outs, cap = run_cell(ip, "scop bad", src)
    assert res.error_in_exec is None  # shown, not raised
    assert "Traceback" not in cap.stdout + cap.stderr
    assert len(outs) == 1
    text = outs[0]["text/plain"]
    first = text.splitlines()[0]
    assert first.startswith("cell:")
    line, col = (int(x) for x in first.split(":")[1:3])
    src_line = src.splitlines()[line - 1]
    assert src_line in text  # the offending line of the cell, then the caret under the offending text
    caret_line = text.splitlines()[text.splitlines().index("    " + src_line) + 1]
    assert caret_line.index("^") - 4 == col - 1
    assert "polylab-error" in outs[0]["text/html"]
    assert "bad" not in ip.user_ns


def test_shared_rejects_match_the_shipped_copies():
    if not SHARED_REJECTS.exists():
        pytest.skip("../shared is absent")
    assert sorted(p.name for p in SHARED_REJECTS.iterdir() if p.is_file()) == REJECTS


def test_unknown_option_is_a_one_line_usage_error(ip, capsys):
    res = ip.run_cell("%%scop --bogus\nfor (i = 0; i < N; i++) a[i] = 0;")
    assert isinstance(res.error_in_exec, UsageError)
    err = capsys.readouterr().err
    assert "UsageError" in err and "--bogus" in err and "Traceback" not in err


def test_help_shows_usage(ip):
    doc = ip.find_cell_magic("scop").__doc__
    assert "--param" in doc and "%scop [-p NAME=VALUE]" in doc and "Parse the cell" in doc
    assert "--target" in ip.find_cell_magic("schedule").__doc__
    for opt in ("--threads", "--repeat", "--force", "-o"):
        assert opt in ip.find_line_magic("polyrun").__doc__


def test_bad_param_is_a_message(ip):
    res, outs, _ = run_cell(ip, "scop --param N=abc", "for (i = 0; i < N; i++) a[i] = 0;")
    assert res.error_in_exec is None
    assert "bad --param 'N=abc'" in texts(outs)
    res, outs, _ = run_cell(ip, "scop --param M=3", "double a[N];\nfor (i = 0; i < N; i++) a[i] = 0;")
    assert "no parameter named 'M'" in texts(outs)


def test_schedule_legal_wavefront(ip):
    run_cell(ip, "scop sw --param N=6", (EXAMPLES / "sweep2d.c").read_text())
    res, outs, _ = run_cell(ip, "schedule sw wave", "wavefront; parallel")
    text = texts(outs)
    assert res.error_in_exec is None
    assert "legal: every dependence" in text
    assert "transformed code" in text and "for (int c0" in text
    assert "parallel" in text
    assert hasattr(ip.user_ns["wave"], "tree")
    html = outs[0]["text/html"]
    assert "<img" in html and "polylab-ok" in html


def test_schedule_illegal_names_dependence_and_pair(ip):
    run_cell(ip, "scop sw --param N=6", (EXAMPLES / "sweep2d.c").read_text())
    res, outs, _ = run_cell(ip, "schedule sw bad", "{ S0[i, j] -> [i - j, i] }")
    text = texts(outs)
    assert "ILLEGAL" in text
    assert "flow" in text and "S0[1, 1] -> S0[1, 2]" in text
    assert "no code for an illegal schedule" in text
    assert "marked in red" in outs[0]["text/html"]


def test_schedule_error_has_caret_in_the_cell(ip):
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    res, outs, cap = run_cell(ip, "schedule sw", "wavefront\nbogus_step(3)")
    assert res.error_in_exec is None and "Traceback" not in cap.stdout
    text = texts(outs)
    assert "cell:" in text and "bogus_step" in text and "^" in text


def _caret_line(text: str, marker: str) -> tuple[str, str]:
    """The source line holding ``marker`` in an error text and the caret line under it."""
    lines = text.splitlines()
    k = next(k for k, ln in enumerate(lines) if marker in ln and "^" not in ln and "error" not in ln)
    return lines[k], lines[k + 1]


def test_schedule_step_error_caret_is_under_the_step(ip):
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    res, outs, _ = run_cell(ip, "schedule sw", "wavefront\n  skw(0, 1)\nparallel")
    text = texts(outs)
    assert "cell:2:3:" in text and "unknown schedule step 'skw'" in text
    src, caret = _caret_line(text, "skw(0, 1)")
    assert caret.index("^") == src.index("skw")


@pytest.mark.parametrize("cell, marker, where", [
    ("{ S0[i, j] -> [i + j, i];\n  S5[i] -> [i] }", "S5[i]", "cell:2:3:"),          # not a statement
    ("{ S0[i, j] -> [i + j, i];\n  S0[i] -> [i] }", "S0[i] -> [i]", "cell:2:3:"),   # wrong arity: 2nd piece
    ("  { S0[i, j] -> [i + j] : i > 2 }", "S0[i, j]", "cell:1:5:"),                 # not total
])
def test_isl_text_schedule_error_caret_is_on_the_piece(ip, cell, marker, where):
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    res, outs, cap = run_cell(ip, "schedule sw", cell)
    assert res.error_in_exec is None and "Traceback" not in cap.stdout
    text = texts(outs)
    assert where in text, text
    src, caret = _caret_line(text, marker)
    assert caret.index("^") == src.index(marker)


def test_isl_text_syntax_error_keeps_the_whole_text(ip):
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    _, outs, _ = run_cell(ip, "schedule sw", "{ S0[i, j] -> [i + j, i)] }")
    text = texts(outs)
    assert "cell:1:1:" in text and "cannot read the schedule as isl text" in text


def test_storage_steps_work_in_a_schedule_cell(ip):
    run_cell(ip, "scop sl3 -q", (EXAMPLES / "sl3.sy").read_text())
    res, outs, _ = run_cell(ip, "schedule sl3 folded --no-picture", "fold_live_ins; remove_dead_writes")
    assert res.error_in_exec is None
    folded = ip.user_ns["folded"]
    assert "1.0" in folded.scop.statements[1].text  # the three reads of the initial value are folded
    assert "storage step" not in texts(outs)


def test_schedule_without_scop_is_a_message(ip):
    res, outs, _ = run_cell(ip, "schedule nothing_here", "wavefront")
    assert "no SCoP named 'nothing_here'" in texts(outs)


def test_isl_stderr_appears_in_the_cell(ip, monkeypatch):
    import islpy as isl

    from polylab.notebook import backend

    real = backend.parse_schedule

    def noisy(scop, spec, steps=None):
        isl.Set("{ [i] : 0 <= i < 3 }").dump()  # isl prints on the C-level stderr
        return real(scop, spec, steps)

    monkeypatch.setattr(backend, "parse_schedule", noisy)
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    res, outs, _ = run_cell(ip, "schedule sw", "wavefront")
    text = texts(outs)
    assert "isl/stderr" in text and "i" in text.split("isl/stderr", 1)[1]


def test_polyrun_times_verifies_and_caches(ip):
    from polylab.toolchain import c_compiler

    if c_compiler() is None:
        pytest.skip("no C compiler")
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    run_cell(ip, "schedule sw wave", "wavefront")
    with capture_output() as cap:
        r = ip.run_line_magic("polyrun", "wave --param N=40 -r 2 -o")
    text = "\n".join(o.data["text/plain"] for o in cap.outputs)
    assert r is not None and r.verified is True
    assert "per run (median of 2 runs" in text and "original" in text
    assert "verified: output equals the original's" in text
    assert "<img" in cap.outputs[0].data["text/html"]  # the chart of the variants
    with capture_output():
        r2 = ip.run_line_magic("polyrun", "wave --param N=40 -r 2 -o")
    assert r2 is r  # cached
    with capture_output():
        r3 = ip.run_line_magic("polyrun", "wave --param N=40 -r 2 -o --force")
    assert r3 is not r


def test_unload_removes_magics(ip):
    shell = ip
    assert shell.find_cell_magic("scop") is not None
    shell.run_line_magic("unload_ext", "polylab")
    assert shell.find_cell_magic("scop") is None
    shell.run_line_magic("load_ext", "polylab")
    assert shell.find_cell_magic("scop") is not None


def test_openmp_code_and_several_scops(ip):
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    res, outs, _ = run_cell(ip, "schedule sw -t openmp", "wavefront; parallel")
    assert "#pragma omp parallel for" in texts(outs)
    src = """void f(int N, double a[N], double b[N]) {
#pragma scop
  for (int i = 0; i < N; i++)
    a[i] = 2 * a[i];
#pragma endscop
  b[0] = 1;
#pragma scop
  for (int i = 1; i < N; i++)
    b[i] = b[i - 1] + a[i];
#pragma endscop
}"""
    res, outs, _ = run_cell(ip, "scop two", src)
    assert isinstance(ip.user_ns["two"], Program) and len(outs) == 2
    assert "two.scops[1]" in texts(outs)


def test_internal_errors_are_reported_as_bugs_not_tracebacks(ip, monkeypatch):
    from polylab.notebook import backend

    def broken(scop, spec, steps=None):
        raise ValueError("something inside broke")

    monkeypatch.setattr(backend, "parse_schedule", broken)
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    res, outs, cap = run_cell(ip, "schedule sw", "wavefront")
    assert res.error_in_exec is None and "Traceback" not in cap.stdout + cap.stderr
    assert "internal error in polylab: ValueError: something inside broke" in texts(outs)
    assert "<details>" in outs[0]["text/html"]


def test_value_based_option(ip):
    res, outs, _ = run_cell(ip, "scop sl --value-based --no-picture --param n=6",
                            (EXAMPLES / "sl3.sy").read_text())
    text = texts(outs)
    assert "dependences (value-based, exact)" in text
    assert "data:image/png" not in outs[0]["text/html"]


def test_polyrun_refuses_an_illegal_schedule(ip):
    run_cell(ip, "scop sw", (EXAMPLES / "sweep2d.c").read_text())
    run_cell(ip, "schedule sw bad", "{ S0[i, j] -> [i - j, i] }")
    with capture_output() as cap:
        r = ip.run_line_magic("polyrun", "bad --param N=20 -o")
    assert r is None
    text = "\n".join(o.data["text/plain"] for o in cap.outputs)
    assert "illegal transformation" in text and "bad is illegal" in text
