"""Text, HTML and LaTeX renderings of schedules, legality reports and search explanations.

Registered with :mod:`polylab.render` (``polylab/schedule/__init__.py`` imports this module): the values'
``__str__`` / ``_repr_html_`` / ``_repr_latex_`` reach these functions without importing this module.
"""

from __future__ import annotations

from typing import Sequence

import sympy

from polylab import render
from polylab.render import esc
from polylab.schedule.core import Schedule
from polylab.schedule.legality import LegalityReport
from polylab.schedule.pluto import PlutoResult
from polylab.schedule.spacetime import SpaceTimeMapping, space_time
from polylab.schedule.wavefront import WavefrontSolution


def _dims_line(s: Schedule) -> str:
    kinds = s.kinds
    return "  ".join(f"t{d}:{kinds[d]}" for d in range(s.n_dims))


@render.text.register
def schedule_text(s: Schedule) -> str:
    lines = [f"schedule of {s.scop.name}" + (f"  (steps: {'; '.join(s.steps)})" if s.steps else "")]
    for st in s.scop.statements:
        lines.append(f"  {st.name}[{', '.join(st.iterators)}] -> [{', '.join(s.expressions(st.name))}]")
    lines.append("  dimensions: " + _dims_line(s))
    lines.append("  bands: " + ", ".join(
        f"{list(b.dims)}{' permutable' if b.permutable and b.size > 1 else ''}" for b in s.bands))
    lines.append(f"  parallel loops (exact): {list(s.parallel_dims) or 'none'}"
                 + (f"; marked parallel: {sorted(s.marked)}" if s.marked else ""))
    lines += ["  " + n for n in s.notes]
    return "\n".join(lines)


@render.html.register
def schedule_html(s: Schedule) -> str:
    kinds = s.kinds
    head = "".join(f"<th>t{d}<br><small>{kinds[d]}</small></th>" for d in range(s.n_dims))
    rows = "".join(
        f"<tr><td><code>{esc(st.name)}[{esc(', '.join(st.iterators))}]</code></td>"
        + "".join(f"<td><code>{esc(e)}</code></td>" for e in s.expressions(st.name)) + "</tr>"
        for st in s.scop.statements)
    bands = ", ".join(f"{list(b.dims)}{' permutable' if b.permutable else ''}" for b in s.bands)
    notes = "".join(f"<li>{esc(n)}</li>" for n in s.notes)
    return (f"<div class='polylab-schedule'><b>schedule</b> {esc('; '.join(s.steps))}"
            f"<table><tr><th>statement</th>{head}</tr>{rows}</table>"
            f"bands: {esc(bands)}<br>parallel loops: {esc(list(s.parallel_dims) or 'none')}"
            f"{'<ul>' + notes + '</ul>' if notes else ''}</div>")


@render.latex.register
def schedule_latex(s: Schedule) -> str:
    return spacetime_latex(space_time(s))


@render.text.register
def spacetime_text(m: SpaceTimeMapping) -> str:
    lines = ["space-time mapping (p, t) = Theta x + theta",
             "  dimensions: " + ", ".join(f"t{d} {k}" for d, k in enumerate(m.kinds))]
    for sm in m.statements:
        if sm.Theta is None:
            lines.append(f"  {sm.statement}: {sm.map}")
        else:
            lines.append(f"  {sm.statement}: Theta = {sm.Theta.tolist()}, theta = {list(sm.theta)}")
    return "\n".join(lines)


@render.latex.register
def spacetime_latex(m: SpaceTimeMapping) -> str:
    parts = []
    for sm in m.statements:
        lhs = r"\begin{pmatrix}" + r"\\ ".join(
            ("p" if k == "space" else ("t" if k == "time" else "c")) + f"_{{{d}}}"
            for d, k in enumerate(m.kinds)) + r"\end{pmatrix}"
        if sm.Theta is None:
            parts.append(rf"{sm.statement}:\ \texttt{{{esc(sm.map)}}}")
            continue
        x = r"\begin{pmatrix}" + r"\\ ".join(sympy.latex(sympy.Symbol(i)) for i in sm.iterators) + r"\end{pmatrix}"
        parts.append(rf"{sm.statement}:\ {lhs} = {sympy.latex(sm.Theta)}\,{x} + {sympy.latex(sm.theta)}")
    return "$$" + r"\qquad ".join(parts) + "$$"


