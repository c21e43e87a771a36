"""The textbook dependence tests for a pair of references, each beside the exact answer of isl.

Two references ``A[F1 x + c1]`` (statement ``S``, iterators ``x``) and ``A[F2 y + c2]`` (statement ``T``,
iterators ``y``, written with primes) touch the same element when

    F1 x + c1 = F2 y + c2,   i.e.   [F1 | -F2] (x, y) = c2 - c1          (one equation per array dimension)

and a dependence needs such ``x`` in ``D_S`` and ``y`` in ``D_T`` (and two different instances). The
textbook decides this in steps, each weaker than the exact answer:

1. **GCD test** (one equation at a time): ``a1 z1 + ... + an zn = b`` has an integer solution iff
   ``gcd(a1, ..., an)`` divides ``b``. If some equation fails, the references are *independent*; otherwise
   *maybe* (bounds are ignored).
2. **The whole system over the integers**: the Hermite normal form ``[F1 | -F2] U = H`` (``U`` unimodular)
   gives every integer solution ``z = z0 + U_free t`` (``t`` free integers), or proves there is none even
   when every equation alone passes the GCD test (coupled subscripts). For uniform references
   (``F1 = F2 = F``) the distance ``d = y - x`` solves ``F d = c1 - c2``: a particular solution plus the
   **null space** of ``F`` (the directions ``F v = 0`` along which the same element is reused).
3. **Banerjee test** (one equation at a time, with the loop bounds as a box, per direction vector): the
   left-hand side ``sum a_k x_k - sum b_k y_k`` takes, over the real points of the box that satisfy the
   direction (``x_k < y_k``, ``=``, ``>`` for the common loops), values between a minimum and a maximum found
   at the vertices; if ``b`` lies outside, there is no solution *in that direction*. Bounds of triangular
   loops are replaced by their box, and real solutions need not be integers: the test is conservative.

The **exact** answer is isl's: is ``{ S[x] -> T[y] : x in D_S, y in D_T, F1 x + c1 = F2 y + c2 }`` (minus
the pair of one instance with itself) empty, per direction and overall, with a witness pair when not.
Banerjee needs numbers for the bounds: parameters are fixed to the values given (or fixed in the SCoP's
context, else 10), and the exact answer uses the same values.
"""

from __future__ import annotations

import html
import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import islpy as isl
import sympy

from polylab.analysis.loops import LoopStructure
from polylab.errors import AnalysisError
from polylab.model.budget import budgeted
from polylab.model.islutil import point_coordinates
from polylab.model.scop import Access, Scop
from polylab.render import TextDisplay, text_table

DEFAULT_PARAMETER = 10


# -- integer linear algebra (sympy matrices of integers) -----------------------------------------------------
def hermite_column(A: sympy.Matrix) -> tuple[sympy.Matrix, sympy.Matrix, list[int]]:
    """``(H, U, pivots)`` with ``A U = H``, ``U`` unimodular and ``H`` in column echelon form:
    row ``pivots[k]`` holds the ``k``-th pivot at column ``k``, everything right of it zero."""
    H = sympy.Matrix(A)
    m, n = H.shape
    U = sympy.eye(n)
    col = 0
    pivots: list[int] = []
    for r in range(m):
        if col >= n:
            break
        # Euclid on row r among columns col..n-1
        while True:
            nz = [c for c in range(col, n) if H[r, c] != 0]
            if len(nz) <= 1:
                break
            c_min = min(nz, key=lambda c: abs(H[r, c]))
            for c in nz:
                if c != c_min:
                    q = H[r, c] // H[r, c_min]
                    H[:, c] = H[:, c] - q * H[:, c_min]
                    U[:, c] = U[:, c] - q * U[:, c_min]
        nz = [c for c in range(col, n) if H[r, c] != 0]
        if not nz:
            continue
        c = nz[0]
        if c != col:
            H.col_swap(c, col)
            U.col_swap(c, col)
        if H[r, col] < 0:
            H[:, col] = -H[:, col]
            U[:, col] = -U[:, col]
        pivots.append(r)
        col += 1
    return H, U, pivots


