"""Lab 7: the GPU, blocks and threads, coalescing, waves on the host, bytes and the roofline
(``solutions/lab7_gpu.ipynb``).

The questions are about concepts that hold whatever mapping the CUDA generator chooses: how many blocks a
grid of a given block shape needs, the stride each access takes along a warp with either loop on
``threadIdx.x`` (question 2, a derivation: six accesses, each stride counted right or wrong but never named), how
many waves (launches, or grid-wide barriers) a point wavefront needs. Question 3 is a tiled schedule, tiles as
the blocks of question 1 and the coalescing loop innermost, checked exactly with isl and run; question 4 is a CUDA
thread/block index mapping written by the student: its expressions are read and evaluated for every thread
of the grid (each iteration exactly once, nothing outside the loops, consecutive ``threadIdx.x`` on
consecutive elements), then compiled into a CPU emulation of the kernel (every thread of every block run in
turn, as CUDA would, minus the parallelism) and run against the original. The derivation (question 6) is
the footprint of one block of threads as an isl set (its halo), compared with the exact one. Question 7
reads a recorded measurement against the recorded roofs. Every expected answer is computed here, exactly,
from the lab's own copy of each program: counts and footprints with isl, memory strides from the access
matrices ``F`` and the row-major extents (sympy, symbolic in ``N``).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from fractions import Fraction
from functools import cache

import islpy as isl
import sympy
from pycparser import c_ast, c_parser

from polylab.corpus import example_path
from polylab.frontend import parse, parse_file
from polylab.grading import answers as A
from polylab.grading.checks import (compare_calls, compare_isl, expect, legal_schedule, memo_by_text, part,
                                    verified_variant)
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.grading.student_code import StudentCode, candidate_program, judge_student_code, read_code
from polylab.grading.verdict import Verdict, combine, partial, right, wrong
from polylab.model import Scop
from polylab.model.islutil import fix_parameters, parameter_values, point_coordinates, sets_of
from polylab.schedule import parse_schedule

#: one Jacobi step: both loops parallel (questions 1 and 6)
JSTEP = """double A[N][N];
double B[N][N];
for (i = 1; i < N - 1; i++)
  for (j = 1; j < N - 1; j++)
    B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