@render.text.register
def report_text(r: LegalityReport) -> str:
    s = r.schedule
    lines = [f"{'legal' if r.legal else 'ILLEGAL'}: {s.text()}"]
    if s.steps:
        lines.append(f"  steps: {'; '.join(s.steps)}")
    for v in r.violations:
        lines.append(f"  violates {v.message}")
    lines.append(f"  parallel loops: {list(r.parallel) or 'none'}"
                 + (f" (marked: {sorted(s.marked)})" if s.marked else ""))
    return "\n".join(lines)


@render.html.register
def report_html(r: LegalityReport) -> str:
    s = r.schedule
    color = "green" if r.legal else "#b00"
    rows = "".join(
        f"<tr><td>{esc(v.dependence.kind)}</td><td>{esc(v.dependence.source)} &rarr; "
        f"{esc(v.dependence.sink)}</td><td>{esc(v.dependence.array)}</td><td><code>{esc(v.source)}</code> "
        f"at ({esc(', '.join(map(str, v.source_time)))})</td><td><code>{esc(v.sink)}</code> at "
        f"({esc(', '.join(map(str, v.sink_time)))})</td><td>{esc(v.params)}</td></tr>" for v in r.violations)
    table = (f"<table><tr><th>kind</th><th>statements</th><th>array</th><th>source</th><th>sink (runs too "
             f"early)</th><th>parameters</th></tr>{rows}</table>") if rows else ""
    return (f"<div class='polylab-legality'><b style='color:{color}'>{'legal' if r.legal else 'illegal'}"
            f"</b> <code>{esc(s.text())}</code>{table}"
            f"<div>parallel loops: {esc(list(r.parallel) or 'none')}</div></div>")


@render.latex.register
def report_latex(r: LegalityReport) -> str:
    if r.legal:
        return r"$\text{legal: } \theta(u) \prec \theta(v) \text{ for every dependence } u \to v$"
    v = r.violations[0]
    return (rf"$\text{{illegal: }} \theta({v.sink}) = ({', '.join(map(str, v.sink_time))}) \preceq "
            rf"\theta({v.source}) = ({', '.join(map(str, v.source_time))})$").replace("_", r"\_")


@render.text.register
def wavefront_text(w: WavefrontSolution) -> str:
    lines = [f"wavefront over schedule dimensions {w.start}..{w.stop - 1}: a = {list(w.hyperplane)}"]
    lines += [f"  theta_{n} = {t}" for n, t in w.theta.items()]
    lines.append("  constraints (a . d >= 1 for every distance d):")
    lines += [f"    {c}" for c in w.constraints]
    lines.append(f"  new schedule: {w.schedule.text()}")
    return "\n".join(lines)


@render.html.register
def wavefront_html(w: WavefrontSolution) -> str:
    cons = "".join(f"<li><code>{esc(c)}</code></li>" for c in w.constraints)
    th = ", ".join(f"&theta;<sub>{esc(n)}</sub> = {esc(t)}" for n, t in w.theta.items())
    return (f"<div class='polylab-wavefront'><b>wavefront</b> a = {esc(list(w.hyperplane))}: {th}"
            f"<ul>{cons}</ul>schedule: <code>{esc(w.schedule.text())}</code></div>")


@render.latex.register
def wavefront_latex(w: WavefrontSolution) -> str:
    rows = []
    if w.distances:
        for d in w.distances:
            rows.append(" + ".join(f"{x} a_{{{k}}}" for k, x in enumerate(d) if x) + r" \geq 1")
    rows += [f"a_{{{k}}} \\geq 0" for k in range(len(w.hyperplane))]
    return (r"$$\min \sum_k a_k \quad\text{s.t.}\quad \begin{cases}" + r"\\ ".join(rows) + r"\end{cases}"
            + rf"\qquad a = ({', '.join(map(str, w.hyperplane))})$$")


def explanation_html(title: str, lines: Sequence[str], schedule: Schedule) -> str:
    items = "".join(f"<li><code>{esc(x)}</code></li>" for x in lines)
    return f"<div class='polylab-search'><b>{esc(title)}</b><ul>{items}</ul>{schedule_html(schedule)}</div>"


@render.html.register
def spacetime_html(m: SpaceTimeMapping) -> str:
    return "<div>" + spacetime_latex(m) + "</div>"


@render.html.register
def pluto_html(r: PlutoResult) -> str:
    return explanation_html("Pluto-style scheduler", r.explanation, r.schedule)
