"""The program around a kernel: read parameters, allocate, initialise, time, write the live-out data.

Every variant of a SCoP (the original text and each generated schedule) is wrapped in the same harness, so
their outputs can be compared element by element:

* ``main`` reads the parameters from ``argv`` in ``Scop.parameters`` order, then an optional repeat count
  (``prog N T [REPEAT]``);
* each array is allocated on the heap with its declared extents (C expressions evaluated at run time);
  a failed allocation exits with status 3 (the toolchain's out-of-memory status);
* element ``idx`` (row-major flat index) of the ``k``-th array is initialised to
  ``((idx * 7919 + k * 104729) % 1021) / 1021.0 + 1`` (integers: ``(...) % 1021``), before every run, outside
  the timed region; read-only scalars get their initialiser, or ``1.5, 1.25, ...`` when they have none;
* the kernel (a ``noinline`` function, fenced by compiler barriers so no work moves across the timer
  readings) runs ``REPEAT`` times between ``clock_gettime(CLOCK_MONOTONIC)`` readings (CUDA: events);
  each run prints ``polylab-time <seconds>`` on standard output;
* after the last run the live-out data is written as described in :mod:`polylab.toolchain.compare`:
  the elements of ``Scop.live_out`` when the model knows them, else every array the region writes.

:func:`original_program` builds the original program from the region's own text (``Scop.source``) in the
same harness: it is the reference every variant is verified against.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import islpy as isl

from polylab.codegen import ast as A
from polylab.codegen.cexpr import c_expr
from polylab.model.scop import Array, Scop
from polylab.toolchain.compare import HARNESS_SUPPORT_C

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

_FLOAT_TYPES = ("float", "double", "long double")


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
    """What the harness writes: ``Scop.live_out`` when given, else every written array whole."""
    if scop.live_out is None:
        return [LiveOut(a) for a in written_arrays(scop)]
    out = []
    sets: list[isl.Set] = []
    scop.live_out.foreach_set(sets.append)
    for s in sets:
        name = s.get_tuple_name()
        try:
            arr = scop.array(name)
        except Exception:  # an element of something that is not an array of the model
            continue
        out.append(LiveOut(arr, s))
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
                     prefix: str = "static __attribute__((noinline)) void"
                     ) -> str:
    params = [f"int {p}" for p in scop.parameters]
    params += [array_param(a, restrict) for a in kernel_arrays(scop)]
    return f"{prefix} {name}({', '.join(params) or 'void'})"


def kernel_call(scop: Scop, name: str = "kernel") -> str:
    return f"{name}({', '.join([*scop.parameters, *(a.name for a in kernel_arrays(scop))])});"


def _size_expr(a: Array) -> str:
    return " * ".join(f"(size_t)({e})" for e in a.extents) if a.extents else "(size_t)1"


def prelude(scop: Scop, *, cuda: bool = False) -> str:
    """Includes, constants, scalars and rank-0 arrays as file-scope variables."""
    lines = [HARNESS_SUPPORT_C.strip("\n"), "#include <math.h>",
             "/* keeps the compiler from moving work across the timer readings */",
             "#define POLYLAB_BARRIER() __asm__ __volatile__(\"\" ::: \"memory\")"]
    for name, value in scop.constants:
        lines.append(f"#define {name} {value}")
    for k, s in enumerate(scop.scalars):
        value = s.value if s.value is not None else (f"{1.5 - 0.25 * k}" if is_float(s.ctype) else str(k + 2))
        lines.append(f"static {'const ' if not cuda else ''}{s.ctype} {s.name} = {value};")
    for a in scop.arrays:
        if a.rank == 0:
            lines.append(f"static {a.ctype} {a.name};")
    return "\n".join(lines) + "\n"


def _init_function(scop: Scop, flat: bool = False) -> str:
    """``polylab_init``: the deterministic initial values, the same for every variant."""
    body = []
    for k, a in enumerate(scop.arrays):
        ptr = f"((({a.ctype} *){a.name}))" if a.rank > 0 else f"(&{a.name})"
        value = (f"({a.ctype})((double)((polylab_idx * 7919ULL + {k * 104729}ULL) % 1021ULL) / 1021.0 + 1.0)"
                 if is_float(a.ctype) else f"({a.ctype})((polylab_idx * 7919ULL + {k * 104729}ULL) % 1021ULL)")
        body.append(f"  for (size_t polylab_idx = 0; polylab_idx < {_size_expr(a)}; polylab_idx++)\n"
                    f"    {ptr}[polylab_idx] = {value};")
    params = [f"int {p}" for p in scop.parameters] + [array_param(a, False, flat) for a in kernel_arrays(scop)]
    unused = "".join(f"  (void){p};\n" for p in scop.parameters)
    return (f"static void polylab_init({', '.join(params) or 'void'})\n{{\n{unused}"
            + "\n".join(body) + "\n}\n")


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


def _dump_function(scop: Scop, flat: bool = False) -> str:
    """``polylab_write_outputs``: every live-out array through ``polylab_dump`` (the toolchain's protocol).

    A whole array is written as it lies in memory. When the model knows the live-out elements (an isl
    set), they are gathered, in lexicographic order of their indices, into a one-dimensional buffer
    written under the array's name (see :func:`live_out_points` for the order)."""
    body: list[str] = []
    for lo in live_outs(scop):
        a = lo.array
        data = a.name if a.rank > 0 else f"&{a.name}"
        if lo.elements is None:
            ext = ", ".join(f"(long)({e})" for e in a.extents) or "0"
            body.append(f"  {{ long polylab_ext[] = {{{ext}}};\n"
                        f"    polylab_dump(\"{a.name}\", \"{a.ctype}\", {data}, sizeof({a.ctype}), {a.rank}, polylab_ext); }}")
        else:
            count = _element_loops(scop, lo, "polylab_n++;", flat, 2)
            fill = _element_loops(scop, lo, "polylab_buf[polylab_n++] = {elem};", flat, 2)
            body.append(f"  {{ size_t polylab_n = 0;\n{count}\n"
                        f"    {a.ctype} *polylab_buf = ({a.ctype} *)polylab_alloc(sizeof({a.ctype}) * polylab_n, \"{a.name}\");\n"
                        f"    long polylab_ext[] = {{(long)polylab_n}};\n    polylab_n = 0;\n{fill}\n"
                        f"    polylab_dump(\"{a.name}\", \"{a.ctype}\", polylab_buf, sizeof({a.ctype}), 1, polylab_ext);\n"
                        f"    free(polylab_buf); }}")
    params = [f"int {p}" for p in scop.parameters] + [array_param(a, False, flat) for a in kernel_arrays(scop)]
    unused = "".join(f"  (void){p};\n" for p in scop.parameters)
    return (f"static void polylab_write_outputs({', '.join(params) or 'void'})\n{{\n{unused}"
            + "\n".join(body) + "\n}\n")


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
    ast = isl.AstBuild.from_context(scop.context).set_iterators(lst).node_from_schedule_map(umap)
    root = A._convert(ast, names, frozenset(), {space_name})
    lines: list[str] = []

    def emit(node: A.Node, depth: int) -> None:
        pad = "  " * depth
        match node:
            case A.Block(children=cs):
                for c in cs:
                    emit(c, depth)
            case A.For():
                if node.degenerate:
                    lines.append(f"{pad}{{ const int {node.iterator} = {c_expr(node.init)};")
                else:
                    lines.append(f"{pad}for (int {node.iterator} = {c_expr(node.init)}; "
                                 f"{c_expr(node.cond)}; {node.iterator} += {node.inc}) {{")
                emit(node.body, depth + 1)
                lines.append(f"{pad}}}")
            case A.If(cond=c, then=t, other=o):
                lines.append(f"{pad}if ({c_expr(c)}) {{")
                emit(t, depth + 1)
                if o is not None:
                    lines.append(f"{pad}}} else {{")
                    emit(o, depth + 1)
                lines.append(f"{pad}}}")
            case A.User(args=args):
                elem = element(a, [c_expr(x) for x in args], flat)
                lines.append(pad + action.replace("{elem}", elem))
    emit(root, depth)
    return "\n".join(lines)


def live_out_points(scop: Scop, array: str, params: dict[str, int]) -> list[tuple[int, ...]] | None:
    """The live-out elements of ``array`` for concrete parameter values, in the order the harness writes
    them (lexicographic); None when the whole array is written."""
    for lo in live_outs(scop):
        if lo.array.name != array:
            continue
        if lo.elements is None:
            return None
        s = lo.elements
        for name, v in params.items():
            k = s.find_dim_by_name(isl.dim_type.param, name)
            if k >= 0:
                s = s.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(s.get_ctx(), int(v)))
        pts: list[tuple[int, ...]] = []
        n = s.dim(isl.dim_type.set)
        s = s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param)) if s.dim(isl.dim_type.param) else s
        s.foreach_point(lambda p: pts.append(tuple(int(p.get_coordinate_val(isl.dim_type.set, k).to_python())
                                                   for k in range(n))))
        return sorted(pts)
    return None


