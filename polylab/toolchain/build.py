"""Compiling generated source text into a cached binary.

:func:`compile` turns C or CUDA source text into a :class:`Binary`. Builds are cached by content: the key is
the SHA-256 of (cache format, language, source, flags, OpenMP, compiler path, launcher and version, link
libraries), so the same text with the same options and compiler is compiled once, and a change of any of
them builds anew. The cache lives in ``$POLYLAB_CACHE`` or ``~/.cache/polylab`` (``cache_dir=`` overrides);
each entry is a directory ``<key>/`` holding ``kernel.c`` (or ``kernel.cu``), the binary ``kernel``, the
compiler's output ``build.log`` and ``kernel.sha256`` (the binary's SHA-256 and size).

Concurrency: a build happens in a fresh temporary directory inside the cache directory, which is then
renamed to ``<key>/`` in one atomic ``os.rename``. A directory that exists under its final name is therefore
always complete; when two processes build the same key at once, one rename wins and the loser discards its
copy and uses the winner's. No lock is needed, and a crashed build leaves only a ``tmp-*`` directory.

Robustness:

* a cached entry is used only when its binary still has the recorded SHA-256 and size; a damaged one (a
  truncated binary, a missing file) is rebuilt, never run (``force=True`` rebuilds in any case);
* a cache directory that cannot be written (read-only, another user's) is still read, and new builds go
  to a per-user directory under the system's temporary directory (a warning is logged); a cache path that
  names a file, or a cache that cannot be created, is a :class:`~polylab.errors.ToolchainError` that says
  so;
* a full disk, a quota or a read-only file system (in the cache or in the compiler's temporary files) is
  a :class:`~polylab.errors.ToolchainError` about the machine, never a compile error that blames the code;
* a compile error says whose text it is in: with ``user_sources`` (file names a ``#line`` directive gives
  to text that a user wrote, and that text), an error there is the user's (``CompileError.origin ==
  'source'``, located in their text); any other error is in generated code (``'generated'``: a polylab
  bug, and the message says so);
* the compiler runs in its own process group; an interrupt (``KeyboardInterrupt``) or the timeout kills
  the whole group (driver, ``cc1``, assembler, linker) and reaps it before the exception propagates.

Flag presets (all link ``-lm``):

* :data:`VERIFY_FLAGS` ``-O2 -ffp-contract=off -Wall``: for verification. ``-ffp-contract=off`` forbids
  fusing ``a*b+c`` into one FMA, which rounds once instead of twice; without it, two legal orderings of
  the same computation can differ in the last bit because the compiler fused differently. Never
  ``-ffast-math`` (it allows reassociation, which changes results). ``-Wall``: the warnings are shown.
* :data:`FAST_FLAGS` ``-O3 -ffp-contract=off``: optimised and still IEEE-exact, so a fast build gives the
  same bits as a verification build of the same source. gcc does not vectorise floating-point reductions
  without ``-fassociative-math``, so ``-O3`` alone keeps the order of operations.
* :data:`NATIVE_FLAGS` ``-O3 -march=native -ffp-contract=off``: uses every instruction set extension of
  *this* machine (AVX2, AVX-512, ...). Fine for timing on the machine that builds; the binary may die with
  ``SIGILL`` on an older CPU. FMA instructions exist but contraction stays off, so results stay exact.
* :data:`BASELINE_FLAGS` ``-O3``: plain ``gcc -O3``, the reference a speedup is measured against.

For CUDA (``language='cuda'``) the same presets are translated for nvcc: ``--fmad=false`` is the device-side
counterpart of ``-ffp-contract=off`` and host flags go through ``-Xcompiler``; :func:`cuda_flags` does this.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from polylab.errors import CompileError, SourceLocation, ToolchainError
from polylab import processes
from polylab.toolchain.compilers import (Compiler, c_compiler, c_compiler_status, cuda_compiler,
                                         cuda_compiler_status, openmp_status)
from polylab.toolchain.diagnostics import Diagnostic, parse_diagnostics, render_diagnostics

__all__ = [
    "BASELINE_FLAGS", "FAST_FLAGS", "NATIVE_FLAGS", "VERIFY_FLAGS", "Binary", "BuildRequest",
    "cache_directory", "clear_cache", "compile", "compile_many", "cuda_flags",
]

VERIFY_FLAGS: tuple[str, ...] = ("-O2", "-ffp-contract=off", "-Wall")
FAST_FLAGS: tuple[str, ...] = ("-O3", "-ffp-contract=off")
NATIVE_FLAGS: tuple[str, ...] = ("-O3", "-march=native", "-ffp-contract=off")
BASELINE_FLAGS: tuple[str, ...] = ("-O3",)

LINK_LIBRARIES: tuple[str, ...] = ("-lm",)
_CACHE_FORMAT = "polylab-build-2"
_COMPILE_TIMEOUT = 300.0
_SOURCE_NAME = {"c": "kernel.c", "cuda": "kernel.cu"}
_BINARY_NAME = "kernel"
_DIGEST_NAME = "kernel.sha256"
_LOG = logging.getLogger("polylab.toolchain")
#: compiler messages about the machine (disk, permissions), not about the code
_ENVIRONMENT_WORDS = re.compile(r"No space left on device|Disk quota exceeded|Read-only file system|"
                                r"Permission denied|cannot create temporary file|error writing to|"
                                r"cannot open output file", re.IGNORECASE)


@dataclass(frozen=True)
class Binary:
    """A compiled program in the build cache.

    ``path`` is the executable; ``source_path`` the exact source it was built from; ``key`` the cache key
    (hex SHA-256); ``command`` the compiler invocation (relative to the build directory); ``cached`` whether
    this call found it in the cache instead of compiling; ``diagnostics`` the compiler's warnings.
    """

    path: Path
    source_path: Path
    language: str
    compiler: Compiler
    flags: tuple[str, ...]
    openmp: bool
    key: str
    command: tuple[str, ...]
    cached: bool = False
    diagnostics: tuple[Diagnostic, ...] = field(default=(), compare=False)

    @property
    def source(self) -> str:
        """The source text this binary was compiled from."""
        return self.source_path.read_text()

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")

    def __str__(self) -> str:
        return f"{self.path} ({self.language}, {' '.join(self.flags)}{' -fopenmp' if self.openmp else ''})"

    def __fspath__(self) -> str:
        return str(self.path)


def _configured_cache(cache_dir: str | os.PathLike[str] | None) -> tuple[Path, str]:
    if cache_dir is not None:
        return Path(cache_dir).expanduser(), "cache_dir"
    env = os.environ.get("POLYLAB_CACHE")
    if env:
        return Path(env).expanduser(), "POLYLAB_CACHE"
    return Path.home() / ".cache" / "polylab", "the default cache location"


def cache_directory(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The build cache: ``cache_dir``, else ``$POLYLAB_CACHE``, else ``~/.cache/polylab`` (created).

    A path that names something other than a directory, or a directory that cannot be created, is a
    :class:`~polylab.errors.ToolchainError` (with the reason)."""
    path, origin = _configured_cache(cache_dir)
    if path.exists() and not path.is_dir():
        raise ToolchainError(f"the build cache {path} ({origin}) is not a directory",
                             hint="point POLYLAB_CACHE (or cache_dir=) at a directory, or remove that file")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolchainError(f"cannot create the build cache {path} ({origin}): {exc.strerror}",
                             hint="set POLYLAB_CACHE to a directory you can write") from None
    return path


