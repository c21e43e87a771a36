"""The batch grader on real kernels: bad behaviour is graded with a reason (endless loops in Python and in C,
memory bombs, kernel death, huge outputs, errors), bad files are graded without running anything, the
student's check cells change nothing, and no process of a submission outlives its grading."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from polylab.grading import get_lab
from polylab.grading.batch import Limits, grade_batch, grade_submission

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 8.0
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

RIGHT_Q1 = "sweep2d_distances = {(1, 0), (0, 1)}"
RIGHT_Q2 = 'Y_waw = "[N] -> { S0[i, j] -> S0[i2, j2] : 0 <= i, j, i2, j2 < N and 2i + 4j = 2i2 + 4j2 and i < i2 }"'
#: the points of lab 2's q1 and q2
TWO = float(get_lab("lab2").question("q1").points + get_lab("lab2").question("q2").points)


def notebook(path: Path, *sources: str, lab: str | None = "lab2") -> Path:
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
             for s in sources]
    meta = {"polylab": {"lab": lab}} if lab else {}
    path.write_text(json.dumps({"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}))
    return path


def status(result) -> dict[str, str]:
    return {r.question: r.status for r in result.questions}


def _no_processes_named(marker: str) -> bool:
    """No process whose command line holds ``marker`` (a killed one may linger a moment on a loaded machine)."""
    for _ in range(40):
        if _none_named(marker):
            return True
        time.sleep(0.25)
    return False


def _none_named(marker: str) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    return False
            except OSError:
                continue
    return True


def _needs_gcc():
    from polylab.toolchain import c_compiler

    if c_compiler() is None:
        pytest.skip("needs a C compiler")


def test_python_endless_loop_is_graded_within_its_timeout(tmp_path):
    path = notebook(tmp_path / "loop.ipynb", RIGHT_Q1, "while True:\n    pass", RIGHT_Q2)
    start = time.monotonic()
    r = grade_submission(path, limits=Limits(timeout=TIMEOUT, memory_mb=2048))
    took = time.monotonic() - start
    assert status(r)["q1"] == "correct" and r.score == 2
    assert status(r)["q2"] == "not reached"
    assert "code cell 2 was still running at the time limit" in r.errors[0]
    assert "time limit" in r.questions[1].feedback[0]
    assert took < TIMEOUT + 45  # the cells' limit, then an interrupt and the final reading of the answers


def test_c_endless_loops_are_graded_and_killed(tmp_path):
    _needs_gcc()
    marker = f"spin{os.getpid()}x{time.monotonic_ns()}"
    child = (f"import subprocess, os\nopen('{marker}.c', 'w').write('int main(void) {{ while (1); }}')\n"
             f"subprocess.run(['gcc', '{marker}.c', '-o', '{marker}'], check=True)\n"
             f"p = subprocess.Popen(['./{marker}'], start_new_session=True)  # escapes the process group\n"
             f"os.system('./{marker}')")
    in_process = (f"import ctypes, subprocess\nopen('{marker}lib.c', 'w').write('void spin(void) {{ volatile int x = 0; "
                  f"while (1) x++; }}')\nsubprocess.run(['gcc', '-shared', '-fPIC', '{marker}lib.c', '-o', "
                  f"'lib{marker}.so'], check=True)\nctypes.CDLL('./lib{marker}.so').spin()")
    subs = [notebook(tmp_path / "child.ipynb", RIGHT_Q1, child, RIGHT_Q2),
            notebook(tmp_path / "inproc.ipynb", RIGHT_Q1, in_process, RIGHT_Q2)]
    results = grade_batch(subs, limits=Limits(timeout=TIMEOUT, memory_mb=2048), jobs=2, progress=False)
    for r in results:
        assert status(r)["q1"] == "correct" and status(r)["q2"] == "not reached", r.to_json()
        assert "still running at the time limit" in r.errors[0]
    assert _no_processes_named(marker), "a compiled endless loop outlived its grading"


def test_memory_bombs_and_kernel_death_are_graded(tmp_path):
    subs = [notebook(tmp_path / "bomb.ipynb", RIGHT_Q1, "x = bytearray(64 * 2**30)", RIGHT_Q2),
            notebook(tmp_path / "grow.ipynb", RIGHT_Q1, "l = []\nwhile True:\n    l.append(bytearray(10**7))",
                     "del l", RIGHT_Q2),
            notebook(tmp_path / "exit.ipynb", RIGHT_Q1, "import os\nos._exit(3)", RIGHT_Q2),
            notebook(tmp_path / "raise.ipynb", "raise RuntimeError('boom')", RIGHT_Q1, RIGHT_Q2)]
    bomb, grow, exit_, raise_ = grade_batch(subs, limits=Limits(timeout=30, memory_mb=2048), jobs=2, progress=False)
    assert status(bomb)["q1"] == status(bomb)["q2"] == "correct"
    assert any("MemoryError" in e for e in bomb.cell_errors)
    assert status(grow)["q1"] == "correct" and status(grow)["q2"] in ("correct", "not reached")
    assert status(exit_)["q1"] == "correct" and status(exit_)["q2"] == "not reached"
    assert "the kernel died in code cell 2" in exit_.errors[0]
    assert raise_.score == TWO and "code cell 1: RuntimeError: boom" in raise_.cell_errors


def test_huge_output_is_dropped_not_kept(tmp_path):
    path = notebook(tmp_path / "loud.ipynb", "for i in range(200000):\n    print('x' * 100)", RIGHT_Q1)
    r = grade_submission(path, limits=Limits(timeout=60, memory_mb=2048, max_output_bytes=100_000))
    assert status(r)["q1"] == "correct"
    assert any("bytes of cell output were dropped" in e for e in r.errors)


def test_function_answer_that_loops_is_graded(tmp_path):
    path = notebook(tmp_path / "f.ipynb", "def gcd_test(a, b):\n    while True:\n        pass")
    r = grade_submission(path, limits=Limits(timeout=30, memory_mb=2048, call_seconds=0.5))
    q3 = next(q for q in r.questions if q.question == "q3")
    assert q3.score == 0 and "did not return within 0.5 s" in q3.feedback[0]


@pytest.mark.parametrize("content,reason", [
    (b"", "corrupt JSON at line 1"),
    (b"{\"cells\": [", "corrupt JSON"),
    (b"[1, 2]", "not a notebook (it has no list of cells)"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b"{\"cells\": [42], \"nbformat\": 4}", "cell 1 of the notebook is malformed"),
])
def test_files_that_are_not_notebooks_get_a_reason(tmp_path, content, reason):
    path = tmp_path / "sub.ipynb"
    path.write_bytes(content)
    r = grade_submission(path)
    assert r.report is None and reason in r.errors[0]
    r = grade_submission(path, lab="lab2")  # with --lab, every question is listed with the reason
    assert r.max_score == get_lab("lab2").max_score and r.score == 0
    assert {q.status for q in r.questions} == {"not reached"} and reason in r.questions[0].feedback[0]


def test_wrong_lab_unknown_lab_and_directories(tmp_path):
    lab3 = notebook(tmp_path / "x.ipynb", RIGHT_Q1, lab="lab3")
    r = grade_submission(lab3, lab="lab2")
    assert "this is the notebook of lab3 (its metadata says so), not of lab2" in r.errors[0]
    unknown = notebook(tmp_path / "y.ipynb", RIGHT_Q1, lab=None)
    assert "cannot tell which lab" in grade_submission(unknown).errors[0]
    assert "is not a file" in grade_submission(tmp_path).errors[0]
    assert "cannot read" in grade_submission(tmp_path / "absent.ipynb").errors[0]
    bad_meta = notebook(tmp_path / "z.ipynb", RIGHT_Q1, lab="lab99")
    assert "no lab named 'lab99'" in grade_submission(bad_meta).errors[0]


def _solution(name: str) -> dict:
    return json.loads((ROOT / "solutions" / name).read_text())


def test_edited_check_cells_and_tampering_change_nothing(tmp_path):
    """Check cells replaced by prints, wrong answers, and the student's kernel patching polylab's checks:
    the grade is what the answers deserve, computed by the grader's own, untouched checks."""
    nb = _solution("lab2_dependences.ipynb")
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        src = "".join(cell["source"])
        if "check" in tags:
            cell["source"] = "print('\u2714 correct')"
        if "solution" in tags and "sweep2d_distances" in src:
            cell["source"] = ("sweep2d_distances = {(1, 0), (0, -1)}\n"
                              "import polylab.grading.labs.lab2 as L\nfrom polylab.grading import right\n"
                              "L.check_q1 = lambda answer: right()\npolylab.grading.check = lambda *a: 'full marks'")
    path = tmp_path / "edited.ipynb"
    path.write_text(json.dumps(nb))
    r = grade_submission(path, limits=Limits(timeout=120))
    got = {q.question: q for q in r.questions}
    assert got["q1"].score == 0 and "(0, -1)" in got["q1"].feedback[0] and "source minus sink" in got["q1"].feedback[0]
    assert all(got[q].correct for q in ("q2", "q3", "q4", "q5", "q6")), r.to_json()


