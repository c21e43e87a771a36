"""Bit-for-bit checks of passes, lowered and transformed stencil programs against the reference interpreter.

Every comparison is the toolchain's one differential judge (:func:`polylab.toolchain.judge`): every element,
bit for bit, the first difference named, and its vacuity rules (a comparison where the program leaves every
element at its initial value, or where every element is NaN or infinite, proves nothing and is not called
verified).

Passes (:func:`check_pass`, :func:`check_passes`): the interpreter runs the program before and after each
xDSL pass on the same field values (:func:`fields_for`); a difference is a
:class:`~polylab.stencil.errors.PassVerificationError` naming the pass, the field, the point and both values,
located at the store that writes it.

Compiled code (:func:`check`): the compiled program (the lowered model's original loops, or the code of any
schedule of it, for C, OpenMP or CUDA) runs on the harness's deterministic initial values
(:func:`polylab.codegen.harness.initial_values`); the interpreter runs on the same values, and its output
fields are the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from polylab import render, toolchain as tc
from polylab.codegen import PROGRAM_TARGETS, original_program
from polylab.codegen.harness import SOURCE_FILE, initial_values, source_text
from polylab.experiment import VERIFY_FLAGS
from polylab.stencil.errors import PassVerificationError, StencilError
from polylab.stencil.interpret import interpret
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.mlir import generate_code, run_loops
from polylab.stencil.passes import apply_pass, pass_text, pipeline
from polylab.stencil.program import Program


class _Judged:
    """What a check's ``verdict`` (a :class:`~polylab.toolchain.DifferentialRun`, or None: ``unrun``) says."""

    verdict: tc.DifferentialRun | None
    unrun: bool | None = None

    @property
    def verified(self) -> bool | None:
        return self.unrun if self.verdict is None else self.verdict.verified

    @property
    def changed(self) -> int:
        return 0 if self.verdict is None else self.verdict.census.computed

    @property
    def first_difference(self) -> Any:
        return None if self.verdict is None else self.verdict.difference

    def __bool__(self) -> bool:
        return self.verified is True


@dataclass(frozen=True, repr=False)
class StencilCheck(_Judged, render.TextDisplay):
    """A compiled program against the reference interpreter: ``verdict`` (the toolchain's
    :class:`~polylab.toolchain.DifferentialRun`; None when the program could not run here: ``reason``) for
    ``target``, and the ``code`` that ran."""

    target: str
    verdict: tc.DifferentialRun | None = None
    reason: str | None = None
    code: Any = field(default=None, repr=False, compare=False)

    unrun = None     # no verdict: the program could not run here

    @property
    def elements(self) -> int:
        return 0 if self.verdict is None else self.verdict.census.elements

    def __str__(self) -> str:
        if self.verdict is None:
            return f"not verified ({self.target}): {self.reason}"
        if self.verdict.verified:
            return (f"verified ({self.target}): {self.elements} elements of {', '.join(self.verdict.census.arrays)} "
                    f"equal bit for bit to the reference interpreter's ({self.changed} computed)")
        if self.verdict.verified is None:
            return f"not verified ({self.target}): {self.verdict.reason}"
        return f"NOT verified ({self.target}): {self.verdict.first_difference} (expected: the interpreter's)"

    def to_json(self) -> dict:
        d = self.verdict.difference if self.verdict is not None else None
        return {"verified": self.verified, "target": self.target, "elements": self.elements,
                "changed": self.changed, "reason": self.reason or (self.verdict.reason if self.verdict else None),
                "first_difference": None if d is None else
                {"array": d.array, "index": list(d.index), "expected": d.expected, "actual": d.actual}}


def reference(lowering: Lowering) -> dict[str, np.ndarray]:
    """The interpreter's output fields (by array name), from the harness's initial values."""
    initial = initial_values(lowering.scop, {})
    fields = {arg: initial[name] for arg, name in lowering.fields}
    out = interpret(lowering.program, fields)
    return {lowering.field_array(arg): data for arg, data in out.items()}


