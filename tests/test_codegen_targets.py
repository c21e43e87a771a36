"""Targets as values (issue 30): each target generates its code, says what building and running it need,
and builds it; nothing outside ``polylab.codegen.targets`` dispatches on a target's name
(``tests/test_architecture.py``, ``target_dispatch``)."""

from __future__ import annotations

import pytest

from polylab import toolchain as tc
from polylab.codegen import C, CUDA, MLIR, OPENMP, PROGRAM_TARGETS, TARGETS, Target, as_target, generate
from polylab.errors import CodegenError, ToolchainError
from polylab.frontend import parse
from polylab.schedule import parse_schedule

SOURCE = "for (i = 1; i < N; i++) for (j = 0; j < N; j++) a[i][j] = a[i - 1][j] + b[j];"


def test_the_targets_by_name():
    assert list(TARGETS) == ["c", "openmp", "cuda", "mlir"]
    assert PROGRAM_TARGETS == ("c", "openmp", "cuda")
    assert [as_target(n) for n in TARGETS] == [C, OPENMP, CUDA, MLIR]
    assert as_target(OPENMP) is OPENMP and str(OPENMP) == "openmp"
    assert (C.parallel, OPENMP.parallel, CUDA.parallel, MLIR.parallel) == (False, True, True, False)
    assert CUDA.memory_limit_mb is None and C.memory_limit_mb == tc.DEFAULT_MEMORY_LIMIT_MB
    with pytest.raises(CodegenError, match="unknown target 'fortran'") as err:
        as_target("fortran")
    assert "c, openmp, cuda, mlir" in (err.value.hint or "")


def test_generated_code_carries_its_target():
    scop = parse(SOURCE).scop
    for target in TARGETS.values():
        code = generate(scop, "original", target.name)
        assert code.target is target and code.language == target.language
        assert (code.program is not None) == target.program
    parallel = parse_schedule(scop, "parallel")
    assert "#pragma omp parallel for" in generate(scop, parallel, OPENMP).kernel
    assert "#pragma omp" not in generate(scop, parallel, C).kernel


def test_what_building_needs():
    assert not MLIR.build_status() and "not a program" in MLIR.build_status().reason
    code = generate(parse(SOURCE).scop, None, MLIR)
    with pytest.raises(ToolchainError, match="not a program"):
        MLIR.compile(code)
    assert bool(CUDA.build_status()) == bool(tc.cuda_compiler_status())
    assert bool(CUDA.run_status()) == tc.has_gpu()
    assert C.run_status() and isinstance(C, Target)


@pytest.mark.skipif(not tc.openmp_status(), reason="needs a C compiler with OpenMP")
def test_a_target_builds_its_code():
    code = generate(parse(SOURCE).scop, None, OPENMP)
    binary = code.target.compile(code, tc.VERIFY_FLAGS)
    assert binary.openmp and binary.language == "c"
    assert not C.compile(generate(parse(SOURCE).scop, None, C), tc.VERIFY_FLAGS).openmp
