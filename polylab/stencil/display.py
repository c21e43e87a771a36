"""How stencil values show themselves: a program as its MLIR text (text and HTML), plus SVG pictures for the
notebook: the def-use graph of a program (fields, loads, applies, combines, stores), each apply's access
pattern (its offsets on a grid), and the shapes (the boxes shape inference gives each load, apply and store,
drawn in the first two dimensions; :func:`shapes_svg`).

Registered with :mod:`polylab.render` (the package's ``__init__`` imports this module).
"""

from __future__ import annotations

from xdsl.dialects.stencil import AccessOp, ApplyOp, CombineOp, LoadOp, StoreOp

from polylab import render
from polylab.render import esc
from polylab.stencil.program import Box, Program, box_of, name_of


@render.text.register
def _program_text(p: Program) -> str:
    return p.text


@render.html.register
def _program_html(p: Program) -> str:
    return f"<pre class='polylab-stencil'>{esc(p.text)}</pre>"


def _label(op) -> str:
    kind = "apply" if isinstance(op, ApplyOp) else "combine"
    return f"{kind} {', '.join(name_of(r) for r in op.results)}"


def dataflow_edges(program: Program) -> list[tuple[str, str, str]]:
    """``(from, to, label)``: field -> load, temp -> apply/combine, apply -> store -> field (the def-use graph)."""
    node: dict[object, str] = {}
    edges = []
    for op in program.ops:
        if isinstance(op, LoadOp):
            node[op.res] = name_of(op.res)
            edges.append((program.argument_name(op.field), name_of(op.res), "load"))
        elif isinstance(op, (ApplyOp, CombineOp)):
            label = _label(op)
            for v in op.operands:
                if v in node:
                    edges.append((node[v], label, "temp"))
            for r in op.results:
                node[r] = label
        elif isinstance(op, StoreOp) and op.temp in node:
            edges.append((node[op.temp], program.argument_name(op.field), "store"))
    return edges


def dataflow_svg(program: Program) -> str:
    """The def-use graph as SVG: one column per stage (fields, loads, applies, stored fields)."""
    nodes: dict[str, tuple[int, str]] = {n: (0, "field") for n in program.input_fields()}
    level: dict[str, int] = {n: 0 for n in nodes}
    for a, b, label in dataflow_edges(program):
        if label == "load":
            nodes[b], level[b] = (1, "temp"), 1
        elif label == "temp":
            lv = max(level.get(b, 0), level.get(a, 0) + 1)
            nodes[b], level[b] = (lv, "apply"), lv
    last = max(level.values(), default=0) + 1
    for f in program.output_fields():
        nodes[f] = (last, "field")
    return _layered_svg(nodes, dataflow_edges(program))


def inlining_svg(before: Program, after: Program) -> str:
    """The def-use graphs before and after inlining, side by side."""
    return (f"<div style='display:flex;gap:16px'><div><b>before</b> ({len(before.applies)} applies)<br>"
            f"{dataflow_svg(before)}</div><div><b>after</b> ({len(after.applies)} applies)<br>"
            f"{dataflow_svg(after)}</div></div>")


def shapes(program: Program) -> list[tuple[str, Box]]:
    """``(label, box)`` of every load, apply and store that has a box (after shape inference)."""
    out = []
    for op in program.ops:
        if isinstance(op, (LoadOp, ApplyOp, CombineOp)) and op.results and box_of(op.results[0].type):
            label = f"load {name_of(op.res)}" if isinstance(op, LoadOp) else _label(op)
            out.append((label, box_of(op.results[0].type)))
        elif isinstance(op, StoreOp):
            out.append((f"store to {program.argument_name(op.field)}", (tuple(op.bounds.lb), tuple(op.bounds.ub))))
    return out


def shapes_svg(program: Program, scale: int = 3) -> str:
    """The boxes of :func:`shapes` drawn over each other in dimensions 0 (down) and 1 (across)."""
    boxes = shapes(program)
    if not boxes:
        return "<p>no shapes yet: run shape-inference</p>"
    lo = [min(b[0][d] for _, b in boxes) for d in range(2)] if program.rank >= 2 else [0, 0]
    hi = [max(b[1][d] for _, b in boxes) for d in range(2)] if program.rank >= 2 else [1, 1]
    colors = ["#48c", "#c84", "#4a4", "#a4a", "#aa4", "#4aa", "#c44", "#888"]
    w, h = (hi[1] - lo[1]) * scale + 220, (hi[0] - lo[0]) * scale + 20
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{max(h, 20 + 14 * len(boxes))}' "
             "font-size='11' font-family='monospace'>"]
    for k, (label, (blo, bhi)) in enumerate(boxes):
        c = colors[k % len(colors)]
        x, y = 10 + (blo[1] - lo[1]) * scale if program.rank >= 2 else 10, 10 + (blo[0] - lo[0]) * scale
        bw = (bhi[1] - blo[1]) * scale if program.rank >= 2 else 100
        bh = (bhi[0] - blo[0]) * scale
        parts.append(f"<rect x='{x}' y='{y}' width='{bw}' height='{bh}' fill='none' stroke='{c}' stroke-width='1.5'>"
                     f"<title>{esc(label)}: {list(blo)} to {list(bhi)}</title></rect>")
        parts.append(f"<text x='{(hi[1] - lo[1]) * scale + 20}' y='{20 + 14 * k}' fill='{c}'>"
                     f"{esc(label[:18])} {list(blo)}:{list(bhi)}</text>")
    parts.append("</svg>")
    return "".join(parts)


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


def access_offsets(apply: ApplyOp) -> dict[str, list[tuple[int, ...]]]:
    """The offsets each operand of ``apply`` is read at (by operand name)."""
    out: dict[str, list[tuple[int, ...]]] = {}
    for op in apply.walk():
        if isinstance(op, AccessOp):
            lst = out.setdefault(name_of(apply.args[op.temp.index]), [])
            if tuple(op.offset) not in lst:
                lst.append(tuple(op.offset))
    return out


def access_pattern_svg(apply: ApplyOp, dims: tuple[int, int] = (0, 1)) -> str:
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
