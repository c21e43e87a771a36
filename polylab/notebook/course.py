"""What the labs use beside the checks: the "see why" gate, and the views that teach space-time mapping.

**See why.** A cell that shows the answer of a question (a dependence table, the report of a proof, a
picture) runs only once that question is answered right:

    %%see_why lab2.q1
    compute_dependences(sw)

The magic grades the question's answer variables in the notebook (public cases, as the check cell does);
when every question named on the line is right the cell runs as usual, otherwise it shows which answer
opens it and runs nothing. So a student never meets an answer before giving it, and *Run All* of an
untouched lab still reaches its end. The labs only put displays behind the gate: no later cell needs what
a gated cell computes.

**Sealed bodies.** In the student release (``solutions/make_labs.py``) a see-why cell's code is *sealed*:
:func:`seal` writes it as comment lines that carry it compressed and base64-encoded, so the release shows
no line of it and a cell whose magic line is deleted runs nothing (it is only comments). The magic
:func:`unseal` s the body once every named question is right, shows the code in a fold and runs it. A sealed
cell that names a multiple-choice question never opens in the notebook (opening it only for the right
option would eliminate the others; the grader's report judges a choice), while the instructor's solutions,
whose bodies are plain, open as usual. The seal is a courtesy lock against copying, not security: whoever
decodes base64 and zlib, or reads the package, can see the code; the grade always comes from the grader.
:func:`answered_right` is the gate's test from Python.

**Space-time mapping.** A readable processor allocation and a space-time diagram.

A space-time mapping splits the rows of a schedule ``Theta x + theta`` into *time* rows (sequential) and
*space* rows (parallel: they carry no dependence once the time rows agree). A processor allocation maps the
space coordinate ``s(x)`` to a processor ``p = floor(s(x) / B)``: ``B`` consecutive virtual processors (one
per value of ``s``) share one physical processor, a *tile* of the space dimension, and the tiles are then
dealt to threads. :func:`allocation` shows that mapping as formulas instead of raw isl maps;
:func:`space_time_diagram` draws, for each time step and processor, how many instances run there.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.display import HTML, display
from matplotlib.figure import Figure

from polylab.errors import ScheduleError
from polylab.errors import PolylabError
from polylab.grading import get_lab
from polylab.grading.verdict import Result
from polylab.notebook import geometry, plots
from polylab.notebook.display import table_html, table_text
from polylab.render import esc
from polylab.schedule import Schedule, processor_allocation, space_time


#: the first words of every line of a sealed body (see the module text)
SEALED = "# polylab-sealed "
_SEALED_NOTE = "# See why: sealed until its question is answered right (the %%see_why line above opens it)."
_WIDTH = 76


def seal(code: str) -> str:
    """``code`` as a sealed body: a note and comment lines ``# polylab-sealed <base64>`` of the zlib-compressed
    text (inert without the magic; :func:`unseal` gives ``code`` back)."""
    blob = base64.b64encode(zlib.compress(code.encode("utf-8"), 9)).decode("ascii")
    return "\n".join([_SEALED_NOTE] + [SEALED + blob[i:i + _WIDTH] for i in range(0, len(blob), _WIDTH)])


def unseal(body: str) -> str | None:
    """The code a sealed ``body`` carries, or None when ``body`` is not sealed (plain code)."""
    parts = [ln.strip()[len(SEALED):] for ln in body.splitlines() if ln.strip().startswith(SEALED.strip())]
    if not parts:
        return None
    try:
        return zlib.decompress(base64.b64decode("".join(p.strip() for p in parts))).decode("utf-8")
    except (ValueError, zlib.error):  # a sealed body edited by hand: nothing to run
        return ""


def _question(target: str):
    lab, _, qname = target.partition(".")
    return get_lab(lab).question(qname)


def answered_right(targets: Sequence[str], namespace: Mapping[str, Any]) -> tuple[Result, ...]:
    """The results of the questions ``targets`` (``"lab2.q1"``) on the answers in ``namespace``, graded
    with their public cases and the grader's verdicts (never raises: an unknown question is a result with
    status ``error``)."""
    out = []
    for t in targets:
        try:
            out.append(_question(t).grade(namespace, t.partition(".")[0]))
        except PolylabError as err:
            out.append(Result(t, "?", "", 0.0, 0.0, "error", (err.message,)))
    return tuple(out)


def _is_choice(target: str) -> bool:
    try:
        return _question(target).kind == "choice"
    except PolylabError:
        return False


def _note(html: str, text: str) -> None:
    display({"text/html": "<div class='polylab-see-why' style='border-left:4px solid #8c8c8c;background:#f4f4f4;"
                          "padding:6px 10px;font-family:var(--jp-ui-font-family,sans-serif);font-size:13px'>"
                          f"<b>See why</b>: {html}</div>",
             "text/plain": f"See why: {text}"}, raw=True)


def _closed_note(results: Sequence[Result]) -> None:
    waiting = [r.name for r in results if not r.correct]
    _note(f"this cell shows what answers {', '.join(f'<code>{esc(n)}</code>' for n in waiting)}. It runs once "
          "your answer is right: answer, check, then come back.",
          f"this cell shows what answers {', '.join(waiting)}. It runs once your answer is right: answer, check, "
          "then come back.")


def _code_fold(code: str) -> None:
    display({"text/html": f"<details><summary>the code of this cell</summary><pre>{esc(code)}</pre></details>",
             "text/plain": code}, raw=True)


@magics_class
class CourseMagics(Magics):
    """``%%see_why lab2.q1 [lab2.q4 ...]`` (see the module text)."""

    @cell_magic
    def see_why(self, line: str, cell: str) -> None:
        targets = line.split()
        if not targets:
            display(HTML("<b>%%see_why</b> needs the questions the cell answers, e.g. <code>%%see_why lab2.q1</code>"))
            return
        code = unseal(cell)
        if code is not None and any(_is_choice(t) for t in targets):
            names = ", ".join(targets)
            _note(f"{esc(names)} is a choice, judged by the grader: its report says why; this cell opens in the "
                  "solutions.", f"{names} is a choice, judged by the grader: its report says why; this cell opens "
                  "in the solutions.")
            return
        results = answered_right(targets, self.shell.user_ns)
        if not all(r.correct for r in results):
            _closed_note(results)
            return
        if code is not None:
            _code_fold(code)
        self.shell.run_cell(cell if code is None else code, store_history=False)


@dataclass(frozen=True)
class Allocation:
    """``p = floor(s(x) / B)`` per statement, with the time rows beside it (see the module text)."""

    schedule: Schedule
    block: int
    rows: tuple[tuple[str, str, str, str], ...]   # statement, time, space, processor
    maps: Mapping[str, object]

    def text(self) -> str:
        return (f"processor allocation, blocks of {self.block} virtual processors\n"
                + table_text(("statement", "time t", "space s (virtual processor)", "processor p"), self.rows))

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text())

    def _repr_html_(self) -> str:
        isl_text = "".join(f"<div><code>{esc(str(m))}</code></div>" for m in self.maps.values())
        return (f"<b>processor allocation, blocks of {self.block} virtual processors</b>"
                + table_html(("statement", "time t", "space s (virtual processor)", "processor p"), self.rows)
                + f"<details><summary>isl</summary>{isl_text}</details>")


def allocation(schedule: Schedule, block: int) -> Allocation:
    """The processor allocation ``p = floor(s(x) / block)`` of ``schedule``'s space dimension, readable.

    The time and space rows come from :func:`polylab.schedule.space_time`; the isl maps from
    :func:`polylab.schedule.processor_allocation` (the same mapping, kept for the curious)."""
    st = space_time(schedule)
    if not st.space_dims:
        raise ScheduleError("the schedule has no space (parallel) dimension to allocate",
                            hint="apply wavefront; parallel (or tile_wavefront) first")
    maps = processor_allocation(schedule, block, dims=list(st.space_dims))
    rows = []
    for m in st.statements:
        if m.Theta is None:
            rows.append((m.statement, "(not affine)", "(not affine)", "see the isl map"))
            continue
        exprs = [_row_text(m, d) for d in range(m.Theta.rows)]
        time = ", ".join(exprs[d] for d in st.time_dims) or "-"
        space = ", ".join(exprs[d] for d in st.space_dims)
        proc = ", ".join(f"floor({_paren(exprs[d])} / {block})" for d in st.space_dims)
        rows.append((m.statement, time, space, proc))
    return Allocation(schedule, block, tuple(rows), maps)


def _paren(expr: str) -> str:
    return expr if expr.isidentifier() or expr.lstrip("-").isdigit() else f"({expr})"


def _row_text(m, d: int) -> str:
    text = geometry.linear_text([int(x) for x in m.Theta.row(d)], m.iterators)
    const = m.theta[d] if m.theta is not None else 0
    return text if const == 0 else f"{text} + {const}"


def space_time_diagram(schedule: Schedule, block: int, params: Mapping[str, int], *,
                       statement: str | None = None) -> Figure:
    """Time on the horizontal axis, processors ``p = floor(s / block)`` on the vertical one; each cell shows
    how many instances of ``statement`` (default: the first) processor ``p`` runs at time ``t``. A column is
    one wave: its cells run in parallel, and the columns run one after another (one barrier between two)."""
    st = space_time(schedule)
    if not st.space_dims or not st.time_dims:
        raise ScheduleError("a space-time diagram needs a time and a space dimension",
                            hint="apply wavefront; parallel first")
    stmt = schedule.scop.statement(statement) if statement else schedule.scop.statements[0]
    pts = geometry.points(stmt.domain, params)
    times = plots.instance_times(schedule, stmt.name, pts, stmt.domain, params)
    t = times[:, st.time_dims[0]]
    p = np.floor_divide(times[:, st.space_dims[0]], block)
    t0, p0 = int(t.min()), int(p.min())
    grid = np.zeros((int(p.max()) - p0 + 1, int(t.max()) - t0 + 1), dtype=int)
    np.add.at(grid, (p - p0, t - t0), 1)
    fig = Figure(figsize=(min(12.0, 1.5 + 0.35 * grid.shape[1]), 1.2 + 0.45 * grid.shape[0]), layout="constrained")
    ax = fig.add_subplot()
    ax.imshow(np.ma.masked_equal(grid, 0), origin="lower", aspect="auto", cmap="Blues", vmin=0,
              extent=(t0 - 0.5, t0 + grid.shape[1] - 0.5, p0 - 0.5, p0 + grid.shape[0] - 0.5))
    if grid.size <= 600:
        for (r, c), n in np.ndenumerate(grid):
            if n:
                ax.text(t0 + c, p0 + r, str(n), ha="center", va="center", fontsize=7)
    ax.set_xlabel("time t (one wave per column)")
    ax.set_ylabel(f"processor p = floor(s / {block})")
    ax.set_yticks(range(p0, p0 + grid.shape[0]))
    where = ", ".join(f"{k}={v}" for k, v in params.items())
    ax.set_title(f"space-time diagram of {stmt.name} ({where}): instances per processor and time", fontsize=10)
    return fig


__all__ = ["SEALED", "Allocation", "CourseMagics", "allocation", "answered_right", "seal", "space_time_diagram",
           "unseal"]
