"""The toolchain under a hostile machine (issue 15, section 2): read-only or misconfigured caches, a full disk,
damaged cached binaries, interrupts and timeouts; compile errors blamed on the right code."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import polylab
from polylab import toolchain as tc
from polylab.cli import main
from polylab.codegen import generate
from polylab.errors import CompileError, RunTimeout, ToolchainError
from polylab.experiment import verify
from polylab.experiment.verify import VERIFY_FLAGS, compile_variant
from polylab.toolchain import build as build_module

pytestmark = pytest.mark.skipif(tc.c_compiler() is None, reason="no C compiler on this machine")

HELLO = '#include <stdio.h>\nint main(void) { printf("hello %d\\n", 6 * 7); return 0; }\n'
OTHER = '#include <stdio.h>\nint main(void) { printf("other\\n"); return 0; }\n'


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


# -- the cache directory ----------------------------------------------------------------------------------
def test_a_read_only_cache_is_still_read_and_new_builds_go_to_a_private_directory(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = tc.compile(HELLO, cache_dir=cache)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the private directory goes
    cache.chmod(stat.S_IRUSR | stat.S_IXUSR)
    real_access = os.access
    # root ignores permission bits: make the cache look read-only to it as well
    monkeypatch.setattr(build_module.os, "access",
                        lambda p, mode: False if Path(p) == cache else real_access(p, mode))
    try:
        again = tc.compile(HELLO, cache_dir=cache)
        assert again.cached and again.path == first.path
        fresh = tc.compile(OTHER, cache_dir=cache)
        assert not fresh.cached and fresh.path.is_relative_to(tmp_path / f"polylab-cache-{os.getuid()}")
        assert tc.run(fresh).stdout == "other\n"
        assert tc.compile(OTHER, cache_dir=cache).cached  # found again in the private directory
    finally:
        cache.chmod(stat.S_IRWXU)


def test_polylab_cache_naming_a_file_is_said_in_words(tmp_path, monkeypatch, capsys):
    afile = tmp_path / "not-a-directory"
    afile.write_text("x")
    monkeypatch.setenv("POLYLAB_CACHE", str(afile))
    with pytest.raises(ToolchainError, match="is not a directory") as info:
        tc.compile(HELLO)
    assert "POLYLAB_CACHE" in info.value.message and info.value.hint
    assert main(["run", "sweep2d.c", "--param", "N=6", "--repeat", "1"]) == 2
    err = capsys.readouterr().err
    assert "is not a directory" in err and "Traceback" not in err


def test_a_cache_that_cannot_be_created_is_said_in_words(tmp_path):
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(ToolchainError, match="cannot create the build cache"):
        tc.compile(HELLO, cache_dir=afile / "sub")


# -- a full disk --------------------------------------------------------------------------------------------
def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_while_writing_the_source_is_not_a_compile_error(tmp_path, monkeypatch):
    monkeypatch.setattr(Path, "write_text", _enospc)
    with pytest.raises(ToolchainError) as info:
        tc.compile(HELLO, cache_dir=tmp_path / "cache")
    assert not isinstance(info.value, CompileError)
    assert "no space left" in info.value.message and "clear_cache" in info.value.hint


def test_a_full_disk_while_making_the_build_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(build_module.tempfile, "mkdtemp", _enospc)
    with pytest.raises(ToolchainError, match="no space left"):
        tc.compile(HELLO, cache_dir=tmp_path / "cache")


def test_a_compiler_that_runs_out_of_disk_is_not_blamed_on_the_code(tmp_path):
    fake = tmp_path / "fullcc"
    fake.write_text('#!/bin/sh\necho "kernel.c:1:1: fatal error: error writing to /tmp/ccA.s: No space left on '
                    'device" >&2\nexit 1\n')
    fake.chmod(0o755)
    cc = tc.Compiler(path=str(fake), kind="gcc", version="fake")
    with pytest.raises(ToolchainError) as info:
        tc.compile(HELLO, compiler=cc, cache_dir=tmp_path / "cache")
    assert not isinstance(info.value, CompileError)
    assert "could not write its files" in info.value.message and "No space left" in info.value.message


# -- damaged cache entries --------------------------------------------------------------------------------
def test_a_truncated_cached_binary_is_rebuilt_not_run(tmp_path):
    cache = tmp_path / "cache"
    first = tc.compile(HELLO, cache_dir=cache)
    first.path.write_bytes(first.path.read_bytes()[:100])  # truncated, still executable
    with pytest.raises(ToolchainError, match="not a program this machine can run") as info:
        tc.run(first.path)  # run directly: a clear message, with the way out
    assert "force" in info.value.hint
    again = tc.compile(HELLO, cache_dir=cache)
    assert not again.cached and again.path == first.path and tc.run(again).stdout == "hello 42\n"


def test_a_corrupted_cached_binary_of_the_same_size_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    first = tc.compile(HELLO, cache_dir=cache)
    data = bytearray(first.path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    first.path.write_bytes(bytes(data))
    assert not tc.entry_is_intact(first.path.parent)
    again = tc.compile(HELLO, cache_dir=cache)
    assert not again.cached and tc.entry_is_intact(again.path.parent)


def test_run_force_rebuilds_every_binary(monkeypatch, capsys):
    seen: list[bool] = []
    real = tc.compile

    def recording(*args, **kwargs):
        seen.append(bool(kwargs.get("force")))
        return real(*args, **kwargs)

    monkeypatch.setattr(tc, "compile", recording)
    assert main(["run", "sweep2d.c", "--param", "N=6", "--repeat", "1", "--force"]) == 0
    assert len(seen) == 4 and all(seen)
    seen.clear()
    assert main(["run", "sweep2d.c", "--param", "N=6", "--repeat", "1"]) == 0
    assert len(seen) == 4 and not any(seen)


# -- interrupts -----------------------------------------------------------------------------------------------
SPAWNER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    pid_t child = fork();
    if (child == 0) { for (;;) pause(); }
    FILE *f = fopen(argv[1], "w");
    fprintf(f, "%d %d\n", (int)getpid(), (int)child);
    fclose(f);
    for (;;) pause();
}
"""


