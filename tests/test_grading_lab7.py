"""Lab 7 (the GPU): the solution earns full marks, every wrong-answer path of every check names the specific
error without stating the expected answer, the hidden cases are read and shown by label only, and the
references agree with independent oracles (a closed form for the wave counts, numpy's row-major layout for
the memory strides, a brute-force footprint of a block, a C-semantics check of the mapping evaluator)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grading_helpers import hides, recorded_runs, wrong_answer_table
from polylab.frontend import parse
from polylab.grading import check, get_lab, load_hidden
from polylab.grading.labs import lab7
from polylab.toolchain import c_compiler

ROOT = Path(__file__).resolve().parents[1]
MAPPING = {"i": "blockIdx.y * blockDim.y + threadIdx.y + 1", "j": "blockIdx.x * blockDim.x + threadIdx.x + 1",
           "guard": "i < N - 1 && j < N - 1"}
#: review 3: a mapping whose blocks start at (0, 0), outside the loops; it covers the loops at N = 40 and 45 but
#: not where N - 2 is a multiple of the block's extents
UNSHIFTED = {"i": "blockIdx.y * blockDim.y + threadIdx.y", "j": "blockIdx.x * blockDim.x + threadIdx.x",
             "guard": "1 <= i && i <= N - 2 && 1 <= j && j <= N - 2"}
UNSHIFTED_READS = ("[N, bx, by] -> { A[a, b] : (8by <= a <= 8by + 7 and 32bx - 1 <= b <= 32bx + 32) or "
                   "(8by - 1 <= a <= 8by + 8 and 32bx <= b <= 32bx + 31) }")
BLOCK_READS = ("[N, bx, by] -> { A[a, b] : (8by + 1 <= a <= 8by + 8 and 32bx <= b <= 32bx + 33) or "
               "((a = 8by or a = 8by + 9) and 32bx + 1 <= b <= 32bx + 32) }")
STRIDES_I = {"y[i][j]": "N", "a[j][i]": 1, "b[i][2 * j]": "2 * N", "c[i]": 1, "d[i + j][j]": "N", "e[j][i + j]": 1}
STRIDES_J = {"y[i][j]": 1, "a[j][i]": "N", "b[i][2 * j]": 2, "c[i]": 0, "d[i + j][j]": "N + 1",
             "e[j][i + j]": "2 * N + 1"}
SOLUTION = {
    "grid": (32, 125), "idle_threads": 32 * 125 * 256 - 998 * 998,
    "strides_i": STRIDES_I, "strides_j": STRIDES_J,
    "coalesced_schedule": "{ S0[i, j] -> [floor(j / 8), floor(i / 32), j, i] }; parallel",
    "cuda_mapping": MAPPING,
    "point_waves": lambda N: max(0, 2 * N - 3),
    "block_reads": BLOCK_READS,
    "jacobi_bytes": 8 * (2048 * 2048 - 4 + 2046 * 2046),
    "jacobi_gbs": lab7.recorded_rates()[0], "bandwidth_share": lab7.recorded_rates()[1],
}
needs_cc = pytest.mark.skipif(c_compiler() is None, reason="question 4 compiles the emulated kernel")


def grade(name: str, *answer):
    r = check(name, *answer)
    return r, "\n".join(r.feedback)


@needs_cc
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
    assert r.status == "partial" and "x and y swapped" in fb and hides(fb, "(32, 125)")
    r, fb = grade("lab7.q1", (998 // 32, 998 // 8), idle)
    assert "round the number of blocks up" in fb and hides(fb, "(32, 125)", str(idle))
    r, fb = grade("lab7.q1", (32, 125), -3)
    assert r.status == "partial" and "negative" in fb
    r, fb = grade("lab7.q1", (32, 125), 0)
    assert "not be exactly one per iteration" in fb and hides(fb, str(idle), "blocks x threads", "minus")
    r, fb = grade("lab7.q1", (31, 7), idle)
    assert "divide by the block's extent" in fb and hides(fb, "(32, 125)", str(idle))
    r, fb = grade("lab7.q1", "(32, 125)", "27996")
    assert r.score == 0 and fb.count("remove the quotes") == 2  # both parts are reported
    r, fb = grade("lab7.q1", (32, 125, 1), idle)
    assert "has 3 entries, not 2" in fb


# -- Q2 and Q3 ------------------------------------------------------------------------------------------------

def test_q2_strides_come_from_F_and_the_extents():
    scop = lab7.mixed()
    n = lab7.sympy.Symbol("N")
    got = {(a.text, it): lab7.memory_stride(scop, a, it) for _, a in scop.accesses() for it in "ij"}
    assert {k: v for k, v in got.items() if k[1] == "i"} == {(t, "i"): lab7.sympy.sympify(v, locals={"N": n})
                                                             for t, v in STRIDES_I.items()}
    assert {k: v for k, v in got.items() if k[1] == "j"} == {(t, "j"): lab7.sympy.sympify(v, locals={"N": n})
                                                             for t, v in STRIDES_J.items()}
    assert lab7.best_x_loop(lab7.transposed()) == "i"


def test_q2_strides_agree_with_addresses_enumerated():
    """Brute force: with the arrays laid out row-major at N = 7, the address of each access at (i + 1, j) minus
    the one at (i, j) (and along j) is the stride the check expects, at every point of the domain."""
    scop, n = lab7.mixed(), 7
    for _, acc in scop.accesses():
        ext = [int(eval(e, {"N": n})) for e in scop.array(acc.array).extents]

        def address(i, j, acc=acc, ext=ext):
            sub = [int(acc.matrix[d, 0]) * i + int(acc.matrix[d, 1]) * j + int(acc.offset[d]) for d in range(len(ext))]
            flat = 0
            for d, e in enumerate(ext):
                flat = flat * e + sub[d]
            return flat

        for loop, (di, dj) in (("i", (1, 0)), ("j", (0, 1))):
            want = int(lab7.memory_stride(scop, acc, loop).subs("N", n))
            assert {address(i + di, j + dj) - address(i, j) for i in range(n - 1) for j in range(n - 1)} == {want}


def test_q2_wrong_paths():
    r, fb = grade("lab7.q2", {**STRIDES_I, "c[i]": 0}, STRIDES_J)
    assert "strides_i: 1 of your strides along i is wrong" in fb and r.status == "partial"
    assert hides(fb, "c[i]", "stride of c")           # which one is wrong is not said
    r, fb = grade("lab7.q2", {"x[i][j]": 7}, {})        # the missing-answer example earns nothing
    assert r.score == 0 and "'x[i][j]': the statement has no such access" in fb
    assert "6 of the statement's 6 accesses have no stride in your dictionary" in fb
    r, fb = grade("lab7.q2", STRIDES_I, {k: 1 for k in STRIDES_J})
    assert "strides_j: 5 of your strides along j are wrong" in fb and r.score == pytest.approx(1.5)
    r, fb = grade("lab7.q2", "N", STRIDES_J)
    assert "strides_i is 'N', not a dictionary" in fb
    r, fb = grade("lab7.q2", {**STRIDES_I, "c[i]": "M"}, STRIDES_J)
    assert "the only symbol a stride may use is N" in fb
    r, fb = grade("lab7.q2", {**STRIDES_I, "c[i]": True}, STRIDES_J)
    assert "the stride of c[i] is a bool" in fb
    spaced = {"y[ i ][j]": "N", "(a[j][i])": 1, "b[i][2*j]": "2*N", "c[i]": 1, "d[i+j][j]": "N", "e[j][i + j]": "1"}
    assert grade("lab7.q2", spaced, STRIDES_J)[0].correct    # C text and expressions are normalised


def test_q2_a_guessed_dictionary_earns_nothing():
    """Every access given the same guessed stride (0, 1, 2, N, N + 1, 2N, 2N + 1) earns nothing in either
    dictionary: a wrong stride cancels a right one."""
    for guess in (0, 1, 2, "N", "N + 1", "2 * N", "2 * N + 1"):
        r, _ = grade("lab7.q2", {k: guess for k in STRIDES_I}, {k: guess for k in STRIDES_J})
        assert r.score == 0, guess


TILE_SHAPE = "32 consecutive iterations of the loop on threadIdx.x by 8 of the other"


def test_q3_wrong_paths():
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [j, i] }")       # the untiled interchange, once the whole answer
    assert r.score == 0 and "your schedule has 2 loop dimension(s): a tiled schedule of a 2-D nest has four" in fb
    r, fb = grade("lab7.q3", "tile(32, 8)")                  # the right tiles, the source's innermost loop
    assert r.score == 0 and fb == ("your innermost loop (j) steps j: on threadIdx.x, neighbouring threads of a warp "
                                   "take neighbouring values of j, which is not the loop that coalesces the most of "
                                   "the statement's accesses (work it out as in question 2), so a warp's loads and stores move more "
                                   "32-byte sectors than they must")
    r, fb = grade("lab7.q3", "tile(8, 32)")                  # both mistakes at once, each told
    assert "holds 256 iterations, i from 0 to 7 and j from 0 to 31" in fb and TILE_SHAPE in fb and "steps j" in fb
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [floor((i + j) / 32), floor(j / 8), j, i] }")   # not a box
    assert "holds 228 iterations, i from 0 to 31 and j from 0 to 7" in fb
    r, fb = grade("lab7.q3", "[N] -> { S0[i, j] -> [floor(j / 8), floor(i / 32), j, i] : i < 32; "
                             "S0[i, j] -> [floor(j / 8), 1, j, i] : i >= 32 }")    # right at N = 64 only
    assert "the iterations (i, j) = (32, 0) and (64, 7) share a tile of your schedule but no block (at N = 65)" in fb
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [floor(j / 8), floor(i / 32), j] }")
    assert "run at the same time step" in fb
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [floor(j / 8), floor(i / 32), j, 2i] }")
    assert "your innermost loop (2i) skips values" in fb
    r, fb = grade("lab7.q3", "{ S0[i, j] -> [j, i")
    assert r.score == 0 and fb
    r, fb = grade("lab7.q3", ("j", "i"))
    assert "not text" in fb


def test_q3_feedback_names_no_access_of_question_2():
    """Review 3: q3's feedback on the source order named the accesses a warp does not coalesce with j on
    threadIdx.x, which answered q2; no reply of q3 names an access of the statement or counts the coalesced
    ones."""
    accesses = ("y[j][i]", "a[j][i]", "b[i][j]", "c[j][i]")
    for wrong_answer in ("tile(32, 8)", "tile(8, 32)", "{ S0[i, j] -> [i, j] }", "tile(4, 4)",
                         "{ S0[i, j] -> [floor(i / 8), floor(j / 32), i, j] }",
                         "{ S0[i, j] -> [floor(j / 8), floor(i / 32), i + j, i] }"):
        r, fb = grade("lab7.q3", wrong_answer)
        assert not r.correct and hides(fb, *accesses, " of 4 ", "coalesced in", "N elements apart"), fb


def test_q3_right_answers_are_every_tiling_of_the_blocks():
    """Any tile-loop order, point loops written as offsets in the tile or reversed, a recipe: each is the
    blocks' tiles with the coalescing loop innermost, and its code runs like the original."""
    for answer in ("{ S0[i, j] -> [floor(i / 32), floor(j / 8), j, i] }",
                   "{ S0[i, j] -> [floor(j / 8), floor(i / 32), j - 8 * floor(j / 8), i - 32 * floor(i / 32)] }",
                   "{ S0[i, j] -> [floor(j / 8), floor(i / 32), j, -i] }", "interchange(0, 1); tile(8, 32)"):
        assert grade("lab7.q3", answer)[0].correct, answer


