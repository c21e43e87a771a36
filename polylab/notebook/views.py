"""The panels the magics show: a SCoP summary, a schedule verdict with its code, a run report.

A panel is built from the engine's values (Scop, DependenceGraph, Schedule, legality report, generated
code, experiment result) and the pictures of :mod:`polylab.notebook.plots`; it carries ``text/plain`` and
``text/html`` forms (:class:`polylab.notebook.display.Panel`).
"""

from __future__ import annotations

import statistics
from typing import Mapping

import sympy
from matplotlib.figure import Figure

from polylab.analysis import DependenceGraph
from polylab.analysis.display import dependence_table
from polylab.errors import PolylabError
from polylab.experiment import RunReport
from polylab.model import Access, Program, Scop, Statement
from polylab.notebook import geometry, plots
from polylab.notebook.display import Code, Panel, table_html, table_text, verdict_html
from polylab.render import esc
from polylab.schedule import LegalityReport, Schedule
from polylab.schedule.deps import Dep

#: at most this many statement pictures in one summary
MAX_PICTURES = 4


def domain_inequalities(stmt: Statement) -> list[str]:
    """The iteration domain of ``stmt`` as inequalities ``a . x + b >= 0`` (and equalities)."""
    lines = []
    for piece in stmt.domain_matrices():
        x = sympy.Matrix([sympy.Symbol(n, integer=True) for n in piece.iterators])
        if piece.A.rows:
            lines += [f"{sympy.sstr(r)} >= 0" for r in list(piece.A * x + piece.b)]
        if piece.E.rows:
            lines += [f"{sympy.sstr(r)} = 0" for r in list(piece.E * x + piece.e)]
        lines += list(piece.other)
    return lines or ["(no constraints)"]


def _matrix_html(rows: list[list[str]]) -> str:
    if not rows:
        return "<span>[ ]</span>"
    body = "".join("<tr>" + "".join(f"<td style='border:none;padding:0 4px;text-align:right'>{esc(v)}</td>"
                                    for v in r) + "</tr>" for r in rows)
    return ("<table style='display:inline-table;border-left:1.5px solid #333;border-right:1.5px solid #333;"
            f"border-top:none;border-bottom:none;margin:0 2px;vertical-align:middle'>{body}</table>")


def access_row(stmt: Statement, acc: Access) -> tuple[str, str, str]:
    """``(text form, HTML form, F x + c in words)`` of one access."""
    iters = list(stmt.iterators)
    if acc.matrix is None:
        fx = f"not affine without division: {acc.relation}"
        return fx, f"<code>{esc(acc.relation)}</code>", fx
    F = [[sympy.sstr(v) for v in acc.matrix.row(r)] for r in range(acc.matrix.rows)]
    c = [[sympy.sstr(v)] for v in acc.offset]
    x = [[v] for v in iters]
    text = ("F = [" + ", ".join("[" + ", ".join(r) + "]" for r in F) + "], c = ["
            + ", ".join(r[0] for r in c) + "]")
    h = f"{_matrix_html(F)}{_matrix_html(x)} + {_matrix_html(c)}" if F else f"{_matrix_html(c)} (scalar)"
    return text, h, text


def scop_summary(scop: Scop, deps: DependenceGraph | None = None, *, params: Mapping[str, int] | None = None,
                 name: str = "scop", program: Program | None = None, pictures: bool = True) -> Panel:
    """The ``%%scop`` panel: statements, domains as inequalities, accesses as ``F x + c``, dependences
    and pictures of the iteration spaces (up to three dimensions) with dependence arrows."""
    values = geometry.picture_params(scop, params)
    head = (f"SCoP stored as `{name}`: {len(scop.statements)} statement(s), parameters "
            f"{', '.join(scop.parameters) or 'none'}")
    p = Panel(head)
    arrays = "  ".join(a.declaration() for a in scop.arrays) or "none"
    p.add("arrays", arrays, f"<code>{esc(arrays)}</code>")
    rows = [(s.name, s.line, "(" + ", ".join(s.iterators) + ")", s.text) for s in scop.statements]
    p.add("statements", table_text(["name", "line", "iterators", "statement"], rows),
          table_html(["name", "line", "iterators", "statement"], rows, code_cols=(3,)))
    dom_t, dom_h = [], []
    for s in scop.statements:
        ineq = domain_inequalities(s)
        dom_t.append(f"{s.name}: " + ";  ".join(ineq))
        dom_h.append(f"<tr><td>{esc(s.name)}</td><td>{'<br>'.join(esc(x) for x in ineq)}</td>"
                     f"<td><code>{esc(s.domain)}</code></td></tr>")
    p.add("iteration domains (A x + b \u2265 0)", "\n".join(dom_t),
          "<table><tr><th>statement</th><th>inequalities</th><th>isl set</th></tr>" + "".join(dom_h)
          + "</table>")
    acc_t, acc_h = [], []
    for s in scop.statements:
        for a in s.accesses:
            t, h, _ = access_row(s, a)
            acc_t.append(f"{s.name} {a.kind:5} {a.text:20} {t}")
            acc_h.append(f"<tr><td>{esc(s.name)}</td><td>{esc(a.kind)}</td><td><code>{esc(a.text)}</code></td>"
                         f"<td>{h}</td></tr>")
    p.add("access functions (F x + c)", "\n".join(acc_t),
          "<table><tr><th>statement</th><th>kind</th><th>reference</th><th>F x + c</th></tr>"
          + "".join(acc_h) + "</table>")
    if deps is not None:
        p.add(*dependence_section(deps))
    if program is not None and program.rejected:
        rej = [str(r) for r in program.rejected]
        p.add("left out of the static control part", "\n".join(rej),
              "<ul>" + "".join(f"<li>{esc(r)}</li>" for r in rej) + "</ul>")
    if pictures:
        for caption, fig in summary_figures(scop, deps, values):
            p.add_figure(caption, fig)
    return p


