"""Lab 4: the wavefront, Farkas and a Pluto-style cost (``solutions/lab4_wavefront.ipynb``).

The wavefront hyperplane ``theta(x) = a . x`` solves the integer program ``a . d >= 1`` for every distance
``d``, ``a >= 0``, minimising ``sum(a)`` (then lexicographically): all points of one wave ``a . x = t`` are
independent. Questions 1 and 2 ask for the distances and the hyperplane together (derivations): the
distances are judged by counts, and a broken constraint is named only for a distance the student listed,
so the check cannot be used to discover the distances one reply at a time.

For dependences that are not one distance, the legality of an affine schedule is "``theta_T(y) -
theta_S(x) >= 0`` for every pair ``x -> y`` of a dependence polyhedron", infinitely many constraints; the
affine form of Farkas' lemma turns each into finitely many linear constraints on the schedule's
coefficients. The derivation (question 3) is those constraints for a two-statement program, written by the
student as an isl set over ``(s, t, c)`` (``theta_S0(i) = s i``, ``theta_S1(i) = t i + c``) and compared with
the exact set, which isl computes here (``Set.coefficients``: the Farkas dual of each dependence polyhedron).
Question 4 is the Pluto-style cost: the smallest bound ``u N + w`` on the dependence distance over the legal
schedules with ``s >= 1`` (isl's lexicographic minimum); a wrong bound is not told its direction. The
construction (question 5) is the fused and shifted loop written by the student in C: fused when all but a
number of instances independent of ``N`` run in one loop (counted on the code's own polyhedral model at two
sizes), then compiled and run against the original. Question 8 reads a recorded measurement with its
interval. Every other expected answer comes from the engine (``find_wavefront``, isl counting, the generated
code's loop structure), computed from the lab's own texts of the nests.
"""

from __future__ import annotations

from functools import cache

import islpy as isl

from polylab.analysis import compute_dependences
from polylab.errors import PolylabError
from polylab.frontend import parse
from polylab.grading import answers as A
from polylab.grading.checks import (VERDICTS, compare_calls, compare_isl, compare_sets, expect, expect_verdict,
                                    lex_positive, memo_by_text, part)
from polylab.grading.kernels import scop, sl3
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.grading.student_code import StudentCode, candidate_program, judge_student_code, read_code
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.model import Statement
from polylab.model.islutil import parameter_values, point_coordinates
from polylab.schedule import find_wavefront, original

#: question 2: a nest whose wavefront needs a larger hyperplane
STEEP = """double x[N][N][N];
for (i = 1; i < N - 1; i++)
  for (j = 1; j < N - 1; j++)
    for (k = 1; k < N - 1; k++)
      x[i][j][k] = x[i - 1][j][k + 1] + x[i][j - 1][k + 1] + x[i][j][k - 1];
"""

#: questions 3-5: two statements, a two-point stencil (3 behind, 4 ahead: the shift that fusion needs and the
#: bound it leaves are not the first small numbers one would try) and its copy back
SMOOTH = """double a[N];
double b[N];
for (i = 3; i < N - 4; i++)
  b[i] = a[i - 3] + a[i + 4];
for (i = 3; i < N - 4; i++)
  a[i] = b[i];
"""
#: question 5: the size the fused schedule runs at
SMOOTH_N = 40

#: question 8: runs of sl3's sweep at n = 128 recorded on the course's development machine (2 cores, a load
#: of 7 to 10 from other work; 2026-12-05 01:52 UTC; polylab.experiment.measure, repeat=10); the lab shows the
#: same numbers (tests/test_labs.py checks that)
RECORDED = {
    "original (gcc -O3)": [0.063013, 0.060197, 0.058755, 0.061399, 0.060607, 0.068638, 0.060825, 0.056881,
                           0.060667, 0.063827],
    "point wavefront, 1 thread": [0.089583, 0.084224, 0.12275, 0.114257, 0.114845, 0.129179, 0.121135, 0.124875,
                                  0.120662, 0.103455],
    "point wavefront, 2 threads": [0.143327, 0.136538, 0.136649, 0.122205, 0.130243, 0.100375, 0.219029,
                                   0.096202, 0.277454, 0.393074],
}


