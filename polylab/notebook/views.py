"""The panels the magics show: a SCoP summary, a schedule verdict with its code, a run report.

A panel is built from the engine's values (Scop, DependenceGraph, Schedule, legality report, generated
code, experiment result) and the pictures of :mod:`polylab.notebook.plots`; it carries ``text/plain`` and
``text/html`` forms (:class:`polylab.notebook.display.Panel`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import sympy

from polylab.notebook import backend, plots
from polylab.notebook.display import Code, Panel, esc, table_html, table_text, verdict_html

#: at most this many statement pictures in one summary
MAX_PICTURES = 4


def domain_inequalities(stmt: Any) -> list[str]:
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


def _matrix_html(rows: list[list[Any]]) -> str:
    if not rows:
        return "<span>[ ]</span>"
    body = "".join("<tr>" + "".join(f"<td style='border:none;padding:0 4px;text-align:right'>{esc(v)}</td>"
                                    for v in r) + "</tr>" for r in rows)
    return ("<table style='display:inline-table;border-left:1.5px solid #333;border-right:1.5px solid #333;"
            f"border-top:none;border-bottom:none;margin:0 2px;vertical-align:middle'>{body}</table>")


def access_row(stmt: Any, acc: Any) -> tuple[str, str, str]:
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


def scop_summary(scop: Any, deps: Any = None, *, params: Mapping[str, int] | None = None,
                 name: str = "scop", program: Any = None, pictures: bool = True,
                 dep_error: str | None = None) -> Panel:
    """The ``%%scop`` panel: statements, domains as inequalities, accesses as ``F x + c``, dependences
    and pictures of the iteration spaces (up to three dimensions) with dependence arrows."""
    values = plots.geometry.picture_params(scop, params)
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
    elif dep_error:
        p.add("dependences", dep_error, f"<i>{esc(dep_error)}</i>")
    if program is not None and getattr(program, "rejected", ()):
        rej = [str(r) for r in program.rejected]
        p.add("left out of the static control part", "\n".join(rej),
              "<ul>" + "".join(f"<li>{esc(r)}</li>" for r in rej) + "</ul>")
    if pictures:
        for caption, fig in summary_figures(scop, deps, values):
            p.add_figure(caption, fig)
    return p


def dependence_section(deps: Any) -> tuple[str, str, str]:
    """``(heading, text, html)`` for a dependence graph."""
    items = list(getattr(deps, "dependences", deps))
    kind = "value-based" if getattr(deps, "value_based", False) else "memory-based"
    heading = f"dependences ({kind}, exact): {len(items)}"
    if not items:
        return heading, "none", "<i>none: every loop is parallel</i>"
    text = "\n".join(str(d) for d in items)
    try:
        from polylab.analysis.display import dependence_table

        h = dependence_table(items)
    except Exception:
        rows = [(d.kind, d.source, d.sink, d.array, str(d.relation)) for d in items]
        h = table_html(["kind", "source", "sink", "array", "relation"], rows, code_cols=(4,))
    return heading, text, h


def summary_figures(scop: Any, deps: Any, values: Mapping[str, int]) -> list[tuple[str, Any]]:
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


def schedule_summary(scop: Any, schedule: Any, report: Any, code: str | None, *, deps: Any = None,
                     params: Mapping[str, int] | None = None, name: str = "schedule", spec: str = "",
                     code_error: str | None = None) -> Panel:
    """The ``%%schedule`` panel: the verdict (with the violated dependence and pair), the schedule, the
    picture (points coloured by time, violating pair marked) and the transformed code."""
    legal = backend.report_legal(report) if report is not None else True
    viols = backend.report_violations(report) if report is not None else []
    p = Panel(f"schedule stored as `{name}`")
    if report is None:
        p.add("legality", "not checked", "<i>not checked</i>")
    elif legal:
        p.add("legality", "legal: every dependence u -> v has theta(u) <lex theta(v)",
              verdict_html(True, "legal: every dependence u \u2192 v has \u03b8(u) \u227a \u03b8(v)"))
    else:
        lines, hl = [], []
        for v in viols:
            dep = backend.violation_dependence(v)
            u, w = backend.violation_pair(v)
            label = plots.dependence_label(dep) if dep is not None else str(v)
            src = f"{getattr(dep, 'source', '')}{list(u) if isinstance(u, tuple) else u}"
            snk = f"{getattr(dep, 'sink', '')}{list(w) if isinstance(w, tuple) else w}"
            why = getattr(v, "message", None) or (f"the sink {snk} would run no later than its source {src}")
            lines.append(f"violates {label}: {src} -> {snk}\n    {why}")
            hl.append(f"<li>violates <b>{esc(label)}</b> (pair <code>{esc(src)}</code> \u2192 "
                      f"<code>{esc(snk)}</code>, marked in red on the picture): {esc(why)}</li>")
        p.add("legality", "ILLEGAL\n" + "\n".join(lines),
              verdict_html(False, "illegal") + "<ul>" + "".join(hl) + "</ul>")
    tree = getattr(schedule, "tree", schedule)
    try:
        smap = plots.schedule_union_map(schedule)
        text = str(smap)
    except Exception:
        smap, text = None, str(tree)
    if callable(getattr(schedule, "text", None)):  # the schedule layer's own form: floor(...) kept readable
        try:
            text = str(schedule.text())
        except Exception:
            pass
    p.add("schedule", text, f"<code>{esc(text)}</code>")
    par = _parallel_text(schedule)
    if par:
        p.add("parallel dimensions", par)
    stmts = [s for s in scop.statements if 1 <= len(s.iterators) <= 3]
    if smap is not None and stmts:
        values = plots.geometry.picture_params(scop, params)
        highlight = None
        hl_stmt = None
        if viols:
            u, w = backend.violation_pair(viols[0])
            dep = backend.violation_dependence(viols[0])
            highlight = (u, w)
            hl_stmt = getattr(dep, "sink", None)
        pick = [s for s in stmts if s.name == hl_stmt] or stmts[-1:]
        s = pick[0]
        if highlight is not None and not _drawn(s, highlight, values):
            # the smallest violating pair lies outside the drawn domain: draw at the violation's values
            values = {**values, **dict(getattr(viols[0], "params", {}) or {})}
        views = [d for d in plots.as_dep_views(deps) if d.source == s.name and d.sink == s.name] \
            if deps is not None else []
        try:
            fig = plots.iteration_space(scop, views, params=values, statements=[s.name], schedule=smap,
                                        highlight=highlight, title=f"{s.name} coloured by time")
            p.add_figure(f"{s.name}: points coloured by their time ({', '.join(f'{k}={v}' for k, v in values.items())})",
                         fig)
        except Exception as exc:  # a picture must not hide the verdict
            p.add("picture", f"no picture: {exc}")
    if code is not None:
        c = Code(code)
        bundle = c._repr_mimebundle_()
        p.add("transformed code", code, bundle["text/html"])
    elif code_error:
        p.add("transformed code", code_error, f"<i>{esc(code_error)}</i>")
    return p


def _drawn(stmt: Any, pair: tuple[Any, Any], values: Mapping[str, int]) -> bool:
    """True when both instances of ``pair`` are points of ``stmt``'s domain at ``values``."""
    try:
        pts = {tuple(p) for p in plots.geometry.points(stmt.domain, values).tolist()}
        return all(tuple(int(v) for v in x) in pts for x in pair)
    except Exception:
        return True


