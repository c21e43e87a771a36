"""The loop program of a schedule: isl's AST generator, read back into small frozen Python values.

isl's AST generator (``isl_ast_build_node_from_schedule``) scans the statement instances in the order the
schedule gives: each schedule dimension becomes a ``for`` loop whose bounds are the projections of the
scheduled domain (``max``/``min`` of affine expressions, integer divisions where the domain has strides),
and guards become ``if`` statements. This module turns that AST into the values below, which every printer
(C, OpenMP, CUDA, MLIR) walks, so no printer touches isl handles.

Parallel loops. A loop is parallel exactly when it comes from a band member marked *coincident* in the
schedule tree (isl's convention: the member carries no dependence inside the enclosing band's outer
members). Before generating the AST a mark ``polylab_parallel_<d1>_<d2>..`` is inserted above each band
with coincident members, ``d1, d2, ..`` being their schedule depths. The bands are kept whole: with every
band split into one-member bands, isl's AST generator spent minutes in its stride detection on tiled
wavefronts such as jacobi2d ``auto; tile_wavefront(16, 64, 64)``; with whole bands it takes a fraction of
a second. The AST names the loop of schedule dimension ``d`` with the ``d``-th iterator name, and along one
root-to-leaf path of the tree every schedule depth belongs to exactly one band, so a ``for`` below such a
mark is parallel exactly when its iterator is the ``d``-th name for a marked ``d``: a coincident member that
isl removes (it takes a single value) marks nothing. A schedule given as a union map carries no
coincidence: all its loops are sequential.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import islpy as isl

from polylab.errors import CodegenError
from polylab.model.islutil import union_all
from polylab.model.scop import Scop, Statement
from polylab.schedule.core import floor_div, map_from_affs

_MARK = "polylab_parallel_"


# -- expressions ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Int:
    """An integer literal."""

    value: int


@dataclass(frozen=True)
class Id:
    """A loop iterator or a parameter."""

    name: str


@dataclass(frozen=True)
class Op:
    """An isl AST operation: ``op`` is isl's name (``add``, ``min``, ``fdiv_q``, ``pdiv_r``, ``le``, ...).

    Division semantics: ``div`` is exact, ``fdiv_q`` rounds toward minus infinity, ``pdiv_q``/``pdiv_r``
    are quotient/remainder of a non-negative dividend, ``zdiv_r`` is C's ``%`` (only compared with 0).
    """

    op: str
    args: tuple["AExpr", ...]


AExpr = Union[Int, Id, Op]


# -- statements -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class For:
    """``for (iterator = init; cond; iterator += inc) body``; ``degenerate``: exactly one iteration."""

    iterator: str
    init: AExpr
    cond: AExpr
    inc: int
    body: "Node"
    parallel: bool = False
    degenerate: bool = False
    depth: int = 0


@dataclass(frozen=True)
class If:
    cond: AExpr
    then: "Node"
    other: "Node | None" = None


@dataclass(frozen=True)
class Block:
    children: tuple["Node", ...]


@dataclass(frozen=True)
class User:
    """One statement instance: ``statement`` at iterator values ``args`` (in ``Statement.iterators`` order)."""

    statement: str
    args: tuple[AExpr, ...]


Node = Union[For, If, Block, User]


@dataclass(frozen=True)
class LoopProgram:
    """The generated loop structure with facts the printers need."""

    root: Node
    iterators: tuple[str, ...]
    schedule_text: str
    parallel_depths: tuple[int, ...]
    #: ``(statement, d)``: the statement's elements may stay in registers across its loop at schedule
    #: depth ``d`` (:func:`register_rows`)
    registers: frozenset[tuple[str, int]] = frozenset()
    #: ``(statement, q)``: the one element the statement accumulates into across its innermost loop, at
    #: schedule depth ``q``, may stay in a scalar there (:func:`register_accumulators`)
    accumulators: frozenset[tuple[str, int]] = frozenset()

    @property
    def n_parallel(self) -> int:
        return sum(1 for n in nodes(self.root) if isinstance(n, For) and n.parallel)


def nodes(n: Node | None):
    """Every node in pre-order."""
    if n is None:
        return
    yield n
    match n:
        case For(body=b):
            yield from nodes(b)
        case If(then=t, other=o):
            yield from nodes(t)
            yield from nodes(o)
        case Block(children=cs):
            for c in cs:
                yield from nodes(c)


def offset(e: AExpr, k: int) -> AExpr:
    """``e + k`` with the constants folded (``(N - 1) - 1`` is ``N - 2``)."""
    match e:
        case Int(value=v):
            return Int(v + k)
        case Op(op="add", args=(a, Int(value=v))):
            return offset(a, v + k)
        case Op(op="sub", args=(a, Int(value=v))):
            return offset(a, k - v)
    if k == 0:
        return e
    return Op("add", (e, Int(k))) if k > 0 else Op("sub", (e, Int(-k)))


def expr_ids(e: AExpr) -> set[str]:
    """The names an expression mentions."""
    match e:
        case Id(name=n):
            return {n}
        case Op(args=args):
            out: set[str] = set()
            for a in args:
                out |= expr_ids(a)
            return out
    return set()


# -- schedule normalisation -------------------------------------------------------------------------------
def schedule_tree(scop: Scop, schedule) -> isl.Schedule | isl.UnionMap:
    """An ``isl.Schedule`` or ``isl.UnionMap`` from what the caller passed (``.tree`` objects too)."""
    if schedule is None or (isinstance(schedule, str) and schedule == "original"):
        return scop.schedule
    tree = getattr(schedule, "tree", schedule)
    if isinstance(tree, (isl.Schedule, isl.UnionMap)):
        return tree
    if isinstance(tree, isl.Map):
        return isl.UnionMap.from_map(tree)
    if isinstance(tree, str):
        try:
            return isl.UnionMap(tree)
        except isl.Error:
            raise CodegenError(f"not an isl schedule: {tree!r}",
                               hint="write a union map such as { S0[i, j] -> [i + j, i] }") from None
    raise CodegenError(f"cannot generate code from a {type(schedule).__name__}",
                       hint="pass an isl.Schedule, an isl.UnionMap or a polylab Schedule")


def _mark_coincident(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """Put a mark naming the schedule depths of its coincident members above every band that has some.

    Bands are not split (see the module docstring). Returns the node at the same tree position (the
    inserted mark when there is one)."""
    marked = False
    if node.get_type() == isl.schedule_node_type.band:
        depth = node.get_schedule_depth()
        par = [depth + k for k in range(node.band_n_member()) if node.band_member_get_coincident(k)]
        if par:
            node = node.insert_mark(isl.Id(_MARK + "_".join(map(str, par)))).child(0)
            marked = True
    for k in range(node.n_children()):
        node = _mark_coincident(node.child(k)).parent()
    return node.parent() if marked else node


def shared_innermost(schedule) -> frozenset[int]:
    """The schedule dimensions that are the innermost loop of two or more statements (read from a polylab
    ``Schedule``'s affine functions, ``affs``; empty for other schedules)."""
    affs = getattr(schedule, "affs", None)
    if not affs:
        return frozenset()
    last = [max((d for d, a in enumerate(v) if not a.is_cst()), default=None) for v in affs.values()]
    return frozenset(d for d in set(last) if d is not None and last.count(d) >= 2)


def _separate(node: isl.ScheduleNode, dims: frozenset[int]) -> isl.ScheduleNode:
    """Ask isl to *separate* the loops of the band members at schedule depths ``dims``: a loop shared by
    statements whose ranges differ (fused with shifts: fdtd2d's updates run columns ``0..NY-1``,
    ``1..NY-1`` and ``0..NY-2``) is split into pieces each running a fixed set of statements, so the long
    middle piece has no guard in its body and the compiler vectorizes it; the few boundary iterations
    become their own pieces. The order of the instances is the schedule's: only the code's shape
    changes. Returns the node at the same tree position."""
    if node.get_type() == isl.schedule_node_type.band:
        depth = node.get_schedule_depth()
        for k in range(node.band_n_member()):
            if depth + k in dims:
                node = node.band_member_set_ast_loop_type(k, isl.ast_loop_type.separate)
                node = node.band_member_set_isolate_ast_loop_type(k, isl.ast_loop_type.separate)
    for k in range(node.n_children()):
        node = _separate(node.child(k), dims).parent()
    return node


#: the largest strip whose full tiles are isolated (:func:`full_strips`): gcc -O3 unrolls a loop of a
#: constant 8 iterations completely, so a strip of rows innermost becomes unroll-and-jam
UNROLL_STRIP = 8


def full_strips(scop: Scop, schedule) -> dict[int, isl.Set]:
    """Schedule depth ``d`` -> the prefixes ``(t_0, .., t_d)`` whose strip is full, for every dimension
    ``d`` that is ``floor(e / k)``, ``2 <= k <=`` :data:`UNROLL_STRIP`, of a statement whose innermost
    loop is ``e`` itself (strips of rows run innermost: ``(floor(i / 8), j, i)``).

    With ``R = { (t_0, .., t_{q-1}, e(x)) : x in the domain }``, ``q`` the depth of the innermost loop
    ``e``, the strip ``c = t_d`` at the prefix ``t = (t_0, .., t_{q-1})`` is full when ``(t, k c)`` and
    ``(t, k c + k - 1)`` are both in ``R`` (exact for domains whose values of ``e`` at a prefix form an
    interval, as in every rectangular, triangular or skewed nest; elsewhere only the shape of the code
    changes, never the order of the instances). A prefix ``(t_0, .., t_d)`` is kept when the strip is full
    at *every* iteration of the loops between ``d`` and ``q`` (cholesky's rows of ``i`` in the tiles below
    the diagonal: the row loop has the constant bounds ``k c .. k c + k - 1`` under every ``j`` and ``k``,
    and gcc unrolls it; on the diagonal ``j < i`` cuts strips), and, for a statement where no prefix is
    such, when the strip is full at some iteration (the rows of a triangle: full strips before the
    diagonal); the statements' sets joined (:func:`_convex_union`). Read from a polylab ``Schedule``'s
    ``affs``; empty for other schedules."""
    affs = getattr(schedule, "affs", None)
    if not affs:
        return {}
    pspace = scop.context.get_space()
    out: dict[int, list[tuple[int, isl.Set]]] = {}
    for st in scop.statements:
        vec = affs.get(st.name, ())
        live = [d for d, a in enumerate(vec) if not a.is_cst()]
        if len(live) < 2:
            continue
        q, e = live[-1], vec[live[-1]]
        for d in live[:-1]:
            k = next((k for k in range(2, UNROLL_STRIP + 1) if floor_div(e, k).is_equal(vec[d])), None)
            if k is None:
                continue
            out.setdefault(d, []).append((st.depth, _full_at(st, pspace, vec, d, d, q, k)))
            # each later band around the rows: the prefixes down to its last dimension before the rows
            for b in getattr(schedule, "bands", ()):
                if d < b.start < q:
                    at = min(q - 1, b.start + b.size - 1)
                    out.setdefault(at, []).append((st.depth, _full_at(st, pspace, vec, d, at, q, k)))
    return {d: f for d, sets in out.items() if not (f := _convex_union(sets)).is_empty()}


def _convex_union(sets: list[tuple[int, isl.Set]]) -> isl.Set:
    """The union of the statements' full strips ``(depth, set)``, coalesced; where it is not convex,
    that of the deepest statements only (isl isolates the convex hull of a set that is not convex, which
    would take partial strips in: the deepest statements carry the most instances)."""
    empty = isl.Set.empty(sets[0][1].get_space())
    whole = union_all([f for _, f in sets], empty).coalesce()
    if whole.n_basic_set() <= 1:
        return whole
    deepest = max(depth for depth, _ in sets)
    return union_all([f for depth, f in sets if depth == deepest], empty).coalesce()


def _full_at(st, pspace: isl.Space, vec, d: int, at: int, q: int, k: int) -> isl.Set:
    """The prefixes ``(t_0, .., t_d)`` of statement ``st`` whose strip ``t_d`` of the rows ``vec[q]`` is full
    at every iteration of the dimensions ``d + 1 .. q - 1``, or, where no prefix is such, at some
    iteration (:func:`full_strips`)."""
    R = map_from_affs(st, pspace, [*vec[:q], vec[q]]).intersect_domain(st.domain.align_params(pspace)).range()
    outer = [f"t{p}" for p in range(q)]
    ends = [isl.Map(f"{{ [{', '.join(outer)}] -> [{', '.join(outer + ['v'])}] : v = {k}t{d} + {r} }}")
            .align_params(R.get_space()) for r in (0, k - 1)]   # (t) -> (t, k t_d + r)
    full = R.apply(ends[0].reverse()).intersect(R.apply(ends[1].reverse()))
    cut = R.project_out(isl.dim_type.set, q, 1).subtract(full)
    inner = q - at - 1
    some = full.project_out(isl.dim_type.set, at + 1, inner)
    every = some.subtract(cut.project_out(isl.dim_type.set, at + 1, inner))
    return some if every.is_empty() else every


def _isolate(node: isl.ScheduleNode, full: dict[int, isl.Set]) -> isl.ScheduleNode:
    """Ask isl to *isolate* the full strips of :func:`full_strips` in the band that holds their depth:
    the code of a full strip has the constant bounds ``k c .. k c + k - 1`` (the compiler unrolls it and
    keeps the strip's accumulators in registers), the partial strips get their own copy. isl takes one
    isolated set per band node: a band that holds several such depths (2mm's two jammed products, one
    after the other) is split before the second, and the rest of it, a band node of its own, isolates
    its own. Splitting a band changes no loop, only where isl may separate. Returns the node at the same
    tree position."""
    if node.get_type() == isl.schedule_node_type.band:
        b, m = node.get_schedule_depth(), node.band_n_member()
        inside = sorted(d for d in full if b <= d < b + m)
        if len(inside) > 1:
            node = node.band_split(inside[1] - b)
            m = node.band_n_member()
        if inside:
            d = inside[0]
            members = full[d].add_dims(isl.dim_type.set, b + m - d - 1)
            option = isl.Map.from_range(members).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, b)
            node = node.band_set_ast_build_options(
                isl.UnionSet.from_set(option.wrap().set_tuple_name("isolate")))
    for k in range(node.n_children()):
        node = _isolate(node.child(k), full).parent()
    return node


