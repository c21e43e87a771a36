"""C and C+OpenMP kernels printed from the loop program.

Each ``for`` of the isl AST becomes a C ``for`` whose iterator is declared in the loop header, so every
iterator of a loop nested in a parallel loop is private to the thread that runs it. A statement instance
``S(e0, e1, ...)`` prints the statement's own text (its expression tree) with the original iterators
replaced by the AST expressions ``e0, e1, ...``.

OpenMP: ``#pragma omp parallel for`` is put on the outermost parallel loop of each nest (a parallel loop
inside a parallel loop stays a plain loop). The body of that loop is printed as a function of its own,
``polylab_parN(iterators in scope, the kernel's parameters)``, with the kernel's ``restrict`` array
parameters: gcc outlines a parallel loop into a function that receives the arrays through a structure,
which loses ``restrict``, so without this the vector loops inside are run-time alias-checked or not
vectorized at all (a parallel gemm ran at half the speed of the sequential one on one thread). A loop is parallel only when the schedule says so (a coincident
band member), so the iterations a thread runs touch no element another thread writes in the same loop.

Rows in registers: a loop whose body is a whole strip of jammed rows of one accumulation (the rows of
:mod:`polylab.schedule.jam`, constant bounds) keeps the strip's elements in a small local array across the
loop where :func:`polylab.codegen.ast.register_rows` proves it exact: loaded before, updated in order,
stored after (scalar replacement; gcc cannot tell ``A[i][k]`` from ``A[i][j]`` and otherwise loads and
stores every element at every iteration).

An accumulator in a register: a loop of a few constant iterations whose body is one accumulation into an
element that stays the same across the loop (the reduction loop of a jam inside its vector loop) keeps
that element in a local scalar where :func:`polylab.codegen.ast.register_accumulators` proves it exact.
"""

from __future__ import annotations

from typing import Callable, Sequence

from polylab.codegen.ast import (UNROLL_STRIP, AExpr, Block, For, Id, If, Int, LoopProgram, Node, Op, User, expr_ids,
                                 offset)
from polylab.codegen.cexpr import HELPER_NAMES, c_expr
from polylab.model.expr import (ArrayRef, Assignment, Binary, Call, Cond, Const, Expr, Name, Unary,
                                assignment_to_c, negated, to_c, transform, walk, without_double_signs)
from polylab.model.scop import Scop

ArrayPrinter = Callable[[ArrayRef, Callable[[Expr], str]], "str | None"]


def as_model_expr(e: AExpr) -> Expr:
    """An isl AST expression as a statement-body expression, so it prints with C's precedence rules (a
    negation of a negation cancels, a negative term is subtracted: :func:`polylab.model.expr.negated`,
    :func:`~polylab.model.expr.without_double_signs`)."""
    match e:
        case Int(value=v):
            return Const(str(v)) if v >= 0 else Unary("-", Const(str(-v)))
        case Id(name=n):
            return Name(n)
        case Op(op=("add" | "sub" | "mul" | "div" | "pdiv_q" | "pdiv_r" | "zdiv_r") as op, args=(a, b)):
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pdiv_q": "/", "pdiv_r": "%",
                   "zdiv_r": "%"}[op]
            out = Binary(sym, as_model_expr(a), as_model_expr(b))
            return without_double_signs(out) or out
        case Op(op="minus", args=(a,)):
            return negated(as_model_expr(a))
        case Op(op=("cond" | "select"), args=(c, t, o)):
            return Cond(as_model_expr(c), as_model_expr(t), as_model_expr(o))
        case Op(op=("fdiv_q" | "min" | "max") as op, args=args):
            out = as_model_expr(args[-1])
            for a in reversed(args[:-1]):
                out = Call(HELPER_NAMES[op], (as_model_expr(a), out))
            return out
    return Name(c_expr(e))  # comparisons and the like never occur in iterator arguments


def substitute(e: Expr, values: dict[str, Expr]) -> Expr:
    """``e`` with each name in ``values`` replaced by its expression, and no sign left meeting a sign
    (:func:`~polylab.model.expr.without_double_signs`: ``-i`` with ``i = -c0`` is ``c0``)."""
    def sub(x: Expr) -> Expr | None:
        return values.get(x.name) if isinstance(x, Name) else without_double_signs(x)

    return transform(e, sub)


