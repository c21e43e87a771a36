"""Experiments: verify a schedule's code against the original program, and time it.

This layer sits on top of code generation and the toolchain (like the command line): it generates code,
compiles it, runs it contained, compares outputs and measures times.

    >>> v = verify(scop, schedule, "openmp", params={"N": 12})            # doctest: +SKIP
    >>> r = measure(scop, schedule, "openmp", params={"N": 512}, threads=2)  # doctest: +SKIP
"""

from polylab.experiment.timing import TIMING_FLAGS, RunReport, measure, time_program
from polylab.experiment.verify import VERIFY_FLAGS, Verification, check_params, verify

__all__ = ["TIMING_FLAGS", "VERIFY_FLAGS", "RunReport", "Verification", "check_params", "measure",
           "time_program", "verify"]
