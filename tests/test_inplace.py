"""Whole-file output (issue 31, items 1 and 3): ``codegen -o`` / ``optimize -o`` write the user's file with
each ``#pragma scop`` region replaced in place; the file compiles in its own build and prints what the
original prints; every byte outside the regions (and the definitions placed before the function) is the
original's; ``--param`` never changes the schedule chosen, ``--specialize`` does."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polylab
from polylab import toolchain as tc
from polylab.cli import main
from polylab.codegen.inplace import region_code, whole_file
from polylab.errors import CodegenError
from polylab.experiment.rewrite import rewrite
from polylab.frontend import parse

needs_omp = pytest.mark.skipif(tc.c_compiler() is None or not tc.openmp_status(),
                               reason="needs a C compiler with OpenMP")

#: a program of its own: the kernel is called at two sizes, and main prints every element
PROGRAM = """\
#include <stdio.h>
#define N 40
static double A[N][N];

static
void kernel(int n, double alpha, double x[N])
{
  int i, j;
  double beta = 0.25;
#pragma scop
  for (i = 1; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = A[i - 1][j] * alpha + x[j] * beta;
#pragma endscop
}

int main(void)
{
  double x[N];
  for (int k = 0; k < N; k++) {
    x[k] = 1.0 / (k + 1);
    for (int l = 0; l < N; l++)
      A[k][l] = (double)(k * l % 7) / 7.0;
  }
  kernel(N, 0.5, x);
  kernel(N - 3, 0.75, x);
  for (int k = 0; k < N; k++)
    for (int l = 0; l < N; l++)
      printf("%.17g\\n", A[k][l]);
  return 0;
}
"""


def _build_and_run(text: str, tmp: Path, name: str, flags: tuple[str, ...] = (), include: Path | None = None,
                   threads: int = 2) -> subprocess.CompletedProcess[str]:
    src = tmp / f"{name}.c"
    src.write_text(text)
    cc = tc.c_compiler()
    assert cc is not None
    inc = ["-I", str(include)] if include else []
    subprocess.run([*cc.command, "-O2", "-fopenmp", "-Wall", "-Werror=incompatible-pointer-types", *inc, *flags,
                    str(src), "-o", str(tmp / name), "-lm"], check=True, capture_output=True, text=True)
    return subprocess.run([str(tmp / name)], check=True, capture_output=True, text=True,
                          env={"OMP_NUM_THREADS": str(threads), "PATH": "/usr/bin:/bin"})


@needs_omp
@pytest.mark.parametrize("spec,params,specialize", [("tile(8, 8); parallel", None, False),
                                                    ("optimize(2)", {"n": 40}, False),
                                                    ("optimize(2)", {"n": 40}, True), ("original", None, False)])
def test_the_rewritten_program_prints_what_the_original_prints(tmp_path, spec, params, specialize):
    program = parse(PROGRAM)
    out = rewrite(program, PROGRAM, spec, "openmp", params=params, specialize=specialize)
    assert "#pragma scop" not in out.text and "polylab" in out.text
    assert out.regions[0].sizes == ("n = 40" if specialize else "any value of n") + " with N = 40"
    if params:   # specialised for n = 40, and the call with n = 37 runs the general code (or the source order)
        assert "if (n == 40) {" in out.text and "} else {" in out.text
    want = _build_and_run(PROGRAM, tmp_path, "original").stdout
    got = _build_and_run(out.text, tmp_path, "rewritten").stdout
    assert want == got and len(set(want.split())) > 40


#: a region that writes a scalar the function reads after it
SCALAR = """\
#include <stdio.h>
#define N 30
static double y[N];

static void kernel(int n, double x[N])
{
  int i;
  double s;
#pragma scop
  s = 0.0;
  for (i = 0; i < n; i++) {
    s = s + x[i];
    y[i] = s * x[i];
  }
#pragma endscop
  y[0] += s;
}

int main(void)
{
  double x[N];
  for (int k = 0; k < N; k++)
    x[k] = 1.0 / (k + 1);
  kernel(N, x);
  kernel(N - 4, x);
  for (int k = 0; k < N; k++)
    printf("%.17g\\n", y[k]);
  return 0;
}
"""


@needs_omp
@pytest.mark.parametrize("target", ["c", "openmp"])
def test_the_whole_region_runs_in_a_function_whose_arrays_are_restrict(tmp_path, target):
    """Not only the OpenMP bodies: the sequential part of the code (here all of it, with the C target) gets
    the arrays as restrict pointers, in a static function called in place of the region; a scalar the
    region writes comes back to the user's variable."""
    out = rewrite(parse(PROGRAM), PROGRAM, "tile(8, 8)", target).text
    signature = ("static void polylab_scop0_region(int n, double alpha, double beta, double (*restrict A)[40], "
                 "double *restrict x)\n{\n")
    assert signature in out and "\n  polylab_scop0_region(n, alpha, beta, A, x);\n" in out
    kernel = out[out.index("void kernel(int n"):out.index("int main(void)")]
    assert "for (" not in kernel and "do not overlap in memory" in kernel
    assert _build_and_run(out, tmp_path, "tiled").stdout == _build_and_run(PROGRAM, tmp_path, "original").stdout
    scalar = rewrite(parse(SCALAR), SCALAR, "original", target).text
    assert "double *polylab_ref_s" in scalar and "polylab_scop0_region(n, x, y, &s);" in scalar
    want = _build_and_run(SCALAR, tmp_path, "scalar").stdout
    assert _build_and_run(scalar, tmp_path, "scalar_out").stdout == want and len(set(want.split())) > 20


# -- the untouched bytes are untouched (hypothesis) -------------------------------------------------------
_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_characters="*/\\"), max_size=30)
_ITEM = st.one_of(_TEXT.map(lambda t: f"/* {t} ; }} #pragma scop */"), _TEXT.map(lambda t: f"// {t} }};"),
                  st.sampled_from(["", "  ", "\t", "int g_{p} = 3;", "#define UNUSED_{p} 7",
                                   "static double h_{p}[4] = {1, 2, 3, 4};", "/* multi\n line */"]))
