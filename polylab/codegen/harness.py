"""The program around a kernel: read parameters, allocate, initialise, time, write the outputs.

Every variant of a SCoP (the original text and each generated schedule) is wrapped in the same harness, so
their outputs can be compared element by element:

* ``main`` reads the parameters from ``argv`` in ``Scop.parameters`` order, then an optional repeat count
  (``prog N T [REPEAT]``). Each is read with ``strtoll`` and checked: a decimal integer, the whole argument,
  inside the range of the kernel's ``int`` parameters (the repeat count: 1 to 10^9). Anything else ends
  the program with a message and status 2 (``POLYLAB_EXIT_USAGE``), before any allocation. The harness
  keeps parameter values in 64-bit variables (``long long``) and computes every size in 64-bit
  arithmetic;
* each array is allocated on the heap with its declared extents: :func:`size_expr` counts its elements
  with ``polylab_elements``, which refuses (status 2) an extent below zero or above ``INT_MAX`` (the
  kernel indexes with ``int``) and a byte size that does not fit a ``size_t``; a failed allocation exits
  with status 3 (``POLYLAB_EXIT_OUT_OF_MEMORY``);
* the arrays get deterministic initial values before every run, outside the timed region
  (:func:`init_function`; :func:`initial_values` computes the same numbers in Python, see there for the
  rule), read-only scalars their initialiser or ``1 + 0.5 / (k + 1)`` (integers: ``k + 2``);
* the kernel is declared ``POLYLAB_KERNEL`` (``static __attribute__((noipa))`` under gcc,
  ``noinline`` elsewhere) and called through a ``volatile`` function pointer, fenced by compiler barriers:
  the compiler can neither inline it, nor move work across the timer readings, nor use anything it infers
  about the kernel's body (such as "it has no effect") to drop the call. Under gcc the kernel's loops are
  also aligned to 64 bytes (``optimize("align-loops=64")``): a short hot loop runs at a speed that depends
  on its address modulo the instruction-fetch block, and that address moves whenever unrelated code around
  the kernel changes size (measured on this project's AMD EPYC VM: jacobi-1d's time strips took 42-88 ms
  depending on the build (builds that differed only in ``polylab_init``) and now and then on the process;
  aligned, 44-60 ms in every build and process; the original 74 ms aligned, 82 ms not). Every variant,
  the original and every peer share this harness, so the alignment is the same for all of them. Each of
  the ``REPEAT`` runs prints ``polylab-time <seconds>`` (``CLOCK_MONOTONIC``; CUDA: events);
* after the last run the outputs are written as described in :mod:`polylab.toolchain.compare`. By default
  these are the live-out elements (``Scop.live_out`` when the model knows them, else every array the
  region writes); with ``POLYLAB_OUTPUTS=written`` in the environment, every array the region writes,
  whole (verification compares every written element this way).

:func:`original_program` builds the original program from the region's own text (``Scop.source``) in the
same harness: it is the reference every variant is verified against. The region's text keeps its own line
and column numbers (a ``#line`` directive names :data:`SOURCE_FILE`), so a compiler message about it points
into the student's source, not into generated code.

Public interface (stable names, used by the CUDA harness too): :func:`prelude`, :func:`size_expr`,
:func:`init_function`, :func:`dump_function`, :func:`main_prologue`, :func:`kernel_signature`,
:func:`kernel_call`, :func:`kernel_arrays`, :func:`array_param`, :func:`flat_index`, :func:`element`,
:func:`live_outs`, :func:`written_arrays`, :func:`live_out_points`, :func:`initial_values`,
:func:`c_program`, :func:`original_program`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import islpy as isl
import numpy as np

from polylab.codegen import ast as A
from polylab.codegen.cexpr import SOURCE_HELPERS, c_expr
from polylab.codegen.extents import extent_box, extent_values
from polylab.errors import CodegenError, ModelError
from polylab.model.budget import budgeted
from polylab.model.islutil import point_coordinates
from polylab.model.scop import Array, Scop
from polylab.toolchain.compare import HARNESS_SUPPORT_C, OUTPUTS_VARIABLE, OUTPUTS_WRITTEN

__all__ = [
    "PARAMETER_CTYPE", "SOURCE_FILE", "SYSY_RUNTIME", "LiveOut", "array_param", "array_seed", "c_program",
    "dump_function", "element", "flat_index", "init_function", "initial_elements", "initial_values", "is_float",
    "kernel_arrays", "kernel_call", "kernel_signature", "live_out_points", "live_outs", "main_prologue",
    "numpy_dtype", "original_kernel", "original_program", "output_points", "prelude",
    "set_points", "size_expr", "source_text", "written_arrays", "written_elements",
]

#: SysY runtime calls, defined so that a SysY region compiles as C (timing is done by the harness)
SYSY_RUNTIME = """\
#define starttime() ((void)0)
#define stoptime() ((void)0)
#define _sysy_starttime(l) ((void)0)
#define _sysy_stoptime(l) ((void)0)
#define putint(x) ((void)(x))
#define putch(x) ((void)(x))
#define putfloat(x) ((void)(x))
#define putarray(n, a) ((void)(n), (void)(a))
#define putfarray(n, a) ((void)(n), (void)(a))
#define getint() 0
#define getch() 0
#define getfloat() 0.0f
"""

#: the C type of parameter values in the harness (the kernel itself takes ``int``)
PARAMETER_CTYPE = "long long"

#: the file name compiler messages use for the region's own text in :func:`original_program`
SOURCE_FILE = "<source>"

_FLOAT_TYPES = ("float", "double", "long double")

#: C definitions the harness code uses (after :data:`~polylab.toolchain.compare.HARNESS_SUPPORT_C`)
_HARNESS_C = r"""
/* keeps the compiler from moving work across the timer readings */
#define POLYLAB_BARRIER() __asm__ __volatile__("" ::: "memory")
/* the kernel is never inlined, and its callers never use what the compiler infers about its body; under
   gcc its loops start on 64-byte boundaries, so that its time does not depend on where the rest of the
   program happened to place them (see polylab.codegen.harness) */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define POLYLAB_KERNEL static __attribute__((noipa, optimize("align-loops=64")))
