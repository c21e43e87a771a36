"""Tests of the harness output protocol (polylab.toolchain.compare) and of timing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polylab.errors import ToolchainError
from polylab.toolchain import (HARNESS_SUPPORT_C, Timing, c_compiler, compare_checksums, compare_outputs,
                               compile, parse_checksums, parse_times, read_array, run, speedup, time_binary)

needs_cc = pytest.mark.skipif(c_compiler() is None, reason="no C compiler on this machine")

HARNESS = HARNESS_SUPPORT_C + r"""
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 4, m = 3;
    long poke = argc > 2 ? atol(argv[2]) : -1;           /* element of A to perturb, -1 for none */
    double *A = polylab_alloc(sizeof(double) * n * m, "A");
    int *B = polylab_alloc(sizeof(int) * n, "B");
    double t0 = polylab_now();
    for (long i = 0; i < n; i++) {
        B[i] = (int)(i * i);
        for (long j = 0; j < m; j++) A[i * m + j] = 0.5 * (double)i + (double)j / 3.0;
    }
    if (poke >= 0) A[poke] += 1e-9;
    polylab_report_time(polylab_now() - t0);
    polylab_report_time(polylab_now() - t0);
    long ea[2] = {n, m}, eb[1] = {n};
    polylab_dump("A", "double", A, sizeof(double), 2, ea);
    polylab_dump("B", "int", B, sizeof(int), 1, eb);
    free(A); free(B);
    return 0;
}
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return compile(HARNESS, cache_dir=tmp_path_factory.mktemp("cache"))


@needs_cc
def test_harness_protocol_writes_arrays_times_and_checksums(harness, tmp_path):
    result = run(harness, ["5"], output_dir=tmp_path / "ref")
    assert len(result.times) == 2 and all(t >= 0 for t in result.times)
    a = read_array(tmp_path / "ref", "A")
    b = read_array(tmp_path / "ref", "B")
    assert a.shape == (5, 3) and a.dtype == np.float64 and a[4, 2] == 0.5 * 4 + 2 / 3.0
    assert b.dtype == np.int32 and list(b) == [0, 1, 4, 9, 16]
    sums = parse_checksums(result.stdout)
    assert set(sums) == {"A", "B"} and sums["A"][1] == 15
    h = 1469598103934665603
    for byte in b.tobytes():
        h = ((h ^ byte) * 1099511628211) % 2**64
    assert sums["B"][0] == f"{h:016x}"


@needs_cc
def test_identical_runs_compare_equal(harness, tmp_path):
    r1 = run(harness, ["6"], output_dir=tmp_path / "a")
    r2 = run(harness, ["6"], output_dir=tmp_path / "b")
    cmp = compare_outputs(tmp_path / "a", tmp_path / "b")
    assert cmp.equal and cmp.arrays == ("A", "B") and cmp.first is None and cmp.mismatches == 0
    assert "outputs equal (bit-exact)" in str(cmp)
    assert compare_checksums(r1.stdout, r2.stdout).equal


@needs_cc
def test_first_differing_element_is_found_and_tolerance_accepts_it(harness, tmp_path):
    r1 = run(harness, ["6"], output_dir=tmp_path / "a")
    r2 = run(harness, ["6", str(4 * 3 + 1)], output_dir=tmp_path / "b")  # perturb A[4][1]
    cmp = compare_outputs(tmp_path / "a", tmp_path / "b")
    assert not cmp.equal and cmp.mismatches == 1
    assert cmp.first is not None and cmp.first.array == "A" and cmp.first.index == (4, 1)
    assert cmp.first.expected == 0.5 * 4 + 1 / 3.0 and cmp.first.actual == cmp.first.expected + 1e-9
    assert 0 < cmp.max_abs_error < 2e-9
    assert "A[4][1]" in str(cmp)
    assert compare_outputs(tmp_path / "a", tmp_path / "b", rtol=1e-6).equal
    assert not compare_outputs(tmp_path / "a", tmp_path / "b", rtol=1e-12).equal
    checks = compare_checksums(r1.stdout, r2.stdout)
    assert not checks.equal and "array A" in checks.problems[0]


