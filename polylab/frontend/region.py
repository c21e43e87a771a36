"""One static control part: from a list of pycparser statements to a :class:`~polylab.model.Scop`.

The region is first normalised into a tree of loops (``for`` loops and the counted ``while`` idiom
``i = lb; while (cond) { ...; i = i + step; }``), ``if`` statements and assignments; anything else is
refused with a :class:`~polylab.errors.NotAffineError` that names the construct. Then, walking the tree with
the enclosing iterators:

* a loop ``for (i = lb; cond; i += s)`` with ``s > 0`` executes exactly the points
  ``D = { i : i >= lb, (i - lb) mod s = 0, cond(i) }`` minus every point that comes after a point of
  ``F = { i : i >= lb, (i - lb) mod s = 0, not cond(i) }`` (C leaves the loop at the first failing point);
  the loop must terminate, i.e. ``F`` must be non-empty wherever the loop is reached. Negative steps are
  symmetric (``i <= lb``, later means smaller). For the usual ``i < ub`` this is ``lb <= i < ub``;
* ``if (c)`` intersects the domain with the set ``c`` (``else`` with its complement);
* the original schedule is an isl schedule tree: one band ``S[...] -> [i]`` per loop (``[-i]`` for a
  negative step) over the statements inside it, a sequence node for textual order.

Accesses of a statement are listed in evaluation order: for a compound assignment (``+=``, ``x++``) the read
of the target first, then the reads of the right-hand side from left to right, then the write.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl
from pycparser import c_ast

from polylab.errors import FrontendError, NotAffineError, SourceLocation
from polylab.frontend.affine import (LONG_LONG_MAX, LONG_LONG_MIN, MINMAX_FUNCS, AffineBuilder, int_literal, int_val,
                                     type_names)
from polylab.frontend.source import Source
from polylab.frontend.symbols import PURE_MATH, SYSY_INPUT, SYSY_OUTPUT, TIMING_MARKERS, Symbols, const_eval
from polylab.model import expr as E
from polylab.model.islutil import point_coordinates
from polylab.model.scop import Access, Array, Scalar, Scop, Statement

CTX = isl.DEFAULT_CONTEXT
MARKER_NOTE = "timing markers kept outside the model: "
_MODEL_OPS = ("=", "+=", "-=", "*=", "/=")


# -- the normalised tree ---------------------------------------------------------------------------------
@dataclass
class LoopN:
    var: str
    lb: c_ast.Node
    cond: c_ast.Node
    step: int
    body: list
    node: c_ast.Node
    var_node: c_ast.Node
    incr: c_ast.Node | None = None


@dataclass
class IfN:
    cond: c_ast.Node
    then: list
    other: list
    node: c_ast.Node


@dataclass
class StmtN:
    target: c_ast.Node
    op: str
    value: c_ast.Node | None
    node: c_ast.Node
    #: the statement's text when it is not the node's source text (the parts of a chained assignment)
    text: str | None = None


@dataclass
class Region:
    """A list of statements that forms one static control part, with its exact source extent."""

    items: list
    start: tuple[int, int]
    end: tuple[int, int]
    markers: list[str] = field(default_factory=list)
    #: the function whose body holds the region (its parameters and locals are the names the region sees)
    scope: c_ast.FuncDef | None = None
    #: the ``#pragma scop`` and ``#pragma endscop`` nodes around a delimited region
    pragmas: tuple[c_ast.Pragma, c_ast.Pragma] | None = None


def _err(src: Source, node: c_ast.Node, reason: str, hint: str | None = None) -> NotAffineError:
    return NotAffineError(reason, location=src.location(node), hint=hint)


def _increment(node: c_ast.Node | None, var: str, constants: dict[str, int], src: Source) -> int | None:
    """The constant step of ``i++``, ``++i``, ``i--``, ``i += c``, ``i -= c``, ``i = i + c``, ``i = c + i``,
    ``i = i - c`` on ``var``; None when ``node`` is not an increment of ``var``. A non-constant step is
    refused."""
    match node:
        case c_ast.UnaryOp(op=("p++" | "++"), expr=c_ast.ID(name=n)) if n == var:
            return 1
        case c_ast.UnaryOp(op=("p--" | "--"), expr=c_ast.ID(name=n)) if n == var:
            return -1
        case c_ast.Assignment(op=("+=" | "-=") as op, lvalue=c_ast.ID(name=n), rvalue=r) if n == var:
            step_node, sign = r, (1 if op == "+=" else -1)
        case c_ast.Assignment(op="=", lvalue=c_ast.ID(name=n),
                              rvalue=c_ast.BinaryOp(op=("+" | "-") as op, left=a, right=b)) if n == var:
            if isinstance(a, c_ast.ID) and a.name == var:
                step_node, sign = b, (1 if op == "+" else -1)
            elif op == "+" and isinstance(b, c_ast.ID) and b.name == var:
                step_node, sign = a, 1
            else:
                return None
        case _:
            return None
    step = const_eval(step_node, constants)
    if step is None:
        raise _err(src, step_node, f"the loop step {src.show(step_node)} is not a constant",
                   hint="a static control part needs loops with constant steps")
    if step == 0:
        raise _err(src, step_node, "the loop step is zero: the loop never ends")
    if not LONG_LONG_MIN <= step <= LONG_LONG_MAX:
        raise _err(src, step_node, f"the loop step {src.show(step_node)} does not fit in 64 bits (C's long long "
                                   f"holds at most {LONG_LONG_MAX})", hint="use a smaller step")
    return sign * step


def _reads_array(node: c_ast.Node) -> bool:
    if isinstance(node, c_ast.ArrayRef):
        return True
    return any(_reads_array(c) for _, c in node.children())


class Normalizer:
    """Turns pycparser statements into the loop / if / assignment tree, refusing everything else."""

    def __init__(self, src: Source, symbols: Symbols, markers: list[str],
                 defines: dict[str, int] | None = None) -> None:
        self.src = src
        self.symbols = symbols
        self.markers = markers
        self.defines = dict(defines or {})

    @property
    def constants(self) -> dict[str, int]:
        """The named integer constants: ``#define`` / ``-D`` values, then ``const int`` declarations."""
        return {**self.defines, **self.symbols.constants}

    def items(self, nodes: list[c_ast.Node]) -> list:
        out: list = []
        k = 0
        nodes = list(nodes)
        while k < len(nodes):
            node = nodes[k]
            if k + 1 < len(nodes) and isinstance(nodes[k + 1], c_ast.While):
                loop = self.counted_while(node, nodes[k + 1])
                if loop is not None:
                    out.append(loop)
                    k += 2
                    continue
            out.extend(self.stmt(node))
            k += 1
        return out

    def counted_while(self, init: c_ast.Node, loop: c_ast.While) -> LoopN | None:
        """``i = lb; while (cond) { ...; i = i + s; }`` (or ``int i = lb;``) as a counted loop, else None."""
        match init:
            case c_ast.Assignment(op="=", lvalue=c_ast.ID(name=var), rvalue=lb):
                var_node = init.lvalue
            case c_ast.Decl(name=var, init=lb) if lb is not None and isinstance(init.type, c_ast.TypeDecl):
                self.symbols.add_decl(init)
                var_node = init
            case c_ast.DeclList(decls=[c_ast.Decl(name=var, init=lb)]) if lb is not None:
                var_node = init.decls[0]
            case _:
                return None
        body = loop.stmt.block_items or [] if isinstance(loop.stmt, c_ast.Compound) else [loop.stmt]
        if not body:
            return None
        step = _increment(body[-1], var, self.constants, self.src)
        if step is None:
            return None
        return LoopN(var, lb, loop.cond, step, self.items(body[:-1]), loop, var_node, body[-1])

    def stmt(self, node: c_ast.Node) -> list:
        src = self.src
        match node:
            case c_ast.Compound(block_items=items):
                return self.items(items or [])
            case c_ast.For():
                return [self.for_loop(node)]
            case c_ast.While(cond=cond):
                if _reads_array(cond):
                    raise _err(src, cond, f"the loop condition {src.show(cond)} reads array data: "
                                          "the number of iterations is data-dependent",
                               hint="a static control part needs loops whose bounds are affine in the "
                                    "surrounding iterators and parameters")
                raise _err(src, node, "this while loop is not a counted loop",
                           hint="write it as 'i = lb; while (i < ub) { ...; i = i + step; }' or as a for loop")
            case c_ast.DoWhile():
                raise _err(src, node, "do-while loops are not supported in a static control part",
                           hint="write a for loop")
            case c_ast.If(cond=cond, iftrue=t, iffalse=f):
                return [IfN(cond, self.stmt(t), self.stmt(f) if f is not None else [], node)]
            case c_ast.Assignment(op=op, lvalue=lv, rvalue=c_ast.Assignment() as inner):
                # a chained assignment a = b = e: first b = e, then a = b (C evaluates right to left and
                # a receives the value b holds after its assignment)
                text = f"{self.src.show(lv)} {op} {self.src.show(inner.lvalue)};"
                return [*self.stmt(inner), StmtN(lv, op, inner.lvalue, node, text)]
            case c_ast.Assignment(op=op, lvalue=lv, rvalue=rv):
                return [StmtN(lv, op, rv, node)]
            case c_ast.UnaryOp(op=("p++" | "++" | "p--" | "--") as op, expr=target):
                return [StmtN(target, "+=" if "++" in op else "-=", c_ast.Constant("int", "1", node.coord),
                              node)]
            case c_ast.FuncCall(name=c_ast.ID(name=fname)):
                if fname in TIMING_MARKERS:
                    self.markers.append(f"{fname}() at line {node.coord.line}")
                    return []
                raise self.call_error(node, fname)
            case c_ast.Decl():
                var = self.symbols.add_decl(node)
                if node.init is None:
                    return []
                if var is not None and var.is_array:
                    raise _err(src, node, "array initialisers are not supported in a static control part")
                return [StmtN(c_ast.ID(node.name, node.coord), "=", node.init, node)]
            case c_ast.DeclList(decls=decls):
                out = []
                for d in decls:
                    out.extend(self.stmt(d))
                return out
            case c_ast.EmptyStatement() | c_ast.Pragma():
                return []
            case c_ast.Break():
                raise _err(src, node, "'break' leaves a loop early: the iteration count is data-dependent",
                           hint="a static control part has no break, continue, return or goto")
            case c_ast.Continue():
                raise _err(src, node, "'continue' makes the executed statements data-dependent",
                           hint="use an if statement around the rest of the body")
            case c_ast.Return():
                raise _err(src, node, "'return' leaves the region early",
                           hint="a static control part has no break, continue, return or goto")
            case c_ast.Goto() | c_ast.Label():
                raise _err(src, node, "goto and labels are not allowed in a static control part")
            case c_ast.Switch():
                raise _err(src, node, "switch statements are not supported in a static control part",
                           hint="use if / else if with affine conditions")
            case _:
                raise _err(src, node, f"{src.show(node)} is not a loop, an if or an assignment",
                           hint="a static control part holds loops, ifs and assignments")

    def call_error(self, node: c_ast.FuncCall, fname: str) -> NotAffineError:
        if fname in SYSY_INPUT:
            return _err(self.src, node, f"the call {fname}() reads input: a side effect",
                        hint="read the input before the loop nest")
        if fname in SYSY_OUTPUT:
            return _err(self.src, node, f"the call {fname}() writes output: a side effect",
                        hint="print results after the loop nest")
        if fname in PURE_MATH:
            return _err(self.src, node, f"the result of {fname}() is not used")
        return _err(self.src, node, f"the call {fname}(...) may have side effects",
                    hint="only pure math functions (sqrt, exp, fabs, fmin, fmax, pow, ...) may be called "
                         "in a static control part; inline the function or move the call out of the loops")

    def for_loop(self, node: c_ast.For) -> LoopN:
        src = self.src
        init = node.init
        match init:
            case c_ast.Assignment(op="=", lvalue=c_ast.ID(name=var), rvalue=lb):
                var_node = init.lvalue
            case c_ast.DeclList(decls=[c_ast.Decl(name=var, init=lb) as d]) if lb is not None:
                self.symbols.add_decl(d)
                var_node = d
            case None:
                raise _err(src, node, "the for loop has no initialisation of its counter",
                           hint="write for (i = lb; i < ub; i++)")
            case _:
                raise _err(src, init, f"the loop initialisation {src.show(init)} is not 'i = lb'",
                           hint="write for (i = lb; i < ub; i++)")
        if node.cond is None:
            raise _err(src, node, "the for loop has no condition: it never ends",
                       hint="a static control part needs loops with affine bounds")
        step = _increment(node.next, var, self.constants, src)
        if step is None:
            what = node.next if node.next is not None else node
            raise _err(src, what, f"the loop increment {src.show(node.next) if node.next else '(none)'} "
                                  f"does not add a constant to {var}",
                       hint=f"write {var}++, {var}--, {var} += c or {var} = {var} + c with a constant c")
        return LoopN(var, lb, node.cond, step, self.stmt(node.stmt), node, var_node, node.next)


