"""Tests of polylab.toolchain compilers and build: real compiles with the machine's C compiler."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from polylab.errors import CompileError, PolylabError, ToolchainError
from polylab.toolchain import (FAST_FLAGS, VERIFY_FLAGS, Binary, BuildRequest, Compiler, c_compiler,
                               c_compiler_status, compile, compile_many, cuda_compiler, cuda_flags,
                               gpu_status, has_gpu, mlir_opt_status, report, run, supports_openmp)
from polylab.toolchain import compilers

pytestmark = pytest.mark.skipif(c_compiler() is None, reason="no C compiler on this machine")

HELLO = '#include <stdio.h>\nint main(void) { printf("hello %d\\n", 6 * 7); return 0; }\n'


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def counting_cc(tmp_path: Path) -> tuple[Compiler, Path]:
    """A compiler wrapper that records each compile invocation in a log file, then runs the real one."""
    real = c_compiler()
    assert real is not None
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "counting-cc"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real.path}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return Compiler(path=str(wrapper), kind=real.kind, version=real.version), log


def invocations(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_found_compiler_has_version_and_kind():
    cc = c_compiler()
    assert cc is not None and os.path.isfile(cc.path)
    assert cc.kind in ("gcc", "clang", "cc")
    assert cc.version and cc.version != "unknown version"
    assert c_compiler_status().available


def test_missing_compiler_reason_is_plain(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent-polylab-dir")
    monkeypatch.delenv("CC", raising=False)
    assert c_compiler() is None
    reason = c_compiler_status().reason
    assert "no C compiler found" in reason and "install gcc" in reason
    with pytest.raises(ToolchainError, match="no C compiler found"):
        compile(HELLO)


def test_cc_environment_variable_is_honoured(monkeypatch, counting_cc):
    wrapper, _ = counting_cc
    monkeypatch.setenv("CC", wrapper.path)
    found = c_compiler()
    assert found is not None and found.path == wrapper.path


def test_cache_miss_then_hit_does_not_invoke_compiler(cache, counting_cc):
    cc, log = counting_cc
    first = compile(HELLO, compiler=cc, cache_dir=cache)
    assert not first.cached and invocations(log) == 1
    mtime = first.path.stat().st_mtime_ns
    second = compile(HELLO, compiler=cc, cache_dir=cache)
    assert second.cached and invocations(log) == 1
    assert second.path == first.path and second.path.stat().st_mtime_ns == mtime
    assert second.key == first.key and second.source == HELLO
    assert run(second).stdout == "hello 42\n"


def test_key_changes_with_source_flags_and_openmp(cache, counting_cc):
    cc, log = counting_cc
    a = compile(HELLO, compiler=cc, cache_dir=cache, flags=VERIFY_FLAGS)
    b = compile(HELLO, compiler=cc, cache_dir=cache, flags=FAST_FLAGS)
    c = compile(HELLO + "\n", compiler=cc, cache_dir=cache, flags=VERIFY_FLAGS)
    other = Compiler(path=cc.path, kind=cc.kind, version=cc.version + " (upgraded)")
    d = compile(HELLO, compiler=other, cache_dir=cache, flags=VERIFY_FLAGS)
    assert len({a.key, b.key, c.key, d.key}) == 4
    assert invocations(log) == 4
    assert "-O3" in log.read_text().splitlines()[1]


def test_force_rebuilds(cache, counting_cc):
    cc, log = counting_cc
    compile(HELLO, compiler=cc, cache_dir=cache)
    again = compile(HELLO, compiler=cc, cache_dir=cache, force=True)
    assert not again.cached and invocations(log) == 2
    assert run(again).stdout == "hello 42\n"
    assert [p.name for p in cache.iterdir()] == [again.key]


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("POLYLAB_CACHE", str(tmp_path / "envcache"))
    binary = compile(HELLO)
    assert binary.path.is_relative_to(tmp_path / "envcache")


def test_concurrent_thread_builds_of_one_source_give_one_binary(cache, counting_cc):
    cc, _ = counting_cc
    source = HELLO.replace("6 * 7", "6 * 7 + 0 * __LINE__")
    barrier = threading.Barrier(6)

    def build(_: int) -> Binary:
        barrier.wait()
        return compile(source, compiler=cc, cache_dir=cache)

    with ThreadPoolExecutor(6) as pool:
        binaries = list(pool.map(build, range(6)))
    assert len({b.path for b in binaries}) == 1
    assert sorted(p.name for p in cache.iterdir()) == [binaries[0].key]  # no tmp- leftovers
    assert run(binaries[0]).stdout == "hello 42\n"


def _build_in_process(args: tuple[str, str]) -> str:
    source, cache_dir = args
    return str(compile(source, cache_dir=cache_dir).path)


def test_concurrent_process_builds_same_and_different_sources(cache):
    sources = [HELLO.replace("6 * 7", f"6 * 7 + {k} - {k}") for k in range(2)]
    jobs = [(sources[i % 2], str(cache)) for i in range(8)]
    with ProcessPoolExecutor(4) as pool:
        paths = list(pool.map(_build_in_process, jobs))
    assert len(set(paths)) == 2
    assert len(list(cache.iterdir())) == 2
    for p in set(paths):
        assert subprocess.run([p], capture_output=True, text=True).stdout == "hello 42\n"


def test_compile_error_carries_diagnostics_mapped_to_source(cache):
    source = "#include <stdio.h>\nint main(void) {\n    int x = undefined_y + 1;\n    return x;\n}\n"
    with pytest.raises(CompileError) as info:
        compile(source, cache_dir=cache)
    err = info.value
    assert isinstance(err, PolylabError)
    assert "undefined_y" in err.message
    assert err.location is not None and err.location.line == 3 and err.location.column == 13
    first = [d for d in err.diagnostics if d.severity == "error"][0]
    assert (first.line, first.column, first.file) == (3, 13, "kernel.c")
    assert first.source_line == "    int x = undefined_y + 1;"
    text = err.render()
    assert "    int x = undefined_y + 1;" in text and "^~~~~~~~~~" in text
    assert "undefined_y" in err.compiler_output
    assert not any(p.name.startswith("tmp-") for p in cache.iterdir())


def test_link_error_is_a_compile_error(cache):
    with pytest.raises(CompileError, match="undefined reference"):
        compile("void missing_function(void);\nint main(void) { missing_function(); return 0; }\n",
                cache_dir=cache)


def test_warnings_are_kept_on_success_and_on_cache_hit(cache):
    source = "int main(void) { int unused; return 0; }\n"
    flags = (*VERIFY_FLAGS, "-Wall")
    built = compile(source, flags=flags, cache_dir=cache)
    assert any("unused" in d.message for d in built.warnings)
    hit = compile(source, flags=flags, cache_dir=cache)
    assert hit.cached and any("unused" in d.message for d in hit.warnings)


def test_unknown_language_is_an_error():
    with pytest.raises(ToolchainError, match="unknown language"):
        compile(HELLO, language="fortran")


def test_openmp_probe_and_build(cache):
    if not supports_openmp():
        pytest.skip(compilers.openmp_status().reason)
    src = ('#include <omp.h>\n#include <stdio.h>\nint main(void) { int n = 0;\n'
           '#pragma omp parallel reduction(+:n)\n n += 1;\n printf("%d\\n", n); return 0; }\n')
    binary = compile(src, openmp=True, cache_dir=cache)
    assert binary.openmp and "-fopenmp" in binary.command
    assert run(binary, threads=3).stdout.strip() == "3"


def test_compile_many_reports_progress_and_errors_in_order(cache):
    sources = [HELLO, "int main(void) { return syntax error; }\n", HELLO.replace("hello", "hi")]
    seen: list[tuple[int, int]] = []
    results = compile_many([BuildRequest(s) for s in sources], cache_dir=cache, max_workers=2,
                           progress=lambda done, total, _: seen.append((done, total)))
    assert isinstance(results[0], Binary) and isinstance(results[2], Binary)
    assert isinstance(results[1], CompileError)
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]
    assert run(results[2]).stdout == "hi 42\n"


def test_cuda_flags_translation():
    assert cuda_flags(VERIFY_FLAGS) == ("-O2", "--fmad=false", "-Xcompiler", "-ffp-contract=off", "-Xcompiler", "-Wall")
    assert cuda_flags(("-O3", "-march=native", "-arch=sm_90")) == ("-O3", "-Xcompiler", "-march=native",
                                                                   "-arch=sm_90")


def test_report_lists_every_tool_with_reasons():
    rep = report()
    text = str(rep)
    for label in ("C compiler", "OpenMP", "CUDA compiler", "NVIDIA GPU", "mlir-opt"):
        assert label in text
    for avail in (rep.cuda, rep.gpu, rep.mlir):
        assert avail.available or avail.reason
    assert set(rep.to_json()) == {"c", "openmp", "cuda", "gpu", "mlir"}
    assert mlir_opt_status().available == (rep.mlir_opt is not None)


CUDA_SOURCE = """\
#include <stdio.h>
__global__ void scale(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 2.0f * a[i] + 1.0f;
}
int main(void) {
    const int n = 256;
    float host[256], *dev;
    for (int i = 0; i < n; i++) host[i] = (float)i;
    if (cudaMalloc(&dev, n * sizeof(float)) != cudaSuccess) { fprintf(stderr, "no device\\n"); return 5; }
    cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
    scale<<<(n + 127) / 128, 128>>>(dev, n);
    cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dev);
    printf("%g %g\\n", host[0], host[255]);
    return 0;
}
"""


@pytest.mark.needs_nvcc
@pytest.mark.skipif(cuda_compiler() is None, reason=compilers.cuda_compiler_status().reason)
def test_nvcc_compiles_cuda_and_runs_where_a_gpu_exists(cache):
    binary = compile(CUDA_SOURCE, language="cuda", flags=VERIFY_FLAGS, cache_dir=cache)
    assert binary.path.is_file() and binary.source_path.name == "kernel.cu"
    assert "--fmad=false" in binary.command
    with pytest.raises(CompileError) as info:
        compile(CUDA_SOURCE.replace("2.0f * a[i]", "2.0f * b[i]"), language="cuda", cache_dir=cache)
    assert info.value.location is not None and info.value.location.line == 4
    assert "b" in info.value.message
    if not has_gpu():
        pytest.skip(f"compiled only: {gpu_status().reason}")
    assert run(binary, timeout=60).stdout.split() == ["1", "511"]


def test_an_incomplete_cache_entry_is_rebuilt(cache):
    first = compile(HELLO, cache_dir=cache)
    first.path.unlink()  # damaged by hand
    again = compile(HELLO, cache_dir=cache)
    assert not again.cached and again.path == first.path and run(again).stdout == "hello 42\n"
