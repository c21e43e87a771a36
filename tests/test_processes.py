"""Processes (issue 28, item 8): SIGTERM and SIGHUP to ``polylab run``, ``polylab bench`` and a notebook magic end
the programs they run, as SIGINT does; the process itself then ends by the signal.

Each test starts the entry point in a process of its own with a build cache in a temporary folder, waits
until a program built there runs (its command line starts with the cache's path), sends the signal, and
checks that the entry point ended by it and that no program of the cache is left running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from polylab import processes
from polylab import toolchain as tc

pytestmark = pytest.mark.skipif(tc.c_compiler() is None or not sys.platform.startswith("linux"),
                                reason="needs a C compiler and Linux's /proc")

ROOT = Path(__file__).resolve().parent.parent
#: a kernel that runs for minutes at these sizes
LONG = "double a[N];\nfor (t = 0; t < T; t++)\n  for (i = 0; i < N; i++)\n    a[i] = a[i] * 0.5 + 1.0;\n"
PARAMS = ["--param", "N=100000", "--param", "T=1000000"]


def running_from(folder: Path) -> list[int]:
    """The pids of the processes whose program lies in ``folder``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):  # the process ended while it was read
            continue
        if argv0.startswith(str(folder)) and state != "Z":
            out.append(int(entry.name))
    return out


def signalled_while_running(argv: list[str], cache: Path, signum: int, tmp: Path) -> int:
    """Start ``argv``, send ``signum`` once a program of ``cache`` runs, and return its exit status after
    checking that nothing of ``cache`` still runs."""
    env = {**os.environ, "POLYLAB_CACHE": str(cache), "PYTHONPATH": str(ROOT), "POLYLAB_PROGRESS": "0"}
    proc = subprocess.Popen(argv, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not running_from(cache):
            assert proc.poll() is None, f"ended before running a program: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no program started"
            time.sleep(0.1)
        time.sleep(0.3)
        proc.send_signal(signum)
        status = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for _ in range(50):  # a killed program may take a moment to leave the process table
        if not running_from(cache):
            break
        time.sleep(0.1)
    left = running_from(cache)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"programs left running after {signal.Signals(signum).name}: {left}"
    return status


SIGNALS = [signal.SIGTERM, signal.SIGHUP]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One build cache for the module: each program is compiled once."""
    return tmp_path_factory.mktemp("cache")


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_polylab_run(signum, tmp_path, cache):
    (tmp_path / "long.c").write_text(LONG)
    argv = [sys.executable, "-m", "polylab", "run", "long.c", *PARAMS, "--timeout", "600", "--repeat", "1"]
    assert signalled_while_running(argv, cache, signum, tmp_path) == -signum


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_polylab_bench(signum, tmp_path, cache):
    (tmp_path / "long.c").write_text(LONG)
    argv = [sys.executable, "-m", "polylab", "bench", "long.c", "--schedules", "original", *PARAMS,
            "--verify-param", "N=4", "--verify-param", "T=3", "--timeout", "600", "--repeat", "1", "--no-progress"]
    assert signalled_while_running(argv, cache, signum, tmp_path) == -signum


MAGIC = f"""
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "polylab")
shell.run_cell_magic("scop", "-q", {LONG!r})
shell.run_cell_magic("schedule", "-q", "original")
shell.run_line_magic("polyrun", "--param N=100000 --param T=1000000 --repeat 1 --timeout 600")
"""


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_magic(signum, tmp_path, cache):
    status = signalled_while_running([sys.executable, "-c", MAGIC], cache, signum, tmp_path)
    assert status == -signum


def test_outside_the_block_nothing_changes_and_a_process_that_ignores_sighup_keeps_ignoring_it():
    before = signal.getsignal(signal.SIGTERM)
    with processes.children_end_with_us():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with processes.children_end_with_us():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, old)