def main_prologue(scop: Scop) -> list[str]:
    """The opening lines of a harness ``main``: usage check, the parameters from ``argv`` (in
    ``scop.parameters`` order) and the optional repeat count that follows them."""
    np_ = len(scop.parameters)
    lines = ["int main(int argc, char **argv)", "{",
             f"  if (argc < {np_ + 1}) {{",
             f"    fprintf(stderr, \"usage: %s {' '.join(scop.parameters)} [REPEAT]\\n\", argv[0]);",
             "    return 2;", "  }"]
    lines += [f"  int {p} = atoi(argv[{k + 1}]);" for k, p in enumerate(scop.parameters)]
    lines.append(f"  int polylab_repeat = argc > {np_ + 1} ? atoi(argv[{np_ + 1}]) : 1;")
    lines.append("  if (polylab_repeat < 1) polylab_repeat = 1;")
    return lines


def _main(scop: Scop, call: str) -> str:
    lines = main_prologue(scop)
    for a in kernel_arrays(scop):
        lines.append(f"  {array_param(a, False)} = polylab_alloc(sizeof({a.ctype}) * {_size_expr(a)}, "
                     f"\"{a.name}\");")
    args = ", ".join([*scop.parameters, *(a.name for a in kernel_arrays(scop))])
    lines += ["  for (int polylab_r = 0; polylab_r < polylab_repeat; polylab_r++) {",
              f"    polylab_init({args});",
              "    POLYLAB_BARRIER();",
              "    double polylab_t0 = polylab_now();",
              "    POLYLAB_BARRIER();",
              f"    {call}",
              "    POLYLAB_BARRIER();",
              "    double polylab_t1 = polylab_now();",
              "    polylab_report_time(polylab_t1 - polylab_t0);",
              "  }",
              f"  polylab_write_outputs({args});"]
    for a in kernel_arrays(scop):
        lines.append(f"  free({a.name});")
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def c_program(scop: Scop, header: str, kernel: str, *, helpers: str = "", extra_includes: str = "") -> str:
    """A complete C program: prelude, the kernel, the harness functions and ``main``."""
    return "\n".join([header, prelude(scop) + extra_includes, helpers, kernel, _init_function(scop),
                      _dump_function(scop), _main(scop, kernel_call(scop))])


