"""Lab 6: storage (``solutions/lab6_storage.ipynb``).

On ``sl3.sy``: reads whose every source is the constant initialisation fold to that constant (the proof is
a Presburger set: the read instances whose source is the initialisation); the initialisation writes nobody
reads any more are dead; the sweep's array contracts to ``xbuf[i % m][j][k]`` with the smallest ``m`` isl
proves safe, and that modulus depends on the schedule (storage and schedule are chosen together). The
expected answers come from the shipped ``sl3.sy`` through the storage layer, never from the notebook.
"""

from __future__ import annotations

from functools import cache

import islpy as isl

from polylab.analysis import compute_dependences, dataflow
from polylab.grading import answers as A
from polylab.grading.checks import compare_isl, compare_sets, part
from polylab.grading.kernels import sl3
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
#: question 2: the read whose live-in instances are asked for
DIAGONAL_READ = "x[i - 1][j - 1][k - 1]"
#: questions 5 and 6: the sizes
DEAD_N, FOOTPRINT_N = 10, 100
#: bytes of the C types of the course's arrays
C_BYTES = {"float": 4, "double": 8, "int": 4}


@cache
def reads_of_sweep() -> frozenset[str]:
    return frozenset(A.c_expression(a.text) for a in sl3().statement("S1").reads)


# -- Q1: the folded reads ----------------------------------------------------------------------------------

@cache
def folded_reads() -> frozenset[str]:
    return frozenset(A.c_expression(r.text) for r in dataflow(sl3()).constant_reads)


def check_q1(answer: object) -> Verdict:
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


# -- Q2: the Presburger set of a read's live-in instances --------------------------------------------------

@cache
def diagonal_live_in() -> isl.Set:
    """The instances of ``S1`` whose read ``x[i - 1][j - 1][k - 1]`` reads the value the initialisation
    ``S0`` wrote: the range of the value-based flow ``S0 -> S1`` of that read."""
    want = A.c_expression(DIAGONAL_READ)
    out = None
    for d in compute_dependences(sl3(), value_based=True):
        if d.kind == "flow" and d.source == "S0" and A.c_expression(d.sink_ref.text) == want:
            r = d.relation.range()
            out = r if out is None else out.union(r)
    return out.coalesce()


def check_q2(answer: object) -> Verdict:
    """The set ``[n] -> { S1[i, j, k] : ... }`` of the instances whose diagonal read sees the initial 1.0."""
    given = A.isl_set(answer, "diagonal_live_in")
    want = diagonal_live_in()
    if given.get_tuple_name() is None and given.dim(isl.dim_type.set) == 3:
        given = given.set_tuple_name("S1")  # an unnamed tuple is fair: the question is about S1
    if not given.get_space().is_equal(want.get_space()):
        return wrong(f"diagonal_live_in lives in {given.get_space()}, not in {want.get_space()} "
                     "(the sweep's instances S1[i, j, k] and the parameter n)")
    verdict = compare_isl(given, want, what="diagonal_live_in", element="instance")
    if verdict.correct:
        return verdict
    extra = ("; an instance reads the initial value exactly when i - 1, j - 1 or k - 1 is 0 (the sweep "
             "has not written that element, and never will before the read)")
    return wrong(*[ln + extra if k == 0 else ln for k, ln in enumerate(verdict.feedback)])


# -- Q3 and Q4: contraction moduli -------------------------------------------------------------------------

@cache
def point_modulus() -> int:
    """The contraction modulus of ``x`` after folding, dead-write removal and interleaving."""
    dead = dead_scop()
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


# -- Q5: dead writes -------------------------------------------------------------------------------------------

@cache
def dead_scop() -> Scop:
    folded, _ = fold_live_ins(sl3())
    return remove_dead_writes(folded, statements=list(constant_writers(folded)))[0]


@cache
def live_initialisations() -> int:
    """The number of ``S0`` instances kept by dead-write removal at n = 10."""
    dom = dead_scop().statement("S0").domain
    return int(dom.intersect_params(isl.Set(f"[n] -> {{ : n = {DEAD_N} }}")).count_val().to_python())


def check_q5(answer: object) -> Verdict:
    got = A.integer(answer, "live_init_n10")
    want = live_initialisations()
    if got == want:
        return right()
    if got == DEAD_N ** 3:
        return wrong(f"{got} is every instance of the initialisation: after folding, most of them are read by nobody")
    if got == DEAD_N ** 3 - (DEAD_N - 1) ** 3:
        return wrong(f"{got} counts the whole faces i = 0, j = 0 and k = 0; the sweep reads only part of each "
                     "face (the reads behind the point, from 1 <= i, j, k <= n - 2); look at the kept domain")
    return wrong(f"{got} is not the number of initialisations still read: count the points of S0's kept domain "
                 f"at n = {DEAD_N}")


# -- Q6: the footprint ------------------------------------------------------------------------------------------

def _bytes(array, n: int) -> int:
    size = C_BYTES[array.ctype]
    for e in array.extents:
        size *= int(isl.PwAff(f"[n] -> {{ [({e})] }}").intersect_params(
            isl.Set(f"[n] -> {{ : n = {n} }}")).max_val().to_python())
    return size


@cache
def footprints() -> tuple[int, int]:
    """Bytes of ``x`` (as declared) and of the contracted ``xbuf`` at n = 100."""
    folded_dead = dead_scop()
    inter, _ = interleave(folded_dead, None)
    contracted = contract(folded_dead, inter, "x")[0]
    arrays = {a.name: a for a in contracted.arrays}
    return _bytes(arrays["x"], FOOTPRINT_N), _bytes(arrays["xbuf"], FOOTPRINT_N)


def check_q6(answer: object) -> Verdict:
    """``(bytes of x, bytes of xbuf)`` at n = 100."""
    got = A.vector(answer, 2, "footprint_n100")
    want = footprints()
    lines = []
    if got[0] != want[0]:
        lines.append(f"x: {got[0]} bytes is not right; x is declared float x[400][400][400] whatever n is "
                     "(a float is 4 bytes)")
    if got[1] != want[1]:
        lines.append(f"xbuf: {got[1]} bytes is not right; read its declaration in the contracted program "
                     "(its extents at n = 100; a float is 4 bytes)")
    return right() if not lines else wrong(*lines)


LAB = Lab(
    name="lab6",
    title="Storage: folding, dead writes, contraction",
    notebook="lab6_storage.ipynb",
    questions=(
        Question("q1", 2, ("folded_reads",), check_q1, title="the folded reads",
                 example='{"x[i - 1][j][k]"}'),
        Question("q2", 2, ("diagonal_live_in",), check_q2, title="the live-in instances of the diagonal read",
                 example='"[n] -> { S1[i, j, k] : i = 1 }"'),
        Question("q3", 2, ("planes", "one_plane_reason"), check_q3, title="two planes, and why not one",
                 example='2 and "a"'),
        Question("q4", 2, ("tile_wavefront_planes",), check_q4, title="planes under the tile-level wavefront",
                 example="5"),
        Question("q5", 2, ("live_init_n10",), check_q5, title="initialisations still read", example="100"),
        Question("q6", 1, ("footprint_n100",), check_q6, title="footprint before and after",
                 example="(1000, 10)"),
    ),
)
