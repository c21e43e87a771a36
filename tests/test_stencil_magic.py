"""``%%stencil`` through an IPython shell: the stored program, the data-flow graph, the access patterns,
errors with line and column."""

from __future__ import annotations

import pytest
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output

from polylab.corpus import example_path
from polylab.stencil import Program


@pytest.fixture(scope="module")
def ip():
    shell = get_ipython()
    shell.run_line_magic("load_ext", "polylab")
    return shell


def run_cell(ip, line: str, cell: str):
    with capture_output() as cap:
        res = ip.run_cell(f"%%{line}\n{cell}")
    return res, [o.data for o in cap.outputs]


def test_stencil_magic_stores_and_draws(ip):
    res, outs = run_cell(ip, "stencil", example_path("stencil/diffusion.mlir").read_text())
    assert res.error_in_exec is None and res.error_before_exec is None
    program = ip.user_ns["diffusion"]
    assert isinstance(program, Program) and all(a.box is not None for a in program.applies)
    text = "\n".join(d.get("text/plain", "") for d in outs)
    html = "".join(d.get("text/html", "") for d in outs)
    assert "stored as `diffusion`" in text and "4 applies" in text
    assert "apply %lap on [-1, -1, 0] : [33, 33, 16]" in text
    assert "<svg" in html and "apply %lap" in html and "%in" in html
    assert html.count("<svg") >= 1 + 4          # the graph and one access pattern per apply operand
    assert "#f84" in html                       # accessed offsets are drawn


def test_stencil_magic_with_passes_and_a_name(ip):
    res, outs = run_cell(ip, "stencil prog --passes inline,cleanup --domain 16,16,8",
                         example_path("stencil/diffusion.mlir").read_text())
    assert res.error_in_exec is None
    prog = ip.user_ns["prog"]
    assert len(prog.applies) == 1 and prog.stores[0].box.ub == (16, 16, 8)


def test_stencil_magic_error_shows_line_and_column(ip):
    bad = example_path("stencil/laplace3d.mlir").read_text().replace("addf %w, %e", "addf %w %e")
    res, outs = run_cell(ip, "stencil", bad)
    assert res.error_in_exec is None          # no traceback: an error box
    shown = "\n".join(d.get("text/plain", "") for d in outs)
    assert "expected ','" in shown and "16" in shown
