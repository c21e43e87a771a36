"""Small parameter values for every shipped example kernel (fast builds and runs in the tests), and the
corpus of shipped kernels."""

from pathlib import Path

import polylab

#: example file name -> parameter values
PARAMS = {
    "fdtd2d.c": {"T": 3, "NY": 10, "NX": 9},
    "gemm.c": {"NI": 9, "NJ": 10, "NK": 11},
    "heat3d.c": {"T": 2, "N": 8},
    "jacobi2d.c": {"T": 3, "N": 12},
    "lu.c": {"N": 10},
    "mvt.c": {"N": 12},
    "seidel2d.c": {"T": 3, "N": 12},
    "shift.c": {"N": 12, "M": 7},
    "sl3.sy": {"n": 12},
    "sweep2d.c": {"N": 12},
}


def corpus() -> list[str]:
    """Every shipped example kernel, the PolyBench-style ones (``polybench/``) included."""
    root = Path(polylab.example_path("sweep2d.c")).parent
    names = [n for n in polylab.examples() if n.endswith((".c", ".sy"))]
    return sorted(set(names)) + sorted(f"polybench/{p.name}" for p in (root / "polybench").glob("*.c"))


def scop_of(name: str):
    """The SCoP of a :func:`corpus` entry."""
    root = Path(polylab.example_path("sweep2d.c")).parent
    return polylab.parse_file(root / name if "/" in name else polylab.example_path(name)).scop
