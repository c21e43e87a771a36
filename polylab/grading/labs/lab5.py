"""Lab 5: tiling (``solutions/lab5_tiling.ipynb``).

Rectangular tiles of a band are legal when the band is *permutable*: every distance has non-negative
entries on the band's dimensions. ``seidel2d`` has distances like ``(0, 1, -1)``; a unimodular skew
``Theta`` with ``Theta d >= 0`` (componentwise, for every distance ``d`` of every dependence, exactly as
isl sets) makes it tilable. The tile-level wavefront runs the tiles of one wave in parallel.

The construction (question 3) is a recipe whose tile-level wavefront is compiled to OpenMP and run against
the original at several thread counts. The derivation (question 5) is a tile size from a stated cache: the
*model* is the footprint ``W(s)`` of one interior ``s x s x s`` tile of the skewed band (the distinct
elements of ``A`` it reads, counted exactly by isl), the rule ``8 W(s) <= C / 2`` for a cache of ``C``
bytes, and the tolerance of the model (it ignores conflict misses and cache lines): a size whose working set
lies within 75-105 % of the budget is right. Question 6 reads a recorded measurement with its interval.
Every expected answer is computed by the engine (isl) from the lab's own texts of the nests.
"""

from __future__ import annotations

import re
from functools import cache

import islpy as isl
import sympy

from polylab.analysis import compute_dependences
from polylab.errors import IllegalTransformationError
from polylab.grading import answers as A
from polylab.grading.checks import (VERDICTS, expect, expect_verdict, legal_schedule, memo_by_text, part,
                                    verified_variant)
from polylab.grading.kernels import SEIDEL, SWEEP, scop
from polylab.grading.lab import Lab, Question
from polylab.model.islutil import parameter_values, point_coordinates
from polylab.grading.verdict import Verdict, combine, right, wrong
from polylab.schedule import Schedule, check, parse_schedule, split_spec
from polylab.toolchain import supports_openmp

#: the tile sizes question 3 asks for, and the sizes and thread counts its code runs at
TILES = (4, 4, 4)
RUN_PARAMS, THREADS = {"T": 3, "N": 20}, (1, 2, 3)
#: question 4: the sweep at N = TILE_N with TILE x TILE tiles
TILE_N, TILE = 16, 4
#: question 5: the skewed band whose tiles are sized, the cache (bytes) and the share a tile may use, the
#: tolerance of the model (the working set's share of that budget), and the tile whose footprint is asked
SKEW = "(t, t + i, 2t + i + j)"
CACHE_BYTES, BUDGET_SHARE, ELEMENT_BYTES = 256 * 1024, 0.5, 8
TOLERANCE = (0.75, 1.05)
FOOTPRINT_TILE = 8

#: question 6: runs of seidel2d at T = 10, N = 500 with 2 threads, recorded on the course's development machine
#: (2 cores, a load of 11 to 13 from other work; 2026-12-05 02:20 UTC; polylab.experiment.measure, repeat=10);
#: the lab shows the same numbers (tests/test_grading_lab5.py checks that)
RECORDED = {
    "original (gcc -O3)": [0.125225, 0.135294, 0.127634, 0.123784, 0.132389, 0.124135, 0.127517, 0.120846,
                           0.113996, 0.134074],
    "tiles 8x8x8": [0.102926, 0.102434, 0.084897, 0.080134, 0.073063, 0.069791, 0.075449, 0.073167, 0.071323,
                    0.091533],
    "tiles 16x16x16": [0.103094, 0.102333, 0.110915, 0.104187, 0.108779, 0.109791, 0.112168, 0.110145, 0.096983,
                       0.102477],
    "tiles 32x32x32": [0.115012, 0.123286, 0.126571, 0.112412, 0.119221, 0.123051, 0.13744, 0.183183, 0.123059,
                       0.134792],
}


def theta_schedule(source: str, rows: tuple[tuple[int, ...], ...]) -> Schedule:
    st = scop(source).statements[0]
    exprs = [" + ".join(f"{c}{x}" for c, x in zip(row, st.iterators) if c) or "0" for row in rows]
    return parse_schedule(scop(source), f"{{ {st.name}[{', '.join(st.iterators)}] -> [{', '.join(exprs)}] }}")


@cache
def seidel_distance_sets() -> tuple[tuple[str, isl.Set], ...]:
    """``(kind, distance set)`` of every memory-based dependence of seidel2d."""
    return tuple((kind, dset) for kind, _, dset in seidel_dependences())


