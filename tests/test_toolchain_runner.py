"""Tests of polylab.toolchain.runner: contained runs of real compiled programs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from polylab.errors import RunFailure, RunTimeout, ToolchainError
from polylab.toolchain import (HARNESS_SUPPORT_C, OUTPUT_DIR_VARIABLE, c_compiler, compile, compile_and_run,
                               run, signal_description, supports_openmp)

pytestmark = pytest.mark.skipif(c_compiler() is None, reason="no C compiler on this machine")


@pytest.fixture
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.getbasetemp() / "runner-cache"


def test_plain_run_captures_output_args_env_and_stdin(cache):
    src = ('#include <stdio.h>\n#include <stdlib.h>\n'
           'int main(int argc, char **argv) { char buf[64] = {0};\n'
           '  if (!fgets(buf, sizeof buf, stdin)) buf[0] = 0;\n'
           '  printf("%d %s %s %s", argc, argv[1], getenv("POLYLAB_TEST_VAR"), buf);\n'
           '  fprintf(stderr, "note\\n"); return 0; }\n')
    result = compile_and_run(src, ["N=8"], env={"POLYLAB_TEST_VAR": "yes"}, stdin="typed\n", cache_dir=cache)
    assert result.ok and result.returncode == 0
    assert result.stdout == "2 N=8 yes typed\n"
    assert result.stderr == "note\n"
    assert result.args == ("N=8",)
    assert result.seconds > 0 and result.max_rss_mb is not None and result.max_rss_mb > 0


def test_program_runs_in_a_fresh_working_directory_that_is_removed(cache):
    src = ('#include <stdio.h>\n#include <unistd.h>\nint main(void) { char b[4096];\n'
           '  FILE *f = fopen("scratch.txt", "w"); fputs("x", f); fclose(f);\n'
           '  printf("%s", getcwd(b, sizeof b)); return 0; }\n')
    result = compile_and_run(src, cache_dir=cache)
    workdir = Path(result.stdout)
    assert workdir != Path.cwd() and not workdir.exists()


def test_infinite_loop_is_stopped_at_the_timeout(cache):
    binary = compile("int main(void) { volatile int x = 0; for (;;) x++; }\n", cache_dir=cache)
    start = time.perf_counter()
    with pytest.raises(RunTimeout) as info:
        run(binary, timeout=0.5)
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0
    assert "stopped after 0.5 s: the program did not finish (an infinite loop?)" in info.value.message
    assert info.value.result.timed_out


def test_timeout_kills_the_whole_process_group(cache, tmp_path):
    # the program forks a child that would outlive it; both must be gone after the timeout
    marker = tmp_path / "child-survived"
    src = ('#include <unistd.h>\n#include <stdio.h>\nint main(void) {\n'
           '  if (fork() == 0) { sleep(1); FILE *f = fopen("' + str(marker) + '", "w"); if (f) fclose(f);'
           ' return 0; }\n  for (;;) pause();\n}\n')
    with pytest.raises(RunTimeout):
        compile_and_run(src, timeout=0.5, cache_dir=cache)
    time.sleep(1.5)
    assert not marker.exists()


def test_segfault_is_a_run_failure_with_the_signal_in_words(cache):
    src = "int main(void) { volatile int *p = (int *)16; return *p; }\n"
    with pytest.raises(RunFailure) as info:
        compile_and_run(src, cache_dir=cache)
    err = info.value
    assert "SIGSEGV" in err.message and "segmentation fault: an out-of-bounds access?" in err.message
    assert err.result.signal == "SIGSEGV" and err.result.returncode < 0


def test_nonzero_exit_shows_the_tail_of_stderr(cache):
    src = ('#include <stdio.h>\nint main(void) { for (int i = 0; i < 40; i++) fprintf(stderr, "line %d\\n", i);'
           ' return 7; }\n')
    with pytest.raises(RunFailure) as info:
        compile_and_run(src, cache_dir=cache)
    msg = info.value.message
    assert "exited with status 7" in msg and "line 39" in msg and "line 0\n" not in msg
    result = compile_and_run(src, cache_dir=cache, check=False)
    assert result.returncode == 7 and not result.ok


HOG_UNCHECKED = r"""
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
int main(void) {
    volatile size_t sum = 0;
    for (int i = 0; i < 256; i++) {           /* up to 4 GiB in 16 MiB pieces, never checked */
        char *p = malloc(16u << 20);
        memset(p, i, 16u << 20);
        sum += (size_t)p[i];
    }
    printf("%zu\n", (size_t)sum);
    return 0;
}
"""


def test_memory_hog_fails_with_a_memory_message(cache):
    with pytest.raises(RunFailure) as info:
        compile_and_run(HOG_UNCHECKED, memory_limit_mb=128, timeout=20, cache_dir=cache)
    msg = info.value.message
    assert "memory limit" in msg and "128 MB" in msg
    # the program died instead of growing: its exit was a failure well before the 20 s timeout
    assert not info.value.result.timed_out and info.value.result.returncode != 0


def test_memory_hog_using_the_harness_allocator_says_out_of_memory(cache):
    src = HARNESS_SUPPORT_C + r"""
int main(void) {
    double *a = polylab_alloc((size_t)1 << 33, "A");   /* 8 GiB */
    a[0] = 1.0;
    return (int)a[0];
}
"""
    with pytest.raises(RunFailure) as info:
        compile_and_run(src, memory_limit_mb=256, cache_dir=cache)
    msg = info.value.message
    assert "ran out of memory" in msg and "256 MB" in msg and "allocating A" in msg
    assert info.value.hint and "memory_limit_mb" in info.value.hint


def test_openmp_program_runs_with_the_requested_threads(cache):
    if not supports_openmp():
        pytest.skip("the C compiler has no OpenMP support")
    src = ('#include <omp.h>\n#include <stdio.h>\nint main(void) { int team = 0;\n'
           '#pragma omp parallel\n { _Pragma("omp single") team = omp_get_num_threads(); }\n'
           ' printf("%d\\n", team); return 0; }\n')
    binary = compile(src, openmp=True, cache_dir=cache)
    assert run(binary, threads=2).stdout.strip() == "2"
    assert run(binary, threads=1).stdout.strip() == "1"


def test_output_directory_is_passed_to_the_program(cache, tmp_path):
    src = ('#include <stdio.h>\n#include <stdlib.h>\nint main(void) { printf("%s", getenv("'
           + OUTPUT_DIR_VARIABLE + '")); return 0; }\n')
    out = tmp_path / "out"
    result = compile_and_run(src, output_dir=out, cache_dir=cache)
    assert Path(result.stdout) == out.resolve() and out.is_dir()
    assert result.output_dir == out.resolve()


def test_bad_arguments_are_polylab_errors(tmp_path):
    with pytest.raises(ToolchainError, match="no program"):
        run(tmp_path / "missing")
    with pytest.raises(ToolchainError, match="positive"):
        run("/bin/true", timeout=0)
    with pytest.raises(ToolchainError, match="at least 1"):
        run("/bin/true", threads=0)


def test_signal_description_names_common_signals():
    assert signal_description(11).startswith("SIGSEGV (segmentation fault")
    assert "division by zero" in signal_description(8)
    assert signal_description(999) == "signal 999"