#else
#define POLYLAB_KERNEL static __attribute__((noinline))
#endif
/* the initial values: see polylab.codegen.harness.initial_values */
POLYLAB_UNUSED static unsigned long long polylab_uint(unsigned long long k, unsigned long long idx) {
    return (idx * 7919ULL + k * 104729ULL) % 1021ULL + 1ULL;
}
POLYLAB_UNUSED static double polylab_unit(unsigned long long k, unsigned long long idx) {
    return (double)polylab_uint(k, idx) / 1022.0;
}
/* isl's min, max and floor division in the harness's own loops over output elements */
POLYLAB_UNUSED static long long polylab_min(long long a, long long b) { return a < b ? a : b; }
POLYLAB_UNUSED static long long polylab_max(long long a, long long b) { return a > b ? a : b; }
POLYLAB_UNUSED static long long polylab_floord(long long a, long long b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}
"""


@dataclass(frozen=True)
class LiveOut:
    """The live-out elements of one array: all of them, or the points of an isl set."""

    array: Array
    elements: isl.Set | None = None


def is_float(ctype: str) -> bool:
    return any(ctype.endswith(t) for t in _FLOAT_TYPES)


def written_arrays(scop: Scop) -> list[Array]:
    """Arrays written by some statement, in declaration order."""
    names = {a.array for _, a in scop.accesses() if a.kind == "write"}
    return [a for a in scop.arrays if a.name in names]


def live_outs(scop: Scop) -> list[LiveOut]:
    """What the harness writes by default: ``Scop.live_out`` when given, else every written array whole
    (except the buffers a storage transformation introduced, which are local to the region, and the
    scalars dead after the region, ``Scop.dead_after``).

    Elements of names that are not arrays of the model (the live-out set may name a scalar the region
    does not keep as an array) are left out."""
    if scop.live_out is None:  # a transformation's own buffers (Array.temporary) end with the region
        return [LiveOut(a) for a in written_arrays(scop) if scop.live_after(a.name)]
    arrays = {a.name: a for a in scop.arrays}
    sets: list[isl.Set] = []
    scop.live_out.foreach_set(sets.append)
    out = []
    for s in sets:
        if s.get_tuple_name() not in arrays:
            continue
        a = arrays[s.get_tuple_name()]
        box = extent_box(scop, a)
        # only elements inside the array exist (a whole array passed on, ``f(x)``, names them all)
        out.append(LiveOut(a, s.intersect(box.align_params(s.get_space())) if box is not None else s))
    return out


def written_elements(scop: Scop) -> list[LiveOut]:
    """Every element some statement instance writes, per written array (an isl set in the parameters):
    the union over the write accesses ``S[x] -> A[f(x)]`` (restricted to ``D_S``) of their ranges."""
    out = []
    for a in written_arrays(scop):
        elements: isl.Set | None = None
        for _, acc in scop.accesses():
            if acc.kind == "write" and acc.array == a.name:
                rng = acc.relation.range()
                elements = rng if elements is None else elements.union(rng)
        assert elements is not None
        out.append(LiveOut(a, elements.coalesce()))
    return out


def array_param(a: Array, restrict: bool = True, flat: bool = False) -> str:
    """``double (*restrict A)[N]``: a pointer to rows, so ``A[i][j]`` indexes the heap block.

    ``flat``: a plain element pointer (CUDA C++ has no variably modified types)."""
    r = "restrict " if restrict else ""
    if a.rank <= 1 or flat:
        return f"{a.ctype} *{r}{a.name}"
    return f"{a.ctype} (*{r}{a.name})" + "".join(f"[{e}]" for e in a.extents[1:])


def kernel_arrays(scop: Scop) -> list[Array]:
    """Arrays passed to the kernel (rank 0 arrays are file-scope variables)."""
    return [a for a in scop.arrays if a.rank > 0]


def kernel_signature(scop: Scop, name: str = "kernel", restrict: bool = True,
                     prefix: str = "POLYLAB_KERNEL void") -> str:
    """The kernel's declarator: ``int`` parameters (in ``Scop.parameters`` order), then the arrays."""
    params = [f"int {p}" for p in scop.parameters]
    params += [array_param(a, restrict) for a in kernel_arrays(scop)]
    return f"{prefix} {name}({', '.join(params) or 'void'})"


