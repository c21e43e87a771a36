"""The GPU mapping of a loop program: which loops become grid dimensions, which one is thread ``x``, and why.

A *parallel nest* is a chain of loops of the loop program that are all parallel (coincident schedule
dimensions), each the only statement of the one above it (an ``if`` without ``else`` between two of them
becomes a guard). Every point of the nest is independent of every other point of the same nest (for fixed
values of the loops around it, which run on the host), so the points can be given to GPU threads in any
arrangement. The mapping (:func:`map_nest`) decides that arrangement:

* **thread x** goes to the loop that drives the stride-1 subscript of the accessed arrays. For a loop
  ``c`` and an access ``A[F x + f]`` of a statement ``S(e_0, ..., e_k)`` (the AST's argument expressions
  ``e`` are affine in the loop iterators), the subscript moves by ``F * de/dc`` when ``c`` grows by one;
  the access is *unit stride* in ``c`` when that vector is ``(0, ..., 0, +-1)`` (consecutive threads touch
  consecutive elements: one memory transaction serves a warp), *uniform* when it is zero (every thread of a
  warp reads the same element: a broadcast), *strided* otherwise. The loop with the most unit-stride
  accesses (then the fewest strided ones, then the innermost) is thread x (:func:`choose_thread_x`). This
  is an interchange of the nest's loops for the GPU, always legal inside a parallel nest.
* **y and z**: the other loops of the nest, innermost first on y; when more than three loops remain, the
  outer ones share the z axis (its index is split row-major over their extents, so no loop becomes a
  sequential per-thread loop while the grid has room).
* **the grid**: each mapped loop gets a range ``[lower, upper]`` that the host computes before the launch. When
  the loop's bounds depend only on the host's loops and the parameters they are the loop's own bounds;
  when they depend on another mapped loop (a triangle, a wave of a wavefront) the range is the exact
  projection of the nest's points onto that loop (isl's ``dim_min`` / ``dim_max`` over the nest's bounds,
  as functions of the host loops and the parameters) when isl finds it within :data:`ISL_OPERATIONS`
  operations, else a range that contains it (interval arithmetic over the ranges of the loops the bounds
  depend on: tiles' point loops), and each thread checks the loop's own bounds exactly (the
  *bounds guards*): the range only sizes the launch. Only threads with ``lower <= c <= upper`` on every axis and inside every loop's bounds
  run the body, so every point of the nest runs exactly once.
* **block shapes** (:func:`block_shape`): 256 threads per block (8 resident blocks fill the 2048 threads of
  an SM of a Hopper GPU), given first to x (a power of two covering its extent, up to 256), then to y, then
  to z (at most 64, CUDA's limit on ``blockDim.z``), so a short x extent does not leave threads idle.

A loop runs inside a thread only when it is not parallel (no more parallelism exists there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl

from polylab.codegen import ast as A
from polylab.errors import CodegenError
from polylab.model.scop import Scop

__all__ = ["AXES", "DEFAULT_BLOCK_THREADS", "MAX_BLOCK_THREADS", "MAX_BLOCK_Z", "MAX_GRID_YZ", "AccessStride",
           "GridLoop", "GridNest", "ISL_OPERATIONS", "LoopCoalescing", "ThreadX", "block_shape", "bounds", "choose_thread_x",
           "linear", "loop_coalescing", "map_nest", "nest_chain"]

AXES = ("x", "y", "z")
#: threads per block the mapping aims at (a multiple of the warp size; 8 blocks fill an SM)
DEFAULT_BLOCK_THREADS = 256
#: CUDA's limits on a block: threads in all, and blockDim.z
MAX_BLOCK_THREADS = 1024
MAX_BLOCK_Z = 64
#: CUDA's limit on gridDim.y and gridDim.z
MAX_GRID_YZ = 65535


# -- affine forms of AST expressions ------------------------------------------------------------------------
def linear(e: A.AExpr) -> dict[str, int] | None:
    """``e`` as ``{name: coefficient}`` plus the constant under ``""`` when it is affine in its names
    (sums, differences, products by constants); None otherwise (a ``min``, a division)."""
    match e:
        case A.Int(value=v):
            return {"": v}
        case A.Id(name=n):
            return {n: 1}
        case A.Op(op="minus", args=(a,)):
            la = linear(a)
            return None if la is None else {k: -v for k, v in la.items()}
        case A.Op(op=("add" | "sub") as op, args=(a, b)):
            la, lb = linear(a), linear(b)
            if la is None or lb is None:
                return None
            sign = 1 if op == "add" else -1
            out = dict(la)
            for k, v in lb.items():
                out[k] = out.get(k, 0) + sign * v
            return out
        case A.Op(op="mul", args=(a, b)):
            la, lb = linear(a), linear(b)
            if la is None or lb is None:
                return None
            if set(la) <= {""}:
                la, lb = lb, la
            if not set(lb) <= {""}:
                return None
            return {k: v * lb.get("", 0) for k, v in la.items()}
    return None


# -- coalescing -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AccessStride:
    """How one access moves when a loop grows by one: ``coefficients[r]`` is the change of subscript ``r``
    (None when the subscripts are not affine in the loop)."""

    statement: str
    text: str
    array: str
    coefficients: tuple[int, ...] | None

    @property
    def pattern(self) -> str:
        """``unit`` (only the last subscript moves, by +-1), ``uniform`` (nothing moves), ``strided`` or
        ``unknown``."""
        c = self.coefficients
        if c is None:
            return "unknown"
        if all(v == 0 for v in c):
            return "uniform"
        if all(v == 0 for v in c[:-1]) and abs(c[-1]) == 1:
            return "unit"
        return "strided"


@dataclass(frozen=True)
class LoopCoalescing:
    """The accesses of a nest's body seen from one of its loops."""

    iterator: str
    strides: tuple[AccessStride, ...]

    def count(self, pattern: str) -> int:
        return sum(1 for s in self.strides if s.pattern == pattern)

    @property
    def key(self) -> tuple[int, int, int]:
        """Larger is better for thread x: unit-stride accesses, then few strided, then few unknown."""
        return (self.count("unit"), -self.count("strided"), -self.count("unknown"))

    def summary(self) -> str:
        n = len(self.strides)
        parts = [f"stride 1 in {self.count('unit')} of {n} accesses"]
        if self.count("uniform"):
            parts.append(f"the same element in {self.count('uniform')}")
        if self.count("strided"):
            first = next(s for s in self.strides if s.pattern == "strided")
            parts.append(f"strided in {self.count('strided')} (e.g. {first.text}: subscripts move by "
                         f"{list(first.coefficients or ())})")
        if self.count("unknown"):
            parts.append(f"not affine in {self.count('unknown')}")
        return f"{self.iterator}: " + ", ".join(parts)


