"""Lab 8: the stencil dialect, from applies to verified loops (``solutions/lab8_stencil.ipynb``).

Two programs: the shipped horizontal diffusion (``stencil.example("diffusion")``, four applies) for the data-flow
graph, and a bi-Laplacian of our own (:data:`BILAP`: a Laplacian ``lap`` and an update ``res`` that applies
the Laplacian to ``lap``) for shape inference, inlining, unrolling and lowering. Every expected answer is
computed here with the stencil layer's own passes (``infer_shapes``, ``inline``, ``cse``, ``unroll``,
``lower``) and, for the schedule, with isl on the lowered SCoP.
"""

from __future__ import annotations

from functools import cache

import islpy as isl

from polylab.grading import answers as A
from polylab.grading.checks import compare_calls, legal_schedule, part
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.schedule import Schedule, parse_schedule
from polylab.stencil import Lowering, Program, cse, example, infer_shapes, inline, lower, parse, unroll
from polylab.stencil.ops import Access, Apply

#: the bi-Laplacian of questions 2 to 6: out = u - 0.01 * lap(lap(u)) on a 64 x 64 x 16 box
BILAP = """module {
  func @bilap(%in: !stencil.field<?x?x?xf64>, %out: !stencil.field<?x?x?xf64>) attributes {stencil.program} {
    %fin = stencil.cast %in([-4, -4, 0] : [68, 68, 16]) : (!stencil.field<?x?x?xf64>) -> !stencil.field<72x72x16xf64>
    %fout = stencil.cast %out([-4, -4, 0] : [68, 68, 16]) : (!stencil.field<?x?x?xf64>) -> !stencil.field<72x72x16xf64>
    %u = stencil.load %fin : (!stencil.field<72x72x16xf64>) -> !stencil.temp<?x?x?xf64>
    %lap = stencil.apply (%a = %u : !stencil.temp<?x?x?xf64>) -> !stencil.temp<?x?x?xf64> {
      %c = stencil.access %a [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %w = stencil.access %a [-1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %e = stencil.access %a [1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %s = stencil.access %a [0, -1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %n = stencil.access %a [0, 1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %we = addf %w, %e : f64
      %sn = addf %s, %n : f64
      %nb = addf %we, %sn : f64
      %four = constant 4.0 : f64
      %c4 = mulf %four, %c : f64
      %l = subf %nb, %c4 : f64
      %r = stencil.store_result %l : (f64) -> !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    %res = stencil.apply (%a = %u : !stencil.temp<?x?x?xf64>, %b = %lap : !stencil.temp<?x?x?xf64>) -> !stencil.temp<?x?x?xf64> {
      %c = stencil.access %b [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %w = stencil.access %b [-1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %e = stencil.access %b [1, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %s = stencil.access %b [0, -1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %n = stencil.access %b [0, 1, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %we = addf %w, %e : f64
      %sn = addf %s, %n : f64
      %nb = addf %we, %sn : f64
      %four = constant 4.0 : f64
      %c4 = mulf %four, %c : f64
      %l = subf %nb, %c4 : f64
      %u0 = stencil.access %a [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64
      %k = constant 0.01 : f64
      %kl = mulf %k, %l : f64
      %new = subf %u0, %kl : f64
      %r = stencil.store_result %new : (f64) -> !stencil.result<f64>
      stencil.return %r : !stencil.result<f64>
    }
    stencil.store %res to %fout([0, 0, 0] : [64, 64, 16]) : !stencil.temp<?x?x?xf64> to !stencil.field<72x72x16xf64>
    return
  }
}
"""


@cache
def diffusion() -> Program:
    return example("diffusion")


@cache
def bilap() -> Program:
    return parse(BILAP, filename="bilap.mlir")


@cache
def shaped() -> Program:
    return infer_shapes(bilap())


@cache
def lowering() -> Lowering:
    return lower(shaped())


def _name(value: str) -> str:
    return value.lstrip("%")


def _apply(program: Program, result: str) -> Apply:
    return next(a for a in program.applies if _name(a.results[0]) == result)