def kernel_call(scop: Scop, name: str = "kernel") -> str:
    return f"{name}({', '.join([*scop.parameters, *(a.name for a in kernel_arrays(scop))])});"


def size_expr(a: Array) -> str:
    """A C expression for the number of elements of ``a`` (``size_t``), valid where the parameters are in
    scope: ``polylab_elements`` computes the product of the extents in 64-bit arithmetic and ends the
    program (status 2, with the array's name) on an extent below 0 or above ``INT_MAX``, or a byte size
    (times ``sizeof`` of the element) beyond ``SIZE_MAX``."""
    extents = "".join(f", (long long)({e})" for e in a.extents)
    return f"polylab_elements(\"{a.name}\", sizeof({a.ctype}), {a.rank}{extents})"


def _harness_params(scop: Scop, flat: bool) -> str:
    """The parameter list of the harness's own functions: 64-bit parameter values, then the arrays."""
    params = [f"{PARAMETER_CTYPE} {p}" for p in scop.parameters]
    params += [array_param(a, False, flat) for a in kernel_arrays(scop)]
    return ", ".join(params) or "void"


def prelude(scop: Scop, *, cuda: bool = False) -> str:
    """Includes, the harness's C helpers, constants, scalars and rank-0 arrays as file-scope variables."""
    lines = [HARNESS_SUPPORT_C.strip("\n"), "#include <math.h>", _HARNESS_C.strip("\n")]
    for name, value in scop.constants:
        lines.append(f"#define {name} {value}")
    for k, s in enumerate(scop.scalars):
        value = s.value if s.value is not None else (repr(1.0 + 0.5 / (k + 1)) if is_float(s.ctype) else str(k + 2))
        lines.append(f"static {'const ' if not cuda else ''}{s.ctype} {s.name} = {value};")
    for a in scop.arrays:
        if a.rank == 0:
            lines.append(f"static {a.ctype} {a.name};")
    return "\n".join(lines) + "\n"


