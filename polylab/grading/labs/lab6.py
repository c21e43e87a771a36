"""Lab 6: storage (``solutions/lab6_storage.ipynb``).

On ``sl3.sy``: reads whose every source is the constant initialisation fold to that constant (the proof is
a Presburger set: the read instances whose source is the initialisation); the initialisation writes nobody
reads any more are dead; the sweep's array contracts to ``xbuf[i % m][j][k]`` with the smallest ``m`` isl
proves safe, and that modulus depends on the schedule.

The derivation (question 3) is a contraction modulus *with its proof*: the smallest ``m`` under the
interleaved schedule, and a triple of instances that refutes ``m - 1`` (a write ``w`` whose value a read ``r``
uses, and a write ``w2`` of another element into the same slot of ``xbuf`` between them in time), checked
point by point against the value-based dependences and the schedule. The construction (question 4) is a
contraction by hand: a time-iterated 1-D stencil rewritten with two rows instead of ``T``, compiled and run
against the original on the array it leaves (``out``). Question 5 reads a recorded measurement. The expected
answers come from the shipped ``sl3.sy`` through the storage layer, never from the notebook.
"""

from __future__ import annotations

import re
from functools import cache

import islpy as isl
from pycparser import c_ast, c_parser

from polylab.analysis import compute_dependences, dataflow
from polylab.grading import answers as A
from polylab.grading.checks import VERDICTS, compare_isl, compare_sets, expect, expect_verdict, memo_by_text, part
from polylab.grading.kernels import scop, sl3
from polylab.grading.lab import Lab, Question
from polylab.grading.student_code import StudentCode, candidate_program, judge_student_code, read_code
from polylab.grading.verdict import Verdict, combine, right, wrong
from polylab.model import Scop
from polylab.model.islutil import point_coordinates
from polylab.schedule import Schedule
from polylab.storage import contract, fold_live_ins, interleave, remove_dead_writes
from polylab.storage.fold import constant_writers

#: question 2: the read whose live-in instances are asked for
DIAGONAL_READ = "x[i - 1][j - 1][k - 1]"

#: question 4: a time-iterated 1-D stencil over a T x N array; only ``out`` is its result
HEAT = """double u[T][N];
double out[N];
for (t = 1; t < T; t++) {
  u[t][0] = u[t - 1][0];
  for (i = 1; i < N - 1; i++)
    u[t][i] = 0.25 * u[t - 1][i - 1] + 0.5 * u[t - 1][i] + 0.25 * u[t - 1][i + 1];
  u[t][N - 1] = u[t - 1][N - 1];
}
for (i = 0; i < N; i++)
  out[i] = u[T - 1][i];
"""
#: question 4: the sizes the hand contraction runs at (odd and even T), and the rows of N it may keep
HEAT_RUNS = ({"T": 7, "N": 12}, {"T": 8, "N": 5})
HEAT_ROWS = 2

#: question 5: runs of sl3 at n = 128 recorded on the course's development machine (2 cores, a load of 10
#: from other work; 2026-12-05 02:53 UTC; polylab.experiment.measure, repeat=10); the lab shows the same numbers
RECORDED = {
    "original (gcc -O3)": [0.104301, 0.096133, 0.085539, 0.093075, 0.103825, 0.099644, 0.098208, 0.095327,
                           0.092079, 0.082692],
    "folded + contracted": [0.06416, 0.056313, 0.072521, 0.077654, 0.080439, 0.066314, 0.061262, 0.073082, 0.078848,
                          0.091045],
    "tile wavefront + 9 planes, 2 threads": [0.08132, 0.092425, 0.084912, 0.06041, 0.081491, 0.074177, 0.079816,
                                             0.073133, 0.081727, 0.073862],
}


@cache
def reads_of_sweep() -> frozenset[str]:
    return frozenset(A.c_expression(a.text) for a in sl3().statement("S1").reads)


# -- Q1: the folded reads ----------------------------------------------------------------------------------

@cache
def _folded_reads() -> frozenset[str]:
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
            return ("such a read sees values computed by the sweep (one of its sources is S1, not the "
                    "initialisation): follow each read's value back to the write it sees")
        return "the sweep has no such read"

    # the sweep's own reads are few: naming each wrong one would let a student list all and strike out the
    # named ones, so those are counted; an entry that is no read of the sweep is named (it gives nothing away)
    return compare_sets(frozenset(given), _folded_reads(), item="folded read", why_extra=why,
                        name_extra=lambda read: read not in reads_of_sweep(),
                        missing_hint="a read folds when every source of its value is the initialisation x = 1.0")