# -- walking the tree ------------------------------------------------------------------------------------
def _walk_tree(tree: list):
    for item in tree:
        yield item
        if isinstance(item, LoopN):
            yield from _walk_tree(item.body)
        elif isinstance(item, IfN):
            yield from _walk_tree(item.then)
            yield from _walk_tree(item.other)


def _ids(node: c_ast.Node | None):
    """``(name, node)`` of every identifier read in an expression (not call names, not array bases)."""
    if node is None:
        return
    match node:
        case c_ast.ID():
            yield node.name, node
        case c_ast.FuncCall(args=args):
            if args is not None:
                yield from _ids(args)
        case c_ast.ArrayRef(name=base, subscript=sub):
            if not isinstance(base, c_ast.ID):
                yield from _ids(base)
            yield from _ids(sub)
        case c_ast.StructRef(name=base):
            yield from _ids(base)
        case c_ast.Cast(expr=e):
            yield from _ids(e)
        case c_ast.Decl():
            return
        case _:
            for _, c in node.children():
                yield from _ids(c)


def _array_ref_parts(node: c_ast.Node) -> tuple[c_ast.Node, list[c_ast.Node]]:
    """``A[i][j]`` -> (``A``, [``i``, ``j``])."""
    subs: list[c_ast.Node] = []
    while isinstance(node, c_ast.ArrayRef):
        subs.append(node.subscript)
        node = node.name
    return node, subs[::-1]


