"""``polylab grade SUBMISSION.ipynb ... [--lab NAME] [--timeout SECONDS] [--memory MB] [--jobs J]
[--json FILE] [--csv FILE] [--gradescope DIR] [--executed DIR] [--hidden DIR] [--check-timeout SECONDS]
[--no-sandbox]``: grade student notebooks.

Each submission runs in its own bubblewrap sandbox (its own processes only, no network, the system and
Python read-only, one writable folder holding the submission; the grader's folder, reports, hidden cases
and solutions are not there) with a fresh kernel, cell by cell, under a time limit (for its cells) and a
memory limit (address space of every process it starts); every process it started dies with the sandbox.
Then the lab's checks, untouched by the student, run on the answers its cells produced (read as data), each
question within --check-timeout seconds and isl's operation limit, with the instructor's hidden cases
(``--hidden DIR``, default ``instructor/hidden`` when it exists). Edited, deleted or reordered check cells
change nothing. A submission that is not a notebook, belongs to another lab, loops forever (in Python or in
C), exhausts memory, kills its kernel or raises is still graded: 0 for what it did not reach, with the
reason. Where user namespaces are not available, grade refuses unless --no-sandbox accepts the weaker fence.

Output: a table (and a progress bar on stderr); ``--json FILE`` the details of every question;
``--csv FILE`` one row per submission for a gradebook; ``--gradescope DIR`` a Gradescope ``results.json``
per submission (``DIR/<name>/results.json``). SIGTERM or SIGHUP stops the batch and every process it started.

Exit status: 0 when every submission was graded, whatever the scores; 1 when the grader itself failed on
one (said in its row); 2 for a usage error (no such lab, an unwritable output file, no sandbox).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from polylab.errors import PolylabError
from polylab.grading import autograder, batch, fanout, report

DEFAULT_HIDDEN = Path("instructor") / "hidden"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("grade", help="grade student notebooks (batch, sandboxed)", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("submissions", nargs="*", metavar="SUBMISSION.ipynb", help="the notebooks to grade")
    p.add_argument("--lab", default=None, help="the lab (default: detected from each notebook)")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds for a submission's cells (default 300); the checks run after")
    p.add_argument("--memory", type=int, default=4096,
                   help="memory limit per process in MB (address space; default 4096; 0 = none)")
    p.add_argument("--jobs", "-j", type=int, default=1, help="submissions graded at once (default 1)")
    p.add_argument("--json", metavar="FILE", default=None, help="write every result as JSON")
    p.add_argument("--csv", metavar="FILE", default=None, help="write one CSV row per submission")
    p.add_argument("--gradescope", metavar="DIR", default=None,
                   help="write DIR/<submission>/results.json in Gradescope's format")
    p.add_argument("--hidden", metavar="DIR", default=None,
                   help=f"instructor's hidden cases (default: {DEFAULT_HIDDEN} when it exists)")
    p.add_argument("--max-output", type=float, default=2.0, metavar="MB",
                   help="cell output kept per submission in MB (default 2); the rest is dropped")
    p.add_argument("--executed", metavar="DIR", default=None,
                   help="write each executed notebook, with its outputs, to DIR/<folder>/<name>.ipynb")
    p.add_argument("--check-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="seconds to check one answer (default 60); an answer too complex to check scores 0")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run submissions without the bubblewrap sandbox (where user namespaces are not "
                        "available): their processes are still killed, but they see this machine")
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="grade on a Dask cluster: a scheduler's address (tcp://host:8786) or local:N for N local "
                        "worker processes; each submission is sandboxed on its worker (pip install polylab[cluster])")
    p.add_argument("--gradescope-autograder", metavar="LAB", default=None,
                   help="instead of grading: write a Gradescope autograder bundle of LAB to --out (setup.sh, "
                        "run_autograder, polylab's source, the lab's hidden cases)")
    p.add_argument("--out", metavar="FILE.zip", default=None, help="where --gradescope-autograder writes the zip")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _writable(path: str | None) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if p.is_dir():
        raise PolylabError(f"{path} is a directory", hint="give a file name")
    if not p.parent.exists():
        raise PolylabError(f"cannot write {path}: the folder {p.parent} does not exist")
    return p


def run(args: argparse.Namespace) -> int:
    hidden = Path(args.hidden) if args.hidden else (DEFAULT_HIDDEN if DEFAULT_HIDDEN.is_dir() else None)
    if hidden is not None and not hidden.is_dir():
        raise PolylabError(f"--hidden {args.hidden}: no such folder")
    if args.gradescope_autograder:
        if not args.out:
            raise PolylabError("--gradescope-autograder needs --out FILE.zip")
        written = autograder.write_bundle(args.gradescope_autograder, Path(args.out), hidden, args.timeout)
        print(f"wrote {written}: upload it on Gradescope's Configure Autograder page "
              f"(hidden cases: {'included' if hidden else 'none'})")
        return 0
    if not args.submissions:
        raise PolylabError("no submission to grade", hint="polylab grade SUBMISSION.ipynb ...")
    for flag, value in (("--timeout", args.timeout), ("--check-timeout", args.check_timeout)):
        if value <= 0:
            raise PolylabError(f"{flag} must be positive")
    if args.memory < 0:
        raise PolylabError("--memory must be 0 (no limit) or a number of MB")
    if args.jobs < 1:
        raise PolylabError("--jobs must be at least 1")
    outputs = {k: _writable(getattr(args, k)) for k in ("json", "csv")}
    if args.max_output <= 0:
        raise PolylabError("--max-output must be positive")
    limits = batch.Limits(timeout=args.timeout, memory_mb=args.memory or None,
                          max_output_bytes=int(args.max_output * 2**20), check_seconds=args.check_timeout,
                          sandbox=not args.no_sandbox)
    executed = Path(args.executed).resolve() if args.executed else None  # the grader's folder, not a worker's
    batch.stop_on_signals()
    try:
        if args.dask:
            results = fanout.grade_on_dask(args.submissions, args.dask, lab=args.lab, limits=limits,
                                           hidden_dir=hidden.resolve() if hidden else None, executed_dir=executed,
                                           progress=not args.no_progress)
        else:
            results = batch.grade_batch(args.submissions, lab=args.lab, limits=limits, jobs=args.jobs,
                                        hidden_dir=hidden.resolve() if hidden else None,
                                        progress=not args.no_progress, executed_dir=executed)
    except batch.Stopped as stop:
        print(f"polylab grade: stopped by {stop}; every submission's processes were killed", file=sys.stderr)
        return 128 + stop.signum
    print(report.table(results, hidden=str(hidden) if hidden else None))
    if outputs["json"]:
        outputs["json"].write_text(report.to_json(results), encoding="utf-8")
    if outputs["csv"]:
        outputs["csv"].write_text(report.to_csv(results), encoding="utf-8")
    if args.gradescope:
        report.write_gradescope(results, Path(args.gradescope))
    failed = [r for r in results if any(e.startswith("internal error of the grader") for e in r.errors)]
    if failed:
        print(f"the grader failed on {len(failed)} submission(s); see their rows", file=sys.stderr)
    return 1 if failed else 0
