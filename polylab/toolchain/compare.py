"""The harness protocol, and comparing the outputs of two runs.

Protocol
--------
A harness (the ``main`` that code generation writes around a kernel) talks to the toolchain like this:

* **Arguments.** ``prog P1 P2 ... [REPEAT]``: each parameter a decimal integer within the range of C's
  ``int`` (the kernels index with ``int``), read with ``strtoll`` and checked; ``REPEAT`` (default 1) from
  1 to 10^9.
* **Times.** For each timed execution of the kernel it writes one line ``polylab-time <seconds>`` to
  standard output (a decimal number of seconds, e.g. ``polylab-time 0.012345678``). Only the kernel is
  timed, not allocation, initialisation or output. CUDA harnesses time with CUDA events.
* **Arrays.** For each output array it writes one line
  ``polylab-checksum <name> <16 hex digits> <element count>`` (FNV-1a, 64 bit, over the array's raw bytes)
  to standard output and, when the environment variable ``POLYLAB_OUTPUT_DIR`` is set, two files in that
  directory:

  - ``<name>.bin``: the elements in row-major (C) order, as raw native bytes (no header);
  - ``<name>.meta``: text lines ``ctype <C type>``, ``elem_size <bytes>``, ``extents <e1> <e2> ...``
    (``extents`` with no numbers for a scalar);
  - ``<name>.idx`` (only for an output gathered from some elements of an array): the row-major flat index
    of each written element in its array, as native 64-bit integers (:func:`read_indices`).

  Which arrays: the live-out data by default; every array the program writes, whole, when
  ``POLYLAB_OUTPUTS=written`` (:data:`OUTPUTS_VARIABLE`, :data:`OUTPUTS_WRITTEN`) is set.
* **Exit status.** Each failure has its own status and a ``polylab: ...`` line on standard error:
  2 (:data:`EXIT_USAGE`): wrong arguments, a parameter that is not an integer in range, or array extents
  that cannot be allocated at these parameters (negative, above ``INT_MAX``, a byte size beyond
  ``SIZE_MAX``); 3 (:data:`EXIT_OUT_OF_MEMORY`): an allocation failed; 4 (:data:`EXIT_OUTPUT`): an output
  file could not be written; 5 (:data:`EXIT_CUDA`): a CUDA runtime call failed. Any other line on
  standard output is ignored by the toolchain.

:data:`HARNESS_SUPPORT_C` is C text (valid C99 and CUDA host code) that implements this protocol
(``polylab_param``, ``polylab_repeat_count``, ``polylab_elements``, ``polylab_now``,
``polylab_report_time``, ``polylab_alloc``, ``polylab_dump``, ``polylab_dump_indices`` and the
``POLYLAB_EXIT_*`` statuses); a
generated harness may paste it in, best before any other ``#include`` (it defines ``_POSIX_C_SOURCE`` for
``clock_gettime`` under ``-std=c99``). Comparing two runs is then :func:`compare_outputs` on their output
directories (every element, bit-exact unless a tolerance is given) or :func:`compare_checksums` on their
standard outputs.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from polylab.errors import ToolchainError

__all__ = [
    "EXIT_CUDA", "EXIT_OUTPUT", "EXIT_OUT_OF_MEMORY", "EXIT_STATUS_MEANINGS", "EXIT_USAGE", "HARNESS_SUPPORT_C",
    "OUTPUTS_VARIABLE", "OUTPUTS_WRITTEN", "Comparison", "Difference", "compare_arrays", "compare_checksums",
    "compare_outputs", "parse_checksums", "parse_times", "read_array", "read_indices", "read_outputs",
]

EXIT_USAGE = 2
EXIT_OUT_OF_MEMORY = 3
EXIT_OUTPUT = 4
EXIT_CUDA = 5

#: what each harness exit status means, in words
EXIT_STATUS_MEANINGS = {
    EXIT_USAGE: "the harness refused its arguments (a parameter out of range, or arrays that cannot be "
                "allocated at these parameters)",
    EXIT_OUT_OF_MEMORY: "the program ran out of memory",
    EXIT_OUTPUT: "the program could not write its output files",
    EXIT_CUDA: "a CUDA runtime call failed",
}

#: the environment variable that selects the harness's outputs, and its value for "every written array"
OUTPUTS_VARIABLE = "POLYLAB_OUTPUTS"
OUTPUTS_WRITTEN = "written"

HARNESS_SUPPORT_C = r"""
/* ---- polylab harness support: the protocol of polylab.toolchain.compare ---- */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c99/c11 (effective before other includes) */
#endif
#if defined(__GNUC__) || defined(__clang__) || defined(__CUDACC__)
#define POLYLAB_UNUSED __attribute__((unused))
#else
#define POLYLAB_UNUSED
#endif
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLYLAB_EXIT_USAGE 2
#define POLYLAB_EXIT_OUT_OF_MEMORY 3
#define POLYLAB_EXIT_OUTPUT 4
#define POLYLAB_EXIT_CUDA 5

