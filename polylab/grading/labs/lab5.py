"""Lab 5: tiling (``solutions/lab5_tiling.ipynb``).

Rectangular tiles of a band are legal when the band is *permutable*: every distance has non-negative
entries on the band's dimensions. ``seidel2d`` has distances like ``(0, 1, -1)``; a unimodular skew
``Theta`` with ``Theta d >= 0`` (componentwise, for every distance ``d`` of every dependence, exactly as
isl sets) makes it tilable. The tile-level wavefront runs the tiles of one wave in parallel. Every expected
answer is computed by the engine (isl) from the lab's own texts of the nests.
"""

from __future__ import annotations

import re
from functools import cache

import islpy as isl
import sympy

from polylab.analysis import compute_dependences
from polylab.errors import IllegalTransformationError
from polylab.grading import answers as A
from polylab.grading.checks import legal_schedule, part
from polylab.grading.kernels import SEIDEL, SWEEP, scop
from polylab.grading.lab import Lab, Question
from polylab.model.islutil import parameter_values, point_coordinates
from polylab.grading.verdict import Verdict, combine, right, wrong
from polylab.schedule import Schedule, check, parse_schedule

#: the tile sizes question 3 asks for
TILES = (4, 4, 4)
#: question 4: the sweep at N = TILE_N with TILE x TILE tiles
TILE_N, TILE = 16, 4
#: question 5: why tiles win (the right choice)
TILES_WIN = "b"


def theta_schedule(source: str, rows: tuple[tuple[int, ...], ...]) -> Schedule:
    st = scop(source).statements[0]
    exprs = [" + ".join(f"{c}{x}" for c, x in zip(row, st.iterators) if c) or "0" for row in rows]
    return parse_schedule(scop(source), f"{{ {st.name}[{', '.join(st.iterators)}] -> [{', '.join(exprs)}] }}")


@cache
def seidel_distance_sets() -> tuple[tuple[str, isl.Set], ...]:
    """``(kind, distance set)`` of every memory-based dependence of seidel2d."""
    return tuple((d.kind, d.distance_set) for d in compute_dependences(scop(SEIDEL)))


# -- Q1: a distance that forbids tiling -----------------------------------------------------------------------

def check_q1(answer: object) -> Verdict:
    """A distance vector of seidel2d with a negative entry (which makes the band ``(t, i, j)`` not
    permutable)."""
    d = A.vector(answer, 3, "seidel_negative_distance")
    point = isl.Set(f"[T, N] -> {{ [{', '.join(map(str, d))}] }}")
    kinds = [kind for kind, dset in seidel_distance_sets() if not point.intersect(dset).is_empty()]
    if not kinds:
        return wrong(f"{d} is not a distance of seidel2d: equate the write A[i][j] with a read, e.g. "
                     "A[i + 1][j - 1], and subtract source from sink")
    if all(x >= 0 for x in d):
        return wrong(f"{d} is a distance of seidel2d ({kinds[0]}), but no entry is negative: it does not stop "
                     "rectangular tiling")
    return right()


# -- Q2: a skew that makes the band permutable ------------------------------------------------------------------

def _nonnegative_images(rows: tuple[tuple[int, ...], ...]) -> list[str]:
    """For each dependence whose distances ``Theta`` maps outside the non-negative orthant: a line naming
    one such distance and its image."""
    theta = isl.Map("[T, N] -> { [a, b, c] -> ["
                    + ", ".join(f"{r[0]}a + {r[1]}b + {r[2]}c" for r in rows) + "] }")
    orthant = isl.Set("[T, N] -> { [x, y, z] : x >= 0 and y >= 0 and z >= 0 }")
    lines: list[str] = []
    seen: set[tuple[int, ...]] = set()
    for kind, dset in seidel_distance_sets():
        bad_d = dset.intersect(orthant.complement().apply(theta.reverse()))
        if not bad_d.is_empty():
            d = bad_d.sample_point()
            if _coords(d) in seen:
                continue
            seen.add(_coords(d))
            image = isl.Set(f"[T, N] -> {{ [{', '.join(map(str, _coords(d)))}] }}").apply(theta).sample_point()
            lines.append(f"the {kind} distance {_coords(d)} (at {_params(d)}) becomes {_coords(image)}, "
                         "which has a negative entry")
    return lines if len(lines) <= 4 else lines[:4] + [f"... and {len(lines) - 4} more"]


def _params(p: isl.Point) -> str:
    return ", ".join(f"{k} = {v}" for k, v in parameter_values(p).items())


def _coords(p: isl.Point) -> tuple[int, ...]:
    return point_coordinates(p)


def check_q2(answer: object) -> Verdict:
    """A 3 x 3 unimodular ``Theta`` such that ``Theta d >= 0`` for every distance of seidel2d (so the skewed
    band is permutable and rectangular tiles are legal) and whose schedule is legal."""
    rows = A.matrix(answer, (3, 3), "seidel_skew")
    if any(x.denominator != 1 for r in rows for x in r):
        raise A.AnswerError("seidel_skew has fractions", hint="a schedule has integer coefficients")
    ints = tuple(tuple(int(x) for x in r) for r in rows)
    det = int(sympy.Matrix(ints).det())
    uni = right() if abs(det) == 1 else wrong(f"det(Theta) = {det}, so Theta is not unimodular")
    bad = _nonnegative_images(ints)
    perm = right() if not bad else wrong(*bad, "every distance must map to non-negative entries for "
                                               "rectangular tiles (a permutable band)")
    legal = legal_schedule(theta_schedule(SEIDEL, ints), what="the skewed schedule")
    return combine([("permutable", perm), ("legality", legal), ("unimodular", uni)])


