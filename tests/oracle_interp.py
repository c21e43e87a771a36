"""An independent tiny interpreter for loop-nest fragments: the oracle the polyhedral model is checked against.

It does not use polylab's front end: it strips comments itself, parses with pycparser and walks the AST,
executing the fragment at concrete parameter values. It records

* ``instances``: the executed statement instances in execution order, as ``(line, iteration_vector)``
  where the vector holds the values of the enclosing loop counters, outermost first;
* ``accesses``: the set of ``(line, iteration_vector, kind, array, index)`` with ``kind`` "read" /
  "write" and ``index`` a tuple (empty for a scalar that the fragment assigns, i.e. a 0-d array).

Semantics match the model's conventions: a compound assignment reads its target; every array reference of
a right-hand side that runs is recorded. A ``?:`` arm (or right operand of ``&&``/``||``) that does not run
is not, when its condition is affine (integer constants, loop counters and parameters, ``+ -``, products and
divisions by constants, comparisons, ``&& || !``): the model restricts such accesses to where they run
(issue 28). When the condition reads data (an array element, a scalar the fragment assigns or one
without a known value) or is not affine, the branch that does not run is recorded too ("may" accesses, as a
static model must list them). Assignments to loop counters (``for`` headers,
the counted ``while`` idiom ``i = lb; while (...) { ...; i = i + s; }``) are control, not accesses.

Usage::

    trace = run_fragment(source_text, {"N": 4, "M": 3})
    trace.accesses, trace.instances

``initial`` (optional) gives the arrays' initial values (``{name: numpy array}``, indexed by the element's
index tuple); ``trace.memory`` holds the final value of every element the fragment assigned
(``{name: {index: value}}``), so the interpreter's results can be compared with a compiled program's.

Also usable for whole programs with a ``main`` (``entry="main"``) and SysY runtime calls (``getint`` returns
``params["__input__"]`` values in order; output calls are recorded in ``trace.output``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pycparser import c_ast
from pycparser.c_parser import CParser

PURE = {"sqrt": math.sqrt, "exp": math.exp, "fabs": abs, "abs": abs, "fmin": min, "fmax": max, "min": min,
        "max": max, "MIN": min, "MAX": max, "pow": math.pow, "sin": math.sin, "cos": math.cos,
        "log": lambda x: math.log(x) if x > 0 else 0.0, "floor": math.floor, "ceil": math.ceil,
        "tanh": math.tanh}


class InterpError(Exception):
    pass


@dataclass
class Trace:
    instances: list = field(default_factory=list)
    accesses: set = field(default_factory=set)
    output: list = field(default_factory=list)
    memory: dict = field(default_factory=dict)


def strip_comments(text: str) -> str:
    """Blank comments and preprocessor lines (except #pragma), keeping line structure."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            i += 1
            line_start = True
            continue
        if line_start and c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j] if text[i:j].replace(" ", "").startswith("#pragma") else "")
            i = j
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def c_div(a, b):
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q
    return a / b


def c_mod(a, b):
    return a - c_div(a, b) * b


