"""The machine the code is chosen for (:class:`Machine`), and what the optimizer counts of the data:
element sizes and the region's footprint.

A :class:`Machine` is a value given to the search; nothing below the command line, the notebook and the
benchmark reads the machine it runs on (those layers build one with
:func:`polylab.bench.machine.detect_machine`, from ``OMP_NUM_THREADS``, the CPU affinity, Linux's sysfs
and ``/proc/cpuinfo``). The same program and the same :class:`Machine` give the same schedule anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import islpy as isl

from polylab.errors import ScheduleError
from polylab.model import Access, Scop, Statement
from polylab.model.islutil import point_coordinates
from polylab.model.memo import ObjectMemo
from polylab.schedule.tuning import COUNT_ROWS, ELEMENT_BYTES

#: the vector width of gcc's default x86-64 build (SSE2): 16 bytes
DEFAULT_VECTOR_BYTES = 16


@dataclass(frozen=True)
class Machine:
    """What the optimizer knows of the machine the code will run on.

    ``threads``: the threads the code will run with; ``vector_bytes``: the vector width of the build
    (16 for gcc's default x86-64 build, SSE2; 32 with AVX/AVX2, ``-march=native`` on most processors);
    ``l1_bytes`` / ``l2_bytes``: the L1 data and L2 cache sizes of one core; ``l3_bytes``: the last-level
    cache. The defaults are those of the shared development machine the tuning constants were measured on
    (one thread, the default build, 32 KiB L1, 512 KiB L2, 8 MiB L3), so a search given no machine chooses
    as it did there."""

    threads: int = 1
    vector_bytes: int = DEFAULT_VECTOR_BYTES
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 512 * 1024
    l3_bytes: int = 8 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in ("threads", "vector_bytes", "l1_bytes", "l2_bytes", "l3_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ScheduleError(f"the machine's {name} must be a positive integer, not {value!r}",
                                    hint="for example Machine(threads=2, vector_bytes=32)")

    def with_threads(self, threads: int) -> "Machine":
        """The same machine running ``threads`` threads."""
        return replace(self, threads=threads)

    def with_vector(self, vector_bytes: int) -> "Machine":
        """The same machine with a build whose vectors are ``vector_bytes`` wide."""
        return replace(self, vector_bytes=vector_bytes)


def element_bytes(scop) -> dict[str, int]:
    """Array name -> the bytes of one element (:data:`~polylab.schedule.tuning.ELEMENT_BYTES`, 8 for other
    types)."""
    return {a.name: ELEMENT_BYTES.get(a.ctype.split()[-1], 8) for a in scop.arrays}


#: the footprint of each SCoP already measured (a SCoP is immutable; the entry goes when it does)
_FOOTPRINTS: ObjectMemo[Scop, int | None] = ObjectMemo("optimize.footprint")


def footprint_bytes(scop: Scop) -> int | None:
    """The bytes of every array element the region touches: ``sum_A |{ F_a(x) : x in D_S, a of A }| *
    sizeof(A)`` (exact counts of the union of the accessed elements) where the sizes are constants; where
    the program has parameters, the declared sizes of the arrays it touches when they are all constants (an
    upper bound: every access stays inside its array; PolyBench's kernels run to ``n`` over arrays declared
    ``[N]``); None otherwise (the sizes are known only when it runs)."""
    if scop.parameters:
        return declared_bytes(scop)
    return _FOOTPRINTS.get(scop, lambda: _count_footprint(scop))


def declared_bytes(scop: Scop) -> int | None:
    """The declared bytes of the arrays the region accesses, when every extent of theirs is an integer
    constant; None otherwise."""
    touched = {acc.array for st in scop.statements for acc in st.accesses}
    sizes = [array_bytes(scop, a.name) for a in scop.arrays if a.name in touched]
    return None if any(b is None for b in sizes) else sum(b for b in sizes if b is not None)


#: the largest sizes each SCoP's declarations allow, already computed (the entry goes with the SCoP)
_SIZES: ObjectMemo[Scop, "dict[str, int] | None"] = ObjectMemo("optimize.declared_sizes")


def declared_sizes(scop: Scop) -> dict[str, int] | None:
    """The parameter values the counts are made at: none (``{}``) for a program without parameters; those
    the context fixes; else the lexicographically largest ``p`` in
    ``(C /\\ ∩_S params(D_S)) \\ U_{S,a} { p : exists x in D_S(p), F_a x + c_a not in [0, E_a) }``:
    the sizes at which every statement runs, less those at which some access leaves its array's constant
    declared extents ``E_a`` (PolyBench's kernels run to ``n`` over arrays declared ``[N]``: ``n = N``).

    A parameter that has no largest value there (one that no access bounds: a time count, jacobi-1d's
    ``tsteps``) is taken as large as the largest of the others: where its loop runs around a team, the
    work per start does not depend on it (jacobi-1d: ``n - 2`` instances per start whatever ``tsteps``),
    and where it runs inside one, a large value counts the team as busy and keeps its OpenMP loop.
    None where that set is empty, where no parameter is bounded, or where some accessed array is declared
    with a non-constant extent (a transformation's buffer, ``Array.temporary``, whose extents follow the
    loops, is not one of the arrays that bound the sizes)."""
    return _SIZES.get(scop, lambda: _largest_sizes(scop))


def context_sizes(scop: Scop) -> dict[str, int] | None:
    """The parameter values when the context fixes every one of them (``--param``), else None."""
    context = scop.context.params()
    fixed = [context.plain_get_val_if_fixed(isl.dim_type.param, k) for k in range(len(scop.parameters))]
    return {p: int(v.to_python()) for p, v in zip(scop.parameters, fixed)} if all(v.is_int() for v in fixed) else None


def _largest_sizes(scop: Scop) -> dict[str, int] | None:
    fixed = context_sizes(scop)
    if fixed is not None:
        return fixed
    context = allowed = scop.context.params()
    for stmt, acc in scop.accesses():
        array = scop.array(acc.array)
        if array.temporary:  # a transformation's buffer: its extents follow the loops, bounding nothing
            continue
        extents = array.extents
        if not all(e.strip().isdigit() for e in extents):
            return None
        image = acc.relation.intersect_domain(stmt.domain.intersect_params(context)).range()
        inside = isl.Set.universe(image.get_space())
        for k, e in enumerate(extents):
            inside = (inside.lower_bound_val(isl.dim_type.set, k, isl.Val.int_from_si(inside.get_ctx(), 0))
                      .upper_bound_val(isl.dim_type.set, k, isl.Val.int_from_si(inside.get_ctx(), int(e) - 1)))
        allowed = allowed.subtract(image.subtract(inside).params())
    for stmt in scop.statements:  # sizes at which every statement runs (else the others are unbounded)
        allowed = allowed.intersect(stmt.domain.params())
    n = len(scop.parameters)
    box = allowed.move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, n)
    if box.is_empty():
        return None
    largest = [box.dim_max_val(k) for k in range(n)]
    bounded = [int(v.to_python()) for v in largest if v.is_int()]
    if not bounded:
        return None
    for k, v in enumerate(largest):  # a count no array bounds (a time loop): as large as the largest size
        if not v.is_int():
            box = box.fix_val(isl.dim_type.set, k, isl.Val.int_from_si(box.get_ctx(), max(bounded)))
    if box.is_empty() or any(not box.dim_max_val(k).is_int() for k in range(n)):
        return None
    point = box.lexmax().sample_point()
    return dict(zip(scop.parameters, point_coordinates(point)))


def at_sizes(s: isl.Set, sizes: dict[str, int]) -> isl.Set:
    """``s`` at the parameter values ``sizes`` (each fixed, then projected out): a set without parameters,
    which isl can count."""
    for name, v in sizes.items():
        k = s.find_dim_by_name(isl.dim_type.param, name)
        if k >= 0:
            s = s.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(s.get_ctx(), v))
    return s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param))


def countable(s: isl.Set) -> bool:
    """isl counts a set without parameters row by row (each innermost range at once, about 11 isl
    operations a row): its rows, the points of its projection on every dimension but the last (counted
    the same way, level by level), are at most :data:`COUNT_ROWS` (adi at PolyBench's LARGE size, a
    million rows of ``t, i``, would take more isl operations than the whole search may use)."""
    n = s.dim(isl.dim_type.set)
    if n <= 1:
        return True
    rows = s.project_out(isl.dim_type.set, n - 1, 1)
    return countable(rows) and int(rows.count_val().to_python()) <= COUNT_ROWS


def array_bytes(scop: Scop, name: str) -> int | None:
    """The declared bytes of array ``name`` when its extents are integer constants, else None."""
    array = next(a for a in scop.arrays if a.name == name)
    if not all(e.strip().isdigit() for e in array.extents):
        return None
    count = 1
    for e in array.extents:
        count *= int(e)
    return count * element_bytes(scop).get(name, 8)


def read_bytes(scop: Scop, stmt: Statement, acc: Access) -> int | None:
    """The bytes of the elements access ``acc`` of ``stmt`` reads over its whole domain: exact where the
    sizes are constants, else bounded by its array's declared size when that is constant; None otherwise."""
    if not scop.parameters:
        try:
            count = int(acc.relation.intersect_domain(stmt.domain).range().count_val().to_python())
        except isl.Error:  # isl could not count the set: bounded by the declaration, as with parameters
            return array_bytes(scop, acc.array)
        return count * element_bytes(scop).get(acc.array, 8)
    return array_bytes(scop, acc.array)


def _count_footprint(scop: Scop) -> int | None:
    sizes_of = element_bytes(scop)
    touched: dict[str, isl.Set] = {}
    try:
        for stmt in scop.statements:
            for acc in stmt.accesses:
                img = acc.relation.intersect_domain(stmt.domain).range()
                touched[acc.array] = img if acc.array not in touched else touched[acc.array].union(img)
        return sum(int(e.count_val().to_python()) * sizes_of.get(a, 8) for a, e in touched.items())
    except isl.Error:  # isl could not count a set: unknown, as with parameters
        return None


def fits_in_cache(scop: Scop, machine: Machine) -> bool:
    """The region's data (:func:`footprint_bytes`: exact, or bounded by the arrays' declared sizes) fits in
    half the L2 caches of the machine's threads together (one L2 per core, each thread's share of a
    parallel sweep in its own): then the tiles that keep data in cache (time tiles) only add loop overhead
    (heat-3d at its small size, 20^3 points of two arrays, 128 KiB: 0.71x of the original with time tiles;
    PolyBench's heat-3d at MEDIUM, 1,000 KB, on two threads of 1 MiB L2 each: its time tiles' wavefront
    ran 5.41 ms against 4.17 ms without them, the original 4.47 ms)."""
    b = footprint_bytes(scop)
    return b is not None and b <= max(1, machine.threads) * machine.l2_bytes // 2