@dataclass
class _PendingAccess:
    kind: str
    array: str
    subscripts: list
    node: c_ast.Node
    #: where the access executes (iterations of the statement, exact), None: wherever the statement does
    guard: isl.Set | None = None


class _StatementReader:
    """Reads one assignment of a region: its model expression and its accesses, in evaluation order."""

    def __init__(self, owner: RegionBuilder, iters: list[str]) -> None:
        self.owner = owner
        self.src = owner.src
        self.iters = iters
        self.builder = owner._builder(iters)
        self.pending: list[_PendingAccess] = []
        #: the iterations where the operand being read is evaluated (None: every iteration of the statement)
        self.guard: isl.Set | None = None

    def condition(self, node: c_ast.Node) -> isl.Set | None:
        """The iterations where ``node`` is true (non-zero), exact, when it is an affine condition of the
        iterators and parameters; None when it is not (it reads array data or a non-integer scalar): then
        what it guards counts as evaluated at every iteration (a may-access, never fewer accesses than
        run)."""
        if next(_array_refs(node), None) is not None:
            return None
        try:
            return self.builder.cond(node)
        except NotAffineError:
            return None

    def guarded(self, where: isl.Set | None, node: c_ast.Node) -> E.Expr:
        """``node`` read as an operand evaluated only where ``where`` holds (C's ``?:`` arms and the right
        operands of ``&&`` and ``||``): its accesses are restricted to those iterations."""
        saved = self.guard
        if where is not None:
            self.guard = where if saved is None else saved.intersect(where).coalesce()
        try:
            return self.body(node)
        finally:
            self.guard = saved

    def body(self, node: c_ast.Node) -> E.Expr:
        """The right-hand side as a model expression, recording each array access in evaluation order."""
        R = self.owner
        match node:
            case c_ast.Constant(type=t, value=v):
                val = int_literal(v) if t != "char" and "int" in t or t == "long" else None
                if val is not None and not LONG_LONG_MIN <= val <= LONG_LONG_MAX:
                    raise _err(self.src, node, f"the integer constant {v} does not fit in 64 bits (C's long long "
                                               f"holds at most {LONG_LONG_MAX})", hint="use a smaller constant")
                return E.Const(v, t)
            case c_ast.ID(name=n):
                if n in self.iters:
                    return E.Name(n)
                if n in R.consts:
                    R.used_consts[n] = R.consts[n]
                    return E.Const(str(R.consts[n]), "int")
                if n in R.written:
                    return self.ref(node, "read")
                if n in R.iterators:
                    raise _err(self.src, node, f"the loop counter {n} is used outside its loop")
                v = R.symbols.vars.get(n)
                if v is not None and (v.is_array or v.is_pointer):
                    raise _err(self.src, node, f"{n} is an array used without subscripts",
                               hint="pointer arithmetic on arrays is not supported")
                return E.Name(n)
            case c_ast.ArrayRef():
                return self.ref(node, "read")
            case c_ast.BinaryOp(op=("&&" | "||") as op, left=a, right=c):
                left = self.body(a)
                where = self.condition(a)  # the right operand runs where the left is true (&&) / false (||)
                if where is not None and op == "||":
                    where = where.complement()
                return E.Binary(op, left, self.guarded(where, c))
            case c_ast.BinaryOp(op=op, left=a, right=c):
                return E.Binary(op, self.body(a), self.body(c))
            case c_ast.UnaryOp(op=("-" | "+" | "!" | "~") as op, expr=e):
                return E.Unary(op, self.body(e))
            case c_ast.UnaryOp(op=("p++" | "p--" | "++" | "--")):
                raise _err(self.src, node, "an increment inside an expression has a side effect",
                           hint="write the increment as its own statement")
            case c_ast.UnaryOp(op=("*" | "&")):
                raise _err(self.src, node, "pointer operations are not allowed in a static control part")
            case c_ast.UnaryOp(op="sizeof"):
                return E.Const(self.src.show(node), "int")
            case c_ast.TernaryOp(cond=c, iftrue=t, iffalse=f):
                cond = self.body(c)
                where = self.condition(c)  # each arm runs only where the condition selects it
                return E.Cond(cond, self.guarded(where, t),
                              self.guarded(where.complement() if where is not None else None, f))
            case c_ast.Cast(to_type=tt, expr=e):
                words = type_names(tt)
                if "*" in words or "?" in words:
                    raise _err(self.src, node, "pointer casts are not allowed in a static control part")
                return E.Cast(" ".join(words), self.body(e))
            case c_ast.FuncCall(name=c_ast.ID(name=fname), args=args):
                if fname in PURE_MATH or fname in MINMAX_FUNCS:
                    return E.Call(fname, tuple(self.body(a) for a in (args.exprs if args else [])))
                raise Normalizer(self.src, R.symbols, []).call_error(node, fname)
            case c_ast.Assignment():
                raise _err(self.src, node, "an assignment inside an expression has a side effect",
                           hint="write each assignment as its own statement")
            case _:
                raise _err(self.src, node, f"{self.src.show(node)} is not supported in a statement of a "
                                           "static control part")

    def ref(self, node: c_ast.Node, kind: str) -> E.ArrayRef:
        """An array element (or a written scalar) read or written, with its affine subscripts."""
        R = self.owner
        base, subs = _array_ref_parts(node)
        if not isinstance(base, c_ast.ID):
            raise _err(self.src, node, f"{self.src.show(node)} is not an array element",
                       hint="pointer dereferences and struct fields are not supported")
        v = R.symbols.vars.get(base.name)
        if subs:
            if base.name in self.iters or base.name in R.params or base.name in R.written:
                raise _err(self.src, node, f"{base.name} is not an array")
            if v is not None and v.is_pointer and not v.is_array:
                raise _err(self.src, node, f"{base.name} is a pointer: its accesses cannot be modelled",
                           hint="declare it as an array with extents, e.g. double A[N][N]")
            if v is not None and v.is_array and len(v.dims) != len(subs):
                raise _err(self.src, node, f"{base.name} has {len(v.dims)} dimensions but {len(subs)} "
                                           "subscripts are given")
        pas = [self.builder.expr(s) for s in subs]
        idx = tuple(self.body(s) for s in subs)
        self.pending.append(_PendingAccess(kind, base.name, pas, node, self.guard))
        if base.name not in R.array_order:
            R.array_order.append(base.name)
        return E.ArrayRef(base.name, idx, len(self.pending) - 1)


