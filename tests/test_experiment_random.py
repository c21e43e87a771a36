"""Random affine loop nests (tests/strategies.py) under the original schedule and random legal schedules:
the generated C and OpenMP code must compute exactly what the original program computes. A nest whose
statements compute nothing at the drawn sizes (guards that never hold, loops that do not run) is not
verified but refused as vacuous (see test_experiment_differential for the interpreter's cross-check)."""

from __future__ import annotations

import islpy as isl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import polylab
from polylab import toolchain as tc
from polylab.errors import IllegalTransformationError, PolylabError
from polylab.experiment import verify
from polylab.experiment.schedules import as_schedule
from polylab.schedule import is_legal, original

from strategies import affine_nests, parameter_values

pytestmark = pytest.mark.skipif(tc.c_compiler() is None or not tc.supports_openmp(),
                                reason="needs a C compiler with OpenMP")


def parse_or_reject(src: str):
    try:
        return polylab.parse(src).scop
    except PolylabError:
        assume(False)  # not a static control part: nothing to generate


@st.composite
def time_transform(draw, n: int) -> str:
    """An isl map on time vectors of length n: interchange, skew, reversal or an added wave dimension."""
    t = [f"t{k}" for k in range(n)]
    out = list(t)
    kind = draw(st.sampled_from(["swap", "skew", "reverse", "wave"]))
    a = draw(st.integers(0, n - 1))
    b = draw(st.integers(0, n - 1))
    if kind == "swap":
        out[a], out[b] = out[b], out[a]
    elif kind == "skew" and a != b:
        out[a] = f"{t[a]} + {draw(st.integers(1, 2))}{t[b]}"
    elif kind == "reverse":
        out[a] = f"-{t[a]}"
    elif kind == "wave":
        out = [f"{t[a]} + {t[b]}"] + out
    return f"{{ [{', '.join(t)}] -> [{', '.join(out)}] }}"


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(src=affine_nests(max_statements=2), params=parameter_values(1, 5))
def test_random_nests_under_the_original_schedule(src, params):
    scop = parse_or_reject(src)
    for target in ("c", "openmp"):
        v = verify(scop, None, target, params=params, threads=2, timeout=20)
        assert v.verified is True or (v.verified is None and v.vacuous), f"{v}\n{src}"


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(src=affine_nests(max_statements=2, negative_steps=False), params=parameter_values(1, 5),
       data=st.data())
def test_random_nests_under_random_schedules_legal_ones_verify_illegal_ones_are_refused(src, params, data):
    scop = parse_or_reject(src)
    source_order = original(scop)
    n = source_order.n_dims
    assume(n > 0)
    transform = isl.Map(data.draw(time_transform(n)))
    candidate = source_order.union_map.apply_range(isl.UnionMap.from_map(transform))
    try:
        sched = as_schedule(scop, candidate)
    except PolylabError:
        assume(False)  # not a function on some domain (never happens for these transforms)
    target = data.draw(st.sampled_from(["c", "openmp"]))
    if not is_legal(sched):
        # the one legality gate: an illegal schedule is never compiled, whatever form it comes in
        with pytest.raises(IllegalTransformationError, match="dependence"):
            verify(scop, candidate, target, params=params, threads=2, timeout=20)
        return
    v = verify(scop, candidate, target, params=params, threads=2, timeout=20)
    assert v.verified is True or (v.verified is None and v.vacuous), f"{v}\nschedule {candidate}\n{src}"