# -- initial values ------------------------------------------------------------------------------------------
def array_seed(name: str) -> int:
    """The per-array constant ``k`` of the initial-value rule: FNV-1a (32 bit) of the array's name, so an
    array gets the same values in every variant whatever the other arrays are."""
    h = 2166136261
    for byte in name.encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def _init_array(a: Array, flat: bool) -> str:
    k = f"{array_seed(a.name)}ULL"
    if a.rank == 0:
        rule = f"polylab_unit({k}, 0)" if is_float(a.ctype) else f"polylab_uint({k}, 0)"
        return f"  {a.name} = ({a.ctype})({rule});"
    ptr = f"(({a.ctype} *){a.name})"
    loop = ("    for (size_t polylab_idx = 0; polylab_idx < polylab_n; polylab_idx++)\n"
            f"      {ptr}[polylab_idx] = ({a.ctype})({{rule}});")
    head = f"  {{ const size_t polylab_n = {size_expr(a)};\n"
    if not is_float(a.ctype):
        return head + loop.replace("{rule}", f"polylab_uint({k}, polylab_idx)") + " }"
    if a.rank == 1:
        return head + loop.replace("{rule}", f"polylab_unit({k}, polylab_idx) / (double)polylab_n") + " }"
    generic = loop.replace("{rule}", f"polylab_unit({k}, polylab_idx)")
    if a.rank != 2:
        return head + generic + " }"
    square = (f"    const size_t polylab_m = (size_t)({a.extents[1]});\n"
              "    if (polylab_m * polylab_m == polylab_n) {  /* square: symmetric, diagonally dominant */\n"
              "      for (size_t polylab_i = 0; polylab_i < polylab_m; polylab_i++)\n"
              "        for (size_t polylab_j = 0; polylab_j < polylab_m; polylab_j++) {\n"
              "          const size_t polylab_lo = polylab_i < polylab_j ? polylab_i : polylab_j;\n"
              "          const size_t polylab_hi = polylab_i < polylab_j ? polylab_j : polylab_i;\n"
              f"          {ptr}[polylab_i * polylab_m + polylab_j] = ({a.ctype})(polylab_i == polylab_j\n"
              f"              ? 1.0 + polylab_unit({k}, polylab_i * polylab_m + polylab_i)\n"
              f"              : polylab_unit({k}, polylab_lo * polylab_m + polylab_hi) / (double)polylab_m);\n"
              "        }\n"
              "    } else\n")
    return head + square + generic.replace("\n", "\n  ") + " }"


def init_function(scop: Scop, *, flat: bool = False) -> str:
    """``polylab_init``: the deterministic initial values, the same for every variant (see
    :func:`initial_values`). Its parameters: the parameter values (64-bit), then the arrays of
    :func:`kernel_arrays` (``flat``: element pointers)."""
    body = [_init_array(a, flat) for a in scop.arrays]
    unused = "".join(f"  (void){p};\n" for p in scop.parameters)
    return f"static void polylab_init({_harness_params(scop, flat)})\n{{\n{unused}" + "\n".join(body) + "\n}\n"


_NUMPY_TYPES = {
    "double": np.float64, "float": np.float32, "long double": np.longdouble, "int": np.int32,
    "unsigned int": np.uint32, "unsigned": np.uint32, "long": np.int64, "long int": np.int64,
    "unsigned long": np.uint64, "long long": np.int64, "long long int": np.int64,
    "unsigned long long": np.uint64, "short": np.int16, "unsigned short": np.uint16, "char": np.int8,
    "signed char": np.int8, "unsigned char": np.uint8, "_Bool": np.bool_, "bool": np.bool_,
    "int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32, "int64_t": np.int64, "uint8_t": np.uint8,
    "uint16_t": np.uint16, "uint32_t": np.uint32, "uint64_t": np.uint64,
}


def numpy_dtype(ctype: str) -> np.dtype:
    """The numpy element type of a C element type of the model."""
    words = " ".join(w for w in ctype.split() if w not in ("const", "volatile", "signed") or ctype == "signed char")
    try:
        return np.dtype(_NUMPY_TYPES[words])
    except KeyError:
        raise ModelError(f"no numpy type for the C type {ctype!r}") from None


