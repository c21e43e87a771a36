"""Parameter values as a person types them: ``N=64``, several at once ``N=64,T=10``, repeatable options.

The one reader of ``--param`` of the command line and of the magics.
"""

from __future__ import annotations

from typing import Iterable

from polylab.errors import PolylabError

__all__ = ["parse_params"]


def parse_params(items: Iterable[str] | None, *, option: str = "--param") -> dict[str, int]:
    """``["N=64", "T=10"]`` or ``["N=64,T=10"]`` -> ``{"N": 64, "T": 10}`` (a later value of a name wins);
    a malformed item is a user error that names ``option``."""
    out: dict[str, int] = {}
    for chunk in items or []:
        for item in chunk.split(","):
            if not item.strip():
                continue
            name, sep, value = item.partition("=")
            try:
                if not sep or not name.strip().isidentifier():
                    raise ValueError(item)
                out[name.strip()] = int(value)
            except ValueError:
                raise PolylabError(f"bad {option} {item.strip()!r}",
                                   hint=f"write {option} NAME=INTEGER, e.g. {option} N=64 (or N=64,T=10)") from None
    return out