def integer_solutions(A: sympy.Matrix, b: sympy.Matrix) -> tuple[sympy.Matrix, sympy.Matrix] | None:
    """Every integer solution of ``A z = b`` as ``(z0, T)``: ``z = z0 + T t`` for integer ``t``, or None when
    there is none. ``b`` must be a column of integers."""
    H, U, pivots = hermite_column(A)
    m, n = A.shape
    w = [sympy.Integer(0)] * n
    k = 0
    for r in range(m):
        acc = b[r] - sum(H[r, q] * w[q] for q in range(k))
        if k < len(pivots) and pivots[k] == r:
            h = H[r, k]
            if acc % h != 0:
                return None
            w[k] = acc // h
            k += 1
        elif acc != 0:
            return None
    z0 = U * sympy.Matrix(w)
    T = U[:, len(pivots):]
    return z0, T


# -- results --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GcdEquation:
    equation: sympy.Eq
    coefficients: tuple[int, ...]
    rhs: int
    gcd: int

    @property
    def divides(self) -> bool:
        return (self.rhs == 0) if self.gcd == 0 else self.rhs % self.gcd == 0


@dataclass(frozen=True)
class DirectionVerdict:
    """For one direction vector over the common loops: Banerjee's verdict (``ranges`` holds, per equation,
    the interval of the left-hand side and the right-hand side) beside isl's, with a witness pair."""

    direction: tuple[str, ...]
    banerjee_independent: bool
    ranges: tuple[tuple[Fraction | None, Fraction | None, int], ...]
    exact_dependent: bool
    witness: tuple[tuple[int, ...], tuple[int, ...]] | None