def loop_coalescing(scop: Scop, iterator: str, body: A.Node) -> LoopCoalescing:
    """The change of every access of ``body``'s statement instances when ``iterator`` grows by one."""
    out: list[AccessStride] = []
    for node in A.nodes(body):
        if not isinstance(node, A.User):
            continue
        stmt = scop.statement(node.statement)
        forms = [linear(a) for a in node.args]
        for acc in stmt.accesses:
            f = acc.matrix
            coeffs: tuple[int, ...] | None = None
            if f is not None:
                rows = []
                for r in range(f.rows):
                    total = 0
                    for k in range(f.cols):
                        fk = int(f[r, k])
                        if fk == 0:
                            continue
                        form = forms[k] if k < len(forms) else None
                        if form is None:
                            rows = None
                            break
                        total += fk * form.get(iterator, 0)
                    if rows is None:
                        break
                    rows.append(total)
                coeffs = tuple(rows) if rows is not None else None
            out.append(AccessStride(stmt.name, acc.text, acc.array, coeffs))
    return LoopCoalescing(iterator, tuple(out))


@dataclass(frozen=True)
class ThreadX:
    """The loop that goes to thread x and every candidate's view of the accesses."""

    iterator: str
    candidates: tuple[LoopCoalescing, ...]

    def reason(self) -> str:
        """Why: each candidate's unit-stride, uniform and strided accesses."""
        chosen = next(c for c in self.candidates if c.iterator == self.iterator)
        lines = [f"thread x = {self.iterator}: consecutive threads touch consecutive elements in "
                 f"{chosen.count('unit')} of {len(chosen.strides)} accesses"]
        lines += ["  " + c.summary() for c in self.candidates]
        return "\n".join(lines)


