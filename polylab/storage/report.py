"""Small shared pieces of the storage reports: readable isl sets and the text/HTML display protocol."""

from __future__ import annotations

import html

import islpy as isl

from polylab.analysis.display import text_table

__all__ = ["Displayable", "condition_text", "esc", "set_text", "text_table"]


def esc(x: object) -> str:
    return html.escape(str(x))


def condition_text(subset: isl.Set, domain: isl.Set) -> str:
    """The constraints that single out ``subset`` inside ``domain`` (isl's gist), e.g. ``i >= 2``."""
    try:
        g = subset.gist(domain).coalesce()
    except isl.Error:  # pragma: no cover - defensive
        g = subset
    text = str(g)
    if ";" in text:
        return f"for the instances in {text}"
    if ":" not in text:
        return "for every instance"
    inner = text.split(":", 1)[1].rsplit("}", 1)[0].strip()
    return f"for {inner}" if inner else "for every instance"


def set_text(s: isl.Set | isl.UnionSet) -> str:
    """An isl set as text, coalesced."""
    return str(s.coalesce())


class Displayable:
    """Mixin: ``str()`` is the text form, also the ``repr``; IPython shows text/plain from it and HTML from
    ``html()`` (the report dataclasses set ``repr=False`` so that no generated ``__repr__`` hides these)."""

    def text(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def html(self) -> str:
        return f"<pre>{esc(self.text())}</pre>"

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(f"{type(self).__name__}(...)" if cycle else self.text())

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": self.text()}

    def _repr_html_(self) -> str:
        return self.html()
