"""The one differential run (polylab.toolchain.differential, issue 30 item 2) and its vacuity rules (issue 28,
item 4): the verdict on outputs in hand (``judge``) and on two harness programs (``differential_run``)."""

from __future__ import annotations

import numpy as np
import pytest

from polylab.toolchain import (ALL_ZERO_WARNING, HARNESS_SUPPORT_C, Census, Outputs, c_compiler, census, compile,
                               differential_run, judge, same_values, vacuity)

needs_cc = pytest.mark.skipif(c_compiler() is None, reason="no C compiler on this machine")


def outputs(**arrays) -> Outputs:
    return Outputs({k: np.asarray(v) for k, v in arrays.items()})


def test_equal_outputs_with_computed_values_are_verified():
    run = judge(outputs(a=[1.5, 2.5]), outputs(a=[1.5, 2.5]), initial=lambda name, flat: np.zeros(flat.size) + 7)
    assert run.verified is True and run.census == Census(("a",), 2) and run.warnings == ()
    assert run.first_difference is None and "verified" in str(run)


def test_the_first_difference_is_named_by_its_index_in_its_array():
    # a gathered output: elements at flat indices 5 and 7 of a 3 x 4 array
    gathered = np.array([5, 7], dtype=np.int64)
    ref = Outputs({"a": np.array([1.0, 2.0])}, {"a": gathered})
    cand = Outputs({"a": np.array([1.0, 2.5])}, {"a": gathered})
    run = judge(ref, cand, extents={"a": (3, 4)})
    assert run.verified is False and (run.difference.array, run.difference.index) == ("a", (1, 3))
    assert (run.difference.expected, run.difference.actual) == (2.0, 2.5)
    assert str(run.difference) == "a[1][3]: expected 2.0, got 2.5"
    assert judge(ref, cand).difference.index == (1,)  # without extents: the position in the output


def test_missing_arrays_and_other_gathered_elements_are_differences():
    run = judge(outputs(a=[1.0], b=[2.0]), outputs(a=[1.0]))
    assert run.verified is False and run.difference is None and "b is missing" in run.first_difference
    ref = Outputs({"a": np.array([1.0])}, {"a": np.array([0])})
    other = Outputs({"a": np.array([1.0])}, {"a": np.array([1])})
    assert judge(ref, other).verified is False


@pytest.mark.parametrize("values, words", [
    ([np.inf, -np.inf], "all 2 compared elements are infinite"),
    ([np.nan, np.nan], "all 2 compared elements are NaN"),
    ([np.nan, np.inf], "NaN or infinite"),
    ([], "writes no element"),
])
def test_non_finite_or_empty_outputs_are_vacuous(values, words):
    run = judge(outputs(a=values), outputs(a=values), where=" at N = 2")
    assert run.verified is None and run.vacuous and words in run.reason and not run


def test_untouched_outputs_are_vacuous_and_zero_outputs_are_verified_with_a_warning():
    start = lambda name, flat: np.full(flat.size, 0.25)  # noqa: E731 - the elements' values before the run
    untouched = judge(outputs(a=[0.25, np.inf]), outputs(a=[0.25, np.inf]), initial=start)
    assert untouched.verified is None and "initial value" in untouched.reason
    zero = judge(outputs(a=[0.0, -0.0]), outputs(a=[0.0, -0.0]), initial=start)
    assert zero.verified is True and zero.warnings == (ALL_ZERO_WARNING,) and ALL_ZERO_WARNING in str(zero)
    assert judge(outputs(a=[0.0, 1.0]), outputs(a=[0.0, 1.0])).warnings == ()


def test_census_counts_are_disjoint_and_integers_count():
    c = census(outputs(a=[np.nan, np.inf, 0.0, 3.0], b=np.array([0, 4], dtype=np.int32)),
               lambda name, flat: np.full(flat.size, 3.0 if name == "a" else 4))
    assert c == Census(("a", "b"), 6, nan=1, inf=1, zero=2, unchanged=2) and c.computed == 2
    assert vacuity(c) is None
    assert c.to_json() == {"arrays": ["a", "b"], "elements": 6, "nan": 1, "inf": 1, "zero": 2, "unchanged": 2}


def test_same_values_compares_multisets():
    assert same_values(outputs(a=[1.0, 2.0]), outputs(a=[2.0, 1.0]))
    assert not same_values(outputs(a=[1.0, 2.0]), outputs(a=[1.0, 3.0]))
    assert not same_values(outputs(a=[1.0]), outputs(b=[1.0]))


PROGRAM = HARNESS_SUPPORT_C + r"""
int main(int argc, char **argv) {
    long long n = polylab_param(argv[1], "N");
    double *a = polylab_alloc(sizeof(double) * (size_t)n, "a");
    for (long long i = 0; i < n; i++) a[i] = SCALE * (double)i;
    long long e[1] = {n};
    polylab_dump("a", "double", a, sizeof(double), 1, e);
    free(a);
    return 0;
}
"""


@needs_cc
def test_two_programs_run_on_the_same_inputs(tmp_path):
    ref = compile(PROGRAM.replace("SCALE", "1.5"), cache_dir=tmp_path)
    same = compile(PROGRAM.replace("SCALE", "(3.0 / 2.0)"), cache_dir=tmp_path)
    other = compile(PROGRAM.replace("SCALE", "1.25"), cache_dir=tmp_path)
    assert differential_run(ref, same, [4]).verified is True
    run = differential_run(ref, other, [4], extents={"a": (4,)})
    assert run.verified is False and str(run.difference) == "a[1]: expected 1.5, got 1.25"
    assert run.comparison.mismatches == 3
    # element 0 is 0.0 in both: at N = 1 every compared element is 0, verified with the warning
    one = differential_run(ref, other, [1])
    assert one.verified is True and one.warnings == (ALL_ZERO_WARNING,)
    assert differential_run(ref, other, [0], where=" at N = 0").reason.endswith("writes no element at N = 0")