@dataclass(frozen=True)
class _Accumulation:
    """A statement that reads the element it writes, ``W``, with the same subscripts, and reads ``W``'s array
    through other subscripts too (``others``), on its domain ``dom``; ``vec`` its time vector, ``live`` its
    loop dimensions, ``pspace`` the parameters' space."""

    st: Statement
    vec: tuple
    live: list[int]
    dom: isl.Set
    W: isl.Map
    others: list[isl.Map]
    pspace: isl.Space

    def same_prefix(self, n: int) -> isl.Map:
        """``x -> y`` for every two instances at one value of the first ``n`` schedule dimensions."""
        prefix = map_from_affs(self.st, self.pspace, list(self.vec[:n])).intersect_domain(self.dom)
        return prefix.apply_range(prefix.reverse())

    def untouched(self, same: isl.Map) -> bool:
        """No other read at ``x`` is the element written at ``y``, for ``x -> y`` in ``same``."""
        return all(same.intersect(r.apply_range(self.W.reverse())).is_empty() for r in self.others)


def _accumulations(scop: Scop, schedule):
    """The :class:`_Accumulation` statements of ``scop`` under a polylab ``Schedule`` (none for other
    schedules and for accesses that are not affine). Distinct arrays never overlap (the model's assumption,
    said in the generated code); with no other read of the written array, the kernel's restrict arrays let
    the compiler keep the elements in registers itself (gemver's ``w[i]``, syrk's ``C[i][j]``: nothing to
    gain), so such statements are left out."""
    affs = getattr(schedule, "affs", None)
    if not affs:
        return
    pspace = scop.context.get_space()
    for st in scop.statements:
        vec = tuple(affs.get(st.name, ()))
        live = [d for d, a in enumerate(vec) if not a.is_cst()]
        if not live or len(st.writes) != 1 or not all(a.is_affine for a in st.accesses):
            continue
        (w,) = st.writes
        others = [r for r in st.reads if r.array == w.array and not r.relation.is_equal(w.relation)]
        if not others or not any(r.relation.is_equal(w.relation) for r in st.reads):
            continue
        dom = st.domain.align_params(pspace)
        yield _Accumulation(st, vec, live, dom, w.relation.align_params(pspace).intersect_domain(dom),
                            [r.relation.align_params(pspace).intersect_domain(dom) for r in others], pspace)


