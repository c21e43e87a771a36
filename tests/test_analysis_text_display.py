"""Plain-text displays (IPython text/plain, repr) of the analysis and storage results are readable tables,
never the raw dataclass repr."""

import pytest

import polylab
from polylab.analysis import dataflow, parallelism, textbook_all

pretty = pytest.importorskip("IPython.lib.pretty").pretty


def _text_plain(obj) -> str:
    from IPython.core.formatters import DisplayFormatter

    data, _meta = DisplayFormatter().format(obj)
    return data["text/plain"]


@pytest.fixture(scope="module")
def sweep():
    return polylab.parse_file(polylab.example_path("sweep2d.c")).scop


def _no_dataclass_repr(text: str, cls: str) -> None:
    assert f"{cls}(" not in text and "Scop(name=" not in text, text[:300]


def test_parallelism_is_a_table(sweep):
    par = parallelism(sweep)
    for text in (_text_plain(par), pretty(par), repr(par), pretty([par])):
        _no_dataclass_repr(text, "Parallelism")
        assert "statement  level  loop  parallel" in text
    lines = str(par).splitlines()
    assert lines[3].split()[:4] == ["S0", "1", "i", "no"]
    assert pretty(par.loops[0]).startswith("S0 level 1 (i): not parallel")


def test_dataflow_is_a_table(sweep):
    flow = dataflow(sweep)
    for text in (_text_plain(flow), pretty(flow), repr(flow)):
        _no_dataclass_repr(text, "Dataflow")
        assert "statement  read" in text and "live-out (last) writes" in text
    rows = [ln.split() for ln in str(flow).splitlines()[3:5]]
    assert rows[0][:2] == ["S0", "a[i"]
    _no_dataclass_repr(pretty(flow.reads[0]), "ReadSources")


def test_textbook_report_is_a_table(sweep):
    rep = textbook_all(sweep)[0]
    for text in (_text_plain(rep), pretty(rep), pretty(list(textbook_all(sweep)))):
        _no_dataclass_repr(text, "TextbookReport")
        assert "test            verdict" in text and "exact (isl)" in text


def test_storage_reports_are_text():
    import polylab.storage as st

    scop = polylab.parse_file(polylab.example_path("sl3.sy")).scop
    plan = st.storage_pipeline(scop)
    text = _text_plain(plan)
    _no_dataclass_repr(text, "StoragePlan")
    assert text.startswith("storage pipeline")
    for name, rep in plan.steps:
        t = _text_plain(rep)
        assert "Report(" not in t and "Skipped(" not in t and t == str(rep), name
        assert repr(rep) == str(rep)
    fold = plan.steps[0][1]
    assert any(ln.split()[:2] == ["folded", "S1"] for ln in str(fold).splitlines())
    contract = plan.steps[-1][1]
    assert any(ln.split()[:5] == ["dim", "0", "mod", "2", "safe"] for ln in str(contract).splitlines())
