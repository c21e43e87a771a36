"""otter-grader compatibility: a solved notebook in otter's *assignment* format, for instructors who already
run ``otter assign`` and Gradescope. polylab's own grader (``polylab grade``) is the Docker-free path.

The master notebook written here is the solved notebook with otter's markers added:

* a first raw cell ``# ASSIGNMENT CONFIG`` (YAML: the lab's name; no init, export or check-all cells: the
  polylab check cells stay the students' immediate feedback);
* for each check cell, one question block: raw ``# BEGIN QUESTION`` (name, points: the sum of the questions the
  check cell asks about), the solution cells before it between raw ``# BEGIN SOLUTION`` / ``# END SOLUTION``
  cells (inside them, ``### BEGIN SOLUTION`` lines become otter's ``# BEGIN SOLUTION``; a solution cell
  without markers is one solution whole, a leading ``%%magic`` kept), the other cells in between, the check
  cell, then raw ``# BEGIN TESTS``: one public test per question (it passes
  when polylab's check gives full marks, and fails with polylab's feedback), one hidden test per function
  question that has hidden cases (the cases are written into the test: otter keeps hidden tests out of the
  student's notebook), raw ``# END TESTS`` and ``# END QUESTION``.

otter grades a test as passed or failed, so partial credit is polylab's alone.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Mapping, Sequence

from polylab.grading.lab import Case, Lab

POLYLAB_BEGIN, POLYLAB_END = "### BEGIN SOLUTION", "### END SOLUTION"
OTTER_BEGIN, OTTER_END = "# BEGIN SOLUTION", "# END SOLUTION"
_CHECK = re.compile(r'check\(\s*["\'](\w+)["\']((?:\s*,\s*["\']\w+["\'])*)\s*\)')


def _source(cell: Mapping[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _cell(kind: str, text: str, tags: Sequence[str] = ()) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "metadata": {"tags": list(tags)} if tags else {}, "source": text}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def _tags(cell: Mapping[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def otter_solution(text: str) -> str:
    """A polylab solution cell's source with otter's solution markers."""
    if POLYLAB_BEGIN in text:
        return "\n".join(OTTER_BEGIN if ln.strip() == POLYLAB_BEGIN else OTTER_END if ln.strip() == POLYLAB_END
                         else ln for ln in text.splitlines())
    lines = text.splitlines()
    if lines and lines[0].startswith("%%"):
        return "\n".join([lines[0], OTTER_BEGIN, *lines[1:], OTTER_END])
    return "\n".join([OTTER_BEGIN, *lines, OTTER_END])


def _test(lab: Lab, question: str, hidden: Sequence[Case] = ()) -> str:
    head = ('""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n' if hidden else "")
    cases = f", [{', '.join(repr(c) for c in hidden)}]" if hidden else ""
    return (f"{head}import polylab.grading as _pg\n{'from polylab.grading import Case' + chr(10) if hidden else ''}"
            f"_r = _pg.get_lab({lab.name!r}).question({question!r}).grade(globals(), {lab.name!r}{cases})\n"
            f"assert _r.correct, str(_r)")


def master_notebook(nb: Mapping[str, Any], lab: Lab, hidden: Mapping[str, Sequence[Case]] | None = None
                    ) -> dict[str, Any]:
    """The otter master notebook of the solved notebook ``nb`` of ``lab`` (see the module text)."""
    hidden = hidden or {}
    out = copy.deepcopy(dict(nb))
    config = (f"# ASSIGNMENT CONFIG\nname: {lab.name}\ninit_cell: false\ncheck_all_cell: false\n"
              "export_cell: false\nsolutions_pdf: false\ntemplate_pdf: false\n")
    cells: list[dict[str, Any]] = [_cell("raw", config)]
    pending: list[dict[str, Any]] = []
    for cell in nb["cells"]:
        tags = _tags(cell)
        if "solution" in tags:
            pending.append(_cell("code", otter_solution(_source(cell)), tags))
            continue
        if "check" in tags:
            m = _CHECK.search(_source(cell))
            names = re.findall(r"\w+", m.group(2)) if m else []
            questions = [lab.question(n) for n in names]
            points = sum(q.points for q in questions)
            cells.append(_cell("raw", f"# BEGIN QUESTION\nname: {'_'.join(names) or 'check'}\npoints: {points:g}\n"))
            solutions = [c for c in pending if "solution" in _tags(c)]
            cells += [_cell("raw", "# BEGIN SOLUTION"), *solutions, _cell("raw", "# END SOLUTION")]
            cells += [c for c in pending if "solution" not in _tags(c)]
            pending = []
            cells.append(_cell("code", _source(cell), tags))
            cells.append(_cell("raw", "# BEGIN TESTS"))
            for q in questions:
                cells.append(_cell("code", _test(lab, q.name)))
                if hidden.get(q.name):
                    cells.append(_cell("code", _test(lab, q.name, hidden[q.name])))
            cells.append(_cell("raw", "# END TESTS"))
            cells.append(_cell("raw", "# END QUESTION"))
            continue
        (pending if pending else cells).append(copy.deepcopy(dict(cell)))
    cells.extend(pending)
    for c in cells:
        if c["cell_type"] == "code":
            c["outputs"], c["execution_count"] = [], None
    out["cells"] = cells
    return out


__all__ = ["master_notebook", "otter_solution"]
