"""Lab 4: the wavefront (``solutions/lab4_wavefront.ipynb``).

The wavefront hyperplane ``theta(x) = a . x`` solves the integer program ``a . d >= 1`` for every distance
``d``, ``a >= 0``, minimising ``sum(a)`` (then lexicographically): all points of one wave ``a . x = t`` are
independent. The expected answers come from the engine (``find_wavefront``, isl counting, the generated
code's loop structure), computed from the lab's own texts of the nests.
"""

from __future__ import annotations

from functools import cache

import islpy as isl

from polylab.analysis import compute_dependences
from polylab.grading import answers as A
from polylab.grading.checks import compare_calls, part
from polylab.grading.kernels import scop, sl3
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.model.islutil import point_coordinates
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.schedule import find_wavefront, original

#: question 2: a nest whose wavefront needs 2i + 2j + k
NEEDS_221 = """double x[N][N][N];
for (i = 1; i < N - 1; i++)
  for (j = 1; j < N - 1; j++)
    for (k = 1; k < N - 1; k++)
      x[i][j][k] = x[i - 1][j][k + 1] + x[i][j - 1][k + 1] + x[i][j][k - 1];
"""

#: question 3: the size at which the waves of sl3's sweep are counted
WAVES_N = 10
#: question 6: why the point wavefront is slower (the right choice)
SLOWER_REASON = "b"


def _dot(a: tuple[int, ...], d: tuple[int, ...]) -> int:
    return sum(x * y for x, y in zip(a, d))


@cache
def sweep_distances(which: str) -> tuple[tuple[int, ...], ...]:
    s = sl3() if which == "sl3" else scop(NEEDS_221)
    deps = compute_dependences(s)
    if which == "sl3":
        deps = deps.between("S1", "S1")
    return tuple(sorted({d.distance for d in deps if d.distance is not None}))


@cache
def best_hyperplane(which: str) -> tuple[int, ...]:
    """The engine's wavefront hyperplane (over the loop dimensions of sl3's sweep, or of ``NEEDS_221``)."""
    return tuple(find_wavefront(original(sl3() if which == "sl3" else scop(NEEDS_221))).hyperplane)


def _hyperplane(which: str, answer: object, what: str) -> Verdict:
    a = A.vector(answer, length=3, what=what)
    if any(x < 0 for x in a):
        return wrong(f"{a} has a negative coefficient; the program asks for a >= 0")
    bad = [d for d in sweep_distances(which) if _dot(a, d) < 1]
    if bad:
        return wrong(*[f"a = {a} gives a . {d} = {_dot(a, d)} < 1: the dependence with distance {d} would not go "
                       "forward in time" for d in bad])
    best = best_hyperplane(which)
    if a == best:
        return right()
    if sum(a) == sum(best):
        return partial(1, 2, f"a = {a} is legal and as small as the best, but not the lexicographically smallest "
                              "among those of the same sum")
    return partial(1, 2, f"a = {a} is legal but not the smallest: a0 + a1 + a2 = {sum(a)}; minimise the sum "
                         "subject to a . d >= 1 for every distance d")


def check_q1(answer: object) -> Verdict:
    """The smallest wavefront hyperplane of sl3's sweep (a legal larger one earns half)."""
    return _hyperplane("sl3", answer, "sl3_hyperplane")


def check_q2(answer: object) -> Verdict:
    """The smallest wavefront hyperplane of ``NEEDS_221`` (a legal larger one earns half)."""
    return _hyperplane("221", answer, "needs_221_hyperplane")


# -- Q3: counting waves ------------------------------------------------------------------------------------

def _fixed(n: int) -> isl.Set:
    return sl3().statement("S1").domain.intersect_params(isl.Set(f"[n] -> {{ : n = {int(n)} }}"))


def _times(n: int) -> isl.Set:
    """The wave numbers ``{ [i + j + k] }`` of the sweep's instances at ``n``."""
    return isl.Map("[n] -> { S1[i, j, k] -> [i + j + k] }").intersect_domain(_fixed(n)).range()


def wave_sizes(n: int) -> dict[int, int]:
    """``t -> |{ S1[i, j, k] : i + j + k = t }|`` at ``n``, counted by isl."""
    dom = _fixed(n)
    times = _times(n)
    out: dict[int, int] = {}
    times.foreach_point(lambda p: out.setdefault(point_coordinates(p)[0], 0))
    for t in out:
        wave = dom.intersect(isl.Set(f"[n] -> {{ S1[i, j, k] : i + j + k = {t} }}"))
        out[t] = int(wave.count_val().to_python())
    return out


