"""Lab 3: schedules and space-time mapping (``solutions/lab3_schedules.ipynb``).

A schedule ``theta(x) = Theta x + theta`` is legal when ``Theta d`` is lexicographically positive for every
distance ``d`` (for uniform dependences; isl checks the exact relations). A space-time mapping splits the
rows of ``Theta`` into time (sequential) and space (processors): ``p = Pi x``.

The derivation (question 4) is *scanning*: the loop bounds of the sweep under the wavefront schedule
``(t, j) = (i + j, j)``, by Fourier-Motzkin elimination, checked for scanning equality with the image of the
domain (the outer bounds against its projection on ``t``, the inner bounds for every ``t``). The construction
(question 6) is a space-time mapping in isl text whose processor is ``p = j``: legal, ``p`` a space dimension,
and its OpenMP code compiled and run against the original at several thread counts. Every expected answer is
computed by the engine's legality check and isl, never written down.
"""

from __future__ import annotations

from functools import cache

import islpy as isl
import sympy

from polylab.analysis import compute_dependences
from polylab.grading import answers as A
from polylab.grading.checks import expect, legal_schedule, lex_positive, memo_by_text, part, verified_variant
from polylab.grading.kernels import SWEEP, scop
from polylab.grading.lab import Lab, Question
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.model.islutil import parameter_values, point_coordinates
from polylab.schedule import Schedule, check, parse_schedule
from polylab.toolchain import supports_openmp

#: question 1: the anti-diagonal schedule theta(i, j) = (i - j, i)
BAD = "{ S0[i, j] -> [i - j, i] }"

#: questions 2, 3 and 6: a nest with the distances (1, -1), (0, 1) and (1, 0)
SKEWED = """double a[N][N];
for (i = 1; i < N; i++)
  for (j = 1; j < N - 1; j++)
    a[i][j] = a[i - 1][j + 1] + a[i][j - 1] + a[i - 1][j];
"""

#: question 2: the candidate matrices Theta
CANDIDATES = {"A": ((1, 0), (0, 1)), "B": ((0, 1), (1, 0)), "C": ((1, 0), (1, 1)), "D": ((1, 1), (0, 1)),
              "E": ((1, 1), (1, 0))}

#: question 4: the wavefront of the sweep whose loops the student scans
WAVE = "{ S0[i, j] -> [i + j, j] }"

#: question 5: the wavefront of the sweep, processors of BLOCK consecutive j, at N = WAVE_N
WAVE_N, BLOCK, PROCESSOR, TIME = 12, 4, 1, 9

#: question 6: the size and the thread counts of the run
RUN_N, THREADS = 20, (1, 2, 3)


def _dot(a: tuple[int, ...], d: tuple[int, ...]) -> int:
    return sum(x * y for x, y in zip(a, d))


@cache
def distances(source: str) -> tuple[tuple[int, ...], ...]:
    return tuple(sorted({d.distance for d in compute_dependences(scop(source)) if d.distance is not None}))


def theta_schedule(source: str, rows: tuple[tuple[int, ...], ...]) -> Schedule:
    """The schedule ``theta(x) = Theta x`` of the single statement of ``source``."""
    st = scop(source).statements[0]
    exprs = [" + ".join(f"{c}{x}" for c, x in zip(row, st.iterators) if c) or "0" for row in rows]
    return parse_schedule(scop(source), f"{{ {st.name}[{', '.join(st.iterators)}] -> [{', '.join(exprs)}] }}")


# -- Q1: a pair of instances that theta = (i - j, i) runs in the wrong order ----------------------------------

def _instance(value: object, what: str) -> tuple[int, int]:
    v = A.vector(value, 2, what)
    return v[0], v[1]


