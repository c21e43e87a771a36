"""Scalars dead after the region (the frontend's ``Scop.dead_after``) and scalar expansion
(polylab.storage.expand_scalars): a live range that stays inside one iteration of its loops kept in a
buffer with one element per iteration.

The frontend's rule is checked case by case (a local, a parameter passed by value, one read after the
region, one whose address is taken, a static, a global, one read before the region in an enclosing loop).
Every expansion is checked with the reference interpreter, bit for bit on every live element, on symm's
shape and on random accumulations (hypothesis); the optimizer's code of symm is compiled and verified,
and its whole-file output prints what the original prints."""

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import polylab
from polylab import toolchain as tc
from polylab.reference.interpret import same_live_out
from polylab.schedule import parse_schedule
from polylab.storage import expand_scalars, home_scalars, recipe_steps

needs_omp = pytest.mark.skipif(tc.c_compiler() is None or not tc.openmp_status(),
                               reason="needs a C compiler with OpenMP")

DEAD = """double g;
static void kernel(int n, double x[30], double y[30], double p)
{
  int i;
  double s, t, u, w;
  static double v;
  double *q = &u;
#pragma scop
  for (i = 0; i < n; i++) {
    s = x[i];
    t = s * 2.0;
    u = t;
    v = u;
    w = v;
    g = w;
    p = w;
    y[i] = s + t + u + v + w + g + p;
  }
#pragma endscop
  y[0] += t + *q;
}
"""

LOOP_AROUND = """static void kernel(int n, int r, double x[30], double y[30])
{
  int i, k;
  double s = 0.0;
  for (k = 0; k < r; k++) {
    y[1] += s;
#pragma scop
    for (i = 0; i < n; i++) {
      s = x[i] * 2.0;
      y[i] = s;
    }
#pragma endscop
  }
}
"""


def test_the_scalars_nobody_reads_after_the_region_are_dead_after_it():
    scop = polylab.parse(DEAD).scop
    # s and w: locals; p: a parameter passed by value. t is read after the region, u through a pointer,
    # v is static and g global: they stay live
    assert scop.dead_after == ("p", "s", "w")
    assert not scop.live_after("s") and scop.live_after("t") and scop.live_after("y")
    # read before the region inside a loop around it: the next iteration reads what the region left
    assert polylab.parse(LOOP_AROUND).scop.dead_after == ()
    # the region itself reads, in the next iteration of a loop around it, what it left in s
    again = LOOP_AROUND.replace("    y[1] += s;\n", "").replace("      s = x[i] * 2.0;\n      y[i] = s;\n",
                                                                 "      y[i] = s;\n      s = x[i] * 2.0;\n")
    assert "y[1]" not in again and polylab.parse(again).scop.dead_after == ()
    # a goto could come back before the region
    jump = DEAD.replace("  y[0] += t + *q;\n", "  y[0] += t + *q;\n  if (n > 100) { n = n - 1; goto again; }\n").replace(
        "  double *q = &u;\n", "  double *q = &u;\nagain:\n  q = &u;\n", 1)
    assert "goto again" in jump and polylab.parse(jump).scop.dead_after == ()
    # a region that is not in a function (a notebook cell): nothing is known, everything stays live
    cell = polylab.parse("double s; double y[10];\nfor (i = 0; i < N; i++) { s = y[i]; y[i] = s * 2.0; }\n").scop
    assert cell.dead_after == ()


SYMM = """#include <stdio.h>
#define M 13
#define N 11
static double A[M][M], B[M][N], C[M][N];

static void kernel(int m, int n, double alpha, double beta)
{
  int i, j, k;
  double temp2;
#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      temp2 = 0;
      for (k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < N; j++) {
      B[i][j] = (double)((i + j) % 7) / 7.0;
      C[i][j] = (double)((i * j + 3) % 5) / 5.0;
    }
    for (int j = 0; j < M; j++)
      A[i][j] = (double)((i * 3 + j) % 11) / 11.0;
  }
  kernel(M, N, 1.5, 1.2);
  kernel(M - 4, N - 3, 0.5, 0.75);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      printf("%.17g\\n", C[i][j]);
  return 0;
}
"""


