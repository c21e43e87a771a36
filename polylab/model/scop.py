"""The polyhedral model: statements, iteration domains, access relations, arrays, the original schedule.

A static control part (SCoP) is a region whose loop bounds, conditions and subscripts are affine (or
quasi-affine: integer division and modulo by constants) in the surrounding iterators and the parameters.
Each statement ``S`` has an iteration domain ``D_S`` (an isl set ``[params] -> { S[i, j] : ... }``) and
accesses ``S[i, j] -> A[f(i, j)]`` (isl maps restricted to ``D_S``). The original schedule is the isl
schedule tree of the source's loop structure (bands for loops, sequences for statement order).

The teaching views are derived from the isl objects, never stored beside them: a domain as
``A x + b >= 0`` (``b`` affine in the parameters), an access as ``F x + c``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Iterator, Literal

import islpy as isl
import sympy

from polylab import render
from polylab.errors import ModelError, SourceLocation
from polylab.model.expr import Assignment, assignment_to_c
from polylab.model.islutil import integer_val, sets_of


def _val_to_sympy(v: isl.Val) -> sympy.Rational:
    return sympy.Rational(str(v))


@dataclass(frozen=True, eq=False)
class Access(render.Rendered):
    """One array reference of a statement: ``kind`` is ``"read"`` or ``"write"``.

    ``relation`` is the isl map ``{ S[x] -> A[F x + c] }`` restricted to the statement's domain; a
    0-dimensional array (a scalar written in the region) has the range ``A[]``.
    """

    index: int
    kind: Literal["read", "write"]
    array: str
    relation: isl.Map
    location: SourceLocation
    text: str

    @cached_property
    def _affine(self) -> tuple[sympy.Matrix, sympy.Matrix] | None:
        return affine_function(self.relation)

    @property
    def is_affine(self) -> bool:
        """True when every subscript is affine without integer division or modulo."""
        return self._affine is not None

    @property
    def matrix(self) -> sympy.Matrix | None:
        """``F``: one row per array dimension, one column per iterator (None when not affine)."""
        return self._affine[0] if self._affine else None

    @property
    def offset(self) -> sympy.Matrix | None:
        """``c``: a column of affine expressions in the parameters (None when not affine)."""
        return self._affine[1] if self._affine else None

    def __str__(self) -> str:
        return f"{self.kind:5} {self.text:24} {self.relation}"


def affine_function(relation: isl.Map) -> tuple[sympy.Matrix, sympy.Matrix] | None:
    """``(F, c)`` with ``relation = { x -> F x + c }`` when it is one affine function without division.

    Columns of ``F`` follow the input dimensions; ``c`` holds affine expressions in the parameters.
    Returns None when the relation is not single-valued, has several pieces or uses integer division.
    """
    if not relation.is_single_valued():
        return None
    pma = isl.PwMultiAff.from_map(relation).coalesce()
    if pma.n_piece() != 1:
        return None
    pieces: list = []
    pma.foreach_piece(lambda _set, ma: pieces.append(ma))
    ma = pieces[0]
    n_in = relation.dim(isl.dim_type.in_)
    params = [relation.get_dim_name(isl.dim_type.param, k) for k in range(relation.dim(isl.dim_type.param))]
    rows_f, rows_c = [], []
    for r in range(ma.dim(isl.dim_type.out)):
        aff = ma.get_at(r)
        if aff.dim(isl.dim_type.div) and any(
                not aff.get_coefficient_val(isl.dim_type.div, k).is_zero()
                for k in range(aff.dim(isl.dim_type.div))):
            return None
        coeffs = [_val_to_sympy(aff.get_coefficient_val(isl.dim_type.in_, k)) for k in range(n_in)]
        pcoef = [_val_to_sympy(aff.get_coefficient_val(isl.dim_type.param, k)) for k in range(len(params))]
        const = _val_to_sympy(aff.get_constant_val())
        if any(not c.is_integer for c in coeffs + pcoef + [const]):
            return None
        rows_f.append(coeffs)
        rows_c.append(const + sum(c * sympy.Symbol(p, integer=True) for c, p in zip(pcoef, params)))
    return sympy.Matrix(len(rows_f), n_in, [x for row in rows_f for x in row]), sympy.Matrix(rows_c)


@dataclass(frozen=True)
class DomainMatrix:
    """An iteration domain (one convex piece) as ``A x + b >= 0`` and ``E x + e = 0``.

    ``b`` and ``e`` are columns of affine expressions in the parameters. ``existentials`` counts the
    local (existentially quantified) variables isl needed, for example for ``i % 2 == 0``; constraints
    that involve them are listed in ``other`` as isl text.
    """

    iterators: tuple[str, ...]
    A: sympy.Matrix
    b: sympy.Matrix
    E: sympy.Matrix
    e: sympy.Matrix
    existentials: int
    other: tuple[str, ...]


def domain_matrices(domain: isl.Set) -> tuple[DomainMatrix, ...]:
    """One :class:`DomainMatrix` per convex piece of ``domain`` (usually exactly one)."""
    n = domain.dim(isl.dim_type.set)
    iters = tuple(domain.get_dim_name(isl.dim_type.set, k) or f"x{k}" for k in range(n))
    params = [domain.get_dim_name(isl.dim_type.param, k) for k in range(domain.dim(isl.dim_type.param))]
    out = []
    for bset in domain.get_basic_sets():
        ineq_rows, ineq_c, eq_rows, eq_c, other = [], [], [], [], []
        n_div = bset.dim(isl.dim_type.div)
        for c in bset.get_constraints():
            if any(not c.get_coefficient_val(isl.dim_type.div, k).is_zero() for k in range(n_div)):
                other.append(str(c))
                continue
            row = [_val_to_sympy(c.get_coefficient_val(isl.dim_type.set, k)) for k in range(n)]
            const = _val_to_sympy(c.get_constant_val()) + sum(
                _val_to_sympy(c.get_coefficient_val(isl.dim_type.param, k)) * sympy.Symbol(p, integer=True)
                for k, p in enumerate(params))
            (eq_rows if c.is_equality() else ineq_rows).append(row)
            (eq_c if c.is_equality() else ineq_c).append(const)
        out.append(DomainMatrix(
            iters,
            sympy.Matrix(len(ineq_rows), n, [x for r in ineq_rows for x in r]), sympy.Matrix(ineq_c),
            sympy.Matrix(len(eq_rows), n, [x for r in eq_rows for x in r]), sympy.Matrix(eq_c),
            n_div, tuple(other)))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Statement(render.Rendered):
    """One statement: its name (``S0``, ``S1``, ... in textual order), source and polyhedral facts."""

    name: str
    text: str
    location: SourceLocation
    iterators: tuple[str, ...]
    domain: isl.Set
    accesses: tuple[Access, ...]
    body: Assignment

    @property
    def line(self) -> int:
        return self.location.line

    @property
    def reads(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.kind == "read")

    @property
    def writes(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.kind == "write")

    @property
    def depth(self) -> int:
        return len(self.iterators)

    def domain_matrices(self) -> tuple[DomainMatrix, ...]:
        """The domain as ``A x + b >= 0`` (one entry per convex piece)."""
        return domain_matrices(self.domain)

    def code(self) -> str:
        """The statement as C, printed from its expression tree."""
        return assignment_to_c(self.body)

    def __str__(self) -> str:
        return f"{self.name} (line {self.line}): {self.text}\n  domain: {self.domain}\n" + "\n".join(
            f"  {a}" for a in self.accesses)


@dataclass(frozen=True)
class Array:
    """An array of the region: element type, extents (C expressions in parameters and constants).

    ``declared`` tells whether the extents come from a declaration or were inferred from the accessed
    elements (the smallest box holding every element accessed, computed with isl). A scalar written in
    the region is an array of rank 0.
    """

    name: str
    ctype: str
    extents: tuple[str, ...]
    declared: bool = True
    #: storage a transformation introduced (a contraction's buffer): local to the region, so never live-out
    temporary: bool = False

    @property
    def rank(self) -> int:
        return len(self.extents)

    def declaration(self) -> str:
        return f"{self.ctype} {self.name}" + "".join(f"[{e}]" for e in self.extents) + ";"


@dataclass(frozen=True)
class Scalar:
    """A scalar that the region reads and never writes and that is not an integer parameter
    (``double alpha;``, ``float f = 7.01;``). ``value`` is its initialiser when the source gives one."""

    name: str
    ctype: str
    value: str | None = None


@dataclass(frozen=True)
class Placement:
    """Where a ``#pragma scop`` region sits in its file, for code that replaces it there (lines of the
    file, from 1).

    ``first_line`` / ``last_line``: the lines of ``#pragma scop`` and of ``#pragma endscop``; every line
    from the one to the other belongs to the region. ``function``: the function whose body holds it, and
    ``function_line``: the line on which that function's definition starts (its first word, e.g.
    ``static``), where file-scope definitions the replacement needs can go (None outside a function, or
    when other code precedes the definition on its line). ``read_after``: the region's loop counters that
    the function may read after the region (declared outside it, and read before being assigned anew):
    code that replaces the region must leave them as the region does, or refuse."""

    first_line: int
    last_line: int
    function: str | None = None
    function_line: int | None = None
    read_after: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Scop(render.Rendered):
    """A static control part with everything later layers need.

    ``live_out``: the array elements read after the region (a whole program tells which, for example the
    element ``sl3.sy`` prints), or None when unknown, which means every array is live after the region,
    except the scalars in ``dead_after``: those the region writes and nobody reads after it (locals of the
    function around a ``#pragma scop`` region that the function does not read after the region).
    """

    name: str
    statements: tuple[Statement, ...]
    arrays: tuple[Array, ...]
    parameters: tuple[str, ...]
    context: isl.Set
    schedule: isl.Schedule
    scalars: tuple[Scalar, ...] = ()
    live_out: isl.UnionSet | None = None
    source: str = ""
    language: Literal["c", "sysy"] = "c"
    location: SourceLocation | None = None
    constants: tuple[tuple[str, int], ...] = ()
    notes: tuple[str, ...] = field(default=())
    #: where a ``#pragma scop`` region sits in its file (None for other regions)
    placement: Placement | None = None
    #: scalars written in the region whose value after it nobody reads (see the class text)
    dead_after: tuple[str, ...] = ()

    # -- lookups --------------------------------------------------------------------------------------
    def statement(self, name: str) -> Statement:
        for s in self.statements:
            if s.name == name:
                return s
        raise ModelError(f"no statement named {name!r}",
                         hint=f"the statements are {', '.join(s.name for s in self.statements)}")

    def array(self, name: str) -> Array:
        for a in self.arrays:
            if a.name == name:
                return a
        raise ModelError(f"no array named {name!r}",
                         hint=f"the arrays are {', '.join(a.name for a in self.arrays)}")

    def accesses(self) -> Iterator[tuple[Statement, Access]]:
        for s in self.statements:
            for a in s.accesses:
                yield s, a

    def live_after(self, array: str) -> bool:
        """Some element of ``array`` may be read after the region when ``live_out`` is None: every array
        but the scalars of ``dead_after`` and the buffers a transformation introduced (``Array.temporary``,
        local to the region)."""
        return array not in self.dead_after and not any(a.name == array and a.temporary for a in self.arrays)

    def without_dead(self, elements: isl.UnionSet) -> isl.UnionSet:
        """``elements`` less those of the arrays not live after the region (:meth:`live_after`): what is
        live of them when ``live_out`` is None."""
        out = isl.UnionSet.empty(elements.get_space())
        for piece in sets_of(elements):
            if self.live_after(piece.get_tuple_name()):
                out = out.union(isl.UnionSet.from_set(piece))
        return out

    # -- isl views ------------------------------------------------------------------------------------
    @property
    def domain(self) -> isl.UnionSet:
        """The union of the statements' iteration domains."""
        out = isl.UnionSet.empty(self.context.get_space())
        for s in self.statements:
            out = out.union(isl.UnionSet.from_set(s.domain))
        return out

    def _union(self, kind: str) -> isl.UnionMap:
        out = isl.UnionMap.empty(self.context.get_space())
        for _, a in self.accesses():
            if a.kind == kind:
                out = out.union(isl.UnionMap.from_map(a.relation))
        return out

    @property
    def reads(self) -> isl.UnionMap:
        """``{ S[x] -> A[e] }`` for every read."""
        return self._union("read")

    @property
    def writes(self) -> isl.UnionMap:
        """``{ S[x] -> A[e] }`` for every write."""
        return self._union("write")

    @property
    def schedule_map(self) -> isl.UnionMap:
        """The original schedule as a map from statement instances to time vectors."""
        return self.schedule.get_map().intersect_domain(self.domain)

    def with_parameters(self, values: dict[str, int]) -> "Scop":
        """The same SCoP with some parameters fixed in the context (``{'N': 8}``)."""
        ctx = self.context
        for name, v in values.items():
            if name not in self.parameters:
                raise ModelError(f"no parameter named {name!r}",
                                 hint=f"the parameters are {', '.join(self.parameters) or 'none'}")
            k = ctx.find_dim_by_name(isl.dim_type.param, name)
            ctx = ctx.fix_val(isl.dim_type.param, k, integer_val(ctx.get_ctx(), int(v)))  # any size
        return replace(self, context=ctx)


@dataclass(frozen=True)
class Rejection:
    """A construct that keeps code out of a static control part: where, why, and how to fix it."""

    location: SourceLocation
    reason: str
    hint: str | None = None

    def __str__(self) -> str:
        s = f"line {self.location.line}, column {self.location.column}: {self.reason}"
        return s + (f" ({self.hint})" if self.hint else "")


@dataclass(frozen=True, eq=False)
class Program(render.Rendered):
    """A parsed input: its static control parts and, for whole programs, the constructs left out."""

    source: str
    language: Literal["c", "sysy"]
    scops: tuple[Scop, ...]
    rejected: tuple[Rejection, ...] = ()
    filename: str | None = None

    @property
    def scop(self) -> Scop:
        """The single (or first) static control part."""
        if not self.scops:
            raise ModelError("the input has no static control part")
        return self.scops[0]