@dataclass(frozen=True, eq=False, repr=False)
class TextbookReport(TextDisplay):
    """The textbook view of two references; see the module documentation."""

    scop: Scop
    first: tuple[str, int]
    second: tuple[str, int]
    text1: str
    text2: str
    x: tuple[sympy.Symbol, ...]
    y: tuple[sympy.Symbol, ...]
    F1: sympy.Matrix
    c1: sympy.Matrix
    F2: sympy.Matrix
    c2: sympy.Matrix
    params: dict[str, int]
    gcd_equations: tuple[GcdEquation, ...]
    solution: tuple[sympy.Matrix, sympy.Matrix] | None
    nullspace: tuple[sympy.Matrix, ...] | None
    distance_particular: sympy.Matrix | None
    loops: tuple[str, ...]
    directions: tuple[DirectionVerdict, ...]
    exact_dependent: bool
    witness: tuple[tuple[int, ...], tuple[int, ...]] | None
    sympy_diophantine: tuple = field(default=())

    # -- verdicts ------------------------------------------------------------------------------------------
    @property
    def system(self) -> tuple[sympy.Matrix, sympy.Matrix]:
        """``(A, b)`` of ``A (x, y) = b``: ``A = [F1 | -F2]``, ``b = c2 - c1`` (parameters substituted)."""
        subs = {sympy.Symbol(p, integer=True): v for p, v in self.params.items()}
        return self.F1.row_join(-self.F2), (self.c2 - self.c1).subs(subs)

    @property
    def equations(self) -> tuple[sympy.Eq, ...]:
        lhs = self.F1 * sympy.Matrix(self.x) + self.c1 if self.x else self.c1
        rhs = self.F2 * sympy.Matrix(self.y) + self.c2 if self.y else self.c2
        return tuple(sympy.Eq(a, b, evaluate=False) for a, b in zip(lhs, rhs))

    @property
    def gcd_independent(self) -> bool:
        return any(not e.divides for e in self.gcd_equations)

    @property
    def integer_independent(self) -> bool:
        return self.solution is None

    @property
    def banerjee_independent(self) -> bool:
        return all(d.banerjee_independent for d in self.directions)

    @property
    def verdicts(self) -> dict[str, str]:
        def w(indep: bool) -> str:
            return "independent" if indep else "maybe dependent"

        return {"gcd": w(self.gcd_independent), "integer system": w(self.integer_independent),
                "banerjee": w(self.banerjee_independent),
                "exact (isl)": "dependent" if self.exact_dependent else "independent"}

    @property
    def conservative_only(self) -> list[str]:
        """The tests that answered *maybe* although isl proves independence."""
        if self.exact_dependent:
            return []
        return [k for k, v in self.verdicts.items() if v == "maybe dependent"]

    # -- words --------------------------------------------------------------------------------------------
    def explanation(self) -> list[str]:
        out = []
        fixed = ", ".join(f"{k} = {v}" for k, v in self.params.items())
        out.append(f"The references {self.text1} ({self.first[0]}) and {self.text2} ({self.second[0]}) touch "
                   "the same element when every subscript agrees: "
                   + "; ".join(_eq_text(e) for e in self.equations) + ".")
        for e in self.gcd_equations:
            coeffs = ", ".join(str(c) for c in e.coefficients if c)
            if e.gcd == 0:
                out.append(f"GCD test on {_eq_text(e.equation)}: no iterator appears, so the subscripts are equal "
                           f"{'always' if e.rhs == 0 else 'never'}.")
            elif e.divides:
                out.append(f"GCD test on {_eq_text(e.equation)}: gcd({coeffs}) = {e.gcd} divides {e.rhs}, so "
                           "integer solutions exist if we ignore the loop bounds: maybe dependent.")
            else:
                out.append(f"GCD test on {_eq_text(e.equation)}: gcd({coeffs}) = {e.gcd} does not divide "
                           f"{e.rhs}, so no integers make these subscripts equal: independent.")
        if self.solution is None:
            out.append("Solving all the equations together over the integers (Hermite normal form) finds no "
                       "solution: the subscripts are coupled, and what each equation allows alone the others "
                       "forbid.")
        else:
            z0, T = self.solution
            out.append("All integer solutions of the system (ignoring bounds): "
                       + _solution_text(self.x + self.y, z0, T) + ".")
        if self.nullspace is not None:
            if self.nullspace:
                vs = ", ".join(str(tuple(v)) for v in self.nullspace)
                out.append(f"Both references have the same matrix F, so they are uniform: the distance d = "
                           f"{_tuple(self.y)} - {_tuple(self.x)} solves F d = c1 - c2, and the null space of F "
                           f"(the directions v with F v = 0, along which the same element is touched again) is "
                           f"spanned by {vs}.")
            else:
                out.append("Both references have the same matrix F with a trivial null space: at most one "
                           "distance d solves F d = c1 - c2"
                           + (f", namely d = {tuple(self.distance_particular)}."
                              if self.distance_particular is not None else "."))
        indep = [d for d in self.directions if d.banerjee_independent]
        maybe = [d for d in self.directions if not d.banerjee_independent]
        if self.loops:
            out.append(f"Banerjee test with the loop bounds{' (' + fixed + ')' if fixed else ''} for each direction "
                       f"of the common loops ({', '.join(self.loops)}): ruled out "
                       + (", ".join(_dir(d.direction) for d in indep) or "none")
                       + "; maybe " + (", ".join(_dir(d.direction) for d in maybe) or "none") + ".")
        else:
            out.append(f"Banerjee test with the loop bounds{' (' + fixed + ')' if fixed else ''} (no common loops): "
                       + ("the right-hand side lies outside the range of the left: independent."
                          if self.banerjee_independent else "the right-hand side is within range: maybe."))
        if self.exact_dependent and self.witness is not None:
            out.append(f"Exact (isl): dependent; for example {self.first[0]}{list(self.witness[0])} and "
                       f"{self.second[0]}{list(self.witness[1])} touch the same element.")
        else:
            out.append("Exact (isl): no two instances touch the same element: independent.")
            if self.conservative_only:
                out.append("So " + " and ".join(self.conservative_only) + " only said 'maybe': the textbook "
                           "tests are conservative (they ignore integrality, coupling or the exact bounds).")
        return out

    def to_json(self) -> dict:
        return {"first": list(self.first), "second": list(self.second), "verdicts": self.verdicts,
                "params": self.params, "equations": [str(e) for e in self.equations],
                "directions": [{"direction": list(d.direction), "banerjee": "independent" if
                                d.banerjee_independent else "maybe", "exact": d.exact_dependent}
                               for d in self.directions],
                "explanation": self.explanation()}

    def __str__(self) -> str:
        lines = [f"textbook tests: {self.first[0]} {self.text1}  vs  {self.second[0]} {self.text2}"]
        lines.append(text_table(("test", "verdict"), self.verdicts.items(), width=100))
        if self.directions and self.loops:
            lines.append(text_table((f"direction ({', '.join(self.loops)})", "Banerjee", "exact"),
                                    [(_dir(d.direction), "independent" if d.banerjee_independent else "maybe",
                                      "dependent" if d.exact_dependent else "independent")
                                     for d in self.directions]))
        lines += ["  " + s for s in self.explanation()]
        return "\n".join(lines)

    def _repr_latex_(self) -> str:
        A, b = self.system
        z = sympy.Matrix(self.x + self.y)
        parts = [r"\begin{aligned}"]
        lhs = (sympy.latex(self.F1) + _latex_vec(self.x) if self.x else "") + " + " + sympy.latex(self.c1)
        rhs = (sympy.latex(self.F2) + _latex_vec(self.y) if self.y else "") + " + " + sympy.latex(self.c2)
        parts.append(lhs + " &= " + rhs + r"\\")
        if A.cols:
            parts.append(sympy.latex(A) + sympy.latex(z) + " &= " + sympy.latex(b) + r"\\")
        if self.solution is not None and A.cols:
            z0, T = self.solution
            ts = [sympy.Symbol(f"t_{k + 1}") for k in range(T.cols)]
            sol = z0 + (T * sympy.Matrix(ts) if ts else sympy.zeros(len(z0), 1))
            parts.append(sympy.latex(z) + " &= " + sympy.latex(sol) + r",\ t \in \mathbb{Z}")
        else:
            parts.append(r"&\text{no integer solution}")
        parts.append(r"\end{aligned}")
        return "$$" + "".join(parts) + "$$"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
                       for k, v in self.verdicts.items())
        drows = "".join(
            f"<tr><td>{html.escape(_dir(d.direction))}</td>"
            f"<td>{'independent' if d.banerjee_independent else 'maybe'}</td>"
            f"<td>{'dependent' if d.exact_dependent else 'independent'}</td></tr>" for d in self.directions)
        expl = "".join(f"<li>{html.escape(s)}</li>" for s in self.explanation())
        return (f"<div class='polylab-textbook'><b>{html.escape(self.text1)}</b> vs "
                f"<b>{html.escape(self.text2)}</b>{self._repr_latex_()}"
                f"<table><tr><th>test</th><th>verdict</th></tr>{rows}</table>"
                f"<table><tr><th>direction ({html.escape(', '.join(self.loops))})</th><th>Banerjee</th>"
                f"<th>exact</th></tr>{drows}</table><ul>{expl}</ul></div>")