class RegionBuilder:
    """Builds the :class:`Scop` of one region (see the module docstring for the mathematics)."""

    def __init__(self, src: Source, symbols: Symbols, region: Region, *, name: str = "scop0",
                 language: str = "c", defines: dict[str, int] | None = None) -> None:
        self.src = src
        self.symbols = symbols
        self.region = region
        self.name = name
        self.language = language
        self.consts = dict(defines or {})
        self.consts.update(symbols.constants)
        self.used_consts: dict[str, int] = {}
        self.markers = list(region.markers)
        self.notes: list[str] = []

    # -- set-up --------------------------------------------------------------------------------------------
    def build(self) -> Scop:
        """The SCoP: the normalised tree, its loop counters and written scalars, its parameters and
        read-only scalars, then the domains, accesses and schedule walked from the root."""
        tree = Normalizer(self.src, self.symbols, self.markers, self.consts).items(self.region.items)
        self._counters_and_targets(tree)
        self._parameters_and_scalars(tree)
        self.param_index = {p: k for k, p in enumerate(self.params)}
        self.statements: list[Statement] = []
        self.array_order: list[str] = []
        space = self._space([])
        schedule = self._items(tree, [], isl.Set.universe(space))
        return self._assemble(schedule)

    def _counters_and_targets(self, tree: list) -> None:
        """``iterators`` (every loop counter) and ``written`` (every scalar assigned), refusing a counter
        that is no integer or a constant, and a target that is no array element or scalar."""
        src = self.src
        self.iterators: set[str] = set()
        self.written: dict[str, c_ast.Node] = {}
        for item in _walk_tree(tree):
            if isinstance(item, LoopN):
                self.iterators.add(item.var)
                for name, _ in _ids(item.incr):
                    if name in self.consts:
                        self.used_consts[name] = self.consts[name]
                v = self.symbols.vars.get(item.var)
                if v is not None and (v.is_array or v.is_pointer or not v.is_integer):
                    raise _err(src, item.var_node, f"the loop counter {item.var} is not an integer variable",
                               hint="loop counters of a static control part are int")
                if item.var in self.consts:
                    raise _err(src, item.var_node, f"the loop counter {item.var} is a constant")
            elif isinstance(item, StmtN):
                base, subs = _array_ref_parts(item.target)
                if not isinstance(base, c_ast.ID):
                    raise _err(src, item.target, f"the assignment target {src.show(item.target)} is not an "
                                                 "array element or a scalar",
                               hint="pointer dereferences and struct fields are not supported")
                if not subs:
                    self.written.setdefault(base.name, item.target)
                if base.name in self.consts:
                    raise _err(src, item.target, f"{base.name} is a constant and cannot be assigned")

    def _parameters_and_scalars(self, tree: list) -> None:
        """``params`` (integer names never written: bounds, conditions, subscripts, the extents of the arrays
        used) and ``scalars`` (read-only non-integer names), in order of first appearance."""
        self.params: list[str] = []
        self.scalars: list[Scalar] = []
        seen: set[str] = set()

        def consider(name: str) -> None:
            if name in seen:
                return
            seen.add(name)
            if name in self.iterators or name in self.written or name in self.consts:
                return
            v = self.symbols.vars.get(name)
            if v is not None and (v.is_array or v.is_pointer):
                return
            if v is not None and not v.is_integer:
                self.scalars.append(Scalar(name, v.ctype.replace("const ", ""), self._init_text(v)))
                return
            self.params.append(name)

        for item in _walk_tree(tree):
            if isinstance(item, LoopN):
                nodes = [item.lb, item.cond]
            elif isinstance(item, IfN):
                nodes = [item.cond]
            else:
                nodes = [item.target, item.value]
            for n in nodes:
                for name, _ in _ids(n):
                    consider(name)
        # names in the extents of the arrays the region uses
        for item in _walk_tree(tree):
            if isinstance(item, StmtN):
                for n in (item.target, item.value):
                    for ref in _array_refs(n):
                        base, _ = _array_ref_parts(ref)
                        v = self.symbols.vars.get(base.name) if isinstance(base, c_ast.ID) else None
                        if v is not None and v.is_array:
                            for d in v.dims:
                                for name, node in _ids(d):
                                    self._check_extent_name(base.name, d, name, node)
                                    consider(name)

    def _check_extent_name(self, array: str, extent: c_ast.Node, name: str, node: c_ast.Node) -> None:
        """Refuse an extent that uses a loop counter or a name the region assigns: the array's size would
        change while it is used (the harness could not allocate it before the region)."""
        if name in self.iterators or name in self.written:
            what = "a loop counter of the region" if name in self.iterators else "assigned in the region"
            raise _err(self.src, node, f"the extent {self.src.show(extent)} of {array} uses {name}, {what}",
                       hint="an array's extents must be constants or parameters the region does not change")

    def _init_text(self, v) -> str | None:
        if v.init is None or not isinstance(v.init, c_ast.Node):
            return None
        if isinstance(v.init, (c_ast.Constant, c_ast.UnaryOp)) and not _reads_array(v.init):
            text = self.src.show(v.init)
            return text
        return None

    def _space(self, iters: list[str]) -> isl.Space:
        return isl.Space.create_from_names(CTX, set=list(iters), params=list(self.params))

    def _builder(self, iters: list[str], forbidden: str | None = None) -> AffineBuilder:
        src = self.src

        def resolve(name: str, node: c_ast.Node) -> tuple[str, int]:
            if name != forbidden:
                for k in range(len(iters) - 1, -1, -1):
                    if iters[k] == name:
                        return "iter", k
            if name in self.consts:
                self.used_consts[name] = self.consts[name]
                return "const", self.consts[name]
            if name in self.param_index:
                return "param", self.param_index[name]
            if name == forbidden:
                raise _err(src, node, f"the lower bound of loop {name} uses {name} itself")
            if name in self.iterators:
                raise _err(src, node, f"the loop counter {name} is used outside its loop",
                           hint="after a loop its counter holds a data-dependent value for the model")
            if name in self.written:
                raise _err(src, node, f"{name} is assigned inside the region, so its value here is "
                                      "data-dependent",
                           hint="bounds, conditions and subscripts may use only iterators, parameters "
                                "(names never written in the region) and constants")
            v = self.symbols.vars.get(name)
            if v is not None and (v.is_array or v.is_pointer):
                raise _err(src, node, f"{name} is an array or pointer, not an integer")
            if v is not None:
                raise _err(src, node, f"{name} has type {v.ctype}: bounds, conditions and subscripts "
                                      "must be integer",
                           hint="use an int parameter")
            raise _err(src, node, f"{name} is not known here")  # pragma: no cover

        return AffineBuilder(self._space(iters), resolve, src.show,
                             lambda node, text: src.location(node, text))

    # -- the tree ------------------------------------------------------------------------------------------
    def _items(self, items: list, iters: list[str], domain: isl.Set) -> isl.Schedule | None:
        sched = None
        for item in items:
            if isinstance(item, LoopN):
                s = self._loop(item, iters, domain)
            elif isinstance(item, IfN):
                s = self._if(item, iters, domain)
            else:
                s = self._statement(item, iters, domain)
            if s is None:
                continue
            sched = s if sched is None else sched.sequence(s)
        return sched

    def _if(self, item: IfN, iters: list[str], domain: isl.Set) -> isl.Schedule | None:
        self._check_data_dependent(item.cond, "condition")
        cond = self._builder(iters).cond(item.cond)
        s1 = self._items(item.then, iters, domain.intersect(cond).coalesce())
        s2 = self._items(item.other, iters, domain.subtract(cond).coalesce())
        if s1 is None:
            return s2
        return s1 if s2 is None else s1.sequence(s2)

    def _check_data_dependent(self, cond: c_ast.Node, what: str) -> None:
        """Refuse a condition that reads array data, naming the first array element it reads."""
        refs = list(_array_refs(cond))
        if refs:
            raise _err(self.src, refs[0], f"the {what} {self.src.show(cond)} reads the array element "
                                          f"{self.src.show(refs[0])}: a data-dependent condition",
                       hint="a static control part needs bounds and conditions that are affine in the "
                            "surrounding iterators and parameters")

    def _loop(self, loop: LoopN, iters: list[str], domain: isl.Set) -> isl.Schedule | None:
        src = self.src
        if loop.var in iters:
            raise _err(src, loop.var_node, f"the loop counter {loop.var} is already the counter of an "
                                           "enclosing loop")
        d = len(iters)
        inner = iters + [loop.var]
        lb = self._builder(inner, forbidden=loop.var).expr(loop.lb)
        b = self._builder(inner)
        self._check_data_dependent(loop.cond, "loop condition")
        cond = b.cond(loop.cond)
        outer = domain.insert_dims(isl.dim_type.set, d, 1).set_dim_name(isl.dim_type.set, d, loop.var)
        i = b.var("iter", d)
        started = i.ge_set(lb) if loop.step > 0 else i.le_set(lb)
        if abs(loop.step) > 1:
            started = started.intersect(
                i.sub(lb).mod_val(int_val(abs(loop.step))).zero_set())
        started = outer.intersect(started)
        holds = started.intersect(cond)
        fails = started.subtract(cond)
        # the loop stops at the first failing point: drop every point after one
        pairs = isl.Map.from_domain_and_range(holds, fails)
        for k in range(d):
            pairs = pairs.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
        pairs = pairs.order_gt(isl.dim_type.in_, d, isl.dim_type.out, d) if loop.step > 0 else \
            pairs.order_lt(isl.dim_type.in_, d, isl.dim_type.out, d)
        executed = holds.subtract(pairs.domain()).coalesce()
        # termination: wherever the loop is reached, some point fails the condition
        reached = domain
        stops = fails.project_out(isl.dim_type.set, d, 1)
        forever = reached.subtract(stops)
        if not forever.is_empty():
            example = _describe_point(forever.sample_point(), iters, self.params)
            why = (f"{loop.var} {'increases' if loop.step > 0 else 'decreases'} from its start and the condition "
                   f"{src.show(loop.cond)} never becomes false")
            reason = (f"the loop on {loop.var} may never end (for example when {example}): {why}" if example
                      else f"the loop on {loop.var} never ends: {why}")
            raise _err(src, loop.cond, reason,
                       hint=f"write the condition as a bound the counter reaches, e.g. {loop.var} < N")
        first = len(self.statements)
        child = self._items(loop.body, inner, executed)
        if child is None:
            return None
        upa = None
        for st in self.statements[first:]:
            pa = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(st.domain.get_space()), isl.dim_type.set, d)
            if loop.step < 0:
                pa = pa.neg()
            u = isl.UnionPwAff.from_pw_aff(pa)
            upa = u if upa is None else upa.union_add(u)
        mupa = isl.MultiUnionPwAff.from_union_pw_aff(upa)
        return child.insert_partial_schedule(mupa)

    # -- statements ------------------------------------------------------------------------------------
    def _statement(self, st: StmtN, iters: list[str], domain: isl.Set) -> isl.Schedule:
        src = self.src
        name = f"S{len(self.statements)}"
        dom = domain.set_tuple_name(name).coalesce()
        reader = _StatementReader(self, iters)
        # evaluation order: target read (compound), right-hand side reads, then the write
        target_node = st.target
        op = st.op
        if isinstance(target_node, c_ast.ID) and target_node.name in iters:
            raise _err(src, target_node, f"the loop counter {target_node.name} is written inside the loop "
                                         "body: the iteration count is data-dependent",
                       hint="a static control part only changes a loop counter in the loop header")
        if isinstance(target_node, c_ast.ID) and target_node.name in self.iterators:
            raise _err(src, target_node, f"{target_node.name} is a loop counter and is also assigned outside "
                                         "its loop header",
                       hint="use another name for the scalar, or keep the assignment out of the region")
        for sub in _array_ref_parts(target_node)[1]:
            reader.builder.expr(sub)  # a non-affine target subscript is reported before the right-hand side
        if op == "=":
            value = reader.body(st.value)
            target = reader.ref(target_node, "write")
        else:
            treat = reader.ref(target_node, "read")
            value = reader.body(st.value)
            target = reader.ref(target_node, "write")
            if op not in _MODEL_OPS:
                value = E.Binary(op[:-1], treat, value)
                op = "="
        accesses = tuple(Access(k, p.kind, p.array, self._relation(name, dom, p), src.location(p.node),
                                src.show(p.node)) for k, p in enumerate(reader.pending))
        assignment = E.Assignment(target, op, value)
        text = st.text or src.node_text(st.node)
        loc = src.location(st.node, text.split("\n")[0])
        self.statements.append(Statement(name, text, loc, tuple(iters), dom, accesses, assignment))
        return isl.Schedule.from_domain(isl.UnionSet.from_set(dom))

    def _relation(self, stmt: str, dom: isl.Set, p: _PendingAccess) -> isl.Map:
        """``{ S[x] -> A[f(x)] : x in D }``, with ``D`` the statement's domain restricted to where the access
        executes (its guard: a ``?:`` arm, the right operand of ``&&`` / ``||``)."""
        if p.guard is not None:
            dom = dom.intersect(p.guard.set_tuple_name(stmt)).coalesce()
        if not p.subscripts:
            rng = isl.Set.universe(isl.Space.create_from_names(CTX, set=[], params=list(self.params)))
            rng = rng.set_tuple_name(p.array)
            return isl.Map.from_domain_and_range(dom, rng).intersect_domain(dom)
        m = isl.Map.from_pw_aff(p.subscripts[0])
        for pa in p.subscripts[1:]:
            m = m.flat_range_product(isl.Map.from_pw_aff(pa))
        m = m.set_tuple_name(isl.dim_type.in_, stmt).set_tuple_name(isl.dim_type.out, p.array)
        return m.intersect_domain(dom).coalesce()

    # -- the SCoP ------------------------------------------------------------------------------------------
    def _assemble(self, schedule: isl.Schedule | None) -> Scop:
        params_space = isl.Space.create_from_names(CTX, set=[], params=list(self.params)).params()
        context = isl.Set.universe(params_space)
        if schedule is None:
            schedule = isl.Schedule.from_domain(isl.UnionSet.empty(params_space))
        arrays = []
        for name in self.array_order:
            arrays.append(self._array(name))
        notes = list(self.notes)
        if self.markers:
            notes.append(MARKER_NOTE + ", ".join(self.markers))
        start, end = self.region.start, self.region.end
        source = self.src.text(start, end)
        loc = SourceLocation(start[0], start[1], source.split("\n")[0], self.src.line(start[0]))
        return Scop(self.name, tuple(self.statements), tuple(arrays), tuple(self.params), context, schedule,
                    tuple(self.scalars), None, source, self.language, loc,
                    tuple(sorted(self.used_consts.items())), tuple(notes))

    def _array(self, name: str) -> Array:
        v = self.symbols.vars.get(name)
        accesses = [a for s in self.statements for a in s.accesses if a.array == name]
        rels = [a.relation for a in accesses]
        rank = rels[0].dim(isl.dim_type.out) if rels else 0
        for a in accesses:  # an undeclared array takes its rank from its first reference
            if a.relation.dim(isl.dim_type.out) != rank:
                raise FrontendError(
                    f"{name} is used with {rank} subscript(s) at line {accesses[0].location.line} and with "
                    f"{a.relation.dim(isl.dim_type.out)} here", location=a.location,
                    hint=f"an array has one number of subscripts everywhere; declare {name} to say which")
        ctype = (v.ctype.replace("const ", "") if v is not None else "double")
        if rank == 0:
            return Array(name, ctype, (), v is not None)
        if v is not None and v.is_array and all(d is not None for d in v.dims):
            return Array(name, ctype, tuple(self._extent_text(d) for d in v.dims), True)
        rng = rels[0].range()
        for r in rels[1:]:
            rng = rng.union(r.range())
        extents = []
        for k in range(rank):
            extents.append(self._inferred_extent(rng, k))
        if v is not None and v.is_array:
            extents = [self._extent_text(d) if d is not None else e for d, e in zip(v.dims, extents)]
        return Array(name, ctype, tuple(extents), False)

    def _extent_text(self, node: c_ast.Node) -> str:
        for name, _ in _ids(node):
            if name in self.consts:
                self.used_consts[name] = self.consts[name]
        val = const_eval(node, self.consts)
        if val is not None:
            return str(val)
        return self.src.show(node)

    @staticmethod
    def _inferred_extent(rng: isl.Set, k: int) -> str:
        """``max`` of the accessed indices in dimension ``k`` plus one, as a C expression (isl's AST)."""
        try:
            hi = rng.dim_max(k).coalesce()
            if hi.is_empty():
                return "0"
            one = isl.PwAff.from_aff(isl.Aff.zero_on_domain(isl.LocalSpace.from_space(
                hi.get_domain_space())).set_constant_val(isl.Val.one(CTX)))
            ext = hi.add(one).coalesce()
            build = isl.AstBuild.from_context(ext.domain())
            return build.expr_from_pw_aff(ext).to_C_str()
        except isl.Error:  # pragma: no cover - unbounded accesses
            return "0"


def _array_refs(node: c_ast.Node | None):
    if node is None:
        return
    if isinstance(node, c_ast.ArrayRef):
        yield node
        base, subs = _array_ref_parts(node)
        for s in subs:
            yield from _array_refs(s)
        return
    for _, c in node.children():
        yield from _array_refs(c)


def _describe_point(point: isl.Point, iters: list[str], params: list[str]) -> str:
    """``N = -1, i = 0``: the parameter and iterator values of an isl point ("" when it has none)."""
    values = [*zip(params, point_coordinates(point, dim_type=isl.dim_type.param)),
              *zip(iters, point_coordinates(point))]
    return ", ".join(f"{name} = {value}" for name, value in values)