def test_symm_keeps_temp2_in_one_element_per_iteration_and_computes_the_same():
    scop = polylab.parse(SYMM).scop
    assert scop.dead_after == ("temp2",)
    homed, hrep = home_scalars(scop)
    assert not hrep.homed   # its end reads C[i][j] itself: no home in C
    new, rep = expand_scalars(homed)
    assert [(w.scalar, w.home) for w in rep.homed] == [("temp2", "temp2_x[i][j]")]
    buf = new.array("temp2_x")
    assert buf.temporary and buf.extents == ("m", "n")
    assert all("temp2_x[i][j]" in s.text for s in new.statements if "temp2" in s.text)
    for m, n in ((1, 1), (2, 3), (5, 4), (13, 11)):
        assert same_live_out(scop, new, {"m": m, "n": n}) == [], (m, n)
    # the same loops read after the region: expanded too, its last value copied back to temp2 right after
    # the instance that wrote it (S0's temp2 = 0 where the k loop is empty, m = 1; else S2's)
    after = SYMM.replace("#pragma endscop\n", "#pragma endscop\n  C[0][0] += temp2;\n")
    scop_after = polylab.parse(after).scop
    new_after, rep_after = expand_scalars(scop_after)
    (web,) = rep_after.homed
    assert [w for _, w in web.copies] == ["S0", "S2"]
    for copy, _ in web.copies:
        assert new_after.statement(copy).text == "temp2 = temp2_x[i][j];"
    for m, n in ((1, 1), (1, 4), (2, 3), (5, 4)):
        assert same_live_out(scop_after, new_after, {"m": m, "n": n}) == [], (m, n)


def test_the_optimizer_runs_symms_rows_innermost_and_its_code_computes_the_same():
    from polylab.experiment import verify

    scop = polylab.parse(SYMM).scop
    s = parse_schedule(scop, "optimize(1)", steps=recipe_steps())
    notes = "\n".join(s.notes)
    assert "expand_scalars: temp2 in S0, S2, S3: kept in temp2_x[i][j]" in notes
    assert "contract(temp2_x): temp2_x[i0][i1] -> temp2_xbuf[i0 % 1][i1]" in notes
    assert {c.statement for c in s.provenance.optimize.choices if c.vector} >= {"S1", "S2"}
    for params in ({"m": 13, "n": 11}, {"m": 6, "n": 9}):
        v = verify(scop, s, "openmp", params=params)
        assert v.verified, (params, v.reason)


@needs_omp
@pytest.mark.parametrize("threads", [1, 2])
def test_symms_whole_file_allocates_its_buffer_and_prints_what_the_original_prints(tmp_path, threads):
    from polylab.experiment.rewrite import rewrite

    out = rewrite(polylab.parse(SYMM), SYMM, f"optimize({threads})", "openmp").text
    assert "malloc(sizeof(double) * (size_t)(1) * (size_t)(n))" in out and "free(temp2_xbuf);" in out
    assert "#include <stdlib.h>" in out
    runs = []
    for name, text in (("original", SYMM), ("rewritten", out)):
        src = tmp_path / f"{name}.c"
        src.write_text(text)
        cc = tc.c_compiler()
        subprocess.run([*cc.command, "-O2", "-fopenmp", "-Wall", "-Werror=incompatible-pointer-types",
                        "-Werror=implicit-function-declaration", str(src), "-o", str(tmp_path / name)],
                       check=True, capture_output=True, text=True)
        runs.append(subprocess.run([str(tmp_path / name)], check=True, capture_output=True, text=True,
                                   env={"OMP_NUM_THREADS": str(threads)}).stdout)
    assert runs[0] == runs[1] and len(set(runs[0].split())) > 50


STARTS = ["0.0", "A[i][0]", "B[i]", "C[i] * 0.5"]
OPERANDS = ["A[i][j]", "A[j][i]", "B[j]", "C[j] * A[i][j]"]
INNER = ["", "      C[j] = B[i] + 1.0;\n", "      A[i][j] = w * 0.25;\n", "      B[j + 1] = w;\n"]
ENDS = ["B[i] = w;", "A[i][1] = w * 0.5;", "C[i] = B[i] + w;", "B[i] = B[i] * w;"]
AFTER = ["", "  B[0] += w;\n"]


def accumulation(start, operand, op, inner, end, after):
    """A row accumulation into the local scalar ``w`` of a function, ended in an element, and maybe read
    after the region."""
    return ("void kernel(int N, int M, double A[9][9], double B[10], double C[9])\n{\n  int i, j;\n  double w;\n"
            f"#pragma scop\n  for (i = 0; i < N; i++) {{\n    w = {start};\n    for (j = 0; j < M; j++) {{\n"
            f"      w {op} {operand};\n{inner}    }}\n    {end}\n  }}\n#pragma endscop\n{after}}}\n")