def choose_thread_x(scop: Scop, loops: Sequence[A.For]) -> ThreadX:
    """The loop of ``loops`` (a parallel nest, outermost first) that drives the stride-1 subscripts: the most
    unit-stride accesses, then the fewest strided and unknown ones, then the innermost."""
    if not loops:
        raise CodegenError("no loop to map to thread x")
    body = loops[-1].body
    cands = tuple(loop_coalescing(scop, f.iterator, body) for f in loops)
    best = max(range(len(cands)), key=lambda k: (cands[k].key, k))
    return ThreadX(cands[best].iterator, cands)


# -- the nest and its grid ---------------------------------------------------------------------------------
def bounds(f: A.For) -> tuple[A.AExpr, A.AExpr] | None:
    """``(lower, upper inclusive)`` of a loop whose condition is ``it <= ub`` or ``it < ub`` (None for
    another condition)."""
    c = f.cond
    if isinstance(c, A.Op) and c.op in ("le", "lt") and c.args[0] == A.Id(f.iterator):
        ub = c.args[1]
        if f.iterator in A.expr_ids(ub):
            return None
        return f.init, (A.offset(ub, -1) if c.op == "lt" else ub)
    return None


def _mappable(f: A.Node) -> bool:
    return isinstance(f, A.For) and f.parallel and not f.degenerate and bounds(f) is not None


def nest_chain(f: A.For) -> tuple[tuple[A.For, ...], tuple[tuple[int, A.AExpr], ...], A.Node]:
    """The parallel nest that starts at ``f``: its loops (outermost first), the guards found between them
    (``(k, cond)``: the condition of an ``if`` without ``else`` directly inside loop ``k``), and the body
    each point runs."""
    loops: list[A.For] = [f]
    guards: list[tuple[int, A.AExpr]] = []
    body: A.Node = f.body
    while True:
        inner = body
        conds = []
        while isinstance(inner, A.Block) and len(inner.children) == 1:
            inner = inner.children[0]
        while isinstance(inner, A.If) and inner.other is None:
            conds.append(inner.cond)
            inner = inner.then
            while isinstance(inner, A.Block) and len(inner.children) == 1:
                inner = inner.children[0]
        if not (_mappable(inner) and inner.inc == 1):
            break
        assert isinstance(inner, A.For)
        guards += [(len(loops) - 1, c) for c in conds]
        loops.append(inner)
        body = inner.body
    return tuple(loops), tuple(guards), body


@dataclass(frozen=True)
class GridLoop:
    """One mapped loop: its ``axis``, its position ``slot`` on that axis (0 = fastest), and the range the
    grid covers (host expressions); ``exact``: the range is the loop's own bounds (no guard needed)."""

    loop: A.For
    axis: str
    slot: int
    lower: A.AExpr
    upper: A.AExpr
    exact: bool


