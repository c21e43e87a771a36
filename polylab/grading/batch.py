"""The batch grader behind ``polylab grade``: every submission in its own process, with a fresh kernel, under
a time and a memory limit; then the pristine checks on the answers its cells produced.

For each submission:

1. the file is read here, without running anything: a file that is not a notebook, corrupt JSON, a
   notebook of another lab or one that is too large is graded 0 with the reason;
2. a worker process (:mod:`polylab.grading.worker`) runs the code cells, in the notebook's order, in a fresh
   kernel, under ``RLIMIT_AS`` (the memory limit, inherited by the kernel and everything it starts) and the
   time limit; after every cell the kernel writes the answers defined so far (:mod:`~polylab.grading.kernel_side`);
3. every process of the submission is killed at the end: the worker's process group, the kernel's, and
   every process that carries the submission's token in its environment (a compiled ``while (1);`` that
   started its own session included);
4. the answers are decoded here (:mod:`~polylab.grading.codec`) and the lab's checks run here, in the
   grader's own process, which never ran a line of the student's code; the student's check cells (edited,
   deleted or reordered) change nothing. Hidden cases are added to the function questions.

A question whose answer was never defined scores 0: ``missing`` when the run reached the end, ``not reached``
(with the reason: time limit, kernel death...) when it stopped early.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from tqdm import tqdm

from polylab.errors import PolylabError
from polylab.grading import codec
from polylab.grading.lab import Case, Lab, Question
from polylab.grading.registry import get_lab, lab_names, load_hidden
from polylab.grading.verdict import Report, Result

#: the environment variable that marks every process of one submission
TOKEN_VARIABLE = "POLYLAB_GRADE_TOKEN"
#: notebooks larger than this are not run
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
#: seconds the worker may run past the cells' time limit (the final snapshot, the kernel's shutdown)
WORKER_GRACE = 60.0
#: seconds spent killing a submission's processes until none is left
KILL_SECONDS = 15.0


@dataclass(frozen=True)
class Limits:
    """Per-submission limits: ``timeout`` seconds for the student's cells, ``memory_mb`` of address space
    for each process (None: no limit), ``max_output_bytes`` of cell output kept, ``call_seconds`` per call
    of a function answer."""

    timeout: float = 300.0
    memory_mb: int | None = 4096
    max_output_bytes: int = 2_000_000
    call_seconds: float = 5.0


@dataclass(frozen=True)
class SubmissionResult:
    """One graded submission: its lab (None when it could not be told), the report of every question, the
    reasons it lost points without an answer being wrong (``errors``) and the seconds it took."""

    path: str
    lab: str | None
    report: Report | None
    errors: tuple[str, ...] = ()
    seconds: float = 0.0
    cell_errors: tuple[str, ...] = field(default=())

    @property
    def score(self) -> float:
        return self.report.score if self.report else 0.0

    @property
    def max_score(self) -> float:
        return self.report.max_score if self.report else 0.0

    @property
    def questions(self) -> tuple[Result, ...]:
        return self.report.results if self.report else ()

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "lab": self.lab, "score": self.score, "max_score": self.max_score,
                "questions": [{"name": r.name, "score": r.score, "max": r.max, "status": r.status,
                               "feedback": "\n".join(r.feedback), "hidden_cases": r.hidden_cases}
                              for r in self.questions],
                "errors": list(self.errors), "cell_errors": list(self.cell_errors), "seconds": self.seconds}


# -- reading a submission ----------------------------------------------------------------------------------

def read_notebook(path: Path) -> dict[str, Any]:
    """The submission as a notebook dictionary (outputs dropped), or a PolylabError saying why it is not one."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise PolylabError(f"cannot read {path}: {exc.strerror}") from None
    if not path.is_file():
        raise PolylabError(f"{path} is not a file")
    if size > MAX_NOTEBOOK_BYTES:
        raise PolylabError(f"the file is {size / 2**20:.0f} MB; notebooks over {MAX_NOTEBOOK_BYTES // 2**20} MB "
                           "are not run", hint="clear the outputs (Edit > Clear Outputs of All Cells) and save")
    raw = path.read_bytes()
    try:
        nb = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise PolylabError("the file is not a notebook: it is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise PolylabError(f"the file is not a notebook: corrupt JSON at line {exc.lineno}, column {exc.colno} "
                           f"({exc.msg})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise PolylabError("the file is JSON but not a notebook (it has no list of cells)")
    if nb.get("nbformat", 4) < 4:
        raise PolylabError(f"the notebook is in the old format {nb.get('nbformat')}",
                           hint="open and save it with a current Jupyter")
    cells = []
    for k, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or "cell_type" not in cell:
            raise PolylabError(f"cell {k + 1} of the notebook is malformed")
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        clean = {"cell_type": cell["cell_type"], "metadata": cell.get("metadata") or {}, "source": src}
        if cell["cell_type"] == "code":
            clean.update(outputs=[], execution_count=None)
        elif cell["cell_type"] not in ("markdown", "raw"):
            clean = {"cell_type": "raw", "metadata": {}, "source": src}
        cells.append(clean)
    return {"cells": cells, "metadata": nb.get("metadata") or {}, "nbformat": 4, "nbformat_minor": 5}


def detect_lab(nb: Mapping[str, Any], path: Path, wanted: str | None) -> Lab:
    """The lab of ``nb``: its metadata ``{"polylab": {"lab": NAME}}``, else the lab whose solved notebook
    has this file's name, else the lab its check cells name. With ``wanted`` (``--lab``), a notebook that
    says it belongs to another lab is refused."""
    meta = nb.get("metadata", {}).get("polylab", {})
    declared = meta.get("lab") if isinstance(meta, dict) else None
    if wanted is not None:
        if declared and declared != wanted:
            raise PolylabError(f"this is the notebook of {declared} (its metadata says so), not of {wanted}",
                               hint="grade it with --lab " + str(declared) + ", or check the submission")
        return get_lab(wanted)
    if declared:
        return get_lab(str(declared))
    labs = [get_lab(n) for n in lab_names()]
    by_file = [lab for lab in labs if lab.notebook == path.name]
    if by_file:
        return by_file[0]
    text = "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "code")
    named = [lab for lab in labs if f'check("{lab.name}"' in text or f"check('{lab.name}'" in text]
    if len(named) == 1:
        return named[0]
    raise PolylabError("cannot tell which lab this notebook is (no polylab metadata, an unknown file name, "
                       "no check cell naming a lab)", hint="give --lab NAME")


# -- processes -------------------------------------------------------------------------------------------

def _limit_memory(memory_mb: int | None):  # noqa: ANN202 - a preexec_fn
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_mb is not None:
            limit = memory_mb * 1024 * 1024
            hard = resource.getrlimit(resource.RLIMIT_AS)[1]
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def tagged_processes(token: str) -> list[int]:
    """The processes whose environment holds ``TOKEN_VARIABLE=token`` (Linux ``/proc``; empty elsewhere)."""
    mark = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if mark in env.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_submission(token: str, group: int | None) -> None:
    """Kill the worker's process group and every process tagged with ``token``, until none is left."""
    if group is not None:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + KILL_SECONDS  # a loaded machine may take a while to deliver the kills
    while time.monotonic() < deadline:
        pids = [p for p in tagged_processes(token) if p != os.getpid()]
        if not pids:
            return
        for pid in pids:
            for kill in (lambda: os.killpg(os.getpgid(pid), signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except (ProcessLookupError, PermissionError):
                    pass
        time.sleep(0.05)


@dataclass(frozen=True)
class Workspace:
    """Where the batch keeps its files: one directory per submission and a build cache for the kernels."""

    root: Path

    def submission(self) -> Path:
        d = Path(tempfile.mkdtemp(prefix="sub-", dir=self.root))
        (d / "work").mkdir()
        (d / "grader").mkdir()
        return d


def run_worker(nb: dict[str, Any], lab: Lab, hidden: Mapping[str, Sequence[Case]], limits: Limits,
               space: Workspace, executed: Path | None = None
               ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Run the notebook in a worker; ``(run result, snapshot)``, each None when it was not written.
    ``executed``: where the worker writes the notebook with the outputs its cells produced (within the
    output limit), for a person or a test to read."""
    d = space.submission()
    token = uuid.uuid4().hex
    notebook = d / "grader" / "submission.ipynb"
    notebook.write_text(json.dumps(nb), encoding="utf-8")
    functions = {q.answers[0]: [codec.encode_args(c.args) for c in (*q.cases, *hidden.get(q.name, ()))]
                 for q in lab.questions if q.is_function}
    job = {"notebook": str(notebook), "workdir": str(d / "work"), "snapshot": str(d / "grader" / "snapshot.json"),
           "result": str(d / "grader" / "result.json"), "timeout": limits.timeout, "names": list(lab.answer_names),
           "functions": functions, "call_seconds": limits.call_seconds, "max_output_bytes": limits.max_output_bytes,
           "executed": str(executed) if executed is not None else None}
    (d / "grader" / "job.json").write_text(json.dumps(job), encoding="utf-8")
    env = {**os.environ, TOKEN_VARIABLE: token, "POLYLAB_CACHE": str(space.root / "kernel-cache"),
           "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           "OMP_WAIT_POLICY": "passive"}  # parallel jobs share the cores: OpenMP threads must not spin
    log = d / "grader" / "worker.log"  # a file, not a pipe: a process the student left behind may hold it open
    with open(log, "wb") as log_file:
        proc = subprocess.Popen([sys.executable, "-m", "polylab.grading.worker", str(d / "grader" / "job.json")],
                                cwd=d / "work", env=env, preexec_fn=_limit_memory(limits.memory_mb),
                                start_new_session=True, stdin=subprocess.DEVNULL, stdout=log_file,
                                stderr=subprocess.STDOUT)
    try:
        proc.wait(timeout=limits.timeout + WORKER_GRACE)
    except subprocess.TimeoutExpired:
        pass
    finally:
        kill_submission(token, proc.pid)
        proc.wait()
    result = _read_json(Path(job["result"]))
    if result is None:
        err = log.read_bytes()[-4000:]
        tail = [ln for ln in err.decode(errors="replace").strip().splitlines() if ln.strip()][-1:]
        result = {"stopped": "the grader's worker stopped before it finished (memory limit or time limit)"
                  + (f": {tail[0][:200]}" if tail else ""), "cells_run": 0, "events": [], "cell_errors": [],
                  "final_snapshot": False}
    snapshot = _read_json(Path(job["snapshot"]))
    shutil.rmtree(d, ignore_errors=True)
    return result, snapshot


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# -- grading the answers ----------------------------------------------------------------------------------

_CHECK_LOCK = threading.Lock()  # isl and the engine's caches are not shared between threads


def grade_answers(lab: Lab, run: Mapping[str, Any], snapshot: Mapping[str, Any] | None,
                  hidden: Mapping[str, Sequence[Case]]) -> Report:
    """The report of ``lab`` for the answers in ``snapshot`` (None: none could be read) of a run."""
    stopped = run.get("stopped")
    answers = (snapshot or {}).get("answers", {})
    unreadable = (snapshot or {}).get("unreadable", {})
    calls = (snapshot or {}).get("calls", {})
    results = []
    with _CHECK_LOCK:
        for q in lab.questions:
            results.append(_grade_one(lab, q, answers, unreadable, calls, hidden.get(q.name, ()), stopped))
    return Report(lab.name, tuple(results))


def _grade_one(lab: Lab, q: Question, answers: Mapping[str, Any], unreadable: Mapping[str, str],
               calls: Mapping[str, Any], hidden: Sequence[Case], stopped: str | None) -> Result:
    bad = [f"{n}: {unreadable[n]}" for n in q.answers if n in unreadable]
    if bad:
        return Result(lab.name, q.name, q.title, 0.0, float(q.points), "wrong", tuple(bad))
    absent = [n for n in q.answers if n not in answers]
    if absent and stopped:
        return q.not_reached(lab.name, f"{', '.join(absent)} not defined when the run stopped: {stopped}")
    if q.is_function and not absent:
        name = q.answers[0]
        if name in calls:
            cases = [(c, False) for c in q.cases] + [(c, True) for c in hidden]
            return q.grade({name: codec.decode_calls(name, cases, calls[name])}, lab.name)
        if isinstance(answers[name], dict) and answers[name].get("$") == "function":
            return q.not_reached(lab.name, f"{name} is defined but was not called on the cases: "
                                           f"{stopped or 'the final check could not run'}")
    ns = {n: codec.decode(answers[n]) for n in q.answers if n in answers}
    return q.grade(ns, lab.name)


def grade_submission(path: str | Path, *, lab: str | None = None, limits: Limits = Limits(),
                     hidden_dir: str | Path | None = None, space: Workspace | None = None,
                     executed: str | Path | None = None) -> SubmissionResult:
    """Grade one submission (never raises for anything the submission does; see the module text).
    ``executed``: a file to write the executed notebook to (its outputs as the student's cells made them)."""
    start = time.monotonic()
    p = Path(path)
    own_space = space is None
    space = space or Workspace(Path(tempfile.mkdtemp(prefix="polylab-grade-")))
    try:
        try:
            nb = read_notebook(p)
            which = detect_lab(nb, p, lab)
        except PolylabError as err:
            known = get_lab(lab) if lab is not None else None
            report = Report(known.name, tuple(q.not_reached(known.name, _reason(err)) for q in known.questions)) \
                if known is not None else None
            return SubmissionResult(str(path), lab, report, (_reason(err),), round(time.monotonic() - start, 2))
        hidden = load_hidden(hidden_dir, which)
        run, snapshot = run_worker(nb, which, hidden, limits, space, Path(executed) if executed else None)
        report = grade_answers(which, run, snapshot, hidden)
        errors = [run["stopped"]] if run.get("stopped") else []
        errors += [e for e in run.get("events", []) if e not in errors]
        if run.get("dropped_output_bytes"):
            errors.append(f"{run['dropped_output_bytes']} bytes of cell output were dropped (output limit)")
        cell_errors = tuple(f"code cell {e['cell']}: {e['error']}" for e in run.get("cell_errors", []))
        return SubmissionResult(str(path), which.name, report, tuple(errors), round(time.monotonic() - start, 2),
                                cell_errors)
    finally:
        if own_space:
            shutil.rmtree(space.root, ignore_errors=True)


def executed_path(directory: str | Path | None, submission: str | Path) -> Path | None:
    """Where the executed copy of ``submission`` goes in ``directory``: ``<parent folder>/<file name>``
    (so ``solutions/lab1.ipynb`` and ``labs/lab1.ipynb`` do not overwrite each other)."""
    if directory is None:
        return None
    p = Path(submission)
    return Path(directory) / (p.parent.name or "_") / p.name


def _reason(err: PolylabError) -> str:
    return err.message + (f" ({err.hint})" if err.hint else "")


def grade_batch(paths: Sequence[str | Path], *, lab: str | None = None, limits: Limits = Limits(), jobs: int = 1,
                hidden_dir: str | Path | None = None, progress: bool = True,
                executed_dir: str | Path | None = None) -> list[SubmissionResult]:
    """Grade every submission, ``jobs`` at a time, with a progress bar; results in the order of ``paths``.
    ``executed_dir``: write each executed notebook there, as ``<parent folder>/<file name>`` of its path."""
    if lab is not None:
        get_lab(lab)  # an unknown --lab is the instructor's mistake: say so before running anything
    root = Path(tempfile.mkdtemp(prefix="polylab-grade-"))
    space = Workspace(root)
    out: dict[int, SubmissionResult] = {}
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool, \
                tqdm(total=len(paths), desc="grading", unit="notebook", disable=not progress,
                     file=sys.stderr) as bar:
            futures = {pool.submit(grade_submission, p, lab=lab, limits=limits, hidden_dir=hidden_dir,
                                   space=space, executed=executed_path(executed_dir, p)): k
                       for k, p in enumerate(paths)}
            for fut in as_completed(futures):
                k = futures[fut]
                try:
                    out[k] = fut.result()
                except Exception as exc:  # a bug in the grader: this submission says so, the batch goes on
                    out[k] = SubmissionResult(str(paths[k]), lab, None,
                                              (f"internal error of the grader: {type(exc).__name__}: {exc}",))
                bar.update(1)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return [out[k] for k in range(len(paths))]


__all__ = ["Limits", "MAX_NOTEBOOK_BYTES", "SubmissionResult", "TOKEN_VARIABLE", "Workspace", "detect_lab",
           "executed_path", "grade_answers", "grade_batch", "grade_submission", "kill_submission", "read_notebook",
           "run_worker", "tagged_processes"]
