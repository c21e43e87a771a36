"""The machine polylab runs on, read once where the program meets the world (the command line, the
notebook extension, the benchmark) and passed to the engine as a :class:`~polylab.schedule.optimize.Machine`
value: nothing below these layers reads the environment, sysfs or the CPU flags.

* threads: ``OMP_NUM_THREADS`` when set, else the CPUs this process may use (:func:`available_threads`);
* vector width: of the build chosen for (:func:`vector_bytes_of_flags`: gcc's default x86-64 build emits
  SSE2, two doubles per instruction; ``-march=native`` on a processor with AVX2 four). Whether a loop nest
  is bound by its arithmetic or by the caches depends on it: a one-dimensional stencil that streams its
  rows from the L3 cache is bound by its arithmetic with two-lane vectors and by the cache with four, where
  the time strips that keep its rows in L1 win (:func:`polylab.schedule.timetile.time_strips`);
* the L1 data, L2 and L3 cache sizes of CPU 0, from Linux's sysfs (:func:`cache_sizes`).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from polylab.schedule.optimize import DEFAULT_VECTOR_BYTES, Machine

__all__ = ["available_threads", "cache_sizes", "detect_machine", "native_vector_bytes", "vector_bytes_of_flags"]

#: where Linux describes CPU 0's caches
CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")


def available_threads() -> int:
    """The threads a run will have: ``OMP_NUM_THREADS`` when set, else the CPUs this process may use."""
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@lru_cache(maxsize=1)
def cache_sizes() -> tuple[int, int, int]:
    """(L1 data, L2, L3) cache sizes in bytes of CPU 0, from Linux's sysfs; the reference machine's
    (:class:`~polylab.schedule.optimize.Machine`'s defaults) where they cannot be read."""
    l1, l2, l3 = Machine().l1_bytes, Machine().l2_bytes, Machine().l3_bytes
    for idx in sorted(CACHE_DIR.glob("index*")) if CACHE_DIR.is_dir() else []:
        try:
            level = int((idx / "level").read_text())
            kind = (idx / "type").read_text().strip()
            text = (idx / "size").read_text().strip().upper()
        except (OSError, ValueError):  # a cache entry without these files: keep the defaults
            continue
        mult = 1024 if text.endswith("K") else (1024 * 1024 if text.endswith("M") else 1)
        size = int(text.rstrip("KM")) * mult
        if level == 1 and kind in ("Data", "Unified"):
            l1 = size
        elif level == 2:
            l2 = size
        elif level == 3:
            l3 = size
    return l1, l2, l3


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
    :data:`~polylab.schedule.optimize.DEFAULT_VECTOR_BYTES`."""
    if "-march=native" in flags:
        return native_vector_bytes()
    if any(f in ("-mavx", "-mavx2", "-mavx512f") for f in flags):
        return 32
    return DEFAULT_VECTOR_BYTES


def detect_machine(threads: int | None = None, flags: Sequence[str] = ()) -> Machine:
    """The :class:`~polylab.schedule.optimize.Machine` this process runs on: ``threads`` (default
    :func:`available_threads`), the vector width of a build with ``flags`` and the cache sizes of CPU 0."""
    l1, l2, l3 = cache_sizes()
    return Machine(threads if threads is not None else available_threads(), vector_bytes_of_flags(flags), l1, l2,
                   l3)