@dataclass(frozen=True)
class GridNest:
    """A parallel nest mapped to a grid: the loops in nest order, the guards, the body, the choice of x."""

    loops: tuple[GridLoop, ...]
    guards: tuple[tuple[int, A.AExpr], ...]
    body: A.Node
    thread_x: ThreadX

    def axis_loops(self, axis: str) -> tuple[GridLoop, ...]:
        """The loops on ``axis``, fastest first."""
        return tuple(sorted((g for g in self.loops if g.axis == axis), key=lambda g: g.slot))

    @property
    def axes(self) -> tuple[str, ...]:
        return tuple(a for a in AXES if self.axis_loops(a))

    def describe(self) -> str:
        """One line per axis: which loops it holds."""
        parts = []
        for a in self.axes:
            names = " x ".join(g.loop.iterator for g in reversed(self.axis_loops(a)))
            parts.append(f"{a}: {names}")
        return "grid " + ", ".join(parts)


def _isl_expr(e: A.AExpr) -> str | None:
    """``e`` in isl's syntax (None for a conditional expression)."""
    match e:
        case A.Int(value=v):
            return str(v)
        case A.Id(name=n):
            return n
        case A.Op(op="minus", args=(a,)):
            s = _isl_expr(a)
            return None if s is None else f"(-({s}))"
        case A.Op(op=("min" | "max") as op, args=args):
            parts = [_isl_expr(a) for a in args]
            if any(p is None for p in parts):
                return None
            out = parts[-1]
            for p in reversed(parts[:-1]):
                out = f"{op}({p}, {out})"
            return out
        case A.Op(op=("fdiv_q" | "pdiv_q" | "div"), args=(a, A.Int(value=d))):
            s = _isl_expr(a)
            return None if s is None else f"floor(({s})/{d})"
        case A.Op(op=("pdiv_r" | "zdiv_r"), args=(a, A.Int(value=d))):
            s = _isl_expr(a)
            return None if s is None else f"(({s}) mod {d})"
        case A.Op(op="mul", args=(A.Int(value=v), b)) | A.Op(op="mul", args=(b, A.Int(value=v))):
            sb = _isl_expr(b)
            return None if sb is None else f"{v} * ({sb})"
        case A.Op(op=op, args=(a, b)) if op in _ISL_BINARY and op != "mul":
            sa, sb = _isl_expr(a), _isl_expr(b)
            return None if sa is None or sb is None else f"({sa}) {_ISL_BINARY[op]} ({sb})"
    return None


_ISL_BINARY = {"add": "+", "sub": "-", "mul": "*", "le": "<=", "lt": "<", "ge": ">=", "gt": ">", "eq": "=",
               "and": "and", "and_then": "and", "or": "or", "or_else": "or"}


def _box(scop: Scop, loops: Sequence[A.For], guards: Sequence[tuple[int, A.AExpr]], k: int,
         outer: Sequence[str]) -> tuple[A.AExpr, A.AExpr] | None:
    """The exact range of loop ``k`` over the points of the nest ``loops[:k + 1]``, as expressions of the
    host loops ``outer`` and the parameters (isl's ``dim_min`` / ``dim_max``); None when a bound is not
    affine or the range is unbounded."""
    names = [f.iterator for f in loops[: k + 1]]
    cons = []
    for j, f in enumerate(loops[: k + 1]):
        lo = _isl_expr(f.init)
        cond = _isl_expr(f.cond)
        if lo is None or cond is None:
            return None
        cons += [f"{f.iterator} >= {lo}", f"({cond})"]
    for j, g in guards:
        if j < k:
            text = _isl_expr(g)
            if text is None:
                return None
            cons.append(f"({text})")
    params = [*scop.parameters, *outer]
    isl_ctx = scop.context.get_ctx()
    before = isl_ctx.get_max_operations()
    isl_ctx.reset_operations()
    isl_ctx.set_max_operations(ISL_OPERATIONS)
    try:
        s = isl.Set(f"[{', '.join(params)}] -> {{ [{', '.join(names)}] : {' and '.join(cons)} }}")
        ctx = scop.context.align_params(s.get_space().params())
        s = s.intersect_params(ctx)
        lo_pw, hi_pw = s.dim_min(k), s.dim_max(k)
        build = isl.AstBuild.from_context(ctx)
        return A.expr_of(build.expr_from_pw_aff(lo_pw)), A.expr_of(build.expr_from_pw_aff(hi_pw))
    except isl.Error:   # not affine, unbounded, or more work than ISL_OPERATIONS: the interval range instead
        return None
    finally:
        isl_ctx.set_max_operations(before)
        isl_ctx.reset_operations()