class _Interp:
    def __init__(self, params: dict, max_steps: int, initial=None) -> None:
        self.initial = dict(initial or {})
        self.params = dict(params)
        self.inputs = list(params.get("__input__", []))
        self.env: dict = {}
        self.types: dict = {}
        self.arrays: dict = {}
        self.trace = Trace()
        self.loop_stack: list[str] = []
        self.counters: set[str] = set()
        self.assigned: set[str] = set()
        self.steps = 0
        self.max_steps = max_steps
        self.record = True

    # -- pre-scan ---------------------------------------------------------------------------------------
    def prescan(self, node: c_ast.Node) -> None:
        if isinstance(node, c_ast.For) and isinstance(node.init, c_ast.Assignment) and \
                isinstance(node.init.lvalue, c_ast.ID):
            self.counters.add(node.init.lvalue.name)
        if isinstance(node, c_ast.For) and isinstance(node.init, c_ast.DeclList):
            self.counters.add(node.init.decls[0].name)
        if isinstance(node, c_ast.While):
            c = self.while_counter(node)
            if c:
                self.counters.add(c)
        if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID):
            self.assigned.add(node.lvalue.name)
        if isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "++", "p--", "--") and \
                isinstance(node.expr, c_ast.ID):
            self.assigned.add(node.expr.name)
        if isinstance(node, c_ast.Decl) and node.init is not None and not isinstance(node.type, c_ast.FuncDecl):
            self.assigned.add(node.name)
        for _, ch in node.children():
            self.prescan(ch)

    @staticmethod
    def while_counter(node: c_ast.While) -> str | None:
        body = node.stmt.block_items if isinstance(node.stmt, c_ast.Compound) else [node.stmt]
        if not body:
            return None
        last = body[-1]
        if isinstance(last, c_ast.Assignment) and isinstance(last.lvalue, c_ast.ID):
            return last.lvalue.name
        if isinstance(last, c_ast.UnaryOp) and isinstance(last.expr, c_ast.ID):
            return last.expr.name
        return None

    def scalar_tracked(self, name: str) -> bool:
        return name in self.assigned and name not in self.counters and name not in self.arrays \
            and name not in self.untracked

    untracked: frozenset = frozenset()

    # -- statements -------------------------------------------------------------------------------------
    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise InterpError("step limit exceeded")

    def iteration(self) -> tuple:
        return tuple(self.env[v] for v in self.loop_stack)

    def block(self, items) -> None:
        for it in items or []:
            self.stmt(it)

    def stmt(self, node: c_ast.Node) -> None:
        self.tick()
        match node:
            case c_ast.Compound(block_items=items):
                self.block(items)
            case c_ast.Decl():
                self.decl(node)
            case c_ast.DeclList(decls=ds):
                for d in ds:
                    self.decl(d)
            case c_ast.For():
                self.stmt(node.init) if isinstance(node.init, c_ast.DeclList) else self.control(node.init)
                var = node.init.lvalue.name if isinstance(node.init, c_ast.Assignment) else node.init.decls[0].name
                self.loop_stack.append(var)
                while self.truth(self.value(node.cond, record=False)):
                    self.tick()
                    self.stmt(node.stmt)
                    self.control(node.next)
                self.loop_stack.pop()
            case c_ast.While():
                var = self.while_counter(node)
                body = node.stmt.block_items if isinstance(node.stmt, c_ast.Compound) else [node.stmt]
                self.loop_stack.append(var)
                while self.truth(self.value(node.cond, record=False)):
                    self.tick()
                    self.block(body[:-1])
                    self.control(body[-1])
                self.loop_stack.pop()
            case c_ast.If(cond=c, iftrue=t, iffalse=f):
                if self.truth(self.value(c, record=False)):
                    self.stmt(t)
                elif f is not None:
                    self.stmt(f)
            case c_ast.Assignment():
                if isinstance(node.lvalue, c_ast.ID) and node.lvalue.name in self.counters:
                    self.control(node)
                else:
                    self.assign(node.lvalue, node.op, node.rvalue, node.coord.line)
            case c_ast.UnaryOp(op=op, expr=target):
                if isinstance(target, c_ast.ID) and target.name in self.counters:
                    self.control(node)
                else:
                    self.assign(target, "+=" if "++" in op else "-=", c_ast.Constant("int", "1"),
                                node.coord.line)
            case c_ast.FuncCall():
                self.current = (node.coord.line, self.iteration())
                self.call(node, record=True)
            case c_ast.EmptyStatement() | c_ast.Pragma():
                pass
            case c_ast.Return():
                raise _Return()
            case _:
                raise InterpError(f"unsupported statement {type(node).__name__}")

    def decl(self, d: c_ast.Decl) -> None:
        dims = []
        t = d.type
        while isinstance(t, c_ast.ArrayDecl):
            dims.append(t.dim)
            t = t.type
        words = t.type.names if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) else []
        self.types[d.name] = words
        if dims:
            self.arrays[d.name] = {}
            return
        if d.init is not None:
            if d.name in self.counters or not self.record_scalars:
                self.env[d.name] = self.value(d.init, record=False)
            else:
                self.assign(c_ast.ID(d.name, d.coord), "=", d.init, d.coord.line)
            if "int" in words and isinstance(self.env.get(d.name), float):
                self.env[d.name] = int(self.env[d.name])

    record_scalars = True

    def control(self, node: c_ast.Node) -> None:
        """Loop-counter updates (not accesses)."""
        if node is None:
            return
        match node:
            case c_ast.Assignment(op=op, lvalue=c_ast.ID(name=n), rvalue=r):
                v = self.value(r, record=False)
                self.env[n] = self.binop(op[:-1], self.env[n], v) if op != "=" else v
            case c_ast.UnaryOp(op=op, expr=c_ast.ID(name=n)):
                self.env[n] += 1 if "++" in op else -1
            case _:
                raise InterpError("unsupported loop control")

    def assign(self, target: c_ast.Node, op: str, rvalue: c_ast.Node, line: int) -> None:
        it = (line, self.iteration())
        self.trace.instances.append(it)
        self.current = it
        name, idx = self.ref(target)
        old = None
        if op != "=":
            old = self.load(name, idx, record=True)
        v = self.value(rvalue, record=True)
        if op != "=":
            v = self.binop(op[:-1], old, v)
        self.store(name, idx, v)

    # -- storage ----------------------------------------------------------------------------------------
    def ref(self, node: c_ast.Node) -> tuple[str, tuple]:
        subs = []
        while isinstance(node, c_ast.ArrayRef):
            subs.append(node.subscript)
            node = node.name
        if not isinstance(node, c_ast.ID):
            raise InterpError("unsupported reference")
        idx = tuple(int(self.value(s, record=False)) for s in reversed(subs))
        return node.name, idx

    def load(self, name: str, idx: tuple, record: bool):
        if record:
            self.trace.accesses.add(self.current + ("read", name, idx))
        if idx == () and name not in self.arrays:
            return self.env.get(name, 1.0)
        arr = self.arrays.setdefault(name, {})
        if idx not in arr and name in self.initial:
            return self.initial[name][idx].item()
        return arr.get(idx, 1.0 + 0.001 * (hash(idx) % 997))

    def store(self, name: str, idx: tuple, v) -> None:
        self.trace.accesses.add(self.current + ("write", name, idx))
        if idx == () and name not in self.arrays:
            self.env[name] = v
        else:
            self.arrays.setdefault(name, {})[idx] = v

    # -- expressions ------------------------------------------------------------------------------------
    @staticmethod
    def truth(v) -> bool:
        return v != 0

    def binop(self, op: str, a, b):
        match op:
            case "+":
                return a + b
            case "-":
                return a - b
            case "*":
                return a * b
            case "/":
                return c_div(a, b) if b != 0 else 0
            case "%":
                return c_mod(a, b) if b != 0 else 0
            case "<":
                return int(a < b)
            case "<=":
                return int(a <= b)
            case ">":
                return int(a > b)
            case ">=":
                return int(a >= b)
            case "==":
                return int(a == b)
            case "!=":
                return int(a != b)
        raise InterpError(f"operator {op}")

    def affine(self, node: c_ast.Node) -> bool:
        """Whether ``node`` is an affine expression or condition of loop counters and parameters."""
        def constant(n: c_ast.Node) -> bool:
            return isinstance(n, c_ast.Constant) and n.type == "int" or \
                isinstance(n, c_ast.UnaryOp) and n.op in "-+" and constant(n.expr)
        match node:
            case c_ast.Constant(type=t):
                return t == "int"
            case c_ast.ID(name=n):
                return not self.scalar_tracked(n) and (n in self.params or n in self.env)
            case c_ast.UnaryOp(op=("-" | "+" | "!"), expr=e):
                return self.affine(e)
            case c_ast.BinaryOp(op="*", left=a, right=b):
                return (constant(a) or constant(b)) and self.affine(a) and self.affine(b)
            case c_ast.BinaryOp(op=("/" | "%"), left=a, right=b):
                return constant(b) and self.affine(a)
            case c_ast.BinaryOp(op=("+" | "-" | "<" | "<=" | ">" | ">=" | "==" | "!=" | "&&" | "||"), left=a,
                                right=b):
                return self.affine(a) and self.affine(b)
            case c_ast.TernaryOp(cond=c, iftrue=t, iffalse=f):
                return self.affine(c) and self.affine(t) and self.affine(f)
            case c_ast.FuncCall(name=c_ast.ID(name=("min" | "max" | "MIN" | "MAX")), args=args) if args:
                return len(args.exprs) == 2 and all(self.affine(a) for a in args.exprs)
        return False

    def touch(self, node: c_ast.Node) -> None:
        """Record the accesses of an expression that is not evaluated (may-accesses)."""
        if isinstance(node, c_ast.ArrayRef):
            name, idx = self.ref(node)
            self.trace.accesses.add(self.current + ("read", name, idx))
            return
        if isinstance(node, c_ast.ID) and self.scalar_tracked(node.name):
            self.trace.accesses.add(self.current + ("read", node.name, ()))
            return
        for _, ch in node.children():
            self.touch(ch)

    def value(self, node: c_ast.Node, record: bool):
        match node:
            case c_ast.Constant(type=t, value=v):
                if t in ("float", "double"):
                    return float(v.rstrip("fFlL"))
                if t == "char":
                    return ord(v.strip("'")[0])
                return int(v.rstrip("uUlL"), 0)
            case c_ast.ID(name=n):
                if record and self.scalar_tracked(n):
                    return self.load(n, (), record=True)
                if n in self.env:
                    return self.env[n]
                if n in self.params:
                    return self.params[n]
                return 1.5  # a read-only scalar without a value (alpha, beta)
            case c_ast.ArrayRef():
                name, idx = self.ref(node)
                return self.load(name, idx, record)
            case c_ast.BinaryOp(op="&&", left=a, right=b):
                x = self.value(a, record)
                if not self.truth(x):
                    if record and not self.affine(a):
                        self.touch(b)
                    return 0
                return int(self.truth(self.value(b, record)))
            case c_ast.BinaryOp(op="||", left=a, right=b):
                x = self.value(a, record)
                if self.truth(x):
                    if record and not self.affine(a):
                        self.touch(b)
                    return 1
                return int(self.truth(self.value(b, record)))
            case c_ast.BinaryOp(op=op, left=a, right=b):
                return self.binop(op, self.value(a, record), self.value(b, record))
            case c_ast.UnaryOp(op="-", expr=e):
                return -self.value(e, record)
            case c_ast.UnaryOp(op="+", expr=e):
                return self.value(e, record)
            case c_ast.UnaryOp(op="!", expr=e):
                return int(not self.truth(self.value(e, record)))
            case c_ast.TernaryOp(cond=c, iftrue=t, iffalse=f):
                if self.truth(self.value(c, record)):
                    if record and not self.affine(c):
                        self.touch(f)
                    return self.value(t, record)
                if record and not self.affine(c):
                    self.touch(t)
                return self.value(f, record)
            case c_ast.Cast(to_type=tt, expr=e):
                v = self.value(e, record)
                names = tt.type.type.names if isinstance(tt.type, c_ast.TypeDecl) else []
                return int(v) if any(w in ("int", "long") for w in names) else float(v)
            case c_ast.FuncCall():
                return self.call(node, record)
        raise InterpError(f"unsupported expression {type(node).__name__}")

    def call(self, node: c_ast.FuncCall, record: bool):
        name = node.name.name
        args = [self.value(a, record) for a in (node.args.exprs if node.args else [])]
        if name in PURE:
            try:
                return PURE[name](*args)
            except (ValueError, OverflowError):
                return 0.0
        if name in ("getint", "getfloat", "getch"):
            return self.inputs.pop(0) if self.inputs else 0
        if name in ("starttime", "stoptime"):
            return 0
        if name.startswith("put"):
            self.trace.output.append((name, args))
            return 0
        raise InterpError(f"unknown function {name}")