def _region_iterators(scop: Scop) -> list[str]:
    seen: list[str] = []
    for s in scop.statements:
        for it in s.iterators:
            if it not in seen:
                seen.append(it)
    return seen


def original_kernel(scop: Scop, *, scop_pragmas: bool = False) -> str:
    """The region's own text as the kernel function, its iterators declared as ``int``; with
    ``scop_pragmas`` the region is wrapped in ``#pragma scop`` / ``#pragma endscop`` (for other polyhedral
    tools, which read the region between them)."""
    its = [it for it in _region_iterators(scop) if not re.search(rf"\bint\s+{re.escape(it)}\b", scop.source)]
    decl = f"  int {', '.join(its)};\n" if its else ""
    src = scop.source.strip("\n")
    if scop.location is not None and scop.location.column > 1:
        src = " " * (scop.location.column - 1) + src  # the region starts mid-line: restore its indent
    text = textwrap.indent(textwrap.dedent(src), "  ")
    if scop_pragmas:
        text = f"#pragma scop\n{text}\n#pragma endscop"
    return f"{kernel_signature(scop)}\n{{\n{decl}{text}\n}}\n"


def original_program(scop: Scop, *, scop_pragmas: bool = False) -> str:
    """The original program: ``Scop.source`` verbatim in the harness every variant uses (``scop_pragmas``:
    see :func:`original_kernel`)."""
    header = (f"/* polylab: the original program of {scop.name}, the reference for verification.\n"
              f"   Schedule: the source's own loop order. */")
    return c_program(scop, header, original_kernel(scop, scop_pragmas=scop_pragmas), helpers=SYSY_RUNTIME)