@needs_cc
def test_shape_mismatch_and_missing_arrays_are_reported(harness, tmp_path):
    run(harness, ["6"], output_dir=tmp_path / "a")
    run(harness, ["7"], output_dir=tmp_path / "b")
    cmp = compare_outputs(tmp_path / "a", tmp_path / "b")
    assert not cmp.equal and any("float64[6, 3]" in p for p in cmp.problems)
    (tmp_path / "b" / "B.meta").unlink()
    cmp = compare_outputs(tmp_path / "a", tmp_path / "b")
    assert any("B is missing" in p for p in cmp.problems)
    with pytest.raises(ToolchainError, match="no output for array"):
        read_array(tmp_path / "b", "B")


def write_array(directory: Path, name: str, array: np.ndarray, ctype: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.bin").write_bytes(np.ascontiguousarray(array).tobytes())
    (directory / f"{name}.meta").write_text(
        f"ctype {ctype}\nelem_size {array.dtype.itemsize}\nextents {' '.join(map(str, array.shape))}\n")


def test_bit_exact_comparison_distinguishes_signed_zero_and_accepts_same_nan(tmp_path):
    write_array(tmp_path / "a", "X", np.array([0.0, np.nan, 1.0]), "double")
    write_array(tmp_path / "b", "X", np.array([-0.0, np.nan, 1.0]), "double")
    cmp = compare_outputs(tmp_path / "a", tmp_path / "b")
    assert not cmp.equal and cmp.first.index == (0,) and cmp.mismatches == 1
    assert compare_outputs(tmp_path / "a", tmp_path / "b", atol=1e-300).equal


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), seed=st.integers(0, 2**32 - 1),
       ctype=st.sampled_from(["double", "float", "int", "long"]), data=st.data())
def test_first_difference_is_the_row_major_first(tmp_path_factory, shape, seed, ctype, data):
    dtype = {"double": np.float64, "float": np.float32, "int": np.int32, "long": np.int64}[ctype]
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    b = a.copy()
    flips = data.draw(st.sets(st.integers(0, a.size - 1), max_size=4))
    b.reshape(-1)[list(flips)] += dtype(1)
    root = tmp_path_factory.mktemp("cmp")
    write_array(root / "a", "A", a, ctype)
    write_array(root / "b", "A", b, ctype)
    cmp = compare_outputs(root / "a", root / "b")
    assert cmp.equal == (not flips)
    assert cmp.mismatches == len(flips)
    if flips:
        expected = tuple(int(i) for i in np.unravel_index(min(flips), a.shape))
        assert cmp.first.index == expected
        assert cmp.first.expected == a[expected].item() and cmp.first.actual == b[expected].item()


def test_parse_times_skips_other_lines_and_malformed_values():
    out = "hello\npolylab-time 0.25\npolylab-time abc\n polylab-time 1\npolylab-time 1e-3\npolylab-time -1\n"
    assert parse_times(out) == [0.25, 1e-3]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(1e-6, 10.0), min_size=1, max_size=9))
def test_timing_statistics(values):
    t = Timing.from_runs(values)
    assert t.min == min(values) and t.max == max(values)
    assert t.min <= t.median <= t.max
    assert t.spread == pytest.approx((max(values) - min(values)) / t.median)
    assert speedup(t, t) == pytest.approx(1.0)


@needs_cc
def test_time_binary_uses_harness_times_and_falls_back_to_wall_time(harness, tmp_path):
    timing = time_binary(harness, ["50"], repeat=3, warmup=1)
    assert timing.source == "harness" and len(timing.runs) == 6  # two polylab-time lines per run
    assert timing.min <= timing.median and timing.to_json()["runs"] == list(timing.runs)
    plain = compile("int main(void) { return 0; }\n", cache_dir=tmp_path)
    wall = time_binary(plain, repeat=2, warmup=0, threads=2)
    assert wall.source == "wall" and len(wall.runs) == 2 and wall.threads == 2 and wall.median > 0
    with pytest.raises(ToolchainError, match="repeat"):
        time_binary(plain, repeat=0)


@needs_cc
def test_harness_support_compiles_cleanly_in_strict_c99(tmp_path):
    source = HARNESS_SUPPORT_C + "int main(void) { return 0; }\n"
    binary = compile(source, flags=("-O2", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"),
                     cache_dir=tmp_path)
    assert binary.diagnostics == () and run(binary).returncode == 0
