"""Fuzzing the front end with mutated real C files: the PolyBench-style examples (through the preprocessor,
with their -D flags) and the corpus, mutated with C and preprocessor pieces. Every input either parses into
models that display, or raises a PolylabError with a line inside the text; never a Python traceback."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polylab
from polylab.errors import PolylabError
from polylab.frontend import parse

POLYBENCH = Path(str(polylab.example_path("polybench/polybench.h"))).parent
#: whole files (their #include "polybench.h" found through -I) and the corpus fragments
TEXTS = [p.read_text() for p in sorted(POLYBENCH.glob("*.c"))] + \
    [polylab.example_path(n).read_text() for n in polylab.examples()]
PIECES = [
    "#define X 3\n", "#define F(a) (a)\n", "#define N\n", "#undef N\n", "#if N > 2\n", "#ifdef N\n", "#else\n",
    "#endif\n", "#elif 1\n", '#include "polybench.h"\n', "#include <stdio.h>\n", "#include \"none.h\"\n",
    "#pragma scop\n", "#pragma endscop\n", "#error x\n", "#", "##", "\\\n", "F(", "SCALAR_VAL(", "_PB_N",
    "POLYBENCH_2D(A, N, N, n, n)", "DATA_TYPE", "(", ")", "[", "]", "{", "}", ";", ",", "=", "+", "*", "/",
    "%", "<", ">", "?", ":", "0", "1", "9999999999999999999", "i", "j", "N", "\n", " ", '"', "'", "/*", "*/",
    "//", "for (i = 0; i < N; i++)", "a = b = ", "if (", "else", "int ", "static ", "void f(void) {",
]
DEFINES = [(), ("MINI_DATASET",), ("N=5",), ("NI=3", "NJ=4"), ("DATA_TYPE_IS_FLOAT", "MINI_DATASET")]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(0, len(text)))
        kind = draw(st.integers(0, 3))
        if kind == 3:  # a directive at the start of a line (#pragma scop around any statements, ...)
            k = text.rfind("\n", 0, k) + 1
            text = text[:k] + draw(st.sampled_from([p for p in PIECES if p.startswith("#")])) + text[k:]
        elif kind == 0:
            text = text[:k] + draw(st.sampled_from(PIECES)) + text[k:]
        elif kind == 1:
            text = text[:k] + text[k + draw(st.integers(1, 8)):]
        else:
            j = draw(st.integers(0, len(text)))
            text = text[:k] + text[j:j + 16] + text[k:]
    return text


def check(text: str, defines) -> None:
    try:
        program = parse(text, defines=defines, include_dirs=[POLYBENCH], filename=str(POLYBENCH / "fuzz.c"))
    except PolylabError as err:
        loc = err.location
        if loc is not None:
            assert 1 <= loc.line <= max(1, len(text.split("\n"))), (loc, err)
        err.render()
        return
    for scop in program.scops:
        str(scop)
        for s in scop.statements:
            assert 1 <= s.line <= len(text.split("\n"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.sampled_from(DEFINES))
def test_mutated_real_files_never_crash(text, defines):
    check(text, defines)


def test_found_by_fuzzing_unclosed_comment():
    """A `/*` never closed hid the rest of a fragment: the error was placed on the line after the text."""
    text = "double A[4][4];\nfor (i = 0; i < 4; i++)\n  for (k = 0; k < /*i; k++)\n    A[i][k] = 0;\n"
    try:
        parse(text)
    except PolylabError as err:
        assert (err.location.line, err.location.column) == (3, 19) and "never closed" in err.message
    else:
        raise AssertionError("an unclosed comment was accepted")
    check(text, ())