/* a decimal integer argument, all of it, within [lo, hi]; else a message and POLYLAB_EXIT_USAGE */
POLYLAB_UNUSED static long long polylab_integer(const char *text, const char *name, long long lo, long long hi) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, "polylab: %s = '%s' is not an integer from %lld to %lld\n", name, text, lo, hi);
        exit(POLYLAB_EXIT_USAGE);
    }
    return v;
}

/* a parameter value: the kernels take int parameters */
POLYLAB_UNUSED static long long polylab_param(const char *text, const char *name) {
    return polylab_integer(text, name, INT_MIN, INT_MAX);
}

POLYLAB_UNUSED static long long polylab_repeat_count(const char *text) {
    return polylab_integer(text, "REPEAT", 1, 1000000000LL);
}

/* the element count of an array of the given extents (long long arguments), checked: every extent in
   [0, INT_MAX] (the kernels index with int) and the byte size within SIZE_MAX */
POLYLAB_UNUSED static size_t polylab_elements(const char *name, size_t elem_size, int rank, ...) {
    va_list ap;
    size_t count = 1;
    va_start(ap, rank);
    for (int d = 0; d < rank; d++) {
        long long e = va_arg(ap, long long);
        if (e < 0 || e > INT_MAX) {
            fprintf(stderr, "polylab: array %s would have extent %lld in dimension %d (allowed: 0 to %d)\n",
                    name, e, d, INT_MAX);
            exit(POLYLAB_EXIT_USAGE);
        }
        if (e != 0 && count > SIZE_MAX / (size_t)e) count = SIZE_MAX;
        else count *= (size_t)e;
    }
    va_end(ap);
    if (count == SIZE_MAX || (elem_size != 0 && count > SIZE_MAX / elem_size)) {
        fprintf(stderr, "polylab: array %s would need more bytes than this machine can address\n", name);
        exit(POLYLAB_EXIT_USAGE);
    }
    return count;
}

POLYLAB_UNUSED static double polylab_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

POLYLAB_UNUSED static void polylab_report_time(double seconds) {
    printf("polylab-time %.9f\n", seconds);
    fflush(stdout);
}

POLYLAB_UNUSED static void *polylab_alloc(size_t bytes, const char *name) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "polylab: out of memory allocating %s (%zu bytes)\n", name, bytes);
        exit(POLYLAB_EXIT_OUT_OF_MEMORY);
    }
    return p;
}

POLYLAB_UNUSED static void polylab_write_failed(const char *path) {
    fprintf(stderr, "polylab: cannot write %s: %s\n", path, strerror(errno));
    exit(POLYLAB_EXIT_OUTPUT);
}

POLYLAB_UNUSED static void polylab_dump_indices(const char *name, const long long *indices, size_t count) {
    const char *dir = getenv("POLYLAB_OUTPUT_DIR");
    if (dir == NULL || dir[0] == '\0') return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.idx", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) polylab_write_failed(path);
    if (count > 0 && fwrite(indices, sizeof(long long), count, f) != count) polylab_write_failed(path);
    if (fclose(f) != 0) polylab_write_failed(path);
}

