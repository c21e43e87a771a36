"""Build small SCoPs by hand: isl text for domains and schedules, C-like text for statement bodies.

Meant for tests and exercises that need a model without going through the front end::

    s0 = statement("S0", "[n] -> { S0[i] : 0 <= i < n }", "x[i]", "1.0")
    s1 = statement("S1", "[n] -> { S1[i] : 1 <= i < n }", "x[i]", "x[i - 1] * 0.5")
    scop = make_scop("demo", [s0, s1], arrays=[("x", "double", ("n",))],
                     schedule="[n] -> { S0[i] -> [0, i]; S1[i] -> [1, i] }")

Bodies are parsed by :func:`polylab.reference.cvalue.parse_expr` (Python's expression grammar (``x[i][j]`` or ``x[i, j]``, ``+ - * / %``, calls,
unary minus; float literals are ``double`` unless written as ``f32(1.5)``, which gives ``1.5f``).
"""

from __future__ import annotations

from typing import Sequence

import islpy as isl

from polylab.errors import ModelError, SourceLocation
from polylab.model.expr import (ArrayRef, Assignment, Binary, Const, Expr, Name, Unary, assignment_to_c, to_c,
                                transform, walk)
from polylab.model.build import make_scop
from polylab.model.scop import Access, Scop, Statement
from polylab.reference.cvalue import parse_expr


def isl_expr(e: Expr) -> str:
    """A quasi-affine subscript as isl text (``%`` as ``mod``, ``/`` as ``floor``)."""
    def p(x: Expr) -> str:
        match x:
            case Binary(op="%", left=a, right=b):
                return f"(({p(a)}) mod ({p(b)}))"
            case Binary(op="/", left=a, right=b):
                return f"floor(({p(a)})/({p(b)}))"
            case Binary(op=op, left=a, right=b):
                return f"({p(a)} {op} {p(b)})"
            case Unary(op="-", operand=o):
                return f"(-{p(o)})"
            case Const(text=t):
                return t
            case Name(name=n):
                return n
        raise ModelError(f"not a quasi-affine subscript: {to_c(x)}")

    return p(e)


def statement(name: str, domain: str, target: str, value: str, *, op: str = "=", line: int = 0,
              params: Sequence[str] | None = None) -> Statement:
    """A statement ``target op value`` over the isl set ``domain`` (named ``name``).

    Accesses are numbered with the write first, then the reads from left to right.
    """
    dom = isl.Set(domain)
    if dom.get_tuple_name() != name:
        raise ModelError(f"the domain of {name} must be named {name}: {domain}")
    iters = tuple(dom.get_dim_name(isl.dim_type.set, k) for k in range(dom.dim(isl.dim_type.set)))
    tgt = parse_expr(target)
    if not isinstance(tgt, ArrayRef):
        raise ModelError(f"the target {target!r} is not an array element")
    val = parse_expr(value)
    refs: list[tuple[str, ArrayRef]] = [("write", tgt)]
    if op != "=":
        refs.append(("read", tgt))
    refs += [("read", r) for r in walk(val) if isinstance(r, ArrayRef)]
    text = f"{to_c(tgt)} {op} {to_c(val)};"
    loc = SourceLocation(line, 1, text, text)
    accesses = []
    space_params = dom.get_space()
    pnames = [space_params.get_dim_name(isl.dim_type.param, k)
              for k in range(space_params.dim(isl.dim_type.param))]
    for k, (kind, r) in enumerate(refs):
        rel = isl.Map(f"[{', '.join(pnames)}] -> {{ {name}[{', '.join(iters)}] -> "
                      f"{r.array}[{', '.join(isl_expr(i) for i in r.indices)}] }}")
        rel = rel.intersect_domain(dom)
        accesses.append(Access(k, kind, r.array, rel, loc, to_c(r)))
    # number the references in the tree: the target is access 0, reads follow in textual order
    counter = iter(range(2 if op != "=" else 1, len(refs)))

    def renumber(x: Expr):
        if isinstance(x, ArrayRef) and x.access == -1:
            return ArrayRef(x.array, x.indices, next(counter))
        return None

    new_val = transform(val, renumber)
    body = Assignment(ArrayRef(tgt.array, tgt.indices, 0), op, new_val)
    return Statement(name, assignment_to_c(body), loc, iters, dom, tuple(accesses), body)


