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


def text_table(headers: Iterable[str], rows: Iterable[Iterable[object]], *, indent: str = "  ",
               width: int = 60) -> str:
    """A plain-text table: one line per row, columns padded to their widest cell (cells longer than
    ``width`` characters are cut with ``...``), a rule under the header."""
    head = [str(h) for h in headers]
    body = []
    for r in rows:
        cells = [" ".join(str(c).split()) for c in r]   # one line per cell
        body.append([c if len(c) <= width else c[:width - 3] + "..." for c in cells])
    widths = [max([len(h)] + [len(r[k]) for r in body]) for k, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return (indent + "  ".join(c.ljust(w) for c, w in zip(cells, widths))).rstrip()

    return "\n".join([line(head), indent + "  ".join("-" * w for w in widths)] + [line(r) for r in body])


class TextDisplay:
    """Mixin: the text form ``str(self)`` is also the ``repr`` and the text/plain of Jupyter (the
    dataclasses using it set ``repr=False``, so IPython's pretty printer finds :meth:`_repr_pretty_`)."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(f"{type(self).__name__}(...)" if cycle else str(self))

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": str(self)}