def register_rows(scop: Scop, schedule) -> frozenset[tuple[str, int]]:
    """``(S, d)`` for every accumulation ``S`` (it reads the element it writes, ``W``, with the same
    subscripts) whose elements can stay in registers across its loop ``d`` around its innermost loop ``q``
    (the rows of a jam, :mod:`polylab.schedule.jam`): at each value of the schedule prefix
    ``p = (t_0, .., t_{d-1})``, with ``row = t_q``, exactly (isl, on the statement's domain)

    * ``W`` is a function of the row: ``p(x) = p(y), row(x) = row(y)  =>  W(x) = W(y)``, and distinct rows
      write distinct elements: ``p(x) = p(y), row(x) != row(y)  =>  W(x) != W(y)``;
    * no other read of ``S`` touches an element ``W`` writes there: ``p(x) = p(y)  =>  r(x) != W(y)``, and
      some read of ``W``'s array has other subscripts (otherwise the kernel's ``restrict`` arrays already
      let the compiler keep the elements in registers).

    Where the loop ``d`` holds only the rows and ``S`` (the printer checks the code's shape), its ``k``
    elements are loaded before the loop, updated in registers and stored after it: the same operations in
    the same order on each element (bit for bit the original's), without the load and the store per
    iteration that the compiler keeps where it cannot tell ``A[i][k]`` from ``A[i][j]`` (cholesky's
    ``A[i][j] -= A[i][k] * A[j][k]`` with 8 rows of ``i``: 2.5x faster, measured). Read from a polylab
    ``Schedule``'s ``affs``; empty for other schedules and for accesses that are not affine."""
    out: set[tuple[str, int]] = set()
    for acc in _accumulations(scop, schedule):
        if len(acc.live) < 2:
            continue
        d, q = acc.live[-2], acc.live[-1]
        row = map_from_affs(acc.st, acc.pspace, [acc.vec[q]]).intersect_domain(acc.dom)
        same = acc.same_prefix(d)                                         # x -> y at one prefix
        same_row = same.intersect(row.apply_range(row.reverse()))
        hits = acc.W.apply_range(acc.W.reverse())                         # x -> y writing one element
        if not same_row.subtract(hits).is_empty() or not same.intersect(hits).subtract(same_row).is_empty():
            continue
        if acc.untouched(same):
            out.add((acc.st.name, d))
    return frozenset(out)


