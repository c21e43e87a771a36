"""How polylab's values show themselves: the generic renderers and the small helpers every display uses.

Every value a student sees has a rich display (``__str__``, ``_repr_html_``, ``_repr_latex_``), yet a core
module never imports the module that draws it (that would be an import cycle: the display module needs the
core's values). The methods of a value call the generic functions here, :func:`text`, :func:`html` and
:func:`latex`; each layer's display module registers the renderers of its values with them
(``@render.html.register`` on a function of the value's type), and the layer's package imports its display
module in its ``__init__``. Python runs a package's ``__init__`` before any module of the package, so a value
can render itself as soon as it exists, while the imports point one way only: display -> core -> this module.

A value gets the four display methods (``__str__``, IPython's ``_repr_pretty_``, ``_repr_html_``,
``_repr_latex_``) from the :class:`Rendered` mixin, which calls these functions. Values that render
themselves (a ``text()`` and an ``html()`` method, as the storage reports do) use the :class:`Displayable`
mixin instead. Pictures for HTML displays that need no plotting library are drawn as SVG by :func:`svg_graph`
(a directed graph in columns), :func:`svg_boxes` (rectangles over each other) and :func:`svg_grid` (marked
cells around a centre). This module imports nothing from polylab.
"""

from __future__ import annotations

import functools
import html as _html
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["Displayable", "Rendered", "TextDisplay", "esc", "html", "latex", "svg_boxes", "svg_graph", "svg_grid",
           "text", "text_table"]
#: the colours of drawn things, in turn
COLORS = ("#48c", "#c84", "#4a4", "#a4a", "#aa4", "#4aa", "#c44", "#888")


def esc(x: object) -> str:
    """``str(x)`` escaped for HTML (the one escaping function of polylab)."""
    return _html.escape(str(x))


@functools.singledispatch
def text(value: Any) -> str:
    """The readable plain-text form of ``value`` (registered per type by the layers' display modules)."""
    raise NotImplementedError(f"no text renderer is registered for {type(value).__name__}")


@functools.singledispatch
def html(value: Any) -> str:
    """The HTML form of ``value`` (registered per type by the layers' display modules)."""
    raise NotImplementedError(f"no HTML renderer is registered for {type(value).__name__}")


@functools.singledispatch
def latex(value: Any) -> str:
    """The LaTeX form of ``value`` (registered per type by the layers' display modules)."""
    raise NotImplementedError(f"no LaTeX renderer is registered for {type(value).__name__}")


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


class Rendered:
    """Mixin: the display methods of a value whose renderers a display module registers (:func:`text`,
    :func:`html`, :func:`latex`): ``str``, IPython's pretty printer (text/plain), HTML, and LaTeX where a
    LaTeX renderer is registered for the value's type (none otherwise, so Jupyter shows the others)."""

    def __str__(self) -> str:
        return text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        return html(self)

    def _repr_latex_(self) -> str | None:
        if latex.dispatch(type(self)) is latex.dispatch(object):
            return None
        return latex(self)