def initial_elements(scop: Scop, array: Array, values: Mapping[str, int], flat_indices: np.ndarray) -> np.ndarray:
    """The initial values of the elements of ``array`` at the given row-major flat indices (see
    :func:`initial_values` for the rule), as a one-dimensional array of the element type."""
    dtype = numpy_dtype(array.ctype)
    k = np.uint64(array_seed(array.name))
    extents = extent_values(scop, array, values)
    idx = np.asarray(flat_indices, dtype=np.uint64)

    def u(i: np.ndarray) -> np.ndarray:
        return (i * np.uint64(7919) + k * np.uint64(104729)) % np.uint64(1021) + np.uint64(1)

    if not is_float(array.ctype):
        return u(idx).astype(dtype)
    unit = u(idx).astype(np.float64) / 1022.0
    if array.rank == 1:
        unit = unit / np.float64(extents[0])
    elif array.rank == 2 and extents[0] == extents[1]:
        m = np.uint64(extents[1])
        i, j = idx // m, idx % m
        mirror = u(np.minimum(i, j) * m + np.maximum(i, j)).astype(np.float64) / 1022.0 / np.float64(extents[1])
        unit = np.where(i == j, 1.0 + unit, mirror)
    return unit.astype(dtype)


def initial_values(scop: Scop, values: Mapping[str, int]) -> dict[str, np.ndarray]:
    """The initial value of every array of ``scop`` at the parameter ``values`` (the harness's rule),
    shaped by the extents.

    With ``k`` = :func:`array_seed` of the array's name and ``idx`` the row-major flat index, let
    ``u(idx) = ((idx * 7919 + k * 104729) mod 1021 + 1)`` (an integer in ``1 .. 1021``; unsigned 64-bit
    arithmetic) and ``unit(idx) = u(idx) / 1022`` (in ``(0, 1)``, never zero). Then

    * integer arrays: ``u(idx)`` (converted to the element type);
    * floating-point vectors of ``n`` elements: ``unit(idx) / n`` (so ``sum |x_i| < 1``: a Toeplitz or
      Durbin-style recurrence over the vector stays a contraction and finite);
    * square floating-point matrices (``n x n``): symmetric and strictly diagonally dominant,
      ``a[i][i] = 1 + unit(i n + i)`` and ``a[i][j] = unit(min(i, j) n + max(i, j)) / n`` (every row's
      off-diagonal sum is below 1 < ``a[i][i]``, so the matrix is symmetric positive definite:
      Cholesky, LU without pivoting, triangular solves stay finite);
    * other floating-point arrays: ``unit(idx)``; a written scalar (rank 0): ``unit(0)`` or ``u(0)``.

    The rule depends only on what the harness knows (the element type, the extents, the array's name),
    never on the kernel. Each value is computed in double precision exactly as the C code does it, then
    converted to the element type."""
    out: dict[str, np.ndarray] = {}
    for a in scop.arrays:
        extents = extent_values(scop, a, values)
        count = 1
        for e in extents:
            count *= e
        out[a.name] = initial_elements(scop, a, values, np.arange(count, dtype=np.uint64)).reshape(extents)
    return out


# -- outputs --------------------------------------------------------------------------------------------------
def flat_index(a: Array, idx: list[str]) -> str:
    """Row-major flat index of ``a[idx0][idx1]...`` (Horner form over the declared extents)."""
    out = f"({idx[0]})" if idx else "0"
    for e, x in zip(a.extents[1:], idx[1:]):
        out = f"({out} * (size_t)({e}) + ({x}))"
    return out


def element(a: Array, idx: list[str], flat: bool = False) -> str:
    if flat and a.rank > 1:
        return f"{a.name}[{flat_index(a, idx)}]"
    return a.name + "".join(f"[{x}]" for x in idx)


def _dump_whole(a: Array) -> str:
    data = a.name if a.rank > 0 else f"&{a.name}"
    ext = ", ".join(f"(long long)({e})" for e in a.extents) or "0"
    return (f"    {{ const long long polylab_ext[] = {{{ext}}};\n"
            f"      polylab_dump(\"{a.name}\", \"{a.ctype}\", {data}, sizeof({a.ctype}), {a.rank}, polylab_ext); }}")


