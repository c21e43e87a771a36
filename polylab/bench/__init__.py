"""Benchmarks: many kernels x many variants, each verified against the original program, then timed.

This layer sits on top of the schedule, storage, code generation and experiment layers (like the command
line). It returns values; ``polylab bench`` and ``polylab demo`` print them.

    >>> from polylab.bench import load_kernel, plan, run_bench      # doctest: +SKIP
    >>> k = load_kernel("sl3.sy")                                    # doctest: +SKIP
    >>> cases = plan([k], ["original", "wavefront; parallel"], threads=[2], params={"n": 64})  # doctest: +SKIP
    >>> print(run_bench([k], cases).table())                        # doctest: +SKIP
"""

from polylab.bench.report import chart, format_table, write_chart, write_json
from polylab.bench.runner import BenchReport, CaseResult, run_bench, run_case, time_baseline
from polylab.bench.spec import Variant, expand_tile, prepare_variant
from polylab.bench.sweep import (DEFAULT_KERNELS, DEFAULT_SCHEDULES, NATIVE_TIMING_FLAGS, QUICK_KERNELS,
                                 QUICK_SCHEDULES, Case, Kernel, kernel_params, load_kernel, plan)

__all__ = ["BenchReport", "Case", "CaseResult", "DEFAULT_KERNELS", "DEFAULT_SCHEDULES", "Kernel",
           "NATIVE_TIMING_FLAGS", "QUICK_KERNELS", "QUICK_SCHEDULES", "Variant", "chart", "expand_tile",
           "format_table", "kernel_params", "load_kernel", "plan", "prepare_variant", "run_bench", "run_case",
           "time_baseline", "write_chart", "write_json"]