def test_reordered_cells_are_graded_with_reasons(tmp_path):
    nb = _solution("lab2_dependences.ipynb")
    nb["cells"] = list(reversed(nb["cells"]))
    path = tmp_path / "reversed.ipynb"
    path.write_text(json.dumps(nb))
    r = grade_submission(path, limits=Limits(timeout=120))
    assert r.report is not None and r.lab == "lab2"
    assert any("NameError" in e or "UsageError" in e for e in r.cell_errors)
    # the answers do not depend on earlier cells: they are defined (the magics' cells fail), so they count
    assert {q.question for q in r.questions if q.correct} >= {"q1", "q4", "q5"}


def test_no_process_of_a_submission_survives(tmp_path):
    """A background process in its own session (the weaker fence's tagging would miss one with a cleared
    environment; the sandbox's PID namespace does not): gone when grading returns."""
    marker = f"{os.getpid() % 1000 + 3000}.25"
    path = notebook(tmp_path / "bg.ipynb", "import subprocess\np = subprocess.Popen(['setsid', 'env', '-i', "
                                           f"'sleep', '{marker}'], start_new_session=True)", RIGHT_Q1)
    grade_submission(path, limits=Limits(timeout=30))
    assert _no_processes_named(f"sleep\0{marker}"), "a process of the submission outlived its grading"