def _dot(a: tuple[int, ...], d: tuple[int, ...]) -> int:
    return sum(x * y for x, y in zip(a, d))


@cache
def sweep_distances(which: str) -> tuple[tuple[int, ...], ...]:
    s = sl3() if which == "sl3" else scop(STEEP)
    deps = compute_dependences(s)
    if which == "sl3":
        deps = deps.between("S1", "S1")
    return tuple(sorted({d.distance for d in deps if d.distance is not None}))


@cache
def best_hyperplane(which: str) -> tuple[int, ...]:
    """The engine's wavefront hyperplane (over the loop dimensions of sl3's sweep, or of ``STEEP``)."""
    return tuple(find_wavefront(original(sl3() if which == "sl3" else scop(STEEP))).hyperplane)



def _distances(which: str, answer: object, what: str) -> Verdict:
    """The student's distance set against the exact one. Nothing is named that the student could not
    derive alone: an entry whose first non-zero entry is not positive is named with that reason (a
    dependence goes forward); other extra entries and the missing ones are counted, never named, so that
    the check is no membership oracle over a listed superset."""
    given = A.vector_set(answer, length=3, what=what)

    def why(d: tuple[int, ...]) -> str:
        return ("its first non-zero entry is not positive: a dependence goes from an earlier instance to a later "
                "one (sink minus source)" if not lex_positive(d) else
                "no read meets the write at that distance: equate the write's subscripts with each read's")

    return compare_sets(given, frozenset(sweep_distances(which)), item="distance vector", why_extra=why,
                        name_extra=lambda d: not lex_positive(d),
                        missing_hint="one per read that a write reaches, flow and anti alike")


def _hyperplane(which: str, answer: object, what: str, distances: object) -> Verdict:
    """``a`` against the integer program over the exact distances. A broken constraint ``a . d < 1`` is named
    only for a ``d`` the student listed (their own arithmetic, which tells them nothing new); a hyperplane
    that meets every listed distance but breaks one the student left out says only that the list misses
    one, so the check cannot be used to discover the distances one try at a time."""
    a = A.vector(answer, length=3, what=what)
    if any(x < 0 for x in a):
        return wrong(f"{a} has a negative coefficient; the program asks for a >= 0")
    try:
        listed = A.vector_set(distances, length=3, what="the distances")
    except A.AnswerError:
        listed = frozenset()
    bad = [d for d in sweep_distances(which) if _dot(a, d) < 1]
    if bad:
        own = sorted(d for d in listed if lex_positive(d) and _dot(a, d) < 1)
        if own:
            d = own[0]
            return wrong(f"a = {a} gives a . {d} = {_dot(a, d)} < 1 for the distance {d} of your list: a "
                         "dependence at that distance would not go forward in time")
        return wrong(f"a = {a} gives a . d >= 1 for every distance of your list, but the nest has a "
                     "dependence it does not put forward in time: your list misses a distance")
    best = best_hyperplane(which)
    if a == best:
        return right()
    if sum(a) == sum(best):
        return partial(1, 2, f"a = {a} is legal and as small as the best, but not the lexicographically smallest "
                              "among those of the same sum")
    return partial(1, 2, f"a = {a} is legal but not the smallest: a0 + a1 + a2 = {sum(a)}; minimise the sum "
                         "subject to a . d >= 1 for every distance d")


def _program(which: str, distances: object, hyperplane: object) -> Verdict:
    """The distances (1/3) and the hyperplane that solves the program over them (2/3)."""
    return combine([(f"{which}_distances", part(_distances, which, distances, f"{which}_distances")),
                    (f"{which}_hyperplane", part(_hyperplane, which, hyperplane, f"{which}_hyperplane",
                                                 distances))], weights=[1, 2])


def check_q1(sl3_distances: object, sl3_hyperplane: object) -> Verdict:
    """The distance vectors of sl3's sweep (flow and anti) and its smallest wavefront hyperplane (a legal
    larger one earns half of that part)."""
    return _program("sl3", sl3_distances, sl3_hyperplane)


