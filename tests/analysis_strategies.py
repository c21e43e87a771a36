"""Test fixtures for the analysis tests: tiny loop nests built by hand or by hypothesis.

A nest is a tuple of nodes (:class:`Loop`, :class:`If`, :class:`Stmt`) whose bounds, guards and subscripts
are affine expressions written as text that both Python and isl read (``"i + 1"``, ``"2*i - j"``).
From one nest we get
- ``build_scop(nest)``: a :class:`polylab.model.Scop` built directly (domains, accesses, schedule tree), so the
  analysis can be tested without the C front end;
- ``to_c(nest)``: the same nest as C text (for the front end, when it exists);
- ``trace(nest, params)``: an interpreter, independent of isl, that executes the nest in source order and
  records every access (reads of an instance before its write).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from hypothesis import strategies as st

from polylab.errors import SourceLocation
from polylab.model.expr import ArrayRef, Assignment, Binary, Const, Name
from polylab.model.scop import Access, Array, Scop, Statement


@dataclass(frozen=True)
class Ref:
    array: str
    subs: tuple[str, ...]

    def text(self) -> str:
        return self.array + "".join(f"[{s}]" for s in self.subs)


@dataclass(frozen=True)
class Stmt:
    write: Ref
    reads: tuple[Ref, ...] = ()
    const: str | None = None  # the statement writes this constant (reads must be empty)


@dataclass(frozen=True)
class Loop:
    var: str
    lo: str
    hi: str  # exclusive
    body: tuple


@dataclass(frozen=True)
class If:
    cond: str  # the guard is ``cond >= 0``
    body: tuple


# --------------------------------------------------------------------------------------------------------
def _statements(nest, iters=(), conds=()):
    """(stmt, iterators, constraints) in textual order."""
    for node in nest:
        if isinstance(node, Stmt):
            yield node, iters, conds
        elif isinstance(node, Loop):
            yield from _statements(node.body, iters + (node.var,),
                                   conds + (f"{node.var} >= {node.lo}", f"{node.var} < {node.hi}"))
        elif isinstance(node, If):
            yield from _statements(node.body, iters, conds + (f"{node.cond} >= 0",))


def build_scop(nest, params=("N",), context: str = "", name: str = "test") -> Scop:
    """A Scop for ``nest``: statements S0, S1, ... in textual order, the schedule tree of the loops."""
    pp = f"[{', '.join(params)}] -> "
    stmts = []
    names = {}
    arrays: dict[str, int] = {}
    for k, (s, iters, conds) in enumerate(_statements(nest)):
        sname = f"S{k}"
        names[id(s)] = (sname, iters)
        dom = isl.Set(pp + f"{{ {sname}[{', '.join(iters)}] : {' and '.join(conds) or '1 = 1'} }}")
        accesses = []
        refs = []
        for r in s.reads:
            idx = len(accesses)
            rel = isl.Map(pp + f"{{ {sname}[{', '.join(iters)}] -> {r.array}[{', '.join(r.subs)}] }}")
            accesses.append(Access(idx, "read", r.array, rel.intersect_domain(dom),
                                   SourceLocation(k + 1, 1, r.text()), r.text()))
            refs.append(ArrayRef(r.array, tuple(Name(x) for x in r.subs), idx))
            arrays[r.array] = len(r.subs)
        widx = len(accesses)
        w = s.write
        rel = isl.Map(pp + f"{{ {sname}[{', '.join(iters)}] -> {w.array}[{', '.join(w.subs)}] }}")
        accesses.append(Access(widx, "write", w.array, rel.intersect_domain(dom),
                               SourceLocation(k + 1, 1, w.text()), w.text()))
        arrays[w.array] = len(w.subs)
        if s.const is not None:
            value = Const(s.const, "double")
        elif refs:
            value = refs[0]
            for r in refs[1:]:
                value = Binary("+", value, r)
        else:
            value = Const("0.0", "double")
        body = Assignment(ArrayRef(w.array, tuple(Name(x) for x in w.subs), widx), "=", value)
        stmts.append(Statement(sname, f"{w.text()} = ...;", SourceLocation(k + 1, 1, ""), tuple(iters), dom,
                               tuple(accesses), body))
    domain = " ; ".join(str(s.domain).split("->", 1)[1].strip()[1:-1].strip() for s in stmts)
    tree = _tree(nest, pp, names)
    yaml = f'{{ domain: "{pp}{{ {domain} }}"' + (f", child: {tree}" if tree else "") + " }"
    ctx = isl.Set(pp + "{ : " + (context or "1 = 1") + " }")
    sched = isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, yaml)
    arrs = tuple(Array(a, "double", tuple("N" for _ in range(r))) for a, r in sorted(arrays.items()))
    return Scop(name, tuple(stmts), arrs, tuple(params), ctx, sched)


def _tree(nest, pp, names) -> str:
    """The schedule tree (isl YAML) of ``nest``: a band per loop, a sequence for several children."""
    items = [n for n in nest]
    if not items:
        return ""
    if len(items) > 1:
        branches = []
        for node in items:
            sts = [names[id(s)] for s, _, _ in _statements((node,))]
            filt = pp + "{ " + "; ".join(f"{n}[{', '.join(it)}]" for n, it in sts) + " }"
            sub = _tree((node,), pp, names)
            branches.append(f'{{ filter: "{filt}"' + (f", child: {sub}" if sub else "") + " }")
        return "{ sequence: [ " + ", ".join(branches) + " ] }"
    node = items[0]
    if isinstance(node, Stmt):
        return ""
    if isinstance(node, If):
        return _tree(node.body, pp, names)
    sts = [names[id(s)] for s, _, _ in _statements((node,))]
    band = pp + "[{ " + "; ".join(f"{n}[{', '.join(it)}] -> [({node.var})]" for n, it in sts) + " }]"
    sub = _tree(node.body, pp, names)
    return f'{{ schedule: "{band}"' + (f", child: {sub}" if sub else "") + " }"


def to_c(nest, indent: str = "") -> str:
    """The nest as C text (guards as ``if``)."""
    out = []
    for node in nest:
        if isinstance(node, Stmt):
            rhs = node.const if node.const is not None else (
                " + ".join(r.text() for r in node.reads) or "0.0")
            out.append(f"{indent}{node.write.text()} = {rhs};")
        elif isinstance(node, Loop):
            out.append(f"{indent}for ({node.var} = {node.lo}; {node.var} < {node.hi}; {node.var}++) {{")
            out.append(to_c(node.body, indent + "  "))
            out.append(f"{indent}}}")
        else:
            out.append(f"{indent}if ({node.cond} >= 0) {{")
            out.append(to_c(node.body, indent + "  "))
            out.append(f"{indent}}}")
    return "\n".join(out)


# -- the interpreter -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    stmt: str
    instance: tuple[int, ...]
    access: int
    kind: str
    array: str
    element: tuple[int, ...]


def trace(nest, params: dict[str, int]) -> list[Event]:
    """Execute ``nest`` in source order; every access, reads of an instance before its write."""
    names = {}
    for k, (s, iters, _c) in enumerate(_statements(nest)):
        names[id(s)] = f"S{k}"
    out: list[Event] = []

    def ev(expr, env):
        return eval(expr, {"__builtins__": {}}, env)

    def run(nodes, env, iters):
        for node in nodes:
            if isinstance(node, Stmt):
                inst = tuple(env[v] for v in iters)
                name = names[id(node)]
                for a, r in enumerate(node.reads):
                    out.append(Event(name, inst, a, "read", r.array, tuple(ev(x, env) for x in r.subs)))
                w = node.write
                out.append(Event(name, inst, len(node.reads), "write", w.array,
                                 tuple(ev(x, env) for x in w.subs)))
            elif isinstance(node, Loop):
                v = ev(node.lo, env)
                while v < ev(node.hi, {**env, node.var: v}):
                    run(node.body, {**env, node.var: v}, iters + (node.var,))
                    v += 1
            elif ev(node.cond, env) >= 0:
                run(node.body, env, iters)

    run(nest, dict(params), ())
    return out


def oracle_pairs(events: list[Event], kind: str, value_based: bool) -> set[tuple]:
    """Every dependent pair ``(src stmt, src access, src instance, snk stmt, snk access, snk instance)``.

    Memory-based: same element, source earlier in the trace, different instances, the kinds of the
    dependence (flow: write then read; anti: read then write; output: write then write; input: read then
    read). Value-based: moreover no write to the element strictly between the two accesses.
    """
    want = {"flow": ("write", "read"), "anti": ("read", "write"), "output": ("write", "write"),
            "input": ("read", "read")}[kind]
    by_elem: dict[tuple, list[tuple[int, Event]]] = {}
    for pos, e in enumerate(events):
        by_elem.setdefault((e.array, e.element), []).append((pos, e))
    out = set()
    for evs in by_elem.values():
        for x, (_p1, e1) in enumerate(evs):
            if e1.kind != want[0]:
                continue
            for _p2, e2 in evs[x + 1:]:
                if e2.kind == want[1] and (e1.stmt, e1.instance) != (e2.stmt, e2.instance):
                    out.add((e1.stmt, e1.access, e1.instance, e2.stmt, e2.access, e2.instance))
                if value_based and e2.kind == "write":
                    break
    return out


def relation_pairs(graph, params: dict[str, int], kind: str) -> set[tuple]:
    """The same tuples, read off the dependences of ``graph`` with the parameters fixed."""
    out = set()
    for d in graph.dependences:
        if d.kind != kind:
            continue
        rel = d.relation
        for name, v in params.items():
            k = rel.find_dim_by_name(isl.dim_type.param, name)
            if k >= 0:
                rel = rel.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(rel.get_ctx(), v))
        n_in = rel.dim(isl.dim_type.in_)
        pts: list = []
        rel.wrap().foreach_point(pts.append)
        for p in pts:
            vals = [p.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(rel.dim(isl.dim_type.in_)
                                                                                       + rel.dim(isl.dim_type.out))]
            out.add((d.source, d.source_access, tuple(vals[:n_in]), d.sink, d.sink_access, tuple(vals[n_in:])))
    return out


# -- hypothesis: random nests ---------------------------------------------------------------------------------
VARS = ("i", "j", "k")
ARRAYS = {"A": 2, "B": 1, "C": 2}


@st.composite
def affine(draw, vars_, allow_params=True):
    terms = []
    for v in vars_:
        c = draw(st.sampled_from((0, 0, 1, 1, -1, 2)))
        if c:
            terms.append(f"{c}*{v}" if c != 1 else v)
    c0 = draw(st.integers(-2, 2))
    s = " + ".join(terms) if terms else "0"
    return s + (f" + {c0}" if c0 > 0 else f" - {-c0}" if c0 < 0 else "")


@st.composite
def refs(draw, vars_, array=None):
    name = array or draw(st.sampled_from(sorted(ARRAYS)))
    return Ref(name, tuple(draw(affine(vars_)) for _ in range(ARRAYS[name])))


@st.composite
def stmts(draw, vars_):
    reads = tuple(draw(st.lists(refs(vars_), min_size=0, max_size=3)))
    return Stmt(draw(refs(vars_)), reads)


@st.composite
def nodes(draw, vars_, depth):
    if depth == 0:
        choice = draw(st.sampled_from(("stmt", "loop", "loop", "loop", "loop")))
    else:
        choice = draw(st.sampled_from(("stmt", "loop", "loop", "if")) if depth < 3 else st.just("stmt"))
    if choice == "stmt" or (choice == "if" and not vars_):
        return draw(stmts(vars_))
    if choice == "if":
        cond = draw(st.sampled_from([f"{vars_[-1]} - 1", f"N - 2 - {vars_[-1]}"]
                                    + ([f"{vars_[0]} - {vars_[-1]}"] if len(vars_) > 1 else [])))
        return If(cond, (draw(stmts(vars_)),))
    var = VARS[len(vars_)]
    lo = draw(st.sampled_from(["0", "1"] + ([vars_[-1]] if vars_ else [])))
    hi = draw(st.sampled_from(["N", "N - 1"] + ([f"{vars_[-1]} + 2"] if vars_ else [])))
    body = tuple(draw(st.lists(nodes(vars_ + (var,), depth + 1), min_size=1, max_size=2)))
    return Loop(var, lo, hi, body)


@st.composite
def nests(draw):
    """1 to 3 top-level nodes, loops up to 3 deep, 1 to ~6 statements."""
    return tuple(draw(st.lists(nodes((), 0), min_size=1, max_size=3)))


def enclosing_loops(nest) -> dict[str, tuple[int, ...]]:
    """Statement name -> ids of its enclosing Loop nodes, outermost first."""
    out: dict[str, tuple[int, ...]] = {}
    count = [0]

    def go(nodes, loops):
        for node in nodes:
            if isinstance(node, Stmt):
                out[f"S{count[0]}"] = loops
                count[0] += 1
            elif isinstance(node, Loop):
                go(node.body, loops + (id(node),))
            else:
                go(node.body, loops)

    go(nest, ())
    return out


def oracle_parallel(nest, events: list[Event]) -> dict[tuple[str, int], bool]:
    """(statement, level) -> parallel, from the memory-based flow/anti/output pairs of the trace: a loop is
    not parallel when some dependent pair inside it agrees on the loops outside it and differs in it."""
    loops = enclosing_loops(nest)
    bad: set[int] = set()
    for kind in ("flow", "anti", "output"):
        for s, _a, u, t, _b, v in oracle_pairs(events, kind, False):
            for lv, (ls, lt) in enumerate(zip(loops[s], loops[t])):
                if ls != lt:
                    break
                if u[lv] != v[lv]:
                    bad.add(ls)
                    break
    return {(s, lv + 1): ids[lv] not in bad for s, ids in loops.items() for lv in range(len(ids))}
