"""Lab 3: schedules and space-time mapping (``solutions/lab3_schedules.ipynb``).

A schedule ``theta(x) = Theta x + theta`` is legal when ``Theta d`` is lexicographically positive for every
distance ``d`` (for uniform dependences; isl checks the exact relations). A space-time mapping splits the
rows of ``Theta`` into time (sequential) and space (processors): ``p = Pi x``. Every expected answer is
computed by the engine's legality check, never written down.
"""

from __future__ import annotations

from functools import cache

import islpy as isl
import sympy

from polylab.analysis import compute_dependences
from polylab.grading import answers as A
from polylab.grading.checks import compare_sets, legal_schedule, part
from polylab.grading.kernels import SWEEP, scop
from polylab.grading.lab import Lab, Question
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.schedule import Schedule, check, parse_schedule

#: the anti-diagonal schedule of question 1, theta(i, j) = (i - j, i)
BAD = "{ S0[i, j] -> [i - j, i] }"

#: questions 2 and 3: a nest with the distances (1, -1), (0, 1) and (1, 0)
SKEWED = """double a[N][N];
for (i = 1; i < N; i++)
  for (j = 1; j < N - 1; j++)
    a[i][j] = a[i - 1][j + 1] + a[i][j - 1] + a[i - 1][j];
"""

#: question 2: the candidate matrices Theta
CANDIDATES = {"A": ((1, 0), (0, 1)), "B": ((0, 1), (1, 0)), "C": ((1, 0), (1, 1)), "D": ((1, 1), (0, 1)),
              "E": ((2, 1), (1, 0))}

#: question 4: the wavefront of the sweep, processors of BLOCK consecutive j, at N = WAVE_N
WAVE_N, BLOCK, PROCESSOR, TIME = 12, 4, 1, 9


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


# -- Q2: which Theta are legal -------------------------------------------------------------------------------

@cache
def legal_candidates() -> frozenset[str]:
    return frozenset(k for k, rows in CANDIDATES.items() if check(theta_schedule(SKEWED, rows)).legal)


