"""Verification: does a schedule's code compute what the original program computes, and does the check say
anything?

The original program (the region's own text, :func:`polylab.codegen.original_program`) and the variant
(:func:`polylab.codegen.generate`) are wrapped in the same harness, so they start from identical arrays.
The parameters are validated first (:func:`polylab.experiment.params.validate_params`: integers, ranges,
memory, every access inside its array, proved with isl), then both programs are compiled with
:data:`VERIFY_FLAGS` (``-O2 -ffp-contract=off``: no fused multiply-add, so a legal reordering of the same
operations on each element gives bit-identical results), run with the same parameters, and their outputs
are compared element by element, bit for bit.

What is compared (:class:`Coverage`):

* ``written`` (the default when the variant stores the same arrays as the original, i.e. no storage step
  changed them): every element some statement instance writes, in every written array
  (``POLYLAB_OUTPUTS=written``);
* ``live-out`` (after a storage step, whose variant keeps only what is read after the region): the
  live-out elements.

A comparison is called *vacuous*, and the variant is not called verified, when it cannot tell a wrong
variant from a right one: no element was compared; every compared element is NaN in the original's output;
every compared element still holds its initial value (the original's loops did not run, or its kernel was
optimised away); or, comparing live-out elements only, their values do not change when the parameters
shrink by one (the live-out does not depend on the part of the computation the larger size adds, like
``sl3``'s single printed element for ``n >= 32``). Counts of NaN, infinite and unchanged elements are
reported either way.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from polylab import toolchain as tc
from polylab.codegen import GeneratedCode, generate, original_program
from polylab.codegen.extents import extent_values
from polylab.codegen.harness import SOURCE_FILE, initial_elements, live_outs, output_points, source_text
from polylab.errors import ModelError, ToolchainError, VerificationError
from polylab.experiment.params import ParameterCheck, validate_params
from polylab.experiment.schedules import legal_schedule, variant_scop
from polylab.model.scop import Scop
from polylab.schedule import Schedule

__all__ = ["COMPARE_MODES", "VERIFY_FLAGS", "Coverage", "Difference", "Progress", "Verification", "compile_original",
           "compile_variant", "coverage_of", "memory_limit", "no_progress", "param_args", "vacuity", "verify"]

Progress = Callable[[str], None]

#: flags of verification builds: the toolchain's one preset (``-O2 -ffp-contract=off -Wall``)
VERIFY_FLAGS: tuple[str, ...] = tc.VERIFY_FLAGS

#: what :func:`verify` can compare: ``auto`` picks ``written`` unless a storage step changed the arrays
COMPARE_MODES = ("auto", "written", "live-out")


def no_progress(_: str) -> None:
    """A progress callback that ignores its messages."""


def param_args(scop: Scop, params: Mapping[str, int]) -> list[int]:
    """The harness's command-line arguments for ``params`` (in ``Scop.parameters`` order)."""
    return [int(params[p]) for p in scop.parameters]


def memory_limit(target: str) -> int | None:
    """The memory limit (MB) of a run of ``target`` code: the toolchain's default for CPU programs, none for
    CUDA (the CUDA runtime reserves a large address range; see :mod:`polylab.toolchain.runner`)."""
    return None if target == "cuda" else tc.DEFAULT_MEMORY_LIMIT_MB


@dataclass(frozen=True)
class Coverage:
    """What a verification compared: ``mode`` (``written`` or ``live-out``), the arrays, how many elements,
    and among them how many are NaN, infinite, or unchanged from their initial values, in the original
    program's output."""

    mode: str
    arrays: tuple[str, ...]
    elements: int
    nan: int = 0
    inf: int = 0
    unchanged: int = 0

    @property
    def computed(self) -> int:
        """Elements that hold a computed value: changed from their initial value and not NaN."""
        return self.elements - self.nan - self.unchanged

    def __str__(self) -> str:
        what = "every element the program writes" if self.mode == "written" else "the live-out elements"
        return (f"{self.elements:,} element(s) of {', '.join(self.arrays) or 'no array'} ({what}); "
                f"{self.nan} NaN, {self.inf} infinite, {self.unchanged} unchanged from their initial values")

    def to_json(self) -> dict:
        return {"mode": self.mode, "arrays": list(self.arrays), "elements": self.elements, "nan": self.nan,
                "inf": self.inf, "unchanged": self.unchanged}


