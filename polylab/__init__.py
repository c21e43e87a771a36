"""polylab: polyhedral loop optimization for teaching, on isl.

    >>> import polylab
    >>> prog = polylab.parse_file(polylab.example_path("sweep2d.c"))
    >>> prog.scop.statements[0].name
    'S0'
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from polylab.errors import PolylabError

__version__ = "0.1.0"


def example_path(name: str) -> Path:
    """The path of an example shipped with polylab (``"sl3.sy"``, ``"jacobi2d.c"``, ``"reject/call.c"``)."""
    path = Path(str(resources.files("polylab") / "examples" / name))
    if not path.exists():
        names = sorted(p.name for p in path.parent.iterdir() if p.is_file()) if path.parent.exists() else []
        raise PolylabError(f"no example named {name!r}", hint="examples: " + ", ".join(names))
    return path


def examples() -> list[str]:
    """Names of the example kernels that ship with polylab."""
    root = Path(str(resources.files("polylab") / "examples"))
    return sorted(p.name for p in root.iterdir() if p.suffix in (".c", ".sy"))


def parse(source: str, **kwargs):
    """Parse C / SysY text into a :class:`polylab.model.Program` (see :func:`polylab.frontend.parse`)."""
    from polylab.frontend import parse as _parse

    return _parse(source, **kwargs)


def parse_file(path, **kwargs):
    """Parse a file into a :class:`polylab.model.Program` (see :func:`polylab.frontend.parse_file`)."""
    from polylab.frontend import parse_file as _parse_file

    return _parse_file(path, **kwargs)


def load_ipython_extension(ipython) -> None:
    """``%load_ext polylab``: register the magics."""
    from polylab.notebook.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython) -> None:
    from polylab.notebook.magics import unload_ipython_extension as _unload

    _unload(ipython)


__all__ = ["PolylabError", "example_path", "examples", "parse", "parse_file", "__version__"]
