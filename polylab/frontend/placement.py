"""Where a ``#pragma scop`` region sits in its file (:class:`~polylab.model.Placement`): what code that
replaces the region in place needs to know about the text around it.

* The region's lines: those of its ``#pragma scop`` and ``#pragma endscop`` (a pragma is a line of its own,
  so every line from the one to the other is the region's).
* The first line of the function definition that holds it: the first non-blank character after the last
  ``;`` or ``}`` before the function's declarator, in the text with comments and directives blanked (a
  declaration's specifiers, ``static``, ``inline``, attributes, hold neither). File-scope definitions placed
  on that line, before the definition, see every macro and declaration the function sees.
* The loop counters the function may read after the region: a counter that the region leaves at its final
  value (a variable declared outside the region) is *read after* it when its name occurs in the function
  after the region, or before the region inside a loop that encloses it (the next iteration reads it after
  the region), except where the occurrence is inside a ``for`` statement whose initialisation assigns the
  counter anew (``for (i = 0; ...)``: that loop and whatever follows inside it see their own values). The
  rule is conservative: a counter it calls read may not be (a later read that is preceded by a write).
* The scalars the region writes that are dead after it (:func:`dead_scalars`): variables of the function
  itself (declared in its body, not ``static`` or ``extern``, or parameters passed by value) whose address
  the function never takes and that it does not read after the region by the rule above; none where a
  loop encloses the region or the function uses ``goto``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pycparser import c_ast

from polylab.frontend.region import Region
from polylab.frontend.source import Source
from polylab.model.scop import Placement

__all__ = ["dead_scalars", "placement"]


def placement(src: Source, region: Region, counters: Iterable[str]) -> Placement | None:
    """The :class:`~polylab.model.Placement` of a delimited region (None for a region without pragmas)."""
    if region.pragmas is None:
        return None
    first, last = region.pragmas[0].coord.line, region.pragmas[1].coord.line
    func = region.scope
    if func is None:
        return Placement(first, last)
    names = set(counters) - _declared_inside(region)
    read = _read_after(src, func, first, last, names)
    return Placement(first, last, func.decl.name, _definition_line(src, func), read)


def _definition_line(src: Source, func: c_ast.FuncDef) -> int | None:
    """The line of the first character of ``func``'s definition; None when other text precedes it there."""
    lines = src.clean_lines
    ln, col = func.coord.line, (func.coord.column or 1) - 1
    while True:   # back to the end of the previous external declaration
        text = lines[ln - 1][:col]
        at = max(text.rfind(";"), text.rfind("}"))
        if at >= 0:
            col = at + 1
            break
        if ln == 1:
            col = 0
            break
        ln -= 1
        col = len(lines[ln - 1])
    while ln <= func.coord.line:   # forward to the first character of the definition
        text = lines[ln - 1]
        rest = text[col:]
        if rest.strip():
            start = col + len(rest) - len(rest.lstrip())
            return ln if not text[:start].strip() else None
        ln, col = ln + 1, 0
    return None


def _declared_inside(region: Region) -> set[str]:
    """Names declared in the region's own statements (``for (int i = ...)``): they end with it."""
    out: set[str] = set()
    for item in region.items:
        for node in _walk(item):
            if isinstance(node, c_ast.Decl) and node.name:
                out.add(node.name)
    return out


def _walk(node: c_ast.Node) -> Iterator[c_ast.Node]:
    yield node
    for _, child in node.children():
        yield from _walk(child)


def _reassigns(node: c_ast.Node, name: str) -> bool:
    """``for (name = e; ...)`` with ``e`` not reading ``name``."""
    init = node.init if isinstance(node, c_ast.For) else None
    if not isinstance(init, c_ast.Assignment) or init.op != "=":
        return False
    target = init.lvalue
    return isinstance(target, c_ast.ID) and target.name == name and \
        not any(isinstance(n, c_ast.ID) and n.name == name for n in _walk(init.rvalue))


def _occurrences(node: c_ast.Node, name: str) -> Iterator[c_ast.ID]:
    """The uses of ``name`` under ``node``, skipping ``for`` statements that assign it anew."""
    if _reassigns(node, name):
        return
    if isinstance(node, c_ast.ID) and node.name == name:
        yield node
    for _, child in node.children():
        yield from _occurrences(child, name)


def _enclosing_loop_lines(src: Source, func: c_ast.FuncDef, first: int, last: int) -> tuple[int, int] | None:
    """The lines of the outermost loop of ``func`` that encloses the region, if one does."""
    for node in _walk(func.body):
        if isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)) and node.coord is not None:
            start, end = node.coord.line, src.end(node)[0]
            if start < first and end > last:
                return start, end
    return None


def _read_after(src: Source, func: c_ast.FuncDef, first: int, last: int, names: set[str]) -> tuple[str, ...]:
    loop = _enclosing_loop_lines(src, func, first, last)
    out = []
    for name in sorted(names):
        for use in _occurrences(func.body, name):
            line = use.coord.line if use.coord is not None else 0
            if line > last or (loop is not None and loop[0] <= line < first):
                out.append(name)
                break
    return tuple(out)


def dead_scalars(src: Source, region: Region, written: Iterable[str]) -> tuple[str, ...]:
    """The scalars of ``written`` (written in the region) whose values after the region nobody reads:
    variables of the function around the region (declared in its body, not ``static`` or ``extern``, or
    its parameters passed by value) whose address it never takes (``&x``) and that it does not read after
    the region (:func:`_read_after`, conservative). Empty for a region outside a function or without
    pragmas, for one inside a loop (the region may read in the next iteration what it wrote in this one)
    and in a function with ``goto`` or labels."""
    func = region.scope
    if func is None or region.pragmas is None:
        return ()
    first, last = region.pragmas[0].coord.line, region.pragmas[1].coord.line
    # inside a loop the region itself may read, in the next iteration, what it left; with goto, control
    # may come back before the region by a way this rule does not follow: nothing is dead there
    if _enclosing_loop_lines(src, func, first, last) is not None or \
            any(isinstance(n, (c_ast.Goto, c_ast.Label)) for n in _walk(func.body)):
        return ()
    own = _own_scalars(func) & set(written)
    taken = {n.expr.name for n in _walk(func) if isinstance(n, c_ast.UnaryOp) and n.op == "&"
             and isinstance(n.expr, c_ast.ID)}
    read = set(_read_after(src, func, first, last, own - taken))
    return tuple(sorted(own - taken - read))


def _own_scalars(func: c_ast.FuncDef) -> set[str]:
    """Names of the scalar variables that live in ``func``'s own frame: its declarations of plain
    (non-array, non-pointer) type without ``static``/``extern``, and its parameters of such a type."""
    out: set[str] = set()
    params = func.decl.type.args.params if isinstance(func.decl.type, c_ast.FuncDecl) and \
        func.decl.type.args is not None else []
    for node in list(params) + [n for n in _walk(func.body) if isinstance(n, c_ast.Decl)]:
        if isinstance(node, c_ast.Decl) and node.name and isinstance(node.type, c_ast.TypeDecl) and \
                not {"static", "extern"} & set(node.storage or []):
            out.add(node.name)
    return out
