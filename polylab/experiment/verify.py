"""Verification: does a schedule's code compute what the original program computes?

The original program (the region's own text, :func:`polylab.codegen.original_program`) and the variant
(:func:`polylab.codegen.generate`) are wrapped in the same harness, so they start from identical arrays.
Both are compiled with the verification flags (``-O2 -ffp-contract=off``: no fused multiply-add, so a legal
reordering of the same operations on each element gives bit-identical results), run with the same
parameters, and every live-out array is compared element by element, bit-exact. A difference is reported
with the first differing element (row-major order) and the two values.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import Callable, Mapping

import islpy as isl

from polylab.codegen import GeneratedCode, generate, original_program
from polylab.codegen.harness import live_out_points
from polylab.errors import ModelError, ToolchainError
from polylab.experiment.schedules import legal_schedule, variant_scop
from polylab.model.scop import Scop
from polylab import toolchain as tc

Progress = Callable[[str], None]

#: flags of verification builds (the toolchain's, with every warning shown)
VERIFY_FLAGS: tuple[str, ...] = (*tc.VERIFY_FLAGS, "-Wall")


def _quiet(_: str) -> None:
    pass


def check_params(scop: Scop, params: Mapping[str, int] | None) -> dict[str, int]:
    """All parameters with integer values, inside the SCoP's context; else a :class:`ModelError`."""
    params = dict(params or {})
    unknown = [p for p in params if p not in scop.parameters]
    if unknown:
        raise ModelError(f"no parameter named {unknown[0]!r}",
                         hint=f"the parameters are {', '.join(scop.parameters) or 'none'}")
    missing = [p for p in scop.parameters if p not in params]
    if missing:
        raise ModelError(f"no value for the parameter{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                         hint="give every parameter a value, e.g. "
                              + " ".join(f"--param {p}=16" for p in scop.parameters))
    ctx = scop.context
    for name, v in params.items():
        k = ctx.find_dim_by_name(isl.dim_type.param, name)
        ctx = ctx.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(ctx.get_ctx(), int(v)))
    if ctx.is_empty():
        raise ModelError(f"the parameter values {params} are outside the SCoP's context {scop.context}",
                         hint="choose values the program assumes (the context lists the conditions)")
    return {p: int(params[p]) for p in scop.parameters}


def param_args(scop: Scop, params: Mapping[str, int]) -> list[int]:
    return [int(params[p]) for p in scop.parameters]


@dataclass(frozen=True)
class Verification:
    """The outcome of comparing a variant with the original program.

    ``verified``: True (every live-out element equal), False (a difference: ``first_difference`` says
    where) or None (the variant could not run here: ``reason`` says why, e.g. no GPU).
    """

    verified: bool | None
    target: str
    params: Mapping[str, int]
    threads: int | None = None
    comparison: tc.Comparison | None = None
    first_difference: str | None = None
    reason: str | None = None
    code: GeneratedCode | None = None
    warnings: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.verified)

    def __str__(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in self.params.items())
        if self.verified is None:
            return f"not verified ({self.target}, {where}): {self.reason}"
        if self.verified:
            return f"verified ({self.target}, {where}): {self.comparison}"
        return (f"VERIFICATION FAILED ({self.target}, {where}): first difference at {self.first_difference}"
                f"\n{self.comparison}")

    def to_json(self) -> dict:
        return {"verified": self.verified, "target": self.target, "params": dict(self.params),
                "threads": self.threads, "first_difference": self.first_difference, "reason": self.reason}


def _describe_difference(scop: Scop, params: Mapping[str, int], cmp: tc.Comparison) -> str | None:
    d = cmp.first
    if d is None:
        return "; ".join(cmp.problems) or None
    index = d.index
    points = live_out_points(scop, d.array, params)
    if points is not None and len(index) == 1 and index[0] < len(points):
        index = points[index[0]]
    idx = "".join(f"[{i}]" for i in index)
    return f"{d.array}{idx}: original {d.expected!r}, variant {d.actual!r}"


