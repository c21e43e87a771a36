"""How stencil values show themselves (registered with :mod:`polylab.render`): a program as its MLIR text, and
pictures for the notebook (drawn by :mod:`polylab.render`'s SVG helpers): the def-use graph, the shapes as boxes
in the first two dimensions, each apply's access pattern.
"""

from __future__ import annotations

from collections import Counter

from xdsl.dialects.stencil import ApplyOp, CombineOp, LoadOp, StoreOp

from polylab import render
from polylab.render import esc
from polylab.stencil.program import Box, Program, box_of, name_of

#: the fill of each kind of node of the def-use graph
FILL = {"field": "#cde", "temp": "#eee", "apply": "#fdc"}


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
    nodes = {n: (0, FILL["field"]) for n in program.input_fields()}
    for a, b, kind in dataflow_edges(program):
        if kind != "store":
            nodes[b] = (1, FILL["temp"]) if kind == "load" else (max(nodes.get(b, (0,))[0], nodes[a][0] + 1),
                                                                 FILL["apply"])
    last = max((c for c, _ in nodes.values()), default=0) + 1
    nodes.update((f, (last, FILL["field"])) for f in program.output_fields())
    return render.svg_graph(nodes, dataflow_edges(program))


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
            out.append((f"store to {program.argument_name(op.field)}", box_of(op.bounds)))
    return out


def shapes_svg(program: Program, scale: int = 3) -> str:
    """The boxes of :func:`shapes` drawn over each other in dimensions 0 (down) and 1 (across)."""
    boxes = [(f"{label[:18]} {list(lb)}:{list(ub)}", (lb[0], lb[1] if len(lb) > 1 else 0),
              (ub[0], ub[1] if len(ub) > 1 else 30)) for label, (lb, ub) in shapes(program)]
    return render.svg_boxes(boxes, scale) if boxes else "<p>no shapes yet: run shape-inference</p>"


def access_offsets(apply: ApplyOp) -> dict[str, list[tuple[int, ...]]]:
    """The offsets each operand of ``apply`` is read at (by operand name; xDSL's access patterns)."""
    out: dict[str, set[tuple[int, ...]]] = {}
    for v, pattern in zip(apply.args, apply.get_accesses()):
        out.setdefault(name_of(v), set()).update(pattern.offsets)
    return {name: sorted(offsets) for name, offsets in out.items() if offsets}


def access_pattern_svg(apply: ApplyOp, dims: tuple[int, int] = (0, 1)) -> str:
    """Each operand's offsets drawn on a grid of dimensions ``dims`` (the centre is the point computed;
    a number says how many offsets differ only in the other dimensions)."""
    panels = []
    for value, offsets in access_offsets(apply).items():
        cells = Counter((o[dims[0]], o[dims[1]]) if len(o) > max(dims) else (o[0], 0) for o in offsets)
        panels.append(f"<div style='display:inline-block;margin:4px;text-align:center'>{render.svg_grid(cells)}"
                      f"<br><code>{esc(value)}</code></div>")
    return "".join(panels)
