"""Bit-for-bit checks of passes, lowered and transformed stencil programs against the reference interpreter.

Every comparison is the toolchain's one differential judge (:func:`polylab.toolchain.judge`: every element,
bit for bit, the first difference named, vacuous comparisons refused), and gives a :class:`StencilCheck`.
Passes (:func:`check_passes`): the interpreter runs the program before and after each xDSL pass on the same
field values (:func:`fields_for`); so for xDSL's loops compiled by ``mlir-opt`` (:func:`check_loops`) and the
program over MPI ranks (:func:`check_mpi`). Compiled code (:func:`check`: the lowered model's loops, or the
code of a schedule of it for C, OpenMP or CUDA) runs on the harness's initial values
(:func:`polylab.codegen.harness.initial_values`), and the interpreter on the same values.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

import numpy as np
from xdsl.dialects.stencil import CastOp

from polylab import render, toolchain as tc
from polylab.codegen import PROGRAM_TARGETS
from polylab.codegen.harness import initial_values
from polylab.experiment import VERIFY_FLAGS
from polylab.experiment.verify import compile_original
from polylab.stencil.errors import PassVerificationError, StencilError
from polylab.stencil.interpret import extents, interpret
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.mlir import generate_code, run_loops, run_mpi
from polylab.stencil.passes import apply_pass, pass_text, pipeline
from polylab.stencil.program import Program, box_of
from polylab.toolchain.mlirbuild import mlir_tools


@dataclass(frozen=True, repr=False)
class StencilCheck(render.TextDisplay):
    """One comparison with the reference interpreter: ``name`` (a pass, or a target) and ``verdict`` (the
    toolchain's :class:`~polylab.toolchain.DifferentialRun`), or the ``reason`` nothing was compared (then
    ``verified`` is ``unrun``: False for a pass that failed, None for code that cannot run here)."""

    name: str
    verdict: tc.DifferentialRun | None = None
    reason: str | None = None
    program: Any = field(default=None, compare=False)
    code: Any = field(default=None, compare=False)
    unrun: bool | None = False

    @property
    def verified(self) -> bool | None:
        return self.unrun if self.verdict is None else self.verdict.verified

    @property
    def changed(self) -> int:
        return 0 if self.verdict is None else self.verdict.census.computed

    @property
    def first_difference(self) -> tc.Difference | None:
        return None if self.verdict is None else self.verdict.difference

    def __bool__(self) -> bool:
        return self.verified is True

    def __str__(self) -> str:
        if self.verdict is None:
            return f"{self.name}: {'NOT' if self.unrun is False else 'not'} verified: {self.reason}"
        return f"{self.name}: {self.verdict}"      # the toolchain's words: verified, outputs differ, vacuous

    def to_json(self) -> dict:
        v, d = self.verdict, self.first_difference
        return {"name": self.name, "verified": self.verified, "elements": v.census.elements if v else 0,
                "changed": self.changed, "reason": self.reason or (v.reason if v else None),
                "first_difference": None if d is None else asdict(d)}

    def raise_if_failed(self) -> None:
        """A :class:`PassVerificationError` at the store of the first difference, unless verified."""
        if self.verified is not True:
            d, p = self.first_difference, self.program
            op = next((s for s in p.stores if d is not None and p.argument_name(s.field) == d.array), None)
            raise p.error(f"the pass {self.name} is not verified ({str(self).split(': ', 1)[1]})", op,
                          hint="the pass changed what the program computes ('expected': the value before the "
                          "pass, 'got': after it)", error=PassVerificationError)


def compare_fields(name: str, expected: Mapping[str, Any], actual: Mapping[str, Any] | tc.Outputs,
                   initial: Mapping[str, Any], program: Any = None, **more: Any) -> StencilCheck:
    """``actual`` (field -> values, or a compiled run's outputs, whole or gathered) judged against
    ``expected`` (whole arrays) by the toolchain's judge (``initial``: each array's values before the
    program)."""
    cand = actual if isinstance(actual, tc.Outputs) else tc.Outputs({k: np.asarray(v) for k, v in actual.items()})
    at = {k: cand.flat_indices(k).astype(np.int64) for k in expected if k in cand.arrays}
    flat = {k: np.asarray(v).reshape(-1) for k, v in expected.items()}
    verdict = tc.judge(tc.Outputs({k: v[at[k]] if k in at else v for k, v in flat.items()}, at),
                       tc.Outputs({k: np.asarray(cand.arrays[k]).reshape(-1) for k in at}, at),
                       initial=lambda n, i: np.asarray(initial[n]).reshape(-1)[i.astype(np.int64)],
                       extents={k: np.shape(v) for k, v in expected.items()})
    return StencilCheck(name, verdict, program=program, **more)


def check(program: Program | Lowering, schedule: Any = None, target: str = "c", *, threads: int | None = None,
          timeout: float = 120.0) -> StencilCheck:
    """Lower ``program`` (unless it is a :class:`Lowering`), compile and run it (its original loops, or the
    code of ``schedule``: a schedule, an isl schedule or a spec such as ``"tile(8,8); parallel"``, refused
    when illegal, for ``target``) and judge its output fields against the reference interpreter's."""
    lowering = program if isinstance(program, Lowering) else lower(program)
    if target not in PROGRAM_TARGETS:
        raise StencilError(f"unknown target {target!r}", hint=f"the targets are {', '.join(PROGRAM_TARGETS)}")
    code = None if schedule is None and target == "c" else generate_code(lowering, schedule, target)
    if code is None:
        binary = compile_original(lowering.scop, VERIFY_FLAGS)
    else:
        kind = code.target
        if not kind.build_status():
            return StencilCheck(target, reason=kind.build_status().reason, code=code, unrun=None)
        binary = kind.compile(code, VERIFY_FLAGS)
        if not kind.run_status():
            return StencilCheck(target, reason=f"{kind.run_status().reason}; the {kind.name} code compiled",
                                code=code, unrun=None)
    outputs = tc.run_outputs(binary, [], written=True, threads=threads, timeout=timeout)
    initial = initial_values(lowering.scop, {})
    expected = interpret(lowering.program, {arg: initial[name] for arg, name in lowering.fields})
    return compare_fields(target, {lowering.field_array(a): v for a, v in expected.items()}, outputs, initial,
                          lowering.program, code=code, unrun=None)