def _dump_elements(scop: Scop, lo: LiveOut, flat: bool) -> str:
    a = lo.array
    count = _element_loops(scop, lo, "polylab_n++;", flat, 3)
    fill = _element_loops(scop, lo, "polylab_at[polylab_n] = (long long)({flat}); polylab_buf[polylab_n++] = {elem};",
                          flat, 3)
    return (f"    {{ size_t polylab_n = 0;\n{count}\n"
            f"      {a.ctype} *polylab_buf = ({a.ctype} *)polylab_alloc(sizeof({a.ctype}) * polylab_n, \"{a.name}\");\n"
            f"      long long *polylab_at = (long long *)polylab_alloc(sizeof(long long) * polylab_n, \"{a.name}\");\n"
            f"      const long long polylab_ext[] = {{(long long)polylab_n}};\n      polylab_n = 0;\n{fill}\n"
            f"      polylab_dump(\"{a.name}\", \"{a.ctype}\", polylab_buf, sizeof({a.ctype}), 1, polylab_ext);\n"
            f"      polylab_dump_indices(\"{a.name}\", polylab_at, polylab_n);\n"
            f"      free(polylab_buf);\n      free(polylab_at); }}")


def dump_function(scop: Scop, *, flat: bool = False) -> str:
    """``polylab_write_outputs``: the outputs through ``polylab_dump`` (the toolchain's protocol).

    By default the live-out data (:func:`live_outs`): a whole array is written as it lies in memory; when
    the model knows the live-out elements (an isl set), they are gathered, in lexicographic order of their
    indices, into a one-dimensional buffer written under the array's name (see :func:`live_out_points`),
    and their row-major flat indices in the array go to ``<name>.idx`` (``polylab_dump_indices``).
    With ``POLYLAB_OUTPUTS=written`` in the environment: the elements of :func:`written_elements` (every
    element some statement instance writes), gathered the same way under each array's name. Same
    parameters as :func:`init_function`."""
    default = [_dump_whole(lo.array) if lo.elements is None else _dump_elements(scop, lo, flat)
               for lo in live_outs(scop)]
    written = [_dump_elements(scop, lo, flat) for lo in written_elements(scop)]
    unused = "".join(f"  (void){p};\n" for p in scop.parameters)
    unused += "".join(f"  (void){a.name};\n" for a in kernel_arrays(scop))
    return "\n".join([f"static void polylab_write_outputs({_harness_params(scop, flat)})", "{",
                      unused.rstrip("\n"),
                      f"  const char *polylab_mode = getenv(\"{OUTPUTS_VARIABLE}\");",
                      f"  if (polylab_mode != NULL && strcmp(polylab_mode, \"{OUTPUTS_WRITTEN}\") == 0) {{",
                      *written, "  } else {", *default, "  }", "}"]) + "\n"


def _harness_expr(e: A.AExpr) -> str:
    """An isl AST expression as C that calls the harness's own ``polylab_min``/``_max``/``_floord`` (the
    original program defines no ``min``)."""
    return _HELPER_CALL.sub(r"polylab_\1(", c_expr(e))


_HELPER_CALL = re.compile(r"\b(?:polylab_i)?(min|max|floord)\(")


