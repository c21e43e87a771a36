"""Lab 7 (the GPU): the solution earns full marks, every wrong-answer path of every check names the specific
error, the hidden cases are read and shown by label only, and the references agree with independent oracles
(a closed form for the wave counts, numpy's row-major layout for the memory strides)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polylab.frontend import parse
from polylab.grading import check, get_lab, load_hidden
from polylab.grading.labs import lab7

ROOT = Path(__file__).resolve().parents[1]

SOLUTION = {
    "grid": (32, 125), "idle_threads": 32 * 125 * 256 - 998 * 998,
    "x_loop": "i", "coalesced": {"y[j][i]", "a[j][i]", "c[j][i]"},
    "coalesced_schedule": "{ S0[i, j] -> [j, i] }; parallel",
    "point_waves": lambda N: max(0, 2 * N - 3),
    "tile_launches": 63, "max_blocks": 32,
    "bytes_moved": 8 * ((4096 * 4096 - 4) + 4094 * 4094), "min_time_us": 8 * ((4096 * 4096 - 4) + 4094 * 4094) / 4.8e6,
}


def grade(name: str, *answer):
    r = check(name, *answer)
    return r, "\n".join(r.feedback)


def test_solution_scores_full_marks_with_the_hidden_cases():
    lab = get_lab("lab7")
    hidden = load_hidden(ROOT / "instructor" / "hidden", lab) if (ROOT / "instructor" / "hidden").is_dir() else {}
    report = lab.grade(SOLUTION, hidden=hidden)
    assert [r.status for r in report.results] == ["correct"] * len(lab.questions), report.text
    assert report.score == report.max_score == lab.max_score >= 14 and len(lab.questions) >= 5


def test_nothing_answered_scores_zero():
    report = get_lab("lab7").grade({})
    assert report.score == 0 and {r.status for r in report.results} == {"missing"}


# -- Q1 -----------------------------------------------------------------------------------------------------

def test_q1_reference_is_the_ceiling_of_the_extents():
    (gx, gy), launched, work = lab7.grid_reference()
    assert (gx, gy) == (-(-998 // 32), -(-998 // 8)) and work == 998 * 998 and launched == gx * gy * 256


def test_q1_wrong_paths():
    idle = SOLUTION["idle_threads"]
    r, fb = grade("lab7.q1", (125, 32), idle)
    assert r.status == "partial" and "x and y swapped" in fb
    r, fb = grade("lab7.q1", (998 // 32, 998 // 8), idle)
    assert "round the number of blocks up" in fb
    r, fb = grade("lab7.q1", (32, 125), -3)
    assert r.status == "partial" and "negative" in fb
    r, fb = grade("lab7.q1", (32, 125), 0)
    assert "fail the bounds guard" in fb and "blocks x threads per block" in fb
    r, fb = grade("lab7.q1", (31, 7), idle)
    assert "divide by the block's extent" in fb
    r, fb = grade("lab7.q1", "(32, 125)", "27996")
    assert r.score == 0 and fb.count("remove the quotes") == 2  # both parts are reported
    r, fb = grade("lab7.q1", (32, 125, 1), idle)
    assert "has 3 entries, not 2" in fb


# -- Q2 and Q3 ------------------------------------------------------------------------------------------------

def test_q2_strides_come_from_F_and_the_extents():
    scop = lab7.transposed()
    strides = {(a.text, it): lab7.memory_stride(scop, a, it) for _, a in scop.accesses() for it in "ij"}
    n = lab7.sympy.Symbol("N")
    assert strides[("b[i][j]", "j")] == 1 and strides[("b[i][j]", "i")] == n
    assert strides[("a[j][i]", "i")] == 1 and strides[("y[j][i]", "j")] == n
    assert lab7.best_x_loop(scop) == "i"


def test_q2_wrong_paths():
    r, fb = grade("lab7.q2", "j", {"b[i][j]"})
    assert r.status == "partial" and "with j on threadIdx.x, 1 of the 4 accesses" in fb
    r, fb = grade("lab7.q2", "i", {"y[j][i]", "a[j][i]", "b[i][j]"})
    assert "'b[i][j]' is not a coalesced access" in fb and "are N elements apart" in fb and "1 coalesced access missing" in fb
    r, fb = grade("lab7.q2", "i", {"y[j][i]", "a[j][i]", "c[j][i]", "z[i]"})
    assert "the statement has no such access" in fb
    r, fb = grade("lab7.q2", "i", {"y[j][i]", "a[j][i]", "c[j][i + 1]"})
    assert "no such access" in fb
    r, fb = grade("lab7.q2", "k", {"y[j][i]", "a[j][i]", "c[j][i]"})
    assert "not one of 'i', 'j'" in fb and r.status == "partial"  # the set is judged against the best loop
    r, fb = grade("lab7.q2", "i", "y[j][i]")
    assert "single text" in fb
    r, _ = grade("lab7.q2", " I ", ["y[j][i]", "a[j][i]", "c[j][i]"])  # case and spacing, list for set
    assert r.correct
    r, _ = grade("lab7.q2", "i", {"y[j][ i ]", "a[j][i]", "(c[j][i])"})  # C text is normalised
    assert r.correct


def test_q3_wrong_paths():
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [i, j] }")
    assert r.score == 0 and "innermost loop of your schedule is j, not i" in fb
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [j] }")
    assert "run at the same time step" in fb
    r, fb = grade("lab7.q3", "tile(4, 4)")
    assert "not i" in fb
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [j + i, i] }")  # legal, one-to-one, inner loop i: also right
    assert r.correct
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [j, i")
    assert r.score == 0 and fb
    r, fb = grade("lab7.q3", ("j", "i"))
    assert "not text" in fb


def test_q3_illegal_schedule_is_refused_with_the_dependence():
    """The kernel of Q3 has no dependence; the same check on a kernel with one refuses an illegal order."""
    scop = parse("double a[N][N];\nfor (i = 1; i < N; i++)\n  for (j = 0; j < N; j++)\n"
                 "    a[i][j] = a[i - 1][j];\n").scop
    from polylab.grading.checks import legal_schedule
    from polylab.schedule import parse_schedule

    v = legal_schedule(parse_schedule(scop, "{ S0[i, j] -> [-i, j] }"))
    assert not v.correct and "illegal" in v.feedback[0]


# -- Q4 -------------------------------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=0, max_value=80))
def test_q4_reference_counts_the_waves(n):
    assert lab7.point_waves_reference(n) == max(0, 2 * n - 3)


def test_q4_wrong_paths_and_hidden_cases():
    q = get_lab("lab7").question("q4")
    hidden = load_hidden(ROOT / "instructor" / "hidden", get_lab("lab7"))["q4"] \
        if (ROOT / "instructor" / "hidden").is_dir() else (lab7.Case((1,), "N = 1: no iteration, no launch"),)
    r = q.grade({"point_waves": lambda N: 2 * N - 3}, "lab7", hidden)
    fb = "\n".join(r.feedback)
    assert r.status == "partial" and "hidden case 'N = 1: no iteration, no launch': wrong result" in fb
    assert "(1,)" not in fb  # hidden inputs are not shown
    r = q.grade({"point_waves": lambda N: 2 * N}, "lab7")
    fb = "\n".join(r.feedback)
    assert r.score == 0 and "point_waves(4) returned 8, expected 5" in fb
    r = q.grade({"point_waves": lambda N: N / 0}, "lab7")
    assert "raised ZeroDivisionError" in "\n".join(r.feedback)
    r = q.grade({"point_waves": 1997}, "lab7")
    assert "not a function" in "\n".join(r.feedback)


# -- Q5 -------------------------------------------------------------------------------------------------------

def test_q5_reference_matches_the_engines_tile_wavefront():
    """The waves counted from floor(i / 32) + floor(j / 32) are the host loop of the engine's own tile-level
    wavefront: the number of distinct values of its first dimension at N = 1000."""
    from polylab.model.islutil import fix_parameters
    from polylab.schedule import parse_schedule

    scop = lab7.sweep2d()
    s = parse_schedule(scop, "tile_wavefront(32, 32)")
    times = fix_parameters(s.maps["S0"].intersect_domain(scop.statements[0].domain), {"N": lab7.TILE_N}).range()
    assert lab7.count_points(lab7.values_of(times, 0)) == lab7.tile_wave_reference()[0] == 63
    assert lab7.tile_wave_reference()[1] == 32


def test_q5_wrong_paths():
    r, fb = grade("lab7.q5", 1997, 32)
    assert r.status == "partial" and "number of waves of the point wavefront" in fb
    r, fb = grade("lab7.q5", 61, 32 * 32)
    assert "count the tiles along each loop" in fb and "every tile" in fb
    r, fb = grade("lab7.q5", 63, 31)
    assert "not the largest wave" in fb
    r, fb = grade("lab7.q5", 63.0, 32.5)
    assert r.status == "partial" and "not an integer" in fb


# -- Q6 -------------------------------------------------------------------------------------------------------

def test_q6_footprints_are_exact():
    n = lab7.BYTES_N
    read, written, accesses = lab7.footprints()
    assert read == n * n - 4 and written == (n - 2) ** 2 and accesses == 6 * (n - 2) ** 2


@pytest.mark.parametrize("wrong_bytes,message", [
    (8 * (4096 * 4096 + 4094 * 4094), "four corners of A are never read"),
    (8 * (4096 * 4096 - 4 + 4096 * 4096), "only the interior of B is written"),
    (8 * 2 * 4096 * 4096, "neither the corners"),
    (8 * 6 * 4094 * 4094, "counted every access"),
    (4 * (4096 * 4096 - 4 + 4094 * 4094), "a double is 8 bytes"),
    (8 * (4096 * 4096 - 4), "the elements written move too"),
    (8 * 4094 * 4094, "the elements read move too"),
    (12345, "count the distinct elements"),
])
def test_q6_bytes_wrong_paths(wrong_bytes, message):
    r, fb = grade("lab7.q6", wrong_bytes, wrong_bytes / 4.8e6)
    assert r.status == "partial" and message in fb
    assert "min_time_us" not in fb  # a time that follows from the student's bytes is not counted twice


def test_q6_time_wrong_paths():
    b = SOLUTION["bytes_moved"]
    r, fb = grade("lab7.q6", b, b / 4.8e12)
    assert "time in seconds" in fb
    r, fb = grade("lab7.q6", b, b / 4.8e9)
    assert "time in milliseconds" in fb
    r, fb = grade("lab7.q6", b, b / 4.8e3)
    assert "time in nanoseconds" in fb
    r, fb = grade("lab7.q6", b, b / (4.8 * 2 ** 40) * 1e6)
    assert "decimal units" in fb
    r, fb = grade("lab7.q6", b, 1.0)
    assert "does not follow from" in fb and r.status == "partial"
    r, _ = grade("lab7.q6", b, b / 4.8e6 * 1.005)  # within 1 %
    assert r.correct
    r, fb = grade("lab7.q6", "lots", b / 4.8e6)
    assert r.status == "partial" and "remove the quotes" in fb  # the time is judged against the right bytes


# -- the stride formula against numpy's row-major layout ----------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-2, 2), min_size=6, max_size=6), st.lists(st.integers(-1, 1), min_size=3, max_size=3),
       st.integers(0, 1))
def test_memory_stride_is_the_address_difference(coeffs, offset, k):
    """For a 3-D array of extents (N, N + 1, 2N) at N = 7 and an access F x + c of a 2-D loop nest, the
    stride along x_k equals the difference of the addresses (numpy's strides of a C-ordered array of those
    extents) of the elements at x and x + e_k."""
    F = [coeffs[0:2], coeffs[2:4], coeffs[4:6]]

    def sub(row, c):
        terms = [f"{a} * {it}" for a, it in zip(row, "ij") if a] + ([str(c)] if c else [])
        return " + ".join(terms) or "0"

    text = f"x[{sub(F[0], offset[0])}][{sub(F[1], offset[1])}][{sub(F[2], offset[2])}]"
    scop = parse(f"double x[N][N + 1][2 * N];\ndouble y;\nfor (i = 0; i < N; i++)\n  for (j = 0; j < N; j++)\n"
                 f"    y = {text};\n").scop
    acc = next(a for _, a in scop.accesses() if a.array == "x")
    n = 7
    stride = lab7.memory_stride(scop, acc, "ij"[k]).subs(lab7.sympy.Symbol("N"), n)
    ext = (n, n + 1, 2 * n)
    layout = np.zeros(ext).strides  # numpy's own row-major layout, in bytes per step of each subscript
    x0 = np.array([3, 3])
    x1 = x0 + np.eye(2, dtype=int)[k]
    address = [sum(int(v[d]) * layout[d] for d in range(3)) // 8 for v in
               (np.array(F) @ x + np.array(offset) for x in (x0, x1))]
    assert address[1] - address[0] == int(stride)