# -- Q2: the Presburger set of a read's live-in instances --------------------------------------------------

@cache
def _diagonal_live_in() -> isl.Set:
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
    want = _diagonal_live_in()
    if given.get_tuple_name() is None and given.dim(isl.dim_type.set) == 3:
        given = given.set_tuple_name("S1")  # an unnamed tuple is fair: the question is about S1
    if not given.get_space().is_equal(want.get_space()):
        return wrong(f"diagonal_live_in lives in {given.get_space()}, not in {want.get_space()} "
                     "(the sweep's instances S1[i, j, k] and the parameter n)")
    # a missing instance is not named: each one named points at a face of the answer's union (review 2)
    when = "an instance reads the initial value when the element x[i - 1][j - 1][k - 1] is one the sweep never "
    return compare_isl(given, want, what="diagonal_live_in", element="instance",
                       explain_extra=lambda p: f"diagonal_live_in contains {p}, which it should not; {when}"
                                               "writes before that read",
                       explain_missing=lambda _p: "diagonal_live_in lacks instances whose diagonal read sees the "
                                                  f"initial value ({when}writes before that read: find every "
                                                  "way that happens)")


# -- Q3: the contraction modulus and its proof (derivation) ---------------------------------------------------

@cache
def dead_scop() -> Scop:
    folded, _ = fold_live_ins(sl3())
    return remove_dead_writes(folded, statements=list(constant_writers(folded)))[0]


@cache
def interleaved() -> Schedule:
    return interleave(dead_scop(), None)[0]


@cache
def _point_modulus() -> int:
    """The contraction modulus of ``x`` after folding, dead-write removal and interleaving."""
    return contract(dead_scop(), interleaved(), "x")[2].modulus


_INSTANCE = re.compile(r"^\s*(\w+)\s*\[\s*(-?\d+(?:\s*,\s*-?\d+)*)\s*\]\s*$")


def _instance(value: object, what: str) -> tuple[str, tuple[int, ...]]:
    text = A.text(value, what)
    m = _INSTANCE.match(text)
    if not m:
        raise A.AnswerError(f"{what} {A.describe(text)} is not an instance", hint='write it as "S1[1, 2, 3]"')
    return m.group(1), tuple(int(x) for x in m.group(2).split(","))


def _fixed(s: isl.Set | isl.Map, n: int):
    return s.intersect_params(isl.Set(f"[n] -> {{ : n = {n} }}"))


def _point_in(st_domain: isl.Set, coords: tuple[int, ...], n: int) -> bool:
    text = f"[n] -> {{ {st_domain.get_tuple_name()}[{', '.join(map(str, coords))}] : n = {n} }}"
    return not _fixed(st_domain, n).intersect(isl.Set(text)).is_empty()


def _written(name: str, coords: tuple[int, ...], n: int) -> tuple[int, ...] | None:
    st = dead_scop().statement(name)
    w = next((a for a in st.writes if a.array == "x"), None)
    if w is None:
        return None
    point = isl.Set(f"[n] -> {{ {name}[{', '.join(map(str, coords))}] : n = {n} }}")
    img = _fixed(w.relation, n).intersect_domain(point).range()
    return tuple(point_coordinates(img.sample_point())) if not img.is_empty() else None


def _element(e: tuple[int, ...]) -> str:
    return "x" + "".join(f"[{v}]" for v in e)


def _time(name: str, coords: tuple[int, ...]) -> tuple[int, ...]:
    m = interleaved().maps[name]
    point = isl.Set(f"[n] -> {{ {name}[{', '.join(map(str, coords))}] }}").align_params(m.get_space().domain())
    return tuple(point_coordinates(m.intersect_domain(point).range().sample_point()))


def _flow(w: tuple[str, tuple[int, ...]], r: tuple[str, tuple[int, ...]], n: int) -> str | None:
    """The text of the read of ``r`` whose value ``w`` wrote (value-based), or None."""
    pair = isl.Map(f"[n] -> {{ {w[0]}[{', '.join(map(str, w[1]))}] -> {r[0]}[{', '.join(map(str, r[1]))}] "
                   f": n = {n} }}")
    for d in compute_dependences(dead_scop(), value_based=True):
        if d.kind == "flow" and d.source == w[0] and d.sink == r[0]:
            if not d.relation.intersect(pair.align_params(d.relation.get_space())).is_empty():
                return d.sink_ref.text
    return None