@cache
def seidel_dependences() -> tuple[tuple[str, str, isl.Set], ...]:
    """``(kind, "source -> sink" references, distance set)`` of every memory-based dependence of seidel2d."""
    return tuple((d.kind, f"{d.source_ref.text} -> {d.sink_ref.text}", d.distance_set)
                 for d in compute_dependences(scop(SEIDEL)))


# -- Q1: a distance that forbids tiling -----------------------------------------------------------------------

def check_q1(answer: object) -> Verdict:
    """A distance vector of seidel2d with a negative entry (which makes the band ``(t, i, j)`` not
    permutable)."""
    d = A.vector(answer, 3, "seidel_negative_distance")
    point = isl.Set(f"[T, N] -> {{ [{', '.join(map(str, d))}] }}")
    kinds = [kind for kind, dset in seidel_distance_sets() if not point.intersect(dset).is_empty()]
    if not kinds:
        return wrong(f"{d} is not a distance of seidel2d: equate the write A[i][j] with a read, e.g. "
                     "A[i - 1][j], and subtract source from sink")
    if all(x >= 0 for x in d):
        return wrong(f"{d} is a distance of seidel2d ({kinds[0]}), but no entry is negative: it does not stop "
                     "rectangular tiling")
    return right()


# -- Q2: a skew that makes the band permutable ------------------------------------------------------------------

def _nonnegative_images(rows: tuple[tuple[int, ...], ...]) -> list[str]:
    """For each dependence whose distances ``Theta`` maps outside the non-negative orthant: a line naming
    the dependence by its references and the entry of ``Theta d`` that is negative. Neither the distance nor
    its image is printed: for the identity (question 2's example) the image is the distance, which is
    question 1's answer."""
    theta = isl.Map("[T, N] -> { [a, b, c] -> ["
                    + ", ".join(f"{r[0]}a + {r[1]}b + {r[2]}c" for r in rows) + "] }")
    orthant = isl.Set("[T, N] -> { [x, y, z] : x >= 0 and y >= 0 and z >= 0 }")
    lines: list[str] = []
    seen: set[tuple[int, ...]] = set()
    names = ("first", "second", "third")
    for kind, refs, dset in seidel_dependences():
        bad_d = dset.intersect(orthant.complement().apply(theta.reverse()))
        if not bad_d.is_empty():
            d = bad_d.sample_point()
            if _coords(d) in seen:
                continue
            seen.add(_coords(d))
            image = isl.Set(f"[T, N] -> {{ [{', '.join(map(str, _coords(d)))}] }}").apply(theta).sample_point()
            k = next(k for k, x in enumerate(_coords(image)) if x < 0)
            lines.append(f"the {kind} dependence {refs}: for one of its distances d, the {names[k]} entry of "
                         "Theta d is negative")
    return lines if len(lines) <= 4 else lines[:4] + ["... and more dependences"]


def _params(p: isl.Point) -> str:
    return ", ".join(f"{k} = {v}" for k, v in parameter_values(p).items())


def _coords(p: isl.Point) -> tuple[int, ...]:
    return point_coordinates(p)


def check_q2(answer: object) -> Verdict:
    """A 3 x 3 unimodular ``Theta`` such that ``Theta d >= 0`` for every distance of seidel2d (so the skewed
    band is permutable and rectangular tiles are legal) and whose schedule is legal: 2/3 for a legal
    permutable skew (nothing without it), 1/3 for unimodularity on top."""
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
    if not perm.correct:   # legality alone earns nothing: the original order is legal
        # the dependences by their references only: a violating pair of instances would be a distance with a
        # negative entry, question 1's answer (for the identity, its example)
        also = () if legal.correct else ("legality: the skewed schedule also runs a dependence backwards",)
        return wrong(*(f"permutable: {x}" for x in perm.feedback), *also,
                     *(f"unimodular: {x}" for x in uni.feedback))
    if not legal.correct:
        return wrong(*(f"legality: {x}" for x in legal.feedback), *(f"unimodular: {x}" for x in uni.feedback),
                     pictures=legal.pictures)
    return combine([("a legal, permutable skew", right()), ("unimodular", uni)], weights=[2, 1])


# -- Q3: a tile-level wavefront of seidel2d ---------------------------------------------------------------------

_TILE_WAVEFRONT = re.compile(r"^\s*tile_wavefront\s*\(([^)]*)\)\s*$")