def check_q1(bad_pair: object) -> Verdict:
    """A pair ``(source, sink)`` of instances of the sweep, the sink depending on the source, that
    ``theta(i, j) = (i - j, i)`` runs in the wrong order (``theta(sink) <=lex theta(source)``)."""
    if not isinstance(bad_pair, (tuple, list)) or len(bad_pair) != 2:
        raise A.AnswerError(f"bad_pair is {A.describe(bad_pair)}, not a pair of instances",
                            hint="write ((i, j), (i2, j2)): the source instance, then the sink")
    src, snk = _instance(bad_pair[0], "the source of bad_pair"), _instance(bad_pair[1], "the sink of bad_pair")
    outside = [x for x in (src, snk) if min(x) < 1]
    if outside:
        return wrong(f"{outside[0]} is no instance of the sweep: its loops run 1 <= i, j < N")
    d = (snk[0] - src[0], snk[1] - src[1])
    if d not in distances(SWEEP):
        return wrong(f"S0{list(snk)} does not depend on S0{list(src)}: their difference {d} is no distance of the "
                     "sweep (equate the write a[i][j] with each read)")
    t_src, t_snk = (src[0] - src[1], src[0]), (snk[0] - snk[1], snk[0])
    if t_snk > t_src:
        return wrong(f"theta keeps this pair in order: theta(S0{list(src)}) = {t_src} comes before "
                     f"theta(S0{list(snk)}) = {t_snk}")
    return right()


# -- Q2: which distance each Theta violates -------------------------------------------------------------------

