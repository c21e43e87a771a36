"""The stencil programs shipped with polylab (``polylab/examples/stencil``), by name."""

from __future__ import annotations

from pathlib import Path

from polylab.corpus import example_path
from polylab.stencil.parser import parse
from polylab.stencil.program import Program


def examples() -> list[str]:
    """The names of the shipped stencil programs (``laplace3d.mlir``, ``diffusion.mlir``, ...)."""
    root = Path(example_path("stencil/laplace3d.mlir")).parent
    return sorted(p.name for p in root.glob("*.mlir"))


def example(name: str) -> Program:
    """A shipped stencil program, parsed (``example("diffusion")`` or ``example("diffusion.mlir")``)."""
    file = name if name.endswith(".mlir") else f"{name}.mlir"
    path = example_path(f"stencil/{file}")
    return parse(path.read_text(), filename=str(path))
