"""otter-grader compatibility: the lab build writes otter's assignment format. The master notebooks are
checked here for every solved notebook; where otter installs, ``otter assign`` turns lab 1's into a student
notebook without solutions and an autograder whose tests (hidden ones included) give the solution full
marks under ``otter run`` (otter's Docker-free runner)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from polylab.grading import get_lab, load_hidden
from polylab.grading.otter import master_notebook

ROOT = Path(__file__).resolve().parents[1]
SOLVED = sorted((ROOT / "solutions").glob("*.ipynb"))


def _src(cell) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def _master(path: Path) -> tuple[dict, object]:
    nb = json.loads(path.read_text())
    lab = get_lab(nb["metadata"]["polylab"]["lab"])
    return master_notebook(nb, lab, load_hidden(ROOT / "instructor" / "hidden", lab)), lab


@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.name)
def test_master_notebook_has_one_block_per_check_and_all_points(path):
    master, lab = _master(path)
    raw = [_src(c) for c in master["cells"] if c["cell_type"] == "raw"]
    assert raw[0].startswith("# ASSIGNMENT CONFIG") and f"name: {lab.name}" in raw[0]
    points = sum(float(r.split("points:")[1].split()[0]) for r in raw if r.startswith("# BEGIN QUESTION"))
    assert points == lab.max_score
    assert raw.count("# BEGIN SOLUTION") == raw.count("# END SOLUTION") == raw.count("# END QUESTION")
    tests = [_src(c) for c in master["cells"] if c["cell_type"] == "code" and "_pg.get_lab" in _src(c)]
    assert {q.name for q in lab.questions} <= {t.split(".question('")[1].split("'")[0] for t in tests}
    hidden = load_hidden(ROOT / "instructor" / "hidden", lab)
    assert sum("hidden: true" in t for t in tests) == len([q for q in hidden if hidden[q]])


def test_otter_assign_and_run_give_the_solution_full_marks(tmp_path):
    if shutil.which("otter") is None:
        pytest.skip("otter-grader is not installed (pip install otter-grader)")
    master, lab = _master(ROOT / "solutions" / "lab2_dependences.ipynb")
    src = tmp_path / "lab2_dependences.ipynb"
    src.write_text(json.dumps(master))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run(["otter", "assign", "--no-run-tests", str(src), str(tmp_path / "dist")], cwd=tmp_path, env=env,
                   check=True, capture_output=True, timeout=300)
    student = json.loads((tmp_path / "dist" / "student" / src.name).read_text())
    text = "\n".join(_src(c) for c in student["cells"])
    assert "math.gcd" not in text and "sweep2d_distances = {(1, 0), (0, 1)}" not in text
    assert "all coefficients zero" not in text and "all coefficients zero" not in json.dumps(student["metadata"])
    autograder = next((tmp_path / "dist" / "autograder").glob("*.zip"))
    out = tmp_path / "run"
    out.mkdir()
    subprocess.run(["otter", "run", "-a", str(autograder), str(tmp_path / "dist" / "autograder" / src.name),
                    "-o", str(out)], cwd=tmp_path, env=env, check=True, capture_output=True, timeout=600)
    tests = json.loads((out / "results.json").read_text())["tests"]
    scored = [t for t in tests if "max_score" in t]
    assert sum(t["score"] for t in scored) == sum(t["max_score"] for t in scored) == lab.max_score