def run_lowered(lowering: Lowering, schedule: Any = None, target: str = "c", *, threads: int | None = None,
                timeout: float = 120.0) -> tuple[tc.Outputs | None, Any, str | None]:
    """Compile and run the lowered program (``schedule`` None: its original loops; a schedule, an isl
    schedule or a spec such as ``"tile(8,8); parallel"``, refused when illegal): every array it writes
    (the toolchain's :func:`~polylab.toolchain.run_outputs`); ``(outputs, code, reason)`` with outputs None
    and the reason when it cannot run here."""
    scop = lowering.scop
    code = None
    if schedule is None and target == "c":
        binary = tc.compile(original_program(scop), flags=VERIFY_FLAGS, user_sources={SOURCE_FILE: source_text(scop)})
    else:
        code = generate_code(lowering, schedule, target)
        kind = code.target
        if not kind.build_status():
            return None, code, kind.build_status().reason
        binary = kind.compile(code, VERIFY_FLAGS)
        if not kind.run_status():
            return None, code, f"{kind.run_status().reason}; the {kind.name} code compiled"
    return tc.run_outputs(binary, [], written=True, threads=threads, timeout=timeout), code, None


def judge_fields(expected: Mapping[str, np.ndarray], actual: Mapping[str, np.ndarray] | tc.Outputs,
                 initial: Mapping[str, Any]) -> tc.DifferentialRun:
    """The toolchain's verdict on ``actual`` (array -> values, or a run's outputs, gathered or whole) against
    ``expected`` (whole arrays), bit for bit, with the vacuity rules (``initial``: each array's values before
    the program)."""
    def before(name: str, flat: np.ndarray) -> np.ndarray:
        return np.asarray(initial[name]).reshape(-1)[flat.astype(np.int64)]

    cand = actual if isinstance(actual, tc.Outputs) else tc.Outputs({k: np.asarray(v) for k, v in actual.items()})
    arrays, indices = {}, {}
    for k, v in expected.items():
        full = np.asarray(v)
        if k in cand.arrays and cand.indices.get(k) is not None:
            arrays[k], indices[k] = full.reshape(-1)[cand.flat_indices(k).astype(np.int64)], cand.indices[k]
        else:
            arrays[k] = full.reshape(-1) if k in cand.arrays and np.ndim(cand.arrays[k]) == 1 else full
    ref = tc.Outputs(arrays, indices)
    kept = tc.Outputs({k: np.asarray(cand.arrays[k]) for k in expected if k in cand.arrays},
                      {k: cand.indices.get(k) for k in expected if k in cand.arrays})
    return tc.judge(ref, kept, initial=before, extents={k: np.shape(v) for k, v in expected.items()})


def check(program: Program | Lowering, schedule: Any = None, target: str = "c", *, threads: int | None = None,
          timeout: float = 120.0) -> StencilCheck:
    """Lower ``program`` (unless it is a :class:`Lowering`), run it (under ``schedule`` for ``target``) and
    judge its output fields against the reference interpreter's (bit for bit, vacuity refused)."""
    lowering = program if isinstance(program, Lowering) else lower(program)
    if target not in PROGRAM_TARGETS:
        raise StencilError(f"unknown target {target!r}", hint=f"the targets are {', '.join(PROGRAM_TARGETS)}")
    actual, code, reason = run_lowered(lowering, schedule, target, threads=threads, timeout=timeout)
    if actual is None:
        return StencilCheck(target, reason=reason, code=code)
    return StencilCheck(target, judge_fields(reference(lowering), actual, initial_values(lowering.scop, {})),
                        code=code)


# -- passes -------------------------------------------------------------------------------------------------------
def fields_for(program: Program, seed: int = 0) -> dict[str, Any]:
    """Deterministic values for every argument: each field over its bounds (values in [0.5, 1.5), distinct
    per field and point), each scalar ``0.5 + k / 8``."""
    out: dict[str, Any] = {}
    casts = {program.argument(op.results[0]): op.results[0] for op in program.walk()
             if op.name == "stencil.cast"}
    for k, (name, value) in enumerate(program.arguments()):
        typed = casts.get(value, value)
        try:
            lb, ub = program.field_bounds(typed)
        except StencilError:
            out[name] = 0.5 + k / 8
            continue
        rng = np.random.default_rng(seed * 1000 + k)
        out[name] = 0.5 + rng.random(tuple(h - lo for lo, h in zip(lb, ub)))
    return out


