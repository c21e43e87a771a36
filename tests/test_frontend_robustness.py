"""Bad input never produces a Python traceback: mutated corpus texts either parse or raise a PolylabError
with a location; parsed models display themselves in text, HTML and LaTeX."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polylab
from polylab.errors import PolylabError
from polylab.frontend import parse

TEXTS = [polylab.example_path(n).read_text() for n in polylab.examples()]
PIECES = list("()[]{};,+-*/%<>=!&|?:.0123456789 ijkNnax\n\"'#") + [
    "for", "while", "if", "else", "int ", "double ", "return", "break", "(int)", "getint()", "i++", "/*", "*/",
    "//", "}", "{", "int f();", "->", "*p", "&x"]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(0, len(text)))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            text = text[:k] + draw(st.sampled_from(PIECES)) + text[k:]
        elif kind == 1:
            text = text[:k] + text[k + draw(st.integers(1, 6)):]
        else:
            j = draw(st.integers(0, len(text)))
            text = text[:k] + text[j:j + 12] + text[k:]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.sampled_from([None, "sysy"]))
def test_mutated_inputs_never_crash(text, language):
    try:
        prog = parse(text, language=language)
    except PolylabError as err:
        assert err.render()
        if err.location is not None:
            assert err.location.line >= 1 and err.location.column >= 1
        return
    str(prog)
    for r in prog.rejected:
        assert r.location.line >= 1


@pytest.mark.parametrize("name", polylab.examples())
def test_models_display(name):
    prog = polylab.parse_file(polylab.example_path(name))
    assert "S0" in str(prog)
    assert "<" in prog._repr_html_()
    for scop in prog.scops:
        assert scop._repr_latex_()
        for s in scop.statements:
            assert s._repr_html_() and s._repr_latex_()
            for a in s.accesses:
                assert a._repr_latex_().startswith("$")