def _tuple(xs) -> str:
    return "(" + ", ".join(map(str, xs)) + ")"


def _dir(d: tuple[str, ...]) -> str:
    return "(" + ", ".join(d) + ")"


def _eq_text(e) -> str:
    if isinstance(e, sympy.Eq):
        return f"{e.lhs} = {e.rhs}"
    return str(e)


def _latex_vec(xs) -> str:
    return sympy.latex(sympy.Matrix(xs))


def _solution_text(names, z0, T) -> str:
    ts = [sympy.Symbol(f"t{k + 1}") for k in range(T.cols)]
    sol = z0 + (T * sympy.Matrix(ts) if ts else sympy.zeros(len(z0), 1))
    body = ", ".join(f"{n} = {v}" for n, v in zip(names, sol))
    return body + (f" for any integers {', '.join(map(str, ts))}" if ts else "")


# -- the analysis ------------------------------------------------------------------------------------------------
def _fix(obj, params: dict[str, int]):
    for name, v in params.items():
        k = obj.find_dim_by_name(isl.dim_type.param, name)
        if k >= 0:
            obj = obj.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(obj.get_ctx(), int(v)))
    return obj


def _fixed_params(scop: Scop) -> dict[str, int]:
    out = {}
    for p in scop.parameters:
        k = scop.context.find_dim_by_name(isl.dim_type.param, p)
        if k < 0:
            continue
        v = scop.context.plain_get_val_if_fixed(isl.dim_type.param, k)
        if v.is_int():
            out[p] = v.to_python()
    return out


