"""Grading fanned out on a Dask cluster: ``polylab grade SUBMISSIONS... --dask ADDRESS`` (or ``local:N``).

Each submission is one Dask task that runs :func:`polylab.grading.batch.grade_submission` on a worker,
sandboxed there exactly as on one machine. The client reads each notebook and sends its bytes (workers need
not share a file system), with the instructor's hidden-cases files as text; the worker sends back the
result as plain data (:meth:`SubmissionResult.to_data`) and, with ``--executed``, the executed notebook's
bytes. Results come back in submission order, with the progress bar.

Worker loss is survived by Dask's scheduler: the tasks of a worker that dies are run again on another
worker, at most ``RETRIES`` more times (``distributed.scheduler.allowed-failures``); after that the
submission becomes an error row. Each attempt logs an event (``polylab-grade``) with its worker, so the row
of a submission that had to be run again says so. A batch never waits on a dead worker: the scheduler
notices it (its connection closes, or its heartbeats stop) and moves its tasks; and no submission waits
longer than all its attempts may take.

The cluster can be anything Dask reaches: ``local:N`` (a ``LocalCluster`` of N single-threaded worker
processes), a scheduler started by hand (``dask scheduler`` / ``dask worker``), Slurm through
dask-jobqueue, Kubernetes through dask-kubernetes (``docs/grading.md``). Workers need polylab and
bubblewrap installed, as the grading machine does.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

from tqdm import tqdm

from polylab.errors import PolylabError
from polylab.grading.batch import (WORKER_GRACE, Limits, SubmissionResult, check_setup, executed_path,
                                   grade_submission)
from polylab.grading.judge import Judges

#: how many more times a submission is run after its worker was lost
RETRIES = 2
#: the Dask event topic of each attempt
TOPIC = "polylab-grade"


def _dask():  # noqa: ANN202 - the module
    try:
        import distributed  # the optional fan-out engine
    except ImportError:
        raise PolylabError("--dask needs dask.distributed", hint="pip install 'polylab[cluster]' "
                           "(or pip install 'dask[distributed]')") from None
    return distributed


def hidden_texts(hidden_dir: str | Path | None) -> dict[str, str]:
    """The instructor's hidden-cases files, as text (``<lab>.py`` -> its text)."""
    if hidden_dir is None:
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(Path(hidden_dir).glob("*.py"))}


def grade_remote(index: int, name: str, data: bytes, lab: str | None, limits: Limits, hidden: Mapping[str, str],
                 want_executed: bool) -> dict[str, Any]:
    """The task: grade one submission (``data``: the notebook's bytes, ``name`` its path on the client) on
    this worker; a dictionary of plain data."""
    distributed = _dask()
    try:
        worker = distributed.get_worker()
        worker.log_event(TOPIC, {"index": index, "worker": worker.address})
    except ValueError:  # not on a worker (a test calling the task directly)
        pass
    work = Path(tempfile.mkdtemp(prefix="polylab-dask-"))
    try:
        hidden_dir = _hidden_folder(hidden) if hidden else None
        folder = work / (Path(name).parent.name or "_")
        folder.mkdir()
        local = folder / Path(name).name
        local.write_bytes(data)
        executed = work / "executed.ipynb" if want_executed else None
        result = grade_submission(local, lab=lab, limits=limits, hidden_dir=hidden_dir, executed=executed,
                                  judges=_judges(hidden_dir, limits))
        out = result.to_data()
        out["path"] = name
        out["executed"] = executed.read_bytes() if executed is not None and executed.is_file() else None
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


_WORKER_JUDGES: dict[tuple, Judges] = {}   # one pool per worker process and settings, reused by its tasks


def _hidden_folder(hidden: Mapping[str, str]) -> Path:
    """The hidden-cases files on this worker, in a folder named by their content (written once)."""
    digest = hashlib.sha256(json.dumps(sorted(hidden.items())).encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"polylab-hidden-{os.getuid()}-{digest}"
    if not folder.is_dir():
        staging = Path(tempfile.mkdtemp(prefix="polylab-hidden-"))
        for file, text in hidden.items():
            (staging / Path(file).name).write_text(text, encoding="utf-8")
        try:
            staging.rename(folder)
        except OSError:  # another task of this machine wrote it first
            shutil.rmtree(staging, ignore_errors=True)
    return folder


def _judges(hidden_dir: Path | None, limits: Limits) -> Judges:
    key = (str(hidden_dir), limits.check_seconds, limits.memory_mb, limits.check_operations)
    if key not in _WORKER_JUDGES:
        _WORKER_JUDGES[key] = Judges(hidden_dir, seconds=limits.check_seconds, memory_mb=limits.memory_mb,
                                     operations=limits.check_operations)
    return _WORKER_JUDGES[key]


def local_client(n: int):  # noqa: ANN201 - a distributed.Client
    """A client of a new local cluster of ``n`` single-threaded worker processes (each restarted by its nanny
    when it dies), with the scheduler's retry limit set to :data:`RETRIES`."""
    distributed = _dask()
    import dask

    if n < 1:
        raise PolylabError("--dask local:N needs at least one worker")
    with dask.config.set({"distributed.scheduler.allowed-failures": RETRIES}):
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None, memory_limit=None)
    return distributed.Client(cluster)


