"""Finding static control parts in whole programs, and ``#pragma scop`` regions.

Automatic detection (SysY programs, C files without pragmas) grows a region statement by statement along
each function body: a statement joins the current region when the region with it still builds into an exact
model. A statement that cannot join is reported as a :class:`~polylab.model.Rejection` and ends the region;
when it is a loop, an if or a block, its body is searched for smaller regions. Declarations with constant
initialisers before a region (``float f = 7.01;``) are context (read-only scalars keep their value), and the
timing markers ``starttime()`` / ``stoptime()`` never split a region. A region must contain a loop.

For a region of ``main``, ``Scop.live_out`` is the set of elements of the arrays written in the region that
are read after it: a read whose subscripts are affine in the region's parameters (which the program does not
change afterwards) contributes exactly that element, any other read the whole array.
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl
from pycparser import c_ast

from polylab.errors import NotAffineError, SourceSyntaxError
from polylab.frontend.affine import AffineBuilder
from polylab.frontend.region import MARKER_NOTE, CTX, Region, RegionBuilder
from polylab.frontend.source import Source
from polylab.frontend.symbols import TIMING_MARKERS, Symbols, const_eval
from polylab.model.scop import Program, Rejection, Scop


def pragma_regions(src: Source, unit: c_ast.Node) -> list[Region]:
    """The statement lists between ``#pragma scop`` and ``#pragma endscop`` (in source order)."""
    out: list[Region] = []
    scope: list[c_ast.FuncDef] = []

    def visit(node: c_ast.Node) -> None:
        if isinstance(node, c_ast.FuncDef):
            scope.append(node)
            for _, child in node.children():
                visit(child)
            scope.pop()
            return
        if isinstance(node, c_ast.Compound) and node.block_items:
            items = node.block_items
            k = 0
            while k < len(items):
                it = items[k]
                if isinstance(it, c_ast.Pragma) and it.string.strip() == "scop":
                    j = k + 1
                    while j < len(items) and not (isinstance(items[j], c_ast.Pragma)
                                                  and items[j].string.strip() == "endscop"):
                        j += 1
                    if j == len(items):
                        raise SourceSyntaxError("#pragma scop without a matching #pragma endscop in the same "
                                                "block", location=src.location(it, "#pragma scop"),
                                                hint="put #pragma endscop after the last statement of the "
                                                     "region, in the same block")
                    body = items[k + 1:j]
                    if body:
                        out.append(Region(body, src.start(body[0]), src.end(body[-1]),
                                          scope=scope[-1] if scope else None, pragmas=(it, items[j])))
                    k = j + 1
                    continue
                visit(it)
                k += 1
            return
        for _, child in node.children():
            visit(child)

    visit(unit)
    return out


def _is_marker(node: c_ast.Node) -> bool:
    return isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
        node.name.name in TIMING_MARKERS


def _has_loop(node: c_ast.Node) -> bool:
    if isinstance(node, (c_ast.For, c_ast.While)):
        return True
    return any(_has_loop(c) for _, c in node.children())


def _is_init(node: c_ast.Node) -> bool:
    """``i = lb;`` or ``int i = lb;``: the first half of the counted-while idiom."""
    if isinstance(node, c_ast.Assignment):
        return node.op == "=" and isinstance(node.lvalue, c_ast.ID)
    return isinstance(node, c_ast.Decl) and node.init is not None and isinstance(node.type, c_ast.TypeDecl)


