"""Grading fanned out on Dask (``polylab grade --dask``): the scores of the local grader, in submission order;
a worker killed mid-batch: its submission is run again on another worker and says so; a submission whose
worker is lost three times becomes an error row; the batch never hangs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from polylab.grading import get_lab
from polylab.toolchain import sandbox

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install "
                                                        "'polylab[cluster]')")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from polylab.grading import fanout  # noqa: E402 - after the skip
from polylab.grading.batch import Limits  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RIGHT = "sweep2d_distances = {(1, 0), (0, 1)}\n" + 'Y_waw = "[N] -> { S0[i, j] -> S0[i2, j2] : 0 <= i, j, i2, j2 < N and 2i + 4j = 2i2 + 4j2 and i < i2 }"'
#: the points RIGHT earns (lab 2: q1 and q2)
TWO = float(get_lab("lab2").question("q1").points + get_lab("lab2").question("q2").points)
needs_sandbox = pytest.mark.skipif(sandbox.unavailable() is not None,
                                   reason=f"no bubblewrap sandbox here: {sandbox.unavailable()}")


def _notebook(path: Path, *sources: str) -> Path:
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
             for s in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {"polylab": {"lab": "lab2"}}, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


@needs_sandbox
def test_dask_local_gives_the_scores_of_the_local_grader(course_run, tmp_path):
    """lab 1 and lab 2, solved and untouched, through ``--dask local:2``: the same scores, question by question,
    as the local grader gave them in the course run, and the same files."""
    paths = [ROOT / d / n for n in ("lab1_affine.ipynb", "lab2_dependences.ipynb") for d in ("solutions", "labs")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "polylab", "grade", *map(str, paths), "--dask", "local:2",
                           "--timeout", "600", "--json", str(tmp_path / "dask.json"), "--csv", str(tmp_path / "d.csv"),
                           "--gradescope", str(tmp_path / "gs")], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "grading: 100%" in done.stderr  # the progress bar
    local = {s["path"]: s for s in json.loads((course_run.out / "grades.json").read_text())["submissions"]}
    got = json.loads((tmp_path / "dask.json").read_text())["submissions"]
    assert [s["path"] for s in got] == [str(p) for p in paths]  # submission order
    for s in got:
        mine = local[s["path"]]
        assert [(q["name"], q["score"]) for q in s["questions"]] == [(q["name"], q["score"]) for q in mine["questions"]]
    assert len((tmp_path / "d.csv").read_text().splitlines()) == 5
    assert len(list((tmp_path / "gs").glob("*/results.json"))) == 4


def _started(client, index: int, count: int, timeout: float = 240) -> str:
    """The worker of the ``count``-th start of submission ``index`` (waits for it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        starts = [m["worker"] for _, m in client.get_events(fanout.TOPIC) if m.get("index") == index]
        if len(starts) >= count:
            return starts[count - 1]
        time.sleep(0.2)
    raise AssertionError(f"submission {index} did not start {count} time(s)")


def _kill_worker(client, address: str) -> None:
    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)


@needs_sandbox
def test_a_worker_killed_mid_batch(tmp_path):
    slow = _notebook(tmp_path / "slow.ipynb", "import time\ntime.sleep(30)", RIGHT)
    doomed = _notebook(tmp_path / "doomed.ipynb", "import time\ntime.sleep(30)", RIGHT)
    quick = _notebook(tmp_path / "quick.ipynb", RIGHT)
    client = fanout.local_client(2)
    try:
        def killer() -> None:
            _kill_worker(client, _started(client, 0, 1))       # slow.ipynb: once
            for k in (1, 2, 3):                                 # doomed.ipynb: every time it starts
                _kill_worker(client, _started(client, 1, k))

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        start = time.monotonic()
        results = fanout.grade_on_dask([slow, doomed, quick], client, limits=Limits(timeout=120), progress=False)
        took = time.monotonic() - start
        thread.join(timeout=5)
    finally:
        client.close()
        client.cluster.close()
    assert [Path(r.path).name for r in results] == ["slow.ipynb", "doomed.ipynb", "quick.ipynb"]
    slow_r, doomed_r, quick_r = results
    assert slow_r.score == TWO and any("retried on another worker after its worker was lost" in e for e in slow_r.errors)
    assert doomed_r.report is None and "its worker was lost 3 times" in doomed_r.errors[0]
    assert quick_r.score == TWO  # (if its result was still on a killed worker, Dask ran it again: said too)
    assert took < 900