def dependence_section(deps: DependenceGraph) -> tuple[str, str, str]:
    """``(heading, text, html)`` for a dependence graph."""
    items = deps.dependences
    kind = "value-based" if deps.value_based else "memory-based"
    heading = f"dependences ({kind}, exact): {len(items)}"
    if not items:
        return heading, "none", "<i>none: every loop is parallel</i>"
    return heading, "\n".join(str(d) for d in items), dependence_table(items)


def summary_figures(scop: Scop, deps: DependenceGraph | None, values: Mapping[str, int]
                    ) -> list[tuple[str, Figure]]:
    """Pictures for a summary: each statement (<= 3 dims) with its self-dependences (all dependences when
    there is one statement), and the statement dependence graph when there are several statements."""
    out = []
    views = plots.as_dep_views(deps) if deps is not None else []
    suffix = ", ".join(f"{k} = {v}" for k, v in values.items())
    stmts = [s for s in scop.statements if 1 <= len(s.iterators) <= 3]
    for s in stmts[:MAX_PICTURES]:
        own = [d for d in views if d.source == s.name and d.sink == s.name]
        title = f"{s.name}: {s.text}"
        fig = plots.iteration_space(scop, own, params=values, statements=[s.name],
                                    title=title if len(title) < 60 else title[:57] + "...")
        out.append((f"{s.name}: iteration space{' and dependences' if own else ''} ({suffix})", fig))
    if len(scop.statements) > 1 and deps is not None:
        out.append(("statement dependence graph",
                    plots.dependence_graph(deps, [s.name for s in scop.statements])))
    return out


def _dep_label(dep: Dep) -> str:
    return f"{dep.kind} {dep.source} \u2192 {dep.sink} on {dep.array}"


def schedule_summary(scop: Scop, schedule: Schedule, report: LegalityReport, code: str | None, *,
                     deps: DependenceGraph | None = None, params: Mapping[str, int] | None = None,
                     name: str = "schedule", spec: str = "", code_error: str | None = None) -> Panel:
    """The ``%%schedule`` panel: the verdict (with the violated dependences and pairs), the schedule, the
    picture (points coloured by time, the first violating pair marked) and the transformed code."""
    p = Panel(f"schedule stored as `{name}`")
    if report.legal:
        p.add("legality", "legal: every dependence u -> v has theta(u) <lex theta(v)",
              verdict_html(True, "legal: every dependence u \u2192 v has \u03b8(u) \u227a \u03b8(v)"))
    else:
        lines, hl = [], []
        for v in report.violations:
            label = _dep_label(v.dependence)
            lines.append(f"violates {label}: {v.source} -> {v.sink}\n    {v.message}")
            hl.append(f"<li>violates <b>{esc(label)}</b> (pair <code>{esc(v.source)}</code> \u2192 "
                      f"<code>{esc(v.sink)}</code>, marked in red on the picture): {esc(v.message)}</li>")
        p.add("legality", "ILLEGAL\n" + "\n".join(lines),
              verdict_html(False, "illegal") + "<ul>" + "".join(hl) + "</ul>")
    text = schedule.text()   # the schedule layer's own form: floor(...) kept readable
    p.add("schedule", text, f"<code>{esc(text)}</code>")
    par = list(schedule.parallel_dims)
    p.add("parallel dimensions", ", ".join(f"t{d}" for d in par)
          + " (coincident: the iterations of each may run in parallel)" if par else "none")
    stmts = [s for s in scop.statements if 1 <= len(s.iterators) <= 3]
    if stmts:
        try:
            p.add_figure(*_schedule_picture(scop, schedule, report, deps, params, stmts))
        except PolylabError as exc:  # a picture that cannot be drawn (unbounded, too big) must not hide the verdict
            p.add("picture", f"no picture: {exc.message}")
    if code is not None:
        p.add("transformed code", code, Code(code)._repr_mimebundle_()["text/html"])
    elif code_error:
        p.add("transformed code", code_error, f"<i>{esc(code_error)}</i>")
    return p