def _accesses(apply: Apply, temp_arg: str | None = None) -> list[Access]:
    """The ``stencil.access`` operations of ``apply`` (of its argument ``temp_arg`` when given), nested
    regions included."""
    out: list[Access] = []

    def walk(ops) -> None:  # noqa: ANN001
        for op in ops:
            if isinstance(op, Access) and (temp_arg is None or op.temp == temp_arg):
                out.append(op)
            for attr in ("then", "other", "body", "ops"):
                inner = getattr(op, attr, None)
                if isinstance(inner, tuple):
                    walk(inner)

    walk(apply.body)
    return out


def _arg_of(apply: Apply, operand: str) -> str:
    return next(a for a, o in zip(apply.args, apply.operands) if o == operand)


def _volume(box) -> int:  # noqa: ANN001
    v = 1
    for lo, hi in zip(box.lb, box.ub):
        v *= hi - lo
    return v


# -- Q1: the data-flow graph -------------------------------------------------------------------------------------

@cache
def levels_reference() -> tuple[frozenset[str], ...]:
    """The applies of the diffusion grouped by level: an apply's level is one more than the highest level
    of the applies whose results it reads (loads are level 0), so the applies of one level are independent
    of each other and may run together."""
    p = diffusion()
    level: dict[str, int] = {}
    for a in p.applies:
        producers = [level[_name(o)] for o in a.operands if _name(o) in level]
        for r in a.results:
            level[_name(r)] = 1 + max(producers, default=0)
    depth = max(level.values())
    return tuple(frozenset(n for n, lv in level.items() if lv == k) for k in range(1, depth + 1))


def check_q1(answer: object) -> Verdict:
    """The applies of the diffusion, level by level (a list of sets of result names, ``%`` optional)."""
    if isinstance(answer, (str, dict, set, frozenset)) or not isinstance(answer, (list, tuple)):
        raise A.AnswerError(f"levels is {A.describe(answer)}, not a list of sets",
                            hint='write one set per level, in order, e.g. [{"lap"}, {"fli"}]')
    given = [frozenset(_name(n) for n in A.name_set(lv, None, f"level {k + 1}")) for k, lv in enumerate(answer)]
    want = levels_reference()
    if tuple(given) == want:
        return right()
    names = {n for lv in want for n in lv}
    where = {n: k for k, lv in enumerate(want) for n in lv}
    lines = []
    for k, lv in enumerate(given):
        for n in sorted(lv):
            if n not in names:
                lines.append(f"{n} (level {k + 1}) is not an apply of the diffusion (its applies are "
                             f"{', '.join(sorted(names))})")
            elif where[n] > k:
                lines.append(f"{n} cannot run at level {k + 1}: it reads a result that is computed at level "
                             f"{where[n]} or later")
            elif where[n] < k:
                lines.append(f"{n} can run earlier than level {k + 1}: everything it reads is ready after level "
                             f"{where[n]}")
    seen = [n for lv in given for n in lv]
    missing = names - set(seen)
    if missing:
        lines.append(f"{len(missing)} apply(s) missing from the levels")
    if len(seen) != len(set(seen)):
        lines.append("an apply is listed twice: each runs once")
    right_levels = sum(1 for k, lv in enumerate(want) if k < len(given) and given[k] == lv)
    return partial(right_levels, len(want), *(lines or ["not the levels: an apply's level is one more than "
                                                       "the highest level of the applies it reads"]))


# -- Q2: shape inference by hand ---------------------------------------------------------------------------------