def _image(rows: tuple[tuple[int, ...], ...], d: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(_dot(r, d) for r in rows)


def _lex_positive(v: tuple[int, ...]) -> bool:
    return next((x > 0 for x in v if x != 0), False)


def check_q2(answer: object) -> Verdict:
    """The names of the candidate matrices ``Theta`` whose schedule keeps every dependence of ``SKEWED``."""
    given = A.name_set(answer, tuple(CANDIDATES), "legal_thetas", case_sensitive=False)
    given = frozenset(g.upper() for g in given)

    def why(name: str) -> str:
        rows = CANDIDATES[name]
        bad = next(d for d in distances(SKEWED) if not _lex_positive(_image(rows, d)))
        return f"Theta d for d = {bad} is {_image(rows, bad)}, which is not lexicographically positive"

    return compare_sets(given, legal_candidates(), item="legal Theta", why_extra=why,
                        missing_hint="compute Theta d for each distance d; legal when each is lexicographically positive")


# -- Q3: a unimodular Theta with a parallel inner dimension ----------------------------------------------------

def check_q3(answer: object) -> Verdict:
    """A 2 x 2 unimodular ``Theta`` (``|det| = 1``) whose schedule of ``SKEWED`` is legal and whose second
    dimension carries no dependence (a space dimension). Every failing part is reported."""
    rows = A.matrix(answer, (2, 2), "my_theta")
    ints = tuple(tuple(int(x) for x in r) for r in rows)
    if any(x.denominator != 1 for r in rows for x in r):
        raise A.AnswerError("my_theta has fractions", hint="a schedule has integer coefficients")
    det = int(sympy.Matrix(ints).det())
    uni = right() if abs(det) == 1 else wrong(
        f"det(Theta) = {det}: Theta is not unimodular, so the schedule " +
        ("maps two instances to the same time" if det == 0 else f"leaves holes (only 1 in {abs(det)} integer "
                                                                 "times is used)"))
    sched = theta_schedule(SKEWED, ints)
    legal = legal_schedule(sched, what=f"Theta = {[list(r) for r in ints]}")
    if legal.correct:
        bad = [d for d in distances(SKEWED) if _image(ints, d)[0] < 1]
        space = right() if 1 in sched.parallel_dims else wrong(
            "the second dimension is not parallel: it carries the dependence(s) with distance "
            + ", ".join(map(str, bad)) + ", whose first row gives Theta d = 0; choose a first row a with "
            "a . d >= 1 for every distance d")
    else:
        space = wrong("a dimension of an illegal schedule cannot be parallel")
    return combine([("legality", legal), ("space", space), ("unimodular", uni)])


# -- Q4: the wavefront on processors ----------------------------------------------------------------------------

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
    n = A.integer(answer, "n_waves")
    want = wave_counts()[0]
    if n == want:
        return right()
    return wrong(f"{n} waves is not right: t = i + j runs from the smallest i + j to the largest over "
                 f"1 <= i, j <= {WAVE_N - 1}" + (" (count both ends)" if abs(n - want) == 1 else ""))


def _busy(answer: object) -> Verdict:
    n = A.integer(answer, "busy_p1_t9")
    want = wave_counts()[1]
    if n == want:
        return right()
    return wrong(f"{n} is not right: processor {PROCESSOR} owns j = {BLOCK * PROCESSOR}..{BLOCK * PROCESSOR + BLOCK - 1}; "
                 f"at t = {TIME} each such j runs i = {TIME} - j, when that i is inside 1..{WAVE_N - 1}")


def check_q4(n_waves: object, busy_p1_t9: object) -> Verdict:
    """How many waves, and how busy one processor is at one time, at N = 12 with blocks of 4."""
    return combine([("n_waves", part(_waves, n_waves)), ("busy_p1_t9", part(_busy, busy_p1_t9))])


# -- Q5: a space-time mapping in isl notation -------------------------------------------------------------------

def check_q5(answer: object) -> Verdict:
    """A schedule ``{ S0[i, j] -> [t, p] }`` of the sweep with ``p = i`` (the processor) and a time ``t``
    that makes it legal with ``p`` a parallel (space) dimension."""
    m = A.isl_map(answer, "space_time_map")
    sched = parse_schedule(scop(SWEEP), str(m))
    if sched.n_dims != 2:
        return wrong(f"space_time_map has {sched.n_dims} output dimensions, not 2: write [t, p]")
    st = scop(SWEEP).statements[0]
    p = isl.Map(f"[N] -> {{ S0[i, j] -> [i] }}").intersect_domain(st.domain)
    second = sched.maps["S0"].project_out(isl.dim_type.out, 0, 1).intersect_domain(st.domain)
    proc = right() if second.is_equal(p) else wrong("the second dimension is not p = i")
    legal = legal_schedule(sched, what="space_time_map")
    if legal.correct:
        space = right() if 1 in sched.parallel_dims else wrong(
            "p is not parallel: two instances with the same t and different p depend on each other; "
            "choose t so that every dependence goes forward in t (t = a . (i, j) with a . d >= 1)")
    else:
        space = wrong("p cannot be a space dimension of an illegal schedule")
    if not proc.correct:
        return combine([("p", proc), ("legality", legal), ("space", space)])
    return combine([("legality", legal), ("space", space)])


LAB = Lab(
    name="lab3",
    title="Schedules and space-time mapping",
    notebook="lab3_schedules.ipynb",
    questions=(
        Question("q1", 1, ("violated_distance",), check_q1, title="the distance theta = i - j violates",
                 example="(1, 0)"),
        Question("q2", 2, ("legal_thetas",), check_q2, title="which Theta are legal", example='{"A"}'),
        Question("q3", 3, ("my_theta",), check_q3, title="a unimodular Theta with a space dimension",
                 example="[[1, 0], [0, 1]]"),
        Question("q4", 2, ("n_waves", "busy_p1_t9"), check_q4, title="waves and processors",
                 example="10 and 3"),
        Question("q5", 2, ("space_time_map",), check_q5, title="a space-time mapping with p = i",
                 example='"{ S0[i, j] -> [i, j] }"'),
    ),
)