def _image(rows: tuple[tuple[int, ...], ...], d: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(_dot(r, d) for r in rows)



@cache
def legal_candidates() -> frozenset[str]:
    return frozenset(k for k, rows in CANDIDATES.items() if check(theta_schedule(SKEWED, rows)).legal)


#: question 2's kinds of wrong entry: what each breaks, named without the candidate (five entries of a few
#: values each: naming the wrong ones would let a student find the answer by elimination in two tries)
CALLED_LEGAL = ("a candidate you call legal (None) reverses a dependence: for one of the distances d its "
                "Theta d is not lexicographically positive")
KEPT = ("a distance you name for a candidate is one its Theta keeps in order: that Theta d is lexicographically "
        "positive, so it is no violation")


def _violation_entry(name: str, value: object) -> tuple[bool, str | None]:
    """(right?, feedback) for one candidate of question 2: None claims legality, a vector a violated
    distance. A wrong entry's line names its kind of mistake, not the candidate (see ``CALLED_LEGAL``)."""
    rows = CANDIDATES[name]
    legal = name in legal_candidates()
    if value is None:
        return (True, None) if legal else (False, CALLED_LEGAL)
    d = A.vector(value, 2, f"the distance of {name}")
    if d not in distances(SKEWED):
        return False, f"{d} is no distance vector of this nest"
    return (False, KEPT) if lex_positive(_image(rows, d)) else (True, None)


def check_q2(violations: object) -> Verdict:
    """For each candidate ``Theta`` of question 2: ``None`` when its schedule is legal, else a distance it
    violates. Each right entry counts one, each wrong one takes two away (calling every candidate legal, or
    guessing, earns nothing)."""
    if not isinstance(violations, dict):
        raise A.AnswerError(f"violations is {A.describe(violations)}, not a dictionary",
                            hint='write {"A": None, "B": (1, -1), ...}: one entry per candidate')
    keys = {str(k).strip().upper(): v for k, v in violations.items()}
    missing = sorted(set(CANDIDATES) - set(keys))
    extra = sorted(set(keys) - set(CANDIDATES))
    good, lines = 0, [f"no entry for {', '.join(missing)}"] if missing else []
    lines += [f"{k} is not one of the candidates" for k in extra]
    for name in sorted(set(CANDIDATES) & set(keys)):
        ok, why = _violation_entry(name, keys[name])
        good += ok
        if why and why not in lines:
            lines.append(why)
    bad = len(CANDIDATES) - good
    return partial(good - 2 * bad, len(CANDIDATES), *lines) if lines or bad else right()


# -- Q3: a unimodular Theta with a parallel inner dimension ----------------------------------------------------

def check_q3(answer: object) -> Verdict:
    """A 2 x 2 unimodular ``Theta`` (``|det| = 1``) whose schedule of ``SKEWED`` is legal and whose second
    dimension carries no dependence (a space dimension): 2/3 for a legal schedule with a space dimension
    (legality alone earns nothing: the original order is legal), 1/3 for unimodularity on top. Every failing
    part is reported."""
    rows = A.matrix(answer, (2, 2), "my_theta")
    if any(x.denominator != 1 for r in rows for x in r):
        raise A.AnswerError("my_theta has fractions", hint="a schedule has integer coefficients")
    ints = tuple(tuple(int(x) for x in r) for r in rows)
    det = int(sympy.Matrix(ints).det())
    uni = right() if abs(det) == 1 else wrong(
        f"det(Theta) = {det}: Theta is not unimodular, so the schedule " +
        ("maps two instances to the same time" if det == 0 else f"leaves holes (only 1 in {abs(det)} integer "
                                                                 "times is used)"))
    sched = theta_schedule(SKEWED, ints)
    legal = legal_schedule(sched, what=f"Theta = {[list(r) for r in ints]}")
    if not legal.correct:
        return wrong(*legal.feedback, *uni.feedback, pictures=legal.pictures)
    if 1 not in sched.parallel_dims:   # legal and unimodular alone: the original order already is
        bad = [d for d in distances(SKEWED) if _image(ints, d)[0] < 1]
        return wrong("the second dimension is not parallel: it carries the dependence(s) with distance "
                     + ", ".join(map(str, bad)) + ", whose first row gives Theta d <= 0; the first row must put "
                     "every dependence strictly forward", *uni.feedback)
    return combine([("a legal schedule with a space dimension", right()), ("unimodular", uni)], weights=[2, 1])


# -- Q4: the loop bounds of the wavefront (scanning, derivation) --------------------------------------------------

@cache
def wave_image() -> isl.Set:
    """``{ [t, j] : t = i + j, (i, j) in D }``: the points the wavefront's loops must scan."""
    st = scop(SWEEP).statements[0]
    return isl.Map(f"[N] -> {WAVE}").intersect_domain(st.domain).range().coalesce()


def _bounds(value: object, what: str, names: tuple[str, ...]) -> tuple[str, str]:
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(isinstance(v, str) for v in value):
        raise A.AnswerError(f"{what} is {A.describe(value)}, not a pair of texts",
                            hint='write ("lower", "upper"), e.g. ("0", "N - 1"), both inclusive')
    for v in value:
        if not v.strip():
            raise A.AnswerError(f"a bound of {what} is empty", hint='write ("lower", "upper")')
        for bad in ("//", "%", "==", ";", "{", "}", ":"):
            if bad in v:
                raise A.AnswerError(f"the bound {v!r} of {what} contains {bad!r}",
                                    hint="use + - *, integers, " + ", ".join(names)
                                         + ", min(a, b), max(a, b) and floor(a/b)")
    return value[0].strip(), value[1].strip()


def _scanned(t_bounds: tuple[str, str], j_bounds: tuple[str, str]) -> isl.Set:
    text = (f"[N] -> {{ [t, j] : {t_bounds[0]} <= t <= {t_bounds[1]} and {j_bounds[0]} <= j <= {j_bounds[1]} }}")
    try:
        return isl.Set(text)
    except isl.Error:
        raise A.AnswerError(f"isl cannot read the bounds {t_bounds} and {j_bounds}",
                            hint="write each bound as an affine expression of N (and t for j), with min and max "
                                 "where several bounds apply") from None


def _point_text(p: isl.Point) -> str:
    at = ", ".join(f"{k} = {v}" for k, v in parameter_values(p).items())
    return f"(t, j) = {point_coordinates(p)} at {at}"


def check_q4(wave_t_bounds: object, wave_j_bounds: object) -> Verdict:
    """The bounds of the loops ``for t`` (outer, over ``N``) and ``for j`` (inner, over ``N`` and ``t``) that
    scan the sweep under ``(t, j) = (i + j, j)``: the outer ones (1/3) against the projection of the image on
    ``t``, the inner ones (2/3) for every ``t`` of it."""
    tb = _bounds(wave_t_bounds, "wave_t_bounds", ("N",))
    jb = _bounds(wave_j_bounds, "wave_j_bounds", ("N", "t"))
    want = wave_image()
    if "j" in tb[0] + tb[1] or "t" in tb[0] + tb[1]:
        raise A.AnswerError("the bounds of t use t or j", hint="the outer loop's bounds may use only N")
    outer_set = _scanned(tb, ("0", "0")).project_out(isl.dim_type.set, 1, 1)
    want_t = want.project_out(isl.dim_type.set, 1, 1)
    ctx = want.params()
    outer_set, want_t = outer_set.intersect_params(ctx), want_t.intersect_params(ctx)
    if outer_set.is_equal(want_t):
        outer = right()
    else:
        extra, missing = outer_set.subtract(want_t), want_t.subtract(outer_set)
        outer = wrong(*([f"t = {point_coordinates(extra.sample_point())[0]} at N = "
                         f"{parameter_values(extra.sample_point())['N']} is in your range, but no instance has "
                         "that i + j"] if not extra.is_empty() else [])
                      + ([f"t = {point_coordinates(missing.sample_point())[0]} at N = "
                          f"{parameter_values(missing.sample_point())['N']} is missing from your range, but "
                          "instances have that i + j"] if not missing.is_empty() else []))
    inner_set = _inner(jb, want_t)
    if inner_set.is_equal(want):
        inner = right()
    else:
        extra, missing = inner_set.subtract(want), want.subtract(inner_set)
        lines = []
        if not extra.is_empty():
            lines.append(f"your loops scan {_point_text(extra.sample_point())}, which is no instance: i = t - j or "
                         "j is outside 1..N - 1")
        if not missing.is_empty():
            t, j = point_coordinates(missing.sample_point())
            lines.append(f"your loops miss {_point_text(missing.sample_point())}, the instance (i, j) = ({t - j}, {j})")
        inner = wrong(*lines)
    return combine([("the bounds of t", outer), ("the bounds of j", inner)], weights=[1, 2])


def _inner(jb: tuple[str, str], want_t: isl.Set) -> isl.Set:
    """The points ``(t, j)`` the inner loop scans for every ``t`` of the true range."""
    ts = isl.Map("[N] -> { [t] -> [t, j] }").intersect_domain(want_t).range()
    return _scanned(("t", "t"), jb).intersect(ts)


# -- Q5: the wavefront on processors ----------------------------------------------------------------------------

def _wave_instances() -> isl.Set:
    st = scop(SWEEP).statements[0]
    return st.domain.intersect_params(isl.Set(f"[N] -> {{ : N = {WAVE_N} }}"))


@cache
def wave_counts() -> tuple[int, int]:
    """The number of waves ``t = i + j`` of the sweep at N = 12, and the number of instances processor
    ``p = floor(j / 4) = 1`` runs at ``t = 9``."""
    dom = _wave_instances()
    times = isl.Map("[N] -> { S0[i, j] -> [i + j] }").intersect_domain(dom).range()
    busy = dom.intersect(isl.Set(f"[N] -> {{ S0[i, j] : i + j = {TIME} and "
                                 f"{BLOCK * PROCESSOR} <= j < {BLOCK * (PROCESSOR + 1)} }}"))
    return int(times.count_val().to_python()), int(busy.count_val().to_python())


def _waves(answer: object) -> Verdict:
    want = wave_counts()[0]
    return expect(A.integer(answer, "n_waves"), want,
                  otherwise=f"{{given}} is not the number of waves: a wave is one value of t = i + j taken by an "
                            f"instance, 1 <= i, j <= {WAVE_N - 1}")


def _busy(answer: object) -> Verdict:
    given, want = A.integer(answer, "busy_p1_t9"), wave_counts()[1]
    if given == want:
        return right()
    return wrong(f"{given} is not the number of instances processor {PROCESSOR} runs at t = {TIME}: those are "
                 f"the (i, j) with i + j = {TIME} and floor(j / {BLOCK}) = {PROCESSOR}, 1 <= i, j <= {WAVE_N - 1}")


def check_q5(n_waves: object, busy_p1_t9: object) -> Verdict:
    """How many waves, and how busy one processor is at one time, at N = 12 with blocks of 4."""
    return combine([("n_waves", part(_waves, n_waves)), ("busy_p1_t9", part(_busy, busy_p1_t9))])


# -- Q6: a space-time mapping with p = j, in isl text (construction) ---------------------------------------------

@memo_by_text
def check_q6(space_time_map: object) -> Verdict:
    """A schedule ``{ S0[i, j] -> [t, p] }`` of ``SKEWED`` with ``p = j`` (the processor), legal, ``p`` a
    space dimension (2/3, all three or nothing: ``p = j`` alone is given by the question, and a legal map
    whose ``p`` is not parallel is only the original order), and its OpenMP code verified against the
    original at several thread counts (1/3)."""
    m = A.isl_map(space_time_map, "space_time_map")
    sched = parse_schedule(scop(SKEWED), str(m))
    if sched.n_dims != 2:
        return wrong(f"space_time_map has {sched.n_dims} output dimensions, not 2: write [t, p]")
    st = scop(SKEWED).statements[0]
    p = isl.Map("[N] -> { S0[i, j] -> [j] }").intersect_domain(st.domain)
    second = sched.maps["S0"].project_out(isl.dim_type.out, 0, 1).intersect_domain(st.domain)
    lines = [] if second.is_equal(p) else ["the second dimension is not the processor p = j"]
    legal = legal_schedule(sched, what="space_time_map")
    lines += legal.feedback
    if not lines and 1 not in sched.parallel_dims:
        lines.append("p is not parallel: two instances with the same t and different p depend on each other; "
                     "t must put every dependence strictly forward")
    if lines:
        return wrong(*lines, pictures=legal.pictures)
    threads = THREADS if supports_openmp() else (None,)
    run = verified_variant(scop(SKEWED), parse_schedule(scop(SKEWED), f"{m}; parallel"), params={"N": RUN_N},
                           target="openmp" if supports_openmp() else "c", threads=threads,
                           what="the code of your mapping")
    return combine([("the mapping", right()), ("the run", run)], weights=[2, 1])


LAB = Lab(
    name="lab3",
    title="Schedules and space-time mapping",
    notebook="lab3_schedules.ipynb",
    questions=(
        Question("q1", 2, ("bad_pair",), check_q1, title="a pair theta = (i - j, i) runs in the wrong order",
                 example="((1, 1), (3, 3))"),
        Question("q2", 2, ("violations",), check_q2, title="which distance each Theta violates",
                 example='{"A": (0, 1), "B": None, "C": None, "D": None, "E": None}'),
        Question("q3", 3, ("my_theta",), check_q3, title="a unimodular Theta with a space dimension",
                 example="[[1, 0], [0, 1]]"),
        Question("q4", 3, ("wave_t_bounds", "wave_j_bounds"), check_q4, title="the loop bounds of the wavefront",
                 kind="derivation", example='("0", "N") and ("0", "t")'),
        Question("q5", 2, ("n_waves", "busy_p1_t9"), check_q5, title="waves and processors",
                 example="10 and 3"),
        Question("q6", 3, ("space_time_map",), check_q6, title="a space-time mapping with p = j",
                 kind="construction", example='"{ S0[i, j] -> [i, j] }"'),
    ),
)
