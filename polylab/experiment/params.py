"""Parameter values, checked before anything is generated, compiled or run.

:func:`validate_params` decides whether a SCoP can be run at given parameter values, exactly (isl and
Python integers, never machine arithmetic), and says why not:

1. every parameter has a value and nothing else does; each value is an integer (:func:`parameter_value`:
   ``8`` or ``"8"``, never ``8.5``, ``True`` or ``"10**20"``);
2. each value fits the generated code's ``int`` (:data:`INT_MIN` .. :data:`INT_MAX`): the kernels take
   ``int`` parameters and index with ``int`` (the harness reads 64-bit values and checks them again);
3. the values lie in the SCoP's context (the conditions the program assumes);
4. every array extent is between 0 and :data:`INT_MAX`, and the arrays fit in memory: their byte sizes
   (elements times the element size, exact) must leave room under a run's memory limit (or, without
   one, under the machine's physical memory); a refusal names each array with its byte size;
5. every iterator value of every statement instance (and, when a schedule is given, every time value of
   the schedule, which the generated loops hold in ``int`` variables) fits an ``int``;
6. every access stays inside its declared array: isl proves ``0 <= f(x) < extent`` for every instance
   ``x`` of the statement at these values; otherwise the refusal names the access (its text and source
   location), the element it reaches and the instance (``a[i + 1]`` reaches ``a[8]`` at ``i = 7`` when
   ``N = 8``, outside ``double a[N]``). Arrays whose extents were *inferred* from the accesses
   (``Array.declared`` false) are exempt from the upper bound: their extents are the largest index
   accessed plus one, so no access can pass them; their lower bound 0 is still checked, since the
   harness allocates from index 0.
7. warnings (not refusals): an access that the context allows to leave its array for *other* parameter
   values (``for (i = 0; i < N; i++) a[i]`` with ``double a[M]``: fine at ``N = 5, M = 10``, not when
   ``N > M``), found by isl over the symbolic extents when they are affine.

:func:`check_params` is the short form the layers above call: the checked values, in
``Scop.parameters`` order.
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

import islpy as isl

from polylab.codegen.extents import extent_box, extent_values
from polylab.codegen.harness import numpy_dtype
from polylab.model.islutil import point_coordinates
from polylab.errors import CodegenError, ModelError
from polylab.model.scop import Access, Array, Scop, Statement
from polylab.toolchain import DEFAULT_MEMORY_LIMIT_MB

__all__ = ["INT_MAX", "INT_MIN", "ArraySize", "ParameterCheck", "check_params", "parameter_value",
           "validate_params"]

INT_MIN = -(2 ** 31)
INT_MAX = 2 ** 31 - 1
#: bytes a run needs beside its arrays (code, stack, C library, OpenMP threads), kept free under the limit
RUN_OVERHEAD_BYTES = 64 * 2 ** 20

_DECIMAL = re.compile(r"^\s*[+-]?\d+\s*$")


@dataclass(frozen=True)
class ArraySize:
    """How much memory one array takes at given parameter values (exact integers)."""

    name: str
    ctype: str
    extents: tuple[int, ...]
    elements: int
    bytes: int

    def __str__(self) -> str:
        shape = "".join(f"[{e}]" for e in self.extents)
        return f"{self.ctype} {self.name}{shape}: {self.bytes:,} bytes"


@dataclass(frozen=True)
class ParameterCheck:
    """Parameter values that passed :func:`validate_params`, with the array sizes and the warnings."""

    values: Mapping[str, int]
    sizes: tuple[ArraySize, ...]
    warnings: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(s.bytes for s in self.sizes)


def parameter_value(name: str, value: object) -> int:
    """``value`` as a Python integer: an ``int`` (or an integer type such as numpy's) or a decimal string;
    anything else (a float, a bool, ``"10**20"``, ``"1e3"``) is a :class:`~polylab.errors.ModelError`."""
    if isinstance(value, str):
        if not _DECIMAL.match(value):
            raise ModelError(f"{name} = {value!r} is not an integer",
                             hint=f"write a decimal integer, e.g. {name}=64")
        return int(value)
    if isinstance(value, bool):
        raise ModelError(f"{name} = {value!r} is not an integer", hint=f"write a decimal integer, e.g. {name}=64")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ModelError(f"{name} = {value!r} is not an integer",
                         hint=f"write a decimal integer, e.g. {name}=64") from None


def _declaration(a: Array) -> str:
    return a.declaration().rstrip(";")


def _where(values: Mapping[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in values.items()) or "these values"


def _named_values(scop: Scop, params: Mapping[str, object] | None, complete: bool) -> dict[str, int]:
    given = dict(params or {})
    unknown = [p for p in given if p not in scop.parameters]
    if unknown:
        raise ModelError(f"no parameter named {unknown[0]!r}",
                         hint=f"the parameters are {', '.join(scop.parameters) or 'none'}")
    missing = [p for p in scop.parameters if p not in given]
    if missing and complete:
        raise ModelError(f"no value for the parameter{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                         hint="give every parameter a value, e.g. "
                              + " ".join(f"--param {p}=16" for p in scop.parameters))
    values = {p: parameter_value(p, given[p]) for p in scop.parameters if p in given}
    for p, v in values.items():
        if not INT_MIN <= v <= INT_MAX:
            raise ModelError(f"{p} = {v} does not fit the generated code's 32-bit int "
                             f"({INT_MIN} to {INT_MAX})",
                             hint="the kernels take int parameters and index with int; choose a smaller value")
    return values


def fixed_context(scop: Scop, values: Mapping[str, int]) -> isl.Set:
    """The SCoP's context with the given parameters fixed (empty when the values are outside it)."""
    ctx = scop.context
    for name, v in values.items():
        k = ctx.find_dim_by_name(isl.dim_type.param, name)
        ctx = ctx.fix_val(isl.dim_type.param, k, isl.Val(str(v), ctx.get_ctx()))
    return ctx


def _array_sizes(scop: Scop, values: Mapping[str, int]) -> list[ArraySize]:
    sizes = []
    for a in scop.arrays:
        try:
            extents = extent_values(scop, a, values)
        except CodegenError as err:
            raise ModelError(f"cannot size array {a.name} ({_declaration(a)}): {err.message}") from None
        for d, e in enumerate(extents):
            if not 0 <= e <= INT_MAX:
                raise ModelError(f"at {_where(values)}, array {a.name} ({_declaration(a)}) would have extent {e} "
                                 f"in dimension {d}",
                                 hint="choose parameter values for which every extent is from 0 to "
                                      f"{INT_MAX} (the kernels index with int)")
        elements = 1
        for e in extents:
            elements *= e
        sizes.append(ArraySize(a.name, a.ctype, extents, elements, elements * numpy_dtype(a.ctype).itemsize))
    return sizes


def _memory_limit_bytes(memory_limit_mb: int | None) -> tuple[int, str]:
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if memory_limit_mb is not None and memory_limit_mb * 2 ** 20 < physical:
        return memory_limit_mb * 2 ** 20, f"the {memory_limit_mb} MB memory limit of a run"
    return physical, f"this machine's memory ({physical / 2 ** 30:.1f} GiB)"


def _check_memory(sizes: list[ArraySize], values: Mapping[str, int], memory_limit_mb: int | None) -> None:
    limit, what = _memory_limit_bytes(memory_limit_mb)
    total = sum(s.bytes for s in sizes)
    if total + RUN_OVERHEAD_BYTES <= limit:
        return
    biggest = sorted(sizes, key=lambda s: -s.bytes)[:4]
    raise ModelError(f"at {_where(values)} the arrays need {total:,} bytes ({total / 2 ** 30:.2f} GiB), more than "
                     f"{what} allows: " + "; ".join(str(s) for s in biggest),
                     hint="choose smaller parameter values (verify at small sizes, time at large ones)")


def _describe(names: list[str], point: isl.Point, dim: isl.dim_type) -> str:
    values = point_coordinates(point, 0, len(names), dim_type=dim)
    return ", ".join(f"{n} = {v}" for n, v in zip(names, values))


def _check_int_ranges(scop: Scop, ctx: isl.Set, values: Mapping[str, int],
                      schedule: isl.UnionMap | None) -> None:
    """Every iterator value (and schedule time value) at these parameters fits an ``int``."""
    for st in scop.statements:
        dom = st.domain.intersect_params(ctx)
        if dom.is_empty():
            continue
        for k, it in enumerate(st.iterators):
            for bound in (dom.dim_min_val(k), dom.dim_max_val(k)):
                if bound.is_infty() or bound.is_neginfty():
                    raise ModelError(f"at {_where(values)} the loop over {it} of {st.name} has no bound",
                                     location=st.location, hint="bound every loop by the parameters")
                v = int(bound.to_python())
                if not INT_MIN <= v <= INT_MAX:
                    raise ModelError(f"at {_where(values)} the iterator {it} of {st.name} reaches {v}, beyond the "
                                     "generated code's 32-bit int", location=st.location,
                                     hint="choose smaller parameter values")
    if schedule is None:
        return
    maps: list[isl.Map] = []
    schedule.intersect_params(ctx).foreach_map(maps.append)
    for m in maps:
        rng = m.range()
        for k in range(rng.dim(isl.dim_type.set)):
            if rng.is_empty():
                continue
            for bound in (rng.dim_min_val(k), rng.dim_max_val(k)):
                if bound.is_infty() or bound.is_neginfty() or not INT_MIN <= int(bound.to_python()) <= INT_MAX:
                    raise ModelError(f"at {_where(values)} time dimension {k} of the schedule of "
                                     f"{m.get_tuple_name(isl.dim_type.in_)} reaches {bound}, beyond the "
                                     "generated code's 32-bit int", hint="choose smaller parameter values")


def _box(array: Array, extents: tuple[int, ...] | None, space: isl.Space) -> isl.Set:
    """``{ A[e] : 0 <= e_k < extent_k }`` (``extents`` None: only ``e_k >= 0``) in the range space of an
    access relation."""
    box = isl.Set.universe(space)
    for k in range(array.rank):
        var = isl.Constraint.inequality_alloc(isl.LocalSpace.from_space(space))
        box = box.add_constraint(var.set_coefficient_val(isl.dim_type.set, k, 1))
        if extents is not None:
            upper = isl.Constraint.inequality_alloc(isl.LocalSpace.from_space(space))
            upper = upper.set_coefficient_val(isl.dim_type.set, k, -1).set_constant_val(
                isl.Val(str(extents[k] - 1), space.get_ctx()))
            box = box.add_constraint(upper)
    return box


def _out_of_bounds(st: Statement, acc: Access, array: Array, extents: tuple[int, ...], ctx: isl.Set,
                   values: Mapping[str, int]) -> None:
    rel = acc.relation.intersect_params(ctx)
    inside = _box(array, extents if array.declared else None, rel.get_space().range())
    bad = rel.intersect_range(inside.complement())
    if bad.is_empty():
        return
    point = bad.wrap().lexmin().sample_point()
    n = len(st.iterators)
    index = list(point_coordinates(point, n, array.rank))
    instance = _describe(list(st.iterators), point, isl.dim_type.set) or "its only instance"
    k = next(d for d, e in enumerate(index) if e < 0 or (array.declared and e >= extents[d]))
    if array.declared:
        why = f"index {index[k]} is outside 0..{extents[k] - 1} in dimension {k} of {_declaration(array)}"
    else:
        why = (f"index {index[k]} is below 0 in dimension {k} (the extents of {array.name} were inferred from "
               "the accesses; the harness allocates from index 0)")
    elem = "".join(f"[{e}]" for e in index)
    raise ModelError(f"{acc.text} ({acc.kind}) reaches {array.name}{elem} at {instance} when {_where(values)}: {why}",
                     location=acc.location,
                     hint="check the loop bounds and the subscripts, or declare the array larger: polylab does "
                          "not run code that accesses memory outside its arrays")


def _bounds_warning(scop: Scop, acc: Access, array: Array) -> str | None:
    """A warning when the context allows parameter values at which ``acc`` leaves ``array``."""
    box = extent_box(scop, array) if array.declared else None
    if box is None:
        return None
    rel = acc.relation
    bad_params = rel.intersect_range(box.align_params(rel.get_space()).complement()).params()
    bad_params = bad_params.intersect(scop.context.align_params(bad_params.get_space()))
    if bad_params.is_empty():
        return None
    example = _describe(list(scop.parameters), bad_params.sample_point(), isl.dim_type.param)
    return (f"{acc.text} (line {acc.location.line}) can leave {_declaration(array)} for parameter values the "
            f"SCoP's context allows, e.g. {example}; the values given here are safe")


def validate_params(scop: Scop, params: Mapping[str, object] | None, *, complete: bool = True,
                    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
                    schedule: isl.UnionMap | None = None, check_bounds: bool = True) -> ParameterCheck:
    """Check ``params`` for ``scop`` as the module's docstring lists; raise a
    :class:`~polylab.errors.ModelError` saying what is wrong, else return the values, the array sizes and
    the warnings.

    ``complete=False`` accepts a partial assignment (``polylab codegen --param``): then only the values
    given are checked (integers, ``int`` range, context). ``memory_limit_mb``: the limit of one run
    (None: no limit, e.g. CUDA; the machine's memory is checked instead). ``schedule``: the time vectors
    ``{ S[x] -> [t] }`` of the variant, whose values the generated loops hold. ``check_bounds=False``
    skips the access proofs (6 and 7)."""
    values = _named_values(scop, params, complete)
    ctx = fixed_context(scop, values)
    if ctx.is_empty():
        raise ModelError(f"the parameter values {_where(values)} are outside the SCoP's context {scop.context}",
                         hint="choose values the program assumes (the context lists the conditions)")
    if not complete and len(values) < len(scop.parameters):
        return ParameterCheck(values, ())
    sizes = _array_sizes(scop, values)
    _check_memory(sizes, values, memory_limit_mb)
    _check_int_ranges(scop, ctx, values, schedule)
    warnings: list[str] = []
    if check_bounds:
        extents = {s.name: s.extents for s in sizes}
        arrays = {a.name: a for a in scop.arrays}
        for st, acc in scop.accesses():
            array = arrays.get(acc.array)
            if array is None or array.rank == 0:
                continue
            _out_of_bounds(st, acc, array, extents[array.name], ctx, values)
            warning = _bounds_warning(scop, acc, array)
            if warning and warning not in warnings:
                warnings.append(warning)
    return ParameterCheck(values, tuple(sizes), tuple(warnings))


def check_params(scop: Scop, params: Mapping[str, object] | None) -> dict[str, int]:
    """:func:`validate_params` with the defaults; the checked values in ``Scop.parameters`` order."""
    return dict(validate_params(scop, params).values)


def _runs_twice(domain: isl.Set, depth: int) -> isl.Set:
    """The parameter values at which loop ``depth`` of a statement with iteration ``domain`` runs at least
    twice for some values of the loops around it: ``{ p : exists x, y in domain(p), x_j = y_j (j < depth),
    x_depth < y_depth }``."""
    pairs = isl.Map.from_domain_and_range(domain, domain)
    for j in range(depth):
        pairs = pairs.equate(isl.dim_type.in_, j, isl.dim_type.out, j)
    return pairs.order_lt(isl.dim_type.in_, depth, isl.dim_type.out, depth).params()


@dataclass(frozen=True)
class LoopsTwice:
    """Parameter values at which every loop of a SCoP that can run twice does (``values``; None when the
    SCoP has no parameter or no such values exist), and the loops (``S0 loop 2``) that cannot run twice
    at those values (``missed``)."""

    values: Mapping[str, int] | None
    missed: tuple[str, ...] = ()


def loops_run_twice(scop: Scop) -> LoopsTwice:
    """The smallest parameter values (non-negative, smallest sum, then lexicographically:
    :func:`polylab.schedule.small_parameters`) at which every loop runs at least twice, for some values of
    the loops around it. A loop that runs twice at no parameter values is left out; when no values make
    all others run twice at once, the loops are taken in order and one that would empty the set is left
    out (and named in ``missed``)."""
    from polylab.schedule import small_parameters

    if not scop.parameters:
        return LoopsTwice(None)
    chosen = scop.context
    missed: list[str] = []
    for st in scop.statements:
        for depth in range(st.domain.dim(isl.dim_type.set)):
            twice = _runs_twice(st.domain, depth).intersect(scop.context)
            if twice.is_empty():
                continue
            narrower = chosen.intersect(twice)
            if narrower.is_empty():
                missed.append(f"{st.name} loop {depth + 1}")
            else:
                chosen = narrower
    values = small_parameters(chosen)
    return LoopsTwice({p: int(values[p]) for p in scop.parameters} if values is not None else None, tuple(missed))
