"""polylab.notebook: the Jupyter layer (magics, pictures, explorers, display panels).

    %load_ext polylab                      # registers %%scop, %%schedule and %polyrun
    from polylab.notebook import ScheduleExplorer, TilingExplorer, DependenceExplorer, plots

Nothing here is imported by the engine; importing this package does not import ipywidgets or IPython
until an explorer or the magics are used.
"""

from __future__ import annotations

from typing import Any

from polylab.notebook import geometry, plots

__all__ = ["DependenceExplorer", "ScheduleExplorer", "TilingExplorer", "geometry", "plots", "show"]


def show(fig: Any, dpi: int = 90):
    """A figure as an ``IPython.display.Image`` (works without any matplotlib backend set up)."""
    from IPython.display import Image

    from polylab.notebook.display import figure_png

    return Image(data=figure_png(fig, dpi), format="png")


def __getattr__(name: str) -> Any:
    if name in ("ScheduleExplorer", "TilingExplorer", "DependenceExplorer"):
        from polylab.notebook import widgets

        return getattr(widgets, name)
    raise AttributeError(name)
