"""The example kernels shipped inside the package (``polylab/examples``), by name.

This module imports nothing of polylab but its errors, so every layer can find the corpus (the package's
own ``polylab.example_path`` and ``polylab.examples`` are these functions).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from polylab.errors import PolylabError

__all__ = ["example_path", "examples"]


def example_path(name: str) -> Path:
    """The path of an example shipped with polylab (``"sl3.sy"``, ``"jacobi2d.c"``, ``"reject/call.c"``;
    the PolyBench-style whole files by their name too: ``"2mm.c"`` is ``"polybench/2mm.c"``)."""
    root = Path(str(resources.files("polylab") / "examples"))
    path = root / name
    if not path.exists() and (root / "polybench" / name).is_file():
        path = root / "polybench" / name
    if not path.exists():
        names = sorted(p.name for p in path.parent.iterdir() if p.is_file()) if path.parent.exists() else []
        raise PolylabError(f"no example named {name!r}", hint="examples: " + ", ".join(names))
    return path


def examples() -> list[str]:
    """Names of the example kernels that ship with polylab."""
    root = Path(str(resources.files("polylab") / "examples"))
    return sorted(p.name for p in root.iterdir() if p.suffix in (".c", ".sy"))