def connect(address: str):  # noqa: ANN201 - a distributed.Client
    """A client of the cluster at ``address``; ``local:N`` starts a local cluster of N worker processes. (A
    scheduler started elsewhere keeps its own ``allowed-failures``: start it with
    ``DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=2``, as docs/grading.md shows.)"""
    distributed = _dask()
    if address.startswith("local:"):
        try:
            n = int(address.split(":", 1)[1])
        except ValueError:
            raise PolylabError(f"--dask {address}: local:N needs a number of workers") from None
        return local_client(n)
    try:
        return distributed.Client(address, timeout="30s")
    except OSError as exc:
        raise PolylabError(f"cannot reach the Dask scheduler at {address}: {exc}",
                           hint="start one (dask scheduler), or give local:N") from None


def grade_on_dask(paths: Sequence[str | Path], address: str | Any, *, lab: str | None = None,
                  limits: Limits = Limits(), hidden_dir: str | Path | None = None,
                  executed_dir: str | Path | None = None, progress: bool = True) -> list[SubmissionResult]:
    """Grade every submission on the cluster at ``address`` (or an existing ``distributed.Client``); results
    in the order of ``paths`` (see the module text), with a progress bar on standard error."""
    distributed = _dask()
    check_setup(limits, hidden_dir, lab)
    hidden = hidden_texts(hidden_dir)
    own = isinstance(address, str)
    client = connect(address) if own else address
    out: dict[int, SubmissionResult] = {}
    try:
        futures = {}
        for k, p in enumerate(paths):
            try:
                data = Path(p).read_bytes()
            except OSError as exc:
                out[k] = SubmissionResult(str(p), lab, None, (f"cannot read {p}: {exc.strerror}",),
                                          sandbox=limits.sandbox)
                continue
            fut = client.submit(grade_remote, k, str(p), data, lab, limits, hidden, executed_dir is not None,
                                key=f"polylab-grade-{k}-{os.urandom(4).hex()}", pure=False)
            futures[fut] = k
        # the longest a submission may take: every attempt running to its limits, with room for a slow start
        per_try = limits.timeout + WORKER_GRACE + limits.check_seconds * 20 + 120
        deadline = time.monotonic() + per_try * (RETRIES + 1) * math.ceil(max(1, len(futures)) / _workers(client))
        with tqdm(total=len(paths), initial=len(out), desc="grading", unit="notebook", disable=not progress,
                  file=sys.stderr) as bar:
            for fut in distributed.as_completed(list(futures), with_results=False):
                k = futures[fut]
                out[k] = _collect(fut, paths[k], lab, limits, executed_dir)
                fut.release()  # the result is here: a worker lost later does not make it run again
                bar.update(1)
                if time.monotonic() > deadline:
                    break
        for fut, k in futures.items():
            if k not in out:
                fut.cancel()
                out[k] = SubmissionResult(str(paths[k]), lab, None, ("internal error of the grader: no worker "
                                                                     "finished it in time",), sandbox=limits.sandbox)
        _note_retries(out, client)
    finally:
        if own:
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
    return [out[k] for k in range(len(paths))]


def _workers(client: Any) -> int:
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except (OSError, TimeoutError):
        return 1


def _collect(fut: Any, path: str | Path, lab: str | None, limits: Limits,
             executed_dir: str | Path | None) -> SubmissionResult:
    try:
        data = fut.result()
    except Exception as exc:  # KilledWorker after the retries, or a bug in the grader: this row says so
        why = type(exc).__name__
        if why == "KilledWorker":
            text = (f"internal error of the grader: its worker was lost {RETRIES + 1} times while grading it "
                    "(the submission may crash whole machines, or the cluster is failing)")
        else:
            text = f"internal error of the grader: {why}: {exc}"
        return SubmissionResult(str(path), lab, None, (text,), sandbox=limits.sandbox)
    target = executed_path(executed_dir, path)
    if target is not None and data.get("executed"):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data["executed"])
    return SubmissionResult.from_data(data)


def _note_retries(out: dict[int, SubmissionResult], client: Any) -> None:
    """Add to the rows of the submissions that started more than once why they were run again."""
    try:
        events = client.get_events(TOPIC)
    except (OSError, TimeoutError):
        return
    starts = Counter(int(msg["index"]) for _, msg in events if isinstance(msg, dict) and "index" in msg)
    workers: dict[int, list[str]] = {}
    for _, msg in events:
        if isinstance(msg, dict) and "index" in msg:
            workers.setdefault(int(msg["index"]), []).append(str(msg.get("worker")))
    for k, n in starts.items():
        if n > 1 and k in out:
            r = out[k]
            note = (f"retried on another worker after its worker was lost (started {n} times: "
                    f"{', '.join(workers[k])})")
            out[k] = SubmissionResult(r.path, r.lab, r.report, (*r.errors, note), r.seconds, r.cell_errors, r.sandbox)


__all__ = ["RETRIES", "TOPIC", "connect", "local_client", "grade_on_dask", "grade_remote", "hidden_texts"]
