"""The two roofs of a roofline, measured on this machine: copy bandwidth and arithmetic peak.

A roofline bounds the rate of a kernel that performs ``F`` floating-point operations and moves ``B`` bytes
between memory and the processor: ``GFLOP/s <= min(peak, bandwidth * F / B)``. ``F / B`` is the kernel's
*arithmetic intensity*. Both roofs are measured here, with the compiler and flags every timed variant uses
(:data:`~polylab.experiment.TIMING_FLAGS`, OpenMP on), by two small C programs:

* **copy bandwidth**: ``b[i] = a[i]`` over two arrays of doubles far larger than the caches (the STREAM
  "copy" kernel); ``16 * n`` bytes move per copy (8 read, 8 written; the write-allocate read is not counted,
  as in STREAM);
* **peak**: each thread updates 32 independent accumulators ``x[k] = x[k] * a + b`` (two operations each,
  vectorisable, no memory traffic); the peak is what this compiler reaches with these flags, not the
  processor's data-sheet figure.

Each program runs its kernel ``repeat`` times in one process (after one untimed warm-up) and reports each
time on a ``polylab-time`` line (:mod:`polylab.toolchain.compare`), so the roofs come with the same
statistics as every timing: a median and a 95 % interval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from polylab import toolchain as tc
from polylab.experiment.timing import TIMING_FLAGS, median_interval

#: doubles per array of the copy kernel (two arrays of 32 MiB: larger than the caches of common CPUs)
COPY_ELEMENTS = 1 << 22
#: independent accumulators per thread of the peak kernel, and the updates of each per repetition
ACCUMULATORS, PEAK_STEPS = 32, 1 << 20

_TIMER = r"""#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
"""

COPY_SOURCE = _TIMER + r"""
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  long n = atol(argv[1]); int repeat = atoi(argv[2]);
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
  if (!a || !b) return 3;
  #pragma omp parallel for
  for (long i = 0; i < n; i++) { a[i] = 1.0 + (double)(i % 7); b[i] = 0.0; }
  for (int r = 0; r <= repeat; r++) {
    double t0 = now();
    #pragma omp parallel for
    for (long i = 0; i < n; i++) b[i] = a[i];
    double t1 = now();
    if (r > 0) printf("polylab-time %.9f\n", t1 - t0);
    a[(r * 7919L) % n] += b[(r * 104729L) % n];
  }
  printf("copy-check %.1f\n", b[n / 2]);
  free(a); free(b);
  return 0;
}
"""

PEAK_SOURCE = _TIMER + r"""
#ifdef _OPENMP
#include <omp.h>
#endif
#define K @ACCUMULATORS@
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  long steps = atol(argv[1]); int repeat = atoi(argv[2]);
  double sink = 0.0;
  int threads = 1;
  for (int r = 0; r <= repeat; r++) {
    double t0 = now();
    #pragma omp parallel reduction(+ : sink)
    {
      #ifdef _OPENMP
      #pragma omp single
      threads = omp_get_num_threads();
      #endif
      double x[K];
      for (int k = 0; k < K; k++) x[k] = 1.0 + 1e-3 * k + 1e-6 * r;
      for (long s = 0; s < steps; s++)
        for (int k = 0; k < K; k++) x[k] = x[k] * 0.999999 + 1e-7;
      for (int k = 0; k < K; k++) sink += x[k];
    }
    double t1 = now();
    if (r > 0) printf("polylab-time %.9f\n", t1 - t0);
  }
  printf("peak-threads %d\npeak-check %.3f\n", threads, sink);
  return 0;
}
""".replace("@ACCUMULATORS@", str(ACCUMULATORS))


@dataclass(frozen=True)
class Roofs:
    """This machine's measured copy bandwidth (bytes per second) and peak (operations per second), with
    the threads used and each measurement's runs (:class:`~polylab.toolchain.Timing`)."""

    bandwidth: float
    peak: float
    threads: int | None
    copy: tc.Timing
    compute: tc.Timing
    copy_bytes: int
    peak_operations: int

    def ridge(self) -> float:
        """The arithmetic intensity (operations per byte) where the two roofs meet: below it a kernel is
        bound by memory, above it by arithmetic."""
        return self.peak / self.bandwidth

    def bound(self, intensity: float) -> float:
        """The roofline at ``intensity``: ``min(peak, bandwidth * intensity)`` operations per second."""
        return min(self.peak, self.bandwidth * intensity)

    def bandwidth_interval(self) -> tuple[float, float] | None:
        """The 95 % interval of the bandwidth (from the interval of the median copy time)."""
        iv = median_interval(self.copy.runs)
        return None if iv is None else (self.copy_bytes / iv[1], self.copy_bytes / iv[0])

    def peak_interval(self) -> tuple[float, float] | None:
        iv = median_interval(self.compute.runs)
        return None if iv is None else (self.peak_operations / iv[1], self.peak_operations / iv[0])

    def text(self) -> str:
        who = f"{self.threads} thread(s)" if self.threads else "the default threads"
        return (f"copy bandwidth {self.bandwidth / 1e9:.1f} GB/s, peak {self.peak / 1e9:.1f} GFLOP/s "
                f"({who}, median of {len(self.copy.runs)} and {len(self.compute.runs)} runs); ridge at "
                f"{self.ridge():.2f} flop/byte")

    def __str__(self) -> str:
        return self.text()


def measure_roofs(threads: int | None = None, *, repeat: int = 10, copy_elements: int = COPY_ELEMENTS,
                  peak_steps: int = PEAK_STEPS, timeout: float = 120.0) -> Roofs:
    """Compile and run the copy and peak programs (see the module text) with ``threads`` OpenMP threads."""
    copy_bin = tc.compile(COPY_SOURCE, flags=TIMING_FLAGS, openmp=True)
    peak_bin = tc.compile(PEAK_SOURCE, flags=TIMING_FLAGS, openmp=True)
    copy = tc.Timing.from_runs(tc.run(copy_bin, [copy_elements, repeat], threads=threads, timeout=timeout).times,
                               threads=threads)
    peak_run = tc.run(peak_bin, [peak_steps, repeat], threads=threads, timeout=timeout)
    compute = tc.Timing.from_runs(peak_run.times, threads=threads)
    used = re.search(r"^peak-threads (\d+)$", peak_run.stdout, re.MULTILINE)
    copy_bytes = 16 * copy_elements
    operations = 2 * ACCUMULATORS * peak_steps * (int(used.group(1)) if used else 1)
    return Roofs(copy_bytes / copy.median, operations / compute.median, threads, copy, compute, copy_bytes,
                 operations)


__all__ = ["COPY_ELEMENTS", "Roofs", "measure_roofs"]
