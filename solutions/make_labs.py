"""Generate the student notebooks in ``labs/`` from the solved notebooks in ``solutions/``.

The solved notebooks are the source of truth. In each one:

* a code cell tagged ``solution`` holds an answer. Between the lines ``### BEGIN SOLUTION`` and
  ``### END SOLUTION`` the answer is replaced by ``# YOUR ANSWER HERE`` (with the block's indentation); a
  solution cell without those markers is replaced whole (a leading ``%%magic`` line is kept);
* a code cell tagged ``check`` is one call, ``polylab.grading.check("lab1", "q1")``, that grades the answer
  on the spot and never raises (the checks live in ``polylab/grading/labs/``, see docs/grading.md); it is
  copied unchanged;
* a code cell that starts with ``%%see_why`` keeps that line and gets its code *sealed*
  (:func:`polylab.notebook.course.seal`: comment lines that carry it encoded, so the student's copy shows
  none of it and runs nothing without the magic; the magic unseals and runs it once the question is right);
* every other cell is copied unchanged.

Both kinds of notebook are committed without outputs and execution counts.

    python solutions/make_labs.py            # write labs/*.ipynb
    python solutions/make_labs.py --check    # exit 1 when labs/ is out of date or has outputs
    python solutions/make_labs.py --strip    # also strip the outputs of solutions/*.ipynb in place
    python solutions/make_labs.py --otter DIR  # also write otter-grader master notebooks: DIR/<lab>/<notebook>
                                               # (then: otter assign DIR/lab1/lab1_affine.ipynb DIR/lab1/dist)

Each solved notebook names its lab in its metadata (``{"polylab": {"lab": "lab1"}}``); the hidden cases of
``instructor/hidden/<lab>.py`` go into otter's hidden tests, never into ``labs/``.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LABS = HERE.parent / "labs"
STUB = "# YOUR ANSWER HERE"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def source_text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _as_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def stub_source(text: str) -> str:
    """The student's version of a solution cell's source (see the module text)."""
    if BEGIN in text:
        out: list[str] = []
        inside = False
        for line in text.splitlines():
            stripped = line.strip()
            if stripped == BEGIN:
                inside = True
                out.append(line[: len(line) - len(line.lstrip())] + STUB)
            elif stripped == END:
                inside = False
            elif not inside:
                out.append(line)
        if inside:
            raise ValueError(f"{BEGIN} without {END} in:\n{text}")
        return "\n".join(out)
    first = text.splitlines()[0] if text.strip() else ""
    return f"{first}\n{STUB}" if first.startswith("%%") else STUB


def strip_outputs(nb: dict) -> dict:
    """``nb`` without outputs and execution counts (a new dictionary)."""
    nb = copy.deepcopy(nb)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell.get("metadata", {}).pop("execution", None)
    return nb


def tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


SEE_WHY = "%%see_why"


def sealed_source(text: str) -> str:
    """The student's version of a see-why cell: its magic line, then its code sealed."""
    if str(HERE.parent) not in sys.path:  # the repository's polylab, also when run as a plain script
        sys.path.insert(0, str(HERE.parent))
    from polylab.notebook.course import seal

    magic, _, code = text.partition("\n")
    return f"{magic}\n{seal(code)}"


def make_lab(nb: dict) -> dict:
    """The student notebook for the solved notebook ``nb``."""
    lab = strip_outputs(nb)
    for cell in lab["cells"]:
        if cell.get("cell_type") != "code":
            continue
        if "solution" in tags(cell):
            cell["source"] = _as_lines(stub_source(source_text(cell)))
        elif source_text(cell).startswith(SEE_WHY):
            cell["source"] = _as_lines(sealed_source(source_text(cell)))
    return lab


def dumps(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def solutions(directory: Path = HERE) -> list[Path]:
    """The solved notebooks, discovered: every ``lab*.ipynb`` of ``directory``."""
    return sorted(p for p in directory.glob("lab*.ipynb") if not p.name.startswith("."))


def write_labs(out: Path = LABS, source: Path = HERE) -> list[Path]:
    """Write one lab per solved notebook into ``out``; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in solutions(source):
        lab = make_lab(json.loads(path.read_text(encoding="utf-8")))
        target = out / path.name
        target.write_text(dumps(lab), encoding="utf-8")
        written.append(target)
    return written


def problems(out: Path = LABS, source: Path = HERE) -> list[str]:
    """What is wrong with ``out`` compared with what :func:`write_labs` would write (empty when in sync)."""
    found = []
    names = {p.name for p in solutions(source)}
    for extra in sorted(p.name for p in out.glob("lab*.ipynb")) if out.is_dir() else []:
        if extra not in names:
            found.append(f"{out / extra}: no solved notebook of that name in {source}")
    for path in solutions(source):
        target = out / path.name
        if not target.is_file():
            found.append(f"{target}: missing (run python solutions/make_labs.py)")
            continue
        want = make_lab(json.loads(path.read_text(encoding="utf-8")))
        have = json.loads(target.read_text(encoding="utf-8"))
        if [source_text(c) for c in have.get("cells", [])] != [source_text(c) for c in want["cells"]]:
            found.append(f"{target}: cells differ from {path} (run python solutions/make_labs.py)")
        if any(c.get("outputs") or c.get("execution_count") is not None
               for c in have.get("cells", []) if c.get("cell_type") == "code"):
            found.append(f"{target}: has outputs (labs are committed without outputs)")
    return found


def write_otter(out: Path, source: Path = HERE) -> list[Path]:
    """Write otter-grader master notebooks ``out/<lab>/<notebook>`` (see :mod:`polylab.grading.otter`)."""
    from polylab.grading import get_lab, load_hidden
    from polylab.grading.otter import master_notebook

    written = []
    for path in solutions(source):
        nb = json.loads(path.read_text(encoding="utf-8"))
        lab = get_lab(nb.get("metadata", {}).get("polylab", {}).get("lab", ""))
        target = out / lab.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dumps(master_notebook(nb, lab, load_hidden(source.parent / "instructor" / "hidden", lab))), encoding="utf-8")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only check that labs/ is in sync; exit 1 if not")
    p.add_argument("--strip", action="store_true", help="strip the outputs of solutions/*.ipynb in place")
    p.add_argument("--out", type=Path, default=LABS, help="output directory (default: labs/)")
    p.add_argument("--otter", type=Path, default=None, metavar="DIR",
                   help="also write otter-grader master notebooks into DIR/<lab>/")
    args = p.parse_args(argv)
    if args.check:
        found = problems(args.out)
        for line in found:
            print(line, file=sys.stderr)
        return 1 if found else 0
    if args.strip:
        for path in solutions():
            nb = json.loads(path.read_text(encoding="utf-8"))
            clean = dumps(strip_outputs(nb))
            if clean != path.read_text(encoding="utf-8"):
                path.write_text(clean, encoding="utf-8")
                print(f"stripped {path}")
    for target in write_labs(args.out):
        print(f"wrote {target}")
    if args.otter is not None:
        for target in write_otter(args.otter):
            print(f"wrote {target} (otter master notebook)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