def sweep_waves_reference(n: int) -> int:
    """The number of waves ``t = i + j + k`` of sl3's sweep at ``n`` (0 when the sweep is empty)."""
    return int(_times(n).count_val().to_python())


def _count_waves(answer: object) -> Verdict:
    got = A.integer(answer, "waves_n10")
    want = sweep_waves_reference(WAVES_N)
    if got == want:
        return right()
    return wrong(f"{got} waves is not right: i, j, k each run over 1..{WAVES_N - 2}; t = i + j + k runs from "
                 "its smallest to its largest value" + (" (count both ends)" if abs(got - want) == 1 else ""))


def _largest(answer: object) -> Verdict:
    got = A.integer(answer, "largest_wave_n10")
    sizes = wave_sizes(WAVES_N)
    want = max(sizes.values())
    if got == want:
        return right()
    return wrong(f"{got} is not the size of the largest wave: count the points of the cube with i + j + k = t "
                 "for the t in the middle")


def check_q3(waves_n10: object, largest_wave_n10: object) -> Verdict:
    """The number of waves of sl3's sweep at n = 10 and the number of points of the largest one."""
    return combine([("waves_n10", part(_count_waves, waves_n10)),
                    ("largest_wave_n10", part(_largest, largest_wave_n10))])


# -- Q4: the waves as a function of n ----------------------------------------------------------------------

def check_q4(calls: Calls) -> Verdict:
    """``sweep_waves(n)``: the number of waves (one barrier each) of sl3's sweep for any n."""
    return compare_calls(calls, sweep_waves_reference,
                         equal=lambda got, want: not isinstance(got, bool) and isinstance(got, int) and got == want)


# -- Q5: the stride of the innermost loop -------------------------------------------------------------------

@cache
def innermost_stride() -> int:
    """Elements between ``x[t - j - k][j][k]`` and ``x[t - j - k - 1][j][k + 1]`` (consecutive iterations
    of the generated innermost loop ``k``): ``-e1 * e2 + 1`` for the extents ``(e0, e1, e2)`` of ``x``."""
    extents = [int(e) for e in sl3().arrays[0].extents]
    return abs(-extents[1] * extents[2] + 1)


def check_q5(answer: object) -> Verdict:
    """How far apart in memory (elements, absolute value) two consecutive iterations of the wavefront's
    innermost loop write."""
    got = A.integer(answer, "wave_stride")
    want = innermost_stride()
    if abs(got) == want:
        return right()
    e = [int(x) for x in sl3().arrays[0].extents]
    if abs(got) in (1, e[2] - 1, e[2] + 1, e[1] * e[2]):
        return wrong(f"{got} is not it: from one iteration to the next k grows by 1 and i = t - j - k shrinks by 1; "
                     f"a step of i moves {e[1]} x {e[2]} elements, a step of k one")
    return wrong(f"{got} is not the distance: write the address of x[i][j][k] as (i * {e[1]} + j) * {e[2]} + k")


# -- Q6: why the point wavefront is slow --------------------------------------------------------------------

def check_q6(answer: object) -> Verdict:
    """The reason the point wavefront loses to the original on this machine."""
    reason = A.choice(answer, ("a", "b", "c"), "slower_reason")
    why_not = {"a": "the verification runs once, before the timing, and is not timed",
               "c": "both programs are compiled with the same gcc -O3 flags, so the compiler is the same"}
    if reason == SLOWER_REASON:
        return right()
    return wrong(f"({reason}) is not the reason: {why_not[reason]}; think of the stride you computed in Q5 and "
                 "of the number of waves")


LAB = Lab(
    name="lab4",
    title="The wavefront",
    notebook="lab4_wavefront.ipynb",
    questions=(
        Question("q1", 2, ("sl3_hyperplane",), check_q1, title="the wavefront of sl3", example="(2, 1, 1)"),
        Question("q2", 2, ("needs_221_hyperplane",), check_q2, title="a nest that needs a larger hyperplane",
                 example="(1, 1, 1)"),
        Question("q3", 2, ("waves_n10", "largest_wave_n10"), check_q3, title="waves of sl3 at n = 10",
                 example="20 and 50"),
        Question("q4", 2, ("sweep_waves",), check_q4, title="the number of waves as a function of n",
                 example="def sweep_waves(n): ...",
                 cases=(Case((10,), "n = 10"), Case((32,), "n = 32"), Case((5,), "n = 5"))),
        Question("q5", 2, ("wave_stride",), check_q5, title="the stride of the innermost loop", example="400"),
        Question("q6", 1, ("slower_reason",), check_q6, title="why the point wavefront is slow", example='"a"'),
    ),
)