def _tile_wavefront_sizes(schedule: Schedule) -> list[tuple[int, ...]]:
    out = []
    for step in schedule.steps:
        m = _TILE_WAVEFRONT.match(step)
        if m:
            out.append(tuple(int(x) for x in m.group(1).split(",") if x.strip()))
    return out


@memo_by_text
def check_q3(answer: object) -> Verdict:
    """A recipe for ``seidel2d`` that starts with the student's own skew in isl text (no ``auto``), then a
    ``tile_wavefront`` step of exactly 4 x 4 x 4 tiles, legal (nothing without all three: an untiled or
    searched recipe is not the question), then: a parallel loop (1/3), the tiled schedule itself (1/3), and
    its OpenMP code run against the original with 1, 2 and 3 threads (1/3)."""
    recipe = A.text(answer, "seidel_recipe")
    if not recipe:
        return wrong("seidel_recipe is empty: write your skew in isl text, then the steps, separated by ';'")
    parts = split_spec(recipe)
    if any(p.split("(")[0].strip() == "auto" for p in parts):
        return wrong("seidel_recipe uses auto: write the skew yourself, in isl text, as the recipe's first part")
    if not parts or not parts[0].lstrip().startswith(("{", "[")):
        return wrong("seidel_recipe does not start with a schedule in isl text: write your skew first, "
                     "{ S0[t, i, j] -> [...] }")
    try:
        sched = parse_schedule(scop(SEIDEL), recipe)
    except IllegalTransformationError as err:
        step = err.message.split(":", 1)[0]
        if step.startswith("tile"):   # not the engine's pair (a negative distance: question 1) nor its hint (auto)
            return wrong(f"the recipe is illegal: {step}: under your skew some dependence distance still has a "
                         "negative entry on the tiled dimensions, so the band is not permutable (seidel_skew's "
                         "check names the dependences)")
        return wrong(f"the recipe is illegal: {err.message}")
    legal = legal_schedule(sched, what="the recipe's schedule")
    if not legal.correct:
        return legal
    sizes = _tile_wavefront_sizes(sched)
    if not sizes:
        return wrong("the recipe does not tile its band into a tile-level wavefront: the tiles of one wave run "
                     "in parallel only after a step that tiles and orders the tiles by waves")
    if TILES not in sizes:
        got = sizes[-1]
        what = (f"tiles {len(got)} of the 3 loops" if len(got) != len(TILES)
                else f"has tiles of {' x '.join(map(str, got))}")
        return wrong(f"tile_wavefront({', '.join(map(str, got))}) {what}; the question asks for 4 x 4 x 4 tiles")
    parallel = right() if check(sched).parallel else wrong(
        "no loop is marked parallel: tiles of one wave are independent; add the step parallel")
    threads = THREADS if supports_openmp() else (None,)
    run = verified_variant(scop(SEIDEL), sched, params=RUN_PARAMS, target="openmp" if supports_openmp() else "c",
                           threads=threads, what="the code of your recipe")
    return combine([("the tiled schedule", right()), ("parallel", parallel), ("the run", run)])


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
    return expect(A.integer(answer, "tile_waves"), tile_counts()[0],
                  otherwise=f"{{given}} tile waves is not right: the tiles are (floor(i/{TILE}), floor(j/{TILE})) for "
                            f"1 <= i, j <= {TILE_N - 1}; a tile wave is one value of their sum")


def _widest(answer: object) -> Verdict:
    return expect(A.integer(answer, "widest_tile_wave"), tile_counts()[1],
                  otherwise=f"{{given}} is not the largest number of tiles in one wave: the tiles of one wave are "
                            f"those (floor(i/{TILE}), floor(j/{TILE})) with the same sum")


def check_q4(tile_waves: object, widest_tile_wave: object) -> Verdict:
    """The number of tile waves of the 4 x 4 tiled sweep at N = 16 and the most tiles that run at once."""
    return combine([("tile_waves", part(_tile_waves, tile_waves)),
                    ("widest_tile_wave", part(_widest, widest_tile_wave))])


# -- Q5: a tile size from the cache (derivation) ------------------------------------------------------------------

