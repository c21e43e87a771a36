"""What ``polylab grade`` writes: a table for the terminal, the JSON of every submission, a CSV for a
gradebook and a Gradescope-style ``results.json`` per submission.

JSON: ``{"sandbox": BOOL, "submissions": [{"path", "lab", "score", "max_score", "questions": [{"name",
"score", "max", "status", "feedback", "hidden_cases"}], "errors": [...], "cell_errors": [...], "seconds",
"sandbox"}]}`` (``sandbox``: false when any submission ran without the bubblewrap sandbox, ``--no-sandbox``).

CSV: one row per submission: ``path, lab, score, max_score, <one column per question>, errors``.

Gradescope (the autograder's ``results.json`` format): ``{"score", "execution_time", "output", "tests":
[{"name", "score", "max_score", "status", "output"}]}``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Sequence

from polylab.grading.batch import SubmissionResult


#: the warning of a table graded without the sandbox
NO_SANDBOX = ("WARNING: graded without the sandbox (--no-sandbox): the submissions could see this machine's "
              "files, processes and network; do not trust these scores against a determined student")


def table(results: Sequence[SubmissionResult], hidden: str | None = None) -> str:
    """A plain-text table: one row per submission (score, seconds, why points were lost without an answer
    being wrong), then one line per question that did not get full marks, and where the hidden cases came
    from; it starts with a warning when a submission ran without the sandbox."""
    header = ("submission", "lab", "score", "seconds", "notes")
    rows = []
    for r in results:
        notes = "; ".join(r.errors) or ("" if r.report else "not graded")
        rows.append((Path(r.path).name, r.lab or "?", f"{r.score:g}/{r.max_score:g}", f"{r.seconds:.1f}",
                     notes[:100] + ("..." if len(notes) > 100 else "")))
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    details = []
    for r in results:
        for q in r.questions:
            if q.status != "correct":
                first = q.feedback[0].splitlines()[0] if q.feedback else ""
                details.append(f"{Path(r.path).name}: {q.name} {q.score:g}/{q.max:g} {q.status}: {first[:110]}")
    if details:
        lines += ["", "questions without full marks:", *("  " + d for d in details)]
    lines += ["", f"hidden cases: {hidden}" if hidden else "hidden cases: none (give --hidden DIR)"]
    if not all(r.sandbox for r in results):
        lines = [NO_SANDBOX, "", *lines, "", NO_SANDBOX]
    return "\n".join(lines)


def to_json(results: Sequence[SubmissionResult]) -> str:
    return json.dumps({"sandbox": all(r.sandbox for r in results), "submissions": [r.to_json() for r in results]},
                      indent=1, ensure_ascii=False) + "\n"


def to_csv(results: Sequence[SubmissionResult]) -> str:
    """One row per submission; a column per question of every lab that occurs (in order of appearance)."""
    columns: list[str] = []
    for r in results:
        for q in r.questions:
            if q.name not in columns:
                columns.append(q.name)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["path", "lab", "score", "max_score", *columns, "errors"])
    for r in results:
        scores = {q.name: q.score for q in r.questions}
        w.writerow([r.path, r.lab or "", r.score, r.max_score, *(scores.get(c, "") for c in columns),
                    "; ".join(r.errors)])
    return buf.getvalue()


def gradescope(result: SubmissionResult) -> dict:
    """The Gradescope autograder ``results.json`` of one submission."""
    tests = [{"name": f"{q.name} {q.title}".strip(), "score": q.score, "max_score": q.max,
              "status": "passed" if q.status == "correct" else "failed",
              "output": "\n".join(q.feedback) or q.status} for q in result.questions]
    return {"score": result.score, "execution_time": round(result.seconds, 2),
            "output": "\n".join([*result.errors, *result.cell_errors]), "tests": tests}


def write_gradescope(results: Sequence[SubmissionResult], directory: Path) -> list[Path]:
    """``directory/<submission name>/results.json`` for every submission; a name that repeats is prefixed
    with its folder's name (``labs-lab1``), then numbered."""
    written, used = [], set()
    for r in results:
        path = Path(r.path)
        stem = path.stem or "submission"
        name, k = stem, 2
        if name in used:
            name = f"{path.parent.name}-{stem}"
        while name in used:
            name, k = f"{path.parent.name}-{stem}-{k}", k + 1
        used.add(name)
        target = directory / name / "results.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(gradescope(r), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    return written


__all__ = ["NO_SANDBOX", "gradescope", "table", "to_csv", "to_json", "write_gradescope"]
