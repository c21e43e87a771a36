"""HTML renderings of analysis results (kept apart from the values)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from polylab.analysis.dependences import Dependence


def esc(x: object) -> str:
    return html.escape(str(x))


def dependence_table(deps: Iterable["Dependence"]) -> str:
    """One row per dependence: kind, source and sink references, array, distances, direction, levels."""
    from polylab.analysis.dependences import KIND_WORDS, _pretty

    rows = []
    for d in deps:
        src = d._ref_text(d.source, d.source_access) or f"#{d.source_access}"
        snk = d._ref_text(d.sink, d.sink_access) or f"#{d.sink_access}"
        direction = "(" + ", ".join(d.direction) + ")"
        loops = "(" + ", ".join(d.loops) + ")"
        rows.append(
            f"<tr><td>{esc(d.kind)} ({KIND_WORDS[d.kind]})</td><td>{esc(d.source)} <code>{esc(src)}</code></td>"
            f"<td>{esc(d.sink)} <code>{esc(snk)}</code></td><td>{esc(d.array)}</td>"
            f"<td>{esc(loops)}</td><td>{esc(d.distance_description)}</td><td>{esc(direction)}</td>"
            f"<td>{esc(d.carried_text())}</td><td><code>{esc(_pretty(d.relation))}</code></td></tr>")
    return ("<table class='polylab-dependences'><tr><th>kind</th><th>source</th><th>sink</th><th>array</th>"
            "<th>common loops</th><th>distance</th><th>direction</th><th>carried by</th><th>relation</th></tr>"
            + "".join(rows) + "</table>")
