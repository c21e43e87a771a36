"""Lab 8: the stencil dialect on xDSL, from an apply you write to verified loops (``solutions/lab8_stencil.ipynb``).

The dialect, its passes and its lowering are xDSL's (today's MLIR syntax); every expected answer is computed
here by running them through polylab's pipeline on the lab's own programs: the bi-Laplacian :data:`BILAP`
(a Laplacian ``lap`` and an update ``res`` that applies the Laplacian to ``lap``) and the smoothing operator
of question 1. The construction (question 1) is checked by running the student's program with the reference
interpreter on the lab's field values and comparing with the operator's values; the derivations (shapes,
inlined accesses, recomputed Laplacians, the memref index of an access in the lowered loops) are checked
against xDSL's own results, the points a rank of a distributed program needs from its neighbour (question 7)
exactly with isl from the program's accesses; the measurement (questions 8 and 9) against runs recorded on the
course's machine (:data:`RECORDED`, printed by the lab) and their 95 % interval
(:func:`polylab.experiment.speedup_interval`), as in labs 4-6: the grader reruns a notebook elsewhere. The
reading of the interval (question 9) is a choice, judged by the grader only, like every choice of the course.
"""

from __future__ import annotations

from functools import cache

import islpy as isl
import numpy as np
from xdsl.dialects.stencil import AccessOp

from polylab import stencil
from polylab import toolchain as tc
from polylab.corpus import example_path
from polylab.errors import PolylabError
from polylab.experiment import speedup_interval
from polylab.grading import answers as A
from polylab.grading.checks import VERDICTS, expect, expect_choice, expect_verdict, part
from polylab.grading.lab import Lab, Question
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.model.islutil import point_coordinates
from polylab.stencil.check import fields_for
from polylab.stencil.display import access_offsets, shapes

#: the bi-Laplacian of questions 2 to 5 and 7: out = u - 0.01 * lap(lap(u)) on a 64 x 64 x 16 box; and question 1's
#: smoothing program, everything but the apply's body (the word BODY). Both ship with polylab
#: (``polylab/examples/course``), where the lab reads them too: a student's notebook imports nothing of the grader
BILAP = example_path("course/bilap.mlir").read_text(encoding="utf-8")
SMOOTH_TEMPLATE = example_path("course/smooth_template.mlir").read_text(encoding="utf-8")

#: the operator of question 1: the mean of the four edge neighbours, (N + S + E + W) / 4
SMOOTH_OFFSETS = frozenset({(-1, 0), (1, 0), (0, -1), (0, 1)})


def smooth_values(u: np.ndarray) -> np.ndarray:
    """The operator of question 1 on ``u`` (a field over [-1, 17)^2): its values on [0, 16)^2."""
    return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


@cache
def bilap() -> stencil.Program:
    return stencil.parse(BILAP, filename="bilap.mlir")


@cache
def shaped() -> stencil.Program:
    return stencil.run_passes(bilap(), "shape-inference")


@cache
def inlined() -> stencil.Program:
    return stencil.run_passes(bilap(), "stencil-inlining,cse,shape-inference")


