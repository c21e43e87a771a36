"""A determined student against ``polylab grade`` (issue 26): each attack is a notebook written here and
graded in one batch through the command line. A daemon in its own session with a cleared environment
rewriting the reports, a cell appending to the package, to the hidden cases and to the grader's folder, a
cell looking for the hidden cases everywhere it can reach, an isl answer that takes minutes to parse: all
fail, and the honest submission beside them is graded as usual. Also: SIGTERM / SIGHUP to ``polylab grade``
leaves no process behind, ``--no-sandbox`` is said in the table and the JSON, and ``grade`` refuses where
there is no sandbox."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import polylab
from polylab.grading import get_lab
from polylab.toolchain import sandbox

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(polylab.__file__).resolve().parent
HIDDEN_LABEL = "all coefficients zero, b != 0"  # a hidden case of lab2.q3 (instructor/hidden/lab2.py)
RIGHT = "sweep2d_distances = {(1, 0), (0, 1)}\n" + 'Y_waw = "[N] -> { S0[i, j] -> S0[i2, j2] : 0 <= i, j, i2, j2 < N and 2i + 4j = 2i2 + 4j2 and i < i2 }"'
#: the points RIGHT earns (lab 2: q1 and q2)
TWO = float(get_lab("lab2").question("q1").points + get_lab("lab2").question("q2").points)
CHECK_SECONDS = 15

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
needs_sandbox = pytest.mark.skipif(sandbox.unavailable() is not None,
                                   reason=f"no bubblewrap sandbox here: {sandbox.unavailable()}")


def _notebook(path: Path, lab: str, *sources: str) -> Path:
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
             for s in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {"polylab": {"lab": lab}}, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def _grade(args: list[str], cwd: Path, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    env = env or {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    return subprocess.run([sys.executable, "-m", "polylab", "grade", *args, "--no-progress"], cwd=cwd, env=env,
                          capture_output=True, text=True, **kw)


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _alive(marker: str) -> list[str]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmd:
                out.append(cmd.decode(errors="replace"))
    return out


def _outputs(executed: Path) -> str:
    nb = json.loads(executed.read_text())
    texts = [o.get("text", "") for c in nb["cells"] for o in c.get("outputs", []) if o.get("name") == "stdout"]
    return "".join("".join(t) if isinstance(t, list) else t for t in texts)


DAEMON = """import subprocess
script = 'for k in $(seq 60); do sleep 1; echo {{}} > {report}; echo {{}} > {table}; done; sleep {marker}'
subprocess.Popen(['setsid', 'env', '-i', 'sh', '-c', script], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"""

TAMPER = """import os, polylab
targets = [os.path.join(os.path.dirname(polylab.__file__), 'grading', 'checks.py'),
           os.path.join(os.path.dirname(polylab.__file__), 'grading', 'labs', 'lab2.py'),
           {hidden!r}, {repo_hidden!r}, {grader!r}]
for t in targets:
    try:
        with open(t, 'a') as f:
            f.write('\\nimport os; os.system("touch /tmp/pwned")\\n')
        print('TAMPER wrote', t)
    except OSError as e:
        print('TAMPER refused', e.errno)
"""

SNOOP = """import os, sys, json
label = {label!r}[::-1]  # written backwards: this notebook's own text must not count as a find
found = []
skip = ('/proc', '/sys', '/dev', '/usr', os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix))
def look(path, depth=0):
    if depth > 8 or len(found) > 20 or os.path.realpath(path).startswith(skip):
        return
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            if os.path.basename(path) in ('hidden', 'instructor', 'solutions'):
                found.append(path)
            for name in os.listdir(path):
                look(os.path.join(path, name), depth + 1)
        elif os.path.isfile(path) and os.path.getsize(path) < 2_000_000:
            with open(path, 'rb') as f:
                if label.encode() in f.read():
                    found.append(path)
    except OSError:
        pass
