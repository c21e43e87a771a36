"""The front end: C fragments, C files with ``#pragma scop``, whole SysY programs -> :class:`Program`.

Three input forms:

* a **C fragment** (the corpus ``*.c``): declarations and statements at top level; the whole fragment is one
  static control part and anything that is not affine is refused (:class:`~polylab.errors.NotAffineError`);
* a **C file or function with** ``#pragma scop`` / ``#pragma endscop``: each delimited region is one static
  control part and must be affine;
* a **whole program** (SysY, ``.sy``, or a C file with functions and no pragma): static control parts are
  detected automatically as maximal runs of affine statements in each function body; every excluded
  construct is reported as a :class:`~polylab.model.Rejection`, and ``starttime()`` / ``stoptime()`` are
  timing markers that do not split a region. For such programs ``Scop.live_out`` holds the array elements
  read after the region.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pycparser import c_ast

from polylab.errors import FrontendError, PolylabError, SourceLocation, SourceSyntaxError
from polylab.frontend.detect import context_declaration, detect_program, pragma_regions
from polylab.frontend.placement import dead_scalars, placement
from polylab.frontend.region import Region, RegionBuilder
from polylab.frontend.preprocess import needs_preprocessor, parse_define, preprocess
from polylab.frontend.source import (Prepared, Source, parse_fragment, parse_unit, prepare, prepared,
                                     read_text_file)
from polylab.frontend.symbols import Symbols
from polylab.model.scop import Program

__all__ = ["parse", "parse_file", "read_text_file"]


def parse(text: str, *, filename: str | None = None, language: str | None = None, defines=(),
          include_dirs=()) -> Program:
    """Parse ``text`` into a :class:`~polylab.model.Program` with one :class:`~polylab.model.Scop` per region.

    ``language`` is ``"c"`` or ``"sysy"``; by default it follows the file name (``.sy`` is SysY).
    Raises :class:`~polylab.errors.SourceSyntaxError` for invalid C and
    :class:`~polylab.errors.NotAffineError` when a fragment or ``#pragma scop`` region is not a static
    control part (with line, column, offending text, reason and hint).

    C text with preprocessor directives (``#include``, ``#define``, ``#if`` ...) or with ``defines``
    (``-D``: ``("N", "100")`` pairs or ``"N=100"`` strings) goes through the preprocessor first
    (:mod:`polylab.frontend.preprocess`); ``include_dirs`` are the ``-I`` folders.
    """
    if language is None:
        language = "sysy" if filename and str(filename).endswith(".sy") else "c"
    if language not in ("c", "sysy"):
        raise PolylabError(f"unknown language {language!r}", hint="use 'c' or 'sysy'")
    defines = tuple(parse_define(d) if isinstance(d, str) else tuple(d) for d in defines)
    if language == "c" and needs_preprocessor(text, defines):
        prep = prepared(text, preprocess(text, filename=filename, defines=defines, include_dirs=include_dirs))
    else:
        prep = prepare(text)
    if not prep.clean.strip():
        raise SourceSyntaxError("there is no code to analyse: the input is empty (or only comments and "
                                "preprocessor lines)",
                                location=SourceLocation(1, 1, "", prep.lines[0] if prep.lines else ""),
                                hint="write a loop nest, e.g. for (i = 0; i < N; i++) a[i] = 2 * a[i];")
    src = Source(prep)
    if language == "sysy":
        unit = parse_unit(prep, filename)
        return detect_program(src, unit, language="sysy", filename=filename, defines=prep.defines)
    if prep.has_scop_pragma:
        return _pragma_program(src, prep, filename)
    try:
        func = parse_fragment(prep, filename)
    except SourceSyntaxError as frag_error:
        try:
            unit = parse_unit(prep, filename)
        except SourceSyntaxError as unit_error:
            # report the reading that got further into the text
            fl, ul = frag_error.location, unit_error.location
            if fl is not None and ul is not None and (ul.line, ul.column) > (fl.line, fl.column):
                raise unit_error from None
            raise frag_error from None
        if not any(isinstance(e, c_ast.FuncDef) for e in unit.ext):
            raise frag_error from None
        return detect_program(src, unit, language="c", filename=filename, defines=prep.defines)
    return _fragment_program(src, prep, func, filename)


def parse_file(path, *, language: str | None = None, defines=(), include_dirs=()) -> Program:
    """Read and parse a file (``.sy`` files are SysY programs); ``defines`` and ``include_dirs`` as for
    :func:`parse`."""
    p = Path(path)
    text = read_text_file(p)
    return parse(text, filename=str(p), language=language, defines=defines, include_dirs=include_dirs)


def _fragment_program(src: Source, prep: Prepared, func: c_ast.FuncDef, filename: str | None) -> Program:
    items = list(func.body.block_items or [])
    symbols = Symbols()
    symbols.collect(func.body)
    # the declarations at the start of the fragment are context, the region starts at the first statement:
    # a scalar initialised there and never assigned later is a constant (integer) or a read-only scalar
    k = 0
    while k < len(items) and isinstance(items[k], c_ast.Decl):
        d = items[k]
        if d.init is not None and not context_declaration(d, items[k + 1:], symbols):
            break
        k += 1
    body = items[k:] or items
    if body:
        start, end = src.start(body[0]), src.end(body[-1])
    else:
        start, end = (1, 1), (1, 0)
    region = Region(items[k:], start, end)
    scop = RegionBuilder(src, symbols, region, name="scop0", language="c", defines=prep.defines).build()
    return Program(prep.original, "c", (scop,), (), filename)


def _region_symbols(unit: c_ast.FileAST, scope: c_ast.FuncDef | None) -> Symbols:
    """The names a ``#pragma scop`` region sees: the file-scope declarations, then the parameters and locals
    of the function that holds it (which hide them). Without a function: every declaration of the text."""
    symbols = Symbols()
    if scope is None:
        symbols.collect(unit)
        return symbols
    for ext in unit.ext:
        if isinstance(ext, (c_ast.Decl, c_ast.Typedef)):
            symbols.collect(ext)
    symbols.collect(scope)
    return symbols


def _pragma_program(src: Source, prep: Prepared, filename: str | None) -> Program:
    try:
        unit = parse_unit(prep, filename)
    except SourceSyntaxError as unit_error:
        try:
            func = parse_fragment(prep, filename)
        except SourceSyntaxError:
            raise unit_error from None
        unit = c_ast.FileAST([func])
    scops = []
    for k, region in enumerate(pragma_regions(src, unit)):
        scop = RegionBuilder(src, _region_symbols(unit, region.scope), region, name=f"scop{k}",
                             language="c", defines=prep.defines).build()
        counters = {it for st in scop.statements for it in st.iterators}
        scalars = {a.name for a in scop.arrays if a.rank == 0}
        scops.append(replace(scop, placement=placement(src, region, counters),
                             dead_after=dead_scalars(src, region, scalars)))
    return Program(prep.original, "c", tuple(scops), (), filename)