def assigned_names(nodes, skip: c_ast.Node | None = None) -> set[str]:
    """Names assigned (``=``, compound assignment, ``++``/``--``, an initialised declaration other than
    ``skip``) anywhere in ``nodes``."""
    out: set[str] = set()

    def visit(n: c_ast.Node) -> None:
        if n is skip:
            return
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            out.add(n.lvalue.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("p++", "++", "p--", "--") and isinstance(n.expr, c_ast.ID):
            out.add(n.expr.name)
        elif isinstance(n, c_ast.Decl) and n.init is not None and n.name:
            out.add(n.name)
        for _, c in n.children():
            visit(c)

    for n in nodes:
        visit(n)
    return out


def context_declaration(decl: c_ast.Decl, rest, symbols: Symbols) -> bool:
    """Whether a scalar declaration with an initialiser, placed before a region, is context: its name is
    never assigned in ``rest``. An integer initialised with a constant expression then becomes a named
    constant; other scalars keep their initialiser as their value (``float f = 7.01;``)."""
    if not _simple_init(decl) or decl.name in assigned_names(rest, skip=decl):
        return False
    var = symbols.add_decl(decl)
    if var is not None and var.is_integer:
        val = const_eval(decl.init, symbols.constants)
        if val is not None:
            symbols.constants[decl.name] = val
    return True


def _simple_init(node: c_ast.Node) -> bool:
    """A scalar declaration whose initialiser has no call and reads no array (context before a region)."""
    if not isinstance(node, c_ast.Decl) or node.init is None or not isinstance(node.type, c_ast.TypeDecl):
        return False

    def pure(n: c_ast.Node) -> bool:
        if isinstance(n, (c_ast.FuncCall, c_ast.ArrayRef, c_ast.Assignment)):
            return False
        return all(pure(c) for _, c in n.children())

    return pure(node.init)


class _Detector:
    def __init__(self, src: Source, symbols: Symbols, language: str, defines: dict[str, int]) -> None:
        self.src = src
        self.symbols = symbols
        self.language = language
        self.defines = defines
        self.scops: list[Scop] = []
        self.rejected: dict[tuple[int, int, str], Rejection] = {}

    def reject(self, err: NotAffineError | None, node: c_ast.Node, reason: str | None = None) -> None:
        if err is not None and err.location is not None:
            loc, why, hint = err.location, err.message, err.hint
        else:
            loc, why, hint = self.src.location(node), reason or "not a static control part", None
        self.rejected.setdefault((loc.line, loc.column, why), Rejection(loc, why, hint))

    def _within(self, err: NotAffineError, group: list[c_ast.Node]) -> bool:
        if err.location is None:
            return True
        s, e = self.src.start(group[0]), self.src.end(group[-1])
        p = (err.location.line, err.location.column)
        return s <= p <= e

    def build(self, items: list[c_ast.Node]) -> Scop:
        real = [x for x in items if not _is_marker(x) and not (isinstance(x, c_ast.Decl) and x.init is None)]
        real = real or items
        region = Region(items, self.src.start(real[0]), self.src.end(real[-1]))
        return RegionBuilder(self.src, self.symbols, region, name=f"scop{len(self.scops)}",
                             language=self.language, defines=self.defines).build()

    def scan(self, items: list[c_ast.Node], func: c_ast.FuncDef, nested: bool) -> None:
        run: list[c_ast.Node] = []
        last: Scop | None = None
        k = 0

        def flush() -> None:
            nonlocal run, last
            if last is not None and any(_has_loop(x) for x in run):
                self.scops.append(self._finish(last, run, func, nested))
            run, last = [], None

        while k < len(items):
            item = items[k]
            if _is_marker(item) or (isinstance(item, c_ast.Decl) and item.init is None):
                if run:
                    run.append(item)
                elif isinstance(item, c_ast.Decl):
                    self.symbols.add_decl(item)
                k += 1
                continue
            if not run and _simple_init(item) and not (
                    k + 1 < len(items) and isinstance(items[k + 1], c_ast.While)):
                context_declaration(item, [func.body], self.symbols)
                k += 1  # context: a scalar with a constant initial value
                continue
            group = [item]
            if k + 1 < len(items) and isinstance(items[k + 1], c_ast.While) and _is_init(item):
                group = [item, items[k + 1]]
            try:
                scop = self.build(run + group)
            except NotAffineError as err:
                if run and not self._within(err, group):
                    flush()
                    continue  # retry the statement on its own
                # the statement itself is not affine: report it, end the region, look inside it
                self.reject(err, group[-1])
                flush()
                self.descend(group[-1], func)
                k += len(group)
                continue
            run.extend(group)
            last = scop
            k += len(group)
        flush()

    def descend(self, item: c_ast.Node, func: c_ast.FuncDef) -> None:
        match item:
            case c_ast.Compound(block_items=b):
                self.scan(list(b or []), func, True)
            case c_ast.For(stmt=s) | c_ast.While(stmt=s) | c_ast.DoWhile(stmt=s):
                self.descend_stmt(s, func)
            case c_ast.If(iftrue=t, iffalse=f):
                self.descend_stmt(t, func)
                if f is not None:
                    self.descend_stmt(f, func)

    def descend_stmt(self, s: c_ast.Node | None, func: c_ast.FuncDef) -> None:
        if s is None:
            return
        if isinstance(s, c_ast.Compound):
            self.scan(list(s.block_items or []), func, True)
        else:
            self.scan([s], func, True)

    # -- live-out ----------------------------------------------------------------------------------------
    def _finish(self, scop: Scop, run: list[c_ast.Node], func: c_ast.FuncDef, nested: bool) -> Scop:
        markers = [f"{x.name.name}() at line {x.coord.line}" for x in run if _is_marker(x)]
        notes = tuple(n for n in scop.notes if not n.startswith(MARKER_NOTE))
        if markers:
            notes += (MARKER_NOTE + ", ".join(markers),)
        scop = replace(scop, notes=notes)
        if nested or func.decl.name != "main":
            return scop
        return replace(scop, live_out=self.live_out(scop, func))

    def live_out(self, scop: Scop, func: c_ast.FuncDef) -> isl.UnionSet:
        src = self.src
        # the region's last character, from its first one and its exact text
        first = scop.location.line, scop.location.column
        lines = scop.source.split("\n")
        if len(lines) == 1:
            end = (first[0], first[1] + len(lines[0]) - 1)
        else:
            end = (first[0] + len(lines) - 1, len(lines[-1]))
        written_arrays = {a.array for _, a in scop.accesses() if a.kind == "write"}
        ranks = {a.name: a.rank for a in scop.arrays}
        # names assigned after the region (their later values differ from the region's parameters)
        changed: set[str] = set()
        reads: list[c_ast.Node] = []

        def after(node: c_ast.Node) -> bool:
            c = node.coord
            return c is not None and (c.line, c.column or 0) > end

        def visit(node: c_ast.Node) -> None:
            if isinstance(node, c_ast.Assignment) and after(node) and isinstance(node.lvalue, c_ast.ID):
                changed.add(node.lvalue.name)
            if isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "++", "p--", "--") and after(node) \
                    and isinstance(node.expr, c_ast.ID):
                changed.add(node.expr.name)
            if isinstance(node, c_ast.ArrayRef) and after(node):
                reads.append(node)
                # do not descend into the chain: A[i][j] is one reference
                base = node
                while isinstance(base, c_ast.ArrayRef):
                    visit(base.subscript)
                    base = base.name
                return
            if isinstance(node, c_ast.ID) and after(node) and node.name in written_arrays and \
                    ranks.get(node.name) == 0:
                reads.append(node)
            for _, child in node.children():
                visit(child)

        visit(func.body)
        space = isl.Space.create_from_names(CTX, set=[], params=list(scop.parameters))
        out = isl.UnionSet.empty(space.params())
        params = {p: k for k, p in enumerate(scop.parameters)}
        consts = dict(self.defines)
        consts.update(self.symbols.constants)

        def resolve(name: str, node: c_ast.Node) -> tuple[str, int]:
            if name in consts:
                return "const", consts[name]
            if name in params and name not in changed:
                return "param", params[name]
            raise NotAffineError(f"{name} is not a parameter here", location=src.location(node))

        builder = AffineBuilder(space, resolve, src.show, lambda n, t: src.location(n, t))
        for ref in reads:
            base, subs = ref, []
            while isinstance(base, c_ast.ArrayRef):
                subs.append(base.subscript)
                base = base.name
            subs = subs[::-1]
            if not isinstance(base, c_ast.ID) or base.name not in written_arrays:
                continue
            name = base.name
            if not subs:
                out = out.union(isl.UnionSet.from_set(isl.Set.universe(space).set_tuple_name(name)))
                continue
            try:
                pas = [builder.expr(s) for s in subs]
                m = isl.Map.from_pw_aff(pas[0])
                for pa in pas[1:]:
                    m = m.flat_range_product(isl.Map.from_pw_aff(pa))
                elems = m.range().set_tuple_name(name)
            except NotAffineError:
                elems = self._whole(scop, name, builder, space)
            out = out.union(isl.UnionSet.from_set(elems))
        return out.coalesce()

    def _whole(self, scop: Scop, name: str, builder: AffineBuilder, space: isl.Space) -> isl.Set:
        v = self.symbols.vars.get(name)
        rank = scop.array(name).rank
        box = isl.Set.universe(isl.Space.create_from_names(CTX, set=[f"e{k}" for k in range(rank)],
                                                           params=list(scop.parameters)))
        if v is not None and v.is_array and all(d is not None for d in v.dims):
            try:
                ext_builder = AffineBuilder(box.get_space(), builder.resolve, builder.show, builder.locate)
                for k, d in enumerate(v.dims):
                    x = ext_builder.var("iter", k)
                    box = box.intersect(x.ge_set(ext_builder.const(0))).intersect(x.lt_set(ext_builder.expr(d)))
            except NotAffineError:
                pass
        return box.set_tuple_name(name)


def detect_program(src: Source, unit: c_ast.FileAST, *, language: str, filename: str | None,
                   defines: dict[str, int]) -> Program:
    """Automatic detection of the maximal static control parts of every function of ``unit``."""
    symbols = Symbols()
    symbols.collect(unit)
    det = _Detector(src, symbols, language, defines)
    for ext in unit.ext:
        if isinstance(ext, c_ast.FuncDef) and ext.body is not None:
            det.scan(list(ext.body.block_items or []), ext, False)
    rejected = tuple(sorted(det.rejected.values(), key=lambda r: (r.location.line, r.location.column)))
    return Program(src.prep.original, "sysy" if language == "sysy" else "c", tuple(det.scops), rejected,
                   filename)


__all__ = ["assigned_names", "context_declaration", "detect_program", "pragma_regions"]