def _parallel_text(schedule: Any) -> str:
    for attr in ("parallel", "parallel_dims", "coincident"):
        v = getattr(schedule, attr, None)
        if v is None:
            continue
        try:
            v = v() if callable(v) else v
        except Exception:
            continue
        try:
            dims = [int(d) for d in v]
        except (TypeError, ValueError):
            return str(v)
        return ", ".join(f"t{d}" for d in dims) + " (coincident: the iterations of each may run in parallel)" \
            if dims else "none"
    return ""


def run_summary(label: str, result: Any, history: Mapping[str, Any], baseline: str = "original") -> Panel:
    """``%polyrun`` output: a %timeit-style line, the verification verdict and a chart of all variants."""
    p = Panel(f"run: {label}")
    reason = getattr(result, "reason", None)
    if getattr(result, "seconds", 0) is None:
        why = f"not timed: {reason}" if reason else "not timed"
        p.add("", why, f"<pre>{esc(why)}</pre>")
        verification = getattr(result, "verification", None)
        if verification is not None:
            p.add("verification", str(verification))
        code = getattr(result, "code", None)
        if code is not None:
            p.add("generated code", backend.code_text(code), Code(backend.code_text(code))._repr_mimebundle_()["text/html"])
        return p
    p.add("", timeit_line(result), f"<pre>{esc(timeit_line(result))}</pre>")
    verified = getattr(result, "verified", None)
    if verified is not None:
        where = getattr(getattr(result, "verification", None), "first_difference", None)
        bad = "output differs from the original's" + (f": first difference at {where}" if where else "")
        p.add("verification", "verified: output equals the original's" if verified else bad.upper(),
              verdict_html(bool(verified), "verified: output equals the original's" if verified else bad))
    chart = {baseline: _baseline_seconds(result)} if _baseline_seconds(result) is not None else {}
    for name, r in history.items():
        if _seconds(r) is not None:
            chart[name] = _seconds(r)
    if chart:
        p.add_figure("median run times", plots.timing_chart(chart, baseline=baseline if baseline in chart else None))
    return p


def _seconds(r: Any) -> Any:
    s = getattr(r, "seconds", r)
    return s


def _baseline_seconds(r: Any) -> Any:
    b = getattr(r, "baseline", None)
    return b if b is not None else getattr(r, "baseline_seconds", None)


def _stats(s: Any) -> tuple[float, float, int]:
    import statistics

    if isinstance(s, Mapping):
        runs = list(s.get("runs") or [])
        med = float(s.get("median", statistics.median(runs) if runs else 0.0))
    elif hasattr(s, "median"):
        runs = list(getattr(s, "runs", ()) or [])
        med = float(s.median)
    elif isinstance(s, (int, float)):
        runs, med = [float(s)], float(s)
    else:
        runs = [float(x) for x in s]
        med = statistics.median(runs) if runs else 0.0
    spread = statistics.pstdev(runs) if len(runs) > 1 else 0.0
    return med, spread, len(runs)


def timeit_line(result: Any) -> str:
    """``1.23 ms ± 0.04 ms per run (median of 5 runs, 2 threads, openmp); original 2.01 ms: 1.63x``."""
    med, spread, n = _stats(getattr(result, "seconds", result))
    threads = getattr(result, "threads", None)
    target = getattr(result, "target", None)
    extra = ", ".join(x for x in (f"{threads} thread{'s' if threads != 1 else ''}" if threads else "",
                                  str(target) if target else "") if x)
    line = (f"{plots._fmt_seconds(med)} \u00b1 {plots._fmt_seconds(spread)} per run (median of {n} run"
            f"{'s' if n != 1 else ''}{', ' + extra if extra else ''})")
    base = _baseline_seconds(result)
    if base is not None:
        bmed, _, _ = _stats(base)
        speed = getattr(result, "speedup", None) or (bmed / med if med else None)
        line += f"; original {plots._fmt_seconds(bmed)}" + (f": {speed:.2f}x" if speed else "")
    return line


def names_of(seq: Sequence[Any]) -> list[str]:
    return [getattr(x, "name", str(x)) for x in seq]
