"""Lab 3: ``sl3``, storage and speed (``solutions/lab3_sl3_storage.ipynb``).

The references come from the shipped ``sl3.sy`` (the same program as the notebook's ``%%scop`` cell): its
dependences, its dataflow, and the contraction moduli proven by the storage layer.
"""

from __future__ import annotations

from functools import cache

from polylab.corpus import example_path
from polylab.frontend import parse_file
from polylab.analysis import compute_dependences, dataflow
from polylab.grading import answers as A
from polylab.grading.checks import compare_sets, part
from polylab.grading.lab import Lab, Question
from polylab.grading.verdict import Verdict, combine, right, wrong
from polylab.model import Scop
from polylab.schedule import parse_schedule
from polylab.storage import contract, fold_live_ins, interleave, recipe_steps, remove_dead_writes
from polylab.storage.fold import constant_writers

#: the recipe of the tile-level wavefront in section 5 of the lab
TILE_WAVEFRONT = "fold_live_ins; remove_dead_writes; interleave; tile_wavefront(4, 4); parallel"
#: the right reason why one plane is refused (question 3)
ONE_PLANE_REASON = "a"


@cache
def sl3() -> Scop:
    return parse_file(example_path("sl3.sy")).scop


@cache
def sweep_distances(kind: str) -> frozenset[tuple[int, ...]]:
    return frozenset(d.distance for d in compute_dependences(sl3()).between("S1", "S1")
                     if d.kind == kind and d.distance is not None)


# -- Q1: the flow distances of the sweep ----------------------------------------------------------------

def check_q1(answer: object) -> Verdict:
    """The distance vectors of the flow (RAW) dependences ``S1 -> S1``: one per read behind the point."""
    given = A.vector_set(answer, length=3, what="sweep_flow_distances")

    def why(v: tuple[int, ...]) -> str:
        if tuple(-x for x in v) in sweep_distances("flow"):
            return "it is source minus sink; a distance is sink minus source"
        return "no read of the sweep is at that offset from the write x[i][j][k]"

    return compare_sets(given, sweep_distances("flow"), item="flow distance", why_extra=why,
                        missing_hint="one per read behind the point: x[i - 1][j][k], ...")


# -- Q2: the folded reads ----------------------------------------------------------------------------------

@cache
def reads_of_sweep() -> frozenset[str]:
    return frozenset(A.c_expression(a.text) for a in sl3().statement("S1").reads)


@cache
def folded_reads() -> frozenset[str]:
    return frozenset(A.c_expression(r.text) for r in dataflow(sl3()).constant_reads)


def check_q2(answer: object) -> Verdict:
    """The texts of the reads whose every source stores the constant 1.0 (compared as C expressions: spaces
    and parentheses do not matter)."""
    if isinstance(answer, str):
        raise A.AnswerError(f"folded_reads is the single text {A.describe(answer)}",
                            hint='write a set of texts, e.g. {"x[i - 1][j][k]"}')
    if isinstance(answer, dict) or not hasattr(answer, "__iter__"):
        raise A.AnswerError(f"folded_reads is {A.describe(answer)}, not a set of texts",
                            hint='write a set of texts, e.g. {"x[i - 1][j][k]"}')
    given, unreadable = set(), {}
    for t in answer:
        try:
            given.add(A.c_expression(t, "the read"))
        except A.AnswerError as err:  # one bad entry is one wrong element, the others still count
            key = t if isinstance(t, str) else repr(t)
            given.add(key)
            unreadable[key] = err.message

    def why(read: str) -> str:
        if read in unreadable:
            return unreadable[read]
        if read in reads_of_sweep():
            return "it still reads values computed by the sweep (one of its sources is S1, not the initialisation)"
        return "the sweep has no such read"

    return compare_sets(frozenset(given), folded_reads(), item="folded read", why_extra=why,
                        missing_hint="a read folds when every source of its value is the initialisation x = 1.0")


# -- Q3 and Q4: contraction moduli -------------------------------------------------------------------------

@cache
def point_modulus() -> int:
    """The contraction modulus of ``x`` after folding, dead-write removal and interleaving."""
    folded, _ = fold_live_ins(sl3())
    dead, _ = remove_dead_writes(folded, statements=list(constant_writers(folded)))
    inter, _ = interleave(dead, None)
    return contract(dead, inter, "x")[2].modulus


@cache
def tile_wavefront_modulus() -> int:
    """The contraction modulus of ``x`` under the 4 x 4 tile-level wavefront of the folded program."""
    tw = parse_schedule(sl3(), TILE_WAVEFRONT, steps=recipe_steps())
    return contract(tw.scop, tw, "x", max_modulus=16)[2].modulus


def _planes(planes: object) -> Verdict:
    m = A.integer(planes, "planes")
    if m == point_modulus():
        return right()
    return wrong(f"{m} plane(s) is not what the proof found: "
                 + ("fewer planes than the proof needs would lose values still to be read" if m < point_modulus()
                    else "the proof finds a smaller safe modulus") + " (read the first line of the contraction report)")


def _one_plane_reason(answer: object) -> Verdict:
    reason = A.choice(answer, ("a", "b", "c"), "one_plane_reason")
    why_not = {"b": "the initialisation is read by the sweep itself, and its reads were folded or kept",
               "c": "the printed element is copied out before it could be lost"}
    if reason == ONE_PLANE_REASON:
        return right()
    return wrong(f"({reason}) is not the reason: {why_not.get(reason, '')}; read the refusal: which instance "
                 "overwrites which element before which read?")


def check_q3(planes: object, one_plane_reason: object) -> Verdict:
    """The modulus ``m`` of ``xbuf[i % m][j][k]`` and why one plane is refused; both parts are reported."""
    return combine([("planes", part(_planes, planes)),
                    ("one_plane_reason", part(_one_plane_reason, one_plane_reason))])


def check_q4(answer: object) -> Verdict:
    """The contraction modulus under the 4 x 4 tile-level wavefront."""
    m = A.integer(answer, "tile_wavefront_planes")
    want = tile_wavefront_modulus()
    if m == want:
        return right()
    if m <= point_modulus():
        return wrong(f"{m} plane(s) is not enough: the tile-level wavefront keeps planes live longer than the "
                     f"point schedule, which already needs {point_modulus()}")
    return wrong(f"{m} is not what the proof found: the report lists each refuted modulus and the first safe one")


LAB = Lab(
    name="lab3",
    title="sl3, storage and speed",
    notebook="lab3_sl3_storage.ipynb",
    questions=(
        Question("q1", 2, ("sweep_flow_distances",), check_q1, title="flow distances of the sweep",
                 example="{(1, 0, 0)}"),
        Question("q2", 2, ("folded_reads",), check_q2, title="the folded reads",
                 example='{"x[i - 1][j][k]"}'),
        Question("q3", 2, ("planes", "one_plane_reason"), check_q3, title="two planes, and why not one",
                 example='2 and "a"'),
        Question("q4", 2, ("tile_wavefront_planes",), check_q4, title="planes under the tile-level wavefront",
                 example="5"),
    ),
)