def _refutes(triple: object, modulus: int) -> Verdict:
    """Whether ``(w, w2, r)`` shows that ``xbuf[i % modulus][j][k]`` loses a value under the interleaved
    schedule: ``w -> r`` a value-based flow, ``w2`` writes another element into the same slot, and
    ``T(w) <= T(w2) < T(r)``."""
    if not isinstance(triple, (tuple, list)) or len(triple) != 3:
        raise A.AnswerError(f"lost_value is {A.describe(triple)}, not three instances",
                            hint='write ("S1[a, b, c]", "S1[d, e, f]", "S1[g, h, l]"): writer, overwriter, reader')
    w, w2, r = (_instance(v, f"instance {k + 1} of lost_value") for k, v in enumerate(triple))
    n = max(max(c) for _, c in (w, w2, r)) + 3
    for name, coords in (w, w2, r):
        if name not in {s.name for s in dead_scop().statements} or not _point_in(
                dead_scop().statement(name).domain, coords, n):
            return wrong(f"{name}{list(coords)} is no instance of the program after folding and dead-write removal")
    read = _flow(w, r, n)
    if read is None:
        return wrong(f"{r[0]}{list(r[1])} does not read the value {w[0]}{list(w[1])} writes (value-based: the last "
                     "write of that element before the read)")
    e, e2 = _written(*w, n), _written(*w2, n)
    if e2 is None or e2 == e:
        return wrong(f"{w2[0]}{list(w2[1])} does not write another element of x: it cannot overwrite the value")
    if e2[1:] != e[1:]:
        return wrong(f"{w2[0]}{list(w2[1])} writes {_element(e2)}, which differs from {_element(e)} in j or k: "
                     "contraction along i gives them different slots whatever the number of planes")
    if (e2[0] - e[0]) % modulus:
        return wrong(f"{w2[0]}{list(w2[1])} writes {_element(e2)}, {e2[0] - e[0]} plane(s) away from {_element(e)}: "
                     "with one plane fewer than your planes, that is not a multiple of the number of planes, so the "
                     "two elements get different slots")
    tw, tw2, tr = _time(*w), _time(*w2), _time(*r)
    if not tw <= tw2 < tr:
        return wrong(f"{w2[0]}{list(w2[1])} runs at {tw2}, not between the write at {tw} and the read at {tr}: "
                     "the value is read before it is overwritten")
    return right()


def _planes(planes: object) -> Verdict:
    m = A.integer(planes, "planes")
    return expect(m, _point_modulus(),
                  (lambda g: g < _point_modulus(), "{given} plane(s) is too few: some value would be overwritten "
                                                  "before its last read (find the triple that shows it)"),
                  otherwise="{given} planes is safe but more than needed: a buffer with fewer planes still keeps "
                            "every value until its last read (a triple that refutes one plane fewer cannot exist)")


def check_q3(planes: object, lost_value: object) -> Verdict:
    """The modulus of ``xbuf[i % m][j][k]`` under the interleaved schedule (1/3) and a triple of instances
    that proves ``m - 1`` too few (2/3). A modulus is judged with its proof: while the triple does not refute
    ``m - 1`` nothing is said of ``m`` (a small integer said to be too few or too many is found in two tries)."""
    m = A.integer(planes, "planes")
    if m < 2:
        return wrong("with fewer than two planes there is no smaller modulus to refute: planes is judged with its "
                     "proof")
    proof = part(_refutes, lost_value, m - 1)
    if not proof.correct:
        return Verdict(0, proof.feedback + ("planes is judged with its proof: it counts once lost_value shows that "
                                            "planes - 1 loses a value",))
    return combine([("planes", part(_planes, planes)), ("lost_value", proof)], weights=[1, 2])


# -- Q4: contraction by hand (construction) ------------------------------------------------------------------

def _writes(code: StudentCode, array: str) -> bool:
    body = c_parser.CParser().parse(f"void f(void) {{\n{code.text}\n}}").ext[0].body

    def visit(node: c_ast.Node) -> bool:
        if isinstance(node, c_ast.Assignment):
            target = node.lvalue
            while isinstance(target, c_ast.ArrayRef):
                target = target.name
            if isinstance(target, c_ast.ID) and target.name == array:
                return True
        return any(visit(child) for _, child in node.children())

    return visit(body)