"""

#: question 2: six accesses whose strides along i and along j differ (0, 1, 2, N, N + 1, 2N, 2N + 1)
MIXED = """double y[N][N];
double a[N][N];
double b[N][2 * N];
double c[N];
double d[2 * N][N];
double e[N][2 * N];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    y[i][j] = a[j][i] + b[i][2 * j] + c[i] + d[i + j][j] + e[j][i + j];
"""

#: a kernel whose outer loop drives the stride-1 subscripts (question 3)
TRANSPOSED = """double y[N][N];
double a[N][N];
double b[N][N];
double c[N][N];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    y[j][i] = a[j][i] * b[i][j] + c[j][i];
"""

#: question 1: the size and the block shape (threads along x, along y)
GRID_N, BLOCK = 1000, (32, 8)
#: question 3: the size the tiled schedule's code runs at (a multiple of neither tile extent: partial tiles run)
TILE_RUN = {"N": 45}
#: question 4: the sizes the emulated kernel runs at, and the sizes the mapping is evaluated at, thread by thread
#: (at N = 34 the loops' extent, 32, fills the grid's blocks exactly: a mapping whose blocks start one row or
#: column before the loops' first iteration leaves the last one without a thread there)
MAPPING_RUNS, MAPPING_NS = ({"N": 40}, {"N": 45}), (40, 34)
#: question 6: the block shape (threads along x = j, along y = i)
FOOTPRINT_BLOCK = BLOCK
#: question 7: the element size, and runs of the Jacobi step (OpenMP, 2 threads, N = 2048) and of the copy
#: kernel (2 threads, 16 * 2^22 bytes per run) recorded on the course's development machine (2 cores, a load
#: of 5 from other work; 2026-12-05 03:18 UTC; measure(..., repeat=10) and measure_roofs(2, repeat=10)); the lab
#: shows the same numbers (tests/test_grading_lab7.py checks that)
ELEMENT_BYTES = 8
RECORDED_N = 2048
RECORDED = {
    "copy_bytes": 67108864,
    "copy": [0.006996, 0.006479, 0.006656, 0.006648, 0.006781, 0.007003, 0.008223, 0.006949, 0.006829, 0.00671],
    "jacobi_openmp": [0.016848, 0.015703, 0.01955, 0.018247, 0.015847, 0.015812, 0.0178, 0.017522, 0.021802,
                      0.013534],
}


@cache
def jstep() -> Scop:
    return parse(JSTEP).scop


@cache
def transposed() -> Scop:
    return parse(TRANSPOSED).scop


@cache
def mixed() -> Scop:
    return parse(MIXED).scop


@cache
def sweep2d() -> Scop:
    return parse_file(example_path("sweep2d.c")).scop


def count_points(s: isl.Set) -> int:
    """The number of integer points of a bounded set without parameters (isl counts them)."""
    return int(s.count_val().to_python())


def domain_at(scop: Scop, n: int) -> isl.Set:
    return fix_parameters(scop.statements[0].domain, {"N": n})


def values_of(s: isl.Set, dim: int) -> isl.Set:
    """The projection of ``s`` on its set dimension ``dim``: the distinct values that dimension takes."""
    n = s.dim(isl.dim_type.set)
    return s.project_out(isl.dim_type.set, dim + 1, n - dim - 1).project_out(isl.dim_type.set, 0, dim)


# -- Q1: the grid of one Jacobi step ----------------------------------------------------------------------------

@cache
def grid_reference() -> tuple[tuple[int, int], int, int]:
    """``((blocks along x, blocks along y), threads launched, iterations)`` for the Jacobi step at
    ``N = GRID_N``: ``j`` (the inner loop, stride 1) on ``x``, ``i`` on ``y``, one thread per iteration,
    ``ceil(extent / block)`` blocks along each axis."""
    dom = domain_at(jstep(), GRID_N)
    n_i, n_j = count_points(values_of(dom, 0)), count_points(values_of(dom, 1))
    grid = (-(-n_j // BLOCK[0]), -(-n_i // BLOCK[1]))
    return grid, grid[0] * grid[1] * BLOCK[0] * BLOCK[1], count_points(dom)


def _grid(grid: object) -> Verdict:
    want, _, _ = grid_reference()
    n = GRID_N - 2
    return expect(A.vector(grid, 2, "grid"), want,
                  (want[::-1], f"grid {{given}} has x and y swapped: x counts blocks along j (the loop that becomes "
                               f"threadIdx.x), {BLOCK[0]} threads wide; y counts blocks along i, {BLOCK[1]} threads "
                               "high"),
                  ((n // BLOCK[0], n // BLOCK[1]),
                   f"grid {{given}} leaves the last iterations without a thread: {n} is not a multiple of the block "
                   "size, so round the number of blocks up (a partial block is still a block)"),
                  otherwise="grid {given} is not it: count the iterations of each loop, divide by the block's extent "
                            "along that axis and round up")


def _idle(idle: object) -> Verdict:
    _, launched, work = grid_reference()
    return expect(A.integer(idle, "idle_threads"), launched - work,
                  (lambda k: k < 0, "idle_threads = {given} is negative: the grid launches at least one thread per "
                                    "iteration"),
                  otherwise="idle_threads = {given} is not it: with that many idle threads, the threads that pass "
                            "the bounds guard would not be exactly one per iteration of the two loops")


def check_q1(grid: object, idle_threads: object) -> Verdict:
    """The grid ``(blocks along x, blocks along y)`` and the number of threads that fail the bounds guard."""
    return combine([("grid", part(_grid, grid)), ("idle_threads", part(_idle, idle_threads))])


# -- Q2 and Q3: coalescing ------------------------------------------------------------------------------------

def memory_stride(scop: Scop, access, iterator: str) -> sympy.Expr:
    """The distance in elements between the addresses that ``access`` touches at ``x`` and at ``x + e_k``
    (``k`` the position of ``iterator``): for a row-major array of extents ``E_0 .. E_{r-1}`` and the
    access ``F x + c``, ``sum_d F[d][k] * E_{d+1} * ... * E_{r-1}`` (symbolic in the parameters)."""
    stmt = next(s for s in scop.statements if access in s.accesses)
    k = stmt.iterators.index(iterator)
    names = {p: sympy.Symbol(p) for p in scop.parameters}
    extents = [sympy.sympify(e, locals=names) for e in scop.array(access.array).extents]
    F = access.matrix
    return sympy.expand(sum((F[d, k] * sympy.prod(extents[d + 1:]) for d in range(len(extents))),
                            sympy.Integer(0)))


def coalesced_accesses(scop: Scop, iterator: str) -> frozenset[str]:
    """The texts of the accesses whose neighbouring threads touch neighbouring elements (stride 1) or the
    same element (stride 0, a broadcast) when ``iterator`` drives ``threadIdx.x``."""
    return frozenset(A.c_expression(a.text) for _, a in scop.accesses()
                     if memory_stride(scop, a, iterator) in (0, 1, -1))


def best_x_loop(scop: Scop) -> str:
    """The loop whose use as ``threadIdx.x`` coalesces the most accesses."""
    its = scop.statements[0].iterators
    return max(its, key=lambda it: (len(coalesced_accesses(scop, it)), -its.index(it)))


def _stride_value(value: object, what: str) -> sympy.Expr:
    """A stride as given: an int, or text / a sympy expression in ``N``."""
    if isinstance(value, bool):
        raise A.AnswerError(f"{what} is a bool", hint="write a number of elements, e.g. 3 or \"2 * N + 1\"")
    if isinstance(value, int):
        return sympy.Integer(value)
    n = sympy.Symbol("N")
    try:
        expr = sympy.sympify(value if isinstance(value, sympy.Basic) else A.text(value, what), locals={"N": n})
    except (sympy.SympifyError, SyntaxError, TypeError):
        raise A.AnswerError(f"{what} {A.describe(value)} is not an expression in N",
                            hint="write e.g. 3, \"N\" or \"2 * N + 1\"") from None
    if not isinstance(expr, sympy.Expr) or expr.free_symbols - {n}:
        raise A.AnswerError(f"{what} {A.describe(value)} is not an expression in N",
                            hint="the only symbol a stride may use is N, the arrays' extent")
    return sympy.expand(expr)


def _strides(answer: object, loop: str, what: str) -> Verdict:
    """``{access text: stride}`` for every access of ``MIXED`` with ``loop`` on ``threadIdx.x``, against
    :func:`memory_stride`. A wrong stride is counted, never named (naming it, the six accesses would be a
    search one entry at a time); an access the statement lacks is named. Partial credit ``(right - wrong) /
    accesses``: a guessed dictionary earns nothing."""
    scop = mixed()
    if not isinstance(answer, dict):
        raise A.AnswerError(f"{what} is {A.describe(answer)}, not a dictionary",
                            hint='write { "y[i][j]": ..., "a[j][i]": ..., ... }: one stride per access')
    want = {A.c_expression(a.text): memory_stride(scop, a, loop) for _, a in scop.accesses()}
    lines, right_n, bad, unknown = [], 0, 0, 0
    for key, value in answer.items():
        t = A.c_expression(key, "an access")
        if t not in want:
            lines.append(f"{A.describe(key)}: the statement has no such access (write it as in the source, e.g. "
                         "a[j][i])")
            unknown += 1
        elif sympy.expand(_stride_value(value, f"the stride of {t}") - want[t]) == 0:
            right_n += 1
        else:
            bad += 1
    if bad:
        lines.append(f"{bad} of your strides along {loop} {'is' if bad == 1 else 'are'} wrong: the stride is the "
                     f"step in elements from the element at {loop} to the one at {loop} + 1, the column of {loop} "
                     "in F weighted by the row-major extents")
    missing = len(want) - right_n - bad
    if missing:
        lines.append(f"{missing} of the statement's {len(want)} accesses {'has' if missing == 1 else 'have'} no "
                     "stride in your dictionary (the write counts too)")
    if not lines:
        return right()
    return partial(right_n - bad - unknown, len(want), *lines)


def check_q2(strides_i: object, strides_j: object) -> Verdict:
    """The stride in elements of each access of ``MIXED`` (reads and the write) between neighbouring threads
    when ``i`` drives ``threadIdx.x``, and when ``j`` does: ``sum_d F[d][k] * E_{d+1} * ... * E_{r-1}``
    (:func:`memory_stride`), symbolic in ``N``."""
    return combine([("strides_i", part(_strides, strides_i, "i", "strides_i")),
                    ("strides_j", part(_strides, strides_j, "j", "strides_j"))])


def _loop_dims(m: isl.Map, keep: Sequence[int]) -> isl.Map:
    """``m`` (instance -> time) with only the output dimensions ``keep``, in their order."""
    for k in reversed(range(m.dim(isl.dim_type.out))):
        if k not in keep:
            m = m.project_out(isl.dim_type.out, k, 1)
    return m


@cache
def block_tiles() -> isl.Map:
    """The instances of the transposed kernel that one block of question 1's shape runs together: ``x`` -> ``y``
    when both lie in one tile of ``BLOCK[0]`` consecutive values of the coalescing loop (the loop on
    ``threadIdx.x``, :func:`best_x_loop`) by ``BLOCK[1]`` of the other, tiles aligned at 0 like the blocks."""
    scop = transposed()
    stmt = scop.statements[0]
    x = best_x_loop(scop)
    size = {it: BLOCK[0] if it == x else BLOCK[1] for it in stmt.iterators}
    primed = [f"{it}2" for it in stmt.iterators]
    same = " and ".join(f"floor({it}/{size[it]}) = floor({p}/{size[it]})" for it, p in zip(stmt.iterators, primed))
    rel = isl.Map(f"[N] -> {{ {stmt.name}[{', '.join(stmt.iterators)}] -> {stmt.name}[{', '.join(primed)}] : {same} }}")
    return rel.intersect_domain(stmt.domain).intersect_range(stmt.domain)


def _tile_mistake(m: isl.Map) -> str | None:
    """What is wrong with the tiles of ``m`` (four loop dimensions): the instances that share its two outer
    times must be exactly the iterations of one block (:func:`block_tiles`). Told by the tile that holds the
    first iteration, at ``N = 64`` (its size and its extent along each loop), or, when that one is a block's, by
    two iterations that one of them separates and the other does not; never the shape it should have."""
    outer = _loop_dims(m, (0, 1))
    same = outer.apply_range(outer.reverse())
    want = block_tiles()
    if same.is_equal(want):
        return None
    stmt = transposed().statements[0]
    at = {"N": 64}
    origin = isl.Set(f"[N] -> {{ {stmt.name}[{', '.join('0' for _ in stmt.iterators)}] }}")
    tile = fix_parameters(same.intersect_domain(origin).range(), at)
    block = (f"a block of {BLOCK[0]} x {BLOCK[1]} threads runs one tile, one iteration per thread, {BLOCK[0]} "
             f"threads along x (a warp) and {BLOCK[1]} along y, so the tiles of the two outer loops must be the "
             f"blocks: {BLOCK[0]} consecutive iterations of the loop on threadIdx.x by {BLOCK[1]} of the other, "
             "aligned at 0 like the grid's blocks")
    if not tile.is_equal(fix_parameters(want.intersect_domain(origin).range(), at)):
        extents = []
        for k, it in enumerate(stmt.iterators):
            values = values_of(tile, k)
            lo, hi = (point_coordinates(v.sample_point())[0] for v in (values.lexmin(), values.lexmax()))
            extents.append(f"{it} from {lo} to {hi}")
        size = count_points(tile)
        return (f"the tile of your schedule that holds (i, j) = (0, 0) (the iterations with its two outer times, "
                f"at N = 64) holds {size} iteration{'s' if size != 1 else ''}, {' and '.join(extents)}: {block}")
    apart = same.subtract(want)
    point = (apart if not apart.is_empty() else want.subtract(same)).wrap().sample_point()
    coords, n = point_coordinates(point), parameter_values(point)["N"]
    x, y = tuple(coords[:len(stmt.iterators)]), tuple(coords[len(stmt.iterators):])
    together = "share a tile of your schedule but no block" if not apart.is_empty() else \
        "share a block but not a tile of your schedule"
    return f"the iterations (i, j) = {x} and {y} {together} (at N = {n}): {block}"


def _innermost_mistake(scop: Scop, m: isl.Map, expression: str) -> str | None:
    """What a warp does when the innermost loop of ``m`` (instance -> its loop times; written ``expression``)
    becomes ``threadIdx.x``: right when consecutive values of that loop step the coalescing loop by one (up or
    down) and nothing else. A wrong one is told the step it takes and what that costs a warp, never which
    accesses coalesce (that is question 2's answer)."""
    stmt = scop.statements[0]
    n = m.dim(isl.dim_type.out)
    ts = [f"t{k}" for k in range(n)]
    stepped = ", ".join(t + (" + 1" if k == n - 1 else "") for k, t in enumerate(ts))
    step = isl.Map(f"{{ [{', '.join(ts)}] -> [{stepped}] }}")
    deltas = m.apply_range(step.align_params(m.get_space())).apply_range(m.reverse()).deltas()
    if deltas.is_empty():
        return (f"your innermost loop ({expression}) skips values, so threadIdx.x would not map to it one to one: "
                "write the loop that becomes threadIdx.x itself as the innermost dimension")
    x = best_x_loop(scop)
    d = point_coordinates(deltas.sample_point())
    moved = [k for k, v in enumerate(d) if v]
    if deltas.is_singleton() and len(moved) == 1 and abs(d[moved[0]]) == 1:
        it = stmt.iterators[moved[0]]
        if it == x:
            return None
        return (f"your innermost loop ({expression}) steps {it}: on threadIdx.x, neighbouring threads of a warp "
                f"take neighbouring values of {it}, which is not the loop that coalesces the most of the "
                "statement's accesses (work it out as in question 2), so a warp's loads and stores move more 32-byte sectors than "
                "they must")
    step_text = f"by {tuple(d)}" if deltas.is_singleton() else "differently at different points"
    return (f"your innermost loop ({expression}) moves ({', '.join(stmt.iterators)}) {step_text} from one "
            "iteration to the next: neighbouring threads of a warp would touch elements more than one apart")


@memo_by_text
def check_q3(answer: object) -> Verdict:
    """A tiled schedule of the transposed kernel (isl text or steps) whose tiles are the blocks of question 1's
    shape and whose innermost point loop is the coalescing loop: legal, one-to-one, four loop dimensions, the
    iterations that share the two outer ones exactly one block's (:func:`block_tiles`), consecutive values of
    the innermost one a step of the coalescing loop (so a warp's consecutive ``threadIdx.x`` take consecutive
    iterations of it), and its code compiled and run against the original (partial tiles included)."""
    scop = transposed()
    sched = parse_schedule(scop, A.text(answer, "coalesced_schedule"))
    legal = legal_schedule(sched)
    if not legal.correct:
        return legal
    stmt = scop.statements[0]
    m = _loop_dims(sched.maps[stmt.name].intersect_domain(stmt.domain), sched.loop_dims)
    if not m.is_injective():
        return wrong("two iterations of your schedule run at the same time step: give every iteration its own "
                     "time vector (the tile loops say which tile, the point loops which iteration of it)")
    loops = m.dim(isl.dim_type.out)
    if loops != 4:
        return wrong(f"your schedule has {loops} loop dimension(s): a tiled schedule of a 2-D nest has four, two "
                     "tile loops (which block) outside two point loops (which thread of the block)")
    lines = [line for line in (_tile_mistake(m), _innermost_mistake(scop, m, sched.expressions(stmt.name)[
        sched.loop_dims[-1]])) if line]
    if lines:
        return wrong(*lines)
    return verified_variant(scop, sched, params=TILE_RUN, what="the code of your tiled schedule")


# -- footprints of the Jacobi step ---------------------------------------------------------------------------

@cache
def footprints(n: int) -> tuple[int, int, int]:
    """``(distinct elements read, distinct elements written, accesses executed)`` of the Jacobi step at
    ``N = n``: the images of the domain under the read and the write relations (isl counts them)."""
    scop = jstep()
    dom = isl.UnionSet.from_set(domain_at(scop, n))
    read = fix_parameters(scop.reads.intersect_domain(dom).range(), {"N": n})
    written = fix_parameters(scop.writes.intersect_domain(dom).range(), {"N": n})
    size = lambda u: sum(count_points(s) for s in sets_of(u))  # noqa: E731
    accesses = count_points(domain_at(scop, n)) * sum(1 for _ in scop.accesses())
    return size(read), size(written), accesses


# -- Q4: a CUDA index mapping, evaluated thread by thread and emulated (construction) ------------------------

#: the CUDA variables of an index mapping and the statement of the Jacobi step, as the emulation runs it
_CUDA_VARIABLES = ("blockIdx", "threadIdx", "blockDim", "gridDim")
_JSTEP_BODY = "B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);"
_DIM3_C = "typedef struct { int x, y, z; } polylab_dim3;\n"


def _expression(value: object, what: str, names: tuple[str, ...] = ()) -> c_ast.Node:
    """A C expression of the mapping, vetted (arithmetic, comparisons, the CUDA index variables, N, min, max
    and ``names``): its pycparser tree."""
    wrapper = "polylab_value = ("
    try:
        code = read_code(f"{wrapper}{A.text(value, what)});", what, cuda=True)
    except A.AnswerError as err:   # name the column in the student's own expression
        message = re.sub(r"line 1, column (\d+)", lambda m: f"column {max(1, int(m.group(1)) - len(wrapper))}",
                         err.message)
        raise A.AnswerError(message, hint=err.hint or "") from None
    tree = c_parser.CParser().parse(f"void f(void) {{ {code.text} }}").ext[0].body.block_items[0].rvalue
    for node in _nodes(tree):
        if isinstance(node, (c_ast.Assignment, c_ast.FuncCall)) and not (
                isinstance(node, c_ast.FuncCall) and node.name.name in ("min", "max")):
            raise A.AnswerError(f"{what} is not a plain expression", hint="write an expression such as "
                                "blockIdx.x * blockDim.x + threadIdx.x + 1")
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--", "&", "*", "sizeof"):
            raise A.AnswerError(f"{what} uses {node.op}", hint="write arithmetic only")
        if isinstance(node, c_ast.ID) and node.name not in ("N", "min", "max", *_CUDA_VARIABLES, *names):
            raise A.AnswerError(f"{what} uses {node.name}", hint="use blockIdx, threadIdx, blockDim, gridDim and N"
                                + (f" (and {', '.join(names)})" if names else ""))
    return tree


def _nodes(node: c_ast.Node):
    """``node`` and its descendants, without the field names of ``blockIdx.x`` and the like."""
    yield node
    for name, child in node.children():
        if not (isinstance(node, c_ast.StructRef) and name == "field"):
            yield from _nodes(child)


def _c_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _eval(node: c_ast.Node, env: dict) -> int:
    """``node`` evaluated with C's integer arithmetic (``/`` and ``%`` truncate toward zero)."""
    match node:
        case c_ast.Constant(value=v):
            return int(v.rstrip("uUlL"), 0)
        case c_ast.ID(name=n):
            return env[n]
        case c_ast.StructRef(name=c_ast.ID(name=n), field=c_ast.ID(name=f)):
            return env[n][f]
        case c_ast.UnaryOp(op=op, expr=e):
            v = _eval(e, env)
            return {"-": -v, "+": v, "!": int(not v), "~": ~v}[op]
        case c_ast.TernaryOp(cond=c, iftrue=a, iffalse=b):
            return _eval(a, env) if _eval(c, env) else _eval(b, env)
        case c_ast.FuncCall(name=c_ast.ID(name=fn), args=c_ast.ExprList(exprs=[a, b])):
            return (min if fn == "min" else max)(_eval(a, env), _eval(b, env))
        case c_ast.BinaryOp(op=op, left=a, right=b):
            x = _eval(a, env)
            if op == "&&":
                return int(bool(x) and bool(_eval(b, env)))
            if op == "||":
                return int(bool(x) or bool(_eval(b, env)))
            y = _eval(b, env)
            ops = {"+": x + y, "-": x - y, "*": x * y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y,
                   "==": x == y, "!=": x != y}
            if op in ops:
                return int(ops[op])
            if op == "/":
                return _c_div(x, y)
            if op == "%":
                return x - _c_div(x, y) * y
    raise A.AnswerError(f"the mapping uses an expression polylab does not evaluate ({type(node).__name__})",
                        hint="write + - * / %, comparisons, && || and min/max")


def _threads(n: int):
    """``(env, (bx, by), (tx, ty))`` for every thread of the grid of question 1's shape at ``N = n``."""
    grid = (-(-(n - 2) // BLOCK[0]), -(-(n - 2) // BLOCK[1]))
    dims = {"blockDim": {"x": BLOCK[0], "y": BLOCK[1], "z": 1}, "gridDim": {"x": grid[0], "y": grid[1], "z": 1}}
    for by in range(grid[1]):
        for bx in range(grid[0]):
            for ty in range(BLOCK[1]):
                for tx in range(BLOCK[0]):
                    yield ({**dims, "N": n, "blockIdx": {"x": bx, "y": by, "z": 0},
                            "threadIdx": {"x": tx, "y": ty, "z": 0}}, (bx, by), (tx, ty))


def _thread(block: tuple[int, int], thread: tuple[int, int]) -> str:
    return f"the thread blockIdx = ({block[0]}, {block[1]}), threadIdx = ({thread[0]}, {thread[1]})"


def _coverage(i_e: c_ast.Node, j_e: c_ast.Node, guard: c_ast.Node, n: int) -> list[str]:
    """Each iteration ``1 <= i, j <= n - 2`` computed by exactly one thread that passes the guard, and no
    thread outside the loops passing it: the first failure of each kind, as feedback."""
    owner: dict[tuple[int, int], tuple] = {}
    lines: list[str] = []
    try:
        for env, block, thread in _threads(n):
            ij = (_eval(i_e, env), _eval(j_e, env))
            if not _eval(guard, {**env, "i": ij[0], "j": ij[1]}):
                continue
            if not (1 <= ij[0] <= n - 2 and 1 <= ij[1] <= n - 2):
                lines.append(f"{_thread(block, thread)} passes the guard with (i, j) = {ij} at N = {n}, outside "
                             "the loops: it would write outside B's interior")
                break
            if ij in owner:
                lines.append(f"{_thread(*owner[ij])} and {_thread(block, thread)} both compute (i, j) = {ij}: two "
                             "threads write the same element")
                break
            owner[ij] = (block, thread)
    except ZeroDivisionError:
        return ["the mapping divides by zero for some thread"]
    missing = [(i, j) for i in range(1, n - 1) for j in range(1, n - 1) if (i, j) not in owner]
    if missing and not lines:
        lines.append(f"no thread passes the guard with (i, j) = {missing[0]} at N = {n}: that iteration never runs")
    return lines


def _coalescing(i_e: c_ast.Node, j_e: c_ast.Node, n: int) -> Verdict:
    """Consecutive ``threadIdx.x`` of one warp on consecutive ``j`` and the same ``i``."""
    warp = [env for env, block, thread in _threads(n) if block == (0, 0) and thread[1] == 0]
    got = [(_eval(i_e, env), _eval(j_e, env)) for env in warp]
    for (a, b), (c, d) in zip(got, got[1:]):
        if c != a or d - b != 1:
            return wrong(f"threads threadIdx.x = {got.index((a, b))} and {got.index((a, b)) + 1} of a warp compute "
                         f"(i, j) = {(a, b)} and {(c, d)}: they write B[{a}][{b}] and B[{c}][{d}], not neighbouring "
                         "elements, so a warp's accesses are not coalesced")
    return right()


def _emulation(i_text: str, j_text: str, guard_text: str) -> str:
    """The kernel emulated on the CPU: every thread of every block of the grid, in turn, computes its
    ``(i, j)`` with the student's expressions and runs the statement when it passes the guard (and, so that
    a wrong mapping cannot write outside the array, when ``(i, j)`` lies in the loops)."""
    return f"""const polylab_dim3 blockDim = {{{BLOCK[0]}, {BLOCK[1]}, 1}};
const polylab_dim3 gridDim = {{(N - 2 + {BLOCK[0] - 1}) / {BLOCK[0]}, (N - 2 + {BLOCK[1] - 1}) / {BLOCK[1]}, 1}};
for (int polylab_by = 0; polylab_by < gridDim.y; polylab_by++)
  for (int polylab_bx = 0; polylab_bx < gridDim.x; polylab_bx++)
    for (int polylab_ty = 0; polylab_ty < blockDim.y; polylab_ty++)
      for (int polylab_tx = 0; polylab_tx < blockDim.x; polylab_tx++) {{
        const polylab_dim3 blockIdx = {{polylab_bx, polylab_by, 0}};
        const polylab_dim3 threadIdx = {{polylab_tx, polylab_ty, 0}};
        const int i = ({i_text});
        const int j = ({j_text});
        if (({guard_text}) && i >= 1 && i < N - 1 && j >= 1 && j < N - 1)
          {_JSTEP_BODY}
      }}"""


@memo_by_text
def _mapping_key(key: str) -> Verdict:
    i_text, j_text, guard_text = key.split("\x00")
    i_e = _expression(i_text, "the expression of i")
    j_e = _expression(j_text, "the expression of j")
    g_e = _expression(guard_text, "the guard", ("i", "j"))
    for n in MAPPING_NS:
        lines = _coverage(i_e, j_e, g_e, n)
        if lines:
            return wrong(*lines)
    coalesced = _coalescing(i_e, j_e, MAPPING_NS[0])
    code = StudentCode(_emulation(i_text, j_text, guard_text), (), frozenset())
    program = candidate_program(jstep(), code, extra=_DIM3_C)
    run = right()
    for params in MAPPING_RUNS:
        run = judge_student_code(jstep(), program, params=params, what=f"the emulated kernel at N = {params['N']}")
        if not run.correct:
            break
    return combine([("every iteration once", right()), ("coalescing", coalesced), ("the emulated run", run)])


def check_q4(cuda_mapping: object) -> Verdict:
    """``{"i": ..., "j": ..., "guard": ...}``: C expressions of the CUDA index variables (and ``N``) for the
    Jacobi step on a grid of 32 x 8 blocks. Nothing unless every iteration runs exactly once and nothing outside
    the loops (1/3), then coalescing (1/3) and the CPU emulation run against the original (1/3)."""
    if not isinstance(cuda_mapping, dict):
        raise A.AnswerError(f"cuda_mapping is {A.describe(cuda_mapping)}, not a dictionary",
                            hint='write {"i": "...", "j": "...", "guard": "..."}, each a C expression')
    keys = {str(k).strip(): v for k, v in cuda_mapping.items()}
    missing = [k for k in ("i", "j", "guard") if k not in keys]
    if missing:
        raise A.AnswerError(f"cuda_mapping has no {', '.join(repr(m) for m in missing)}",
                            hint='write {"i": "...", "j": "...", "guard": "..."}')
    texts = [A.text(keys[k], f"cuda_mapping[{k!r}]") for k in ("i", "j", "guard")]
    if any("\x00" in t for t in texts):
        raise A.AnswerError("cuda_mapping holds a NUL character")
    return _mapping_key("\x00".join(texts))


# -- Q5: waves of the point wavefront ------------------------------------------------------------------------

def point_waves_reference(n: int) -> int:
    """The number of waves of the point wavefront of sweep2d at ``N = n`` (one launch each, or one grid-wide
    barrier each in a cooperative kernel): the distinct values of the wavefront's first dimension over the
    domain (isl counts them)."""
    scop = sweep2d()
    sched = parse_schedule(scop, "wavefront")
    stmt = scop.statements[0]
    times = fix_parameters(sched.maps[stmt.name].intersect_domain(stmt.domain), {"N": int(n)}).range()
    return count_points(values_of(times, 0))


def check_q5(calls: Calls) -> Verdict:
    return compare_calls(calls, point_waves_reference)


# -- Q6: the footprint of one block (derivation) --------------------------------------------------------------

@cache
def block_footprint(first: int = 1) -> tuple[isl.Set, isl.Set]:
    """``(footprint, context)``: the elements of ``A`` the threads of block ``(bx, by)`` read (``j`` on x, ``i``
    on y, ``i = 8 by + ty + first``, ``j = 32 bx + tx + first``: block ``(0, 0)`` starts at the loops' first
    iteration ``(1, 1)`` when ``first = 1``, the question's mapping), for the blocks whose threads all pass the
    guard of the question's mapping (the context: ``8 by + 9 <= N - 1`` and ``32 bx + 33 <= N - 1``), by isl."""
    bx, by = FOOTPRINT_BLOCK
    its = isl.Set(f"[N, bx, by] -> {{ S0[i, j] : bx >= 0 and by >= 0 and {by} by + {first} <= i <= {by} by + "
                  f"{by + first - 1} and {bx} bx + {first} <= j <= {bx} bx + {bx + first - 1} }}")
    st = jstep().statements[0]
    dom = st.domain.align_params(its.get_space()).intersect(its)
    reads = None
    for acc in st.reads:
        rel = acc.relation.align_params(its.get_space())
        reads = rel if reads is None else reads.union(rel)
    context = isl.Set(f"[N, bx, by] -> {{ : bx >= 0 and by >= 1 - {first} and bx >= 1 - {first} and {by} by + "
                      f"{by + 1} <= N - 1 and {bx} bx + {bx + 1} <= N - 1 }}")
    return reads.intersect_domain(dom).range().intersect_params(context).coalesce(), context


def _reader(point: isl.Point) -> str:
    """A thread that reads the element ``point`` of ``A`` in its block, as text."""
    a, b = point_coordinates(point)
    params = dict(parameter_values(point))
    for di, dj in ((0, 0), (0, 1), (0, -1), (-1, 0), (1, 0)):
        i, j = a + di, b + dj       # the instance (i, j) whose read A[i - di][j - dj] is this element
        ty, tx = i - 1 - FOOTPRINT_BLOCK[1] * params["by"], j - 1 - FOOTPRINT_BLOCK[0] * params["bx"]
        if 0 <= ty < FOOTPRINT_BLOCK[1] and 0 <= tx < FOOTPRINT_BLOCK[0]:
            return f"threadIdx = ({tx}, {ty}) (the iteration (i, j) = ({i}, {j})) reads it"
    return ""


def check_q6(block_reads: object) -> Verdict:
    """The elements of ``A`` one block of 32 x 8 threads reads, ``[N, bx, by] -> { A[a, b] : ... }``, compared
    with the exact set for the blocks that lie inside the loops."""
    given = A.isl_set(block_reads, "block_reads")
    want, context = block_footprint()
    if given.get_tuple_name() is None and given.dim(isl.dim_type.set) == 2:
        given = given.set_tuple_name("A")
    if given.get_space().is_equal(want.get_space()):
        given = given.intersect_params(context)
        unshifted, inside = block_footprint(0)      # compared on the blocks inside the loops under both mappings
        common = given.intersect_params(inside)
        if not common.is_empty() and common.is_equal(unshifted.intersect_params(context)):
            return wrong("your set is the footprint of a mapping whose block (bx, by) starts one row and one column "
                         "earlier than the question's (its block (0, 0) would start at (i, j) = (0, 0), outside the "
                         "loops): in the question, block (0, 0) runs the loops' first 8 rows and first 32 columns")
    return compare_isl(given, want, what="block_reads", space_hint="the elements A[a, b] and the parameters N, bx, "
                                                                   "by, in that order",
                       explain_extra=lambda p: f"your set holds A{list(point_coordinates(p))} at {_at(p)}, which no "
                                               "thread of that block reads",
                       explain_missing=lambda p: f"your set lacks A{list(point_coordinates(p))} at {_at(p)}: "
                                                 f"{_reader(p)}")


def _at(p: isl.Point) -> str:
    return ", ".join(f"{k} = {v}" for k, v in parameter_values(p).items())


# -- Q7: reading a measurement against the roofs ----------------------------------------------------------------

#: the relative tolerance of question 7: tight enough that a byte count off by one row of elements per array (a
#: relative error of 2 / N, 0.1 % at N = 2048) is refused, loose enough for five significant digits
Q7_TOLERANCE = 3e-4


def byte_counts(n: int) -> dict[str, int]:
    """The bytes one step at ``N = n`` moves (``"right"``: each distinct element of ``A`` read and of ``B``
    written once, by isl), and the plausible wrong counts, each named by the mistake its feedback explains."""
    read, written, accesses = footprints(n)
    return {"right": ELEMENT_BYTES * (read + written),
            "grid": 2 * ELEMENT_BYTES * n * n,
            "no halo": 2 * ELEMENT_BYTES * written,
            "write-allocate": ELEMENT_BYTES * (read + 2 * written),
            "accesses": ELEMENT_BYTES * accesses,
            "reads only": ELEMENT_BYTES * read,
            "writes only": ELEMENT_BYTES * written,
            "corners": ELEMENT_BYTES * (n * n + written)}


#: what a wrong byte count did, never the right count
_COUNT_MISTAKES = {
    "grid": "counts every point of the N x N grid in both arrays; count only the distinct elements the step "
            "actually reads and writes",
    "no halo": "counts, in A, only the elements at the points the step computes; the step reads more of A than that",
    "write-allocate": "counts the elements of B twice (a write-allocate read and the write); the question counts "
                      "each distinct element once",
    "accesses": "counts every access the step executes, not each distinct element once",
    "reads only": "leaves out the elements of B that the step writes",
    "writes only": "leaves out the elements of A that the step reads",
    "corners": "counts the four corners of A, which no point of the step reads",
}


def recorded_rates(count: str = "right", centre=statistics.median) -> tuple[float, float]:
    """``(achieved GB/s of the recorded OpenMP Jacobi step, its share of the recorded copy bandwidth)``, from
    the runs' ``centre`` (the median) and the bytes of :func:`byte_counts` (``count``: the right one, each
    distinct element read or written once, or a named wrong one)."""
    moved = byte_counts(RECORDED_N)[count]
    gbs = moved / centre(RECORDED["jacobi_openmp"]) / 1e9
    copy = RECORDED["copy_bytes"] / centre(RECORDED["copy"]) / 1e9
    return gbs, gbs / copy


def _close(given: Fraction, want: float, tolerance: float = Q7_TOLERANCE) -> bool:
    return abs(float(given) - want) <= tolerance * abs(want)


def _rate_mistake(got: Fraction, which: int) -> str | None:
    """The named mistake whose rate (``which``: 0 the GB/s, 1 the share) ``got`` is, or None."""
    for count, mistake in _COUNT_MISTAKES.items():
        if _close(got, recorded_rates(count)[which]):
            return f"follows from a byte count that {mistake}"
    if _close(got, recorded_rates(centre=statistics.mean)[which]):
        return "uses the mean of the runs; the question reads their median (one slow run moves the mean)"
    return None


def _gbs(answer: object) -> Verdict:
    got = A.rational(answer, "jacobi_gbs")
    want, _ = recorded_rates()
    if _close(got, want):
        return right()
    if _close(got / 1e9, want, 0.02) or _close(got / 1e3, want, 0.02):
        return wrong(f"{float(got):.3g} is not in GB/s (10^9 bytes per second)")
    mistake = _rate_mistake(got, 0)
    if mistake:
        return wrong(f"jacobi_gbs {mistake}")
    return wrong(f"{float(got):.3g} GB/s does not follow from the bytes one step must move at N = {RECORDED_N} (each "
                 "distinct element of A read and of B written, 8 bytes) and the median of the recorded runs (the "
                 "check allows 0.03 %)")


def _share(answer: object, gbs: object) -> Verdict:
    got = A.rational(answer, "bandwidth_share")
    want = recorded_rates()[1]
    if _close(got, want):
        return right()
    if _close(got / 100, want, 0.02):
        return wrong(f"{float(got):g} is a percentage; give the share as a fraction (0.5 for half)")
    mistake = _rate_mistake(got, 1)
    if mistake:
        return wrong(f"bandwidth_share {mistake}")
    return wrong(f"{float(got):.3g} is not the recorded Jacobi step's GB/s divided by the recorded copy bandwidth "
                 "(copy_bytes / median copy time; the check allows 0.03 %)")


def _bytes(answer: object) -> Verdict:
    """The bytes one step moves at ``N = RECORDED_N``, exactly: a count off by a few elements (the corners of
    ``A``) changes the GB/s by less than any tolerance a typed rate allows (review 3: the corners' 32 bytes
    in 67 MB were accepted), so the count itself is asked for and compared as an integer."""
    got = A.integer(answer, "jacobi_bytes")
    counts = byte_counts(RECORDED_N)
    if got == counts["right"]:
        return right()
    named = next((m for k, m in _COUNT_MISTAKES.items() if counts[k] == got), None)
    if named:
        return wrong(f"jacobi_bytes = {got} {named}")
    if got == counts["right"] // ELEMENT_BYTES:
        return wrong(f"jacobi_bytes = {got} counts elements, not bytes (8 bytes each)")
    return wrong(f"jacobi_bytes = {got} is not the number of bytes one step moves at N = {RECORDED_N}: each "
                 "distinct element of A that some point reads and of B that the step writes, 8 bytes each")


def check_q7(jacobi_bytes: object, jacobi_gbs: object, bandwidth_share: object) -> Verdict:
    """The bytes one step moves (exact), the GB/s the recorded OpenMP Jacobi step reaches and its share of the
    recorded copy bandwidth, each rate within 0.03 % (:data:`Q7_TOLERANCE`), so that the byte counts of
    :func:`byte_counts` that are wrong by a row of elements are told apart from the right one; a third each."""
    return combine([("jacobi_bytes", part(_bytes, jacobi_bytes)), ("jacobi_gbs", part(_gbs, jacobi_gbs)),
                    ("bandwidth_share", part(_share, bandwidth_share, jacobi_gbs))])


LAB = Lab(
    name="lab7",
    title="The GPU: blocks, threads, coalescing, waves, bytes",
    notebook="lab7_gpu.ipynb",
    questions=(
        Question("q1", 2, ("grid", "idle_threads"), check_q1, title="the grid of one Jacobi step",
                 example="grid = (4, 2); idle_threads = 17"),
        Question("q2", 3, ("strides_i", "strides_j"), check_q2, title="the strides a warp takes",
                 kind="derivation", example='strides_i = {"x[i][j]": 7}; strides_j = {}'),
        Question("q3", 2, ("coalesced_schedule",), check_q3, title="a tiled schedule that coalesces",
                 kind="construction", example='"{ S0[i, j] -> [floor(i / 4), floor(j / 4), i, j] }"'),
        Question("q4", 3, ("cuda_mapping",), check_q4, title="a CUDA index mapping, emulated",
                 kind="construction", example='{"i": "threadIdx.y", "j": "threadIdx.x", "guard": "1"}'),
        Question("q5", 2, ("point_waves",), check_q5, title="waves of the point wavefront",
                 example="def point_waves(N): ...",
                 cases=(Case((4,), "N = 4"), Case((100,), "N = 100"))),
        Question("q6", 3, ("block_reads",), check_q6, title="the elements one block reads", kind="derivation",
                 example='"[N, bx, by] -> { A[a, b] : 0 <= a < N and 0 <= b < N }"'),
        Question("q7", 2, ("jacobi_bytes", "jacobi_gbs", "bandwidth_share"), check_q7,
                 title="the Jacobi step against its roof",
                 example="jacobi_bytes = 1000; jacobi_gbs = 1.5; bandwidth_share = 0.9"),
    ),
)
