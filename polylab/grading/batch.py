"""The batch grader behind ``polylab grade``: every submission in its own sandbox, with a fresh kernel, under a
time and a memory limit; then the pristine checks, under bounds, on the answers its cells produced.

For each submission:

1. the file is read here, without running anything: a file that is not a notebook, corrupt JSON, a
   notebook of another lab or one that is too large is graded 0 with the reason;
2. a worker (:mod:`polylab.grading.worker`) runs the code cells, in the notebook's order, in a fresh kernel,
   inside a bubblewrap sandbox (:mod:`polylab.toolchain.sandbox`: its own PID namespace, no network, the
   system and Python read-only, a private ``/tmp``, one writable folder holding the submission only; the
   grader's folder, its reports, the hidden cases and ``solutions/`` are not there) under the memory limit
   and the time limit; after every cell the kernel writes the answers defined so far
   (:mod:`~polylab.grading.kernel_side`) into that folder, as JSON;
3. the sandbox ends: every process the submission started dies with it (daemons in their own sessions
   with a cleared environment included);
4. then, and only then, the grader reads the answers as data (a regular file, no link followed, a size
   cap; JSON, isl values as text) and the lab's checks run on them in a judge process
   (:mod:`~polylab.grading.judge`): isl's operation limit and a wall-clock limit per question, killed past
   it ("answer too complex to check within N s"). The student's check cells (edited, deleted or reordered)
   change nothing. Hidden cases (instructor files, :func:`~polylab.grading.registry.load_hidden`) are added to
   the function questions; their inputs enter the sandbox only for the final calls, their expected answers
   never.

A question whose answer was never defined scores 0: ``missing`` when the run reached the end, ``not reached``
(with the reason: time limit, kernel death...) when it stopped early. Where user namespaces are not
available, :func:`grade_batch` refuses unless ``Limits(sandbox=False)`` accepts the weaker fence (the
submission's processes in their own session, tagged and killed, but seeing the machine's files, processes
and network), which every report then says.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from tqdm import tqdm

import polylab.grading as _grading_package
from polylab.errors import PolylabError
from polylab.grading import codec
from polylab.grading.judge import Judges, result_from_json, result_json
from polylab.grading.lab import Case, Lab
from polylab.grading.registry import all_labs, get_lab, lab_names, load_hidden
from polylab.grading.verdict import Report, Result
from polylab.toolchain import sandbox

#: notebooks larger than this are not run
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
#: seconds the worker may run past the cells' time limit (starting the kernel, the final snapshot)
WORKER_GRACE = 60.0
#: the largest answers file read back from a sandbox
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
#: the folder, inside the submission's writable folder, where the worker and the kernel leave their data
OUT = ".polylab"


@dataclass(frozen=True)
class Limits:
    """Per-submission limits: ``timeout`` seconds for the student's cells, ``memory_mb`` of address space
    for each process (None: no limit), ``max_output_bytes`` of cell output kept, ``call_seconds`` per call
    of a function answer, ``check_seconds`` per question for the checks (and ``check_operations`` isl
    operations; None: polylab's default), ``sandbox``: each submission in a bubblewrap sandbox (False: the
    weaker fence, see the module text)."""

    timeout: float = 300.0
    memory_mb: int | None = 4096
    max_output_bytes: int = 2_000_000
    call_seconds: float = 5.0
    check_seconds: float = 60.0
    check_operations: int | None = None
    sandbox: bool = True


@dataclass(frozen=True)
class SubmissionResult:
    """One graded submission: its lab (None when it could not be told), the report of every question, the
    reasons it lost points without an answer being wrong (``errors``), the seconds it took and whether it
    ran in a sandbox."""

    path: str
    lab: str | None
    report: Report | None
    errors: tuple[str, ...] = ()
    seconds: float = 0.0
    cell_errors: tuple[str, ...] = field(default=())
    sandbox: bool = True

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
                "errors": list(self.errors), "cell_errors": list(self.cell_errors), "seconds": self.seconds,
                "sandbox": self.sandbox}

    def to_data(self) -> dict[str, Any]:
        """Everything, as plain data (what a Dask worker sends back; :meth:`from_data` rebuilds it)."""
        return {"path": self.path, "lab": self.lab, "errors": list(self.errors), "seconds": self.seconds,
                "cell_errors": list(self.cell_errors), "sandbox": self.sandbox,
                "report": None if self.report is None else [result_json(r) for r in self.report.results]}

    @classmethod
    def from_data(cls, d: Mapping[str, Any]) -> SubmissionResult:
        results = d.get("report")
        report = None if results is None else Report(str(d["lab"]), tuple(result_from_json(r) for r in results))
        return cls(str(d["path"]), d.get("lab"), report, tuple(d.get("errors", ())), float(d.get("seconds", 0)),
                   tuple(d.get("cell_errors", ())), bool(d.get("sandbox", True)))


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


# -- running a submission ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workspace:
    """Where the batch keeps its files: one writable folder per submission."""

    root: Path

    def submission(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="sub-", dir=self.root))


def _remove(path: Path) -> None:
    """Remove a submission's folder, whatever its permissions (a student may have made folders unwritable)."""
    def unlock(func, target, _):  # noqa: ANN001 - shutil's onerror signature
        try:
            os.chmod(os.path.dirname(target), stat.S_IRWXU)
            os.chmod(target, stat.S_IRWXU)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=unlock)