@dataclass(frozen=True)
class Difference:
    """The first element (in the order the outputs are written) where the variant differs from the
    original, in the array's own coordinates."""

    array: str
    index: tuple[int, ...]
    original: float | int
    variant: float | int

    def __str__(self) -> str:
        idx = "".join(f"[{i}]" for i in self.index)
        return f"{self.array}{idx}: original {self.original!r}, variant {self.variant!r}"


@dataclass(frozen=True)
class Verification:
    """The outcome of comparing a variant with the original program.

    ``verified``: True (every compared element equal, and the comparison not vacuous), False (a
    difference: ``difference`` says where) or None (not verified: the variant could not run here, or the
    comparison was vacuous; ``reason`` says which). ``coverage``: what was compared. ``warnings``: the
    compiler's warnings about the variant; ``parameter_warnings``: the parameter check's (accesses that
    other parameter values would take out of their arrays).
    """

    verified: bool | None
    target: str
    params: Mapping[str, int]
    threads: int | None = None
    comparison: tc.Comparison | None = None
    difference: Difference | None = None
    coverage: Coverage | None = None
    reason: str | None = None
    vacuous: bool = False
    code: GeneratedCode | None = field(default=None, repr=False)
    warnings: tuple[str, ...] = field(default=())
    parameter_warnings: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.verified)

    @property
    def first_difference(self) -> str | None:
        """The first difference as text (``a[2][3]: original 1.5, variant 2.0``), or what else differs."""
        if self.difference is not None:
            return str(self.difference)
        if self.comparison is not None and not self.comparison.equal:
            return "; ".join(self.comparison.problems) or None
        return None

    def require(self) -> Verification:
        """``self`` when verified; else :class:`~polylab.errors.VerificationError` with the first
        differing element (array, index, both values) or the reason the check was vacuous."""
        if self.verified:
            return self
        d = self.difference
        if self.verified is False:
            raise VerificationError(f"the {self.target} variant's output differs from the original's at "
                                    f"{self.first_difference}", array=d.array if d else None,
                                    index=d.index if d else None, expected=d.original if d else None,
                                    actual=d.variant if d else None,
                                    hint="the schedule was accepted as legal: please report this case")
        raise VerificationError(f"not verified: {self.reason}", vacuous=self.vacuous,
                                hint="verify at other parameter values" if self.vacuous else None)

    def __str__(self) -> str:
        where = "".join(f", {k}={v}" for k, v in self.params.items())
        if self.verified is None:
            head = f"not verified ({self.target}{where}): {self.reason}"
            return head + (f"\n  compared: {self.coverage}" if self.coverage else "")
        if self.verified:
            return f"verified ({self.target}{where}): compared bit for bit {self.coverage}"
        return (f"VERIFICATION FAILED ({self.target}{where}): first difference at {self.first_difference}"
                f"\n{self.comparison}" + (f"\n  compared: {self.coverage}" if self.coverage else ""))

    def to_json(self) -> dict:
        return {"verified": self.verified, "target": self.target, "params": dict(self.params),
                "threads": self.threads, "first_difference": self.first_difference, "reason": self.reason,
                "vacuous": self.vacuous, "compared": self.coverage.to_json() if self.coverage else None}


def compile_variant(code: GeneratedCode, flags: tuple[str, ...], progress: Progress = no_progress, *,
                    force: bool = False) -> tc.Binary:
    """Compile generated code (C, OpenMP or CUDA) with ``flags``; ``force=True`` rebuilds instead of
    reusing the toolchain's cached build."""
    if code.program is None:
        raise ToolchainError(f"{code.target} code is not a program and cannot be compiled here")
    if code.target == "cuda":
        progress("compiling the CUDA variant (nvcc)")
        return tc.compile(code.program, language="cuda", flags=flags, force=force)
    progress(f"compiling the {code.target} variant")
    return tc.compile(code.program, flags=flags, openmp=code.target == "openmp", force=force)


