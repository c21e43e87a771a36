"""Grading throughput, one command: ``python deploy/throughput.py [--labs lab1,...] [--jobs 2] [--dask local:2]``.

Builds a batch of submissions from the solved labs (per lab: the solution; one answer changed to a wrong
value; the solution with every check cell replaced by ``print('correct')``; the untouched student copy;
an endless ``while True: pass`` after the first answer), grades it with ``polylab grade`` (locally with
``--jobs J``, and through Dask with ``--dask ADDRESS`` when given), and measures the sandbox's cost per
submission (one small notebook graded ``--repeat`` times with and without the sandbox). It prints the
date, the machine's load, the wall-clock times, submissions per minute per worker core, and checks that
every solution scored full marks and every untouched copy zero. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def make_submissions(labs: list[str], out: Path) -> list[Path]:
    """Five submissions per lab (see the module text), in round-robin order of the labs."""
    from polylab.grading import get_lab

    by_lab: dict[str, list[Path]] = {}
    for sol in sorted((ROOT / "solutions").glob("lab*.ipynb")):
        nb = _load(sol)
        name = nb["metadata"]["polylab"]["lab"]
        if name not in labs:
            continue
        first = get_lab(name).questions[0].answers[0]
        k = next(i for i, c in enumerate(nb["cells"]) if "solution" in _tags(c))
        variants = {"solution": nb, "untouched": _load(ROOT / "labs" / sol.name)}
        wrong = json.loads(json.dumps(nb))
        wrong["cells"][k]["source"] = "".join(wrong["cells"][k]["source"]) + f"\n{first} = 'not this'\n"
        variants["wrong"] = wrong
        edited = json.loads(json.dumps(nb))
        for c in edited["cells"]:
            if "check" in _tags(c):
                c["source"] = "print('\\u2714 correct')"
        variants["edited"] = edited
        loop = json.loads(json.dumps(nb))
        loop["cells"].insert(k + 1, {"cell_type": "code", "metadata": {}, "source": "while True:\n    pass",
                                     "outputs": [], "execution_count": None})
        variants["loop"] = loop
        for kind, data in variants.items():
            path = out / f"{name}-{kind}.ipynb"
            path.write_text(json.dumps(data), encoding="utf-8")
            by_lab.setdefault(name, []).append(path)
    order = []
    for k in range(5):
        order += [paths[k] for paths in by_lab.values()]
    return order


def grade(paths: list[Path], extra: list[str], out: Path, timeout: float) -> tuple[float, dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "polylab", "grade", *map(str, paths), "--no-progress",
                           "--timeout", str(timeout), "--hidden", str(ROOT / "instructor" / "hidden"),
                           "--json", str(out), *extra], env=env, capture_output=True, text=True)
    took = time.monotonic() - start
    if done.returncode not in (0, 1) or not out.is_file():  # 1: the grader failed on some rows, shown below
        sys.exit(f"polylab grade failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return took, _load(out)


def verdicts(graded: dict) -> list[str]:
    """Lines saying what each kind of submission scored, and any surprise."""
    lines, bad = [], []
    for s in graded["submissions"]:
        kind = Path(s["path"]).stem.split("-", 1)[1]
        if kind == "solution" and s["score"] != s["max_score"]:
            bad.append(f"{s['path']}: {s['score']}/{s['max_score']}")
        if kind == "untouched" and s["score"] != 0:
            bad.append(f"{s['path']}: {s['score']}/{s['max_score']}")
        lines.append(f"  {Path(s['path']).name:<28} {s['score']:g}/{s['max_score']:g}  {s['seconds']:.0f} s"
                     + (f"  {'; '.join(s['errors'])[:200]}" if s["errors"] else ""))
        if any(e.startswith("internal error") for e in s["errors"]):
            bad.append(f"{s['path']}: {s['errors']}")
    return lines + ([f"UNEXPECTED: {b}" for b in bad] or ["solutions full marks, untouched copies 0: as expected"])


def sandbox_cost(repeat: int, work: Path) -> str:
    """Seconds per submission that the sandbox adds: one small lab-2 notebook graded ``repeat`` times each way."""
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": "sweep2d_distances = {(1, 0), (0, 1)}",
                     "outputs": [], "execution_count": None}],
          "metadata": {"polylab": {"lab": "lab2"}}, "nbformat": 4, "nbformat_minor": 5}
    paths = []
    for k in range(repeat):
        p = work / f"small{k}.ipynb"
        p.write_text(json.dumps(nb))
        paths.append(p)
    with_box, _ = grade(paths, ["--jobs", "1"], work / "with.json", 60)
    without, _ = grade(paths, ["--jobs", "1", "--no-sandbox"], work / "without.json", 60)
    return (f"sandbox cost: {repeat} small submissions one at a time: {with_box:.1f} s sandboxed, {without:.1f} s "
            f"with --no-sandbox: {(with_box - without) / repeat:+.2f} s per submission")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--labs", default="lab1,lab2,lab3,lab4,lab5,lab6", help="labs to build submissions from")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=240.0)
    p.add_argument("--dask", default=None, metavar="ADDRESS", help="also grade through Dask (e.g. local:2)")
    p.add_argument("--repeat", type=int, default=5, help="small notebooks for the sandbox's cost (0: skip)")
    p.add_argument("--keep", type=Path, default=None, help="keep the submissions and reports in this folder")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="polylab-throughput-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        subs = make_submissions(args.labs.split(","), work)
        load = os.getloadavg()
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} "
              f"{load[2]:.2f}; {len(subs)} submissions of {args.labs}")
        runs = [("local", ["--jobs", str(args.jobs)], args.jobs)]
        if args.dask:
            cores = int(args.dask.split(":", 1)[1]) if args.dask.startswith("local:") else args.jobs
            runs.append((f"dask {args.dask}", ["--dask", args.dask], cores))
        for name, extra, cores in runs:
            took, graded = grade(subs, extra, work / f"{name.split()[0]}.json", args.timeout)
            rate = len(subs) / (took / 60) / cores
            print(f"{name}: {took / 60:.1f} min wall clock, {rate:.2f} submissions per minute per worker core")
            print("\n".join(verdicts(graded)))
        if args.repeat:
            print(sandbox_cost(args.repeat, work))
        print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