def _elements(node: c_ast.Node, values: dict[str, int]) -> int | None:
    """The value of a declared extent (integers, T, N, + - * /), or None when it is something else."""
    match node:
        case c_ast.Constant(type="int", value=v):
            return int(v.rstrip("uUlL"), 0)
        case c_ast.ID(name=n) if n in values:
            return values[n]
        case c_ast.BinaryOp(op=op, left=a, right=b) if op in "+-*/":
            x, y = _elements(a, values), _elements(b, values)
            if x is None or y is None or (op == "/" and y == 0):
                return None
            return {"+": x + y, "-": x - y, "*": x * y, "/": x // y if y else 0}[op]
    return None


def _storage(code: StudentCode) -> int | None:
    """The elements of the local arrays ``code`` declares, at T = 1000 and N = 100 (None: an extent that is
    not a plain expression)."""
    body = c_parser.CParser().parse(f"void f(void) {{\n{code.text}\n}}").ext[0].body
    total = 0
    for node in _all(body):
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.ArrayDecl):
            size, t = 1, node.type
            while isinstance(t, c_ast.ArrayDecl):
                n = _elements(t.dim, {"T": 1000, "N": 100}) if t.dim is not None else None
                if n is None:
                    return None
                size, t = size * n, t.type
            total += size
    return total


def _all(node: c_ast.Node):
    yield node
    for _, child in node.children():
        yield from _all(child)


@memo_by_text
def check_q4(heat_contracted: object) -> Verdict:
    """The heat program with ``u`` replaced by a local buffer of two rows of ``N`` (``u`` is read, never
    written), compiled and run against the original at an odd and an even ``T``; only ``out`` is compared."""
    code = read_code(heat_contracted, "heat_contracted")
    if _writes(code, "u"):
        return wrong("heat_contracted still writes u, the T x N array: keep the rows in a buffer of your own")
    size = _storage(code)
    if size is None:
        return wrong("heat_contracted declares an array whose size is not an expression of N and T: declare "
                     "double buf[2][N]")
    if size > HEAT_ROWS * 100:
        return wrong(f"heat_contracted declares {size} elements at T = 1000, N = 100: more than {HEAT_ROWS} rows of "
                     "N; the question is how few rows suffice")
    program = candidate_program(scop(HEAT), code)
    for params in HEAT_RUNS:
        run = judge_student_code(scop(HEAT), program, params=params, arrays=("out",),
                               what=f"heat_contracted at T = {params['T']}, N = {params['N']}")
        if not run.correct:
            return run
    return right()


# -- Q5: reading a measurement --------------------------------------------------------------------------------

def check_q5(tile_wavefront_vs_folded: object) -> Verdict:
    """Is the tile wavefront (2 threads) faster than the folded, contracted sweep (1 thread), slower, or not
    measurably different, in the recorded runs? (The lab's live table compares each variant with the original
    only, so it does not show this interval.)"""
    given = A.choice(tile_wavefront_vs_folded, VERDICTS, "tile_wavefront_vs_folded")
    return expect_verdict(given, RECORDED["folded + contracted"], RECORDED["tile wavefront + 9 planes, 2 threads"],
                          variant_name="the tile wavefront", baseline_name="the folded sweep")


LAB = Lab(
    name="lab6",
    title="Storage: folding, dead writes, contraction",
    notebook="lab6_storage.ipynb",
    questions=(
        Question("q1", 2, ("folded_reads",), check_q1, title="the folded reads",
                 example='{"x[i - 1][j][k]"}'),
        Question("q2", 3, ("diagonal_live_in",), check_q2, title="the live-in instances of the diagonal read",
                 example='"[n] -> { S1[i, j, k] : i = n - 2 }"'),
        Question("q3", 3, ("planes", "lost_value"), check_q3, title="the contraction modulus and its proof",
                 kind="derivation", example='5 and ("S1[1, 1, 1]", "S1[1, 1, 2]", "S1[1, 1, 3]")'),
        Question("q4", 3, ("heat_contracted",), check_q4, title="a contraction by hand", kind="construction",
                 example='"double buf[2][N];\\\\n..."'),
        Question("q5", 1, ("tile_wavefront_vs_folded",), check_q5,
                 title="is the tile wavefront faster than the folded sweep?", kind="choice",
                 example='"slower"'),
    ),
)