def compile_original(scop: Scop, flags: tuple[str, ...], *, force: bool = False) -> tc.Binary:
    """Compile the original program; an error in the region's own text is reported at its own line."""
    return tc.compile(original_program(scop), flags=flags, force=force,
                      user_sources={SOURCE_FILE: source_text(scop)})


def _compare_mode(scop: Scop, variant: Scop, compare: str) -> str:
    if compare not in COMPARE_MODES:
        raise ModelError(f"compare={compare!r} is not one of {', '.join(COMPARE_MODES)}")
    same_arrays = variant is scop
    if compare == "written" and not same_arrays:
        raise ModelError("the variant does not store the original's arrays (a storage step changed them), so "
                         "its written elements cannot be compared",
                         hint="compare the live-out elements (compare='live-out'; --compare live-out on the command "
                              "line)")
    if compare == "auto":
        return "written" if same_arrays else "live-out"
    return compare


def _check_parameters(scop: Scop, variant: Scop, schedule: Schedule | None, params: Mapping[str, int] | None,
                      target: str) -> ParameterCheck:
    """The parameter check of the original and, when a storage step made another SCoP, of the variant too
    (its arrays are allocated, its accesses must stay inside them, its loops hold the schedule's values)."""
    limit = memory_limit(target)
    times = schedule.union_map if schedule is not None else None
    check = validate_params(scop, params, memory_limit_mb=limit, schedule=times if variant is scop else None)
    if variant is not scop:
        validate_params(variant, check.values, memory_limit_mb=limit, schedule=times)
    return check


def _flat_indices(scop: Scop, name: str, values: Mapping[str, int], size: int, mode: str,
                  indices: Mapping[str, np.ndarray | None]) -> np.ndarray:
    """The row-major flat indices (in the array) of an output's elements: from the harness's ``.idx`` file
    when it wrote one, else from the model's points (whole arrays: every index)."""
    known = indices.get(name)
    if known is not None:
        return known.astype(np.uint64)
    array = scop.array(name)
    points = output_points(scop, name, values, written=mode == "written")
    if points is None:
        return np.arange(size, dtype=np.uint64)
    if not points or array.rank == 0:
        return np.zeros(len(points), dtype=np.uint64)
    coords = np.array(points, dtype=np.int64).reshape(len(points), array.rank)
    return np.ravel_multi_index(tuple(coords.T), extent_values(scop, array, values)).astype(np.uint64)


def coverage_of(scop: Scop, values: Mapping[str, int], outputs: Mapping[str, np.ndarray], mode: str,
                indices: Mapping[str, np.ndarray | None] | None = None) -> Coverage:
    """What the original's ``outputs`` hold: elements, NaN, infinite, unchanged from the initial values
    (``indices``: the harness's flat indices of gathered outputs, see :func:`polylab.toolchain.read_indices`)."""
    elements = nan = inf = unchanged = 0
    for name, data in outputs.items():
        flat = _flat_indices(scop, name, values, data.size, mode, indices or {})
        initial = initial_elements(scop, scop.array(name), values, flat)
        values_ = data.reshape(-1)
        elements += values_.size
        if values_.dtype.kind in "fc":
            nan += int(np.count_nonzero(np.isnan(values_)))
            inf += int(np.count_nonzero(np.isinf(values_)))
        unchanged += int(np.count_nonzero(values_ == initial))
    return Coverage(mode, tuple(sorted(outputs)), elements, nan, inf, unchanged)


def _read_run(directory: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray | None]]:
    outputs = tc.read_outputs(directory)
    return outputs, {name: tc.read_indices(directory, name) for name in outputs}