def register_accumulators(scop: Scop, schedule) -> frozenset[tuple[str, int]]:
    """``(S, q)`` for every accumulation ``S`` (it reads the element it writes, ``W``, with the same
    subscripts) whose element can stay in a scalar across its innermost loop ``q`` (the reduction loop of
    a jam, :func:`polylab.schedule.optimize.jams.jam_reductions`, or any innermost reduction loop): at each
    value of the schedule prefix ``p = (t_0, .., t_{q-1})``, exactly (isl, on the statement's domain)

    * ``W`` is the same element at every iteration of ``q``: ``p(x) = p(y)  =>  W(x) = W(y)``;
    * no other read of ``S`` touches it there: ``p(x) = p(y)  =>  r(x) != W(y)``, and some read of ``W``'s
      array has other subscripts (otherwise the kernel's ``restrict`` arrays already let the compiler keep
      the element in a register).

    Where the loop ``q`` holds only ``S`` (the printer checks the code's shape), the element is loaded
    into a scalar before the loop, updated there and stored after it: the same operations in the same
    order (bit for bit the original's), without the store and the load per iteration that the compiler
    keeps where it cannot tell ``B[i][j]`` from ``B[k][j]`` (trmm's ``B[i][j] += A[k][i] * B[k][j]``
    with 4 iterations of ``k`` jammed inside the vector loop ``j``). The dual of :func:`register_rows`,
    whose elements differ from row to row. Read from a polylab ``Schedule``'s ``affs``; empty for other
    schedules and for accesses that are not affine."""
    out: set[tuple[str, int]] = set()
    for acc in _accumulations(scop, schedule):
        q = acc.live[-1]
        same = acc.same_prefix(q)                                         # x -> y at one prefix
        if same.subtract(acc.W.apply_range(acc.W.reverse())).is_empty() and acc.untouched(same):
            out.add((acc.st.name, q))
    return frozenset(out)