#: the most isl operations spent on the exact range of one loop (beyond: :func:`_interval_box`)
ISL_OPERATIONS = 200_000


def _interval(e: A.AExpr, ranges: dict[str, tuple[A.AExpr, A.AExpr]]) -> tuple[A.AExpr, A.AExpr] | None:
    """Lower and upper bounds of ``e`` when each name of ``ranges`` takes any value in its range (interval
    arithmetic: sums, differences, products by constants, min, max, floor division by a positive constant,
    all monotone); other names are fixed. None for another operation."""
    match e:
        case A.Int() :
            return e, e
        case A.Id(name=n):
            return ranges.get(n, (e, e))
        case A.Op(op="minus", args=(a,)):
            r = _interval(a, ranges)
            return None if r is None else (A.Op("minus", (r[1],)), A.Op("minus", (r[0],)))
        case A.Op(op=("add" | "sub") as op, args=(a, b)):
            ra, rb = _interval(a, ranges), _interval(b, ranges)
            if ra is None or rb is None:
                return None
            if op == "add":
                return A.Op("add", (ra[0], rb[0])), A.Op("add", (ra[1], rb[1]))
            return A.Op("sub", (ra[0], rb[1])), A.Op("sub", (ra[1], rb[0]))
        case A.Op(op="mul", args=(A.Int(value=c), b)) | A.Op(op="mul", args=(b, A.Int(value=c))):
            rb = _interval(b, ranges)
            if rb is None:
                return None
            lo, hi = (A.Op("mul", (A.Int(c), rb[0])), A.Op("mul", (A.Int(c), rb[1])))
            return (lo, hi) if c >= 0 else (hi, lo)
        case A.Op(op=("min" | "max") as op, args=args):
            rs = [_interval(a, ranges) for a in args]
            if any(r is None for r in rs):
                return None
            return A.Op(op, tuple(r[0] for r in rs)), A.Op(op, tuple(r[1] for r in rs))  # type: ignore[index]
        case A.Op(op=("fdiv_q" | "pdiv_q" | "div") as op, args=(a, A.Int(value=d))) if d > 0:
            ra = _interval(a, ranges)
            return None if ra is None else (A.Op("fdiv_q", (ra[0], A.Int(d))), A.Op("fdiv_q", (ra[1], A.Int(d))))
    return None


