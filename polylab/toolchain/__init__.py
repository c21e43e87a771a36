"""polylab.toolchain: compile generated source text, run it contained, compare outputs, time it.

The toolchain knows nothing of polyhedra: it turns C or CUDA *text* into cached binaries
(:func:`compile`, :func:`compile_many`), runs them with a timeout and a memory limit (:func:`run`), reads
and compares the arrays a harness writes (the protocol is documented in :mod:`polylab.toolchain.compare`),
runs a reference and a candidate on the same inputs and judges the candidate (:func:`differential_run`,
:func:`judge`: the one differential run, with its vacuity rules) and times repeated runs
(:func:`time_binary`). :func:`report` says which tools this machine has (C compiler, OpenMP, nvcc, a GPU,
mlir-opt) and, for each missing one, why and what to install. :mod:`polylab.toolchain.sandbox` runs untrusted commands (a student's code) in a bubblewrap
sandbox: own PID namespace, no network, read-only system, one writable folder.
"""

from polylab.toolchain.build import (BASELINE_FLAGS, FAST_FLAGS, NATIVE_FLAGS, VERIFY_FLAGS, Binary,
                                     BuildRequest, cache_directory, clear_cache, compile, compile_many,
                                     cuda_flags, entry_is_intact, kill_process_group)
from polylab.toolchain.compare import (EXIT_CUDA, EXIT_OUT_OF_MEMORY, EXIT_OUTPUT, EXIT_STATUS_MEANINGS,
                                       EXIT_USAGE, HARNESS_SUPPORT_C, OUTPUTS_VARIABLE, OUTPUTS_WRITTEN,
                                       Comparison, Difference, compare_arrays, compare_checksums,
                                       compare_outputs, parse_checksums, parse_times, read_array, read_indices,
                                       read_outputs)
from polylab.toolchain.compilers import (Availability, Compiler, Tool, ToolchainReport, c_compiler,
                                         c_compiler_status, cuda_compiler, cuda_compiler_status, gpu_status,
                                         has_gpu, mlir_opt, mlir_opt_status, openmp_status, report,
                                         supports_openmp)
from polylab.toolchain import sandbox
from polylab.toolchain.diagnostics import Diagnostic, parse_diagnostics
from polylab.toolchain.differential import (ALL_ZERO_WARNING, Census, DifferentialRun, Outputs, census,
                                            census_warnings, differential_run, judge, read_run, run_outputs,
                                            same_values, vacuity)
from polylab.toolchain.printed import printed_outputs, printed_time
from polylab.toolchain.runner import (DEFAULT_MEMORY_LIMIT_MB, OUTPUT_DIR_VARIABLE, RunResult,
                                      compile_and_run, run, signal_description)
from polylab.toolchain.timing import Timing, speedup, time_binary

__all__ = [
    "BASELINE_FLAGS", "DEFAULT_MEMORY_LIMIT_MB", "EXIT_CUDA", "EXIT_OUTPUT", "EXIT_OUT_OF_MEMORY",
    "EXIT_STATUS_MEANINGS", "EXIT_USAGE", "FAST_FLAGS", "HARNESS_SUPPORT_C", "NATIVE_FLAGS", "OUTPUTS_VARIABLE",
    "OUTPUTS_WRITTEN", "OUTPUT_DIR_VARIABLE", "VERIFY_FLAGS", "ALL_ZERO_WARNING", "Availability", "Binary",
    "BuildRequest", "Census", "Comparison", "Compiler", "Diagnostic", "Difference", "DifferentialRun", "Outputs",
    "RunResult", "Timing", "Tool", "ToolchainReport", "c_compiler", "c_compiler_status", "cache_directory",
    "census", "census_warnings", "clear_cache", "compare_arrays", "compare_checksums", "compare_outputs",
    "compile", "compile_and_run", "compile_many", "cuda_compiler", "cuda_compiler_status", "cuda_flags",
    "entry_is_intact", "gpu_status", "has_gpu", "kill_process_group", "mlir_opt", "mlir_opt_status",
    "differential_run", "judge", "openmp_status", "parse_checksums", "parse_diagnostics", "parse_times",
    "printed_outputs", "printed_time",
    "read_array", "read_indices", "read_outputs", "read_run", "report", "run", "run_outputs", "same_values",
    "sandbox", "signal_description", "speedup", "supports_openmp", "time_binary", "vacuity",
]