class _Return(Exception):
    pass


def run_fragment(text: str, params: dict, *, max_steps: int = 2_000_000, untracked=(), initial=None) -> Trace:
    """Execute a C fragment (declarations and statements at top level) at the given parameter values.

    ``untracked``: scalar names whose reads and writes are not recorded (context set before the region);
    ``initial``: the arrays' initial values (see the module's docstring)."""
    src = "void __oracle__(void) {\n#line 1\n" + strip_comments(text) + "\n}\n"
    ast = CParser().parse(src, "<oracle>")
    body = ast.ext[0].body
    it = _Interp(params, max_steps, initial)
    it.trace.memory = it.arrays
    it.untracked = frozenset(untracked)
    it.prescan(body)
    try:
        it.block(body.block_items)
    except _Return:
        pass
    return it.trace


def run_program(text: str, params: dict | None = None, *, entry: str = "main",
                max_steps: int = 5_000_000, untracked=()) -> Trace:
    """Execute a whole program (global declarations and a ``main``); ``const int`` globals are evaluated."""
    ast = CParser().parse(strip_comments(text), "<oracle>")
    it = _Interp(params or {}, max_steps)
    it.untracked = frozenset(untracked)
    it.prescan(ast)
    for ext in ast.ext:
        if isinstance(ext, c_ast.Decl) and not isinstance(ext.type, c_ast.FuncDecl):
            it.record_scalars = False
            it.decl(ext)
            it.record_scalars = True
            if ext.init is not None:
                it.params[ext.name] = it.env.pop(ext.name)
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef) and ext.decl.name == entry:
            try:
                it.block(ext.body.block_items)
            except _Return:
                pass
    return it.trace