def _resolve(scop: Scop, ref) -> tuple[str, Access]:
    if isinstance(ref, tuple) and len(ref) == 2:
        s, a = ref
        stmt = scop.statement(s)
        if isinstance(a, int):
            if not 0 <= a < len(stmt.accesses):
                raise AnalysisError(f"statement {s} has no access {a}",
                                    hint=f"its accesses are 0..{len(stmt.accesses) - 1}")
            return s, stmt.accesses[a]
        for acc in stmt.accesses:
            if acc.text == a:
                return s, acc
        raise AnalysisError(f"statement {s} has no reference {a!r}",
                            hint="its references: " + ", ".join(x.text for x in stmt.accesses))
    raise AnalysisError(f"cannot understand the reference {ref!r}",
                        hint="give (statement name, access index or reference text), e.g. ('S0', 1)")


def _bounds(domain: isl.Set, k: int) -> tuple[int, int] | None:
    if domain.is_empty():
        return None
    lo, hi = domain.dim_min(k), domain.dim_max(k)
    vals = []
    for pa in (lo, hi):
        got: list[int] = []
        pa.foreach_piece(lambda _s, aff: got.append(aff.get_constant_val().to_python()))
        if not pa.is_cst() or len(set(got)) != 1:
            return None
        vals.append(int(got[0]))
    return vals[0], vals[1]


def _term_range(a: int, b: int, bx, by, direction: str) -> tuple[Fraction, Fraction] | None:
    """Min and max of ``a x - b y`` over real ``x`` in ``bx``, ``y`` in ``by`` with the direction
    (``<``: x <= y - 1, ``=``: x = y, ``>``: x >= y + 1, ``*``: none); None when that region is empty."""
    (l1, u1), (l2, u2) = bx, by
    lines_x = [l1, u1]
    lines_y = [l2, u2]
    cands = []
    if direction == "*":
        cands = [(x, y) for x in lines_x for y in lines_y]
    elif direction == "=":
        lo, hi = max(l1, l2), min(u1, u2)
        if lo > hi:
            return None
        cands = [(lo, lo), (hi, hi)]
    else:
        off = -1 if direction == "<" else 1  # x = y + off on the boundary line
        pts = [(x, y) for x in lines_x for y in lines_y]
        pts += [(x, x - off) for x in lines_x] + [(y + off, y) for y in lines_y]
        for x, y in pts:
            if l1 <= x <= u1 and l2 <= y <= u2 and ((x <= y - 1) if direction == "<" else (x >= y + 1)):
                cands.append((x, y))
        if not cands:
            return None
    vals = [Fraction(a * x - b * y) for x, y in cands]
    return min(vals), max(vals)