def _iterator_names(scop: Scop, n: int) -> list[str]:
    taken = set(scop.parameters) | {a.name for a in scop.arrays} | {s.name for s in scop.scalars} | {
        c for c, _ in scop.constants}
    prefix = "c"
    while any(f"{prefix}{k}" in taken for k in range(n)):
        prefix += "_"
    return [f"{prefix}{k}" for k in range(n)]


def build(scop: Scop, schedule) -> LoopProgram:
    """Generate the loop program of ``schedule`` (tree, union map, or object with ``.tree``) for ``scop``."""
    tree = schedule_tree(scop, schedule)
    ctx = scop.context
    if isinstance(tree, isl.UnionMap):
        umap = tree.intersect_domain(scop.domain)
        missing = scop.domain.subtract(umap.domain())
        if not missing.is_empty():
            raise CodegenError(f"the schedule does not cover the instances {missing}",
                               hint="give every statement a schedule")
        maps: list[isl.Map] = []
        umap.foreach_map(maps.append)
        depth = max((m.dim(isl.dim_type.out) for m in maps), default=0)
        names = _iterator_names(scop, max(depth, 1))
        build_ = isl.AstBuild.from_context(ctx).set_iterators(_id_list(names))
        try:
            ast = build_.node_from_schedule_map(umap)
        except isl.Error as exc:
            raise CodegenError(f"isl could not generate code for the schedule: {exc}") from None
        text = str(umap)
    else:
        sched = tree.intersect_domain(scop.domain)
        shared = shared_innermost(schedule)
        if shared:
            sched = _separate(sched.get_root(), shared).get_schedule()
        full = full_strips(scop, schedule)
        if full:
            sched = _isolate(sched.get_root(), full).get_schedule()
        root = _mark_coincident(sched.get_root())
        sched = root.get_schedule()
        depth = _tree_depth(sched.get_root())
        names = _iterator_names(scop, max(depth, 1))
        build_ = isl.AstBuild.from_context(ctx).set_iterators(_id_list(names))
        try:
            ast = build_.node_from_schedule(sched)
        except isl.Error as exc:
            raise CodegenError(f"isl could not generate code for the schedule: {exc}") from None
        text = str(tree.get_map().intersect_domain(scop.domain))
    known = {s.name for s in scop.statements}
    root_node = convert(ast, names, frozenset(), known)
    depths = tuple(sorted({n.depth for n in nodes(root_node) if isinstance(n, For) and n.parallel}))
    plain = isinstance(tree, isl.UnionMap)
    regs = frozenset() if plain else register_rows(scop, schedule)
    accs = frozenset() if plain else register_accumulators(scop, schedule)
    return LoopProgram(root_node, tuple(names), text, depths, regs, accs)


