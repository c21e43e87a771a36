"""Loop nests the optimizer was not written for (``tests/unseen_kernels``: triangular and banded bounds,
transposed operands, column forms of the factorizations, integer dynamic programs with ``max``, strided
and backward loops, short outer loops, file-scope scalar accumulators), each optimized for one and two
threads at its own constant sizes and run against the original program: every element it writes compared
bit for bit, the OpenMP build on two threads.

Two size sets: small odd sizes, where every tile and strip is partial, and sizes of a few hundred, where
the cache model asks for tiles (stream tiles, row strips, band tiles). The campaign these files come from
found three faults, each with a test of its own: ``max()`` in a fragment failed to link its original
(``test_experiment_verify``), a contraction over short outer loops lost its vector loop on two threads
(``test_optimize_span``), and LU in its column form never got the band tiles (``test_optimize_tiles``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import polylab
from polylab import toolchain as tc
from polylab.experiment import verify
from polylab.schedule import parse_schedule
from polylab.schedule.optimize import Machine
from polylab.storage import recipe_steps

pytestmark = pytest.mark.skipif(tc.c_compiler() is None or not tc.supports_openmp(),
                                reason="needs a C compiler with OpenMP")

KERNELS = sorted((Path(__file__).parent / "unseen_kernels").glob("*.c"))

SMALL = {"N": 37, "M": 29, "T": 5, "NI": 23, "NJ": 41, "NK": 19, "P": 7, "Q": 9, "R": 33, "S": 11, "NX": 31, "NY": 27}
LARGE = {"N": 300, "M": 230, "T": 4, "NI": 200, "NJ": 270, "NK": 190, "P": 20, "Q": 6, "R": 260, "S": 50, "NX": 300,
         "NY": 260}
#: the recurrences whose every step is a point: fewer of them
LARGE_RECURRENCES = {"wave3.c": {"N": 60}, "skew2.c": {"N": 200, "T": 3}, "dp.c": {"N": 200}, "floyd_i.c": {"N": 200}}


def test_the_campaign_is_all_here():
    assert len(KERNELS) >= 30


@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_optimized_unseen_kernels_compute_what_the_original_does(path, size):
    sizes = SMALL if size == "small" else LARGE_RECURRENCES.get(path.name, LARGE)
    scop = polylab.parse(path.read_text(), defines=tuple(f"{k}={v}" for k, v in sizes.items())).scop
    for threads in (1, 2):
        s = parse_schedule(scop, f"optimize({threads})", steps=recipe_steps(Machine()))
        v = verify(scop, s, "openmp", threads=2, timeout=120)
        assert v.verified is True, f"{path.name} at {sizes}, optimize({threads}): {v}"
        assert v.comparison is not None and v.comparison.arrays
