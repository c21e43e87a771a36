"""The lab notebooks: each solved notebook runs top to bottom (and every check passes), the student
notebooks in ``labs/`` are exactly what ``solutions/make_labs.py`` generates, nothing is committed with
outputs, and the checks fail where a student has not answered yet."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
LABS = ROOT / "labs"
NAMES = sorted(p.name for p in SOLUTIONS.glob("*.ipynb"))
CELL_TIMEOUT = 180  # seconds per cell: the notebooks use small sizes, so this is a guard, not a budget


def _make_labs():
    spec = importlib.util.spec_from_file_location("make_labs", SOLUTIONS / "make_labs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


make_labs = _make_labs()


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _tagged(nb: dict, tag: str) -> list[dict]:
    return [c for c in nb["cells"] if tag in c.get("metadata", {}).get("tags", [])]


def test_every_solved_notebook_is_a_declared_lab():
    """Each solved notebook names its lab in its metadata; each declared lab has its solved notebook."""
    from polylab.grading import lab_names, get_lab

    assert NAMES and sorted(p.name for p in LABS.glob("*.ipynb")) == NAMES
    declared = {n: get_lab(n).notebook for n in lab_names()}
    named = {_load(SOLUTIONS / name)["metadata"].get("polylab", {}).get("lab"): name for name in NAMES}
    assert named == {lab: nb for lab, nb in declared.items()}


@pytest.mark.parametrize("folder", [SOLUTIONS, LABS], ids=["solutions", "labs"])
def test_committed_without_outputs(folder):
    for path in sorted(folder.glob("*.ipynb")):
        for cell in _load(path)["cells"]:
            if cell["cell_type"] == "code":
                assert cell.get("outputs") == [], f"{path.name}: a cell has outputs"
                assert cell.get("execution_count") is None, f"{path.name}: a cell has an execution count"


def test_labs_in_sync_with_solutions(tmp_path):
    make_labs.write_labs(tmp_path)
    for name in NAMES:
        fresh = [make_labs.source_text(c) for c in _load(tmp_path / name)["cells"]]
        committed = [make_labs.source_text(c) for c in _load(LABS / name)["cells"]]
        assert committed == fresh, f"labs/{name} is out of date: run python solutions/make_labs.py"
    assert make_labs.problems() == []


@pytest.mark.parametrize("name", NAMES)
def test_solutions_are_stubbed_and_checked(name):
    sol, lab = _load(SOLUTIONS / name), _load(LABS / name)
    solved = _tagged(sol, "solution")
    assert len(solved) >= 2, "every lab asks the student for answers"
    for cell in _tagged(lab, "solution"):
        assert make_labs.STUB in make_labs.source_text(cell)
        assert "BEGIN SOLUTION" not in make_labs.source_text(cell)
    # every answer is followed by a check before the next answer
    kinds = [t for c in sol["cells"] for t in c.get("metadata", {}).get("tags", []) if t in ("solution", "check")]
    for k, t in enumerate(kinds):
        if t == "solution":
            assert k + 1 < len(kinds) and kinds[k + 1] == "check", f"{name}: an answer cell has no check after it"
    from polylab.grading import get_lab

    declared = get_lab(sol["metadata"]["polylab"]["lab"])
    asked = []
    for cell in _tagged(sol, "check"):
        text = make_labs.source_text(cell).strip()
        m = re.fullmatch(r'polylab\.grading\.check\("(\w+)"((?:, "\w+")*)\)', text)
        assert m and m.group(1) == declared.name, f"{name}: a check cell is one call to polylab.grading.check: {text!r}"
        asked += re.findall(r'"(\w+)"', m.group(2))
    assert sorted(asked) == sorted(q.name for q in declared.questions), f"{name}: every question is checked once"
    # the answers themselves never reach the student's notebook
    for s, l in zip(sol["cells"], lab["cells"]):
        if "solution" not in s.get("metadata", {}).get("tags", []):
            assert make_labs.source_text(s) == make_labs.source_text(l)


def test_stub_source():
    text = "x = 1\n### BEGIN SOLUTION\nanswer = 42  # because\n### END SOLUTION\nprint(answer)"
    assert make_labs.stub_source(text) == "x = 1\n# YOUR ANSWER HERE\nprint(answer)"
    indented = "if True:\n    ### BEGIN SOLUTION\n    y = 2\n    ### END SOLUTION\n"
    assert make_labs.stub_source(indented) == "if True:\n    # YOUR ANSWER HERE"
    assert make_labs.stub_source("%%schedule sw mine\nwavefront") == "%%schedule sw mine\n# YOUR ANSWER HERE"
    assert make_labs.stub_source("z = 3") == "# YOUR ANSWER HERE"
    with pytest.raises(ValueError):
        make_labs.stub_source("### BEGIN SOLUTION\nz = 3")
    nb = {"cells": [{"cell_type": "code", "source": ["a = 1"], "outputs": [{"x": 1}], "execution_count": 3,
                     "metadata": {"tags": ["solution"]}}]}
    lab = make_labs.make_lab(nb)
    assert lab["cells"][0]["outputs"] == [] and lab["cells"][0]["execution_count"] is None
    assert make_labs.source_text(lab["cells"][0]) == "# YOUR ANSWER HERE"
    assert nb["cells"][0]["outputs"] == [{"x": 1}]  # the input is not changed


def test_check_reports_out_of_date_labs(tmp_path):
    make_labs.write_labs(tmp_path)
    path = tmp_path / NAMES[0]
    nb = _load(path)
    nb["cells"][0]["source"] = ["# edited by hand"]
    path.write_text(json.dumps(nb))
    found = make_labs.problems(tmp_path)
    assert any("differ" in line for line in found)
    assert make_labs.main(["--check", "--out", str(tmp_path)]) == 1


def _execute(path: Path, allow_errors: bool = False):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=allow_errors,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb


def _text(nb) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") + o.get("data", {}).get("text/plain", ""))
    return "\n".join(out)


@pytest.mark.parametrize("name", NAMES)
def test_solution_notebook_runs_top_to_bottom(name):
    if name != NAMES[0]:  # labs 2 and 3 compile, verify and time code
        from polylab.toolchain import c_compiler

        if c_compiler() is None:
            pytest.skip("this lab compiles code: no C compiler here")
    nb = _execute(SOLUTIONS / name)  # raises CellExecutionError on the first failing cell
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = _text(nb)
    for cell in nb.cells:
        if "check" in cell.metadata.get("tags", []):
            shown = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)
            assert "\u2714" in shown and "\u2718" not in shown and "\u25d1" not in shown, \
                f"every check of the solved notebook gives full marks: {shown}"
    assert "internal error in polylab" not in text
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "data:image/png;base64" in html or any("image/png" in o.get("data", {}) for o in outputs)
    if name == "lab2_schedules.ipynb":
        assert "ILLEGAL" in text and "illegal transformation: tile(4, 4, 4)" in text
        assert "verified: output equals the original's" in text
    if name == "lab3_sl3_storage.ipynb":
        assert "xbuf[i % 2][j][k]" in text and "would lose a value" in text
        assert text.count("verified (c, n=16): compared bit for bit") + text.count("verified (openmp, n=16): compared bit for bit") >= 2


def test_student_lab_runs_to_the_end_and_checks_say_missing():
    """The student's notebook of lab 1 (no compiler needed), untouched: Run All reaches the last cell (no
    error output anywhere) and every check cell shows 0 points and what to define."""
    nb = _execute(LABS / NAMES[0])  # allow_errors=False: any failing cell fails the test
    checks = [c for c in nb.cells if "check" in c.metadata.get("tags", [])]
    assert checks
    for cell in checks:
        shown = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)
        assert "missing" in shown and "define" in shown and "\u2714" not in shown, shown
