"""C identifiers for the values of a stencil program.

MLIR names (``%arg0``, ``%5#1``, ``%cst_0``, ``%in``) become C identifiers (``arg0``, ``t5_1``, ``in_``):
characters outside ``[A-Za-z0-9_]`` become ``_``, a leading digit gets a prefix, C keywords, the
iterator names and the harness's reserved ``polylab`` prefix get a trailing ``_``, and repeated names a
numeric suffix, so every name is unique.
"""

from __future__ import annotations

import re

C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Bool _Complex _Imaginary main kernel min max floord sqrt exp log fabs pow sin cos tanh floor ceil
fmax fmin abs""".split())


class CNames:
    """A table of unique C identifiers (``reserved``: names already taken, such as the iterators)."""

    def __init__(self, reserved: tuple[str, ...] = ()) -> None:
        self.used: set[str] = set(reserved)
        self.of: dict[str, str] = {}

    def __call__(self, value: str, prefix: str = "t") -> str:
        """The identifier of ``value`` (the same one on every call)."""
        if value in self.of:
            return self.of[value]
        base = re.sub(r"[^A-Za-z0-9_]", "_", value.lstrip("%").replace("#", "_")) or prefix
        if base[0].isdigit():
            base = prefix + base
        if base in C_KEYWORDS or base.startswith("polylab") or base.startswith("__"):
            base += "_"
        name, n = base, 1
        while name in self.used:
            name = f"{base}_{n}"
            n += 1
        self.used.add(name)
        self.of[value] = name
        return name