def instance_body(scop: Scop, user: User) -> Assignment:
    """The statement of ``user`` with its iterators replaced by the AST's argument expressions."""
    stmt = scop.statement(user.statement)
    values = {it: as_model_expr(arg) for it, arg in zip(stmt.iterators, user.args)}
    target = substitute(stmt.body.target, values)
    assert isinstance(target, ArrayRef)
    return Assignment(target, stmt.body.op, substitute(stmt.body.value, values))


def statement_c(scop: Scop, user: User, array_ref: ArrayPrinter | None = None) -> str:
    """The statement of ``user`` as C with its iterators renamed to the AST's argument expressions."""
    return assignment_to_c(instance_body(scop, user), array_ref=array_ref)


def for_header(f: For, names: dict[str, str] | None = None, declare: bool = True) -> str:
    it = (names or {}).get(f.iterator, f.iterator)
    step = f"{it}++" if f.inc == 1 else f"{it} += {f.inc}"
    return (f"for ({'int ' if declare else ''}{it} = {c_expr(f.init, names)}; {c_expr(f.cond, names)}; "
            f"{step})")


def canonical(f: For) -> bool:
    """OpenMP's canonical loop form: the condition compares the iterator with a bound."""
    c = f.cond
    return (isinstance(c, Op) and c.op in ("le", "lt") and c.args[0] == Id(f.iterator)
            and f.iterator not in expr_ids(c.args[1]))