def _element_loops(scop: Scop, lo: LiveOut, action: str, flat: bool, depth: int) -> str:
    """Loops over the points of an isl set of elements (isl's AST generator, lexicographic order);
    ``action`` is C text in which ``{elem}`` stands for the element."""
    s = lo.elements
    assert s is not None
    a = lo.array
    n = s.dim(isl.dim_type.set)
    space_name = "E" + a.name
    s = s.set_tuple_name(space_name)
    umap = isl.UnionMap.from_map(isl.Map.identity(s.get_space().map_from_set()).intersect_domain(s))
    names = [f"e{k}" for k in range(max(n, 1))]
    lst = isl.IdList.alloc(isl.DEFAULT_CONTEXT, len(names))
    for nm in names:
        lst = lst.add(isl.Id(nm))
    if not s.is_bounded():
        raise CodegenError(f"the harness cannot write the elements of {a.name}: they are not bounded "
                           f"({s.set_tuple_name(a.name)})",
                           hint=f"give {a.name} extents that are constants or parameters")
    ast = isl.AstBuild.from_context(scop.context).set_iterators(lst).node_from_schedule_map(umap)
    root = A.convert(ast, names, frozenset(), {space_name})
    lines: list[str] = []

    def emit(node: A.Node, depth: int) -> None:
        pad = "  " * depth
        match node:
            case A.Block(children=cs):
                for c in cs:
                    emit(c, depth)
            case A.For():
                if node.degenerate:
                    lines.append(f"{pad}{{ const long long {node.iterator} = {_harness_expr(node.init)};")
                else:
                    lines.append(f"{pad}for (long long {node.iterator} = {_harness_expr(node.init)}; "
                                 f"{_harness_expr(node.cond)}; {node.iterator} += {node.inc}) {{")
                emit(node.body, depth + 1)
                lines.append(f"{pad}}}")
            case A.If(cond=c, then=t, other=o):
                lines.append(f"{pad}if ({_harness_expr(c)}) {{")
                emit(t, depth + 1)
                if o is not None:
                    lines.append(f"{pad}}} else {{")
                    emit(o, depth + 1)
                lines.append(f"{pad}}}")
            case A.User(args=args):
                idx = [_harness_expr(x) for x in args]
                at = flat_index(a, idx) if a.rank else "0"
                lines.append(pad + action.replace("{elem}", element(a, idx, flat)).replace("{flat}", at))
    emit(root, depth)
    return "\n".join(lines)


def output_points(scop: Scop, array: str, params: Mapping[str, int], *, written: bool = False
                  ) -> list[tuple[int, ...]] | None:
    """The elements of ``array`` the harness writes, for concrete parameter values, in the order it writes
    them (lexicographic): the live-out elements (``written=False``, the default outputs) or the written
    elements (``written=True``, ``POLYLAB_OUTPUTS=written``); None when the whole array is written."""
    for lo in (written_elements(scop) if written else live_outs(scop)):
        if lo.array.name != array:
            continue
        if lo.elements is None:
            return None
        return set_points(lo.elements, params)
    return None


def live_out_points(scop: Scop, array: str, params: Mapping[str, int]) -> list[tuple[int, ...]] | None:
    """:func:`output_points` of the default (live-out) outputs."""
    return output_points(scop, array, params)


def set_points(s: isl.Set, params: Mapping[str, int]) -> list[tuple[int, ...]]:
    """The points of ``s`` with its parameters fixed to ``params``, in lexicographic order."""
    for name, v in params.items():
        k = s.find_dim_by_name(isl.dim_type.param, name)
        if k >= 0:
            s = s.fix_val(isl.dim_type.param, k, isl.Val(str(int(v)), s.get_ctx()))
    pts: list[tuple[int, ...]] = []
    s = s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param)) if s.dim(isl.dim_type.param) else s
    s.foreach_point(lambda p: pts.append(point_coordinates(p)))
    return sorted(pts)


# -- main -------------------------------------------------------------------------------------------------------
def main_prologue(scop: Scop) -> list[str]:
    """The opening lines of a harness ``main``: the argument count, the parameters from ``argv`` (in
    ``scop.parameters`` order, each a checked ``const long long``) and the repeat count that may follow
    them (``polylab_repeat``)."""
    np_ = len(scop.parameters)
    lines = ["int main(int argc, char **argv)", "{",
             f"  if (argc < {np_ + 1} || argc > {np_ + 2}) {{",
             f"    fprintf(stderr, \"usage: %s {' '.join(scop.parameters)} [REPEAT]\\n\", argv[0]);",
             "    return POLYLAB_EXIT_USAGE;", "  }"]
    lines += [f"  const {PARAMETER_CTYPE} {p} = polylab_param(argv[{k + 1}], \"{p}\");"
              for k, p in enumerate(scop.parameters)]
    lines.append(f"  const long long polylab_repeat = argc > {np_ + 1} ? polylab_repeat_count(argv[{np_ + 1}]) : 1;")
    return lines