def _schedule_picture(scop: Scop, schedule: Schedule, report: LegalityReport, deps: DependenceGraph | None,
                      params: Mapping[str, int] | None, stmts: list[Statement]) -> tuple[str, Figure]:
    """The statement the first violation ends in (else the last one), its points coloured by time and the
    violating pair marked; at the violation's parameter values when the pair lies outside the picture."""
    values = geometry.picture_params(scop, params)
    first = report.violations[0] if report.violations else None
    pick = [s for s in stmts if first is not None and s.name == first.dependence.sink] or stmts[-1:]
    s = pick[0]
    if first is not None and not _drawn(s, (first.source_instance, first.sink_instance), values):
        values = {**values, **first.params}
    views = [d for d in plots.as_dep_views(deps) if d.source == s.name and d.sink == s.name]
    fig = plots.iteration_space(scop, views, params=values, statements=[s.name], schedule=schedule,
                                highlight=first, title=f"{s.name} coloured by time")
    return f"{s.name}: points coloured by their time ({', '.join(f'{k}={v}' for k, v in values.items())})", fig


def _drawn(stmt: Statement, pair: tuple[tuple[int, ...], tuple[int, ...]], values: Mapping[str, int]) -> bool:
    """True when both instances of ``pair`` are points of ``stmt``'s domain at ``values``."""
    pts = {tuple(p) for p in geometry.points(stmt.domain, values).tolist()}
    return all(tuple(x) in pts for x in pair)


def run_summary(label: str, result: RunReport, history: Mapping[str, RunReport],
                baseline: str = "original") -> Panel:
    """``%polyrun`` output: a %timeit-style line, the verification verdict and a chart of all variants."""
    p = Panel(f"run: {label}")
    if result.seconds is None:
        why = f"not timed: {result.reason}" if result.reason else "not timed"
        p.add("", why, f"<pre>{esc(why)}</pre>")
        if result.verification is not None:
            p.add("verification", str(result.verification))
        if result.code is not None:
            p.add("generated code", result.code.kernel, Code(result.code.kernel)._repr_mimebundle_()["text/html"])
        return p
    line = timeit_line(result)
    p.add("", line, f"<pre>{esc(line)}</pre>")
    if result.verified is not None:
        where = result.verification.first_difference if result.verification is not None else None
        bad = "output differs from the original's" + (f": first difference at {where}" if where else "")
        good = "verified: output equals the original's"
        p.add("verification", good if result.verified else bad.upper(),
              verdict_html(bool(result.verified), good if result.verified else bad))
    chart: dict[str, plots.Seconds] = {baseline: result.baseline} if result.baseline is not None else {}
    for name, r in history.items():
        if r.seconds is not None:
            chart[name] = r.seconds
    if chart:
        p.add_figure("median run times", plots.timing_chart(chart, baseline=baseline if baseline in chart else None))
    return p


def timeit_line(result: RunReport) -> str:
    """``1.23 ms ± 0.04 ms per run (median of 5 runs, 2 threads, openmp); original 2.01 ms: 1.63x``."""
    s = result.seconds
    assert s is not None
    threads, target = result.threads, result.target
    extra = ", ".join(x for x in (f"{threads} thread{'s' if threads != 1 else ''}" if threads else "",
                                  str(target) if target else "") if x)
    n = len(s.runs)
    spread = statistics.pstdev(s.runs) if n > 1 else 0.0
    line = (f"{plots.format_seconds(s.median)} \u00b1 {plots.format_seconds(spread)} per run (median of {n} run"
            f"{'s' if n != 1 else ''}{', ' + extra if extra else ''})")
    if result.baseline is not None:
        speed = result.speedup
        line += f"; original {plots.format_seconds(result.baseline.median)}" + (f": {speed:.2f}x" if speed else "")
        if result.speedup_refused:
            line += f"; no speedup reported: {result.speedup_refused}"
    return line