# -- Q3: a tile-level wavefront of seidel2d ---------------------------------------------------------------------

_TILE_WAVEFRONT = re.compile(r"^\s*tile_wavefront\s*\(([^)]*)\)\s*$")


def _tile_wavefront_sizes(schedule: Schedule) -> list[tuple[int, ...]]:
    out = []
    for step in schedule.steps:
        m = _TILE_WAVEFRONT.match(step)
        if m:
            out.append(tuple(int(x) for x in m.group(1).split(",") if x.strip()))
    return out


def check_q3(answer: object) -> Verdict:
    """A recipe for ``seidel2d`` that is legal, has a ``tile_wavefront`` step with exactly 4 x 4 x 4 tiles and
    marks a parallel loop. Each of the three parts counts; every wrong part is reported."""
    recipe = A.text(answer, "seidel_recipe")
    if not recipe:
        return wrong("seidel_recipe is empty: write steps separated by ';', e.g. \"auto; tile(4, 4, 4)\"")
    try:
        sched = parse_schedule(scop(SEIDEL), recipe)
    except IllegalTransformationError as err:
        return wrong(f"the recipe is illegal: {err.message}" + (f" ({err.hint})" if err.hint else ""))
    legal = legal_schedule(sched, what="the recipe's schedule")
    sizes = _tile_wavefront_sizes(sched)
    if not sizes:
        tiles = wrong("the recipe has no tile_wavefront step: tiles of one wave run in parallel only with "
                      "tile_wavefront(4, 4, 4)")
    elif TILES in sizes:
        tiles = right()
    else:
        got = sizes[-1]
        what = (f"tiles {len(got)} of the 3 loops" if len(got) != len(TILES)
                else f"has tiles of {' x '.join(map(str, got))}")
        tiles = wrong(f"tile_wavefront({', '.join(map(str, got))}) {what}; the question asks for 4 x 4 x 4 tiles")
    parallel = right() if legal.correct and check(sched).parallel else wrong(
        "no loop is marked parallel: tiles of one wave are independent; add the step parallel")
    return combine([("legality", legal), ("tiles", tiles), ("parallel", parallel)])


# -- Q4: counting tiles and tile waves --------------------------------------------------------------------------

@cache
def tile_counts() -> tuple[int, int]:
    """The number of tile waves ``floor(i/4) + floor(j/4)`` of the sweep at N = 16 and the largest number of
    tiles in one wave."""
    dom = scop(SWEEP).statements[0].domain.intersect_params(isl.Set(f"[N] -> {{ : N = {TILE_N} }}"))
    tiles = isl.Map(f"[N] -> {{ S0[i, j] -> [floor(i / {TILE}), floor(j / {TILE})] }}").intersect_domain(dom).range()
    waves: dict[int, int] = {}

    def add(p: isl.Point) -> None:
        w = sum(_coords(p))
        waves[w] = waves.get(w, 0) + 1

    tiles.foreach_point(add)
    return len(waves), max(waves.values())


def _tile_waves(answer: object) -> Verdict:
    n = A.integer(answer, "tile_waves")
    want = tile_counts()[0]
    if n == want:
        return right()
    return wrong(f"{n} tile waves is not right: the tiles are (floor(i/{TILE}), floor(j/{TILE})) for "
                 f"1 <= i, j <= {TILE_N - 1}; a tile wave is one value of their sum")


def _widest(answer: object) -> Verdict:
    n = A.integer(answer, "widest_tile_wave")
    want = tile_counts()[1]
    if n == want:
        return right()
    return wrong(f"{n} is not the largest number of tiles in one wave: count the tiles on the longest "
                 "anti-diagonal of the grid of tiles")


def check_q4(tile_waves: object, widest_tile_wave: object) -> Verdict:
    """The number of tile waves of the 4 x 4 tiled sweep at N = 16 and the most tiles that run at once."""
    return combine([("tile_waves", part(_tile_waves, tile_waves)),
                    ("widest_tile_wave", part(_widest, widest_tile_wave))])


# -- Q5: why tiles win ------------------------------------------------------------------------------------------

def check_q5(answer: object) -> Verdict:
    reason = A.choice(answer, ("a", "b", "c"), "why_tiles_win")
    why_not = {"a": "tiling reorders the same instances: every point still does the same operations",
               "c": "tiling keeps every dependence; it only orders them by tiles (which is why the band must "
                    "be permutable)"}
    if reason == TILES_WIN:
        return right()
    return wrong(f"({reason}) is not it: {why_not[reason]}")


LAB = Lab(
    name="lab5",
    title="Tiling",
    notebook="lab5_tiling.ipynb",
    questions=(
        Question("q1", 1, ("seidel_negative_distance",), check_q1, title="a distance that forbids tiling",
                 example="(1, 0, 0)"),
        Question("q2", 3, ("seidel_skew",), check_q2, title="a skew that makes seidel2d tilable",
                 example="[[1, 0, 0], [0, 1, 0], [0, 0, 1]]"),
        Question("q3", 3, ("seidel_recipe",), check_q3, title="a tile-level wavefront of seidel2d",
                 example='"auto; tile(4, 4, 4)"'),
        Question("q4", 2, ("tile_waves", "widest_tile_wave"), check_q4, title="tiles and tile waves",
                 example="9 and 3"),
        Question("q5", 1, ("why_tiles_win",), check_q5, title="why tiles win", example='"a"'),
    ),
)
