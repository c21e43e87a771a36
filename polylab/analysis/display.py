"""HTML renderings of the dependences (kept apart from the values; registered with :mod:`polylab.render`).

``polylab/analysis/__init__.py`` imports this module, so ``Dependence._repr_html_`` and
``DependenceGraph._repr_html_`` reach these functions without the core importing its display.
"""

from __future__ import annotations

from typing import Iterable

from polylab import render
from polylab.analysis.dependences import KIND_WORDS, Dependence, DependenceGraph
from polylab.model.islutil import readable
from polylab.render import esc


def dependence_table(deps: Iterable[Dependence]) -> str:
    """One row per dependence: kind, source and sink references, array, distances, direction, levels; the
    exact isl relation on demand (a collapsed ``<details>``, so the table stays readable)."""
    rows = []
    for d in deps:
        src = d.ref_text(d.source, d.source_access) or f"#{d.source_access}"
        snk = d.ref_text(d.sink, d.sink_access) or f"#{d.sink_access}"
        direction = "(" + ", ".join(d.direction) + ")"
        loops = "(" + ", ".join(d.loops) + ")"
        rows.append(
            f"<tr><td>{esc(d.kind)} ({KIND_WORDS[d.kind]})</td><td>{esc(d.source)} <code>{esc(src)}</code></td>"
            f"<td>{esc(d.sink)} <code>{esc(snk)}</code></td><td>{esc(d.array)}</td>"
            f"<td>{esc(loops)}</td><td>{esc(d.distance_description)}</td><td>{esc(direction)}</td>"
            f"<td>{esc(d.carried_text())}</td><td><details><summary>isl</summary>"
            f"<code>{esc(readable(d.relation))}</code></details></td></tr>")
    return ("<table class='polylab-dependences'><tr><th>kind</th><th>source</th><th>sink</th><th>array</th>"
            "<th>common loops</th><th>distance</th><th>direction</th><th>carried by</th><th>relation</th></tr>"
            + "".join(rows) + "</table>")


@render.html.register
def dependence_html(d: Dependence) -> str:
    return dependence_table([d])


@render.html.register
def graph_html(g: DependenceGraph) -> str:
    return (f"<div class='polylab-deps'><b>{'value' if g.value_based else 'memory'}-based "
            f"dependences of {esc(g.scop.name)}</b>{dependence_table(g.dependences)}</div>")
