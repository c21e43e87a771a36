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


#: the test files that read the course's grading (through the ``course_run`` fixture)
_COURSE_READERS = ("test_labs.py", "test_grading_cli.py", "test_grading_dask.py")
_course_background: list[_subprocess.Popen] = []


def _course_folder(config) -> _Path:
    """The course grading's folder: in the run's own temporary folder, which every pytest-xdist worker's
    temporary folder lies in."""
    base = config._tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "course-run"


def _grade_command(out: _Path) -> list[str]:
    """``polylab grade --jobs 2`` of every solved and every student lab into ``out``; the process's outcome
    is recorded in ``out/process.json`` (written last, by rename, so that it exists only complete)."""

    paths = sorted((_ROOT / "solutions").glob("lab*.ipynb")) + sorted((_ROOT / "labs").glob("lab*.ipynb"))
    only = os.environ.get("POLYLAB_COURSE_ONLY")  # a development aid: "lab1" runs only lab1's two notebooks
    if only:
        paths = [p for p in paths if p.name.startswith(tuple(only.split(",")))]
    grade = [_sys.executable, "-m", "polylab", "grade", *map(str, paths), "--jobs", "2", "--timeout", "600",
             "--no-progress", "--max-output", "20", "--json", str(out / "grades.json"),
             "--csv", str(out / "grades.csv"), "--gradescope", str(out / "gradescope"),
             "--executed", str(out / "executed")]
    return [_sys.executable, str(_Path(__file__).with_name("course_grading.py")), str(out / "process.json"),
            "3600", *grade]


def _start_course_grading(config) -> None:
    """Starts the course's grading in the background when the run includes a file that reads it, so that its
    minutes overlap the other tests instead of stopping the first test that asks for it."""

    if os.environ.get("PYTEST_XDIST_WORKER") or config.getoption("collectonly"):
        return
    args = [str(a) for a in config.args] or ["tests"]
    if not any(a.rstrip("/").endswith("tests") or any(name in a for name in _COURSE_READERS) for a in args):
        return
    import importlib.util

    from polylab.toolchain import c_compiler

    if importlib.util.find_spec("nbclient") is None or c_compiler() is None:
        return  # course_run skips, saying why
    out = _course_folder(config)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "launcher.log", "w") as log:
        _course_background.append(_subprocess.Popen(_grade_command(out), cwd=_ROOT, env=_course_env(),
                                                    stdout=log, stderr=_subprocess.STDOUT,
                                                    start_new_session=True))


def _course_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def pytest_sessionstart(session):
    _start_course_grading(session.config)


def pytest_collection_modifyitems(session, config, items):
    """The files that read the course's grading run last (a stable sort), so that the grading started in the
    background has the rest of the run to finish in before a test waits for it."""
    items.sort(key=lambda item: item.path.name in _COURSE_READERS)


def pytest_sessionfinish(session, exitstatus):
    import signal

    for proc in _course_background:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


@_pytest.fixture(scope="session")
def course_run(request) -> CourseRun:
    """Executes solutions/lab*.ipynb and labs/lab*.ipynb once for the whole test run (tests/test_labs.py,
    tests/test_grading_cli.py, tests/test_grading_dask.py read the results). The grading starts in the
    background when the session starts (:func:`pytest_sessionstart`); the fixture waits for its record. Where
    nothing started it (a single other test file was asked for), the first test to ask runs it under a file
    lock, and the other pytest-xdist workers wait on that lock and read the same record."""
    import time

    from filelock import FileLock

    _pytest.importorskip("nbclient")
    from polylab.toolchain import c_compiler

    if c_compiler() is None:
        _pytest.skip("the labs compile code: no C compiler here")
    out = _course_folder(request.config)
    record = out / "process.json"
    if (out / "launcher.log").exists():
        deadline = time.monotonic() + 4000
        while not record.exists() and time.monotonic() < deadline:
            time.sleep(2)
    with FileLock(str(out.parent / "course-run.lock")):
        if not record.exists():
            out.mkdir(parents=True, exist_ok=True)
            _subprocess.run(_grade_command(out), cwd=_ROOT, env=_course_env(), timeout=4000)
    done = _json.loads(record.read_text())
    proc = _subprocess.CompletedProcess(done["args"], done["returncode"], done["stdout"], done["stderr"])
    return CourseRun(proc, out, out / "executed", done["seconds"])


@_pytest.fixture(scope="session")
def global_ipython():
    """IPython's global test shell, started once per process. (``from IPython.testing.globalipapp import
    get_ipython`` binds a function that returns None after the first start, so every test module that
    drives the magics through the shell asks this fixture instead.)"""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.terminal.interactiveshell import TerminalInteractiveShell
    from IPython.testing import globalipapp

    if InteractiveShell.initialized() and not isinstance(InteractiveShell.instance(), TerminalInteractiveShell):
        # a plain shell another test started in this process first (polylab fuzz's magic cases): the test
        # shell is a sibling class, which IPython's singleton refuses beside it
        InteractiveShell.clear_instance()
    globalipapp.start_ipython()  # a no-op after the first call
    return globalipapp.get_ipython()  # rebound to the shell's own get_ipython by the start


@_pytest.fixture(scope="module")
def ip(global_ipython):
    """The global test shell with polylab's magics loaded (again in each module: one module unloads them)."""
    global_ipython.run_line_magic("load_ext", "polylab")
    return global_ipython