def check_q2(steep_distances: object, steep_hyperplane: object) -> Verdict:
    """The distance vectors of ``STEEP`` and its smallest wavefront hyperplane."""
    return _program("steep", steep_distances, steep_hyperplane)


# -- Q3: the Farkas constraints of the two-statement program (derivation) ---------------------------------------

def _farkas(relation: isl.Map, coefficients: str) -> isl.Set:
    """``{ [unknowns] : f(N, x, y) >= 0 for every x -> y of relation, every N }`` where the coefficients of
    ``f`` over ``(1, N, x, y)`` are the affine expressions ``coefficients`` (isl text ``[c0] -> [cN, cx, cy]``
    of the unknowns): the affine Farkas lemma, by isl's ``coefficients`` (the dual of the polyhedron)."""
    dual = isl.Set(str(_pairs_with_n(relation).coefficients()).replace("rat: ", "").replace("coefficients", ""))
    unknowns = coefficients.split("->", 1)[0].strip()
    subst = isl.Map(f"{{ {unknowns} -> {coefficients.split('->', 1)[1].strip()} }}")
    return dual.apply(subst.reverse())


def _pairs_with_n(relation: isl.Map) -> isl.Set:
    """``{ [N, x, y] : x -> y in relation }``: the parameter ``N`` as a variable, so that an affine function
    non-negative on this set is non-negative for every ``N`` (what Farkas' lemma is applied to)."""
    return relation.wrap().flatten().move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, 1)


@cache
def smooth_dependences() -> tuple:
    return tuple(compute_dependences(scop(SMOOTH)))


@cache
def farkas_set() -> isl.Set:
    """The legal ``(s, t, c)``: ``t y - s x + c >= 0`` over every dependence ``S0[x] -> S1[y]`` for every N."""
    out = isl.Set("{ [s, t, c] }")
    for d in smooth_dependences():
        out = out.intersect(_farkas(d.relation, "[s, t, c] -> [[c] -> [0, -s, t]]"))
    return out.coalesce()


def _violated_pair(stc: tuple[int, int, int]) -> str:
    """A dependence pair that the schedule ``(s, t, c)`` runs backwards, as text."""
    s, t, c = stc
    for d in smooth_dependences():
        bad = d.relation.intersect(isl.Map(f"[N] -> {{ S0[x] -> S1[y] : {t}y - {s}x + {c} < 0 }}"))
        if not bad.is_empty():
            p = bad.wrap().sample_point()
            x, y = point_coordinates(p)
            return (f"the {d.kind} dependence S0[{x}] -> S1[{y}] (at N = {parameter_values(p)['N']}) gets "
                    f"theta_S1 - theta_S0 = {t * y - s * x + c} < 0")
    return ""


def check_q3(farkas_constraints: object) -> Verdict:
    """The set of integer ``(s, t, c)`` for which ``theta_S0(i) = s i``, ``theta_S1(i) = t i + c`` keep every
    dependence (``>= 0``, ties broken by the statement order) for every ``N``, in isl text."""
    given = A.isl_set(farkas_constraints, "farkas_constraints")
    want = farkas_set()
    if given.get_tuple_name() is not None:
        given = given.reset_tuple_id()
    return compare_isl(given, want, what="farkas_constraints", space_hint="one tuple [s, t, c], no parameter",
                       explain_extra=lambda p: f"(s, t, c) = {tuple(point_coordinates(p))} satisfies your constraints "
                                               f"but is illegal: {_violated_pair(tuple(point_coordinates(p)))}",
                       explain_missing=lambda p: f"(s, t, c) = {tuple(point_coordinates(p))} keeps every dependence "
                                                 "for every N, but your constraints exclude it")


# -- Q4: the Pluto-style cost ---------------------------------------------------------------------------------

