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
mixin instead. This module imports nothing from polylab.
"""

from __future__ import annotations

import functools
import html as _html
from typing import Any, Iterable

__all__ = ["Displayable", "Rendered", "TextDisplay", "esc", "html", "latex", "text", "text_table"]


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