# -- the model's prediction, in the same shape (uses polylab's model values, not its front end) -----------
def _points(s) -> list[tuple[int, ...]]:
    import islpy as isl

    out: list = []
    n = s.dim(isl.dim_type.set)

    def take(p) -> None:
        out.append(tuple(int(p.get_coordinate_val(isl.dim_type.set, k).to_python()) for k in range(n)))

    s.foreach_point(take)
    return out


def _fix(scop, params: dict):
    return scop.with_parameters({k: v for k, v in params.items() if k in scop.parameters}).context


def model_accesses(scop, params: dict) -> set:
    """``{(line, iteration, kind, array, index)}`` predicted by the model at the given parameter values."""
    ctx = _fix(scop, params)
    out = set()
    for st in scop.statements:
        n = len(st.iterators)
        for a in st.accesses:
            for p in _points(a.relation.intersect_params(ctx).wrap()):
                out.add((st.line, p[:n], a.kind, a.array, p[n:]))
    return out


def model_instances(scop, params: dict) -> list:
    """Statement instances ``(line, iteration)`` in the order of the model's original schedule."""
    import islpy as isl

    ctx = _fix(scop, params)
    lines = {st.name: st.line for st in scop.statements}
    timed = []
    umap = scop.schedule_map.intersect_params(ctx)
    maps: list = []
    umap.foreach_map(maps.append)
    for m in maps:
        name = m.get_tuple_name(isl.dim_type.in_)
        n = m.dim(isl.dim_type.in_)
        for p in _points(m.wrap()):
            timed.append((p[n:], lines[name], p[:n]))
    timed.sort()
    times = [t for t, _, _ in timed]
    assert len(set(times)) == len(times), "two statement instances share a schedule time"
    return [(line, it) for _, line, it in timed]
