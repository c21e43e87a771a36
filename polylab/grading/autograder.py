"""A Gradescope autograder for one lab: ``polylab grade --gradescope-autograder labN --out labN-autograder.zip``.

The zip is what Gradescope's "Configure Autograder" page takes (Gradescope's autograder specification):

* ``setup.sh``: run once when Gradescope builds the image (Ubuntu, as root): installs Python, gcc with
  OpenMP and bubblewrap with apt, then polylab from the copy of its source in the bundle (``polylab-src/``)
  into a virtual environment;
* ``run_autograder``: run for each submission: grades the notebook in ``/autograder/submission`` with
  polylab's grader (:func:`run`) and writes ``/autograder/results/results.json``: the score, one test per
  question (its score, maximum, ``passed`` / ``failed`` and polylab's feedback) and the run's notes;
* ``hidden/<lab>.py``: the instructor's hidden cases of that lab, when there are any (Gradescope never shows
  the autograder's files to students).

Gradescope runs each submission in a fresh container; polylab's sandbox runs inside it where the
container allows user namespaces, and otherwise the weaker fence, said in the results' output
(``POLYLAB_AUTOGRADER_SANDBOX=yes|no|auto``, default auto). ``AUTOGRADER_ROOT`` (default ``/autograder``)
and ``POLYLAB_PYTHON`` let a test run the bundle in a scratch folder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zipfile
from pathlib import Path

from polylab.errors import PolylabError
from polylab.grading import report
from polylab.grading.batch import Limits, SubmissionResult, grade_submission, package_dir
from polylab.grading.registry import get_lab
from polylab.toolchain import sandbox

SETUP = """#!/usr/bin/env bash
# Gradescope image build (Ubuntu, as root): system tools, then polylab from the bundled source.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 python3-venv python3-pip gcc libc6-dev libgomp1 bubblewrap
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install -q --upgrade pip
/autograder/venv/bin/pip install -q "/autograder/source/polylab-src" "nbclient>=0.8" "ipykernel>=6.0"
"""

RUN = """#!/usr/bin/env bash
# Gradescope, once per submission: grade /autograder/submission/*.ipynb, write /autograder/results/results.json.
set -uo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"
python="${{POLYLAB_PYTHON:-$root/venv/bin/python}}"
cd "$root/source"
exec "$python" -m polylab.grading.autograder {lab} --root "$root" --timeout {timeout:g}
"""


def _source_files(package: Path) -> list[tuple[Path, str]]:
    """(file, name in the zip) of polylab's source: the package, pyproject.toml and README.md."""
    root = package.parent
    files = [(root / "pyproject.toml", "polylab-src/pyproject.toml"), (root / "README.md", "polylab-src/README.md")]
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".so"):
            files.append((path, f"polylab-src/polylab/{path.relative_to(package).as_posix()}"))
    return files


def write_bundle(lab_name: str, out: Path, hidden_dir: str | Path | None, timeout: float = 300.0) -> Path:
    """Write the autograder zip of ``lab_name`` to ``out`` (see the module text)."""
    lab = get_lab(lab_name)
    package = package_dir()
    if not (package.parent / "pyproject.toml").is_file():
        raise PolylabError("the Gradescope bundle is built from polylab's source tree (pyproject.toml beside the "
                           "package)", hint="run it from a clone of the repository (pip install -e .)")
    if out.suffix != ".zip":
        raise PolylabError(f"--out {out}: the bundle is a .zip file")
    if not out.parent.is_dir():
        raise PolylabError(f"cannot write {out}: the folder {out.parent} does not exist")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        _add(z, "setup.sh", SETUP)
        _add(z, "run_autograder", RUN.format(lab=lab.name, timeout=timeout))
        for path, name in _source_files(package):
            z.write(path, name)
        hidden = Path(hidden_dir) / f"{lab.name}.py" if hidden_dir else None
        if hidden is not None and hidden.is_file():
            z.write(hidden, f"hidden/{lab.name}.py")
    return out


def _add(z: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.external_attr = 0o100755 << 16  # an executable regular file
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, text)


def _use_sandbox() -> tuple[bool, str]:
    wanted = os.environ.get("POLYLAB_AUTOGRADER_SANDBOX", "auto")
    why = sandbox.unavailable()
    if wanted == "no" or (wanted == "auto" and why is not None):
        return False, f"graded without polylab's sandbox (the container is the fence): {why or 'asked'}"
    return True, ""


def run(lab_name: str, root: Path, timeout: float = 300.0) -> dict:
    """Grade the submission in ``root/submission`` and write ``root/results/results.json``; the results."""
    lab = get_lab(lab_name)
    notebooks = sorted((root / "submission").rglob("*.ipynb"))
    notebooks = [p for p in notebooks if ".ipynb_checkpoints" not in p.parts]
    chosen = [p for p in notebooks if p.name == lab.notebook] or notebooks[:1]
    boxed, note = _use_sandbox()
    if not chosen:
        result = SubmissionResult("submission", lab.name, None,
                                  (f"no notebook (.ipynb) in the submission: upload {lab.notebook}",), sandbox=boxed)
        results = report.gradescope(result)
        results["tests"] = [{"name": f"{q.name} {q.title}".strip(), "score": 0.0, "max_score": float(q.points),
                             "status": "failed", "output": "not graded: no notebook"} for q in lab.questions]
    else:
        hidden = root / "source" / "hidden"
        limits = Limits(timeout=timeout, sandbox=boxed)
        result = grade_submission(chosen[0], lab=lab.name, limits=limits, hidden_dir=hidden if hidden.is_dir() else None)
        results = report.gradescope(result)
        extra = [f"graded {chosen[0].name}"] + ([f"{len(notebooks) - 1} other notebook(s) ignored"]
                                                if len(notebooks) > 1 else [])
        results["output"] = "\n".join(x for x in (*extra, note, results["output"]) if x)
    target = root / "results" / "results.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="grade one Gradescope submission (run by run_autograder)")
    p.add_argument("lab")
    p.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")))
    p.add_argument("--timeout", type=float, default=300.0)
    args = p.parse_args(argv)
    run(args.lab, args.root, args.timeout)
    return 0


__all__ = ["RUN", "SETUP", "main", "run", "write_bundle"]


if __name__ == "__main__":
    sys.exit(main())