class TextDisplay:
    """Mixin: the text form ``str(self)`` is also the ``repr`` and the text/plain of Jupyter (the
    dataclasses using it set ``repr=False``, so IPython's pretty printer finds :meth:`_repr_pretty_`)."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(f"{type(self).__name__}(...)" if cycle else str(self))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return {"text/plain": str(self)}


class Displayable(TextDisplay):
    """Mixin for values that render themselves: ``text()`` is the text form (``str``, ``repr``,
    text/plain), ``html()`` the HTML form (a ``<pre>`` of the text unless overridden)."""

    def text(self) -> str:
        raise NotImplementedError(f"{type(self).__name__} has no text form")

    def html(self) -> str:
        return f"<pre>{esc(self.text())}</pre>"

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return self.html()


def _svg(width: float, height: float, parts: Iterable[str]) -> str:
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' font-size='11' "
            f"font-family='monospace'>{''.join(parts)}</svg>")


def svg_graph(nodes: Mapping[str, tuple[int, str]], edges: Iterable[tuple[str, str, str]]) -> str:
    """A directed graph as SVG: ``nodes`` maps each name to its column (left to right) and its fill colour,
    a column's nodes stacked in order; ``edges`` are ``(from, to, title)``, arrows between the boxes."""
    columns: dict[int, list[str]] = {}
    for name, (column, _) in nodes.items():
        columns.setdefault(column, []).append(name)
    w, h, gx, gy = 150, 30, 60, 20
    at = {n: (20 + c * (w + gx), 20 + k * (h + gy)) for c, names in columns.items() for k, n in enumerate(names)}
    parts = ["<defs><marker id='arr' markerWidth='8' markerHeight='8' refX='8' refY='4' orient='auto'>"
             "<path d='M0,0 L8,4 L0,8 z' fill='#555'/></marker></defs>"]
    parts += [f"<line x1='{at[a][0] + w}' y1='{at[a][1] + h / 2}' x2='{at[b][0]}' y2='{at[b][1] + h / 2}' "
              f"stroke='#555' marker-end='url(#arr)'><title>{esc(title)}</title></line>"
              for a, b, title in edges if a in at and b in at]
    parts += [f"<rect x='{x}' y='{y}' width='{w}' height='{h}' rx='5' fill='{nodes[n][1]}' stroke='#333'/>"
              f"<text x='{x + 6}' y='{y + 19}'>{esc(n[:22])}</text>" for n, (x, y) in at.items()]
    return _svg(40 + (max(columns, default=0) + 1) * (w + gx),
                40 + max(map(len, columns.values()), default=1) * (h + gy), parts)


def svg_boxes(boxes: Sequence[tuple[str, tuple[int, int], tuple[int, int]]], scale: int = 3) -> str:
    """Rectangles ``(label, (top, left), (bottom, right))`` (half-open, in cells of ``scale`` pixels) drawn over
    each other, each in its colour, with a legend of the labels on the right."""
    top, left = min(b[1][0] for b in boxes), min(b[1][1] for b in boxes)
    right = max(b[2][1] for b in boxes)
    parts = []
    for k, (label, (y0, x0), (y1, x1)) in enumerate(boxes):
        c = COLORS[k % len(COLORS)]
        parts.append(f"<rect x='{10 + (x0 - left) * scale}' y='{10 + (y0 - top) * scale}' width='{(x1 - x0) * scale}' "
                     f"height='{(y1 - y0) * scale}' fill='none' stroke='{c}' stroke-width='1.5'><title>{esc(label)}"
                     f"</title></rect><text x='{(right - left) * scale + 20}' y='{20 + 14 * k}' fill='{c}'>"
                     f"{esc(label)}</text>")
    height = max((max(b[2][0] for b in boxes) - top) * scale + 20, 20 + 14 * len(boxes))
    return _svg((right - left) * scale + 220, height, parts)


def svg_grid(counts: Mapping[tuple[int, int], int], cell: int = 18) -> str:
    """The cells ``(row, column)`` around the centre ``(0, 0)`` (grey) marked in orange, each with its count
    when above 1."""
    r = max([abs(c) for p in counts for c in p] + [1])
    parts = []
    for i in range(-r, r + 1):
        for j in range(-r, r + 1):
            x, y = (j + r) * cell, (i + r) * cell
            fill = "#f84" if (i, j) in counts else "#ddd" if (i, j) == (0, 0) else "#fff"
            parts.append(f"<rect x='{x}' y='{y}' width='{cell}' height='{cell}' fill='{fill}' stroke='#999'/>")
            if counts.get((i, j), 0) > 1:
                parts.append(f"<text x='{x + 5}' y='{y + 13}' font-size='10'>{counts[(i, j)]}</text>")
    return _svg((2 * r + 1) * cell, (2 * r + 1) * cell, parts)
