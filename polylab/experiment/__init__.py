"""Experiments: verify a schedule's code against the original program, and time it.

This layer sits on top of the schedule, storage, code generation and toolchain layers (like the command
line): it refuses illegal schedules (:func:`require_legal`, the schedule layer's exact check) and parameter
values that cannot be run (:func:`validate_params`: integers, ranges, memory, every access inside its
array), generates the code of the schedule's own SCoP (the transformed one after a storage step), compiles
it, runs it contained, compares outputs with the original program's (refusing to call a vacuous comparison
verified) and measures times.

    >>> v = verify(scop, schedule, "openmp", params={"N": 12})            # doctest: +SKIP
    >>> r = measure(scop, schedule, "openmp", params={"N": 512}, threads=2)  # doctest: +SKIP
"""

from polylab.experiment.params import ParameterCheck, check_params, parameter_value, validate_params
from polylab.experiment.schedules import require_legal, schedule_from_spec
from polylab.experiment.timing import (MIN_INTERVAL_RUNS, MIN_TIMED_SECONDS, TIMING_FLAGS, RunReport, SpeedupInterval,
                                       measure, median_interval, speedup_interval, time_program, unresolved)
from polylab.experiment.verify import VERIFY_FLAGS, SizeRun, Verification, verify

__all__ = ["MIN_INTERVAL_RUNS", "MIN_TIMED_SECONDS", "TIMING_FLAGS", "VERIFY_FLAGS", "ParameterCheck", "RunReport",
           "SizeRun", "SpeedupInterval", "Verification", "check_params", "measure", "median_interval",
           "parameter_value", "require_legal", "schedule_from_spec", "speedup_interval", "time_program",
           "unresolved", "validate_params", "verify"]
