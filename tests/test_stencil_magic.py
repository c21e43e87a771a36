"""``%%stencil``: the stored program, the data-flow graph, the access patterns, errors with line and column.

The magic is driven on its own (a ``StencilMagics`` with a namespace), not through IPython's global test
shell, whose start-up would break the fixture of tests/test_notebook_magics.py when this module ran first.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from polylab.corpus import example_path
from polylab.notebook.stencil_magic import StencilMagics, StencilView
from polylab.stencil import Program


@pytest.fixture()
def magic():
    m = StencilMagics(shell=None)
    m.shell = SimpleNamespace(user_ns={})
    return m


def show(view: StencilView) -> tuple[str, str]:
    bundle = view._repr_mimebundle_()
    return bundle["text/plain"], bundle["text/html"]


def test_stencil_magic_stores_and_draws(magic, capsys):
    magic.stencil("", example_path("stencil/diffusion.mlir").read_text())
    program = magic.shell.user_ns["diffusion"]
    assert isinstance(program, Program) and "!stencil.temp<[" in program.text      # shapes inferred
    assert "stored as `diffusion`" in capsys.readouterr().out
    text, html = show(StencilView(program, "diffusion"))
    assert "4 applies" in text and "apply %lap on <[-1, -1, 0], [33, 33, 16]>" in text
    assert "<svg" in html and "apply %lap" in html and "in" in html
    assert html.count("<svg") >= 2 + 4          # shapes, the graph and one access pattern per apply operand
    assert "#f84" in html                       # accessed offsets are drawn


def test_stencil_magic_with_passes_a_name_and_a_domain(magic, capsys):
    magic.stencil("prog --passes stencil-inlining,cse --domain 16,16,8 -q",
                  example_path("stencil/diffusion.mlir").read_text())
    prog = magic.shell.user_ns["prog"]
    assert len(prog.applies) == 1 and tuple(prog.stores[0].bounds.ub) == (16, 16, 8)
    assert capsys.readouterr().out == ""        # -q: stored, not shown


def test_stencil_magic_error_shows_line_and_column(magic, monkeypatch):
    from polylab.notebook import stencil_magic
    from polylab.notebook.display import ErrorBox

    shown: list = []
    monkeypatch.setattr(stencil_magic, "display", shown.append)
    good = example_path("stencil/laplace3d.mlir").read_text()
    line = next(n for n, ln in enumerate(good.splitlines(), 1) if "arith.addf %w, %e" in ln)
    magic.stencil("", good.replace("arith.addf %w, %e", "arith.addf %w %e"))      # no exception: an error box
    assert len(shown) == 1 and isinstance(shown[0], ErrorBox)
    text = shown[0].text
    assert f"cell:{line}:" in text and "syntax error: expected ','" in text and "^" in text
    assert "laplace3d" not in magic.shell.user_ns