class CPrinter:
    """Prints a loop program as C statements (``openmp=True`` adds the parallel-for pragmas)."""

    def __init__(self, scop: Scop, *, openmp: bool = False, indent: str = "  ",
                 array_ref: ArrayPrinter | None = None, params: Sequence[tuple[str, str]] = (),
                 outline_prefix: str = "polylab_par") -> None:
        self.scop = scop
        self.openmp = openmp
        self.indent = indent
        self.array_ref = array_ref
        self.lines: list[str] = []
        #: the kernel's parameters as (declaration, name): with them, parallel loop bodies become functions
        self.params = tuple(params)
        self.scope: list[str] = []
        #: the functions holding the parallel loop bodies (printed before the kernel), named
        #: ``<outline_prefix>0``, ``<outline_prefix>1``, ...
        self.helpers: list[str] = []
        self.outline_prefix = outline_prefix
        #: ``(statement, depth)`` pairs whose rows may stay in registers (set by :meth:`print` from the program)
        self.registers: frozenset[tuple[str, int]] = frozenset()
        #: ``(statement, depth)`` pairs whose accumulated element may stay in a scalar across the loop at
        #: that depth (set by :meth:`print` from the program)
        self.accumulators: frozenset[tuple[str, int]] = frozenset()

    def emit(self, depth: int, text: str) -> None:
        self.lines.append(self.indent * depth + text)

    def print(self, node: Node, depth: int = 1, registers: frozenset[tuple[str, int]] = frozenset(),
              accumulators: frozenset[tuple[str, int]] = frozenset()) -> str:
        self.lines = []
        self.registers = registers
        self.accumulators = accumulators
        self._node(node, depth, False)
        return "\n".join(self.lines)

    def _outline(self, body: Node, in_parallel: bool) -> str:
        """Print ``body`` as ``static void polylab_parN(int iterators.., kernel parameters)`` and return the
        call that replaces it."""
        name = f"{self.outline_prefix}{len(self.helpers)}"
        scope = list(dict.fromkeys(self.scope))
        saved, self.lines = self.lines, []
        self._node(body, 1, in_parallel)
        inner, self.lines = self.lines, saved
        decls = [f"int {v}" for v in scope] + [d for d, _ in self.params]
        self.helpers.append(f"static void {name}({', '.join(decls)})\n{{\n" + "\n".join(inner) + "\n}\n")
        return f"{name}({', '.join(scope + [n for _, n in self.params])});"

    def _body(self, node: Node, depth: int, in_parallel: bool) -> None:
        """A loop or branch body: braces unless it is a single statement instance."""
        if isinstance(node, User):
            self._node(node, depth + 1, in_parallel)
        else:
            self.lines[-1] += " {"
            if isinstance(node, Block):
                for c in node.children:
                    self._node(c, depth + 1, in_parallel)
            else:
                self._node(node, depth + 1, in_parallel)
            self.emit(depth, "}")

    def _node(self, node: Node, depth: int, in_parallel: bool) -> None:
        match node:
            case Block(children=cs):
                for c in cs:
                    self._node(c, depth, in_parallel)
            case User():
                self.emit(depth, statement_c(self.scop, node, array_ref=self.array_ref))
            case For(degenerate=True):
                self.emit(depth, f"{{ /* one iteration */ const int {node.iterator} = {c_expr(node.init)};")
                self.scope.append(node.iterator)
                self._node(node.body, depth + 1, in_parallel)
                self.scope.pop()
                self.emit(depth, "}")
            case For() if self._registers(node, depth) or self._accumulator(node, depth):
                pass
            case For():
                par = node.parallel and not in_parallel
                if par and self.openmp and canonical(node):
                    self.emit(depth, "#pragma omp parallel for")
                elif node.parallel:
                    self.emit(depth, "/* parallel loop */")
                self.emit(depth, for_header(node))
                self.scope.append(node.iterator)
                if par and self.openmp and canonical(node) and self.params:
                    self.emit(depth + 1, self._outline(node.body, in_parallel or par))
                else:
                    self._body(node.body, depth, in_parallel or par)
                self.scope.pop()
            case If(cond=c, then=t, other=o):
                self.emit(depth, f"if ({c_expr(c)})")
                self._body(t, depth, in_parallel)
                if o is not None:
                    if isinstance(t, User):
                        self.emit(depth, "else")
                    else:
                        self.lines[-1] += " else"
                    self._body(o, depth, in_parallel)

    def _registers(self, node: For, depth: int) -> bool:
        """Print loop ``node`` with the elements of its rows in registers when it is a plain loop whose body
        is a strip of at most :data:`~polylab.codegen.ast.UNROLL_STRIP` rows with constant bounds
        ``e .. e + m - 1`` holding one accumulation ``S`` that may keep its elements in registers across
        ``node`` (``(S, node.depth)`` in the program's :attr:`~polylab.codegen.ast.LoopProgram.registers`,
        exact): the ``m`` elements are loaded into ``polylab_acc[m]`` before the loop, updated there, and
        stored after it (gcc keeps the array in registers once it unrolls the strip). Returns whether it
        printed; False leaves ``node`` to the plain printing."""
        rows = node.body
        if (not isinstance(rows, For) or not isinstance(rows.body, User) or rows.inc != 1 or rows.degenerate
                or (rows.body.statement, node.depth) not in self.registers or (node.parallel and self.openmp)
                or node.degenerate):
            return False
        m = _strip_length(rows)
        body = instance_body(self.scop, rows.body)
        if m is None or node.iterator in expr_ids(rows.init) or node.iterator in {
                n.name for n in walk(body.target) if isinstance(n, Name)}:
            return False
        target, it = body.target, rows.iterator
        ctype = self._ctype(target)
        slot = f"polylab_acc[{it} - ({c_expr(rows.init)})]"
        ref = self._replacing(target, slot)
        element = to_c(target, array_ref=self.array_ref)
        self.emit(depth, f"{{ /* the rows' elements in registers */ {ctype} polylab_acc[{m}];")
        self.emit(depth + 1, f"{for_header(rows)} {slot} = {element};")
        self.emit(depth + 1, for_header(node) + " {")
        self.scope.append(node.iterator)
        self.emit(depth + 2, for_header(rows))
        self.emit(depth + 3, assignment_to_c(body, array_ref=ref))
        self.scope.pop()
        self.emit(depth + 1, "}")
        self.emit(depth + 1, f"{for_header(rows)} {element} = {slot};")
        self.emit(depth, "}")
        return True

    def _ctype(self, target: ArrayRef) -> str:
        """The C element type of the array ``target`` subscripts."""
        return next(a.ctype for a in self.scop.arrays if a.name == target.array)

    def _replacing(self, target: ArrayRef, local: str) -> Callable[[ArrayRef, Callable[[Expr], str]], str | None]:
        """An array printer that prints ``local`` for ``target``'s element (the write and its read with the
        same subscripts) and every other reference as the kernel does."""
        def ref(r: ArrayRef, render: Callable[[Expr], str]) -> str | None:
            if (r.array, r.indices) == (target.array, target.indices):
                return local
            return self.array_ref(r, render) if self.array_ref else None
        return ref

    def _accumulator(self, node: For, depth: int) -> bool:
        """Print loop ``node`` with its accumulated element in a scalar when it is a plain loop of constant
        bounds ``e .. e + m - 1`` (``1 <= m <=`` :data:`~polylab.codegen.ast.UNROLL_STRIP`, so it runs at
        least once) whose body is one accumulation ``S`` that may keep its element in a scalar across it
        (``(S, node.depth)`` in the program's :attr:`~polylab.codegen.ast.LoopProgram.accumulators`, exact):
        the element is loaded into ``polylab_sum`` before the loop, updated there, and stored after it.
        Returns whether it printed; False leaves ``node`` to the plain printing."""
        user = node.body
        if (not isinstance(user, User) or node.inc != 1 or node.degenerate or (node.parallel and self.openmp)
                or (user.statement, node.depth) not in self.accumulators):
            return False
        if _strip_length(node) is None:
            return False
        body = instance_body(self.scop, user)
        target = body.target
        if node.iterator in {n.name for n in walk(target) if isinstance(n, Name)}:
            return False
        ctype = self._ctype(target)
        ref = self._replacing(target, "polylab_sum")
        element = to_c(target, array_ref=self.array_ref)
        self.emit(depth, f"{{ /* the accumulated element in a register */ {ctype} polylab_sum = {element};")
        self.emit(depth + 1, for_header(node))
        self.emit(depth + 2, assignment_to_c(body, array_ref=ref))
        self.emit(depth + 1, f"{element} = polylab_sum;")
        self.emit(depth, "}")
        return True