def package_dir() -> Path:
    """The folder of the polylab package that runs (the one the sandboxes see, read-only)."""
    return Path(_grading_package.__file__).resolve().parent.parent


def sandbox_for(folder: Path, limits: Limits) -> sandbox.Sandbox:
    """The sandbox of one submission's run: ``folder`` writable, polylab's package read-only."""
    package = package_dir()
    inside = sandbox.INSIDE if limits.sandbox else str(folder)
    env = {"PYTHONPATH": str(package.parent), "POLYLAB_CACHE": f"{inside}/.cache/polylab",
           "XDG_CACHE_HOME": f"{inside}/.cache", "MPLCONFIGDIR": f"{inside}/.cache/matplotlib",
           "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           "OMP_WAIT_POLICY": "passive"}  # parallel jobs share the cores: OpenMP threads must not spin
    if "OMP_NUM_THREADS" in os.environ:
        env["OMP_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"]
    return sandbox.Sandbox(workdir=folder, timeout=limits.timeout + WORKER_GRACE, memory_mb=limits.memory_mb,
                           output_bytes=64 * 1024, env=env, readonly=(package,), isolated=limits.sandbox)


def run_worker(nb: dict[str, Any], lab: Lab, hidden: Mapping[str, Sequence[Case]], limits: Limits,
               space: Workspace, executed: Path | None = None
               ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Run the notebook in a worker, in a sandbox; ``(run result, snapshot)``, read as data after the sandbox
    is gone (each None when it was not written). ``executed``: where to copy the notebook with the outputs
    its cells produced (within the output limit), for a person or a test to read."""
    folder = space.submission()
    try:
        text = json.dumps(nb)
        (folder / "submission.ipynb").write_text(text, encoding="utf-8")
        functions = {q.answers[0]: [codec.encode_args(c.args) for c in (*q.cases, *hidden.get(q.name, ()))]
                     for q in lab.questions if q.is_function}
        job = {"notebook": "submission.ipynb", "out": OUT, "timeout": limits.timeout,
               "names": list(lab.answer_names), "functions": functions, "call_seconds": limits.call_seconds,
               "max_output_bytes": limits.max_output_bytes, "executed": executed is not None}
        done = sandbox.run(sandbox_for(folder, limits), [sys.executable, "-m", "polylab.grading.worker", "-"],
                           stdin=json.dumps(job).encode())
        result = _json_of(sandbox.read_output(folder, f"{OUT}/result.json", 1 << 20))
        if result is None:
            tail = [ln for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()][-1:]
            why = "time limit" if done.timed_out else "memory limit, or a crash"
            result = {"stopped": f"the grader's worker stopped before it finished ({why})"
                      + (f": {tail[0][:200]}" if tail else ""), "cells_run": 0, "events": [], "cell_errors": [],
                      "final_snapshot": False}
        snapshot = _json_of(sandbox.read_output(folder, f"{OUT}/snapshot.json", MAX_SNAPSHOT_BYTES))
        if executed is not None:
            data = sandbox.read_output(folder, f"{OUT}/executed.ipynb", len(text) + 2 * limits.max_output_bytes
                                       + (1 << 20))
            if data is not None:
                executed.parent.mkdir(parents=True, exist_ok=True)
                executed.write_bytes(data)
        return result, snapshot
    finally:
        _remove(folder)


def _json_of(data: bytes | None) -> dict[str, Any] | None:
    try:
        value = json.loads(data) if data is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# -- grading the answers ----------------------------------------------------------------------------------

def grade_answers(lab: Lab, run: Mapping[str, Any], snapshot: Mapping[str, Any] | None, judges: Judges) -> Report:
    """The report of ``lab`` for the answers in ``snapshot`` (None: none could be read) of a run, each
    question checked by a judge under the per-question bounds."""
    snap = snapshot or {}
    request = {"answers": snap.get("answers", {}), "unreadable": snap.get("unreadable", {}),
               "calls": snap.get("calls", {}), "stopped": run.get("stopped")}
    return Report(lab.name, judges.grade(lab, request))


def grade_submission(path: str | Path, *, lab: str | None = None, limits: Limits = Limits(),
                     hidden_dir: str | Path | None = None, space: Workspace | None = None,
                     executed: str | Path | None = None, judges: Judges | None = None) -> SubmissionResult:
    """Grade one submission (never raises for anything the submission does; see the module text).
    ``executed``: a file to write the executed notebook to (its outputs as the student's cells made them)."""
    start = time.monotonic()
    p = Path(path)
    own_space, own_judges = space is None, judges is None
    space = space or Workspace(Path(tempfile.mkdtemp(prefix="polylab-grade-")))
    judges = judges or Judges(hidden_dir, seconds=limits.check_seconds, memory_mb=limits.memory_mb,
                              operations=limits.check_operations)
    try:
        try:
            nb = read_notebook(p)
            which = detect_lab(nb, p, lab)
        except PolylabError as err:
            known = get_lab(lab) if lab is not None else None
            report = Report(known.name, tuple(q.not_reached(known.name, _reason(err)) for q in known.questions)) \
                if known is not None else None
            return SubmissionResult(str(path), lab, report, (_reason(err),), round(time.monotonic() - start, 2),
                                    sandbox=limits.sandbox)
        hidden = load_hidden(hidden_dir, which)
        run, snapshot = run_worker(nb, which, hidden, limits, space, Path(executed) if executed else None)
        report = grade_answers(which, run, snapshot, judges)
        errors = [run["stopped"]] if run.get("stopped") else []
        errors += [e for e in run.get("events", []) if e not in errors]
        if run.get("dropped_output_bytes"):
            errors.append(f"{run['dropped_output_bytes']} bytes of cell output were dropped (output limit)")
        cell_errors = tuple(f"code cell {e['cell']}: {e['error']}" for e in run.get("cell_errors", []))
        return SubmissionResult(str(path), which.name, report, tuple(str(e) for e in errors),
                                round(time.monotonic() - start, 2), cell_errors, limits.sandbox)
    finally:
        if own_judges:
            judges.close()
        if own_space:
            shutil.rmtree(space.root, ignore_errors=True)


def executed_path(directory: str | Path | None, submission: str | Path) -> Path | None:
    """Where the executed copy of ``submission`` goes in ``directory`` (relative to the current folder):
    ``<parent folder>/<file name>`` (so ``solutions/lab1.ipynb`` and ``labs/lab1.ipynb`` do not overwrite
    each other)."""
    if directory is None:
        return None
    p = Path(submission)
    return Path(directory).resolve() / (p.parent.name or "_") / p.name


def _reason(err: PolylabError) -> str:
    return err.message + (f" ({err.hint})" if err.hint else "")


def check_setup(limits: Limits, hidden_dir: str | Path | None, lab: str | None) -> None:
    """Refuse, before running anything, what would make the whole batch wrong: no sandbox (unless the
    weaker fence was accepted), an unknown ``--lab``, a broken hidden-cases file."""
    if limits.sandbox:
        why = sandbox.unavailable()
        if why is not None:
            raise PolylabError(f"cannot sandbox the submissions: {why}",
                               hint="or pass --no-sandbox to accept the weaker fence (each submission's processes "
                                    "are still killed at the end, but they can see this machine's files, "
                                    "processes and network)")
    if lab is not None:
        get_lab(lab)  # an unknown --lab is the instructor's mistake: say so before running anything
    for known in all_labs():
        load_hidden(hidden_dir, known)


def grade_batch(paths: Sequence[str | Path], *, lab: str | None = None, limits: Limits = Limits(), jobs: int = 1,
                hidden_dir: str | Path | None = None, progress: bool = True,
                executed_dir: str | Path | None = None) -> list[SubmissionResult]:
    """Grade every submission, ``jobs`` at a time, with a progress bar; results in the order of ``paths``.
    ``executed_dir``: write each executed notebook there, as ``<parent folder>/<file name>`` of its path.
    On any interruption (Ctrl-C, or SIGTERM / SIGHUP turned into an exception by the caller) every sandbox
    and every judge is killed before the exception goes on."""
    check_setup(limits, hidden_dir, lab)
    root = Path(tempfile.mkdtemp(prefix="polylab-grade-"))
    space = Workspace(root)
    judges = Judges(hidden_dir, seconds=limits.check_seconds, memory_mb=limits.memory_mb,
                    operations=limits.check_operations)
    out: dict[int, SubmissionResult] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    futures: dict[Any, int] = {}
    try:
        with tqdm(total=len(paths), desc="grading", unit="notebook", disable=not progress, file=sys.stderr) as bar:
            futures = {pool.submit(grade_submission, p, lab=lab, limits=limits, hidden_dir=hidden_dir, space=space,
                                   executed=executed_path(executed_dir, p), judges=judges): k
                       for k, p in enumerate(paths)}
            for fut in as_completed(futures):
                k = futures[fut]
                try:
                    out[k] = fut.result()
                except Exception as exc:  # a bug in the grader: this submission says so, the batch goes on
                    out[k] = SubmissionResult(str(paths[k]), lab, None,
                                              (f"internal error of the grader: {type(exc).__name__}: {exc}",),
                                              sandbox=limits.sandbox)
                bar.update(1)
    except BaseException:  # Ctrl-C, SIGTERM / SIGHUP (Stopped), a bug: no sandbox or judge may outlive the batch
        pool.shutdown(wait=False, cancel_futures=True)
        judges.close()  # a submission that reaches its checks now stops there
        deadline = time.monotonic() + 30.0
        while any(f.running() for f in futures) and time.monotonic() < deadline:
            sandbox.kill_all()  # again and again: a thread may have been starting one
            time.sleep(0.05)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        judges.close()
        shutil.rmtree(root, ignore_errors=True)
    return [out[k] for k in range(len(paths))]


class Stopped(BaseException):
    """``polylab grade`` received SIGTERM or SIGHUP (raised in its main thread so that the batch kills its
    sandboxes and judges on the way out)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def stop_on_signals() -> None:
    """Turn SIGTERM and SIGHUP into :class:`Stopped` in the main thread (call from the main thread)."""
    def handler(signum: int, _frame: object) -> None:
        raise Stopped(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


__all__ = ["Limits", "MAX_NOTEBOOK_BYTES", "Stopped", "SubmissionResult", "Workspace", "check_setup", "detect_lab",
           "executed_path", "grade_answers", "grade_batch", "grade_submission", "package_dir", "read_notebook", "run_worker",
           "sandbox_for", "stop_on_signals"]