def fields_for(program: Program, seed: int = 0) -> dict[str, Any]:
    """Deterministic values for every argument: each field over its bounds (values in [0.5, 1.5), distinct
    per field and point), each scalar ``0.5 + k / 8``."""
    cast = {program.argument(op.result): box_of(op.result.type) for op in program.walk() if isinstance(op, CastOp)}
    out: dict[str, Any] = {}
    for k, (name, value) in enumerate(program.arguments()):
        box = box_of(value.type) or cast.get(value)
        out[name] = 0.5 + (k / 8 if box is None else np.random.default_rng(seed * 1000 + k).random(extents(box)))
    return out


def check_pass(before: Program, after: Program, name: str, *, fields: Any = None) -> StencilCheck:
    """The interpreter's outputs of ``after`` equal those of ``before`` (see the module)."""
    fields = fields if fields is not None else fields_for(before)
    want = interpret(before, fields)
    try:
        got = interpret(after, fields)
    except StencilError as err:
        return StencilCheck(name, reason=f"the program after it cannot run: {err.message}", program=after)
    return compare_fields(name, want, got, fields, after)


def check_passes(program: Program, spec: str, *, fields: Any = None) -> tuple[StencilCheck, ...]:
    """Each pass of ``spec`` run and checked independently (stops at the first pass that fails)."""
    fields = fields if fields is not None else fields_for(program)
    out = []
    for p in pipeline(spec):
        try:
            after = apply_pass(program, p)
        except StencilError as err:
            out.append(StencilCheck(pass_text(p), reason=f"the pass failed: {err.message}", program=program))
            break
        out.append(check_pass(program, after, pass_text(p), fields=fields))
        if out[-1].verified is False:
            break
        program = after
    return tuple(out)


def check_loops(program: Program) -> StencilCheck | None:
    """xDSL's lowered loops (:func:`polylab.stencil.mlir.lowered_loops`), compiled with ``mlir-opt`` and run,
    judged against the reference interpreter (None when the MLIR tools are missing)."""
    fields = fields_for(program)
    return compare_fields("convert-stencil-to-ll-mlir (compiled by mlir-opt)", interpret(program, fields),
                          run_loops(program, fields), fields, program) if mlir_tools()[0] else None


def check_mpi(program: Program, ranks: int) -> StencilCheck:
    """The program distributed over ``ranks`` MPI ranks by xDSL, built and run with ``mpirun``
    (:func:`polylab.stencil.mlir.run_mpi`), judged against the reference interpreter's run of the whole program."""
    fields = fields_for(program)
    return compare_fields(f"distribute-stencil over {ranks} ranks (mpirun)", interpret(program, fields),
                          run_mpi(program, ranks, fields), fields, program)
