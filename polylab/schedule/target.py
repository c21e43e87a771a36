"""The build the optimizer chooses for: how wide the vectors are that the compiler may use.

Whether a loop nest is bound by its arithmetic or by the caches depends on the vector width: gcc ``-O3``
without ``-march`` emits x86-64's baseline SSE2, two doubles per instruction; with ``-march=native`` on a
processor with AVX2 it emits four. A one-dimensional stencil that streams its rows from the L3 cache is
bound by its arithmetic with two-lane vectors (keeping its rows in L1 gains nothing) and by the cache with
four (time strips that keep them there win, :func:`polylab.schedule.timetile.time_strips`). The optimizer
reads the width with :func:`vector_bytes`: an explicit argument of the ``optimize`` step, else the width
of the build in effect (:func:`build_target`, entered by ``polylab bench --native`` while it builds its
variants), else :data:`DEFAULT_VECTOR_BYTES`.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Sequence

#: the vector width of gcc's default x86-64 build (SSE2): 16 bytes
DEFAULT_VECTOR_BYTES = 16

_VECTOR: ContextVar[int] = ContextVar("polylab_vector_bytes", default=DEFAULT_VECTOR_BYTES)


def vector_bytes(explicit: int = 0) -> int:
    """The vector width in bytes the optimizer chooses for: ``explicit`` when positive, else the build
    target in effect (:func:`build_target`), else :data:`DEFAULT_VECTOR_BYTES`."""
    return int(explicit) if explicit and explicit > 0 else _VECTOR.get()


@contextmanager
def build_target(vector: int) -> Iterator[int]:
    """Within the block, :func:`vector_bytes` is ``vector`` (bytes, positive): the code chosen there will
    be built for vectors that wide."""
    if vector <= 0:
        raise ValueError(f"a vector width is a positive number of bytes, not {vector}")
    token = _VECTOR.set(int(vector))
    try:
        yield int(vector)
    finally:
        _VECTOR.reset(token)


@lru_cache(maxsize=1)
def native_vector_bytes() -> int:
    """The vector width gcc's ``-march=native`` uses on this machine: 32 bytes where the processor has AVX
    (gcc prefers 256-bit vectors on AVX-512 processors too, unless told otherwise), else 16. Read from
    Linux's ``/proc/cpuinfo``; 16 where it cannot be read."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return DEFAULT_VECTOR_BYTES
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return 32 if "avx" in flags or "avx2" in flags else DEFAULT_VECTOR_BYTES


def vector_bytes_of_flags(flags: Sequence[str]) -> int:
    """The vector width a gcc build with the extra ``flags`` uses: the machine's with ``-march=native``,
    32 bytes with ``-mavx`` or ``-mavx2`` (or ``-mavx512f``: gcc's preferred width stays 256 bits), else
    :data:`DEFAULT_VECTOR_BYTES`."""
    if "-march=native" in flags:
        return native_vector_bytes()
    if any(f in ("-mavx", "-mavx2", "-mavx512f") for f in flags):
        return 32
    return DEFAULT_VECTOR_BYTES
