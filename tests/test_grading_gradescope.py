"""The Gradescope autograder bundle: ``polylab grade --gradescope-autograder lab1 --out lab1-autograder.zip``
unpacked into a scratch ``/autograder`` layout, ``run_autograder`` run there on a solved and on an untouched
notebook (with the bundle's own copy of polylab), and ``results.json`` checked against Gradescope's
specification."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from polylab.grading import get_lab

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
            "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
             "visibility", "extra_data"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def check_spec(results: dict) -> None:
    """Gradescope's autograder results format: known keys, their types, a score per test and in total."""
    assert set(results) <= TOP_KEYS, set(results) - TOP_KEYS
    assert isinstance(results["tests"], list) and results["tests"]
    for key in ("score", "execution_time"):
        assert isinstance(results.get(key, 0), (int, float))
    assert isinstance(results.get("output", ""), str)
    assert results.get("visibility", "visible") in VISIBILITY
    for t in results["tests"]:
        assert set(t) <= TEST_KEYS, set(t) - TEST_KEYS
        assert isinstance(t["name"], str) and t["name"]
        assert isinstance(t["score"], (int, float)) and isinstance(t["max_score"], (int, float))
        assert 0 <= t["score"] <= t["max_score"]
        assert t.get("status", "passed") in ("passed", "failed")
        assert isinstance(t.get("output", ""), str)
        assert t.get("visibility", "visible") in VISIBILITY
    assert abs(results["score"] - sum(t["score"] for t in results["tests"])) < 1e-6


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "lab1-autograder.zip"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "polylab", "grade", "--gradescope-autograder", "lab1", "--out",
                           str(out), "--hidden", str(ROOT / "instructor" / "hidden")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def test_the_bundle_holds_what_gradescope_runs(bundle):
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        setup = z.read("setup.sh").decode()
        run = z.read("run_autograder").decode()
    assert {"setup.sh", "run_autograder", "hidden/lab1.py", "polylab-src/pyproject.toml",
            "polylab-src/polylab/grading/autograder.py"} <= names
    assert not any("__pycache__" in n or n.startswith("polylab-src/solutions") for n in names)
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    assert "apt-get install" in setup and "bubblewrap" in setup and "gcc" in setup
    assert "pip install" in setup and "/autograder/source/polylab-src" in setup
    assert "polylab.grading.autograder lab1" in run
    for text in (setup, run):
        assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


@pytest.mark.parametrize("which,full", [("solutions", True), ("labs", False)])
def test_run_autograder_on_a_submission(bundle, tmp_path, which, full):
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
    (root / "source" / "run_autograder").chmod(0o755)
    (root / "submission").mkdir()
    shutil.copy(ROOT / which / "lab1_affine.ipynb", root / "submission" / "lab1_affine.ipynb")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "POLYLAB_PYTHON": sys.executable,
           "PYTHONPATH": str(root / "source" / "polylab-src")}  # the bundle's polylab, not the repository's
    done = subprocess.run([str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    check_spec(results)
    questions = get_lab("lab1").questions  # the count and the total come from lab 1's own definitions
    assert len(results["tests"]) == len(questions)
    if full:
        assert results["score"] == sum(q.points for q in questions)
        assert all(t["status"] == "passed" for t in results["tests"])
        q6 = next(t for t in results["tests"] if t["name"].startswith("lab1.q6"))
        assert "hidden cases: 3/3" in q6["output"]  # the bundled hidden cases were used
    else:
        assert results["score"] == 0 and all(t["status"] == "failed" for t in results["tests"])
        assert "missing" in results["tests"][0]["output"] or "define" in results["tests"][0]["output"]


def test_no_notebook_in_the_submission(bundle, tmp_path):
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
    (root / "submission").mkdir()
    (root / "submission" / "notes.txt").write_text("hello")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "POLYLAB_PYTHON": sys.executable,
           "PYTHONPATH": str(root / "source" / "polylab-src")}
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    check_spec(results)
    assert results["score"] == 0 and "no notebook (.ipynb) in the submission" in results["output"]