@contextlib.contextmanager
def _interrupt_after(seconds: float) -> Iterator[None]:
    """SIGINT to this process after ``seconds``, with Python's own handler (KeyboardInterrupt) installed
    for the block: in the full suite an earlier test in the same worker can leave another handler for
    SIGINT (both interrupt tests then ran into the 60 s timeout, 2026-12-05), and this test is about the
    toolchain's answer to KeyboardInterrupt, not about that handler."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)


def _gone(pid: int) -> bool:
    """Whether ``pid`` is gone within 5 s: it no longer exists (its /proc entry is missing, or vanishes
    while being read); a process still being killed, or a zombie of another parent, is waited for."""
    for _ in range(100):
        try:
            Path(f"/proc/{pid}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


def test_an_interrupted_run_kills_the_program_and_its_children_and_leaves_no_zombie(tmp_path):
    binary = tc.compile(SPAWNER, cache_dir=tmp_path / "cache")
    pids = tmp_path / "pids"
    with _interrupt_after(1.0), pytest.raises(KeyboardInterrupt):
        tc.run(binary, [str(pids)], timeout=60)
    parent, child = (int(x) for x in pids.read_text().split())
    with pytest.raises(ChildProcessError):
        os.waitpid(parent, os.WNOHANG)  # already reaped by the toolchain: no zombie of ours
    assert _gone(parent) and _gone(child)


def test_an_interrupted_compile_kills_the_compiler_group_and_cleans_up(tmp_path):
    fake = tmp_path / "slowcc"
    pids = tmp_path / "ccpids"
    fake.write_text(f'#!/bin/sh\nsleep 60 &\necho "$$ $!" > "{pids}"\nwait\n')
    fake.chmod(0o755)
    cc = tc.Compiler(path=str(fake), kind="gcc", version="slow")
    cache = tmp_path / "cache"
    with _interrupt_after(1.0), pytest.raises(KeyboardInterrupt):
        tc.compile(HELLO, compiler=cc, cache_dir=cache)
    shell, sleeper = (int(x) for x in pids.read_text().split())
    assert _gone(shell) and _gone(sleeper)
    assert not any(p.name.startswith("tmp-") for p in cache.iterdir())


def test_polyrun_has_a_timeout_that_stops_the_run():
    from polylab.notebook import backend
    from polylab.notebook.magics import PolylabMagics

    assert "--timeout" in PolylabMagics.polyrun.__doc__
    long_run = polylab.parse("double a[N];\nfor (t = 0; t < T; t++)\n  for (i = 1; i < N; i++)\n"
                             "    a[i] = a[i - 1] * 0.5 + a[i];\n").scop
    start = time.perf_counter()
    with pytest.raises(RunTimeout, match="stopped after 1.0 s"):
        backend.experiment(long_run, None, params={"T": 100_000_000, "N": 100}, repeat=1, timeout=1.0)
    assert time.perf_counter() - start < 60


# -- whose code a compile error is in ---------------------------------------------------------------------
def test_an_error_in_the_programs_own_code_is_located_in_it():
    scop = scop_of("sweep2d.c")
    line = scop.location.line
    broken = dataclasses.replace(scop, source=scop.source.replace("a[i][j - 1];", "a[i][j - 1] + undefined_q;"))
    with pytest.raises(CompileError) as info:
        verify(broken, None, "c", params={"N": 6})
    err = info.value
    assert err.origin == "source" and "the program's own code does not compile" in err.message
    assert "undefined_q" in err.message and "polylab bug" not in err.message + (err.hint or "")
    assert err.location is not None and line <= err.location.line <= line + 3
    assert "<source>" in err.message and "kernel.c" not in err.message.split("\n")[0]


def test_an_error_in_generated_code_is_called_a_polylab_bug():
    scop = scop_of("sweep2d.c")
    code = generate(scop, None, "c")
    broken = dataclasses.replace(code, program=code.program.replace("polylab_init(N, a);", "polylab_init(N, a) x;"))
    with pytest.raises(CompileError) as info:
        compile_variant(broken, VERIFY_FLAGS)
    err = info.value
    assert err.origin == "generated" and "rejected code polylab generated" in err.message
    assert "polylab bug" in err.hint and err.command and err.compiler_output and err.diagnostics


# -- exit statuses ------------------------------------------------------------------------------------------
def test_each_harness_failure_has_its_own_exit_status(tmp_path):
    binary = tc.compile(polylab.codegen.original_program(scop_of("sweep2d.c")), cache_dir=tmp_path / "cache")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the output directory should be")
    failure = tc.run(binary, ["6"], env={tc.OUTPUT_DIR_VARIABLE: str(blocked)}, check=False)
    assert failure.returncode == tc.EXIT_OUTPUT == 4 and "cannot write" in failure.stderr
    usage = tc.run(binary, [], check=False)
    assert usage.returncode == tc.EXIT_USAGE == 2
    assert len({tc.EXIT_USAGE, tc.EXIT_OUT_OF_MEMORY, tc.EXIT_OUTPUT, tc.EXIT_CUDA}) == 4
    cuda = generate(scop_of("sweep2d.c"), None, "cuda").program
    assert "exit(POLYLAB_EXIT_CUDA)" in cuda and "exit(4)" not in cuda