POLYLAB_UNUSED static void polylab_dump(const char *name, const char *ctype, const void *data, size_t elem_size,
                                        int ndim, const long long *extents) {
    size_t count = 1;
    for (int d = 0; d < ndim; d++) count *= (size_t)(extents[d] > 0 ? extents[d] : 0);
    const unsigned char *bytes = (const unsigned char *)data;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < count * elem_size; i++) { h ^= bytes[i]; h *= 1099511628211ULL; }
    printf("polylab-checksum %s %016llx %zu\n", name, (unsigned long long)h, count);
    const char *dir = getenv("POLYLAB_OUTPUT_DIR");
    if (dir == NULL || dir[0] == '\0') return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) polylab_write_failed(path);
    if (count > 0 && fwrite(data, elem_size, count, f) != count) polylab_write_failed(path);
    if (fclose(f) != 0) polylab_write_failed(path);
    snprintf(path, sizeof path, "%s/%s.meta", dir, name);
    f = fopen(path, "w");
    if (f == NULL) polylab_write_failed(path);
    fprintf(f, "ctype %s\nelem_size %zu\nextents", ctype, elem_size);
    for (int d = 0; d < ndim; d++) fprintf(f, " %lld", extents[d]);
    fprintf(f, "\n");
    if (fclose(f) != 0) polylab_write_failed(path);
}
/* ---- end of polylab harness support ---- */
"""

_TIME_LINE = re.compile(r"^polylab-time\s+(\S+)\s*$", re.MULTILINE)
_CHECKSUM_LINE = re.compile(r"^polylab-checksum\s+(\S+)\s+([0-9a-fA-F]+)\s+(\d+)\s*$", re.MULTILINE)


def parse_times(stdout: str) -> list[float]:
    """The kernel times (seconds) of all ``polylab-time`` lines, in order; malformed values are skipped."""
    times: list[float] = []
    for m in _TIME_LINE.finditer(stdout):
        try:
            value = float(m.group(1))
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            times.append(value)
    return times


def parse_checksums(stdout: str) -> dict[str, tuple[str, int]]:
    """``{array name: (checksum hex, element count)}`` from the ``polylab-checksum`` lines."""
    return {m.group(1): (m.group(2).lower(), int(m.group(3))) for m in _CHECKSUM_LINE.finditer(stdout)}


def _dtype(ctype: str, elem_size: int) -> np.dtype:
    words = ctype.replace("*", " ").split()
    if "float" in words or "double" in words or any("float" in w for w in words):
        if elem_size in (2, 4, 8):
            return np.dtype(f"f{elem_size}")
        if elem_size == np.dtype(np.longdouble).itemsize:
            return np.dtype(np.longdouble)
    elif "bool" in words or "_Bool" in words:
        return np.dtype(f"u{elem_size}")
    elif elem_size in (1, 2, 4, 8):
        signed = not any(w in ("unsigned", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t")
                         or w.startswith("uint") for w in words)
        return np.dtype(f"{'i' if signed else 'u'}{elem_size}")
    return np.dtype(f"V{elem_size}")


def read_array(directory: str | os.PathLike[str], name: str) -> np.ndarray:
    """One array written by a harness, with its C type and extents (see the protocol above)."""
    d = Path(directory)
    meta_path, bin_path = d / f"{name}.meta", d / f"{name}.bin"
    if not meta_path.exists() or not bin_path.exists():
        raise ToolchainError(f"the program wrote no output for array {name!r} in {d}",
                             hint="the harness must call polylab_dump for every live-out array")
    fields: dict[str, list[str]] = {}
    for line in meta_path.read_text().splitlines():
        parts = line.split()
        if parts:
            fields[parts[0]] = parts[1:]
    try:
        ctype = " ".join(fields["ctype"])
        elem_size = int(fields["elem_size"][0])
        extents = tuple(int(e) for e in fields.get("extents", []))
    except (KeyError, IndexError, ValueError):
        raise ToolchainError(f"{meta_path} is not a valid polylab .meta file") from None
    dtype = _dtype(ctype, elem_size)
    raw = bin_path.read_bytes()
    count = math.prod(extents) if extents else 1
    if len(raw) != count * elem_size:
        raise ToolchainError(f"{bin_path} holds {len(raw)} bytes but {name} has {count} elements of "
                             f"{elem_size} bytes")
    return np.frombuffer(raw, dtype=dtype).reshape(extents)


def read_indices(directory: str | os.PathLike[str], name: str) -> np.ndarray | None:
    """The flat indices (in its array) of the elements of output ``name``, when it was gathered from some
    elements (``<name>.idx``); None when the output is a whole array."""
    path = Path(directory) / f"{name}.idx"
    if not path.exists():
        return None
    return np.frombuffer(path.read_bytes(), dtype=np.int64)


def read_outputs(directory: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """All arrays a harness wrote to ``directory``, by name."""
    d = Path(directory)
    return {p.stem: read_array(d, p.stem) for p in sorted(d.glob("*.meta"))}


@dataclass(frozen=True)
class Difference:
    """The first element at which a candidate's output differs from the reference's: the array, the
    element's index (in the array's own coordinates when the comparison knew them, else its position in
    the output), the reference's value (``expected``) and the candidate's (``actual``). The one value of
    "where two runs disagree" (:func:`compare_outputs`, :func:`polylab.toolchain.differential_run`)."""

    array: str
    index: tuple[int, ...]
    expected: float | int
    actual: float | int

    def __str__(self) -> str:
        idx = "".join(f"[{i}]" for i in self.index)
        return f"{self.array}{idx}: expected {self.expected!r}, got {self.actual!r}"


@dataclass(frozen=True)
class Comparison:
    """The result of comparing a reference run (``a``) with a candidate run (``b``).

    ``equal`` is true when every array is present in both with the same shape and every element matches
    (bit-exact, or within ``|b - a| <= atol + rtol * |a|`` when a tolerance was given). ``first`` is the
    first differing element of the first differing array (arrays in name order); ``max_abs_error`` and
    ``max_rel_error`` are over all compared floating-point elements (``nan`` when a NaN is involved);
    ``problems`` lists missing arrays and shape or type mismatches.
    """

    equal: bool
    arrays: tuple[str, ...]
    first: Difference | None = None
    mismatches: int = 0
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    problems: tuple[str, ...] = ()
    rtol: float = 0.0
    atol: float = 0.0

    def __bool__(self) -> bool:
        return self.equal

    def __str__(self) -> str:
        mode = "bit-exact" if self.rtol == 0 and self.atol == 0 else f"rtol={self.rtol:g}, atol={self.atol:g}"
        if self.equal:
            return f"outputs equal ({mode}): {', '.join(self.arrays) or 'no arrays'}"
        lines = [f"outputs differ ({mode})"]
        lines += [f"  {p}" for p in self.problems]
        if self.first is not None:
            lines.append(f"  first difference: {self.first}")
            lines.append(f"  {self.mismatches} element(s) differ; max abs error {self.max_abs_error:.3g}, "
                         f"max rel error {self.max_rel_error:.3g}")
        return "\n".join(lines)


def _scalar(value: np.generic) -> float | int:
    return value.item() if isinstance(value.item(), (int, float)) else float(value)  # type: ignore[arg-type]


def compare_outputs(dir_a: str | os.PathLike[str], dir_b: str | os.PathLike[str], *, rtol: float = 0.0,
                    atol: float = 0.0) -> Comparison:
    """Compare every array two harness runs wrote (``dir_a`` is the reference, ``dir_b`` the candidate):
    :func:`compare_arrays` on what :func:`read_outputs` reads from each."""
    if rtol < 0 or atol < 0:
        raise ToolchainError("tolerances must not be negative")
    outs_a, outs_b = read_outputs(dir_a), read_outputs(dir_b)
    if not outs_a and not outs_b:
        raise ToolchainError(f"neither {dir_a} nor {dir_b} holds any array output",
                             hint="did the harness run with POLYLAB_OUTPUT_DIR set?")
    return compare_arrays(outs_a, outs_b, rtol=rtol, atol=atol)


def compare_arrays(outs_a: Mapping[str, np.ndarray], outs_b: Mapping[str, np.ndarray], *, rtol: float = 0.0,
                   atol: float = 0.0) -> Comparison:
    """Compare every array of a reference (``outs_a``) with the candidate's (``outs_b``), by name.

    With the default ``rtol = atol = 0`` the comparison is bit-exact on the stored bytes (so ``-0.0`` and
    ``0.0`` differ and a NaN equals the same NaN). Otherwise floating-point elements match when
    ``|b - a| <= atol + rtol * |a|`` (NaN matches NaN); integer elements must always be equal. The first
    difference is the first differing element (row-major) of the first differing array (by name), at its
    position in the output.
    """
    if rtol < 0 or atol < 0:
        raise ToolchainError("tolerances must not be negative")
    names = tuple(sorted(set(outs_a) | set(outs_b)))
    problems: list[str] = []
    first: Difference | None = None
    mismatches = 0
    max_abs = max_rel = 0.0
    exact = rtol == 0 and atol == 0
    for name in names:
        if name not in outs_a:
            problems.append(f"array {name} appears only in the candidate's output")
            continue
        if name not in outs_b:
            problems.append(f"array {name} is missing from the candidate's output")
            continue
        a, b = outs_a[name], outs_b[name]
        if a.shape != b.shape or a.dtype != b.dtype:
            problems.append(f"array {name}: reference is {a.dtype}{list(a.shape)}, "
                            f"candidate is {b.dtype}{list(b.shape)}")
            continue
        fa, fb = a.reshape(-1), b.reshape(-1)
        if exact or a.dtype.kind not in "fc":
            width = a.dtype.itemsize
            va = fa.view(f"V{width}") if width else fa
            vb = fb.view(f"V{width}") if width else fb
            bad = va != vb
        else:
            with np.errstate(invalid="ignore", over="ignore"):
                close = np.abs(fb - fa) <= atol + rtol * np.abs(fa)
            bad = ~(close | (np.isnan(fa) & np.isnan(fb)))
        if a.dtype.kind == "f" and fa.size:
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                diff = np.abs(fb.astype(np.float64) - fa.astype(np.float64))
                both_nan = np.isnan(fa) & np.isnan(fb)
                diff = np.where(both_nan, 0.0, diff)
                rel = np.where(diff == 0, 0.0, diff / np.abs(fa.astype(np.float64)))
            max_abs = max(max_abs, float(np.max(diff))) if not np.isnan(np.max(diff)) else math.nan
            max_rel = max(max_rel, float(np.max(rel))) if not np.isnan(np.max(rel)) else math.nan
        elif a.dtype.kind in "iu" and fa.size:
            diff_i = np.abs(fb.astype(np.float64) - fa.astype(np.float64))
            max_abs = max(max_abs, float(diff_i.max()))
        count = int(np.count_nonzero(bad))
        mismatches += count
        if count and first is None:
            flat = int(np.flatnonzero(bad)[0])
            index = tuple(int(i) for i in np.unravel_index(flat, a.shape)) if a.shape else ()
            first = Difference(name, index, _scalar(fa[flat]), _scalar(fb[flat]))
    equal = not problems and first is None
    return Comparison(equal=equal, arrays=names, first=first, mismatches=mismatches, max_abs_error=max_abs,
                      max_rel_error=max_rel, problems=tuple(problems), rtol=rtol, atol=atol)


def compare_checksums(stdout_a: str, stdout_b: str) -> Comparison:
    """Compare two runs by their ``polylab-checksum`` lines (bit-exact; no element index is known)."""
    ca, cb = parse_checksums(stdout_a), parse_checksums(stdout_b)
    names = tuple(sorted(set(ca) | set(cb)))
    problems = []
    for name in names:
        if name not in ca or name not in cb:
            problems.append(f"array {name} has a checksum in only one output")
        elif ca[name] != cb[name]:
            problems.append(f"array {name}: checksum {ca[name][0]} ({ca[name][1]} elements) in the reference, "
                            f"{cb[name][0]} ({cb[name][1]} elements) in the candidate")
    if not names:
        problems.append("neither output holds a polylab-checksum line")
    return Comparison(equal=not problems, arrays=names, problems=tuple(problems),
                      mismatches=sum(1 for p in problems if "checksum" in p))