@cache
def pluto_optimum() -> tuple[tuple[int, int], tuple[int, int, int]]:
    """The lexicographic minimum of ``(u, w, s, t, c)`` over legal schedules with ``s >= 1`` whose dependence
    distance ``theta_S1(y) - theta_S0(x)`` is at most ``u N + w`` on every dependence (isl, exact)."""
    space = isl.Set("{ [u, w, s, t, c] : s >= 1 and u >= 0 and w >= 0 }")
    for d in smooth_dependences():
        space = space.intersect(_farkas(d.relation, "[u, w, s, t, c] -> [[c] -> [0, -s, t]]"))       # legal
        space = space.intersect(_farkas(d.relation, "[u, w, s, t, c] -> [[w - c] -> [u, s, -t]]"))   # bounded
    u, w, s, t, c = point_coordinates(space.lexmin().sample_point())
    return (u, w), (s, t, c)


def _bound_of(stc: tuple[int, int, int]) -> tuple[int, int] | None:
    """The smallest ``(u, w)`` bounding the distances of the schedule ``stc`` (None when it is illegal)."""
    s, t, c = stc
    if farkas_set().intersect(isl.Set(f"{{ [{s}, {t}, {c}] }}")).is_empty():
        return None
    bounds = isl.Set("{ [u, w] : u >= 0 and w >= 0 }")
    for d in smooth_dependences():
        bounds = bounds.intersect(_farkas(d.relation, f"[u, w] -> [[w - ({c})] -> [u, {s}, {-t}]]"))
    return tuple(point_coordinates(bounds.lexmin().sample_point()))  # type: ignore[return-value]


def check_q4(pluto_bound: object, pluto_schedule: object) -> Verdict:
    """The smallest bound ``(u, w)`` (1/2) and a legal schedule ``(s, t, c)`` with ``s >= 1`` that reaches it
    (1/2)."""
    uw = A.vector(pluto_bound, 2, "pluto_bound", entry="coefficient (u, then w)")
    stc = A.vector(pluto_schedule, 3, "pluto_schedule", entry="coefficient (s, t, c)")
    best_uw, _ = pluto_optimum()
    # no direction ("smaller", "too small"): a monotone reply would turn the bound into a search over small
    # integers; what is wrong is said as the question's own definition, which the student works from
    bound = right() if uw == best_uw else wrong(
        f"({uw[0]}, {uw[1]}) is not the smallest bound u N + w that a legal schedule with s >= 1 reaches: write "
        "the distance theta_S1(y) - theta_S0(x) of each dependence as a function of the pair and N, and bound it "
        "over the legal schedules")
    reached = _bound_of(stc) if stc[0] >= 1 else None
    if stc[0] < 1:
        sched = wrong(f"s = {stc[0]}: the cost is minimised over the schedules with s >= 1 (s = 0 runs all of S0 "
                      "at once: no loop)")
    elif reached is None:
        sched = wrong(f"(s, t, c) = {stc} is illegal: {_violated_pair(stc)}")
    elif reached != best_uw:   # its own bound is not stated: it would give the bound part by trial
        sched = wrong(f"(s, t, c) = {stc} is legal, but another legal schedule with s >= 1 keeps every "
                      "dependence distance within a smaller bound")
    else:
        sched = right()
    return combine([("pluto_bound", bound), ("pluto_schedule", sched)])


# -- Q5: the fused and shifted loop, written in C (construction) ---------------------------------------------

#: question 5: the sizes the fused code runs at (against the original), and the two sizes at which "fused" is
#: counted: every instance but a number independent of N runs in one loop
SMOOTH_RUNS = (SMOOTH_N, 13)
FUSION_SIZES = (SMOOTH_N, 2 * SMOOTH_N)


def _writes(st: Statement) -> str:
    return next(a.array for a in st.accesses if a.kind == "write")


def _instances(st: Statement, n: int) -> int:
    return int(st.domain.intersect_params(isl.Set(f"[N] -> {{ : N = {n} }}")).count_val().to_python())


def _loop_of(placed: isl.Map) -> tuple[int, ...] | None:
    """The loop a statement of one iterator sits in, from the original schedule ``placed`` (instance -> time
    on its domain): the positions before the first time dimension that varies (equal for two statements
    exactly when they sit in the same loop), or None for a statement that runs once."""
    times = placed.range()
    prefix = []
    for k in range(times.dim(isl.dim_type.set)):
        dim = times.project_out(isl.dim_type.set, k + 1, times.dim(isl.dim_type.set) - k - 1).project_out(
            isl.dim_type.set, 0, k)
        if not dim.is_singleton():
            return (*prefix, -1 - k)
        prefix.append(point_coordinates(dim.sample_point())[0])
    return None