def _id_list(names: list[str]) -> isl.IdList:
    lst = isl.IdList.alloc(isl.DEFAULT_CONTEXT, len(names))
    for n in names:
        lst = lst.add(isl.Id(n))
    return lst


def _tree_depth(node: isl.ScheduleNode) -> int:
    best = node.get_schedule_depth()
    if node.get_type() == isl.schedule_node_type.band:
        best += node.band_n_member()
    for k in range(node.n_children()):
        best = max(best, _tree_depth(node.child(k)))
    return best


_OPS = {getattr(isl.ast_expr_op_type, n): n.rstrip("_") for n in (
    "and_", "and_then", "or_", "or_else", "max", "min", "minus", "add", "sub", "mul", "div", "fdiv_q",
    "pdiv_q", "pdiv_r", "zdiv_r", "cond", "select", "eq", "le", "lt", "ge", "gt", "call", "access")}


def expr_of(e: isl.AstExpr) -> AExpr:
    """An isl AST expression as a value."""
    t = e.get_type()
    if t == isl.ast_expr_type.int:
        return Int(int(e.get_val().to_python()))
    if t == isl.ast_expr_type.id:
        return Id(e.get_id().get_name())
    op = _OPS.get(e.get_op_type())
    if op is None:
        raise CodegenError(f"unsupported isl AST operation {e.get_op_type()}")
    return Op(op, tuple(expr_of(e.get_op_arg(k)) for k in range(e.get_op_n_arg())))


