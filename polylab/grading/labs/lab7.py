"""Lab 7: the GPU, blocks and threads, coalescing, waves on the host (``solutions/lab7_gpu.ipynb``).

The questions are about concepts that hold whatever mapping the CUDA generator chooses: how many blocks a
grid of a given block shape needs, which loop should drive ``threadIdx.x`` so that a warp's accesses are
coalesced, how many kernel launches a point or tile wavefront needs, how many bytes a sweep must move. Every
expected answer is computed here, exactly, from the lab's own copy of each program: counts with isl at fixed
parameters, memory strides from the access matrices ``F`` and the row-major extents (sympy, symbolic in
``N``).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import islpy as isl
import sympy

from polylab.corpus import example_path
from polylab.frontend import parse, parse_file
from polylab.grading import answers as A
from polylab.grading.checks import compare_calls, compare_sets, legal_schedule, part
from polylab.grading.lab import Calls, Case, Lab, Question
from polylab.grading.verdict import Verdict, combine, right, wrong
from polylab.model import Scop
from polylab.model.islutil import fix_parameters, point_coordinates, sets_of
from polylab.schedule import parse_schedule

#: one Jacobi step: both loops parallel (questions 1 and 6)
JSTEP = """double A[N][N];
double B[N][N];
for (i = 1; i < N - 1; i++)
  for (j = 1; j < N - 1; j++)
    B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
