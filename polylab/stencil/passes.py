"""Pass pipelines written as text: ``shape,inline,unroll(j=2),cse``.

Each name is a pass from program to program: ``shape`` (shape inference), ``inline`` (producer-consumer
inlining, rerouting a temp with several consumers), ``inline(recompute)`` (inlining into every
consumer), ``unroll(j=2)`` (unroll by 2 along ``j``; dimensions are named ``i, j, k`` or numbered
``0, 1, 2``), ``cse``, ``dce``, ``cleanup`` (both). Passes run left to right; a pipeline that does not
end with ``shape`` gets shape inference when it is lowered.
"""

from __future__ import annotations

import re
from typing import Callable

from polylab.stencil.cleanup import cleanup, cse, dce
from polylab.stencil.errors import StencilError
from polylab.stencil.inline import inline
from polylab.stencil.program import Program
from polylab.stencil.shapes import infer_shapes
from polylab.stencil.unroll import unroll

#: the passes a pipeline can name, with what they do
PASSES = {
    "shape": "shape inference: boxes from the store ranges backwards",
    "inline": "producer-consumer inlining (a temp with several consumers is rerouted through the first)",
    "inline(recompute)": "inlining into every consumer (each recomputes the producer)",
    "unroll(j=2)": "unroll every apply by 2 along j (i, j, k or 0, 1, 2)",
    "cse": "common subexpression elimination",
    "dce": "dead value elimination",
    "cleanup": "cse then dce",
}
_DIMS = "ijklmnpq"


def split_pipeline(spec: str) -> list[str]:
    """The pass names of ``spec`` (commas inside parentheses do not split)."""
    out, depth, cur = [], 0, ""
    for ch in spec:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_passes(spec: str) -> list[tuple[str, Callable[[Program], Program]]]:
    """``(name, pass)`` for each pass of ``spec`` (a :class:`StencilError` names an unknown one)."""
    out: list[tuple[str, Callable[[Program], Program]]] = []
    for name in split_pipeline(spec):
        m = re.fullmatch(r"unroll\(\s*([a-z]|\d+)\s*=\s*(\d+)\s*\)", name)
        if m:
            dim = int(m.group(1)) if m.group(1).isdigit() else _DIMS.find(m.group(1))
            factor = int(m.group(2))
            if dim < 0:
                raise StencilError(f"unknown dimension {m.group(1)!r} in {name}", hint="name it i, j, k or 0, 1, 2")
            out.append((name, lambda p, f=factor, d=dim: unroll(p, f, d)))
        elif name == "shape":
            out.append((name, infer_shapes))
        elif name == "inline":
            out.append((name, inline))
        elif name in ("inline(recompute)", "inline(reroute=false)"):
            out.append((name, lambda p: inline(p, reroute=False)))
        elif name in ("cse", "dce", "cleanup"):
            out.append((name, {"cse": cse, "dce": dce, "cleanup": cleanup}[name]))
        else:
            raise StencilError(f"unknown pass {name!r}", hint="the passes are " + ", ".join(PASSES))
    return out


def run_passes(program: Program, spec: str) -> Program:
    """``program`` after the passes of ``spec``, left to right."""
    for _, fn in parse_passes(spec):
        program = fn(program)
    return program