for pid in os.listdir('/proc'):
    if pid.isdigit():
        for what in ('cwd', 'root'):
            try:
                for name in os.listdir(f'/proc/{{pid}}/{{what}}'):
                    if name in ('hidden', 'instructor', 'solutions', 'grades.json'):
                        found.append(f'/proc/{{pid}}/{{what}}/{{name}}')
            except OSError:
                pass
        for what in ('environ', 'cmdline'):
            try:
                if label.encode() in open(f'/proc/{{pid}}/{{what}}', 'rb').read():
                    found.append(f'/proc/{{pid}}/{{what}}')
            except OSError:
                pass
package = os.path.dirname(__import__('polylab').__file__)
for start in ('..', '../..', package, os.path.dirname(package), '/'):
    look(os.path.abspath(start))
import polylab.grading as g
for guess in ('instructor/hidden', '../instructor/hidden', {repo_hidden_dir!r}, {hidden_dir!r}):
    if g.load_hidden(guess, g.get_lab('lab2')):
        found.append('load_hidden ' + guess)
print('FOUND', json.dumps(sorted(set(found))))
"""


def _bomb() -> str:
    """A 630-character isl set (17 disjunctions with mod) whose parsing takes about a minute."""
    primes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101,
              103, 107, 109, 113, 127, 131, 137, 139]
    parts = [f"(i mod {primes[2 * j]} = 1 or i mod {primes[2 * j + 1]} = 2)" for j in range(17)]
    return "[N] -> { S0[i] : 0 <= i < N and " + " and ".join(parts) + " }"


@needs_sandbox
def test_the_attacks_fail_and_the_honest_submission_is_graded(tmp_path):
    grader = tmp_path / "grader"
    subs = tmp_path / "subs"
    grader.mkdir()
    subs.mkdir()
    hidden = grader / "hidden"
    shutil.copytree(ROOT / "instructor" / "hidden", hidden)
    report, table_copy = grader / "grades.json", grader / "table.txt"
    marker = f"{os.getpid() % 1000 + 4000}.75"
    daemon = _notebook(subs / "daemon.ipynb", "lab2", RIGHT,
                       DAEMON.format(report=report, table=table_copy, marker=marker))
    tamper = _notebook(subs / "tamper.ipynb", "lab2", RIGHT, TAMPER.format(
        hidden=str(hidden / "lab2.py"), repo_hidden=str(ROOT / "instructor" / "hidden" / "lab2.py"),
        grader=str(grader / "planted.py")))
    snoop = _notebook(subs / "snoop.ipynb", "lab2", SNOOP.format(
        label=HIDDEN_LABEL[::-1], repo_hidden_dir=str(ROOT / "instructor" / "hidden"), hidden_dir=str(hidden)), RIGHT)
    bomb = _notebook(subs / "bomb.ipynb", "lab1", f"strided_domain = {_bomb()!r}\nstrided_count = 7")
    honest = _notebook(subs / "honest.ipynb", "lab2", RIGHT)
    before = {"package": _digest(PACKAGE), "hidden": _digest(hidden), "repo": _digest(ROOT / "instructor")}
    start = time.monotonic()
    done = _grade([*map(str, (daemon, tamper, snoop, bomb, honest)), "--jobs", "2", "--timeout", "90",
                   "--check-timeout", str(CHECK_SECONDS), "--hidden", str(hidden), "--json", str(report),
                   "--executed", "executed"], cwd=grader, timeout=1200)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-3000:]
    table_copy.write_text(done.stdout)
    time.sleep(3)  # a surviving daemon rewrites both files every second
    graded = json.loads(report.read_text())
    assert table_copy.read_text() == done.stdout
    assert graded["sandbox"] is True
    by_name = {Path(s["path"]).name: s for s in graded["submissions"]}
    for name, s in by_name.items():
        assert f"{name:<12}"[:12] in done.stdout and f"{s['score']:g}/{s['max_score']:g}" in done.stdout
    assert not _alive(f"sleep\0{marker}"), "the daemon outlived its sandbox"
    # the honest notebook and the others' right answers got their points
    assert by_name["honest.ipynb"]["score"] == TWO and by_name["daemon.ipynb"]["score"] == TWO
    assert by_name["tamper.ipynb"]["score"] == TWO and by_name["snoop.ipynb"]["score"] == TWO
    # nothing was written outside the sandboxes
    after = {"package": _digest(PACKAGE), "hidden": _digest(hidden), "repo": _digest(ROOT / "instructor")}
    assert after == before
    assert not (grader / "planted.py").exists()
    out = _outputs(grader / "executed" / "subs" / "tamper.ipynb")
    assert out.count("TAMPER refused") == 5 and "TAMPER wrote" not in out, out
    found = _outputs(grader / "executed" / "subs" / "snoop.ipynb")
    assert "FOUND []" in found, found
    # the exploding isl answer: zero with the reason, within the per-question limit; whichever bound stops it
    # first (the seconds, or the isl operations on a machine fast enough to reach them in time)
    q5 = next(q for q in by_name["bomb.ipynb"]["questions"] if q["name"] == "lab1.q5")
    assert q5["score"] == 0, q5
    assert (f"answer too complex to check within {CHECK_SECONDS:g} s" in q5["feedback"]
            or "answer too complex to check: too complex for checking lab1.q5: more than" in q5["feedback"]), q5
    assert by_name["bomb.ipynb"]["seconds"] < 90 + 60 + CHECK_SECONDS + 60
    assert took < 900
    # a second run of the honest notebook: the same score (nothing planted runs in the grader)
    again = _grade([str(honest), "--hidden", str(hidden), "--json", str(grader / "again.json")], cwd=grader,
                   timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((grader / "again.json").read_text())["submissions"][0]["score"] == TWO


def _descendants(pid: int) -> set[tuple[int, str]]:
    """(pid, start time) of every process below ``pid``."""
    parents: dict[int, list[tuple[int, str]]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            parents.setdefault(int(fields[1]), []).append((int(entry.name), fields[19]))
    out, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.add(child)
            todo.append(child[0])
    return out


def _running(proc: tuple[int, str]) -> bool:
    try:
        fields = Path(f"/proc/{proc[0]}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == proc[1] and fields[0] not in ("Z", "X")


@needs_sandbox
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_to_grade_kills_every_child(tmp_path, signum):
    marker = f"{os.getpid() % 1000 + 5000}.{signum}5"
    nb = _notebook(tmp_path / "slow.ipynb", "lab2", "import subprocess\nsubprocess.Popen(['setsid', 'env', '-i', "
                   f"'sleep', '{marker}'], start_new_session=True)", "while True:\n    pass")
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    proc = subprocess.Popen([sys.executable, "-m", "polylab", "grade", str(nb), str(nb), "--jobs", "2",
                             "--no-progress"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen: set[tuple[int, str]] = set()
    deadline = time.monotonic() + 180
    while not _alive(f"sleep\0{marker}") and time.monotonic() < deadline and proc.poll() is None:
        seen |= _descendants(proc.pid)
        time.sleep(0.2)
    assert _alive(f"sleep\0{marker}"), "the submission's daemon never started"
    seen |= _descendants(proc.pid)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err.decode()[-2000:]
    assert "every submission's processes were killed" in err.decode()
    for _ in range(40):
        left = [p for p in seen if _running(p)]
        if not left and not _alive(f"sleep\0{marker}"):
            break
        time.sleep(0.25)
    assert not left and not _alive(f"sleep\0{marker}"), left


@needs_sandbox
def test_no_sandbox_is_said_and_refusal_names_the_flag(tmp_path):
    nb = _notebook(tmp_path / "ok.ipynb", "lab2", RIGHT)
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    refused = _grade([str(nb)], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(PACKAGE.parent),
                                                   "POLYLAB_BWRAP": str(fake)}, timeout=120)
    assert refused.returncode == 2
    assert "user namespaces" in refused.stderr and "--no-sandbox" in refused.stderr
    assert "Traceback" not in refused.stderr
    done = _grade([str(nb), "--no-sandbox", "--json", "g.json"], cwd=tmp_path,
                  env={**os.environ, "PYTHONPATH": str(PACKAGE.parent), "POLYLAB_BWRAP": str(fake)}, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("WARNING: graded without the sandbox")
    graded = json.loads((tmp_path / "g.json").read_text())
    assert graded["sandbox"] is False and graded["submissions"][0]["sandbox"] is False
    assert graded["submissions"][0]["score"] == TWO