def test_q3_block_tiles_agree_with_a_brute_force_partition():
    """The reference tiles at N = 34: as many pairs as the partition by (i // 32, j // 8) has, and two iterations
    share a tile exactly when those agree (pairs across each tile border, either way)."""
    tiles = lab7.fix_parameters(lab7.block_tiles(), {"N": 34})
    sizes = {}
    for i in range(34):
        for j in range(34):
            sizes[(i // 32, j // 8)] = sizes.get((i // 32, j // 8), 0) + 1
    assert int(tiles.wrap().count_val().to_python()) == sum(n * n for n in sizes.values())
    for x, y in (((0, 0), (31, 7)), ((31, 0), (32, 0)), ((0, 7), (0, 8)), ((32, 8), (33, 15)), ((5, 3), (3, 5))):
        pair = lab7.isl.Map(f"[N] -> {{ S0[{x[0]}, {x[1]}] -> S0[{y[0]}, {y[1]}] : N = 34 }}")
        assert pair.is_subset(tiles) == ((x[0] // 32, x[1] // 8) == (y[0] // 32, y[1] // 8)), (x, y)


def test_q3_illegal_schedule_is_refused_with_the_dependence():
    """The kernel of Q3 has no dependence; the same check on a kernel with one refuses an illegal order."""
    scop = parse("double a[N][N];\nfor (i = 1; i < N; i++)\n  for (j = 0; j < N; j++)\n"
                 "    a[i][j] = a[i - 1][j];\n").scop
    from polylab.grading.checks import legal_schedule
    from polylab.schedule import parse_schedule

    v = legal_schedule(parse_schedule(scop, "{ S0[i, j] -> [-i, j] }"))
    assert not v.correct and "illegal" in v.feedback[0]


# -- Q4: the index mapping -----------------------------------------------------------------------------------

@needs_cc
def test_q4_mapping_wrong_paths_name_the_thread():
    r, fb = grade("lab7.q4", {**MAPPING, "guard": "1"})
    assert r.score == 0 and "the thread blockIdx = (1, 0), threadIdx = (6, 0) passes the guard with (i, j) = (1, 39)" \
        in fb and "outside the loops" in fb
    r, fb = grade("lab7.q4", {**MAPPING, "i": "blockIdx.y * blockDim.y + threadIdx.y"})
    assert "(i, j) = (0, 1)" in fb and r.score == 0
    r, fb = grade("lab7.q4", {**MAPPING, "j": "threadIdx.x + 1"})
    assert "both compute (i, j) = (1, 1): two threads write the same element" in fb
    r, fb = grade("lab7.q4", {**MAPPING, "guard": "i < N - 2 && j < N - 1"})
    assert "no thread passes the guard with (i, j) = (38, 1) at N = 40" in fb
    swapped = {"i": MAPPING["j"], "j": MAPPING["i"], "guard": MAPPING["guard"]}
    r, fb = grade("lab7.q4", swapped)                        # right, but a warp walks a column
    assert r.score == 2 and "coalescing: threads threadIdx.x = 0 and 1 of a warp compute (i, j) = (1, 1) and " \
        "(2, 1)" in fb and hides(fb, "blockIdx.x * blockDim.x + threadIdx.x + 1")
    r, fb = grade("lab7.q4", UNSHIFTED)                      # right at N = 40 only: its blocks start at 0
    assert r.score == 0 and "no thread passes the guard with (i, j) = (1, 32) at N = 34" in fb
    assert grade("lab7.q4", {"i": "blockIdx.y * 8 + threadIdx.y + 1", "j": "blockIdx.x * 32 + threadIdx.x + 1",
                             "guard": "i <= N - 2 && j <= N - 2"})[0].correct


def test_q4_mapping_malformed_answers():
    r, fb = grade("lab7.q4", {**MAPPING, "j": "printf(1)"})
    assert "the expression of j calls printf at column 1" in fb
    r, fb = grade("lab7.q4", {**MAPPING, "j": "k + 1"})
    assert "the expression of j uses k" in fb
    r, fb = grade("lab7.q4", {**MAPPING, "i": "i = 3"})
    assert "not a plain expression" in fb
    r, fb = grade("lab7.q4", {"i": MAPPING["i"], "j": MAPPING["j"]})
    assert "has no 'guard'" in fb
    r, fb = grade("lab7.q4", (MAPPING["i"], MAPPING["j"]))
    assert "not a dictionary" in fb
    r, fb = grade("lab7.q4", {**MAPPING, "guard": "i / (j - j) > 0"})
    assert "divides by zero" in fb


def test_the_mapping_evaluator_has_cs_integer_semantics():
    for text, want in (("-7 / 2", -3), ("-7 % 2", -1), ("7 / -2", -3), ("max(3, 5) - min(3, 5)", 2),
                       ("1 < 2 && 3 > 4 || 1", 1), ("(2 > 1) ? 10 : 20", 10)):
        assert lab7._eval(lab7._expression(text, "e"), {}) == want, text


# -- Q5 -------------------------------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=0, max_value=80))
def test_q5_reference_counts_the_waves(n):
    assert lab7.point_waves_reference(n) == max(0, 2 * n - 3)


def test_q5_wrong_paths_and_hidden_cases():
    q = get_lab("lab7").question("q5")
    hidden = load_hidden(ROOT / "instructor" / "hidden", get_lab("lab7"))["q5"]
    r = q.grade({"point_waves": lambda N: 2 * N - 3}, "lab7", hidden)
    fb = "\n".join(r.feedback)
    assert r.status == "partial" and "hidden case 'N = 1: no iteration, no launch': wrong result" in fb
    assert "(1,)" not in fb  # hidden inputs are not shown
    r = q.grade({"point_waves": lambda N: 2 * N}, "lab7")
    fb = "\n".join(r.feedback)
    assert r.score == 0 and "point_waves(4) returned 8 (N = 4): not the right value" in fb
    r = q.grade({"point_waves": lambda N: N / 0}, "lab7")
    assert "raised ZeroDivisionError" in "\n".join(r.feedback)
    r = q.grade({"point_waves": 1997}, "lab7")
    assert "not a function" in "\n".join(r.feedback)


# -- Q6 -------------------------------------------------------------------------------------------------------

def test_q6_the_footprint_agrees_with_a_brute_force_count():
    want, _ = lab7.block_footprint()
    for n, bx, by in ((60, 0, 0), (80, 1, 3)):
        brute = {(i + di, j + dj) for i in range(8 * by + 1, 8 * by + 9) for j in range(32 * bx + 1, 32 * bx + 33)
                 for di, dj in ((0, 0), (0, 1), (0, -1), (1, 0), (-1, 0))}
        fixed = want.intersect_params(lab7.isl.Set(f"[N, bx, by] -> {{ : N = {n} and bx = {bx} and by = {by} }}"))
        got = set()
        fixed.foreach_point(lambda p: got.add(tuple(lab7.point_coordinates(p))))
        assert got == brute


def test_q6_wrong_paths_name_an_element_and_its_thread():
    r, fb = grade("lab7.q6", "[N, bx, by] -> { A[a, b] : 8by <= a <= 8by + 9 and 32bx <= b <= 32bx + 33 }")
    assert r.score == 0 and "your set holds A[0, 0] at N = 34, bx = 0, by = 0, which no thread of that block reads" in fb
    assert hides(fb, BLOCK_READS)
    r, fb = grade("lab7.q6", "[N, bx, by] -> { A[a, b] : 8by + 1 <= a <= 8by + 8 and 32bx + 1 <= b <= 32bx + 32 }")
    assert "your set lacks A[1, 33] at N = 34, bx = 0, by = 0: threadIdx = (31, 0) (the iteration (i, j) = (1, 32)) " \
           "reads it" in fb
    r, fb = grade("lab7.q6", "[N] -> { A[a, b] : 0 <= a < N }")
    assert "lives in" in fb
    assert grade("lab7.q6", BLOCK_READS.replace("A[a, b]", "[a, b]"))[0].correct     # an unnamed tuple is fair


# -- Q7 -------------------------------------------------------------------------------------------------------

def test_q7_reading_the_roofline_wrong_paths():
    gbs, share = lab7.recorded_rates()
    assert 3.5 < gbs < 4.3 and 0.35 < share < 0.45
    r, fb = grade("lab7.q7", BYTES, gbs * 1e9, share * 100)
    assert "is not in GB/s" in fb and "is a percentage" in fb
    r, fb = grade("lab7.q7", BYTES, 16 * 2046 ** 2 / 0.0172 / 1e9 * 1.2, 0.9)
    assert "does not follow from the bytes" in fb and "is not the recorded Jacobi step's GB/s divided by" in fb
    assert hides(fb, f"{gbs:.3g}", f"{share:.3g}")
    assert grade("lab7.q7", BYTES, gbs * 1.0002, share * 0.9998)[0].correct                 # within 0.03 %
    assert grade("lab7.q7", BYTES, round(gbs, 4), round(share, 5))[0].correct              # five significant digits
    assert not grade("lab7.q7", BYTES, gbs * 1.01, share * 0.99)[0].correct


def test_the_lab_shows_the_recorded_runs_the_check_reads():
    assert recorded_runs("lab7_gpu.ipynb") == lab7.RECORDED


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


#: every wrong-answer path of every question: (question, answers, what the feedback must name, more texts of
#: the answer it must not state); the answers' own texts (tests/grading_helpers.answer_forms) are hidden too.
#: Not reachable, so not here: q3's illegal schedule (the kernel has no dependence: the check is tested on
#: another kernel above) and its run that changes the output (a legal one-to-one schedule of a kernel without a
#: dependence computes what the original does; the run checks the code generator), q4's emulated run that
#: changes the output once every iteration runs exactly once (the Jacobi step reads A and writes B only)
IDLE, (GBS, SHARE) = SOLUTION["idle_threads"], lab7.recorded_rates()
BYTES = SOLUTION["jacobi_bytes"]
WRONG = [
    ("q1", ((125, 32), IDLE), ("x and y swapped",), (str(IDLE),)),
    ("q1", ((998 // 32, 998 // 8), IDLE), ("round the number of blocks up",), (str(IDLE),)),
    ("q1", ((31, 7), IDLE), ("grid (31, 7) is not it", "divide by the block's extent"), (str(IDLE),)),
    ("q1", ((32, 125), -3), ("idle_threads = -3 is negative",), (str(IDLE),)),
    ("q1", ((32, 125), 0), ("idle_threads = 0 is not it", "not be exactly one per iteration"),
     (str(IDLE), "blocks x threads", "minus", "threads launched")),          # review 3: no formula
    ("q1", ((32, 125), 32 * 125 * 256), ("is not it", "the bounds guard"), (str(IDLE), "blocks x threads", "minus")),
    ("q2", ({**STRIDES_I, "c[i]": 0}, STRIDES_J), ("strides_i: 1 of your strides along i is wrong",),
     ("c[i]", "2 * N + 1")),
    ("q2", ({"x[i][j]": 7}, {}), ("'x[i][j]': the statement has no such access", "6 of the statement's 6 accesses"),
     ()),
    ("q2", (STRIDES_I, {k: 1 for k in STRIDES_J}), ("strides_j: 5 of your strides along j are wrong",),
     ("2 * N + 1", "N + 1")),
    ("q2", ({**STRIDES_I, "c[i]": "M"}, STRIDES_J), ("the only symbol a stride may use is N",), ()),
    ("q3", ("{ S0[i, j] -> [j, i] }",), ("your schedule has 2 loop dimension(s)",), ()),
    ("q3", ("tile(32, 8)",), ("your innermost loop (j) steps j", "not the loop that coalesces the most"),
     ("y[j][i]", "a[j][i]", "b[i][j]", "c[j][i]", "i innermost")),
    ("q3", ("tile(8, 32)",), ("holds 256 iterations, i from 0 to 7 and j from 0 to 31", TILE_SHAPE),
     ("floor(i / 32)", "floor(i/32)")),
    ("q3", ("[N] -> { S0[i, j] -> [floor(j / 8), floor(i / 32), j, i] : i < 32; "
            "S0[i, j] -> [floor(j / 8), floor(i / 16) + 100, j, i] : i >= 32 }",),
     ("share a block but not a tile of your schedule",), ()),
    ("q3", ("{ S0[i, j] -> [floor(j / 8), floor(i / 32), i + j, i] }",),
     ("your innermost loop (i) moves (i, j) by (1, -1)",), ()),
    ("q3", ("{ S0[i, j] -> [floor(j / 8), floor(i / 32), i - j, i + j] }",), ("your innermost loop (i + j) skips values",),
     ()),
    ("q3", ("{ S0[i, j] -> [floor(j / 8), floor(i / 32), j] }",),
     ("two iterations of your schedule run at the same time step",), ()),
    ("q4", ({**MAPPING, "guard": "i / (j - j) > 0"},), ("divides by zero",), ()),
    pytest.param("q4", ({**MAPPING, "guard": "1"},),
                 ("the thread blockIdx = (1, 0), threadIdx = (6, 0) passes the guard with (i, j) = (1, 39)",),
                 ("i < N - 1 && j < N - 1",), marks=needs_cc),
    pytest.param("q4", ({**MAPPING, "j": "threadIdx.x + 1"},),
                 ("both compute (i, j) = (1, 1): two threads write the same element",),
                 ("blockIdx.x * blockDim.x + threadIdx.x + 1",), marks=needs_cc),
    pytest.param("q4", ({**MAPPING, "guard": "i < N - 2 && j < N - 1"},),
                 ("no thread passes the guard with (i, j) = (38, 1) at N = 40",), ("i < N - 1 && j < N - 1",),
                 marks=needs_cc),
    pytest.param("q4", (UNSHIFTED,), ("no thread passes the guard with (i, j) = (1, 32) at N = 34",),
                 ("threadIdx.x + 1",), marks=needs_cc),
    pytest.param("q4", ({"i": MAPPING["j"], "j": MAPPING["i"], "guard": MAPPING["guard"]},),
                 ("threads threadIdx.x = 0 and 1 of a warp compute (i, j) = (1, 1) and (2, 1)",),
                 ("blockIdx.x * blockDim.x + threadIdx.x + 1",), marks=needs_cc),
    ("q5", (lambda N: 2 * N,), ("point_waves(4) returned 8",), ("2 * N - 3", "2N - 3")),
    ("q5", (lambda N: N / 0,), ("raised ZeroDivisionError",), ("2 * N - 3",)),
    ("q6", ("[N, bx, by] -> { A[a, b] : 8by <= a <= 8by + 9 and 32bx <= b <= 32bx + 33 }",),
     ("your set holds A[0, 0] at N = 34, bx = 0, by = 0, which no thread of that block reads",), ()),
    ("q6", ("[N, bx, by] -> { A[a, b] : 8by + 1 <= a <= 8by + 8 and 32bx + 1 <= b <= 32bx + 32 }",),
     ("your set lacks A[1, 33] at N = 34, bx = 0, by = 0: threadIdx = (31, 0)",), ()),
    ("q6", ("[N] -> { A[a, b] : 0 <= a < N }",), ("block_reads lives in",), ()),
    ("q6", (UNSHIFTED_READS,), ("the footprint of a mapping whose block (bx, by) starts one row and one column "
                                "earlier than the question's",), ("8by + 9", "32bx + 33")),
    ("q7", (BYTES, GBS * 1e9, SHARE * 100), ("is not in GB/s", "is a percentage"), ()),   # the student's own digits
    # review 3: 16 bytes per point of the grid (copy_bytes / N^2) is 0.1 % off the exact count; each plausible
    # wrong count is told what it counts wrongly, never the right count
    *[("q7", (BYTES, *lab7.recorded_rates(count)), (f"jacobi_gbs follows from a byte count that {mistake}",
                                                    f"bandwidth_share follows from a byte count that {mistake}"),
       (f"{GBS:.4g}", f"{SHARE:.4g}", "16 bytes", "N - 2", "N * N - 4"))
      for count, mistake in lab7._COUNT_MISTAKES.items() if count != "corners"],
    # review 3 (C): the four corners of A, 32 bytes in 67 MB, are within any tolerance of a typed rate: the
    # bytes are asked for exactly, and each plausible wrong count is told what it counts wrongly
    *[("q7", (wrong_bytes, GBS, SHARE), (f"jacobi_bytes = {wrong_bytes} {mistake}",), (str(BYTES), "N * N - 4"))
      for count, mistake in lab7._COUNT_MISTAKES.items() for wrong_bytes in (lab7.byte_counts(2048)[count],)],
    ("q7", (BYTES // 8, GBS, SHARE), ("counts elements, not bytes",), (str(BYTES),)),
    ("q7", (12345, GBS, SHARE), ("is not the number of bytes one step moves",), (str(BYTES),)),
    ("q7", (BYTES, *lab7.recorded_rates(centre=lab7.statistics.mean)), ("uses the mean of the runs",),
     (f"{GBS:.4g}",)),
    ("q7", (BYTES, GBS * 1.2, SHARE * 1.2), ("GB/s does not follow from the bytes",
                                      "is not the recorded Jacobi step's GB/s divided by"),
     (f"{GBS:.3g}", f"{SHARE:.3g}")),
]


test_each_wrong_answer_names_its_mistake_and_hides_the_answer = wrong_answer_table("lab7", SOLUTION, WRONG)
