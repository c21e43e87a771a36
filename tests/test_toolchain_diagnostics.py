"""Tests of compiler-diagnostic parsing on recorded gcc, clang, nvcc and linker output."""

from __future__ import annotations

from polylab.toolchain import parse_diagnostics

SOURCE = "int main(void) {\n    int x = y + 1;\n    return x\n}\n"

GCC = """kernel.c: In function 'main':
kernel.c:2:13: error: 'y' undeclared (first use in this function)
    2 |     int x = y + 1;
      |             ^
kernel.c:2:13: note: each undeclared identifier is reported only once for each function it appears in
kernel.c:3:13: error: expected ';' before '}' token
"""

CLANG = """kernel.c:2:13: error: use of undeclared identifier 'y'
    int x = y + 1;
            ^
kernel.c:3:13: error: expected ';' after return statement
1 warning and 2 errors generated.
"""

NVCC = """kernel.cu(2): error: identifier "y" is undefined
      int x = y + 1;
              ^

kernel.cu(3): warning #550-D: variable "x" was set but never used
1 error detected in the compilation of "kernel.cu".
"""

LINK = """/usr/bin/ld: /tmp/ccX.o: in function `main':
kernel.c:(.text+0x5): undefined reference to `g'
collect2: error: ld returned 1 exit status
"""


def test_gcc_diagnostics_with_columns_and_source_lines():
    diags = parse_diagnostics(GCC, source=SOURCE, source_names=("kernel.c",))
    assert [(d.line, d.column, d.severity) for d in diags] == [(2, 13, "error"), (2, 13, "note"),
                                                              (3, 13, "error")]
    assert diags[0].source_line == "    int x = y + 1;"
    assert diags[0].location.text == "y"
    assert "    int x = y + 1;\n                ^" in diags[0].render()


def test_clang_diagnostics():
    diags = parse_diagnostics(CLANG, source=SOURCE)
    assert [(d.line, d.column, d.severity) for d in diags] == [(2, 13, "error"), (3, 13, "error")]
    assert "undeclared identifier 'y'" in diags[0].message


def test_nvcc_diagnostics_recover_the_column_from_the_caret():
    diags = parse_diagnostics(NVCC, source=SOURCE, source_names=("kernel.cu",))
    assert [(d.line, d.column, d.severity) for d in diags] == [(2, 13, "error"), (3, None, "warning")]
    assert diags[1].message == 'variable "x" was set but never used'
    assert diags[0].source_line == "    int x = y + 1;"


def test_linker_errors_have_no_line():
    diags = parse_diagnostics(LINK)
    assert len(diags) == 1 and diags[0].line is None and diags[0].severity == "error"
    assert "undefined reference to `g'" in diags[0].message


def test_diagnostics_for_other_files_get_no_source_line():
    out = "/usr/include/stdio.h:5:1: error: boom\nkernel.c:1:1: warning: w\n"
    diags = parse_diagnostics(out, source=SOURCE, source_names=("kernel.c",))
    assert diags[0].source_line == "" and diags[1].source_line == "int main(void) {"
