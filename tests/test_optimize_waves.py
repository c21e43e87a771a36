"""Tile-level wavefronts with threads: offered only where a wave holds, on average, at least one tile per
thread (:func:`~polylab.schedule.optimize.shapes.wave_width`, counted at the sizes the arrays' declarations
allow), and the strips without a wave not tried where the innermost loop carries no chain (their only
parallel loop is the innermost one, which OpenMP would start once per row).

floyd-warshall is the case: inside ``k`` its rows depend on row ``k`` (exactly), so the only parallel
schedules are skewed wavefronts; at PolyBench's MEDIUM size (500) the cache model's 256 x 256 tiles give 6
tiles in 5 waves, and the wavefront ran at 0.59x of the source order on two threads (measured). These
tests run the loop optimizer alone: the storage layer's ``optimize`` first splits floyd-warshall's loops
where row and column ``k`` are written (test_storage_split.py), and its rows are then parallel.
"""

from __future__ import annotations

import itertools

import pytest

import polylab
from polylab.reference.interpret import same_live_out
from polylab.schedule import parse_schedule, schedule_steps
from polylab.schedule.core import floor_div, iter_aff, skewed
from polylab.schedule.optimize import Machine, ShapeKind
from polylab.schedule.optimize.shapes import wave_width

FLOYD = """void kernel(int n, int path[{N}][{N}]) {{
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++)
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
#pragma endscop
}}"""


def scop(n: int):
    return polylab.parse(FLOYD.format(N=n)).scop


def brute_width(n: int, size: int) -> float:
    """Tiles per wave of the tiles ``(floor(i / size), floor((i + j) / size))`` over ``0 <= i, j < n``."""
    tiles = {(i // size, (i + j) // size) for i, j in itertools.product(range(n), repeat=2)}
    return len(tiles) / len({r + c for r, c in tiles})


@pytest.mark.parametrize("n, size", [(500, 256), (40, 8), (37, 16), (2800, 256)])
def test_wave_width_counts_tiles_per_wave(n, size):
    s = scop(n)
    stmt = s.statements[0]
    space = s.context.get_space()
    i, j = iter_aff(stmt, space, 1), iter_aff(stmt, space, 2)
    width = wave_width(stmt, s, floor_div(i, size), floor_div(skewed(j, i, 1), size))
    if n == 2800:   # 7.8 million points: too many for the brute force here
        assert width is not None and width >= 2
    else:
        assert width == pytest.approx(brute_width(n, size))


def test_floyd_warshall_keeps_its_order_on_two_threads_where_the_waves_are_narrow():
    two = Machine(threads=2)
    medium = parse_schedule(scop(500), "optimize(2)", steps=schedule_steps(two))
    choice = medium.provenance.optimize.choices[0]
    assert choice.kind is ShapeKind.KEEP and not medium.marked
    # at PolyBench's LARGE size the waves hold about 4 tiles: the wavefront, computing what the original does
    large = parse_schedule(scop(2800), "optimize(2)", steps=schedule_steps(two))
    assert large.provenance.optimize.choices[0].kind is ShapeKind.STRIPS_WAVE and large.marked
    for n in (5, 12):
        assert same_live_out(scop(2800), large.scop, {"n": n}, schedule=large.union_map) == []
    # one thread: the source order at both sizes, as before
    assert parse_schedule(scop(500), "optimize(1)", steps=schedule_steps(Machine())).provenance.optimize.choices[0].kind \
        is ShapeKind.KEEP