def _fallback_cache() -> Path:
    """Where builds go when the cache directory cannot be written: one directory per user in the system's
    temporary directory."""
    path = Path(tempfile.gettempdir()) / f"polylab-cache-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ToolchainError(f"the build cache is not writable and neither is {path}: {exc.strerror}",
                             hint="set POLYLAB_CACHE to a directory you can write") from None
    return path


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK)


def _environment_error(exc: OSError, where: Path) -> ToolchainError:
    """A file-system failure while building, in words about the machine (never about the code)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return ToolchainError(f"no space left for the build in {where} ({exc.strerror})",
                              hint="free disk space, remove old builds (polylab.toolchain.clear_cache()), or "
                                   "set POLYLAB_CACHE to a directory on another disk")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ToolchainError(f"cannot write the build in {where} ({exc.strerror})",
                              hint="set POLYLAB_CACHE to a directory you can write")
    return ToolchainError(f"cannot write the build in {where}: {exc.strerror or exc}",
                          hint="check the disk and the permissions of the build cache (POLYLAB_CACHE)")


def clear_cache(cache_dir: str | os.PathLike[str] | None = None) -> int:
    """Remove every build (and leftover temporary directory) from the cache; returns how many."""
    root = cache_directory(cache_dir)
    count = 0
    for entry in root.iterdir():
        if entry.is_dir() and ((entry / _BINARY_NAME).exists() or entry.name.startswith("tmp-")):
            shutil.rmtree(entry, ignore_errors=True)
            count += not entry.exists()
    return count


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return f"{h.hexdigest()} {path.stat().st_size}"


def entry_is_intact(entry: Path) -> bool:
    """Whether a cache entry holds an executable binary with the SHA-256 and size recorded at its build."""
    binary, digest = entry / _BINARY_NAME, entry / _DIGEST_NAME
    try:
        return (binary.is_file() and os.access(binary, os.X_OK)
                and digest.read_text().strip() == _digest(binary))
    except OSError:
        return False


def cuda_flags(flags: Sequence[str]) -> tuple[str, ...]:
    """Translate gcc-style flags for nvcc.

    ``-O<n>`` passes through; ``-ffp-contract=off`` becomes ``--fmad=false`` for device code and is also
    passed to the host compiler; other ``-f``/``-m`` flags go to the host compiler via ``-Xcompiler``.
    Flags that nvcc already understands (anything starting ``--``, ``-arch``, ``-gencode``, ``-lineinfo``,
    ``-G``, ``-g``, ``-D``, ``-I``, ``-l``, ``-L``, ``-std``) pass through unchanged.
    """
    out: list[str] = []
    for flag in flags:
        if flag == "-ffp-contract=off":
            out += ["--fmad=false", "-Xcompiler", flag]
        elif flag.startswith(("-O", "--", "-arch", "-gencode", "-lineinfo", "-G", "-g", "-D", "-I",
                              "-l", "-L", "-std", "-X", "-ccbin", "-rdc")):
            out.append(flag)
        elif flag.startswith(("-f", "-m", "-W")):
            out += ["-Xcompiler", flag]
        else:
            out.append(flag)
    return tuple(out)


def _cache_key(language: str, source: str, flags: tuple[str, ...], openmp: bool, compiler: Compiler) -> str:
    h = hashlib.sha256()
    for part in (_CACHE_FORMAT, language, compiler.path, " ".join(compiler.launcher), compiler.version,
                 "openmp" if openmp else "serial", "\0".join(flags), "\0".join(LINK_LIBRARIES), source):
        data = part.encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _command(language: str, compiler: Compiler, flags: tuple[str, ...], openmp: bool) -> tuple[str, ...]:
    src = _SOURCE_NAME[language]
    if language == "cuda":
        omp = ("-Xcompiler", "-fopenmp") if openmp else ()
        return (*compiler.command, *cuda_flags(flags), *omp, src, "-o", _BINARY_NAME, *LINK_LIBRARIES)
    omp = ("-fopenmp",) if openmp else ()
    return (*compiler.command, "-fdiagnostics-color=never", *flags, *omp, src, "-o", _BINARY_NAME,
            *LINK_LIBRARIES)


def _pick_compiler(language: str, compiler: Compiler | None) -> Compiler:
    if language not in _SOURCE_NAME:
        raise ToolchainError(f"unknown language {language!r}", hint="use language='c' or language='cuda'")
    if compiler is not None:
        return compiler
    if language == "cuda":
        found = cuda_compiler()
        if found is None:
            raise ToolchainError(cuda_compiler_status().reason,
                                 hint="the generated CUDA code can still be read; compile it elsewhere")
        return found
    found = c_compiler()
    if found is None:
        raise ToolchainError(c_compiler_status().reason)
    return found


def compile(source: str, *, language: str = "c", flags: Sequence[str] | None = None, openmp: bool = False,
            compiler: Compiler | None = None, cache_dir: str | os.PathLike[str] | None = None,
            force: bool = False, timeout: float = _COMPILE_TIMEOUT,
            user_sources: Mapping[str, str] | None = None) -> Binary:
    """Compile ``source`` (C or CUDA text) into an executable, reusing a cached build when one exists.

    ``flags`` defaults to :data:`VERIFY_FLAGS`; ``-lm`` is always linked; ``openmp=True`` adds
    ``-fopenmp``. ``force=True`` rebuilds even when the cache holds this build. ``user_sources``: the file
    names that ``#line`` directives in ``source`` give to text a user wrote, with that text (so an error
    there is reported in it, as the user's). Raises :class:`~polylab.errors.CompileError` when the
    compiler rejects the source: its message holds the compiler's diagnostics, its ``location`` points at
    the first error, and it carries ``origin``, ``diagnostics``, ``compiler_output``, ``source`` and
    ``command``. Raises :class:`~polylab.errors.ToolchainError` when no compiler is available or the
    machine cannot hold the build (the reason says why).
    """
    comp = _pick_compiler(language, compiler)
    flag_tuple = tuple(VERIFY_FLAGS if flags is None else flags)
    if openmp and language == "c":
        status = openmp_status(comp)
        if not status:
            raise ToolchainError(status.reason)
    key = _cache_key(language, source, flag_tuple, openmp, comp)
    root = cache_directory(cache_dir)
    command = _command(language, comp, flag_tuple, openmp)
    sources = {**(user_sources or {}), _SOURCE_NAME[language]: source}

    def make(final: Path, cached: bool, diagnostics: tuple[Diagnostic, ...]) -> Binary:
        return Binary(path=final / _BINARY_NAME, source_path=final / _SOURCE_NAME[language],
                      language=language, compiler=comp, flags=flag_tuple, openmp=openmp, key=key,
                      command=command, cached=cached, diagnostics=diagnostics)

    writable = _writable(root)
    if not writable:
        _LOG.warning("the build cache %s is not writable: new builds go to %s", root, _fallback_cache())
    build_root = root if writable else _fallback_cache()
    if not force:
        for entry in dict.fromkeys([root / key, build_root / key]):
            if entry_is_intact(entry):
                log = entry / "build.log"
                output = log.read_text() if log.exists() else ""
                return make(entry, True, parse_diagnostics(output, sources=sources))
    final = build_root / key
    try:
        work = Path(tempfile.mkdtemp(prefix="tmp-", dir=build_root))
    except OSError as exc:
        raise _environment_error(exc, build_root) from None
    try:
        try:
            (work / _SOURCE_NAME[language]).write_text(source)
        except OSError as exc:
            raise _environment_error(exc, build_root) from None
        returncode, output = _run_compiler(comp, command, work, timeout)
        output = output.replace(str(work) + os.sep, "")
        diagnostics = parse_diagnostics(output, sources=sources)
        if returncode != 0 or not (work / _BINARY_NAME).is_file():
            machine = _ENVIRONMENT_WORDS.search(output)
            if machine:
                raise ToolchainError(f"the compiler could not write its files: {_line_of(output, machine)}",
                                     hint="free disk space (in the build cache and in the temporary directory "
                                          f"{tempfile.gettempdir()}), or check their permissions")
            raise _compile_error(comp, command, output, diagnostics, source, user_sources or {})
        try:
            (work / "build.log").write_text(output)
            (work / _DIGEST_NAME).write_text(_digest(work / _BINARY_NAME))
            _publish(work, final, replace=force or final.exists())
        except OSError as exc:
            raise _environment_error(exc, build_root) from None
        return make(final, False, diagnostics)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def _line_of(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start:end if end >= 0 else len(text)].strip()


def _run_compiler(comp: Compiler, command: tuple[str, ...], cwd: Path, timeout: float) -> tuple[int, str]:
    """Run the compiler in its own process group; on a timeout or an interrupt, kill the group and reap it
    before raising."""
    env = dict(os.environ, LC_ALL="C", LANG="C")
    try:
        proc = subprocess.Popen(list(command), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        raise ToolchainError(f"could not start the compiler {comp.path}: {exc.strerror}") from None
    processes.started(proc.pid)  # a terminating signal ends it with us (polylab.toolchain.processes)
    try:
        return _compiled(proc, timeout)
    finally:
        processes.ended(proc.pid)


def _compiled(proc: subprocess.Popen, timeout: float) -> tuple[int, str]:
    """The started compiler's status and output, waited for within ``timeout``."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_process_group(proc)
        raise CompileError(f"the compiler did not finish within {timeout:.0f} s",
                           hint="the generated code may be very large; try smaller unroll or tile "
                                "settings") from None
    except BaseException:  # an interrupt or a terminating signal: stop the compiler's whole group, propagate
        kill_process_group(proc)
        raise
    return proc.returncode, out + err