#: padding lines (each declaration once: its name is made unique by the anchor and its place)
_PADDING = st.lists(_ITEM, max_size=4, unique=True)


def _file(pads: list[list[str]]) -> str:
    """PROGRAM with padding before the function, inside it before and after the region, and after it."""
    text = PROGRAM
    for k, (anchor, pad) in enumerate(zip(("\nstatic\nvoid kernel", "  double beta = 0.25;\n",
                                           "#pragma endscop\n", "\nint main(void)"), pads)):
        at = text.index(anchor) + (len(anchor) if anchor.endswith("\n") else 1)
        lines = "".join(item.replace("{p}", f"{k}_{j}") + "\n" for j, item in enumerate(pad))
        text = text[:at] + lines + text[at:]
    return text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pads=st.lists(_PADDING, min_size=4, max_size=4), crlf=st.booleans(), spec=st.sampled_from(
    ["original", "tile(4, 8)", "interchange(0, 1)"]))
def test_bytes_outside_the_region_are_untouched(pads, crlf, spec):
    text = _file(pads)
    program = parse(text)
    scop = program.scop
    place = scop.placement
    lines = text.split("\n")
    assert lines[place.first_line - 1].strip() == "#pragma scop"
    assert lines[place.last_line - 1].strip() == "#pragma endscop"
    assert lines[place.function_line - 1] == "static" and place.function == "kernel"
    if crlf:
        text = text.replace("\n", "\r\n")
        lines = text.split("\n")
    out = rewrite(program, text, spec, "openmp").text
    prefix = "\n".join(lines[:place.function_line - 1]) + "\n"
    between = "\n" + "\n".join(lines[place.function_line - 1:place.first_line - 1]) + "\n"
    suffix = "\n" + "\n".join(lines[place.last_line:])
    assert out.startswith(prefix) and out.endswith(suffix)
    middle = out[len(prefix):len(out) - len(suffix)]
    definitions, sep, body = middle.partition(between)
    assert sep, "the lines from the function's start to the region are not kept as they were"
    assert definitions.startswith("/* polylab: definitions") and body.lstrip(" ").startswith("/*")
    assert ("\r\n" in body) == crlf and all(ln.endswith("\r") for ln in body.split("\n")[:-1]) == crlf
    assert "pragma scop" not in body