def cuda_unavailable() -> str | None:
    """Why CUDA code cannot run here (None when nvcc and a GPU are present)."""
    nvcc = tc.cuda_compiler_status()
    if not nvcc:
        return nvcc.reason
    gpu = tc.gpu_status()
    if not gpu:
        return gpu.reason
    return None


def build_variant(code: GeneratedCode, flags, progress: Progress = _quiet, *, force: bool = False) -> tc.Binary:
    """Compile generated code (C, OpenMP or CUDA); ``force=True`` rebuilds instead of reusing the
    toolchain's cached build."""
    if code.program is None:
        raise ToolchainError(f"{code.target} code is not a program and cannot be compiled here")
    if code.target == "cuda":
        progress("compiling the CUDA variant (nvcc)")
        return tc.compile(code.program, language="cuda", flags=[f for f in flags if f != "-Wall"], force=force)
    progress(f"compiling the {code.target} variant")
    return tc.compile(code.program, flags=flags, openmp=code.target == "openmp", force=force)


def verify(scop: Scop, schedule=None, target: str = "c", *, params: Mapping[str, int] | None = None,
           threads: int | None = None, timeout: float = 60.0, progress: Progress | None = None,
           code: GeneratedCode | None = None, force: bool = False) -> Verification:
    """Build and run the original program and the variant on the same inputs; compare every live-out array.

    ``scop``: the original SCoP (its program is the reference). ``schedule``: a
    :class:`polylab.schedule.Schedule` (or an ``isl.Schedule``/``isl.UnionMap``, read into one; None: the
    original schedule). The variant is generated from the schedule's own SCoP (``schedule.scop``: after a
    storage step, the transformed one), never from ``scop``. An illegal schedule is refused before any code
    is generated: :class:`~polylab.errors.IllegalTransformationError` names the violated dependence and a
    violating pair. ``force=True`` rebuilds both programs instead of reusing cached builds.
    ``target``: ``'c'``, ``'openmp'`` or ``'cuda'`` (``verified`` is None, with the reason, where CUDA
    cannot run). A compile error raises :class:`~polylab.errors.CompileError` with the compiler's
    message; a variant that runs past ``timeout`` seconds raises :class:`~polylab.errors.RunTimeout`.
    """
    progress = progress or _quiet
    values = check_params(scop, params)
    args = param_args(scop, values)
    schedule = legal_schedule(scop, schedule)  # also when ``code`` is given: never run an illegal one
    if code is None:
        code = generate(variant_scop(scop, schedule), schedule, target)
    if target == "cuda" and not tc.cuda_compiler_status():
        return Verification(None, target, values, threads, reason=tc.cuda_compiler_status().reason, code=code)
    progress("compiling the original program")
    ref = tc.compile(original_program(scop), flags=VERIFY_FLAGS, force=force)
    variant = build_variant(code, VERIFY_FLAGS, progress, force=force)
    warnings = tuple(str(w) for w in variant.warnings)
    if target == "cuda" and not tc.has_gpu():
        return Verification(None, target, values, threads, code=code, warnings=warnings,
                            reason=f"{tc.gpu_status().reason}; the CUDA code compiled with nvcc")
    with tempfile.TemporaryDirectory(prefix="polylab-verify-") as tmp:
        progress("running the original program")
        tc.run(ref, args, timeout=timeout, output_dir=f"{tmp}/original")
        progress(f"running the {target} variant")
        tc.run(variant, args, timeout=timeout, threads=threads, output_dir=f"{tmp}/variant")
        cmp = tc.compare_outputs(f"{tmp}/original", f"{tmp}/variant")
    return Verification(cmp.equal, target, values, threads, cmp,
                        None if cmp.equal else _describe_difference(scop, values, cmp), code=code,
                        warnings=warnings)
