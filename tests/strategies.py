"""Hypothesis strategies shared by the test suites: random affine loop nests as C fragments.

``affine_nests()`` draws a C fragment (the corpus format: declarations, then loops) with 1..3 statements in
loops up to 3 deep: triangular and empty/zero-trip bounds, ``?:`` minimum bounds, steps of 1 and 2, downward
loops, affine ``if`` guards (``&&``, ``||``, ``!``, ``%``), affine subscripts including ``%`` and ``/`` by
constants, compound assignments, reads under a condition (a ``?:`` arm, the right operand of ``&&`` / ``||``)
whose subscript would be -1 where the condition keeps them from running. Every iterator is >= 0 and every
subscript that runs is >= 0 and smaller than the declared extent ``6 * N + 6 * M + 24``, so the fragment is
also a valid C program body (no out-of-bounds access) for any ``N, M >= 0``. The parameters are always ``N`` and ``M`` (``PARAMS``).

    from strategies import affine_nests, PARAMS
    @given(affine_nests())
    def test_something(src): ...
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

from hypothesis import strategies as st

PARAMS = ("N", "M")
ARRAYS = {"A": 2, "B": 2, "C": 1}
EXTENT = "6 * N + 6 * M + 24"
ITERATORS = ("i", "j", "k")


def declarations() -> str:
    return "\n".join(f"double {a}" + f"[{EXTENT}]" * r + ";" for a, r in ARRAYS.items())


@st.composite
def affine_expr(draw, iters: tuple[str, ...], *, div_mod: bool = True, max_coef: int = 2) -> str:
    """A non-negative affine expression of ``iters`` (coefficients 0..max_coef, constant 0..2), possibly
    wrapped in ``% c`` or ``/ c``."""
    terms = []
    for v in iters:
        c = draw(st.integers(0, max_coef))
        if c == 1:
            terms.append(v)
        elif c > 1:
            terms.append(f"{c} * {v}")
    c0 = draw(st.integers(0, 2))
    if c0 or not terms:
        terms.append(str(c0))
    e = " + ".join(terms)
    if div_mod and draw(st.integers(0, 5)) == 0:
        op = draw(st.sampled_from(["%", "/"]))
        e = f"({e}) {op} {draw(st.integers(2, 3))}"
    return e


@st.composite
def guard(draw, iters: tuple[str, ...]) -> str:
    """An affine condition on the enclosing iterators and the parameters."""

    def atom() -> str:
        kind = draw(st.integers(0, 3))
        v = draw(st.sampled_from(iters))
        if kind == 0:
            return f"{v} % {draw(st.integers(2, 3))} == {draw(st.integers(0, 1))}"
        if kind == 1:
            w = draw(st.sampled_from(iters))
            return f"{v} + {w} < {draw(st.sampled_from(PARAMS))}"
        if kind == 2:
            w = draw(st.sampled_from(iters))
            return f"{v} >= {w}"
        return f"2 * {v} != {draw(st.sampled_from(PARAMS))} - 1"

    shape = draw(st.integers(0, 3))
    if shape == 0:
        return atom()
    if shape == 1:
        return f"{atom()} && {atom()}"
    if shape == 2:
        return f"{atom()} || {atom()}"
    return f"!({atom()})"


@st.composite
def statement(draw, iters: tuple[str, ...], div_mod: bool, conditional: bool = True) -> str:
    def ref(name: str) -> str:
        return name + "".join(f"[{draw(affine_expr(iters, div_mod=div_mod))}]" for _ in range(ARRAYS[name]))

    target = draw(st.sampled_from(sorted(ARRAYS)))
    reads = [ref(draw(st.sampled_from(sorted(ARRAYS)))) for _ in range(draw(st.integers(1, 2)))]
    op = draw(st.sampled_from(["=", "=", "+="]))
    rhs = " + ".join(reads + [draw(st.sampled_from(["1.0", "0.5", "2.0"]))])
    if len(reads) == 2 and draw(st.booleans()):
        rhs = f"{reads[0]} * 0.5 + {reads[1]}"
    if conditional and iters and draw(st.integers(0, 3)) == 0:
        rhs += " + " + draw(conditional_read(iters, ref))
    return f"{ref(target)} {op} {rhs};"


@st.composite
def conditional_read(draw, iters: tuple[str, ...], ref) -> str:
    """A read that runs only under an affine condition: a ``?:`` arm or the right operand of ``&&`` / ``||``
    whose subscript leaves the array (index -1) exactly where the condition does not let it run."""
    v = draw(st.sampled_from(iters))
    name = draw(st.sampled_from(sorted(ARRAYS)))
    below = name + f"[{v} - 1]" + "".join(f"[{draw(affine_expr(iters))}]" for _ in range(ARRAYS[name] - 1))
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return f"({v} >= 1 ? {below} : {ref(name)})"
    if shape == 1:
        return f"({v} < 1 ? 0.5 : {below} * 2.0)"
    if shape == 2:
        return f"({v} >= 1 && {below} > 0.5 ? 1.0 : 0.0)"
    return f"({v} == 0 || {below} < 0.5 ? 2.0 : 0.25)"


@st.composite
def loop_header(draw, var: str, outer: tuple[str, ...], steps: bool, negative_steps: bool) -> str:
    o = draw(st.sampled_from(outer)) if outer else None
    lbs = ["0", "1"] + ([o, f"{o} + 1"] if o else [])
    ubs = ["N", "M"] + ([f"{o} + 1", f"N - {o}", f"({o} + 3 < N ? {o} + 3 : N)"] if o else [])
    lb, ub = draw(st.sampled_from(lbs)), draw(st.sampled_from(ubs))
    if negative_steps and draw(st.integers(0, 4)) == 0:
        return f"for ({var} = {ub} - 1; {var} >= {lb}; {var}--)"
    step = 2 if steps and draw(st.integers(0, 4)) == 0 else 1
    inc = f"{var}++" if step == 1 else f"{var} += {step}"
    if draw(st.booleans()):
        return f"for ({var} = {lb}; {var} < {ub}; {inc})"
    return f"for ({var} = {lb}; {var} <= {ub} - 1; {inc})"


@st.composite
def affine_nests(draw, *, max_depth: int = 3, max_statements: int = 3, guards: bool = True,
                 div_mod: bool = True, steps: bool = True, negative_steps: bool = True) -> str:
    """A random affine loop nest as a C fragment (see the module docstring)."""
    n_statements = draw(st.integers(1, max_statements))
    budget = [n_statements]

    def block(depth: int, iters: tuple[str, ...], indent: str, must: bool) -> list[str]:
        lines: list[str] = []
        n_items = draw(st.integers(1, 2))
        for k in range(n_items):
            if budget[0] == 0:
                break
            choices = ["stmt"]
            if depth < max_depth:
                choices += ["loop", "loop"]
            if guards and iters:
                choices.append("if")
            kind = draw(st.sampled_from(choices)) if depth > 0 else "loop"
            if kind == "stmt":
                budget[0] -= 1
                lines.append(indent + draw(statement(iters, div_mod)))
            elif kind == "loop":
                var = ITERATORS[depth] if depth < len(ITERATORS) else f"i{depth}"
                lines.append(indent + draw(loop_header(var, iters, steps, negative_steps)) + " {")
                lines.extend(block(depth + 1, iters + (var,), indent + "  ", True))
                lines.append(indent + "}")
            else:
                lines.append(indent + f"if ({draw(guard(iters))}) {{")
                budget[0] -= 1
                lines.append(indent + "  " + draw(statement(iters, div_mod)))
                if budget[0] and draw(st.booleans()):
                    budget[0] -= 1
                    lines.append(indent + "} else {")
                    lines.append(indent + "  " + draw(statement(iters, div_mod)))
                lines.append(indent + "}")
        if must and not any(";" in ln for ln in lines):
            budget[0] = max(budget[0] - 1, 0)
            lines.append(indent + draw(statement(iters, div_mod)))
        return lines

    body: list[str] = []
    while budget[0] > 0:
        body.extend(block(0, (), "", True))
    return declarations() + "\n" + "\n".join(body) + "\n"


@st.composite
def parameter_values(draw, low: int = 0, high: int = 5) -> dict[str, int]:
    """Small values for ``N`` and ``M`` (0 included: zero-trip loops)."""
    return {p: draw(st.integers(low, high)) for p in PARAMS}


@contextlib.contextmanager
def small_budget(operations: int = 5_000_000, seconds: float = 20.0) -> Iterator[None]:
    """polylab's analysis limits lowered for the block (``POLYLAB_MAX_OPERATIONS``/``POLYLAB_MAX_SECONDS``,
    read by each outermost bounded computation): a random nest that needs more is refused with
    :class:`polylab.errors.TooComplexError`, which a property test turns into ``assume(False)``, so that
    one hard draw costs a bounded number of seconds and not minutes. The limits are tested on their own in
    tests/test_robustness_budget.py."""
    saved = {k: os.environ.get(k) for k in ("POLYLAB_MAX_OPERATIONS", "POLYLAB_MAX_SECONDS")}
    os.environ["POLYLAB_MAX_OPERATIONS"] = str(operations)
    os.environ["POLYLAB_MAX_SECONDS"] = str(seconds)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def bounded_draw(operations: int = 5_000_000, seconds: float = 20.0) -> Iterator[None]:
    """The block runs as one bounded computation under :func:`small_budget`'s limits (polylab's own bounded
    blocks inside it nest in it, so the limits hold for calls of the API that open none, such as
    ``wavefront``'s Farkas step in its child process); a draw refused as too complex is rejected
    (``hypothesis.reject``) instead of holding the run for minutes."""
    from hypothesis import reject

    from polylab.errors import TooComplexError
    from polylab.model.budget import bounded

    try:
        with small_budget(operations, seconds), bounded("a random draw's computations"):
            yield
    except TooComplexError:
        reject()