def _fused(code: StudentCode) -> Verdict:
    """Whether ``code`` fuses the two loops: one top-level loop, whose statements sit directly in it (one
    iterator each), writes both ``b`` and ``a``, and the instances outside it (the peeled prologue and
    epilogue) are as many at ``N = 40`` as at ``N = 80`` (a number independent of N)."""
    try:
        mine = parse(code.text).scop
    except PolylabError as err:
        raise A.AnswerError(f"polylab cannot read fused_code as a loop nest: {err.message}",
                            hint=err.hint or "write C statements: assignments to b and a inside for loops") from None
    written = {_writes(st) for st in mine.statements}
    if written != {"a", "b"}:
        return wrong("fused_code must compute b and then a as smooth does: its statements write "
                     f"{', '.join(sorted(written)) or 'nothing'}")
    loops: dict[tuple[int, ...], list[Statement]] = {}
    source_order = original(mine)
    for st in mine.statements:
        key = _loop_of(source_order.maps[st.name].intersect_domain(st.domain)) if st.depth == 1 else None
        if key is not None:
            loops.setdefault(key, []).append(st)
    for inside in loops.values():
        if {_writes(st) for st in inside} != {"a", "b"}:
            continue
        outside = [[sum(_instances(st, n) for st in mine.statements if st not in inside and _writes(st) == arr)
                    for n in FUSION_SIZES] for arr in ("b", "a")]
        if all(x[0] == x[1] for x in outside):
            return right()
        return wrong("your loop that writes both b and a leaves a number of iterations that grows with N to "
                     "another loop: fused, only a few iterations at the ends (a prologue, an epilogue) run "
                     "outside it")
    return wrong("no single loop of fused_code writes both b and a with one statement each directly inside "
                 "it: that is the two loops of smooth, not one")


@memo_by_text
def check_q5(fused_code: object) -> Verdict:
    """``smooth``'s two loops fused into one, written in C, all or nothing: fused (:func:`_fused`; the original
    two loops, which compute the right values, earn nothing) and run against the original at N = 40 and
    N = 13, every element of ``a`` and ``b`` compared (a fused loop without the shift, whose outputs differ,
    earns nothing either: that is the mistake the question teaches)."""
    code = read_code(fused_code, "fused_code")
    fused = _fused(code)
    if not fused.correct:   # the given two loops run right: the run counts once the code is fused
        return combine([("the fusion", fused), ("the run", wrong("not run: the code must be fused first"))],
                       weights=[1, 2])
    for n in SMOOTH_RUNS:   # a fused loop that computes something else earns nothing: that is the mistake taught
        run = judge_student_code(scop(SMOOTH), candidate_program(scop(SMOOTH), code), params={"N": n},
                                 what="fused_code")
        if not run.correct:
            return wrong(*(f"the run: {line}" for line in run.feedback))
    return right()


# -- Q6: the waves as a function of n ----------------------------------------------------------------------

def _fixed(n: int) -> isl.Set:
    return sl3().statement("S1").domain.intersect_params(isl.Set(f"[n] -> {{ : n = {int(n)} }}"))


def _times(n: int) -> isl.Set:
    """The wave numbers ``{ [i + j + k] }`` of the sweep's instances at ``n``."""
    return isl.Map("[n] -> { S1[i, j, k] -> [i + j + k] }").intersect_domain(_fixed(n)).range()


def wave_sizes(n: int) -> dict[int, int]:
    """``t -> |{ S1[i, j, k] : i + j + k = t }|`` at ``n``, counted by isl."""
    dom = _fixed(n)
    out: dict[int, int] = {}
    _times(n).foreach_point(lambda p: out.setdefault(point_coordinates(p)[0], 0))
    for t in out:
        wave = dom.intersect(isl.Set(f"[n] -> {{ S1[i, j, k] : i + j + k = {t} }}"))
        out[t] = int(wave.count_val().to_python())
    return out