def _box(value: object, what: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    items = value if isinstance(value, (tuple, list)) else None
    if items is None or len(items) != 2:
        if isinstance(value, str):
            raise A.AnswerError(f"{what} is the text {A.describe(value)}",
                                hint="write ((lb_i, lb_j, lb_k), (ub_i, ub_j, ub_k)), e.g. ((0, 0, 0), (64, 64, 16))")
        raise A.AnswerError(f"{what} is {A.describe(value)}, not a pair (lower bound, upper bound)",
                            hint="write ((lb_i, lb_j, lb_k), (ub_i, ub_j, ub_k)), e.g. ((0, 0, 0), (64, 64, 16))")
    return A.vector(items[0], 3, f"the lower bound of {what}"), A.vector(items[1], 3, f"the upper bound of {what}")


def box_reference(which: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The inferred box of the apply ``lap`` or of the load of ``u`` (half-open ``[lb, ub)``)."""
    p = shaped()
    box = _apply(p, "lap").box if which == "lap" else p.loads[0].box
    return tuple(box.lb), tuple(box.ub)


def _judge_box(value: object, which: str, what: str) -> Verdict:
    lb, ub = _box(value, what)
    want_lb, want_ub = box_reference(which)
    if (lb, ub) == (want_lb, want_ub):
        return right()
    if lb == want_lb and tuple(u + 1 for u in ub) == want_ub:
        return wrong(f"{what}: the upper bound {ub} is inclusive; boxes are half-open [lb, ub), so ub is one past "
                     "the last point")
    out_lb, out_ub = (0, 0, 0), (64, 64, 16)
    if (lb, ub) == (out_lb, out_ub):
        return wrong(f"{what} is the output's box: grow it by the offsets at which its consumers read it")
    lap_lb, lap_ub = box_reference("lap")
    if which == "load" and (lb, ub) == (lap_lb, lap_ub):
        return wrong(f"{what} is lap's box; u is read by lap at offsets -1 and +1 around every point of lap's box")
    dims = [d for d in range(3) if lb[d] != want_lb[d] or ub[d] != want_ub[d]]
    names = ", ".join("ijk"[d] for d in dims)
    return wrong(f"{what} is wrong along {names}: take the union, over the consumers, of the consumer's box grown "
                 "by the offsets of its accesses")


def check_q2(lap_box: object, load_box: object) -> Verdict:
    """The boxes shape inference gives to ``lap`` and to the load of ``u``, by hand."""
    return combine([("lap_box", part(_judge_box, lap_box, "lap", "lap_box")),
                    ("load_box", part(_judge_box, load_box, "load", "load_box"))])


# -- Q3: inlining, count the accesses ----------------------------------------------------------------------------

@cache
def inlined_counts() -> tuple[int, int]:
    """``(accesses of u, distinct accesses of u)`` of the single apply left after inlining ``lap`` into
    ``res``; the distinct ones are what ``cse`` keeps."""
    p = inline(bilap())
    (fused,) = p.applies
    arg = _arg_of(fused, "%u")
    accesses = _accesses(fused, arg)
    after = cse(p).applies[0]
    kept = len(_accesses(after, _arg_of(after, "%u")))
    distinct = len({a.offset for a in accesses})
    assert kept == distinct, "cse keeps exactly one access per distinct offset"
    return len(accesses), distinct


def _u_accesses(answer: object) -> Verdict:
    k = A.integer(answer, "u_accesses")
    total, distinct = inlined_counts()
    if k == total:
        return right()
    if k == total - 1:
        return wrong(f"{k}: res also reads u[0, 0, 0] itself, besides the Laplacians")
    if k == distinct:
        return wrong(f"{k} is the number left after cse removes repeated accesses; count before cse")
    return wrong(f"u_accesses = {k}: each of res's accesses to lap becomes a whole Laplacian of u (count its "
                 "accesses), plus res's own read of u")


def _u_distinct(answer: object) -> Verdict:
    k = A.integer(answer, "u_distinct")
    total, distinct = inlined_counts()
    if k == distinct:
        return right()
    if k == total:
        return wrong(f"{k} counts repeated offsets: u[0, 0, 0] is read by several of the inlined Laplacians")
    return wrong(f"u_distinct = {k}: the offsets are a + b for a, b in the 5-point pattern; draw them (a diamond "
                 "|di| + |dj| <= 2) and count")


def check_q3(u_accesses: object, u_distinct: object) -> Verdict:
    """Accesses of ``u`` per output point in the inlined apply, before and after common subexpressions."""
    return combine([("u_accesses", part(_u_accesses, u_accesses)), ("u_distinct", part(_u_distinct, u_distinct))])


# -- Q4: what inlining recomputes ---------------------------------------------------------------------------------

@cache
def evaluations_reference() -> tuple[int, int]:
    """``(stored, inlined)``: the Laplacians computed when ``lap`` is a temp (its inferred box) and when it
    is inlined (one per access of ``res`` to ``lap``, at every point of ``res``'s box)."""
    p = shaped()
    res = _apply(p, "res")
    reads = len(_accesses(res, _arg_of(res, "%lap")))
    return _volume(_apply(p, "lap").box), reads * _volume(res.box)


def check_q4(answer: object) -> Verdict:
    stored, inlined = A.vector(answer, 2, "lap_evaluations")
    want_s, want_i = evaluations_reference()
    lines = []
    if stored != want_s:
        lines.append(f"stored: {stored} Laplacians" + (": lap is computed on its inferred box, which is larger than "
                                                     "the output" if stored == 64 * 64 * 16 else
                                                     ": the volume of lap's box (question 2)"))
    if inlined != want_i:
        lines.append(f"inlined: {inlined} Laplacians: " + ("every point of res recomputes one Laplacian per access "
                                                         "to lap" if inlined in (want_s, 64 * 64 * 16)
                                                         else "one per access of res to lap, at every output point"))
    return partial(2 - len(lines), 2, *lines)


# -- Q5: unrolling ------------------------------------------------------------------------------------------------

def unrolled_reads_reference(factor: int) -> int:
    """Distinct elements of ``u`` one apply of ``lap`` unrolled by ``factor`` along ``j`` reads (after cse):
    the union of the 5-point pattern shifted by 0 .. factor - 1 along j."""
    factor = int(factor)
    p = cse(unroll(bilap(), factor, 1))
    lap = _apply(p, "lap")
    return len({a.offset for a in _accesses(lap, _arg_of(lap, "%u"))})


def check_q5(calls: Calls) -> Verdict:
    return compare_calls(calls, unrolled_reads_reference)


# -- Q6: the lowered program, fused ---------------------------------------------------------------------------------

def _statement_of(result: str) -> str:
    """The statement of the lowered SCoP that computes the apply ``result``."""
    scop = lowering().scop
    array = dict(lowering().temps).get(f"%{result}")
    for s in scop.statements:
        if array is not None and any(a.kind == "write" and a.array == array for a in s.accesses):
            return s.name
    return scop.statements[-1].name


def _prefix(sched: Schedule, name: str, depth: int) -> isl.Set:
    stmt = sched.scop.statement(name)
    times = sched.maps[name].intersect_domain(stmt.domain).range()
    n = times.dim(isl.dim_type.set)
    return times.project_out(isl.dim_type.set, depth, n - depth) if n > depth else times


def check_q6(answer: object) -> Verdict:
    """A schedule of the lowered bi-Laplacian that fuses the two loop nests (the statements share their
    three outer loops), is legal, and keeps ``j`` and ``k`` parallel."""
    scop = lowering().scop
    sched = parse_schedule(scop, A.text(answer, "fused_schedule"))
    legal = legal_schedule(sched, what="the fused schedule")
    if not legal.correct:
        return legal
    lap, res = _statement_of("lap"), _statement_of("res")
    if _prefix(sched, lap, 3).intersect(_prefix(sched, res, 3)).is_empty():
        return wrong(f"{lap} and {res} never share their three outer loops: the nests are not fused (write both "
                     "with the loops first and the statement order last)")
    par = len(sched.parallel_dims)
    if par >= 2:
        return right()
    return partial(2, 3, f"legal and fused, but only {par} loop(s) stay parallel: shift lap by as little as the "
                         "dependences need (along i only), so that j and k carry no dependence")


LAB = Lab(
    name="lab8",
    title="The stencil dialect: applies, shapes, inlining, lowering",
    notebook="lab8_stencil.ipynb",
    questions=(
        Question("q1", 2, ("levels",), check_q1, title="the data-flow graph, level by level",
                 example='[{"lap"}, {"res"}]'),
        Question("q2", 3, ("lap_box", "load_box"), check_q2, title="shape inference by hand",
                 example="lap_box = ((0, 0, 0), (64, 64, 16))"),
        Question("q3", 2, ("u_accesses", "u_distinct"), check_q3, title="inlining: count the accesses",
                 example="u_accesses = 5; u_distinct = 5"),
        Question("q4", 2, ("lap_evaluations",), check_q4, title="what inlining recomputes",
                 example="(65536, 65536)"),
        Question("q5", 2, ("unrolled_reads",), check_q5, title="unrolling shares accesses",
                 example="def unrolled_reads(factor): ...",
                 cases=(Case((1,), "factor 1"), Case((2,), "factor 2"))),
        Question("q6", 3, ("fused_schedule",), check_q6, title="fusing the lowered nests",
                 example='"{ S0[i, j, k] -> [i, j, k, 0]; S1[i, j, k] -> [i, j, k, 1] }"'),
    ),
)
