"""Text, HTML and LaTeX renderings of schedules, legality reports and search explanations."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Sequence

import sympy

if TYPE_CHECKING:
    from polylab.schedule.core import Schedule
    from polylab.schedule.legality import LegalityReport
    from polylab.schedule.spacetime import SpaceTimeMapping
    from polylab.schedule.wavefront import WavefrontSolution


def _esc(x: object) -> str:
    return html.escape(str(x))


def _dims_line(s: "Schedule") -> str:
    kinds = s.kinds
    band_of = {d: k for k, b in enumerate(s.bands) for d in b.dims}
    return "  ".join(f"t{d}:{kinds[d]}" + ("" if s.bands[band_of[d]].permutable else "") for d in range(s.n_dims))


def schedule_text(s: "Schedule") -> str:
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


def schedule_html(s: "Schedule") -> str:
    kinds = s.kinds
    head = "".join(f"<th>t{d}<br><small>{kinds[d]}</small></th>" for d in range(s.n_dims))
    rows = "".join(
        f"<tr><td><code>{_esc(st.name)}[{_esc(', '.join(st.iterators))}]</code></td>"
        + "".join(f"<td><code>{_esc(e)}</code></td>" for e in s.expressions(st.name)) + "</tr>"
        for st in s.scop.statements)
    bands = ", ".join(f"{list(b.dims)}{' permutable' if b.permutable else ''}" for b in s.bands)
    notes = "".join(f"<li>{_esc(n)}</li>" for n in s.notes)
    return (f"<div class='polylab-schedule'><b>schedule</b> {_esc('; '.join(s.steps))}"
            f"<table><tr><th>statement</th>{head}</tr>{rows}</table>"
            f"bands: {_esc(bands)}<br>parallel loops: {_esc(list(s.parallel_dims) or 'none')}"
            f"{'<ul>' + notes + '</ul>' if notes else ''}</div>")


def schedule_latex(s: "Schedule") -> str:
    from polylab.schedule.spacetime import space_time

    return spacetime_latex(space_time(s))


def spacetime_text(m: "SpaceTimeMapping") -> str:
    lines = ["space-time mapping (p, t) = Theta x + theta",
             "  dimensions: " + ", ".join(f"t{d} {k}" for d, k in enumerate(m.kinds))]
    for sm in m.statements:
        if sm.Theta is None:
            lines.append(f"  {sm.statement}: {sm.map}")
        else:
            lines.append(f"  {sm.statement}: Theta = {sm.Theta.tolist()}, theta = {list(sm.theta)}")
    return "\n".join(lines)


def spacetime_latex(m: "SpaceTimeMapping") -> str:
    parts = []
    for sm in m.statements:
        lhs = r"\begin{pmatrix}" + r"\\ ".join(
            ("p" if k == "space" else ("t" if k == "time" else "c")) + f"_{{{d}}}"
            for d, k in enumerate(m.kinds)) + r"\end{pmatrix}"
        if sm.Theta is None:
            parts.append(rf"{sm.statement}:\ \texttt{{{_esc(sm.map)}}}")
            continue
        x = r"\begin{pmatrix}" + r"\\ ".join(sympy.latex(sympy.Symbol(i)) for i in sm.iterators) + r"\end{pmatrix}"
        parts.append(rf"{sm.statement}:\ {lhs} = {sympy.latex(sm.Theta)}\,{x} + {sympy.latex(sm.theta)}")
    return "$$" + r"\qquad ".join(parts) + "$$"


def report_text(r: "LegalityReport") -> str:
    s = r.schedule
    lines = [f"{'legal' if r.legal else 'ILLEGAL'}: {s.text()}"]
    if s.steps:
        lines.append(f"  steps: {'; '.join(s.steps)}")
    for v in r.violations:
        lines.append(f"  violates {v.message}")
    lines.append(f"  parallel loops: {list(r.parallel) or 'none'}"
                 + (f" (marked: {sorted(s.marked)})" if s.marked else ""))
    return "\n".join(lines)


def report_html(r: "LegalityReport") -> str:
    s = r.schedule
    color = "green" if r.legal else "#b00"
    rows = "".join(
        f"<tr><td>{_esc(v.dependence.kind)}</td><td>{_esc(v.dependence.source)} &rarr; "
        f"{_esc(v.dependence.sink)}</td><td>{_esc(v.dependence.array)}</td><td><code>{_esc(v.source)}</code> "
        f"at ({_esc(', '.join(map(str, v.source_time)))})</td><td><code>{_esc(v.sink)}</code> at "
        f"({_esc(', '.join(map(str, v.sink_time)))})</td><td>{_esc(v.params)}</td></tr>" for v in r.violations)
    table = (f"<table><tr><th>kind</th><th>statements</th><th>array</th><th>source</th><th>sink (runs too "
             f"early)</th><th>parameters</th></tr>{rows}</table>") if rows else ""
    return (f"<div class='polylab-legality'><b style='color:{color}'>{'legal' if r.legal else 'illegal'}"
            f"</b> <code>{_esc(s.text())}</code>{table}"
            f"<div>parallel loops: {_esc(list(r.parallel) or 'none')}</div></div>")


def report_latex(r: "LegalityReport") -> str:
    if r.legal:
        return r"$\text{legal: } \theta(u) \prec \theta(v) \text{ for every dependence } u \to v$"
    v = r.violations[0]
    return (rf"$\text{{illegal: }} \theta({v.sink}) = ({', '.join(map(str, v.sink_time))}) \preceq "
            rf"\theta({v.source}) = ({', '.join(map(str, v.source_time))})$").replace("_", r"\_")


def wavefront_text(w: "WavefrontSolution") -> str:
    lines = [f"wavefront over schedule dimensions {w.start}..{w.stop - 1}: a = {list(w.hyperplane)}"]
    lines += [f"  theta_{n} = {t}" for n, t in w.theta.items()]
    lines.append("  constraints (a . d >= 1 for every distance d):")
    lines += [f"    {c}" for c in w.constraints]
    lines.append(f"  new schedule: {w.schedule.text()}")
    return "\n".join(lines)


def wavefront_html(w: "WavefrontSolution") -> str:
    cons = "".join(f"<li><code>{_esc(c)}</code></li>" for c in w.constraints)
    th = ", ".join(f"&theta;<sub>{_esc(n)}</sub> = {_esc(t)}" for n, t in w.theta.items())
    return (f"<div class='polylab-wavefront'><b>wavefront</b> a = {_esc(list(w.hyperplane))}: {th}"
            f"<ul>{cons}</ul>schedule: <code>{_esc(w.schedule.text())}</code></div>")


def wavefront_latex(w: "WavefrontSolution") -> str:
    rows = []
    if w.distances:
        for d in w.distances:
            rows.append(" + ".join(f"{x} a_{{{k}}}" for k, x in enumerate(d) if x) + r" \geq 1")
    rows += [f"a_{{{k}}} \\geq 0" for k in range(len(w.hyperplane))]
    return (r"$$\min \sum_k a_k \quad\text{s.t.}\quad \begin{cases}" + r"\\ ".join(rows) + r"\end{cases}"
            + rf"\qquad a = ({', '.join(map(str, w.hyperplane))})$$")


def explanation_html(title: str, lines: Sequence[str], schedule: "Schedule") -> str:
    items = "".join(f"<li><code>{_esc(x)}</code></li>" for x in lines)
    return f"<div class='polylab-search'><b>{_esc(title)}</b><ul>{items}</ul>{schedule_html(schedule)}</div>"
