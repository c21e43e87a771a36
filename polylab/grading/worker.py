"""One submission's run: ``python -m polylab.grading.worker -`` with the job on standard input (started by
the batch grader, inside the submission's sandbox, in its writable folder).

The worker starts a fresh kernel, runs the submission's code cells one by one (errors do not stop it: a
cell that raises is recorded and the next one runs) until the time limit, and after every cell injects the
snapshot of :mod:`polylab.grading.kernel_side`, so the answers defined so far survive a kernel that dies
or hangs later. After the last cell (or after interrupting a cell that ran past the time limit) a final
snapshot also calls the function answers on their cases. Outputs are kept up to a byte budget and then
dropped (a notebook that prints gigabytes neither fills memory nor stops the run).

The worker never grades and never imports the student's answers: it writes what happened (``OUT/result.json``)
and the kernel writes the answers (``OUT/snapshot.json``), as JSON; the grader reads both as data once the
sandbox is gone. The job is ``{"notebook", "out", "timeout", "names", "functions", "call_seconds",
"max_output_bytes", "executed"}`` (paths relative to the working folder; it comes on standard input, so no
file holds it); with ``executed`` true the executed notebook, outputs kept, is written to
``OUT/executed.ipynb``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode

from polylab.grading import kernel_side

#: seconds the final snapshot may take (function answers are called in it)
FINAL_GRACE = 20.0
#: ... and after a cell that was interrupted at the time limit (a kernel stuck in C code never answers)
INTERRUPTED_GRACE = 10.0
#: seconds a snapshot after one cell may take
SNAPSHOT_SECONDS = 30.0


class CappedClient(NotebookClient):
    """A notebook client that keeps at most ``max_output_bytes`` of output over the whole run."""

    max_output_bytes = 1_000_000
    dropped_bytes = 0

    def output(self, outs: list[NotebookNode], msg: dict[str, Any], display_id: str | None,
               cell_index: int) -> NotebookNode | None:
        size = len(json.dumps(msg.get("content", {}), default=str))
        if self.max_output_bytes - size < 0 and msg.get("msg_type") != "error":
            self.dropped_bytes += size
            return None
        self.max_output_bytes -= size
        return super().output(outs, msg, display_id, cell_index)


def _errors_of(cell: NotebookNode) -> list[str]:
    return [f"{o.get('ename')}: {str(o.get('evalue'))[:300]}" for o in cell.get("outputs", [])
            if o.get("output_type") == "error"]


class Run:
    """The state of one submission's run (what the result file reports)."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.events: list[str] = []
        self.cell_errors: list[dict[str, Any]] = []
        self.cells_run = 0
        self.stopped: str | None = None      # why the run stopped before the end, when it did
        self.kernel_alive = True
        self.final_snapshot = False
        self.start = time.monotonic()
        self.deadline = self.start + float(job["timeout"])

    def request(self, with_calls: bool) -> dict[str, Any]:
        return {"names": self.job["names"], "functions": self.job["functions"] if with_calls else {},
                "path": str(Path(self.job["out"]).resolve() / "snapshot.json"),
                "call_seconds": self.job.get("call_seconds", 5.0)}

    def snapshot(self, client: NotebookClient, with_calls: bool, seconds: float) -> bool:
        """Run the injected cell in the scratch slot (the last cell of the client's notebook, added by
        :func:`main`: nbclient stores every executed cell at its index)."""
        cell = nbformat.v4.new_code_cell(kernel_side.cell_code(self.request(with_calls)))
        client.timeout = max(1, math.ceil(seconds))
        try:
            client.execute_cell(cell, len(client.nb.cells) - 1, store_history=False)
        except CellTimeoutError:
            self.events.append("reading the answers timed out")
            return False
        except DeadKernelError:
            self.kernel_alive = False
            self.events.append("the kernel died while the answers were read")
            return False
        errs = _errors_of(cell)
        if errs:
            self.events.append("reading the answers failed: " + "; ".join(errs))
            return False
        return True

    def run_cells(self, client: NotebookClient, nb: NotebookNode) -> None:
        code = [(k, c) for k, c in enumerate(nb.cells[:-1]) if c.cell_type == "code"]
        for number, (index, cell) in enumerate(code, 1):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.stopped = f"the time limit ({self.job['timeout']:g} s) was reached before code cell {number}"
                return
            client.timeout = max(1, math.ceil(remaining))
            try:
                client.execute_cell(cell, index)
            except CellTimeoutError:
                self.stopped = (f"code cell {number} was still running at the time limit "
                                f"({self.job['timeout']:g} s); the cells after it did not run")
                self._interrupt(client)
                return
            except DeadKernelError:
                self.kernel_alive = False
                self.stopped = (f"the kernel died in code cell {number} (memory limit, os._exit, a crash); "
                                "the cells after it did not run")
                return
            self.cells_run = number
            errs = _errors_of(cell)
            if errs:
                self.cell_errors.append({"cell": number, "error": errs[0]})
            if not self.snapshot(client, False, SNAPSHOT_SECONDS):
                self.stopped = f"the answers could not be read after code cell {number}"
                return

    def _interrupt(self, client: NotebookClient) -> None:
        try:
            run_sync(client.km.interrupt_kernel)()
            time.sleep(1.0)
        except Exception as exc:  # the kernel may already be gone; the final snapshot will say so
            self.events.append(f"interrupting the kernel failed: {exc}")

    def finish(self, client: NotebookClient) -> None:
        grace = INTERRUPTED_GRACE if self.stopped else FINAL_GRACE
        if self.kernel_alive and self.job["functions"]:
            self.final_snapshot = self.snapshot(client, True, grace)
        elif self.kernel_alive and self.stopped:
            self.snapshot(client, False, grace)  # what was defined before the interrupted cell

    def result(self) -> dict[str, Any]:
        return {"cells_run": self.cells_run, "stopped": self.stopped, "events": self.events,
                "cell_errors": self.cell_errors, "kernel_alive": self.kernel_alive,
                "final_snapshot": self.final_snapshot, "seconds": round(time.monotonic() - self.start, 3)}


def main(argv: list[str]) -> int:
    source = sys.stdin.read() if not argv or argv[0] == "-" else Path(argv[0]).read_text(encoding="utf-8")
    job = json.loads(source)
    out_dir = Path(job["out"]).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    nb = nbformat.reads(Path(job["notebook"]).read_text(encoding="utf-8"), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(""))  # the scratch slot of the injected snapshot cells
    run = Run(job)
    client = CappedClient(nb, kernel_name="python3", allow_errors=True, timeout=int(job["timeout"]),
                          resources={"metadata": {"path": os.getcwd()}}, shutdown_kernel="immediate",
                          startup_timeout=120, record_timing=False)
    client.max_output_bytes = int(job.get("max_output_bytes", 1_000_000))
    try:
        with client.setup_kernel():
            run.run_cells(client, nb)
            run.finish(client)
    except DeadKernelError:
        run.kernel_alive = False
        run.stopped = run.stopped or "the kernel died"
    except RuntimeError as exc:  # the kernel did not start (nbclient raises RuntimeError): report it
        run.stopped = f"the kernel could not start: {exc}"
    out = run.result()
    out["dropped_output_bytes"] = client.dropped_bytes
    out_dir.mkdir(parents=True, exist_ok=True)  # again: the student's cells may have removed it
    if job.get("executed"):
        nb.cells.pop()  # the scratch slot is the grader's, not the student's
        nbformat.write(nb, str(out_dir / "executed.ipynb"))
    (out_dir / "result.json").write_text(json.dumps(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
