"""Text, HTML and LaTeX renderings of model objects (kept apart from the values themselves).

Registered with :mod:`polylab.render` (``polylab/model/__init__.py`` imports this module), which is how
``Scop._repr_html_`` and the others reach these functions without importing this module.
"""

from __future__ import annotations

import islpy as isl
import sympy

from polylab import render
from polylab.render import esc
from polylab.model.scop import Access, Program, Scop, Statement


def _latex_vector(names) -> str:
    return r"\begin{pmatrix}" + r"\\ ".join(sympy.latex(sympy.Symbol(n)) for n in names) + r"\end{pmatrix}"


@render.latex.register
def access_latex(a: Access) -> str:
    """``A[...] = F x + c`` in LaTeX (or the isl relation when the access is not affine)."""
    if a.matrix is None:
        return rf"$\text{{{a.text}}}:\ \texttt{{{a.relation}}}$"
    iters = [a.relation.get_dim_name(isl.dim_type.in_, k) or f"x{k}" for k in range(a.matrix.cols)]
    lhs = sympy.latex(sympy.Symbol(a.array))
    x = _latex_vector(iters) if iters else r"\,"
    return rf"${lhs}:\ {sympy.latex(a.matrix)}\,{x} + {sympy.latex(a.offset)}$"


@render.html.register
def access_html(a: Access) -> str:
    fc = ""
    if a.matrix is not None:
        fc = f"<td>F = {esc(a.matrix.tolist())}, c = {esc(list(a.offset))}</td>"
    return (f"<span class='polylab-access'><b>{esc(a.kind)}</b> <code>{esc(a.text)}</code> "
            f"<code>{esc(a.relation)}</code> {fc}</span>")


def _domain_lines(s: Statement) -> list[str]:
    lines = []
    for piece in s.domain_matrices():
        x = sympy.Matrix([sympy.Symbol(n, integer=True) for n in piece.iterators])
        if piece.A.rows:
            for row in list(piece.A * x + piece.b):
                lines.append(f"{sympy.sstr(row)} >= 0")
        if piece.E.rows:
            for row in list(piece.E * x + piece.e):
                lines.append(f"{sympy.sstr(row)} = 0")
        lines.extend(piece.other)
    return lines


def statement_text(s: Statement) -> str:
    out = [f"{s.name}  line {s.line}  [{', '.join(s.iterators)}]  {s.text}",
           f"    domain  {s.domain}"]
    for a in s.accesses:
        fc = ""
        if a.matrix is not None:
            fc = f"   F = {a.matrix.tolist()}, c = {list(a.offset)}"
        out.append(f"    {a.kind:5}   {a.text}{fc}")
    return "\n".join(out)


@render.html.register
def statement_html(s: Statement) -> str:
    rows = "".join(
        f"<tr><td>{esc(a.kind)}</td><td><code>{esc(a.text)}</code></td>"
        f"<td>{'$' + sympy.latex(a.matrix) + '$' if a.matrix is not None else '—'}</td>"
        f"<td>{'$' + sympy.latex(a.offset) + '$' if a.offset is not None else '—'}</td>"
        f"<td><code>{esc(a.relation)}</code></td></tr>" for a in s.accesses)
    dom = "<br>".join(esc(x) for x in _domain_lines(s))
    return (f"<div class='polylab-statement'><b>{esc(s.name)}</b> (line {s.line}): "
            f"<code>{esc(s.text)}</code><br>iterators: {esc(', '.join(s.iterators) or '—')}<br>"
            f"domain: <code>{esc(s.domain)}</code><br>{dom}"
            f"<table><tr><th>kind</th><th>reference</th><th>F</th><th>c</th><th>relation</th></tr>"
            f"{rows}</table></div>")


@render.latex.register
def statement_latex(s: Statement) -> str:
    parts = []
    for piece in s.domain_matrices():
        if piece.A.rows:
            parts.append(rf"{sympy.latex(piece.A)}\,{_latex_vector(piece.iterators)} + "
                         rf"{sympy.latex(piece.b)} \geq 0")
        if piece.E.rows:
            parts.append(rf"{sympy.latex(piece.E)}\,{_latex_vector(piece.iterators)} + "
                         rf"{sympy.latex(piece.e)} = 0")
    return "$$" + r"\qquad".join(parts or [r"\text{(no constraints)}"]) + "$$"


def _lines(scop: Scop) -> str:
    """`` (lines 12-15)``: the first and last line of the region's source (`` (line 12)`` for one line)."""
    if not scop.location:
        return ""
    first = scop.location.line
    last = first + max(0, len(scop.source.rstrip("\n").split("\n")) - 1) if scop.source else first
    return f" (line {first})" if last == first else f" (lines {first}-{last})"


@render.text.register
def scop_text(scop: Scop) -> str:
    out = [f"static control part {scop.name}" + _lines(scop),
           f"  parameters: {', '.join(scop.parameters) or 'none'}   context: {scop.context}",
           "  arrays: " + ("  ".join(a.declaration() + ("" if a.declared else " (inferred)")
                                     for a in scop.arrays) or "none")]
    if scop.scalars:
        out.append("  scalars: " + ", ".join(f"{s.ctype} {s.name}" + (f" = {s.value}" if s.value else "")
                                            for s in scop.scalars))
    for s in scop.statements:
        out.append("  " + statement_text(s).replace("\n", "\n  "))
        for line in _domain_lines(s):
            out.append(f"        {line}")
    out.append(f"  schedule: {scop.schedule_map}")
    if scop.live_out is not None:
        out.append(f"  live-out: {scop.live_out}")
    if scop.dead_after:
        out.append(f"  dead after the region (the function does not read them): {', '.join(scop.dead_after)}")
    for note in scop.notes:
        out.append(f"  note: {note}")
    return "\n".join(out)


@render.html.register
def scop_html(scop: Scop) -> str:
    arrays = ", ".join(f"<code>{esc(a.declaration())}</code>" for a in scop.arrays)
    stmts = "".join(statement_html(s) for s in scop.statements)
    return (f"<div class='polylab-scop'><h4>SCoP {esc(scop.name)}</h4>"
            f"parameters: {esc(', '.join(scop.parameters) or 'none')}<br>arrays: {arrays}<br>"
            f"{stmts}<div>schedule: <code>{esc(scop.schedule_map)}</code></div></div>")


@render.latex.register
def scop_latex(scop: Scop) -> str:
    return "\n".join(statement_latex(s) for s in scop.statements)


@render.text.register
def program_text(p: Program) -> str:
    out = [scop_text(s) for s in p.scops]
    if p.rejected:
        out.append("left out of any static control part:")
        out.extend(f"  {r}" for r in p.rejected)
    return "\n".join(out)


@render.html.register
def program_html(p: Program) -> str:
    rej = "".join(f"<li>{esc(r)}</li>" for r in p.rejected)
    return "".join(scop_html(s) for s in p.scops) + (f"<p>left out:</p><ul>{rej}</ul>" if rej else "")