def vacuity(coverage: Coverage, values: Mapping[str, int]) -> str | None:
    """Why a comparison with this coverage proves nothing (None when it does)."""
    where = ", ".join(f"{k} = {v}" for k, v in values.items()) or "these parameters"
    if coverage.elements == 0:
        return f"the comparison would be vacuous: the original program writes no element at {where}"
    if coverage.nan == coverage.elements:
        return (f"the comparison would be vacuous: all {coverage.elements} compared elements are NaN in the "
                "original program's output")
    if coverage.computed <= 0:
        return (f"the comparison would be vacuous: the original program leaves every compared element at its "
                f"initial value or NaN at {where} (do its loops run? was its kernel optimised away?)")
    return None


def _run_pair(ref: tc.Binary, variant: tc.Binary, args: list[int], *, mode: str, threads: int | None,
              timeout: float, progress: Progress, directory: Path) -> None:
    env = {tc.OUTPUTS_VARIABLE: tc.OUTPUTS_WRITTEN} if mode == "written" else None
    progress("running the original program")
    tc.run(ref, args, timeout=timeout, output_dir=directory / "original", env=env)
    progress("running the variant")
    tc.run(variant, args, timeout=timeout, threads=threads, output_dir=directory / "variant", env=env)
    _check_disk(directory)


def _check_disk(directory: Path) -> None:
    usage = shutil.disk_usage(directory)
    if usage.free < 16 * 2 ** 20:
        raise ToolchainError(f"less than 16 MB free on the disk of {directory} after writing the outputs",
                             hint="free disk space, or set TMPDIR to a larger disk")


def _smaller_parameters(scop: Scop, values: Mapping[str, int], target: str) -> list[dict[str, int]]:
    """Parameter values 1 and 2 smaller (every parameter at once) that pass the parameter check."""
    out = []
    for step in (1, 2):
        try:
            cand = {p: v - step for p, v in values.items()}
            out.append(dict(validate_params(scop, cand, memory_limit_mb=memory_limit(target)).values))
        except ModelError:
            continue
    return out


def _live_out_insensitive(scop: Scop, ref: tc.Binary, values: Mapping[str, int], reference: Mapping[str, np.ndarray],
                          target: str, timeout: float, directory: Path) -> str | None:
    """When only some elements are live-out: a reason if their values are the same at the parameters one
    and two smaller (two sizes, since ``n / 2`` is the same for ``n`` and ``n - 1``): then they do not
    depend on the computation these sizes add (sl3's centre element for ``n >= 32``)."""
    if not scop.parameters or all(lo.elements is None for lo in live_outs(scop)):
        return None
    smaller = _smaller_parameters(scop, values, target)
    for k, cand in enumerate(smaller):
        where = directory / f"smaller{k}"
        tc.run(ref, param_args(scop, cand), timeout=timeout, output_dir=where)
        other = tc.read_outputs(where)
        for name, data in reference.items():
            alt = other.get(name)
            if alt is None or alt.size != data.size or not np.array_equal(np.sort(alt.reshape(-1)),
                                                                           np.sort(data.reshape(-1))):
                return None
    if not smaller:
        return None
    here = ", ".join(f"{k} = {v}" for k, v in values.items())
    there = " and ".join(", ".join(f"{k} = {v}" for k, v in c.items()) for c in smaller)
    return (f"the comparison would be vacuous: the live-out elements ({', '.join(sorted(reference))}) take the same "
            f"values at {there} as at {here}, so they do not depend on the computation the larger sizes add; "
            "verify at smaller parameters, or without storage steps (then every written element is compared)")