@budgeted("the textbook dependence tests")
def textbook_test(scop: Scop, first, second, *, params: dict[str, int] | None = None) -> TextbookReport:
    """The textbook tests for two references, given as ``(statement, access index or text)``.

    ``params``: values for the parameters (Banerjee needs numeric bounds); parameters neither given nor
    fixed in the context take the value 10.
    """
    s1, a1 = _resolve(scop, first)
    s2, a2 = _resolve(scop, second)
    if a1.array != a2.array:
        raise AnalysisError(f"{a1.text} and {a2.text} access different arrays",
                            hint="dependence tests compare two references to the same array")
    if a1.matrix is None or a2.matrix is None:
        raise AnalysisError(f"the subscripts of {a1.text if a1.matrix is None else a2.text} are not affine "
                            "without division", hint="the textbook tests need subscripts F x + c")
    values = {**_fixed_params(scop), **(params or {})}
    for p in scop.parameters:
        values.setdefault(p, DEFAULT_PARAMETER)
    st1, st2 = scop.statement(s1), scop.statement(s2)
    x = tuple(sympy.Symbol(n, integer=True) for n in st1.iterators)
    y = tuple(sympy.Symbol(n + "'", integer=True) for n in st2.iterators)
    F1, c1, F2, c2 = a1.matrix, a1.offset, a2.matrix, a2.offset
    subs = {sympy.Symbol(p, integer=True): v for p, v in values.items()}
    A = F1.row_join(-F2)
    b = (c2 - c1).subs(subs)
    b = sympy.Matrix([sympy.Integer(v) for v in b])
    # GCD test
    gcds = []
    lhs = F1 * sympy.Matrix(x) + c1 if x else c1
    rhs = F2 * sympy.Matrix(y) + c2 if y else c2
    for r in range(A.rows):
        coeffs = tuple(int(v) for v in A.row(r))
        g = math.gcd(*coeffs) if coeffs else 0
        gcds.append(GcdEquation(sympy.Eq(lhs[r], rhs[r], evaluate=False), coeffs, int(b[r]), g))
    solution = integer_solutions(A, b) if A.cols else (None if any(v != 0 for v in b) else
                                                       (sympy.zeros(0, 1), sympy.zeros(0, 0)))
    nullspace = particular = None
    if F1 == F2 and F1.cols:
        nullspace = tuple(_integral(v) for v in F1.nullspace())
        sol = integer_solutions(F1, (c1 - c2).subs(subs))
        particular = sol[0] if sol is not None else None
    # common loops -> (index in x, index in y)
    st = LoopStructure.of(scop)
    pairs = []
    for k in st.common_loops(s1, s2):
        name = st.dims[s1][k].name
        if name in st1.iterators and name in st2.iterators:
            pairs.append((name, st1.iterators.index(name), st2.iterators.index(name)))
    loops = tuple(p[0] for p in pairs)
    d1 = _fix(st1.domain.intersect_params(scop.context), values)
    d2 = _fix(st2.domain.intersect_params(scop.context), values)
    box1 = [_bounds(d1, k) for k in range(len(x))]
    box2 = [_bounds(d2, k) for k in range(len(y))]
    conflict = _fix(a1.relation.apply_range(a2.relation.reverse()).intersect_params(scop.context), values)
    if s1 == s2:
        conflict = conflict.subtract(isl.Map.identity(conflict.get_space()))
    directions = []
    for pattern in itertools.product("<=>", repeat=len(pairs)):
        ranges: list = []
        independent = d1.is_empty() or d2.is_empty()
        if not independent:
            ranges, independent = _banerjee(A, b, len(x), pairs, pattern, box1, box2)
        exact = conflict.intersect(_direction_map(conflict, pairs, pattern))
        witness = _witness(exact)
        directions.append(DirectionVerdict(pattern, independent, tuple(ranges), witness is not None, witness))
    witness = _witness(conflict)
    dio: tuple = ()
    if A.rows == 1 and A.cols and any(A):
        try:
            from sympy.solvers.diophantine.diophantine import diophantine

            syms = [s for s, c in zip(x + y, A.row(0)) if c != 0]
            expr = sum(c * s for c, s in zip(A.row(0), x + y)) - b[0]
            dio = (tuple(syms), tuple(diophantine(expr)))
        except Exception:  # sympy cannot always solve: only a display aid
            dio = ()
    return TextbookReport(scop, (s1, a1.index), (s2, a2.index), a1.text, a2.text, x, y, F1, c1, F2, c2,
                          values, tuple(gcds), solution, nullspace, particular, loops, tuple(directions),
                          witness is not None, witness, dio)


