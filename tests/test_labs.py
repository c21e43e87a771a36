"""The lab notebooks: each solved notebook runs top to bottom (and every check passes), the student
notebooks in ``labs/`` are exactly what ``solutions/make_labs.py`` generates and carry no solution text,
nothing is committed with outputs, and an untouched student lab runs to its end with every check saying
what is missing. The notebooks are executed once per session (the ``course_run`` fixture of conftest.py)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
LABS = ROOT / "labs"
NAMES = sorted(p.name for p in SOLUTIONS.glob("lab*.ipynb"))  # discovered: a new lab is picked up by itself


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
        if make_labs.source_text(s).startswith(make_labs.SEE_WHY):   # sealed (tests/test_course_seal.py)
            assert make_labs.source_text(l) == make_labs.sealed_source(make_labs.source_text(s))
        elif "solution" not in s.get("metadata", {}).get("tags", []):
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


def _text(nb) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") + o.get("data", {}).get("text/plain", ""))
    return "\n".join(out)


def _shown(cell) -> str:
    return "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)


@pytest.mark.parametrize("name", NAMES)
def test_solution_notebook_runs_top_to_bottom(course_run, name):
    """The executed solved notebook (tests/conftest.py runs every lab once per session): no error output,
    every check gives full marks, pictures are drawn."""
    nb = course_run.notebook(SOLUTIONS / name)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for o in outputs if o.output_type == "error"]
    assert not errors, errors
    for cell in nb.cells:
        if "check" in cell.metadata.get("tags", []):
            shown = _shown(cell)
            # a choice is only "recorded" (\u270e) in a notebook: the grader judges it (tests/test_course_seal.py)
            assert ("\u2714" in shown or "\u270e" in shown) and "\u2718" not in shown and "\u25d1" not in shown, \
                f"every check of the solved notebook gives full marks: {shown}"
    text = _text(nb)
    assert "internal error in polylab" not in text and "internal error in the check" not in text
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "data:image/png;base64" in html or any("image/png" in o.get("data", {}) for o in outputs)


@pytest.mark.parametrize("name", NAMES)
def test_student_lab_runs_to_the_end_and_checks_say_missing(course_run, name):
    """The student's notebook, untouched: Run All reaches the last cell (no error output anywhere: the
    explorers at the end are drawn) and every check cell shows 0 points and what to define."""
    nb = course_run.notebook(LABS / name)
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for c in nb.cells if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[-1].execution_count is not None or not code[-1].source.strip(), "Run All reached the last cell"
    checks = [c for c in nb.cells if "check" in c.metadata.get("tags", [])]
    assert checks
    for cell in checks:
        shown = _shown(cell)
        assert "missing" in shown and "define" in shown and "\u2714" not in shown, shown


def _solution_lines(nb: dict) -> list[str]:
    """The substantial lines between BEGIN and END SOLUTION of every solution cell."""
    lines = []
    for cell in _tagged(nb, "solution"):
        text = make_labs.source_text(cell)
        inside = False
        for line in text.splitlines():
            s = line.strip()
            if s == make_labs.BEGIN:
                inside = True
            elif s == make_labs.END:
                inside = False
            elif inside and len(s) > 12 and not s.startswith("#"):
                lines.append(s)
    return lines


@pytest.mark.parametrize("name", NAMES)
def test_student_copies_carry_no_solution_text(name):
    """No line of an answer reaches the student's notebook, except a line the question itself gives (the
    statements a construction must keep, a loop header of the original)."""
    sol, lab = _load(SOLUTIONS / name), _load(LABS / name)
    text = json.dumps(lab)
    given = "\n".join(make_labs.source_text(c) for c in sol["cells"] if "solution" not in c.get("metadata", {}).get(
        "tags", []))
    leaked = [line for line in _solution_lines(sol) if json.dumps(line)[1:-1] in text and line not in given]
    assert not leaked, f"labs/{name} contains solution text: {leaked[:3]}"


def test_kernel_texts_of_the_checks_appear_in_the_labs():
    """The checks compute their expected answers from their own copies of the nests: each copy is the text
    the lab shows (so a lab that changes its nest without its check is caught)."""
    from polylab.grading import kernels
    from polylab.grading.labs import lab1, lab2, lab3, lab4

    texts = {name: "\n".join(make_labs.source_text(c) for c in _load(SOLUTIONS / name)["cells"]) for name in NAMES}
    every = "\n".join(texts.values())
    for source in (kernels.SWEEP, kernels.SHIFT, kernels.SEIDEL, lab1.GATHER, lab1.RECTANGLE, lab1.TRIANGLE,
                   lab1.STRIDED, lab2.SCATTER, lab2.BANERJEE, lab3.SKEWED, lab4.STEEP, lab4.SMOOTH):
        body = [ln.strip() for ln in source.strip().splitlines() if ln.strip().startswith(("for", "a[", "x[", "Z[",
                                                                                          "A[", "B[", "Y[", "s[", "R[", "L["))]
        assert body and all(line in every for line in body), source


#: texts of expected answers, per lab: none may appear in the student's notebook, neither in its cells nor in
#: what its untouched cells print (the see-why parts open only after the answer; docs/course.md); a recorded
#: speedup is written with its interval, which the student's own live runs do not reproduce by chance
ANSWERS = {
    "lab1_affine.ipynb": ["[[1, 2], [0, 1]]", "0 <= j < M", "2 + 3k", "1 <= b <= N",
                          "a - 2b + 2", "2 * i, N - 1 - i", "N - c0 - 1, 2 * c0", "n * (n + 1)", ": 10 instances"],
    "lab2_dependences.ipynb": ["(1, 0)", "2j' = i + 2j - i'", "-15", "(1, 1, 1)", "private(k)", "(2k, -k)"],
    "lab3_schedules.ipynb": ["S0[1, 2] at time", "legal: False", "t - N + 1", "-N + c0 + 1", "2 * N - 2",
                             "2i + j", "-2 * N + c0 + 2"],
    "lab4_wavefront.ipynb": ["a = [1, 1, 1]", "a = [2, 2, 1]", "c >= 6s - 3t", "[u = 0, w = 7, s = 1, t = 1, c = 3]",
                             "a[c0 - 3] = b[c0 - 3]", "-n + c1 - c2 + 1",
                             "(0.86x, 95 % interval 0.52-1.01x)",
                             "S1[i] -> [i + 3, 1]", "c1 - c2 - c3"],
    "lab5_tiling.ipynb": ["S0[0, 2, 3] later reads", "2t + i + j", "floor((t + i)/4)", "W(s) =    296",
                          "(1.03x, 95 % interval 0.93-1.08x)"],
    "lab6_storage.ipynb": ["every instance reads 1.0f stored by S0", "for i >= 2 and j >= 2 and k >= 2",
                           "i = 1 or j = 1", "xbuf[i0 % 2]", "S1[2, 2, 2]", "dim 0 mod 1  refuted",
                           "buf[(t - 1) % 2]", "1.31x, 95 % interval 1.18-1.53x"],
    "lab7_gpu.ipynb": ["stride 1 in 3 of 6 accesses", "threadIdx.x + 1", "32bx <= b <= 32bx + 33",
                       "stride 1 in 6 of 6 accesses", "statistics.median(RECORDED"],
    "lab8_stencil.ipynb": ["[-1, -1, 0]:[65, 65, 16]", "[-2, -2, 0]:[66, 66, 16]", "(2, 4, 0)", "rows 32 and 33 for j in [0, 64)"],
}


def _visible(nb) -> str:
    """Every cell's text and every output's text of an executed notebook."""
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        for o in cell.get("outputs", []):
            parts.append(str(o.get("text", "")) + str(o.get("evalue", "")))
            parts += [str(v) for k, v in o.get("data", {}).items() if k.startswith("text/")]
    return "\n".join(parts)


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_no_answer_is_in_sight_before_it_is_given(course_run, name):
    """The untouched student lab, run to its end: no expected answer is shown anywhere (each see-why part
    shows its closed note instead)."""
    nb = course_run.notebook(LABS / name)
    shown = _visible(nb)
    leaked = [a for a in ANSWERS[name] if a in shown]
    assert not leaked, f"labs/{name} shows answers before they are given: {leaked}"
    solved = _visible(course_run.notebook(SOLUTIONS / name))
    unseen = [a for a in ANSWERS[name] if a not in solved]
    assert not unseen, f"these texts are not shown by the solved notebook either, so they test nothing: {unseen}"
    gated = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%see_why")]
    assert gated and all("See why" in _shown(c) for c in gated)


#: answers whose text the lab shows for another reason, with that reason
SHOWN_FOR_ANOTHER_REASON = {
    ("lab4_wavefront.ipynb", "sl3_hyperplane"): "(1, 1, 1) is also one of sl3's distances, which the lab's texts of the sweep imply",
}


@pytest.mark.parametrize("name", NAMES)
def test_no_literal_answer_is_shown_by_the_untouched_lab(course_run, name):
    """Every literal value a solved notebook's answer cells assign (``name = <literal>``, five characters or
    more; a choice's answer is one of the options its question names, so choices are left out) appears
    nowhere in what the untouched student lab shows once run to its end."""
    import ast

    from polylab.grading import get_lab

    lab = get_lab(_load(SOLUTIONS / name)["metadata"]["polylab"]["lab"])
    choices = {a for q in lab.questions if q.kind == "choice" for a in q.answers}
    shown = _visible(course_run.notebook(LABS / name))
    squeezed = "".join(shown.split())
    leaked, checked = [], 0
    for cell in _tagged(_load(SOLUTIONS / name), "solution"):
        for node in ast.parse(make_labs.source_text(cell)).body:
            if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
                continue
            answer = node.targets[0].id
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            text = "".join((value if isinstance(value, str) else repr(value)).split())
            if answer in choices or len(text) < 5 or (name, answer) in SHOWN_FOR_ANOTHER_REASON:
                continue
            checked += 1
            if text in squeezed:
                leaked.append(answer)
    assert checked, f"{name}: no literal answer to look for"
    assert not leaked, f"labs/{name} shows the answers of {leaked} before they are given"