@st.composite
def accumulations(draw):
    return accumulation(draw(st.sampled_from(STARTS)), draw(st.sampled_from(OPERANDS)),
                        draw(st.sampled_from(["+=", "-=", "*="])), draw(st.sampled_from(INNER)),
                        draw(st.sampled_from(ENDS)), draw(st.sampled_from(AFTER)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accumulations(), st.integers(1, 8), st.integers(1, 8))
def test_whatever_it_expands_computes_what_the_original_does(text, n, m):
    scop = polylab.parse(text).scop
    new, rep = expand_scalars(scop)
    assert same_live_out(scop, new, {"N": n, "M": m}) == [], (text, str(rep))
    if "B[0] += w" in text:   # w is read after the region: its last value is copied back to w
        assert scop.dead_after == () and all(w.copies for w in rep.homed)


def test_the_family_expands_them_and_copies_back_what_is_read_after_the_region():
    """A grid of the random family: every web is expanded, and the webs of a w read after the region get
    copies of its last value back to w (none where it is dead after the region), each checked by the
    interpreter, w's final value included."""
    expanded = copied = 0
    for start in STARTS[:2]:
        for inner in INNER:
            for end in ENDS:
                for after in AFTER:
                    scop = polylab.parse(accumulation(start, "A[i][j]", "+=", inner, end, after)).scop
                    new, rep = expand_scalars(scop)
                    expanded += bool(rep.homed)
                    copies = [c for w in rep.homed for c in w.copies]
                    assert bool(copies) is bool(after), (start, inner, end, after)
                    copied += bool(copies)
                    for n, m in ((1, 1), (4, 3), (7, 8)):
                        assert same_live_out(scop, new, {"N": n, "M": m}) == [], (start, inner, end, after)
    assert expanded == 64 and copied == 32, (expanded, copied)


def test_small_constant_buffers_are_local_arrays_and_the_others_on_the_heap():
    from dataclasses import replace

    from polylab.codegen.inplace import LOCAL_BUFFER, _allocations
    from polylab.model.scop import Array

    scop = polylab.parse(SYMM).scop
    bufs = (Array("one", "float", ("1",), declared=False, temporary=True),
            Array("rows", "double", ("2", "16"), declared=False, temporary=True),
            Array("big", "double", (str(LOCAL_BUFFER + 1),), declared=False, temporary=True),
            Array("sized", "double", ("m", "n"), declared=False, temporary=True))
    enter, leave = _allocations(replace(scop, arrays=scop.arrays + bufs))
    assert "  float one[1];\n" in enter and "  double rows[2][16];\n" in enter
    assert f"double *big = malloc(sizeof(double) * (size_t)({LOCAL_BUFFER + 1}));" in enter
    assert "double (*sized)[n] = malloc(sizeof(double) * (size_t)(m) * (size_t)(n));" in enter
    assert leave == "  free(big);\n  free(sized);\n"


#: an NT product summed in a scalar of the file (a fragment's scalar: its value after the region counts)
NT_SUM = (Path(__file__).parent / "unseen_kernels" / "scal_acc.c").read_text()


@needs_omp
@pytest.mark.parametrize("threads", [1, 2])
def test_a_scalar_live_after_the_region_is_expanded_with_its_last_value_copied_back(threads):
    """The web of ``s`` holds the value ``s`` keeps after the region: expanded with a copy of its last
    value back to ``s`` (run right after the instance that wrote it), so the (i, j) loops are free (2.96x
    the original at one thread, N = 520, against 1.00x with s left alone). Both the optimizer's schedule
    and its compiled code compute every element of C and the final s of the original."""
    from polylab.experiment import verify

    scop = polylab.parse(NT_SUM).scop
    new, rep = expand_scalars(scop)
    (web,) = rep.homed
    assert web.copies and "copies its last value back to s" in web.text_line()
    for n in (1, 2, 5):
        assert same_live_out(scop, new, {"N": n}) == [], n
    s = parse_schedule(scop, f"optimize({threads})", steps=recipe_steps())
    assert any("copies its last value back to s" in line for line in s.notes)
    assert all(c.parallel for c in s.provenance.optimize.choices if c.statement in ("S0", "S2"))
    for params in ({"N": 1}, {"N": 9}, {"N": 40}):
        v = verify(scop, s, "openmp", params=params, threads=threads)
        assert v.verified, (params, v.reason)
        assert "s" in v.comparison.arrays