def _banerjee(A: sympy.Matrix, b: sympy.Matrix, nx: int, pairs: list, pattern: tuple[str, ...],
              box1: list, box2: list) -> tuple[list, bool]:
    """Banerjee's test under one direction vector: per equation ``A (x, y) = b`` the range ``[lo, hi]`` of
    its left side over the loop bounds (``(None, None, b)`` when a bound is not a number); independent when
    ``b`` is outside some range or a direction is impossible in the bounds."""
    ranges: list = []
    for r in range(A.rows):
        lo = hi = Fraction(0)
        used_x, used_y = set(), set()
        unbounded = any(box1[ix] is None for ix in range(nx) if A[r, ix] != 0) or any(
            box2[iy] is None for iy in range(len(box2)) if A[r, nx + iy] != 0)
        if unbounded:  # a bound is not a number: Banerjee cannot use this equation
            ranges.append((None, None, int(b[r])))
            continue
        for (_name, ix, iy), sym in zip(pairs, pattern):
            used_x.add(ix)
            used_y.add(iy)
            if box1[ix] is None or box2[iy] is None:
                continue
            t = _term_range(int(A[r, ix]), int(-A[r, nx + iy]), box1[ix], box2[iy], sym)
            if t is None:   # the direction is impossible within the bounds
                ranges.append((None, None, int(b[r])))
                return ranges, True
            lo, hi = lo + t[0], hi + t[1]
        for ix in range(nx):
            if ix not in used_x and box1[ix] is not None:
                t = _term_range(int(A[r, ix]), 0, box1[ix], (0, 0), "*")
                lo, hi = lo + t[0], hi + t[1]
        for iy in range(len(box2)):
            if iy not in used_y and box2[iy] is not None:
                t = _term_range(0, int(-A[r, nx + iy]), (0, 0), box2[iy], "*")
                lo, hi = lo + t[0], hi + t[1]
        ranges.append((lo, hi, int(b[r])))
    independent = any(lo is not None and not lo <= rb <= hi for lo, hi, rb in ranges)
    return ranges, independent


def _integral(v: sympy.Matrix) -> sympy.Matrix:
    den = 1
    for e in v:
        den = sympy.ilcm(den, sympy.fraction(e)[1])
    w = v * den
    g = 0
    for e in w:
        g = sympy.igcd(g, int(e))
    return w / g if g else w


def _direction_map(conflict: isl.Map, pairs, pattern) -> isl.Map:
    sp = conflict.get_space()
    n_in, n_out = sp.dim(isl.dim_type.in_), sp.dim(isl.dim_type.out)
    xs = [f"x{k}" for k in range(n_in)]
    ys = [f"y{k}" for k in range(n_out)]
    cons = [f"x{ix} {'<' if sym == '<' else '=' if sym == '=' else '>'} y{iy}"
            for (_n, ix, iy), sym in zip(pairs, pattern)]
    s_in = conflict.get_tuple_name(isl.dim_type.in_)
    s_out = conflict.get_tuple_name(isl.dim_type.out)
    return isl.Map(f"{{ {s_in}[{', '.join(xs)}] -> {s_out}[{', '.join(ys)}] : {' and '.join(cons) or '1 = 1'} }}")


def _witness(m: isl.Map) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """A pair of instances of ``m`` (any one isl gives), or None when ``m`` is empty."""
    if m.is_empty():
        return None
    p = m.wrap().sample_point()
    n_in = m.dim(isl.dim_type.in_)
    return point_coordinates(p, 0, n_in), point_coordinates(p, n_in, m.dim(isl.dim_type.out))


@budgeted("the textbook dependence tests")
def textbook_all(scop: Scop, *, params: dict[str, int] | None = None) -> tuple[TextbookReport, ...]:
    """The textbook report for every pair of references to the same array with at least one write."""
    out = []
    refs = list(scop.accesses())
    for k, (s, a) in enumerate(refs):
        for t, b in refs[k:]:
            if a.array == b.array and "write" in (a.kind, b.kind) and a.is_affine and b.is_affine:
                out.append(textbook_test(scop, (s.name, a.index), (t.name, b.index), params=params))
    return tuple(out)
