"""polylab: polyhedral loop optimization for teaching, on isl.

    >>> import polylab
    >>> prog = polylab.parse_file(polylab.example_path("sweep2d.c"))
    >>> prog.scop.statements[0].name
    'S0'
"""

from __future__ import annotations

from polylab.corpus import example_path, examples
from polylab.errors import PolylabError
from polylab.version import __version__

# This module is the package's facade: nothing inside polylab imports it (they import the modules that
# define what it re-exports), so its function-local imports below load a layer only when it is used.


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


__all__ = ["PolylabError", "__version__", "example_path", "examples", "load_ipython_extension", "parse", "parse_file",
           "unload_ipython_extension"]