def _strip_length(f: For) -> int | None:
    """``m`` when loop ``f`` has the constant bounds ``e .. e + m - 1``, ``1 <= m <=``
    :data:`~polylab.codegen.ast.UNROLL_STRIP` (it always runs, and gcc unrolls it); None otherwise."""
    return next((m for m in range(1, UNROLL_STRIP + 1)
                 if f.cond == Op("le", (Id(f.iterator), offset(f.init, m - 1)))), None)


def signature_params(signature: str) -> list[tuple[str, str]]:
    """``(declaration, name)`` of each parameter of a declarator such as
    ``void kernel(int N, double (*restrict A)[N])``."""
    inside = signature[signature.index("(") + 1: signature.rindex(")")]
    out, depth, cur = [], 0, ""
    for ch in inside + ",":
        if ch == "," and depth == 0:
            decl = cur.strip()
            if decl and decl != "void":
                ids = [w for w in decl.replace("(", " ").replace(")", " ").replace("*", " ").split()
                       if w.isidentifier() and w not in ("restrict", "const", "int", "long", "float", "double",
                                                          "unsigned", "char", "short", "signed")]
                out.append((decl, ids[0]))
            cur = ""
            continue
        depth += ch in "([" and 1 or 0
        depth -= ch in ")]" and 1 or 0
        cur += ch
    return out


def kernel_c(scop: Scop, program: LoopProgram, signature: str, *, openmp: bool = False) -> str:
    """The kernel function: ``signature`` then the loops (with OpenMP, the functions holding the bodies of
    its parallel loops first)."""
    printer = CPrinter(scop, openmp=openmp, params=signature_params(signature) if openmp else ())
    body = printer.print(program.root, registers=program.registers, accumulators=program.accumulators)
    helpers = "".join(h + "\n" for h in printer.helpers)
    return f"{helpers}{signature}\n{{\n{body}\n}}\n"
