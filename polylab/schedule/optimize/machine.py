"""What the optimizer reads of the machine and the data: threads, cache sizes, element sizes, the
region's footprint."""

from __future__ import annotations

import os
import weakref
from functools import lru_cache
from pathlib import Path

import islpy as isl

from polylab.model import Scop
from polylab.schedule.tuning import ELEMENT_BYTES


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
def cache_sizes() -> tuple[int, int]:
    """(L1 data, L2) cache sizes in bytes of CPU 0, from Linux's sysfs; 32 KiB and 1 MiB when unknown."""
    l1, l2 = 32 * 1024, 1024 * 1024
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(root.glob("index*")) if root.is_dir() else []:
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
    return l1, l2


def element_bytes(scop) -> dict[str, int]:
    """Array name -> the bytes of one element (:data:`ELEMENT_BYTES`, 8 for other types)."""
    return {a.name: ELEMENT_BYTES.get(a.ctype.split()[-1], 8) for a in scop.arrays}


#: the footprint of each SCoP already measured (a SCoP is immutable; the entry goes when it does)
_FOOTPRINTS: "weakref.WeakKeyDictionary[Scop, int]" = weakref.WeakKeyDictionary()


def footprint_bytes(scop: Scop) -> int | None:
    """The bytes of every array element the region touches, ``sum_A |{ F_a(x) : x in D_S, a of A }| *
    sizeof(A)`` (exact counts of the union of the accessed elements); None where the program has
    parameters (its sizes are known only when it runs)."""
    if scop.parameters:
        return None
    if scop not in _FOOTPRINTS:
        try:
            _FOOTPRINTS[scop] = _count_footprint(scop)
        except isl.Error:  # isl could not count a set: unknown, as with parameters
            return None
    return _FOOTPRINTS[scop]


def _count_footprint(scop: Scop) -> int:
    sizes_of = element_bytes(scop)
    touched: dict[str, isl.Set] = {}
    for stmt in scop.statements:
        for acc in stmt.accesses:
            img = acc.relation.intersect_domain(stmt.domain).range()
            touched[acc.array] = img if acc.array not in touched else touched[acc.array].union(img)
    return sum(int(e.count_val().to_python()) * sizes_of.get(a, 8) for a, e in touched.items())


def fits_in_cache(scop: Scop) -> bool:
    """The region's data (:func:`footprint_bytes`, constant sizes only) fits in half the L2 cache: then
    the tiles that keep data in cache (time tiles) only add loop overhead (heat-3d at its small size,
    20^3 points of two arrays, 128 KiB: 0.71x of the original with time tiles)."""
    b = footprint_bytes(scop)
    return b is not None and b <= cache_sizes()[1] // 2