# -- refusals -------------------------------------------------------------------------------------------------
def test_what_cannot_be_replaced_in_place_is_refused():
    fragment = parse("for (i = 0; i < N; i++) a[i] = 2 * a[i];").scop
    with pytest.raises(CodegenError, match="not delimited by #pragma scop"):
        region_code(fragment, None, "c")
    reads_after = PROGRAM.replace("#pragma endscop\n", "#pragma endscop\n  A[0][0] = i;\n")
    with pytest.raises(CodegenError, match="loop counter.*i.*after the region"):
        region_code(parse(reads_after).scop, None, "c")
    assigned_after = PROGRAM.replace("#pragma endscop\n", "#pragma endscop\n  for (i = 0; i < 2; i++) A[i][0] = i;\n")
    assert parse(assigned_after).scop.placement.read_after == ()
    with pytest.raises(CodegenError, match="whole-file output is C or OpenMP"):
        region_code(parse(PROGRAM).scop, None, "cuda")
    clash = PROGRAM.replace("#define N 40", "#define N 40\n#define c0 1")
    with pytest.raises(CodegenError, match="macro c0"):
        rewrite(parse(clash), clash, "original", "c")
    lone_cr = PROGRAM.replace("int i, j;", "int i,\rj;")
    with pytest.raises(CodegenError, match="carriage returns"):
        whole_file(lone_cr, [region_code(parse(PROGRAM).scop, None, "c")])


def test_the_file_guards_the_macros_and_types_it_was_generated_for():
    out = rewrite(parse(PROGRAM), PROGRAM, "tile(8, 8); parallel", "openmp").text
    assert "#if (defined(N) && (N) != 40)" in out and "#error" in out
    assert "__builtin_types_compatible_p(__typeof__(A[0][0]), double)" in out
    assert "static inline int polylab_imin(int polylab_a, int polylab_b)" in out
    assert "static void polylab_scop0_par0(int c" in out and "double (*restrict A)[40]" in out


# -- PolyBench-style files with their own main (polylab/examples/polybench), MINI size ------------------------
POLYBENCH = Path(polylab.__file__).parent / "examples" / "polybench"


@needs_omp
@pytest.mark.parametrize("kernel", ["bicg", "trmm", "seidel-2d", "correlation"])
def test_polybench_files_rewritten_print_the_same_dump(tmp_path, capsys, kernel):
    source = POLYBENCH / f"{kernel}.c"
    out = tmp_path / f"{kernel}.polylab.c"
    assert main(["optimize", str(source), "-DMINI_DATASET", "--threads", "2", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"wrote {out}" in said and "chosen for" in said
    flags = ("-DMINI_DATASET", "-DPOLYBENCH_DUMP_ARRAYS")
    want = _build_and_run(source.read_text(), tmp_path, "original", flags, include=POLYBENCH).stderr
    got = _build_and_run(out.read_text(), tmp_path, "rewritten", flags, include=POLYBENCH).stderr
    assert "begin dump" in want and want == got


# -- one schedule per choice (item 3) ---------------------------------------------------------------------
def _optimize_json(capsys, kernel: str, *extra: str) -> dict:
    assert main(["optimize", kernel, "--threads", "2", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_param_does_not_change_the_schedule_optimize_picks(capsys):
    """The issue's case: lu with the size fixed got an untiled schedule instead of the tiled one."""
    free = _optimize_json(capsys, "lu.c")
    fixed = _optimize_json(capsys, "lu.c", "--param", "N=1000")
    assert fixed["schedule"] == free["schedule"]
    assert free["chosen_for"] == fixed["chosen_for"] == "any value of N"


def test_codegen_param_keeps_the_schedule_and_specialize_chooses_for_the_sizes(capsys):
    spec = "optimize(2)"
    assert main(["codegen", "mvt.c", "--schedule", spec, "--kernel-only"]) == 0
    plain = _maps(capsys.readouterr().out)
    assert main(["codegen", "mvt.c", "--schedule", spec, "--param", "N=300", "--kernel-only"]) == 0
    assert _maps(capsys.readouterr().out) == plain and plain
    assert _optimize_json(capsys, "mvt.c", "--param", "N=300", "--specialize")["chosen_for"] == "N = 300"
    assert main(["codegen", "mvt.c", "--specialize"]) == 2
    assert "--specialize chooses the schedule for the --param values" in capsys.readouterr().err


def _maps(code: str) -> list[str]:
    """The statements' time maps on the header's ``schedule:`` line, without their constraints."""
    line = next(ln for ln in code.splitlines() if "schedule:" in ln)
    return sorted(re.findall(r"S\d+\[[^\]]*\] -> \[[^\]]*\]", line))
