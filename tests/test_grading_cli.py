"""``polylab grade`` as an instructor runs it: every solved notebook gets full marks, every untouched student
notebook 0, in one batch with two jobs; the JSON, CSV and Gradescope files hold what the issue specifies;
usage errors exit with status 2 and one line of explanation. Parametrised by what is on disk: a new lab is
picked up by itself."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polylab.grading import get_lab

ROOT = Path(__file__).resolve().parents[1]
SOLVED = sorted((ROOT / "solutions").glob("lab*.ipynb"))
STUDENT = sorted((ROOT / "labs").glob("lab*.ipynb"))
pytest.importorskip("nbclient")


def polylab(*args: str, cwd: Path = ROOT, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "polylab", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def graded(course_run):
    """The session's one run of ``polylab grade`` over every solved and every student lab (conftest.py)."""
    return course_run.proc, course_run.out


def test_exit_status_zero_and_a_table(graded, course_run):
    proc, _ = graded
    print(f"polylab grade over {len(SOLVED) + len(STUDENT)} notebooks, 2 jobs: {course_run.seconds:.0f} s")
    assert proc.returncode == 0, proc.stderr
    for path in SOLVED:
        assert path.name in proc.stdout


@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.name)
def test_every_solution_scores_full_marks(graded, path):
    _, out = graded
    subs = {s["path"]: s for s in json.loads((out / "grades.json").read_text())["submissions"]}
    s = subs[str(path)]
    assert s["lab"] and s["score"] == s["max_score"] == get_lab(s["lab"]).max_score > 0, s
    assert not s["errors"] and not s["cell_errors"], s
    assert {q["status"] for q in s["questions"]} == {"correct"}


@pytest.mark.parametrize("path", STUDENT, ids=lambda p: p.name)
def test_every_untouched_lab_scores_zero_without_crashing(graded, path):
    _, out = graded
    subs = {s["path"]: s for s in json.loads((out / "grades.json").read_text())["submissions"]}
    s = subs[str(path)]
    assert s["score"] == 0 and s["max_score"] > 0 and not s["errors"] and not s["cell_errors"], s
    assert {q["status"] for q in s["questions"]} == {"missing"}


def test_json_csv_and_gradescope_files(graded):
    _, out = graded
    data = json.loads((out / "grades.json").read_text())
    for s in data["submissions"]:
        assert set(s) >= {"path", "lab", "score", "max_score", "questions", "errors", "seconds"}
        for q in s["questions"]:
            assert set(q) >= {"name", "score", "max", "feedback"}
    rows = list(csv.DictReader(io.StringIO((out / "grades.csv").read_text())))
    assert [r["path"] for r in rows] == [s["path"] for s in data["submissions"]]
    assert all(float(r["score"]) == s["score"] for r, s in zip(rows, data["submissions"]))
    seen: set[str] = set()
    for s in data["submissions"]:
        path = Path(s["path"])
        name = path.stem if path.stem not in seen else f"{path.parent.name}-{path.stem}"
        seen.add(name)
        gs = json.loads((out / "gradescope" / name / "results.json").read_text())
        assert gs["score"] == s["score"] and len(gs["tests"]) == len(s["questions"])
        assert all({"name", "score", "max_score", "output"} <= set(t) for t in gs["tests"])


@pytest.mark.parametrize("args,message", [
    (["--lab", "nolab", "x.ipynb"], "no lab named 'nolab'"),
    (["--jobs", "0", "x.ipynb"], "--jobs must be at least 1"),
    (["--timeout", "-1", "x.ipynb"], "--timeout must be positive"),
    (["--json", "/no/such/folder/out.json", "x.ipynb"], "the folder /no/such/folder does not exist"),
    (["--hidden", "/no/such/folder", "x.ipynb"], "no such folder"),
])
def test_usage_errors_exit_2_without_traceback(args, message):
    proc = polylab("grade", *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_a_file_that_is_not_a_notebook_is_graded_with_status_0(tmp_path):
    bad = tmp_path / "essay.ipynb"
    bad.write_text("my homework")
    proc = polylab("grade", str(bad), "--lab", "lab1", "--no-progress", "--json", str(tmp_path / "g.json"))
    assert proc.returncode == 0 and "corrupt JSON" in proc.stdout and "Traceback" not in proc.stderr
    s = json.loads((tmp_path / "g.json").read_text())["submissions"][0]
    assert s["score"] == 0 and s["max_score"] == get_lab("lab1").max_score