def sweep_waves_reference(n: int) -> int:
    """The number of waves ``t = i + j + k`` of sl3's sweep at ``n`` (0 when the sweep is empty)."""
    return int(_times(n).count_val().to_python())


def check_q6(calls: Calls) -> Verdict:
    """``sweep_waves(n)``: the number of waves (one barrier each) of sl3's sweep for any n."""
    return compare_calls(calls, sweep_waves_reference,
                         equal=lambda got, want: not isinstance(got, bool) and isinstance(got, int) and got == want)


# -- Q7: the stride of the innermost loop -------------------------------------------------------------------

@cache
def innermost_stride() -> int:
    """Elements between ``x[t - j - k][j][k]`` and ``x[t - j - k - 1][j][k + 1]`` (consecutive iterations
    of the generated innermost loop ``k``): ``-e1 * e2 + 1`` for the extents ``(e0, e1, e2)`` of ``x``."""
    extents = [int(e) for e in sl3().arrays[0].extents]
    return abs(-extents[1] * extents[2] + 1)


def check_q7(answer: object) -> Verdict:
    """How far apart in memory (elements, absolute value) two consecutive iterations of the wavefront's
    innermost loop write."""
    e = [int(x) for x in sl3().arrays[0].extents]
    single = "{given} is the step of a single iterator: from one iteration of the innermost loop to the next, more " \
             "than one iterator changes (work out which, and by how much, from the schedule)"
    return expect(abs(A.integer(answer, "wave_stride")), innermost_stride(),
                  (1, single),
                  (lambda g: g in (e[2] - 1, e[2] + 1), f"{{given}} moves j by one row ({e[2]} elements): but j is "
                                                         "fixed in the innermost loop"),
                  (e[1] * e[2], single),
                  otherwise=f"{{given}} is not the distance: write the address of x[i][j][k] as "
                            f"(i * {e[1]} + j) * {e[2]} + k")


# -- Q8: reading a measurement ---------------------------------------------------------------------------------

def check_q8(second_thread: object) -> Verdict:
    """Is the point wavefront with 2 threads faster than with 1, slower, or not measurably different, in the
    recorded runs (the 95 % interval of the speedup decides)?"""
    given = A.choice(second_thread, VERDICTS, "second_thread")
    return expect_verdict(given, RECORDED["point wavefront, 1 thread"], RECORDED["point wavefront, 2 threads"],
                          variant_name="2 threads", baseline_name="1 thread")


LAB = Lab(
    name="lab4",
    title="The wavefront, Farkas and a Pluto-style cost",
    notebook="lab4_wavefront.ipynb",
    questions=(
        Question("q1", 3, ("sl3_distances", "sl3_hyperplane"), check_q1, title="the wavefront of sl3",
                 kind="derivation", example="{(2, 0, 0)} and (1, 0, 0)"),
        Question("q2", 3, ("steep_distances", "steep_hyperplane"), check_q2,
                 title="a nest that needs a larger hyperplane", kind="derivation",
                 example="{(0, 2, 1)} and (1, 0, 2)"),
        Question("q3", 3, ("farkas_constraints",), check_q3, title="the Farkas constraints of two statements",
                 kind="derivation", example='"{ [s, t, c] : s >= 0 and t >= 0 }"'),
        Question("q4", 2, ("pluto_bound", "pluto_schedule"), check_q4, title="the Pluto-style cost",
                 example="(1, 0) and (1, 2, 0)"),
        Question("q5", 3, ("fused_code",), check_q5, title="the fused, shifted loop in C",
                 kind="construction", example='"for (i = 1; i < N - 1; i++) { ... }"'),
        Question("q6", 2, ("sweep_waves",), check_q6, title="the number of waves as a function of n",
                 example="def sweep_waves(n): ...",
                 cases=(Case((10,), "n = 10"), Case((32,), "n = 32"), Case((5,), "n = 5"))),
        Question("q7", 2, ("wave_stride",), check_q7, title="the stride of the innermost loop", example="400"),
        Question("q8", 1, ("second_thread",), check_q8, title="does the second thread help?", kind="choice",
                 example='"faster"'),
    ),
)