def _main(scop: Scop) -> str:
    lines = main_prologue(scop)
    for a in kernel_arrays(scop):
        lines.append(f"  {array_param(a, False)} = polylab_alloc(sizeof({a.ctype}) * {size_expr(a)}, "
                     f"\"{a.name}\");")
    args = ", ".join([*scop.parameters, *(a.name for a in kernel_arrays(scop))])
    pointer = kernel_signature(scop, "(*volatile polylab_kernel)", prefix="void")
    lines += [f"  {pointer} = kernel;  /* an opaque call: see the module's documentation */",
              "  for (long long polylab_r = 0; polylab_r < polylab_repeat; polylab_r++) {",
              f"    polylab_init({args});",
              "    POLYLAB_BARRIER();",
              "    double polylab_t0 = polylab_now();",
              "    POLYLAB_BARRIER();",
              f"    {kernel_call(scop, 'polylab_kernel')}",
              "    POLYLAB_BARRIER();",
              "    double polylab_t1 = polylab_now();",
              "    polylab_report_time(polylab_t1 - polylab_t0);",
              "  }",
              f"  polylab_write_outputs({args});"]
    for a in kernel_arrays(scop):
        lines.append(f"  free({a.name});")
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def c_program(scop: Scop, header: str, kernel: str, *, helpers: str = "", extra_includes: str = "",
              kernel_last: bool = False) -> str:
    """A complete C program: prelude, the kernel, the harness functions and ``main``.

    ``kernel_last``: put the kernel after ``main`` (declared before it), so that nothing follows its text."""
    if kernel_last:
        declared = kernel_signature(scop) + ";\n"
        return "\n".join([header, prelude(scop) + extra_includes, helpers, declared, init_function(scop),
                          dump_function(scop), _main(scop), kernel])
    return "\n".join([header, prelude(scop) + extra_includes, helpers, kernel, init_function(scop),
                      dump_function(scop), _main(scop)])


def _region_iterators(scop: Scop) -> list[str]:
    seen: list[str] = []
    for s in scop.statements:
        for it in s.iterators:
            if it not in seen:
                seen.append(it)
    return seen


def source_text(scop: Scop) -> str:
    """The region's text placed at its own lines and columns (blank lines before it, its first line
    indented to its column): what :data:`SOURCE_FILE` holds for the compiler's line and column numbers."""
    loc = scop.location
    line, column = (loc.line, loc.column) if loc is not None else (1, 1)
    return "\n" * (line - 1) + " " * (column - 1) + scop.source


def original_kernel(scop: Scop, *, scop_pragmas: bool = False) -> str:
    """The region's own text as the kernel function, its iterators declared as ``int``.

    The text keeps its lines and columns: a ``#line`` directive before it names :data:`SOURCE_FILE`, so
    the compiler reports an error in it at the student's own line and column. With ``scop_pragmas`` the
    region is wrapped in ``#pragma scop`` / ``#pragma endscop`` instead (for other polyhedral tools, which
    read the region between them and need no ``#line``)."""
    its = [it for it in _region_iterators(scop) if not re.search(rf"\bint\s+{re.escape(it)}\b", scop.source)]
    decl = f"  int {', '.join(its)};\n" if its else ""
    loc = scop.location
    line, column = (loc.line, loc.column) if loc is not None else (1, 1)
    text = f"{' ' * (column - 1)}{scop.source.rstrip()}"
    if scop_pragmas:
        return f"{kernel_signature(scop)}\n{{\n{decl}#pragma scop\n{text}\n#pragma endscop\n}}\n"
    return f"{kernel_signature(scop)}\n{{\n{decl}#line {line} \"{SOURCE_FILE}\"\n{text}\n}}\n"


@budgeted("code generation")
def original_program(scop: Scop, *, scop_pragmas: bool = False) -> str:
    """The original program: ``Scop.source`` verbatim in the harness every variant uses (its text last,
    under ``#line`` directives that keep the student's line numbers; ``scop_pragmas``: see
    :func:`original_kernel`)."""
    header = (f"/* polylab: the original program of {scop.name}, the reference for verification.\n"
              f"   Schedule: the source's own loop order. */")
    return c_program(scop, header, original_kernel(scop, scop_pragmas=scop_pragmas),
                     helpers=SYSY_RUNTIME + SOURCE_HELPERS, kernel_last=True)