def _box_of(program: stencil.Program, label: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return dict(shapes(program))[label]


def _volume(box: tuple[tuple[int, ...], tuple[int, ...]]) -> int:
    return int(np.prod([hi - lo for lo, hi in zip(*box)]))


# -- Q1: write an apply (construction) ---------------------------------------------------------------------------

def _program_text(answer: object) -> str:
    A.text(answer, "smooth_program")           # refuses what is not text
    text = str(answer)                         # kept as written: errors name its lines
    if "stencil.apply" not in text:
        raise A.AnswerError("smooth_program has no stencil.apply",
                            hint="start from SMOOTH_TEMPLATE and replace BODY by the apply's operations")
    return text


def check_q1(answer: object) -> Verdict:
    """The student's program computes the operator: run by the reference interpreter on the lab's values, every
    element of ``out`` within 1e-12 (relative) of the operator's (sums in another order round differently)."""
    text = _program_text(answer)
    try:
        program = stencil.parse(text, filename="smooth_program")
    except PolylabError as err:
        loc = err.location
        where = f"line {loc.line}, column {loc.column}: " if loc is not None else ""
        return wrong(f"the program does not read: {where}{err.message}" + (f" ({err.hint})" if err.hint else ""))
    if len(program.applies) != 1 or program.output_fields() != ("out",):
        return wrong("keep the template: one apply, stored into out")
    lines = []
    offsets = {tuple(o) for offs in access_offsets(program.applies[0]).values() for o in offs}
    for o in sorted(offsets - SMOOTH_OFFSETS):
        lines.append(f"the access at offset {list(o)} reads a point the operator does not use")
    fields = fields_for(program)
    try:
        got = stencil.interpret(program, fields)["out"]
    except PolylabError as err:
        return wrong(f"the reference interpreter cannot run it: {err.message}")
    want = np.array(fields["out"], copy=True)
    want[1:-1, 1:-1] = smooth_values(fields["in"])
    verdict = tc.judge(tc.Outputs({"out": want}), tc.Outputs({"out": np.asarray(got)}), rtol=1e-12,
                       initial=lambda name, flat: np.asarray(fields["out"]).reshape(-1)[flat.astype(np.int64)],
                       extents={"out": want.shape})
    if verdict.verified:
        return right()
    d = verdict.difference
    if d is not None:
        point = [int(i) - 1 for i in d.index]
        lines.append(f"out at the point {point} is {d.actual:.6g}, the operator's value there is {d.expected:.6g}: "
                     "an offset, a weight or an operation is off")
    return wrong(*lines)


# -- Q2: shape inference by hand (derivation) --------------------------------------------------------------------

def _box(value: object, what: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    items = value if isinstance(value, (tuple, list)) else None
    example = "write ((lb_i, lb_j, lb_k), (ub_i, ub_j, ub_k)), e.g. ((0, 0, 0), (8, 8, 8))"
    if items is None or len(items) != 2:
        raise A.AnswerError(f"{what} is {A.describe(value)}, not a pair (lower bound, upper bound)", hint=example)
    return A.vector(items[0], 3, f"the lower bound of {what}"), A.vector(items[1], 3, f"the upper bound of {what}")


def box_reference(which: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The box xDSL's shape inference gives the apply ``lap`` or the load of ``u`` (half-open)."""
    return _box_of(shaped(), "apply %lap" if which == "lap" else "load %u")


def _judge_box(value: object, which: str, what: str) -> Verdict:
    lb, ub = _box(value, what)
    want_lb, want_ub = box_reference(which)
    if (lb, ub) == (want_lb, want_ub):
        return right()
    if lb == want_lb and tuple(u + 1 for u in ub) == want_ub:
        return wrong(f"{what}: the upper bound {list(ub)} is inclusive; boxes are half-open [lb, ub), so ub is one "
                     "past the last point")
    if (lb, ub) == _box_of(shaped(), "store to out"):
        return wrong(f"{what} is the stored box: grow it by the offsets at which its consumers read it")
    if which == "load" and (lb, ub) == box_reference("lap"):
        return wrong(f"{what} is lap's box; u is read by lap at offsets -1 and +1 around every point of lap's box")
    if which == "load" and (lb, ub) == ((-4, -4, 0), (68, 68, 16)):
        return wrong(f"{what} is the field's bounds: the load needs only what the applies read, not the whole halo")
    dims = [d for d in range(3) if lb[d] != want_lb[d] or ub[d] != want_ub[d]]
    return wrong(f"{what} is wrong along {', '.join('ijk'[d] for d in dims)}: take the union, over the consumers, "
                 "of the consumer's box grown by the offsets of its accesses")


def check_q2(lap_box: object, load_box: object) -> Verdict:
    """The boxes shape inference gives to ``lap`` and to the load of ``u``, by hand."""
    return combine([("lap_box", part(_judge_box, lap_box, "lap", "lap_box")),
                    ("load_box", part(_judge_box, load_box, "load", "load_box"))])


# -- Q3: inlining, the distinct accesses (derivation) ------------------------------------------------------------

@cache
def inlined_accesses() -> int:
    """Distinct accesses of ``u`` in the one apply left after xDSL's inlining and cse."""
    (fused,) = inlined().applies
    return len({tuple(op.offset) for op in fused.walk() if isinstance(op, AccessOp)})


def check_q3(answer: object) -> Verdict:
    k = A.integer(answer, "u_distinct")
    want = inlined_accesses()
    return expect(k, want,
                  (26, "26 counts an offset each time a Laplacian reads it: u[0, 0, 0] and its neighbours are read "
                       "by several of the inlined Laplacians, and the program reads each once"),
                  (25, "25 counts the five Laplacians' reads each time, without res's own read of u"),
                  (5, "5 is one Laplacian's pattern: res reads lap at five offsets, each a Laplacian around it"),
                  (lambda g: g < 5, "fewer than one Laplacian's pattern: every inlined Laplacian reads its own "
                                    "neighbourhood"),
                  otherwise=f"u_distinct = {k}: inlining puts a Laplacian around each offset at which res reads "
                            "lap; list the offsets of u these Laplacians read and count each once")


# -- Q4: what inlining recomputes (derivation) -------------------------------------------------------------------

@cache
def evaluations_reference() -> tuple[int, int]:
    """``(stored, inlined)``: Laplacians computed when ``lap`` is a temp (its inferred box) and when it is
    inlined (one per access of ``res`` to ``lap``, at every point of ``res``'s box)."""
    p = shaped()
    res = next(a for a in p.applies if "%lap" in access_offsets(a))
    reads = len(access_offsets(res)["%lap"])
    return _volume(box_reference("lap")), reads * _volume(_box_of(p, "apply %res"))


def _count_line(part_name: str, given: int, want: int, known: int, known_text: str, few: str, many: str
                ) -> str | None:
    """The reply to one count of question 4: what the known wrong count ``known`` is, or what too few or too
    many Laplacians lead to (None when ``given`` is right)."""
    if given == want:
        return None
    if given == known:
        return f"{part_name}: {given} Laplacians {known_text}"
    if given < want:
        return f"{part_name}: with {given} Laplacians, {few}"
    return f"{part_name}: {given} Laplacians {many}"


def check_q4(answer: object) -> Verdict:
    """Each count is judged by what it leads to, never by the rule that computes it: too few stored Laplacians
    leave a value res reads uncomputed, too many compute values nobody reads; the inlined count likewise."""
    stored, inlined_ = A.vector(answer, 2, "lap_evaluations")
    want_s, want_i = evaluations_reference()
    out_points = _volume(_box_of(shaped(), "store to out"))
    lines = [line for line in (
        _count_line("stored", stored, want_s, out_points,
                    "is one per output point: res at an output point on the output's edge then reads a value of "
                    "lap that was never computed",
                    "some value of lap that res reads is never computed", "compute values of lap that res never reads"),
        _count_line("inlined", inlined_, want_i, want_s,
                    "is the stored count: inlined, nothing is stored, so a Laplacian two points of res both need is "
                    "computed by each of them",
                    "some point of res is missing a Laplacian it needs",
                    "is more than the points of res evaluate, even computing each one anew")) if line]
    return partial(2 - len(lines), 2, *lines)


# -- Q5: the lowered loops: where an access reads (derivation) -----------------------------------------------------

@cache
def memref_index_reference() -> tuple[int, ...]:
    """The memref index the lowered loops read for ``u`` at offset (-2, 0, 0) at the point (0, 0, 0): the
    field's element ``x + o`` is stored at ``x + o - lb`` (xDSL's subview starts at ``-lb``)."""
    lb = stencil.lower(inlined()).program.field_bounds(
        next(op.results[0] for op in inlined().walk() if op.name == "stencil.cast"))[0]
    return tuple(x + o - lo for x, o, lo in zip((0, 0, 0), (-2, 0, 0), lb))


def check_q5(answer: object) -> Verdict:
    given = A.vector(answer, 3, "memref_index")
    want = memref_index_reference()
    return expect(given, want,
                  ((-2, 0, 0), "(-2, 0, 0) is the point in the field's coordinates; a memref is indexed from 0: "
                               "where does the field's lower bound go?"),
                  ((6, 4, 0), "the access is at -2 along i: the index moves down from the point's, not up"),
                  (lambda g: g[2] != want[2], "along k the field's bounds start at 0, so nothing shifts there"),
                  otherwise=f"memref_index = {list(given)}: index = point + offset - (the field's lower bound)")


# -- Q6: the GPU dialect's two forms (choice) ----------------------------------------------------------------------

KERNEL_OPTIONS = {"a": "gpu.launch", "b": "gpu.launch_func", "c": "gpu.func", "d": "scf.parallel"}
KERNEL_WHY_NOT = {
    "a": "gpu.launch is the inline form: its body sits in the host function, so nothing can be compiled apart",
    "c": "gpu.func defines the kernel in the gpu.module; it does not start it",
    "d": "scf.parallel is the loop before the mapping: no kernel exists yet",
}


def check_q6(answer: object) -> Verdict:
    given = A.choice(answer, tuple(KERNEL_OPTIONS), "kernel_start")
    return expect_choice(given, "b", KERNEL_WHY_NOT, what="kernel_start")


# -- Q7: what a rank needs from its neighbour (derivation) -----------------------------------------------------------

#: question 7: the bi-Laplacian over 2 ranks along i; rank 0 computes out on the rows i < CUT, rank 1 on the others
RANKS, CUT = 2, 32


def _rank0_box() -> tuple[tuple[int, ...], tuple[int, ...]]:
    lb, ub = _box_of(shaped(), "store to out")
    return lb, (lb[0] + (ub[0] - lb[0]) // RANKS, *ub[1:])


@cache
def reach_offsets() -> frozenset[tuple[int, ...]]:
    """The offsets of ``u`` that one point of ``out`` depends on: res's own reads of ``u`` and, for each read of
    ``lap`` at ``d``, lap's reads of ``u`` at ``e``: ``d + e`` (read from the program's accesses)."""
    p = bilap()
    lap = next(a for a in p.applies if "%lap" not in access_offsets(a))
    res = next(a for a in p.applies if "%lap" in access_offsets(a))
    direct = {tuple(o) for o in access_offsets(res).get("%u", [])}
    through = {tuple(d + e for d, e in zip(o1, o2)) for o1 in access_offsets(res)["%lap"]
               for o2 in access_offsets(lap)["%u"]}
    return frozenset(direct | through)


def _box_set(lb: tuple[int, ...], ub: tuple[int, ...]) -> isl.Set:
    cons = " and ".join(f"{lo} <= {v} < {hi}" for v, lo, hi in zip("ijk", lb, ub))
    return isl.Set(f"{{ u[i, j, k] : {cons} }}")


@cache
def needed_reference() -> isl.Set:
    """The points of ``u`` beyond the cut (``i >= CUT``, rows rank 1 owns or the field's halo past them) that rank
    0's part of ``out`` depends on: its box shifted by every offset of :func:`reach_offsets`, exactly (isl)."""
    lb, ub = _rank0_box()
    needed = isl.Set("{ u[i, j, k] : 1 = 0 }")
    for o in reach_offsets():
        needed = needed.union(_box_set(tuple(x + d for x, d in zip(lb, o)), tuple(x + d for x, d in zip(ub, o))))
    return needed.intersect(isl.Set(f"{{ u[i, j, k] : i >= {CUT} }}")).coalesce()


def _point_of(s: isl.Set) -> tuple[int, ...]:
    return point_coordinates(s.lexmin().sample_point())


def check_q7(answer: object) -> Verdict:
    """The set of points of ``u`` past the cut that rank 0 needs. A point left out is named by its consequence
    (a point of ``out`` rank 0 cannot compute), a point too many by itself (no point of rank 0 needs it)."""
    given = A.isl_set(answer, "rank0_needs")
    if given.dim(isl.dim_type.set) != 3 or given.dim(isl.dim_type.param) != 0:
        raise A.AnswerError("rank0_needs is not a set of points u[i, j, k] without parameters",
                            hint="write isl text such as { u[i, j, k] : i = 40 and 0 <= j < 8 and k = 0 }")
    given = given.set_tuple_name("u")
    want = needed_reference()
    if given.is_equal(want):
        return right()
    lines = []
    missing = want.subtract(given)
    if not missing.is_empty():
        p = _point_of(missing)
        lb, ub = _rank0_box()
        outs = [tuple(x - d for x, d in zip(p, o)) for o in reach_offsets()]
        x = min(q for q in outs if all(lo <= v < hi for v, lo, hi in zip(q, lb, ub)))
        lines.append(f"with your set, rank 0 cannot compute out at {list(x)}: a value it needs depends on a point "
                     "of u past the cut that your set leaves out")
    extra = given.subtract(want)
    if not extra.is_bounded():
        lines.append("your set is infinite: it holds points without end along some direction, and rank 0's part "
                     "of out depends on finitely many")
    elif not extra.is_empty():
        p = _point_of(extra)
        lines.append(f"your set holds u{list(p)}, a row rank 0 owns itself (i < {CUT})" if p[0] < CUT else
                     f"your set holds u{list(p)}, which no point of rank 0's part of out depends on")
    return wrong(*lines)


# -- Q8: what the measurement says --------------------------------------------------------------------------------

#: question 8: runs of the bi-Laplacian on 256 x 256 x 16 points, plain (shape inference only) and inlined
#: (``stencil-inlining,cse,shape-inference``), lowered to polylab's C and timed with
#: ``polylab.experiment.measure(..., repeat=10, baseline=False)`` on the course's development machine (2 cores,
#: a load of 10 from other work; 2026-12-05 08:52 UTC); the lab prints the same numbers. The grader reruns a
#: notebook on another machine, so the graded reading is of these runs, not of the student's live ones
#: (docs/course.md rule 6, as in labs 4-6).
RECORDED = {
    "plain": [0.021084, 0.020949, 0.012617, 0.012646, 0.008698, 0.007099, 0.012708, 0.012704, 0.012549, 0.022217],
    "inlined": [0.007893, 0.011942, 0.012082, 0.011991, 0.011997, 0.01286, 0.008532, 0.011976, 0.011935, 0.013367],
}
#: how far an interval end may be from the recorded one (the bootstrap's seed is fixed: the same runs give the
#: same interval; this only forgives rounding to two decimals)
TOLERANCE = 0.01


def _recorded_interval():
    return speedup_interval(RECORDED["plain"], RECORDED["inlined"])


def _interval(value: object) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or len(value) != 2:
        raise A.AnswerError(f"inlining_interval is {A.describe(value)}, not two numbers (low, high)",
                            hint="inlining_interval = (0.5, 0.6)")
    try:
        low, high = (float(x) for x in value)
    except (TypeError, ValueError):
        raise A.AnswerError("inlining_interval holds something that is not a number") from None
    return low, high


def _close(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return all(abs(x - y) <= TOLERANCE for x, y in zip(a, b))


def check_q8(inlining_interval: object) -> Verdict:
    """The 95 % interval ``(low, high)`` of the speedup ``median(plain) / median(inlined)`` of the recorded runs.
    What it says is question 9, a choice judged by the grader only."""
    low, high = _interval(inlining_interval)
    iv = _recorded_interval()
    if _close((low, high), (iv.low, iv.high)):
        return right()
    if low > high:
        why = "its low end is above its high end"
    elif low > 0 and _close((1 / high, 1 / low), (iv.low, iv.high)):
        why = ("it is the interval of median(inlined) / median(plain); the speedup of the inlined program is "
               "median(plain) / median(inlined)")
    else:
        why = ("it is not the 95 % interval of the recorded runs' speedup (speedup_interval bootstraps with a "
               "fixed seed: the recorded runs give one interval, whoever computes it); your live runs give "
               "another")
    return wrong(f"inlining_interval = ({low:g}, {high:g}): {why}")


# -- Q9: what the interval says (choice, judged by the grader only) -------------------------------------------------

def check_q9(answer: object) -> Verdict:
    """The reading of the recorded runs' interval; the feedback (the grader's report only) says what the
    reading overlooks, never which verdict is right."""
    given = A.choice(answer, VERDICTS, "inlining_verdict")
    return expect_verdict(given, RECORDED["plain"], RECORDED["inlined"], variant_name="inlined",
                          baseline_name="plain")


LAB = Lab(
    name="lab8",
    title="The stencil dialect on xDSL: applies, shapes, inlining, loops, GPU and MPI forms",
    notebook="lab8_stencil.ipynb",
    questions=(
        Question("q1", 3, ("smooth_program",), check_q1, title="write the smoothing apply", kind="construction",
                 example="SMOOTH_TEMPLATE.replace(\"BODY\", \"...\")"),
        Question("q2", 3, ("lap_box", "load_box"), check_q2, title="shape inference by hand", kind="derivation",
                 example="lap_box = ((0, 0, 0), (8, 8, 8)); load_box = ((0, 0, 0), (8, 8, 8))"),
        Question("q3", 2, ("u_distinct",), check_q3, title="inlining: the accesses left", kind="derivation",
                 example="7"),
        Question("q4", 2, ("lap_evaluations",), check_q4, title="what inlining recomputes", kind="derivation",
                 example="(1000, 1000)"),
        Question("q5", 2, ("memref_index",), check_q5, title="where the lowered loops read", kind="derivation",
                 example="(1, 1, 1)"),
        Question("q6", 1, ("kernel_start",), check_q6, title="the GPU dialect's function form", kind="choice",
                 example='"a"'),
        Question("q7", 2, ("rank0_needs",), check_q7, title="what a rank needs from its neighbour",
                 kind="derivation", example='"{ u[i, j, k] : i = 40 and 0 <= j < 8 and k = 0 }"'),
        Question("q8", 1.5, ("inlining_interval",), check_q8, title="the recorded measurement's interval",
                 kind="derivation", example="(0.5, 0.6)"),
        Question("q9", 0.5, ("inlining_verdict",), check_q9, title="what the interval says", kind="choice",
                 example='"slower"'),
    ),
)