def sl3_scop(init: str = "f32(1.0)") -> Scop:
    """The model of ``examples/sl3.sy`` built by hand (the init nest S0 and the sweep S1, float data,
    the printed element ``x[n/2][n/2][n/2]`` live-out); ``init`` is the value the init nest stores."""
    s0 = statement("S0", "[n] -> { S0[i, j, k] : 0 <= i < n and 0 <= j < n and 0 <= k < n }",
                   "x[i][j][k]", init, line=18)
    s1 = statement(
        "S1", "[n] -> { S1[i, j, k] : 1 <= i < n - 1 and 1 <= j < n - 1 and 1 <= k < n - 1 }",
        "x[i][j][k]",
        "(x[i - 1][j][k] + x[i + 1][j][k] + x[i][j - 1][k] + x[i][j + 1][k] + x[i][j][k - 1]"
        " + x[i][j][k + 1] + x[i - 1][j - 1][k - 1]) / f", line=30)
    return make_scop("main", [s0, s1], arrays=[("x", "float", ("MAXN", "MAXN", "MAXN"))],
                     schedule="[n] -> { S0[i, j, k] -> [0, i, j, k]; S1[i, j, k] -> [1, i, j, k] }",
                     context="[n] -> { : 0 <= n <= 400 }",
                     live_out="[n] -> { x[a, b, c] : a = floor(n/2) and b = floor(n/2) and "
                              "c = floor(n/2) and n >= 1 }",
                     scalars=[("f", "float", "7.01")], language="sysy")


def jacobi1d_time_scop(dtype: str = "double") -> Scop:
    """A time-iterated 1D 3-point stencil with one array per time step, ``A[t + 1][i] = f(A[t][...])``:
    the initial plane is copied from an input array ``In``, the boundaries are carried along, the last
    plane ``A[T]`` is live-out. Contraction of ``A`` along ``t`` needs exactly two planes."""
    s0 = statement("S0", "[T, N] -> { S0[i] : 0 <= i < N }", "A[0][i]", "In[i]", line=1)
    s1 = statement("S1", "[T, N] -> { S1[t, i] : 0 <= t < T and 1 <= i < N - 1 }", "A[t + 1][i]",
                   "0.33333 * (A[t][i - 1] + A[t][i] + A[t][i + 1])", line=2)
    s2 = statement("S2", "[T, N] -> { S2[t] : 0 <= t < T and N >= 1 }", "A[t + 1][0]", "A[t][0]", line=3)
    s3 = statement("S3", "[T, N] -> { S3[t] : 0 <= t < T and N >= 2 }", "A[t + 1][N - 1]", "A[t][N - 1]",
                   line=4)
    return make_scop("jacobi1d_t", [s0, s1, s2, s3],
                     arrays=[("A", dtype, ("T + 1", "N")), ("In", dtype, ("N",))],
                     schedule="[T, N] -> { S0[i] -> [0, i, 0, 0]; S2[t] -> [1, t, 0, 0]; "
                              "S1[t, i] -> [1, t, 1, i]; S3[t] -> [1, t, 2, 0] }",
                     context="[T, N] -> { : T >= 0 and N >= 0 }",
                     live_out="[T, N] -> { A[T, i] : 0 <= i < N }")


def producer_consumer_scop() -> Scop:
    """``tmp[i] = 2 * In[i]`` for all i, then ``Out[i] = tmp[i] + tmp[i - 1]``: under the source order
    ``tmp`` cannot be contracted; after interleaving (``S0[i] -> [i, 0]``, ``S1[i] -> [i, 1]``) two
    elements suffice."""
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "tmp[i]", "2.0 * In[i]", line=1)
    s1 = statement("S1", "[N] -> { S1[i] : 1 <= i < N }", "Out[i]", "tmp[i] + tmp[i - 1]", line=2)
    return make_scop("prodcons", [s0, s1],
                     arrays=[("tmp", "double", ("N",)), ("In", "double", ("N",)), ("Out", "double", ("N",))],
                     schedule="[N] -> { S0[i] -> [0, i]; S1[i] -> [1, i] }",
                     context="[N] -> { : N >= 0 }", live_out="[N] -> { Out[i] : 1 <= i < N }")