@dataclass(frozen=True, repr=False)
class PassCheck(_Judged, render.TextDisplay):
    """One pass checked by the interpreter: ``verdict`` (the toolchain's
    :class:`~polylab.toolchain.DifferentialRun` of the fields after the pass against those before it; None
    when the pass or the program after it could not run: ``reason``)."""

    name: str
    verdict: tc.DifferentialRun | None = None
    reason: str | None = None
    program: Any = field(default=None, repr=False, compare=False)

    unrun = False    # no verdict: the pass, or the program after it, failed

    def __str__(self) -> str:
        v = self.verdict
        if v is None:
            return f"{self.name}: NOT verified: {self.reason}"
        if v.verified:
            return f"{self.name}: verified ({v.census.elements} elements equal bit for bit, {self.changed} computed)"
        if v.verified is None:
            return f"{self.name}: not verified: {v.reason}"
        d = v.difference
        if d is None:
            return f"{self.name}: NOT verified: {v.first_difference}"
        return (f"{self.name}: NOT verified: {d.array}{list(d.index)} is {d.actual!r} after the pass and "
                f"{d.expected!r} before it")

    def raise_if_failed(self) -> None:
        if self.verified is True:
            return
        op = None
        d = self.first_difference
        if d is not None and self.program is not None:
            op = next((s for s in self.program.stores if self.program.argument_name(s.field) == d.array), None)
        message = str(self).split(": ", 1)[1]
        if self.program is not None:
            raise self.program.error(f"the pass {self.name} is {message[0].lower() + message[1:]}", op,
                                     hint="the pass changed what the program computes", error=PassVerificationError)
        raise PassVerificationError(f"the pass {self.name} is {message}")


def compare_fields(name: str, before: dict[str, np.ndarray], after: dict[str, np.ndarray],
                   initial: dict[str, Any], program: Any = None) -> PassCheck:
    """``after`` (field -> values) judged against ``before`` by the toolchain's differential judge."""
    return PassCheck(name, judge_fields(before, after, initial), program=program)


def check_pass(before: Program, after: Program, name: str, *, fields: Any = None) -> PassCheck:
    """The interpreter's outputs of ``after`` equal those of ``before`` (see the module)."""
    fields = fields if fields is not None else fields_for(before)
    want = interpret(before, fields)
    try:
        got = interpret(after, fields)
    except StencilError as err:
        return PassCheck(name, reason=f"the program after it cannot run: {err.message}", program=after)
    return compare_fields(name, want, got, fields, after)


def check_passes(program: Program, spec: str, *, fields: Any = None) -> tuple[PassCheck, ...]:
    """Each pass of ``spec`` run and checked independently (stops at the first pass that fails)."""
    fields = fields if fields is not None else fields_for(program)
    out = []
    for p in pipeline(spec):
        try:
            after = apply_pass(program, p)
        except StencilError as err:
            out.append(PassCheck(pass_text(p), reason=f"the pass failed: {err.message}", program=program))
            break
        result = check_pass(program, after, pass_text(p), fields=fields)
        out.append(result)
        if result.verified is False:
            break
        program = after
    return tuple(out)


def check_loops(program: Program, *, fields: Any = None) -> PassCheck | None:
    """xDSL's lowered loops (:func:`polylab.stencil.mlir.lowered_loops`), compiled with ``mlir-opt`` and run,
    judged against the reference interpreter (None when the MLIR tools are missing)."""
    from polylab.toolchain.mlirbuild import mlir_tools

    if mlir_tools()[0] is None:
        return None
    fields = fields if fields is not None else fields_for(program)
    return compare_fields("convert-stencil-to-ll-mlir (compiled by mlir-opt)", interpret(program, fields),
                          run_loops(program, fields), fields, program)


def check_mpi(program: Program, ranks: int, *, fields: Any = None) -> PassCheck:
    """The program distributed over ``ranks`` MPI ranks by xDSL, built and run with ``mpirun``
    (:func:`polylab.stencil.mpi.run_mpi`), judged against the reference interpreter's run of the whole program."""
    from polylab.stencil.mpi import run_mpi

    fields = fields if fields is not None else fields_for(program)
    return compare_fields(f"distribute-stencil over {ranks} ranks (mpirun)", interpret(program, fields),
                          run_mpi(program, ranks, fields), fields, program)