def verify(scop: Scop, schedule=None, target: str = "c", *, params: Mapping[str, int] | None = None,
           threads: int | None = None, timeout: float = 60.0, progress: Progress | None = None,
           code: GeneratedCode | None = None, force: bool = False, compare: str = "auto") -> Verification:
    """Build and run the original program and the variant on the same inputs; compare their outputs.

    ``scop``: the original SCoP (its program is the reference). ``schedule``: a
    :class:`polylab.schedule.Schedule` (or an ``isl.Schedule``/``isl.UnionMap``, read into one; None: the
    original schedule). The variant is generated from the schedule's own SCoP (``schedule.scop``: after a
    storage step, the transformed one), never from ``scop``. An illegal schedule is refused before any code
    is generated (:class:`~polylab.errors.IllegalTransformationError` names the violated dependence and a
    violating pair); parameter values that cannot be run are refused before anything is built
    (:class:`~polylab.errors.ModelError`, see :mod:`polylab.experiment.params`). ``compare``: ``auto``,
    ``written`` or ``live-out`` (see the module's documentation). ``force=True`` rebuilds both programs
    instead of reusing cached builds. ``target``: ``'c'``, ``'openmp'`` or ``'cuda'`` (``verified`` is
    None, with the reason, where CUDA cannot run). A compile error raises
    :class:`~polylab.errors.CompileError`; a run past ``timeout`` seconds raises
    :class:`~polylab.errors.RunTimeout`. ``.require()`` on the result raises
    :class:`~polylab.errors.VerificationError` unless the variant was verified.
    """
    progress = progress or no_progress
    schedule = legal_schedule(scop, schedule)  # also when ``code`` is given: never run an illegal one
    variant_of = variant_scop(scop, schedule)
    mode = _compare_mode(scop, variant_of, compare)
    check = _check_parameters(scop, variant_of, schedule, params, target)
    values = dict(check.values)
    args = param_args(scop, values)
    if code is None:
        code = generate(variant_of, schedule, target)
    if target == "cuda" and not tc.cuda_compiler_status():
        return Verification(None, target, values, threads, reason=tc.cuda_compiler_status().reason, code=code,
                            parameter_warnings=check.warnings)
    progress("compiling the original program")
    ref = compile_original(scop, VERIFY_FLAGS, force=force)
    variant = compile_variant(code, VERIFY_FLAGS, progress, force=force)
    warnings = tuple(str(w) for w in variant.warnings)
    if target == "cuda" and not tc.has_gpu():
        return Verification(None, target, values, threads, code=code, warnings=warnings,
                            parameter_warnings=check.warnings,
                            reason=f"{tc.gpu_status().reason}; the CUDA code compiled with nvcc")
    with tempfile.TemporaryDirectory(prefix="polylab-verify-") as tmp:
        directory = Path(tmp)
        _run_pair(ref, variant, args, mode=mode, threads=threads, timeout=timeout, progress=progress,
                  directory=directory)
        cmp = tc.compare_outputs(directory / "original", directory / "variant")
        reference, indices = _read_run(directory / "original")
        coverage = coverage_of(scop, values, reference, mode, indices)
        vacuous = vacuity(coverage, values)
        if vacuous is None and cmp.equal and mode == "live-out":
            vacuous = _live_out_insensitive(scop, ref, values, reference, target, timeout, directory)
    common = dict(threads=threads, comparison=cmp, coverage=coverage, code=code, warnings=warnings,
                  parameter_warnings=check.warnings)
    if not cmp.equal:
        return Verification(False, target, values, difference=_difference(scop, values, cmp, indices), **common)
    if vacuous is not None:
        return Verification(None, target, values, reason=vacuous, vacuous=True, **common)
    return Verification(True, target, values, **common)


def _difference(scop: Scop, values: Mapping[str, int], cmp: tc.Comparison,
                indices: Mapping[str, np.ndarray | None]) -> Difference | None:
    """The first difference, at its index in its array (gathered outputs are mapped back through the
    harness's flat indices)."""
    d = cmp.first
    if d is None:
        return None
    index = d.index
    flat = indices.get(d.array)
    if flat is not None and len(index) == 1 and index[0] < flat.size:
        extents = extent_values(scop, scop.array(d.array), values)
        index = tuple(int(i) for i in np.unravel_index(int(flat[index[0]]), extents)) if extents else ()
    return Difference(d.array, tuple(index), d.expected, d.actual)