def convert(n: isl.AstNode, names: list[str], parallel: frozenset[int] | None, known: set[str]) -> Node:
    """The node ``n`` as a value; ``parallel``: the coincident schedule depths of the marks above it
    (``None``: none)."""
    parallel = parallel or frozenset()
    t = n.get_type()
    if t == isl.ast_node_type.for_:
        it = n.for_get_iterator().get_id().get_name()
        depth = names.index(it) if it in names else -1
        inc = expr_of(n.for_get_inc())
        if not isinstance(inc, Int):
            raise CodegenError("a loop stride that is not a constant")
        degenerate = bool(n.for_is_degenerate())
        return For(it, expr_of(n.for_get_init()), expr_of(n.for_get_cond()) if not degenerate else Int(1),
                   inc.value, convert(n.for_get_body(), names, parallel, known),
                   parallel=depth >= 0 and depth in parallel and not degenerate,
                   degenerate=degenerate, depth=depth)
    if t == isl.ast_node_type.if_:
        other = convert(n.if_get_else_node(), names, parallel, known) if n.if_has_else_node() else None
        return If(expr_of(n.if_get_cond()), convert(n.if_get_then_node(), names, parallel, known), other)
    if t == isl.ast_node_type.block:
        kids = n.block_get_children()
        return Block(tuple(convert(kids.get_at(k), names, parallel, known)
                           for k in range(kids.n_ast_node())))
    if t == isl.ast_node_type.mark:
        mid = n.mark_get_id().get_name()
        if mid.startswith(_MARK):
            parallel = parallel | {int(d) for d in mid[len(_MARK):].split("_")}
        return convert(n.mark_get_node(), names, parallel, known)
    if t == isl.ast_node_type.user:
        e = expr_of(n.user_get_expr())
        if not (isinstance(e, Op) and e.op == "call" and isinstance(e.args[0], Id)
                and e.args[0].name in known):
            raise CodegenError(f"unexpected statement in the generated AST: {e}")
        return User(e.args[0].name, e.args[1:])
    raise CodegenError(f"unsupported isl AST node {t}")