def map_nest(scop: Scop, f: A.For, outer: Sequence[str]) -> GridNest | None:
    """The grid mapping of the parallel nest that starts at ``f`` (module text); ``outer``: the loops around
    it that run on the host. None when even ``f`` cannot be given a range."""
    loops, guards, body = nest_chain(f)
    tx = choose_thread_x(scop, loops)
    mapped: dict[str, tuple[A.AExpr, A.AExpr, bool]] = {}
    names = {g.iterator for g in loops}
    kept: list[A.For] = []
    for k, g in enumerate(loops):
        lo_hi = bounds(g)
        assert lo_hi is not None
        uses = (A.expr_ids(lo_hi[0]) | A.expr_ids(lo_hi[1])) & names
        inside = [j for j, c in guards if j < k and A.expr_ids(c) & names]
        if not uses and not inside:
            mapped[g.iterator] = (lo_hi[0], lo_hi[1], True)
        else:
            box = _box(scop, loops, guards, k, outer)
            if box is None:   # a range that contains the exact one: the guards keep exactly the loop's points
                ranges = {h.iterator: mapped[h.iterator][:2] for h in kept}
                box = _interval(lo_hi[0], ranges)
                top = _interval(lo_hi[1], ranges)
                box = None if box is None or top is None else (box[0], top[1])
            if box is None:
                break
            mapped[g.iterator] = (box[0], box[1], False)
        kept.append(g)
    if not kept:
        return None
    if len(kept) < len(loops):   # a loop without a range, and the loops inside it, run in each thread
        body = kept[-1].body
        guards = tuple((j, c) for j, c in guards if j < len(kept) - 1)
        loops = tuple(kept)
        tx = choose_thread_x(scop, loops)
    order = [tx.iterator] + [g.iterator for g in reversed(loops) if g.iterator != tx.iterator]
    placed: dict[str, tuple[str, int]] = {}
    for rank, name in enumerate(order):
        axis = AXES[min(rank, 2)]
        placed[name] = (axis, max(0, rank - 2) if axis == "z" else 0)
    grid = tuple(GridLoop(g, placed[g.iterator][0], placed[g.iterator][1], *mapped[g.iterator]) for g in loops)
    return GridNest(grid, tuple(guards), body, tx)


# -- block shapes --------------------------------------------------------------------------------------------
def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def block_shape(nx: int, ny: int = 1, nz: int = 1, threads: int = DEFAULT_BLOCK_THREADS) -> tuple[int, int, int]:
    """The block for a grid of ``nx x ny x nz`` points (the rule of the generated ``polylab_block_shape``):
    x takes the smallest power of two covering ``nx``, at most ``threads``; y the same for ``ny`` within
    what is left; z likewise, and at most 64. Always ``x * y * z <= threads <= 1024``, ``z <= 64``."""
    if not 1 <= threads <= MAX_BLOCK_THREADS:
        raise CodegenError(f"{threads} threads per block: CUDA allows 1 to {MAX_BLOCK_THREADS}")
    x = min(_pow2_at_least(max(nx, 1)), _pow2_floor(threads))
    y = min(_pow2_at_least(max(ny, 1)), max(1, threads // x))
    y = _pow2_floor(y)
    z = min(_pow2_at_least(max(nz, 1)), max(1, threads // (x * y)), MAX_BLOCK_Z)
    z = _pow2_floor(z)
    return x, y, z


def _pow2_floor(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


#: the same rule in C (host code of the CUDA program and of its CPU emulation)
BLOCK_SHAPE_C = """\
#ifndef POLYLAB_UNUSED
#define POLYLAB_UNUSED
#endif
/* the block for nx x ny x nz points: powers of two, x first, x*y*z <= threads, z <= 64 (polylab.codegen.gpumap) */
POLYLAB_UNUSED static unsigned polylab_pow2_at_least(long long n) { unsigned p = 1; while ((long long)p < n) p *= 2; return p; }
POLYLAB_UNUSED static unsigned polylab_pow2_floor(unsigned n) { unsigned p = 1; while (p * 2 <= n) p *= 2; return p; }
POLYLAB_UNUSED static unsigned polylab_umin(unsigned a, unsigned b) { return a < b ? a : b; }
POLYLAB_UNUSED static void polylab_block_shape(long long nx, long long ny, long long nz, unsigned threads, unsigned shape[3])
{
  unsigned x = polylab_umin(polylab_pow2_at_least(nx > 1 ? nx : 1), polylab_pow2_floor(threads));
  unsigned y = polylab_pow2_floor(polylab_umin(polylab_pow2_at_least(ny > 1 ? ny : 1), threads / x > 1 ? threads / x : 1));
  unsigned z = polylab_umin(polylab_pow2_at_least(nz > 1 ? nz : 1), threads / (x * y) > 1 ? threads / (x * y) : 1);
  z = polylab_pow2_floor(polylab_umin(z, 64));
  shape[0] = x; shape[1] = y; shape[2] = z;
}
"""
