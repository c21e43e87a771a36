"""The demonstration notebook runs top to bottom in a real kernel (nbclient), without an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).parent / "notebooks" / "demo.ipynb"


def test_demo_notebook_is_committed_without_outputs():
    nb = json.loads(NOTEBOOK.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None


def test_demo_notebook_runs_top_to_bottom():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from polylab.toolchain import c_compiler

    if c_compiler() is None:
        pytest.skip("the demonstration compiles code: no C compiler here")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    text = "".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "SCoP stored as `sw`" in text
    assert "the call compute(...)" in text and "^" in text  # the refusal, with its caret
    assert "ILLEGAL" in text and "legal: every dependence" in text
    assert "per run (median of 3 runs" in text
    assert html.count("data:image/png;base64") >= 4
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(widgets) == 3