def tile_footprint(size: int) -> int:
    """``W(size)``: the distinct elements of ``A`` one interior ``size x size x size`` tile of the skewed band
    ``(t, t + i, 2t + i + j)`` reads (isl counts them; the tile lies far from the borders)."""
    st = scop(SEIDEL).statements[0]
    n = 8 * size + 64
    tile = isl.Set(f"[T, N] -> {{ S0[t, i, j] : {size} <= t < {2 * size} and {n} <= t + i < {n + size} and "
                   f"{3 * n} <= 2t + i + j < {3 * n + size} }}").intersect(st.domain)
    tile = tile.intersect_params(isl.Set(f"[T, N] -> {{ : T = {4 * size} and N = {8 * n} }}"))
    reads = None
    for acc in st.reads:
        reads = acc.relation if reads is None else reads.union(acc.relation)
    return int(reads.intersect_domain(tile).range().count_val().to_python())


def budget() -> float:
    return CACHE_BYTES * BUDGET_SHARE


@cache
def model_tile_size() -> int:
    """The largest ``s`` with ``8 W(s)`` within the budget (the model's answer)."""
    s = 1
    while ELEMENT_BYTES * tile_footprint(s + 1) <= budget():
        s += 1
    return s


def _footprint(answer: object) -> Verdict:
    return expect(A.integer(answer, "tile_footprint_8"), tile_footprint(FOOTPRINT_TILE),
                  (FOOTPRINT_TILE ** 3, "{given} is the number of iterations of the tile, not of the elements "
                                        "it reads"),
                  ((FOOTPRINT_TILE + 2) ** 2, "{given} counts one time step's square with its halo; the tile "
                                              "spans 8 time steps, each shifted by the skew"),
                  otherwise="{given} is not the number of distinct elements of A that one interior 8 x 8 x 8 tile "
                            "reads: write the tile as an isl set and count the image of its reads (lab 1)")


def _tile_size(answer: object) -> Verdict:
    """Right within the model's tolerance. A wrong size is told which step of the derivation it misses when
    it is a known slip (the whole cache instead of the half, elements instead of bytes); otherwise only that
    it is outside the tolerance: the feedback never evaluates ``W(s)`` (its bytes, its share, or whether it
    is too large or too small), since that would be the model itself, to be bisected for any ``s``."""
    s = A.integer(answer, "tile_size")
    if s < 1:
        return wrong(f"tile_size = {s}: a tile has at least one point per dimension")
    lo, hi = TOLERANCE

    def within(share: float) -> bool:
        return lo <= share <= hi

    if within(ELEMENT_BYTES * tile_footprint(s) / budget()):
        return right()
    if within(ELEMENT_BYTES * tile_footprint(s) / CACHE_BYTES):
        return wrong(f"tile_size = {s} fills the whole cache: the model gives one tile only C / 2, the other half "
                     "is for the halos, the stack and the conflicts")
    if within(tile_footprint(s) / budget()):
        return wrong(f"tile_size = {s} fits the budget counted in elements: the budget is in bytes, and each "
                     f"element of A is a double of {ELEMENT_BYTES} bytes")
    return wrong(f"tile_size = {s} is not the largest tile whose working set fits the model: find W(s) for any s "
                 "from a few counts (how it grows with s), then solve 8 W(s) <= C / 2 for the largest s")


def check_q5(tile_footprint_8: object, tile_size: object) -> Verdict:
    """The footprint of one 8 x 8 x 8 tile (exact, 1/3) and the largest tile size whose working set fits in
    half of a 256 KiB cache, within the model's tolerance (2/3)."""
    return combine([("tile_footprint_8", part(_footprint, tile_footprint_8)),
                    ("tile_size", part(_tile_size, tile_size))], weights=[1, 2])


# -- Q6: reading a measurement --------------------------------------------------------------------------------

def check_q6(tiles_32: object) -> Verdict:
    """Is the 32 x 32 x 32 tile wavefront faster than the original, slower, or not measurably different, in
    the recorded runs?"""
    given = A.choice(tiles_32, VERDICTS, "tiles_32")
    return expect_verdict(given, RECORDED["original (gcc -O3)"], RECORDED["tiles 32x32x32"],
                          variant_name="tiles 32x32x32", baseline_name="the original")


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
                 kind="construction", example='"{ S0[t, i, j] -> [t, i, j] }; tile(4, 4, 4)"'),
        Question("q4", 2, ("tile_waves", "widest_tile_wave"), check_q4, title="tiles and tile waves",
                 example="9 and 3"),
        Question("q5", 3, ("tile_footprint_8", "tile_size"), check_q5, title="a tile size from the cache",
                 kind="derivation", example="512 and 100"),
        Question("q6", 1, ("tiles_32",), check_q6, title="are 32 x 32 x 32 tiles faster?", kind="choice",
                 example='"faster"'),
    ),
)
