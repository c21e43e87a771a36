"""Whole-file output: the user's own file, each ``#pragma scop`` region replaced in place by generated code.

PLUTO's way, for polylab's schedules: the file compiles in the user's own build (PolyBench's harness with
``utilities/polybench.c`` and ``-DPOLYBENCH_TIME``, say), every byte outside the regions unchanged.

What replaces a region (:func:`region_code`), on the lines from its ``#pragma scop`` to its ``#pragma
endscop`` (:class:`~polylab.model.Placement`), indented like its first statement:

* a comment with the schedule, the transformations and the statements (:mod:`polylab.codegen.header`), and
  the assumption the code states: the arrays named in the region do not overlap in memory;
* a call of the region's function, ``polylab_<scop>_region(n, alpha, A, x)``, with the user's variables
  (:func:`_outline_region`).

The region's function, ``static``, holds the loops of the schedule. Its array parameters are ``restrict``
pointers to rows with the declared extents: the dependences, hence every schedule's legality, were computed
on a model in which distinct arrays are distinct storage (the analysis is exact under that assumption, which
the user's code must meet: two array parameters bound to overlapping memory would be an error of the
caller's), and ``restrict`` tells the compiler so; without it gcc checks for overlap at run time or leaves
loops unvectorised (docs/performance.md: fdtd-2d). It also takes the parameters (``int``), the scalars the
region reads (by value) and the scalars it writes (rank-0 arrays: by pointer, copied into a local of the
user's name on entry and back on exit). In it:

* the loops of the schedule, printed by the C printer with the user's own names: the arrays, scalars and
  parameters of the region are the function's parameters, named like the variables the region's text
  uses; the loop counters are new ones declared in the ``for`` headers (``c0``, ``c1``, ...: the model's
  names are never reused, and a file that defines a macro of that name is refused). Parameters stay symbolic;
  parameters fixed by the user (``params``) get code specialised for those values, run when the
  parameters have them, and the general code otherwise (``if (n == 1000) { ... } else { ... }``), so the
  file is right for every value;
* OpenMP (the :data:`~polylab.codegen.OPENMP` target): ``#pragma omp parallel for`` on the outermost
  parallel loop of each nest, its body outlined into a ``static`` function as in polylab's harness
  (:mod:`polylab.codegen.c`), whose array parameters are ``restrict``: gcc outlines a parallel loop into a
  function that receives the arrays through a structure, which loses ``restrict``. The function takes the
  iterators in scope, the parameters (``int``), the scalars the region reads (by value) and the arrays
  (pointers to rows with the declared extents), and is called with the region function's variables.

Before the call, on gcc and clang, a ``_Static_assert`` that the arrays' elements and the scalars have the
types the code was generated for (``-DDATA_TYPE_IS_FLOAT`` in the build but not in polylab's reading would
change them).

What goes before the function that holds the regions, on the line where its definition starts
(:func:`definitions`), once per function:

* an ``#if`` that stops the build with ``#error`` when a macro the code depends on (an array extent such as
  PolyBench's ``N``, a loop bound) has another value than polylab read (the file was generated for the
  ``-D`` options polylab was given: ``-DMEDIUM_DATASET``, say);
* the helpers of the generated bounds, ``polylab_imin``, ``polylab_imax``, ``polylab_ifloord``, as
  ``static inline`` functions inside ``#ifndef POLYLAB_INLINE_HELPERS`` (defined once per file) whose
  parameters carry polylab's prefix: a user's macro ``min``, ``max``, ``floord``, ``a`` or ``b`` (PolyBench
  and PLUTO's output define some) cannot touch them;
* the outlined OpenMP functions of the regions, then the regions' functions.

Buffers that storage steps introduce (``Array.temporary``: an expanded scalar's, a contraction's) are local
to the region: the region's function declares a small one of constant size as a local array, and allocates
the others with ``malloc`` (their extents follow the parameters) and frees them before it returns; the
definitions then include ``<stdlib.h>``.

Refused, with the reason (:class:`~polylab.errors.CodegenError`): a region without ``#pragma scop`` (a
detected one), a target other than C and OpenMP, a storage step that introduces arrays the user's code does
not declare (other than such buffers), a loop counter the function reads after the region (the generated
code does not leave the region's final value in it), a scalar written inside a parallel loop body.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from polylab.codegen import ast as A
from polylab.codegen.c import CPrinter
from polylab.codegen.harness import array_param
from polylab.codegen.header import comment, header_lines
from polylab.codegen.targets import Target, as_target
from polylab.errors import CodegenError
from polylab.model.scop import Placement, Scop

__all__ = ["IN_PLACE_HELPERS", "RegionCode", "definitions", "region_code", "whole_file"]

#: the helpers of the generated bounds, for code in the user's file (see the module text)
IN_PLACE_HELPERS = """\
#ifndef POLYLAB_INLINE_HELPERS
#define POLYLAB_INLINE_HELPERS
/* polylab: isl's min, max and floor division (b > 0) in the generated loop bounds */
static inline int polylab_imin(int polylab_a, int polylab_b) { return polylab_a < polylab_b ? polylab_a : polylab_b; }
static inline int polylab_imax(int polylab_a, int polylab_b) { return polylab_a > polylab_b ? polylab_a : polylab_b; }
static inline int polylab_ifloord(int polylab_a, int polylab_b)
{ return polylab_a >= 0 ? polylab_a / polylab_b : -((-polylab_a + polylab_b - 1) / polylab_b); }
#endif
"""

#: the assumption the model makes, and the generated code states with ``restrict``
NO_OVERLAP = "polylab assumes that the arrays named in the region do not overlap in memory"

_HELPER_CALL = re.compile(r"\bpolylab_i(?:min|max|floord)\(")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


@dataclass(frozen=True)
class RegionCode:
    """The code that replaces one region: ``body`` (the lines in place of the region, indented),
    ``functions`` (the outlined OpenMP functions, for file scope), ``constants`` (the macros the code
    depends on, with their values) and whether it calls the bound helpers (``helpers``)."""

    scop: Scop
    placement: Placement
    body: str
    functions: tuple[str, ...] = ()
    constants: tuple[tuple[str, int], ...] = ()
    helpers: bool = False
    names: tuple[str, ...] = ()
    #: the code allocates buffers of storage steps (``malloc``: the definitions include ``stdlib.h``)
    buffers: bool = False


def _placement(scop: Scop) -> Placement:
    p = scop.placement
    if p is None:
        raise CodegenError(f"the region {scop.name} is not delimited by #pragma scop / #pragma endscop, so it "
                           "cannot be replaced in its file",
                           hint="put #pragma scop before the region's first statement and #pragma endscop "
                                "after its last")
    if p.read_after:
        names = ", ".join(p.read_after)
        raise CodegenError(f"{p.function or 'the function'} may read the loop counter(s) {names} after the "
                           f"region of lines {p.first_line}-{p.last_line}, and the generated code does not "
                           "leave the region's final values in them",
                           hint="do not use a loop counter's final value after the region (assign it anew, "
                                "or declare the counters in the for headers)")
    return p


def _check_arrays(scop: Scop, original: Scop) -> None:
    mine = {a.name for a in original.arrays}
    new = [a.name for a in scop.arrays if a.name not in mine and not a.temporary]
    if new:
        raise CodegenError(f"the schedule's storage steps introduce array(s) {', '.join(new)} that the file "
                           "does not declare, so its code cannot replace the region in place",
                           hint="leave out the storage steps (contract, ...) for whole-file output, or use "
                                "polylab's own harness (polylab codegen without -o)")


def _accessed(scop: Scop) -> Scop:
    """``scop`` without the buffers of storage steps that no statement accesses any more (an expanded
    scalar's buffer after its contraction): the code declares and passes the others."""
    used = {a.array for _, a in scop.accesses()}
    return replace(scop, arrays=tuple(a for a in scop.arrays if not a.temporary or a.name in used))


#: the most elements of a buffer of constant size that the region's function declares as a local array
LOCAL_BUFFER = 1024


def _allocations(scop: Scop) -> tuple[str, str]:
    """The region function's lines that allocate the buffers of storage steps (``Array.temporary``, local
    to the region) and those that free them: a buffer of constant size up to :data:`LOCAL_BUFFER` elements
    is a local array (one of a single element is a scalar to the compiler, kept in a register), a larger
    one or one whose size follows the parameters is on the heap."""
    enter, leave = "", ""
    for a in (a for a in scop.arrays if a.temporary):
        if all(e.strip().isdigit() for e in a.extents) and math.prod(int(e) for e in a.extents) <= LOCAL_BUFFER:
            enter += f"  {a.ctype} {a.name}" + "".join(f"[{e.strip()}]" for e in a.extents) + ";\n"
            continue
        enter += (f"  {array_param(a, restrict=False)} = malloc(sizeof({a.ctype})"
                  + "".join(f" * (size_t)({e})" for e in a.extents) + ");\n"
                  f"  if (!{a.name}) abort();  /* out of memory */\n")
        leave += f"  free({a.name});\n"
    return enter, leave


def _outline_params(scop: Scop) -> list[tuple[str, str]]:
    """The parameters of an outlined function, ``(declaration, name)``: the SCoP's parameters (``int``),
    its read-only scalars and scalar variables (by value), its arrays (``restrict`` pointers to rows)."""
    out = [(f"int {p}", p) for p in scop.parameters]
    out += [(f"{s.ctype} {s.name}", s.name) for s in scop.scalars]
    out += [(f"{a.ctype} {a.name}", a.name) for a in scop.arrays if a.rank == 0]
    out += [(array_param(a), a.name) for a in scop.arrays if a.rank > 0]
    return out


def _check_outlined(scop: Scop, functions: Sequence[str]) -> None:
    """A rank-0 array (a scalar the region writes) is passed to an outlined function by value: refuse a
    function that assigns it."""
    for a in scop.arrays:
        written = re.compile(rf"\b{re.escape(a.name)}\s*(?:[-+*/%&|^]?=(?!=)|\+\+|--)|(?:\+\+|--)\s*{re.escape(a.name)}\b")
        if a.rank == 0 and any(written.search(f) for f in functions):
            raise CodegenError(f"the scalar {a.name} is written inside a parallel loop body, which the in-place "
                               "code passes by value", hint="use the C target (no OpenMP) for this region")


def _print(scop: Scop, schedule, target: Target, prefix: str) -> tuple[str, list[str], A.LoopProgram]:
    """The loops of ``schedule`` as C at depth 0, the outlined functions, and the loop program."""
    program = A.build(scop, schedule)
    printer = CPrinter(scop, openmp=target.openmp, params=_outline_params(scop) if target.openmp else (),
                       outline_prefix=prefix)
    body = printer.print(program.root, 0, registers=program.registers, accumulators=program.accumulators)
    return body, printer.helpers, program


def _type_guard(scop: Scop, original: Scop) -> str:
    """``_Static_assert`` (gcc, clang) that the arrays' elements and the scalars have the types the code
    was generated for."""
    tests = []
    for a in original.arrays:
        tests.append(f"__builtin_types_compatible_p(__typeof__({a.name}{'[0]' * a.rank}), {a.ctype})")
    for s in original.scalars:
        tests.append(f"__builtin_types_compatible_p(__typeof__({s.name}), {s.ctype})")
    if not tests:
        return ""
    kinds = ", ".join([f"{a.ctype} {a.name}{'[]' * a.rank}" for a in original.arrays]
                      + [f"{s.ctype} {s.name}" for s in original.scalars])
    return ("#if defined(__GNUC__)  /* the element types the code was generated for */\n"
            "_Static_assert(" + "\n               && ".join(tests) + ",\n"
            f"               \"polylab generated this code for {kinds}: regenerate it with this build's -D "
            "options\");\n#endif")


def _outline_region(scop: Scop, code: str, name: str, buffers: tuple[str, str] = ("", "")) -> tuple[str, str]:
    """The region's code as a ``static`` function ``name`` and the call that replaces the region
    (``scop``: the user's region, whose variables the call passes; ``buffers``: the lines that allocate
    and free the storage steps' buffers, :func:`_allocations`).

    The function takes the parameters (``int``), the scalars the region reads (by value), the scalars it
    writes (rank-0 arrays: through a pointer, copied into a local of the user's name on entry and back on
    exit) and the arrays as ``restrict`` pointers to rows: the dependences (hence the schedule's legality)
    were computed on the model where distinct arrays are distinct storage, and ``restrict`` says so to the
    compiler, which otherwise checks for overlap at run time or leaves the loops unvectorised."""
    written = [a for a in scop.arrays if a.rank == 0]
    decls = [(d, n) for d, n in _outline_params(scop) if n not in {a.name for a in written}]
    decls += [(f"{a.ctype} *polylab_ref_{a.name}", f"&{a.name}") for a in written]
    enter = "".join(f"  {a.ctype} {a.name} = *polylab_ref_{a.name};\n" for a in written) + buffers[0]
    leave = buffers[1] + "".join(f"  *polylab_ref_{a.name} = {a.name};\n" for a in written)
    signature = ", ".join(d for d, _ in decls) or "void"
    function = (f"/* polylab: the region's code, its arrays restrict ({NO_OVERLAP}) */\n"
                f"static void {name}({signature})\n{{\n{enter}{_indent(code, '  ')}\n{leave}}}\n")
    return f"{name}({', '.join(n for _, n in decls)});", function


def _indent(text: str, pad: str) -> str:
    return "\n".join(pad + ln if ln.strip() and not ln.startswith("#if") and not ln.startswith("#endif") else ln
                     for ln in text.split("\n"))


def region_code(scop: Scop, schedule=None, target: Target | str = "openmp", *, original: Scop | None = None,
                params: Mapping[str, int] | None = None, otherwise: tuple[Scop, object] | None = None) -> RegionCode:
    """The code that replaces the region of ``original`` (default ``scop``) in its file: ``scop`` under
    ``schedule`` (``scop`` is the schedule's own SCoP, the original or, after storage steps that keep the
    arrays, the transformed one), for ``target`` (C or OpenMP).

    ``params``: parameter values to specialise for: the code of ``scop`` under ``schedule`` with them fixed
    runs when the parameters have them, and the code of ``otherwise`` (a SCoP and a schedule legal for
    every value; default ``scop`` and ``schedule``) when they do not."""
    kind = as_target(target)
    if kind.language != "c" or not kind.program:
        raise CodegenError(f"whole-file output is C or OpenMP, not {kind.name}",
                           hint="use --target c or --target openmp")
    original = original or scop
    place = _placement(original)
    _check_arrays(scop, original)
    scop = _accessed(scop)
    if params:
        general_scop, general_schedule = otherwise or (scop, schedule)
        _check_arrays(general_scop, original)
        general_scop = _accessed(general_scop)
        if {a.name for a in general_scop.arrays if a.temporary} != {a.name for a in scop.arrays if a.temporary}:
            raise CodegenError("the general code and the specialised code of the region use different buffers",
                               hint="leave out --param, or the storage steps")
        general, functions, _ = _print(general_scop, general_schedule, kind, f"polylab_{original.name}_par")
        fixed, more, program = _print(scop.with_parameters(dict(params)), schedule, kind,
                                      f"polylab_{original.name}_fixed_par")
        test = " && ".join(f"{p} == {int(v)}" for p, v in params.items())
        code = f"if ({test}) {{\n{_indent(fixed, '  ')}\n}} else {{\n{_indent(general, '  ')}\n}}"
        functions = more + functions
    else:
        code, functions, program = _print(scop, schedule, kind, f"polylab_{original.name}_par")
    _check_outlined(scop, functions)
    text = code + "".join(functions)
    buffers = _allocations(scop)
    call, region = _outline_region(original, code, f"polylab_{original.name}_region", buffers)
    head = comment(header_lines(scop, schedule, program, f"{kind.name} (in place)") + [NO_OVERLAP])
    pad = " " * max((original.location.column if original.location else 1) - 1, 0)
    guard = _type_guard(scop, original)
    body = "\n".join(x for x in (_indent(head, pad), _indent(guard, pad), _indent(call, pad)) if x)
    functions = [*functions, region]
    names = tuple(sorted(set(re.findall(r"\bint (c_*\d+)\b", text))))
    constants = tuple(sorted(set(original.constants) | set(scop.constants)))
    return RegionCode(original, place, body, tuple(functions), constants, bool(_HELPER_CALL.search(text)), names,
                      bool(buffers[1]))  # a buffer it frees is one it allocates on the heap


def definitions(function: str, regions: Sequence[RegionCode]) -> str:
    """The file-scope text placed before ``function``, for its ``regions`` (see the module text)."""
    constants = sorted({c for r in regions for c in r.constants})
    lines = [f"/* polylab: definitions for the generated code of {function} (below) */"]
    if constants:
        test = " || ".join(f"(defined({n}) && ({n}) != {v})" for n, v in constants)
        values = ", ".join(f"{n} = {v}" for n, v in constants)
        lines += [f"#if {test}",
                  f"#error \"polylab generated the code of {function} for {values}: regenerate it with this "
                  "build's -D options\"", "#endif"]
    text = "\n".join(lines) + "\n"
    if any(r.buffers for r in regions):
        text += "#include <stdlib.h>  /* malloc, free and abort for the buffers of the storage steps */\n"
    if any(r.helpers for r in regions):
        text += IN_PLACE_HELPERS
    for r in regions:
        text += "".join(r.functions)
    return text


def whole_file(text: str, regions: Sequence[RegionCode]) -> str:
    """``text`` (the file as read, its line ends untranslated) with each region's lines replaced by its
    body and each function's :func:`definitions` inserted before its definition; every other byte
    unchanged."""
    if "\r" in text.replace("\r\n", ""):
        raise CodegenError("the file has carriage returns that do not end a line, so its lines cannot be "
                           "matched with the parser's", hint="save the file with \\n or \\r\\n line ends")
    crlf = "\r\n" in text
    lines = text.split("\n")
    _check_macros(text, regions)
    by_function: dict[int, list[RegionCode]] = {}
    replaced: dict[int, RegionCode] = {}
    for r in sorted(regions, key=lambda r: r.placement.first_line):
        p = r.placement
        if p.function_line is None:
            raise CodegenError(f"the definition of {p.function or 'the function holding ' + r.scop.name} does not "
                               "start its line, so polylab cannot place the definitions its code needs before it",
                               hint="start the function definition on a line of its own")
        if any(p.first_line <= q <= p.last_line for q in replaced) or p.last_line > len(lines):
            raise CodegenError(f"the region of lines {p.first_line}-{p.last_line} overlaps another region or "
                               "lies outside the file")
        by_function.setdefault(p.function_line, []).append(r)
        replaced[p.first_line] = r
    end = "\r" if crlf else ""
    out: list[str] = []
    k = 1
    while k <= len(lines):
        if k in by_function:
            group = by_function[k]
            out += [ln + end for ln in definitions(group[0].placement.function or "", group).rstrip("\n").split("\n")]
        if k in replaced:
            r = replaced[k]
            out += [ln + end for ln in r.body.split("\n")]
            k = r.placement.last_line + 1
            continue
        out.append(lines[k - 1])
        k += 1
    return "\n".join(out)


def _check_macros(text: str, regions: Sequence[RegionCode]) -> None:
    """Refuse a file that defines a macro named like a loop counter of the generated code."""
    defined = set(_DEFINE.findall(text))
    clash = sorted(defined & {n for r in regions for n in r.names})
    if clash:
        raise CodegenError(f"the file defines a macro {clash[0]}, the name of a loop counter of the generated code",
                           hint=f"rename the macro {clash[0]}")