"""

#: a kernel whose outer loop drives the stride-1 subscripts (questions 2 and 3)
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
#: question 5: the size and the tile shape of the tile-level wavefront of sweep2d
TILE_N, TILE = 1000, 32
#: question 6: the size, the element size (double) and the bandwidth (bytes per second)
BYTES_N, ELEMENT_BYTES, BANDWIDTH = 4096, 8, 4.8e12


@cache
def jstep() -> Scop:
    return parse(JSTEP).scop


@cache
def transposed() -> Scop:
    return parse(TRANSPOSED).scop


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
    g = A.vector(grid, 2, "grid")
    want, _, _ = grid_reference()
    if g == want:
        return right()
    n = GRID_N - 2
    if g == want[::-1]:
        return wrong(f"grid {g} has x and y swapped: x counts blocks along j (the loop that becomes threadIdx.x), "
                     f"{BLOCK[0]} threads wide; y counts blocks along i, {BLOCK[1]} threads high")
    floors = (n // BLOCK[0], n // BLOCK[1])
    if g == floors:
        return wrong(f"grid {g} leaves the last iterations without a thread: {n} is not a multiple of the block "
                     "size, so round the number of blocks up (a partial block is still a block)")
    full = (-(-GRID_N // BLOCK[0]), -(-GRID_N // BLOCK[1]))
    if g == full and full != want:
        return wrong(f"grid {g} covers N = {GRID_N} iterations per loop; the loops run from 1 to N - 2")
    return wrong(f"grid {g} is not it: count the iterations of each loop, divide by the block's extent along "
                 "that axis and round up")


def _idle(idle: object) -> Verdict:
    k = A.integer(idle, "idle_threads")
    _, launched, work = grid_reference()
    if k == launched - work:
        return right()
    if k < 0:
        return wrong(f"idle_threads = {k} is negative: the grid launches at least one thread per iteration")
    return wrong(f"idle_threads = {k} is not it: threads launched (blocks x threads per block) minus the "
                 "iterations; the idle ones fail the bounds guard and return at once")


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


def _x_loop(x_loop: object) -> Verdict:
    scop = transposed()
    its = scop.statements[0].iterators
    chosen = A.choice(x_loop, its, "x_loop")
    want = best_x_loop(scop)
    if chosen == want:
        return right()
    total = sum(1 for _ in scop.accesses())
    return wrong(f"with {chosen} on threadIdx.x, {len(coalesced_accesses(scop, chosen))} of the {total} accesses "
                 f"are coalesced; another loop does better (look at the last subscript of each access)")


def _coalesced(coalesced: object, x_loop: object) -> Verdict:
    scop = transposed()
    its = scop.statements[0].iterators
    try:
        loop = A.choice(x_loop, its, "x_loop")
    except A.AnswerError:  # no usable x_loop: judge the set against the best loop
        loop = best_x_loop(scop)
    given = frozenset(A.c_expression(t, "an access") for t in A.name_set(coalesced, None, "coalesced"))
    texts = {A.c_expression(a.text): a for _, a in scop.accesses()}

    def why(t: str) -> str:
        if t not in texts:
            return "the statement has no such access (write it as in the source, e.g. a[j][i])"
        s = memory_stride(scop, texts[t], loop)
        return f"with {loop} on threadIdx.x, neighbouring threads ({loop} and {loop} + 1) are {s} elements apart"

    return compare_sets(given, coalesced_accesses(scop, loop), item="coalesced access",
                        why_extra=why, missing_hint=f"with {loop} on threadIdx.x: stride 1 or 0 between threads "
                                                    f"{loop} and {loop} + 1")


def check_q2(x_loop: object, coalesced: object) -> Verdict:
    """The loop that should drive ``threadIdx.x``, and the accesses coalesced with the loop chosen (judged
    against the student's own choice, so the two parts are independent)."""
    return combine([("x_loop", part(_x_loop, x_loop)), ("coalesced", part(_coalesced, coalesced, x_loop))])


def check_q3(answer: object) -> Verdict:
    """A schedule of the transposed kernel (isl text or steps) that is legal, one-to-one, and whose innermost
    loop is the coalescing loop, so that a generator mapping the innermost parallel loop to ``threadIdx.x``
    coalesces."""
    scop = transposed()
    sched = parse_schedule(scop, A.text(answer, "coalesced_schedule"))
    legal = legal_schedule(sched)
    if not legal.correct:
        return legal
    stmt = scop.statements[0]
    m = sched.maps[stmt.name].intersect_domain(stmt.domain)
    if not m.is_injective():
        return wrong("two iterations of your schedule run at the same time step: give every iteration its own "
                     "time vector (one output dimension per loop)")
    loops = sched.loop_dims
    if not loops:
        return wrong("your schedule has no loop dimension")
    last = loops[-1]
    n = m.dim(isl.dim_type.out)
    inner = m.project_out(isl.dim_type.out, last + 1, n - last - 1).project_out(isl.dim_type.out, 0, last)
    want = best_x_loop(scop)
    target = isl.Map(f"[N] -> {{ {stmt.name}[{', '.join(stmt.iterators)}] -> [{want}] }}").intersect_domain(
        stmt.domain)
    if inner.is_equal(target):
        return right()
    return wrong(f"the innermost loop of your schedule is {sched.expressions(stmt.name)[last]}, not {want}: the "
                 "loop that drives the stride-1 subscripts must be innermost (it becomes threadIdx.x)")


# -- Q4: launches of the point wavefront ------------------------------------------------------------------------

def point_wave_launches_reference(n: int) -> int:
    """The number of waves (one kernel launch each) of the point wavefront of sweep2d at ``N = n``: the
    distinct values of the wavefront's first dimension over the domain (isl counts them)."""
    scop = sweep2d()
    sched = parse_schedule(scop, "wavefront")
    stmt = scop.statements[0]
    times = fix_parameters(sched.maps[stmt.name].intersect_domain(stmt.domain), {"N": int(n)}).range()
    return count_points(values_of(times, 0))


def check_q4(calls: Calls) -> Verdict:
    return compare_calls(calls, point_wave_launches_reference)


# -- Q5: blocks of the tile-level wavefront --------------------------------------------------------------------

@cache
def tile_wave_reference() -> tuple[int, int]:
    """``(waves, largest wave)`` of the tile-level wavefront of sweep2d at ``N = TILE_N`` with square tiles
    ``(floor(i / TILE), floor(j / TILE))``, one block per tile: the waves are the values of ``I + J`` over
    the tiles that hold an iteration."""
    dom = domain_at(sweep2d(), TILE_N)
    tiles = isl.Map(f"{{ S0[i, j] -> [floor(i / {TILE}) + floor(j / {TILE}), floor(i / {TILE}), floor(j / {TILE})] }}")
    tw = tiles.intersect_domain(dom).range()
    waves = values_of(tw, 0)
    sizes: list[int] = []
    waves.foreach_point(lambda p: sizes.append(count_points(tw.fix_val(
        isl.dim_type.set, 0, isl.Val.int_from_si(tw.get_ctx(), point_coordinates(p)[0])))))
    return count_points(waves), max(sizes)


def _tile_launches(answer: object) -> Verdict:
    k = A.integer(answer, "tile_launches")
    want, _ = tile_wave_reference()
    if k == want:
        return right()
    if k == point_wave_launches_reference(TILE_N):
        return wrong(f"{k} is the number of launches of the point wavefront; here one launch runs a wave of tiles")
    return wrong(f"{k} tile waves is not it: count the tiles along each loop (i from 1 to N - 1 lies in the "
                 f"tiles floor(i / {TILE}), from 0 up), then the distinct values of I + J")


def _max_blocks(answer: object) -> Verdict:
    k = A.integer(answer, "max_blocks")
    _, want = tile_wave_reference()
    if k == want:
        return right()
    if k == want * want:
        return wrong(f"{k} is every tile; one wave holds only the tiles with the same I + J")
    return wrong(f"{k} blocks is not the largest wave: it is the anti-diagonal I + J = w with the most tiles")


def check_q5(tile_launches: object, max_blocks: object) -> Verdict:
    """The number of tile waves (kernel launches) and the number of blocks of the largest wave."""
    return combine([("tile_launches", part(_tile_launches, tile_launches)),
                    ("max_blocks", part(_max_blocks, max_blocks))])


# -- Q6: bytes and bandwidth ---------------------------------------------------------------------------------------

@cache
def footprints() -> tuple[int, int, int]:
    """``(distinct elements read, distinct elements written, accesses executed)`` of the Jacobi step at
    ``N = BYTES_N``: the images of the domain under the read and the write relations (isl counts them)."""
    scop = jstep()
    dom = isl.UnionSet.from_set(domain_at(scop, BYTES_N))
    read = fix_parameters(scop.reads.intersect_domain(dom).range(), {"N": BYTES_N})
    written = fix_parameters(scop.writes.intersect_domain(dom).range(), {"N": BYTES_N})
    size = lambda u: sum(count_points(s) for s in sets_of(u))  # noqa: E731
    accesses = count_points(domain_at(scop, BYTES_N)) * sum(1 for _ in scop.accesses())
    return size(read), size(written), accesses


def bytes_reference() -> int:
    r, w, _ = footprints()
    return ELEMENT_BYTES * (r + w)


def _bytes(answer: object) -> Verdict:
    b = A.integer(answer, "bytes_moved")
    want = bytes_reference()
    if b == want:
        return right()
    r, w, accesses = footprints()
    n = BYTES_N
    reasons = {
        ELEMENT_BYTES * (n * n + w): "the four corners of A are never read",
        ELEMENT_BYTES * (r + n * n): "only the interior of B is written",
        ELEMENT_BYTES * 2 * n * n: "neither the corners of A nor the border of B are touched",
        ELEMENT_BYTES * accesses: "you counted every access; with caching each element moves once",
        4 * (r + w): "a double is 8 bytes",
        ELEMENT_BYTES * r: "the elements written move too",
        ELEMENT_BYTES * w: "the elements read move too",
    }
    if b in reasons:
        return wrong(f"bytes_moved = {b}: {reasons[b]}")
    return wrong(f"bytes_moved = {b} is not it: count the distinct elements of A that are read and of B that "
                 "are written (isl can count the image of the domain under an access), times 8 bytes")


def _time(answer: object, bytes_moved: object) -> Verdict:
    t = A.rational(answer, "min_time_us")
    try:
        b = A.integer(bytes_moved, "bytes_moved")
    except A.AnswerError:  # judge the time against the right byte count
        b = bytes_reference()
    want = Fraction(b) / Fraction(BANDWIDTH) * 10**6
    if want and abs(t - want) <= want / 100:
        return right()
    for factor, unit in ((Fraction(1, 10**6), "seconds"), (Fraction(1, 10**3), "milliseconds"),
                         (Fraction(10**3), "nanoseconds")):
        if want and abs(t - want * factor) <= want * factor / 100:
            return wrong(f"min_time_us = {float(t):g} is the time in {unit}; the answer is in microseconds")
    binary = want * Fraction(10**12, 2**40)  # the bandwidth read as 4.8 x 2^40 bytes per second
    if want and abs(t - binary) <= binary / 100:
        return wrong("4.8 TB/s is 4.8e12 bytes per second (decimal units), not 4.8 x 2^40")
    return wrong(f"min_time_us = {float(t):g} does not follow from {b} bytes at 4.8e12 bytes/s "
                 "(time = bytes / bandwidth, in microseconds, within 1 %)")


def check_q6(bytes_moved: object, min_time_us: object) -> Verdict:
    """The bytes a Jacobi step must move at least (each distinct element once) and the time that takes at
    the stated bandwidth; the time is judged against the student's own byte count (so one mistake costs
    once)."""
    return combine([("bytes_moved", part(_bytes, bytes_moved)),
                    ("min_time_us", part(_time, min_time_us, bytes_moved))], weights=[2, 1])


LAB = Lab(
    name="lab7",
    title="The GPU: blocks, threads, coalescing, waves",
    notebook="lab7_gpu.ipynb",
    questions=(
        Question("q1", 2, ("grid", "idle_threads"), check_q1, title="the grid of one Jacobi step",
                 example="grid = (4, 2); idle_threads = 17"),
        Question("q2", 3, ("x_loop", "coalesced"), check_q2, title="which loop drives threadIdx.x",
                 example='x_loop = "j"; coalesced = {"b[i][j]"}'),
        Question("q3", 2, ("coalesced_schedule",), check_q3, title="a schedule that coalesces",
                 example='"{ S0[i, j] -> [i, j] }"'),
        Question("q4", 2, ("point_wave_launches",), check_q4, title="launches of the point wavefront",
                 example="def point_wave_launches(N): ...",
                 cases=(Case((4,), "N = 4"), Case((100,), "N = 100"))),
        Question("q5", 2, ("tile_launches", "max_blocks"), check_q5, title="blocks of the tile-level wavefront",
                 example="tile_launches = 10; max_blocks = 4"),
        Question("q6", 3, ("bytes_moved", "min_time_us"), check_q6, title="bytes and bandwidth",
                 example="bytes_moved = 1000000; min_time_us = 0.2"),
    ),
)
