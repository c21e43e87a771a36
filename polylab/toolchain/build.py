"""Compiling generated source text into a cached binary.

:func:`compile` turns C or CUDA source text into a :class:`Binary`. Builds are cached by content: the key is
the SHA-256 of (cache format, language, source, flags, OpenMP, compiler path, launcher and version, link
libraries), so the same text with the same options and compiler is compiled once, and a change of any of
them builds anew. The cache lives in ``$POLYLAB_CACHE`` or ``~/.cache/polylab`` (``cache_dir=`` overrides);
each entry is a directory ``<key>/`` holding ``kernel.c`` (or ``kernel.cu``), the binary ``kernel`` and
the compiler's output ``build.log``.

Concurrency: a build happens in a fresh temporary directory inside the cache directory, which is then
renamed to ``<key>/`` in one atomic ``os.rename``. A directory that exists under its final name is therefore
always complete; when two processes build the same key at once, one rename wins and the loser discards its
copy and uses the winner's. No lock is needed, and a crashed build leaves only a ``tmp-*`` directory.

Flag presets (all link ``-lm``):

* :data:`VERIFY_FLAGS` ``-O2 -ffp-contract=off``: for verification. ``-ffp-contract=off`` forbids fusing
  ``a*b+c`` into one FMA, which rounds once instead of twice; without it, two legal orderings of the same
  computation can differ in the last bit because the compiler fused differently. Never ``-ffast-math``
  (it allows reassociation, which changes results).
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

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from polylab.errors import CompileError, SourceLocation, ToolchainError
from polylab.toolchain.compilers import (Compiler, c_compiler, c_compiler_status, cuda_compiler,
                                         cuda_compiler_status, openmp_status)
from polylab.toolchain.diagnostics import Diagnostic, parse_diagnostics, render_diagnostics

__all__ = [
    "BASELINE_FLAGS", "FAST_FLAGS", "NATIVE_FLAGS", "VERIFY_FLAGS", "Binary", "BuildRequest",
    "cache_directory", "clear_cache", "compile", "compile_many", "cuda_flags",
]

VERIFY_FLAGS: tuple[str, ...] = ("-O2", "-ffp-contract=off")
FAST_FLAGS: tuple[str, ...] = ("-O3", "-ffp-contract=off")
NATIVE_FLAGS: tuple[str, ...] = ("-O3", "-march=native", "-ffp-contract=off")
BASELINE_FLAGS: tuple[str, ...] = ("-O3",)

LINK_LIBRARIES: tuple[str, ...] = ("-lm",)
_CACHE_FORMAT = "polylab-build-1"
_COMPILE_TIMEOUT = 300.0
_SOURCE_NAME = {"c": "kernel.c", "cuda": "kernel.cu"}
_BINARY_NAME = "kernel"


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


def cache_directory(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The build cache: ``cache_dir``, else ``$POLYLAB_CACHE``, else ``~/.cache/polylab`` (created)."""
    if cache_dir is None:
        env = os.environ.get("POLYLAB_CACHE")
        cache_dir = env if env else Path.home() / ".cache" / "polylab"
    path = Path(cache_dir).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def clear_cache(cache_dir: str | os.PathLike[str] | None = None) -> int:
    """Remove every build (and leftover temporary directory) from the cache; returns how many."""
    root = cache_directory(cache_dir)
    count = 0
    for entry in root.iterdir():
        if entry.is_dir() and ((entry / _BINARY_NAME).exists() or entry.name.startswith("tmp-")):
            shutil.rmtree(entry, ignore_errors=True)
            count += 1
    return count


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
            force: bool = False, timeout: float = _COMPILE_TIMEOUT) -> Binary:
    """Compile ``source`` (C or CUDA text) into an executable, reusing a cached build when one exists.

    ``flags`` defaults to :data:`VERIFY_FLAGS`; ``-lm`` is always linked; ``openmp=True`` adds
    ``-fopenmp``. ``force=True`` rebuilds even when the cache holds this build. Raises
    :class:`~polylab.errors.CompileError` when the compiler rejects the source: its message holds the
    compiler's diagnostics, its ``location`` points at the first error in the source, and it carries
    ``diagnostics`` (a tuple of :class:`Diagnostic`), ``compiler_output`` (the raw text) and ``source``.
    Raises :class:`~polylab.errors.ToolchainError` when no compiler is available (the reason says why).
    """
    comp = _pick_compiler(language, compiler)
    flag_tuple = tuple(VERIFY_FLAGS if flags is None else flags)
    if openmp and language == "c":
        status = openmp_status(comp)
        if not status:
            raise ToolchainError(status.reason)
    key = _cache_key(language, source, flag_tuple, openmp, comp)
    root = cache_directory(cache_dir)
    final = root / key
    command = _command(language, comp, flag_tuple, openmp)

    def make(cached: bool, diagnostics: tuple[Diagnostic, ...]) -> Binary:
        return Binary(path=final / _BINARY_NAME, source_path=final / _SOURCE_NAME[language],
                      language=language, compiler=comp, flags=flag_tuple, openmp=openmp, key=key,
                      command=command, cached=cached, diagnostics=diagnostics)

    if not force and (final / _BINARY_NAME).is_file():
        log = final / "build.log"
        output = log.read_text() if log.exists() else ""
        return make(True, parse_diagnostics(output, source=source, source_names=(_SOURCE_NAME[language],)))

    work = Path(tempfile.mkdtemp(prefix="tmp-", dir=root))
    try:
        (work / _SOURCE_NAME[language]).write_text(source)
        env = dict(os.environ, LC_ALL="C", LANG="C")
        try:
            done = subprocess.run(list(command), cwd=work, capture_output=True, text=True, env=env,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise CompileError(f"the compiler did not finish within {timeout:.0f} s",
                               hint="the generated code may be very large; try smaller unroll or tile "
                                    "settings") from None
        except OSError as exc:
            raise ToolchainError(f"could not start the compiler {comp.path}: {exc.strerror}") from None
        output = (done.stdout + done.stderr).replace(str(work) + os.sep, "")
        diagnostics = parse_diagnostics(output, source=source, source_names=(_SOURCE_NAME[language],))
        if done.returncode != 0 or not (work / _BINARY_NAME).is_file():
            raise _compile_error(comp, command, output, diagnostics, source)
        (work / "build.log").write_text(output)
        _publish(work, final, force)
        return make(False, diagnostics)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def _publish(work: Path, final: Path, force: bool) -> None:
    """Atomically move a finished build directory to its final name (the first one to arrive wins)."""
    if force and final.exists():
        trash = final.with_name(f"tmp-old-{final.name[:16]}-{os.getpid()}-{id(work)}")
        try:
            os.rename(final, trash)
            shutil.rmtree(trash, ignore_errors=True)
        except OSError:
            pass  # someone else replaced or removed it meanwhile
    for attempt in range(2):
        try:
            os.rename(work, final)
            return
        except OSError:
            if (final / _BINARY_NAME).is_file():
                return  # another build of the same key won the race: use its (identical) result
            if attempt:
                raise  # a real file-system problem
            # an incomplete entry (someone deleted files by hand): move it aside and try again
            trash = final.with_name(f"tmp-broken-{final.name[:16]}-{os.getpid()}-{id(work)}")
            try:
                os.rename(final, trash)
                shutil.rmtree(trash, ignore_errors=True)
            except OSError:
                pass


def _compile_error(comp: Compiler, command: tuple[str, ...], output: str,
                   diagnostics: tuple[Diagnostic, ...], source: str) -> CompileError:
    errors_ = [d for d in diagnostics if d.severity == "error"]
    first = errors_[0] if errors_ else None
    if first is not None:
        headline = f"{comp.kind} rejected the generated code: {first.message}"
    else:
        headline = f"{comp.kind} failed ({' '.join(command[len(comp.launcher):])})"
    shown = render_diagnostics(diagnostics) if diagnostics else output.strip()
    more = f"{len(errors_)} error(s)" if errors_ else "compiler output"
    message = f"{headline}\n{more}:\n{shown}" if shown else headline
    location = None
    if first is not None and first.line is not None:
        # line and column only: the message already draws each diagnostic's caret picture
        loc = first.location
        location = SourceLocation(first.line, first.column or 1, loc.text if loc else "", "")
    err = CompileError(message, location=location,
                       hint="if polylab generated this code, the error is a polylab bug worth reporting; the full "
                            "compiler output is in the error's compiler_output")
    err.diagnostics = diagnostics  # type: ignore[attr-defined]
    err.compiler_output = output  # type: ignore[attr-defined]
    err.source = source  # type: ignore[attr-defined]
    err.command = command  # type: ignore[attr-defined]
    return err


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