def kill_process_group(proc: subprocess.Popen) -> None:
    """Kill the process group ``proc`` leads (``SIGKILL``) and reap ``proc`` (no zombie is left), even if
    another interrupt arrives meanwhile."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass  # the group is already gone
    while True:
        try:
            proc.communicate()
            return
        except (KeyboardInterrupt, processes.Terminated):
            continue  # a second signal while reaping: finish reaping first
        except (OSError, ValueError):
            proc.wait()
            return


def _publish(work: Path, final: Path, replace: bool) -> None:
    """Atomically move a finished build directory to its final name (the first one to arrive wins);
    ``replace``: move an existing entry (damaged, or rebuilt on request) aside first."""
    if replace and final.exists():
        trash = final.with_name(f"tmp-old-{final.name[:16]}-{os.getpid()}-{id(work)}")
        try:
            os.rename(final, trash)
            shutil.rmtree(trash, ignore_errors=True)
        except FileNotFoundError:
            pass  # someone else replaced or removed it meanwhile
    for attempt in range(2):
        try:
            os.rename(work, final)
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            if entry_is_intact(final):
                return  # another build of the same key won the race: use its (identical) result
            if attempt:
                raise
            trash = final.with_name(f"tmp-broken-{final.name[:16]}-{os.getpid()}-{id(work)}")
            try:
                os.rename(final, trash)
                shutil.rmtree(trash, ignore_errors=True)
            except FileNotFoundError:
                pass  # removed meanwhile


def _compile_error(comp: Compiler, command: tuple[str, ...], output: str, diagnostics: tuple[Diagnostic, ...],
                   source: str, user_sources: Mapping[str, str]) -> CompileError:
    errors_ = [d for d in diagnostics if d.severity == "error"]
    first = errors_[0] if errors_ else None
    theirs = first is not None and first.file in user_sources
    if theirs:
        assert first is not None
        headline = f"the program's own code does not compile: {first.message}"
        hint = "fix this line of the program (the compiler's full output is in the error's compiler_output)"
        shown = render_diagnostics([d for d in diagnostics if d.file in user_sources])
    else:
        what = first.message if first is not None else f"it failed ({' '.join(command[len(comp.launcher):])})"
        headline = f"{comp.kind} rejected code polylab generated: {what}"
        hint = ("this is a polylab bug worth reporting (with the schedule and the program); the full compiler "
                "output is in the error's compiler_output")
        shown = render_diagnostics(diagnostics) if diagnostics else output.strip()
    more = f"{len(errors_)} error(s)" if errors_ else "compiler output"
    message = f"{headline}\n{more}:\n{shown}" if shown else headline
    location = None
    if first is not None and first.line is not None:
        # line and column only: the message already draws each diagnostic's caret picture
        loc = first.location
        location = SourceLocation(first.line, first.column or 1, loc.text if loc else "", "")
    return CompileError(message, location=location, hint=hint, origin="source" if theirs else "generated",
                        diagnostics=diagnostics, compiler_output=output, source=source, command=command)


@dataclass(frozen=True)
class BuildRequest:
    """The arguments of one :func:`compile` call, for :func:`compile_many`."""

    source: str
    language: str = "c"
    flags: tuple[str, ...] | None = None
    openmp: bool = False
    compiler: Compiler | None = None


def compile_many(requests: Iterable[BuildRequest | str], *, cache_dir: str | os.PathLike[str] | None = None,
                 max_workers: int | None = None, force: bool = False,
                 progress: Callable[[int, int, Binary | Exception], None] | None = None,
                 ) -> list[Binary | Exception]:
    """Compile several sources in parallel (threads, at most one per core); results in request order.

    A failed build gives its exception (usually :class:`~polylab.errors.CompileError`) in its slot instead
    of stopping the others. ``progress(done, total, result)`` is called after each build finishes, from
    the calling thread.
    """
    reqs = [r if isinstance(r, BuildRequest) else BuildRequest(r) for r in requests]
    results: list[Binary | Exception | None] = [None] * len(reqs)
    workers = max(1, min(max_workers or (os.cpu_count() or 1), len(reqs) or 1))

    def one(req: BuildRequest) -> Binary:
        return compile(req.source, language=req.language, flags=req.flags, openmp=req.openmp,
                       compiler=req.compiler, cache_dir=cache_dir, force=force)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(one, r): i for i, r in enumerate(reqs)}
        for done, fut in enumerate(as_completed(futures), start=1):
            i = futures[fut]
            exc = fut.exception()
            results[i] = exc if isinstance(exc, Exception) else fut.result()
            if progress is not None:
                progress(done, len(reqs), results[i])  # type: ignore[arg-type]
    return results  # type: ignore[return-value]
