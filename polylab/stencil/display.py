"""How stencil values show themselves: a program as its MLIR text (text and HTML), a lowering as its
model, a check as its verdict; plus SVG pictures for the notebook: the data-flow graph of a program
(fields, applies, temps) and the access pattern of an apply (its offsets on a grid).

Registered with :mod:`polylab.render` (the package's ``__init__`` imports this module).
"""

from __future__ import annotations

from polylab import render
from polylab.render import esc
from polylab.stencil.ir import walk_ops
from polylab.stencil.ops import Access, Apply, Combine, Load, Store
from polylab.stencil.printer import print_program
from polylab.stencil.program import Program


@render.text.register
def _program_text(p: Program) -> str:
    return print_program(p)


@render.html.register
def _program_html(p: Program) -> str:
    return f"<pre class='polylab-stencil'>{esc(print_program(p))}</pre>"


def dataflow_edges(program: Program) -> list[tuple[str, str, str]]:
    """``(from, to, label)``: field -> load, temp -> apply/combine, apply -> store -> field."""
    edges = []
    for op in program.ops:
        if isinstance(op, Load):
            edges.append((program.field_argument(op.field), op.result, "load"))
        elif isinstance(op, (Apply, Combine)):
            node = "apply " + ", ".join(op.results) if isinstance(op, Apply) else "combine " + ", ".join(op.results)
            for v in op.operands if isinstance(op, Apply) else op.lower + op.upper:
                edges.append((v, node, "temp"))
        elif isinstance(op, Store):
            edges.append((op.temp, program.field_argument(op.field), f"store {op.box}"))
    return edges


def dataflow_svg(program: Program) -> str:
    """The data-flow graph as SVG: one column per stage (fields, loads, applies, stored fields), arrows for
    the temps between them."""
    nodes: dict[str, tuple[int, str]] = {}
    level: dict[str, int] = {}
    for n, _ in program.arguments:
        if n in program.input_fields():
            level[n] = 0
            nodes[n] = (0, "field")
    producer_node: dict[str, str] = {}
    for op in program.ops:
        if isinstance(op, Load):
            level[op.result] = 1
            nodes[op.result] = (1, "temp")
            producer_node[op.result] = op.result
        elif isinstance(op, (Apply, Combine)):
            ins = op.operands if isinstance(op, Apply) else op.lower + op.upper
            lv = 1 + max([level.get(producer_node.get(v, v), 0) for v in ins] or [0])
            name = ("apply " if isinstance(op, Apply) else "combine ") + ", ".join(op.results)
            nodes[name] = (lv, "apply")
            level[name] = lv
            for r in op.results:
                producer_node[r] = name
    last = max(level.values(), default=0) + 1
    for f in program.output_fields():
        nodes[f] = (last, "field")
        level[f] = last
    edges = []
    for a, b, label in dataflow_edges(program):
        a2, b2 = producer_node.get(a, a), producer_node.get(b, b)
        if a2 != b2:
            edges.append((a2, b2, label))
    return _layered_svg(nodes, edges)


def _layered_svg(nodes: dict[str, tuple[int, str]], edges: list[tuple[str, str, str]]) -> str:
    columns: dict[int, list[str]] = {}
    for n, (lv, _) in nodes.items():
        columns.setdefault(lv, []).append(n)
    w, h, gx, gy = 150, 30, 60, 20
    pos = {}
    for lv, names in columns.items():
        for k, n in enumerate(names):
            pos[n] = (20 + lv * (w + gx), 20 + k * (h + gy))
    width = 40 + (max(columns, default=0) + 1) * (w + gx)
    height = 40 + max((len(v) for v in columns.values()), default=1) * (h + gy)
    colors = {"field": "#cde", "temp": "#eee", "apply": "#fdc"}
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' font-size='11' "
             f"font-family='monospace'>",
             "<defs><marker id='arr' markerWidth='8' markerHeight='8' refX='8' refY='4' orient='auto'>"
             "<path d='M0,0 L8,4 L0,8 z' fill='#555'/></marker></defs>"]
    for a, b, label in edges:
        if a in pos and b in pos:
            (x1, y1), (x2, y2) = pos[a], pos[b]
            parts.append(f"<line x1='{x1 + w}' y1='{y1 + h / 2}' x2='{x2}' y2='{y2 + h / 2}' stroke='#555' "
                         f"marker-end='url(#arr)'><title>{esc(label)}</title></line>")
    for n, (x, y) in pos.items():
        kind = nodes[n][1]
        parts.append(f"<rect x='{x}' y='{y}' width='{w}' height='{h}' rx='5' fill='{colors[kind]}' stroke='#333'/>"
                     f"<text x='{x + 6}' y='{y + 19}'>{esc(n[:22])}</text>")
    parts.append("</svg>")
    return "".join(parts)


def access_offsets(apply: Apply) -> dict[str, list[tuple[int, ...]]]:
    """The offsets each operand of ``apply`` is read at (by operand value)."""
    operand_of = dict(zip(apply.args, apply.operands))
    out: dict[str, list[tuple[int, ...]]] = {}
    for op in walk_ops(apply.body):
        if isinstance(op, Access):
            lst = out.setdefault(operand_of[op.temp], [])
            if op.offset not in lst:
                lst.append(op.offset)
    return out


def access_pattern_svg(apply: Apply, dims: tuple[int, int] = (0, 1)) -> str:
    """Each operand's offsets drawn on a grid of dimensions ``dims`` (the centre is the point computed;
    a number says how many offsets differ only in the other dimensions)."""
    panels = []
    for value, offsets in access_offsets(apply).items():
        pts: dict[tuple[int, int], int] = {}
        for o in offsets:
            key = (o[dims[0]], o[dims[1]]) if len(o) > max(dims) else (o[0], 0)
            pts[key] = pts.get(key, 0) + 1
        r = max([abs(c) for p in pts for c in p] + [1])
        cell, size = 18, (2 * r + 1) * 18
        cells = []
        for i in range(-r, r + 1):
            for j in range(-r, r + 1):
                x, y = (j + r) * cell, (i + r) * cell
                fill = "#f84" if (i, j) in pts else ("#ddd" if (i, j) == (0, 0) else "#fff")
                cells.append(f"<rect x='{x}' y='{y}' width='{cell}' height='{cell}' fill='{fill}' stroke='#999'/>")
                if pts.get((i, j), 0) > 1:
                    cells.append(f"<text x='{x + 5}' y='{y + 13}' font-size='10'>{pts[(i, j)]}</text>")
        panels.append(f"<div style='display:inline-block;margin:4px;text-align:center'>"
                      f"<svg xmlns='http://www.w3.org/2000/svg' width='{size}' height='{size}'>{''.join(cells)}"
                      f"</svg><br><code>{esc(value)}</code></div>")
    return "".join(panels)
