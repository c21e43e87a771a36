"""Student C code in the checks (polylab/grading/student_code.py): what is refused before anything is
compiled, what the loop reader sees (iterators, depth, pragmas), and the one differential run (the candidate
against the reference program, per thread count, on every output array or the named ones)."""

from __future__ import annotations

import pytest

from polylab.frontend import parse
from polylab.grading.answers import AnswerError
from polylab.grading.student_code import candidate_program, judge_student_code, read_code
from polylab.toolchain import c_compiler, supports_openmp

ROWS = """double a[N][N];
double b[N][N];
for (i = 0; i < N; i++)
  for (j = 1; j < N; j++)
    a[i][j] = a[i][j - 1] + b[i][j];
"""
BODY = "a[i][j] = a[i][j - 1] + b[i][j];"
needs_cc = pytest.mark.skipif(c_compiler() is None, reason="no C compiler")


@pytest.mark.parametrize("code, refused", [
    ('printf("x");', "calls printf"),
    ("system(0);", "calls system"),
    ("while (1) { }", "uses a while loop"),
    ("goto out;", "uses goto"),
    ("int *p = 0;", "uses a pointer"),
    ("#pragma GCC optimize(\"O0\")\nfor (i = 0; i < N; i++) a[i][0] = 0;", "only OpenMP pragmas"),
    ("s.x = 1;", "structure member"),
    ("for (i = 0; i < N; i++ {", "is not valid C"),
    ("#pragma omp parallel for\nx = 1;", "not followed by a for loop"),
    ("for (i = 0; i < N; i++) a[i][0] = 0;\n#pragma omp parallel for", "no loop follows"),
])
def test_what_an_answer_may_not_do_is_refused_with_its_place(code, refused):
    with pytest.raises(AnswerError, match=refused):
        read_code(code)


def test_cuda_index_variables_only_where_allowed():
    code = "i = blockIdx.y * blockDim.y + threadIdx.y;"
    assert read_code(code, cuda=True).text == code
    with pytest.raises(AnswerError, match="structure member"):
        read_code(code)


def test_loops_pragmas_and_declarations_are_read():
    code = read_code("for (i = 0; i < N; i++) {\n  #pragma omp parallel for private(k)\n"
                     "  for (int j = 0; j < N; j++)\n    for (k = 0; k < N; k++)\n      a[i][j] = min(i, k);\n}")
    (i, j, k) = code.loops
    assert (i.iterator, i.depth, i.pragma) == ("i", 0, None)
    assert (j.iterator, j.depth, j.pragma, j.declared, j.outer) == ("j", 1, "omp parallel for private(k)", True,
                                                                     ("i",))
    assert (k.iterator, k.depth, k.declared) == ("k", 2, False)
    assert code.pragmas() == (j,) and "#pragma" not in code.without_pragmas() and code.tests == 0
    # a pragma right after a loop header (no braces) still belongs to the loop that follows it
    code = read_code("for (i = 0; i < N; i++)\n#pragma omp parallel for\n  for (j = 0; j < N; j++) a[i][j] = 0;")
    assert [(lp.iterator, lp.pragma) for lp in code.loops] == [("i", None), ("j", "omp parallel for")]


@needs_cc
def test_a_correct_candidate_is_verified_and_a_wrong_one_names_the_first_difference():
    ref = parse(ROWS).scop
    ok = read_code(f"for (j = 1; j < N; j++)\n  for (i = 0; i < N; i++)\n    {BODY}")   # interchanged: legal
    assert judge_student_code(ref, candidate_program(ref, ok), params={"N": 20}).correct
    bad = read_code(f"for (i = 0; i < N; i++)\n  for (j = 2; j < N; j++)\n    {BODY}")
    v = judge_student_code(ref, candidate_program(ref, bad), params={"N": 20})
    assert not v.correct and "first element that differs is a[0][1]" in v.feedback[0]
    assert "the original program leaves" in v.feedback[0]


@needs_cc
def test_only_the_named_arrays_are_compared():
    ref = parse("double a[N];\ndouble out[N];\nfor (i = 0; i < N; i++) { a[i] = 2.0 * i; out[i] = a[i] + 1.0; }").scop
    code = read_code("for (i = 0; i < N; i++) { double t = 2.0 * i; out[i] = t + 1.0; }")
    assert not judge_student_code(ref, candidate_program(ref, code), params={"N": 8}).correct   # a is not written
    assert judge_student_code(ref, candidate_program(ref, code), params={"N": 8}, arrays=("out",)).correct


@needs_cc
def test_compile_errors_and_crashes_are_feedback():
    ref = parse(ROWS).scop
    v = judge_student_code(ref, candidate_program(ref, read_code("for (i = 0; i < N; i++)\n  a[i][0] = q;")),
                         params={"N": 8})
    assert "does not compile: line 2, column 13: 'q' undeclared" in v.feedback[0]
    v = judge_student_code(ref, candidate_program(ref, read_code("for (i = 0; i < 100000000; i++)\n  a[i][0] = 1.0;")),
                         params={"N": 8})
    assert "failed when it ran" in v.feedback[0]


@needs_cc
@pytest.mark.skipif(not supports_openmp(), reason="no OpenMP")
def test_a_race_shows_at_some_thread_count():
    ref = parse(ROWS).scop
    racy = read_code(f"for (i = 0; i < N; i++) {{\n  #pragma omp parallel for\n  for (j = 1; j < N; j++)\n    {BODY}\n}}")
    v = judge_student_code(ref, candidate_program(ref, racy), params={"N": 400}, threads=(1, 2, 3, 4))
    # the race may hide in one run; the grader's dependence check catches it in any case (see lab 2)
    assert v.correct or "thread(s) changes the output" in v.feedback[0]


@needs_cc
def test_student_programs_run_in_the_sandbox_where_namespaces_exist(monkeypatch):
    from polylab.grading import student_code
    from polylab.toolchain import sandbox

    if sandbox.unavailable() is not None:
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    calls = []
    real = sandbox.run
    monkeypatch.setattr(sandbox, "run", lambda box, argv, **kw: calls.append((box, argv)) or real(box, argv, **kw))
    ref = parse(ROWS).scop
    ok = read_code(f"for (i = 0; i < N; i++)\n  for (j = 1; j < N; j++)\n    {BODY}")
    assert student_code.judge_student_code(ref, candidate_program(ref, ok), params={"N": 12}).correct
    (box, argv), = calls
    assert argv[0] == "./program" and box.isolated and not box.python and box.memory_mb == student_code.RUN_MEMORY_MB
    crash = read_code("for (i = 0; i < N; i++)\n  a[i * 100000000][0] = 1.0;")
    v = student_code.judge_student_code(ref, candidate_program(ref, crash), params={"N": 12})
    assert "failed when it ran: it stopped with SIGSEGV" in v.feedback[0]
