"""Lab 2: schedules, the wavefront and tiling (``solutions/lab2_schedules.ipynb``).

The references come from the lab's own copies of the kernels: the in-place sweep and ``seidel2d``.
"""

from __future__ import annotations

import re
from functools import cache

from polylab.analysis import compute_dependences
from polylab.errors import IllegalTransformationError
from polylab.frontend import parse
from polylab.grading import answers as A
from polylab.grading.checks import legal_schedule
from polylab.grading.lab import Lab, Question
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.model import Scop
from polylab.schedule import Schedule, check, find_wavefront, original, parse_schedule

SWEEP = """double a[N][N];
for (i = 1; i < N; i++)
  for (j = 1; j < N; j++)
    a[i][j] = a[i - 1][j] + a[i][j - 1];
"""

SEIDEL = """double A[N][N];
for (t = 0; t <= T - 1; t++)
  for (i = 1; i <= N - 2; i++)
    for (j = 1; j <= N - 2; j++)
      A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
               + A[i][j - 1] + A[i][j] + A[i][j + 1]
               + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
"""

#: the anti-diagonal schedule of question 1, theta(i, j) = (i - j, i)
BAD = "{ S0[i, j] -> [i - j, i] }"
#: the tile sizes question 3 asks for
TILES = (4, 4, 4)


@cache
def scop(source: str) -> Scop:
    return parse(source).scop


@cache
def distances(source: str) -> tuple[tuple[int, ...], ...]:
    return tuple(sorted({d.distance for d in compute_dependences(scop(source)) if d.distance is not None}))


def _dot(a: tuple[int, ...], d: tuple[int, ...]) -> int:
    return sum(x * y for x, y in zip(a, d))


# -- Q1: the distance that theta = i - j violates --------------------------------------------------------------

def check_q1(answer: object) -> Verdict:
    """The distance vector ``d`` of the sweep with ``(1, -1) . d < 1``."""
    d = A.vector(answer, length=2, what="violated_distance")
    all_d = distances(SWEEP)
    if d not in all_d:
        return wrong(f"{d} is not a distance vector of the sweep: they are {', '.join(map(str, all_d))}")
    report = check(parse_schedule(scop(SWEEP), BAD))
    violated = {tuple(b - a for a, b in zip(v.source_instance, v.sink_instance)) for v in report.violations}
    if d in violated:
        return right()
    return wrong(f"theta = i - j keeps {d} in order: (1, -1) . {d} = {_dot((1, -1), d)} >= 1, so the sink runs "
                 "strictly later; compute (1, -1) . d for the other distance")


# -- Q2: the smallest wavefront hyperplane -----------------------------------------------------------------

def _hyperplane_schedule(a: tuple[int, ...]) -> Schedule:
    s = scop(SWEEP)
    it = s.statements[0].iterators
    theta = " + ".join(f"{c}*{x}" for c, x in zip(a, it))
    return parse_schedule(s, f"{{ S0[{', '.join(it)}] -> [{theta}, {it[0]}] }}")


def check_q2(answer: object) -> Verdict:
    """The lexicographically smallest non-negative ``(a0, a1)`` (smallest ``a0 + a1`` first) with ``a . d >= 1``
    for every distance ``d``. A legal but larger hyperplane earns half the points."""
    a = A.vector(answer, length=2, what="wavefront_coefficients")
    bad = [d for d in distances(SWEEP) if _dot(a, d) < 1]
    if bad:
        lines = [f"a = {a} gives a . {d} = {_dot(a, d)} < 1: the dependence with distance {d} would not go "
                 "forward in time" for d in bad]
        legal = legal_schedule(_hyperplane_schedule(a), what=f"theta = {a[0]} i + {a[1]} j")
        return wrong(*lines, pictures=legal.pictures)
    best = tuple(find_wavefront(original(scop(SWEEP))).hyperplane)
    if a == best:
        return right()
    return partial(1, 2, f"a = {a} is legal but not the smallest: a0 + a1 = {sum(a)}; minimise a0 + a1 subject "
                         "to a . d >= 1 for every distance d")


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


LAB = Lab(
    name="lab2",
    title="Schedules, the wavefront and tiling",
    notebook="lab2_schedules.ipynb",
    questions=(
        Question("q1", 1, ("violated_distance",), check_q1, title="the distance theta = i - j violates",
                 example="(1, 0)"),
        Question("q2", 2, ("wavefront_coefficients",), check_q2, title="the smallest wavefront hyperplane",
                 example="(2, 1)"),
        Question("q3", 3, ("seidel_recipe",), check_q3, title="a tile-level wavefront of seidel2d",
                 example='"auto; tile(4, 4, 4)"'),
    ),
)
