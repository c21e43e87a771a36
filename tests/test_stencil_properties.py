"""Property tests on random stencil chains: inlining (both ways), unrolling, cleanup and lowering preserve
the results, bit for bit.

A chain is drawn as a sequence of applies, each reading one or two earlier temps (or the loaded field) at
random offsets and combining the values with ``+ - *``, a constant, and sometimes a ``select`` on a
comparison; one or two of the temps are stored. The fields have a halo large enough for any chain drawn.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from polylab.stencil import Builder, StencilError, check, cleanup, inline, interpret, select, unroll

RANK = 3
DOMAIN = (4, 6, 4)
HALO = 12

offsets = st.tuples(*(st.integers(-2, 2) for _ in range(RANK)))


@st.composite
def chains(draw):
    n = draw(st.integers(1, 4))
    plan = []
    for k in range(n):
        reads = draw(st.lists(st.tuples(st.integers(0, k), offsets), min_size=1, max_size=3))
        ops = draw(st.lists(st.sampled_from("+-*"), min_size=len(reads) - 1, max_size=len(reads) - 1))
        const = draw(st.sampled_from([0.5, -1.25, 3.0]))
        use_select = draw(st.booleans())
        plan.append((reads, ops, const, use_select))
    stored = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2, unique=True))
    if n - 1 not in stored:
        stored.append(n - 1)
    return plan, stored


def build(plan, stored):
    b = Builder("chain", rank=RANK)
    lb, ub = (-HALO,) * RANK, tuple(d + HALO for d in DOMAIN)
    src = b.field("src", lb=lb, ub=ub)
    outs = [b.field(f"out{k}", lb=lb, ub=ub) for k in range(len(stored))]
    temps = [b.load(src)]
    for reads, ops, const, use_select in plan:
        operands = sorted({t for t, _ in reads})

        def body(*args, reads=reads, ops=ops, const=const, use_select=use_select, operands=operands):
            vals = [args[operands.index(t)][off] for t, off in reads]
            acc = vals[0]
            for op, v in zip(ops, vals[1:]):
                acc = acc + v if op == "+" else acc - v if op == "-" else acc * v
            acc = acc * const
            return select(acc > vals[0], acc, vals[0]) if use_select else acc

        temps.append(b.apply([temps[t] for t in operands], body))
    for out, k in zip(outs, stored):
        b.store(temps[k + 1], out, lb=(0,) * RANK, ub=DOMAIN)
    return b.build()


def fields(program, seed=1):
    rng = np.random.default_rng(seed)
    shape = tuple(d + 2 * HALO for d in DOMAIN)
    return {name: rng.uniform(-1, 1, shape) for name, _ in program.arguments}


def same(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k].view(np.uint64), b[k].view(np.uint64)) for k in a)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_inlining_preserves_results(chain):
    p = build(*chain)
    f = fields(p)
    want = interpret(p, f)
    assert same(want, interpret(inline(p), f))
    assert same(want, interpret(inline(p, reroute=False), f))
    assert same(want, interpret(cleanup(inline(p)), f))


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(chains(), st.sampled_from([(2, 0), (2, 1), (3, 1), (2, 2)]))
def test_unrolling_preserves_results(chain, unrolling):
    p = build(*chain)
    f = fields(p)
    factor, dim = unrolling
    assert same(interpret(p, f), interpret(cleanup(unroll(p, factor, dim)), f))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains(), st.booleans())
def test_lowering_preserves_results(chain, inlined):
    p = build(*chain)
    q = cleanup(inline(p)) if inlined else p
    try:
        result = check(q)
    except StencilError as err:       # only a divisibility refusal is expected, and none is drawn here
        raise AssertionError(err.render()) from None
    assert result.verified is True, str(result)


SOURCES = [__import__("polylab.corpus", fromlist=["example_path"]).example_path(f"stencil/{n}.mlir").read_text()
           for n in ("laplace3d", "blur2d", "diffusion")]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2), st.integers(0, 10**6), st.integers(0, 40),
       st.sampled_from(["", "%", "(", ")", "[", "]", "{", "}", ",", ":", "=", "->", "<", ">", "0", "-7", "x",
                        "f64", "index", "!stencil.temp<?xf64>", "stencil.apply", "scf.if", "\n", '"ogt"']))
def test_mangled_text_is_refused_cleanly_or_parsed(which, start, length, insert):
    """Any edit of a program gives a program or a PolylabError with a location or a message, never another
    exception; what parses also infers its shapes or is refused the same way."""
    from polylab.errors import PolylabError
    from polylab.stencil import infer_shapes, parse

    src = SOURCES[which]
    k = start % len(src)
    text = src[:k] + insert + src[k + length:]
    try:
        program = parse(text)
        infer_shapes(program)
    except PolylabError as err:
        assert err.message
        err.render()
