"""Readable isl sets for the storage reports: the condition that singles out a subset of a domain."""

from __future__ import annotations

import islpy as isl

__all__ = ["condition_text"]


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
