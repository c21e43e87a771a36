"""Shared test settings.

Property-based tests draw random loop nests and schedules. On CI (``CI`` set in the environment) the
draws are derandomized, so a run is reproducible and a failure can be replayed by rerunning; locally the
draws stay random so that new cases keep being explored.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# -- the course: every lab notebook is executed once per test session -------------------------------------

import json as _json
import subprocess as _subprocess
import sys as _sys
from dataclasses import dataclass as _dataclass
from pathlib import Path as _Path

import pytest as _pytest

_ROOT = _Path(__file__).resolve().parents[1]


@_dataclass(frozen=True)
class CourseRun:
    """One ``polylab grade`` over every solved notebook and every student lab (two jobs): the process, the
    JSON of the grades (by path) and the folder of the executed notebooks (``<folder>/<name>.ipynb``)."""

    proc: _subprocess.CompletedProcess
    out: _Path
    executed: _Path
    seconds: float

    def submissions(self) -> dict:
        data = _json.loads((self.out / "grades.json").read_text())
        return {s["path"]: s for s in data["submissions"]}

    def notebook(self, path: _Path):
        import nbformat

        return nbformat.read(str(self.executed / path.parent.name / path.name), as_version=4)


@_pytest.fixture(scope="session")
def course_run(tmp_path_factory) -> CourseRun:
    """Executes solutions/lab*.ipynb and labs/lab*.ipynb once for the whole session (tests/test_labs.py,
    tests/test_grading_cli.py read the results)."""
    import os
    import time

    _pytest.importorskip("nbclient")
    from polylab.toolchain import c_compiler

    if c_compiler() is None:
        _pytest.skip("the labs compile code: no C compiler here")
    out = tmp_path_factory.mktemp("course")
    paths = sorted((_ROOT / "solutions").glob("lab*.ipynb")) + sorted((_ROOT / "labs").glob("lab*.ipynb"))
    only = os.environ.get("POLYLAB_COURSE_ONLY")  # a development aid: "lab1" runs only lab1's two notebooks
    if only:
        paths = [p for p in paths if p.name.startswith(tuple(only.split(",")))]
    env = {**os.environ, "PYTHONPATH": str(_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.monotonic()
    proc = _subprocess.run([_sys.executable, "-m", "polylab", "grade", *map(str, paths), "--jobs", "2",
                            "--timeout", "600", "--no-progress", "--max-output", "20",
                            "--json", str(out / "grades.json"), "--csv", str(out / "grades.csv"),
                            "--gradescope", str(out / "gradescope"), "--executed", str(out / "executed")],
                           cwd=_ROOT, env=env, capture_output=True, text=True, timeout=3600)
    return CourseRun(proc, out, out / "executed", time.monotonic() - start)


@_pytest.fixture(scope="session")
def global_ipython():
    """IPython's global test shell, started once per process. (``from IPython.testing.globalipapp import
    get_ipython`` binds a function that returns None after the first start, so every test module that
    drives the magics through the shell asks this fixture instead.)"""
    from IPython.testing import globalipapp

    globalipapp.start_ipython()  # a no-op after the first call
    return globalipapp.get_ipython()  # rebound to the shell's own get_ipython by the start


@_pytest.fixture(scope="module")
def ip(global_ipython):
    """The global test shell with polylab's magics loaded (again in each module: one module unloads them)."""
    global_ipython.run_line_magic("load_ext", "polylab")
    return global_ipython
