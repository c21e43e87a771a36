"""Bit-for-bit checks of passes, lowered and transformed stencil programs against the reference interpreter.

Passes (:func:`check_pass`, :func:`check_passes`): the interpreter runs the program before and after each
xDSL pass on the same field values (:func:`fields_for`), and every stored element must be equal bit for bit;
a difference is a :class:`~polylab.stencil.errors.PassVerificationError` naming the pass, the field, the
point and both values, located at the store that writes it. A comparison where the program leaves every
element at its initial value proves nothing and is not called verified.

Compiled code (:func:`check`):

The compiled program (the lowered model's original loops, or the code of any schedule of it, for C,
OpenMP or CUDA) runs on the harness's deterministic initial values (:func:`polylab.codegen.harness.
initial_values`); the interpreter runs on the same values; every output field is compared element by
element, bit for bit (NaNs compare by their bits too). A comparison where the program leaves every
compared element at its initial value proves nothing and is not called verified.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from polylab import render, toolchain as tc
from polylab.codegen import PROGRAM_TARGETS, original_program
from polylab.codegen.harness import SOURCE_FILE, initial_values, source_text
from polylab.experiment import VERIFY_FLAGS
from polylab.stencil.errors import PassVerificationError, StencilError
from polylab.stencil.interpret import interpret
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.program import Program


@dataclass(frozen=True, repr=False)
class StencilCheck(render.TextDisplay):
    """The outcome: ``verified`` (True, False, or None when it could not run here: ``reason``), the
    ``elements`` compared in ``arrays``, how many the program ``changed`` from their initial values, and
    the ``first_difference`` (array, index, expected, actual) when it failed."""

    verified: bool | None
    target: str
    arrays: tuple[str, ...] = ()
    elements: int = 0
    changed: int = 0
    first_difference: tuple[str, tuple[int, ...], float, float] | None = None
    reason: str | None = None
    code: Any = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.verified is True

    def __str__(self) -> str:
        if self.verified is None:
            return f"not verified ({self.target}): {self.reason}"
        if self.verified:
            return (f"verified ({self.target}): {self.elements} elements of {', '.join(self.arrays)} equal bit for "
                    f"bit to the reference interpreter's ({self.changed} computed)")
        if self.first_difference is None:
            return f"NOT verified ({self.target}): {self.reason}"
        a, idx, e, v = self.first_difference
        return f"NOT verified ({self.target}): {a}{list(idx)} is {v!r}, the interpreter says {e!r}"

    def to_json(self) -> dict:
        return {"verified": self.verified, "target": self.target, "arrays": list(self.arrays),
                "elements": self.elements, "changed": self.changed, "reason": self.reason,
                "first_difference": None if self.first_difference is None else
                {"array": self.first_difference[0], "index": list(self.first_difference[1]),
                 "expected": self.first_difference[2], "actual": self.first_difference[3]}}


def reference(lowering: Lowering) -> dict[str, np.ndarray]:
    """The interpreter's output fields (by array name), from the harness's initial values."""
    initial = initial_values(lowering.scop, {})
    fields = {arg: initial[name] for arg, name in lowering.fields}
    out = interpret(lowering.program, fields)
    return {lowering.field_array(arg): data for arg, data in out.items()}


def run_lowered(lowering: Lowering, schedule: Any = None, target: str = "c", *, threads: int | None = None,
                timeout: float = 120.0) -> tuple[dict[str, tuple[np.ndarray, np.ndarray | None]] | None, Any, str | None]:
    """Compile and run the lowered program (``schedule`` None: its original loops; a schedule, an isl
    schedule or a spec such as ``"tile(8,8); parallel"``, refused when illegal) and read every array it
    writes; ``(outputs, code, reason)`` with outputs None and the reason when it cannot run here."""
    scop = lowering.scop
    code = None
    if schedule is None and target == "c":
        binary = tc.compile(original_program(scop), flags=VERIFY_FLAGS, user_sources={SOURCE_FILE: source_text(scop)})
    else:
        from polylab.stencil.mlir import generate_code

        code = generate_code(lowering, schedule, target)
        kind = code.target
        if not kind.build_status():
            return None, code, kind.build_status().reason
        binary = kind.compile(code, VERIFY_FLAGS)
        if not kind.run_status():
            return None, code, f"{kind.run_status().reason}; the {kind.name} code compiled"
    with tempfile.TemporaryDirectory(prefix="polylab-stencil-") as tmp:
        tc.run(binary, [], timeout=timeout, threads=threads, output_dir=Path(tmp),
               env={tc.OUTPUTS_VARIABLE: tc.OUTPUTS_WRITTEN})
        outputs = {}
        for k, v in tc.read_outputs(tmp).items():
            idx = tc.read_indices(tmp, k)
            outputs[k] = (np.array(v).reshape(-1), None if idx is None else np.array(idx))
    return outputs, code, None


def compare(lowering: Lowering, expected: Mapping[str, np.ndarray],
            actual: Mapping[str, tuple[np.ndarray, np.ndarray | None]], target: str, code: Any = None) -> StencilCheck:
    """Bit-for-bit comparison of the output fields (see the module): ``actual`` maps an array to its
    written values and their flat indices (None: the whole array)."""
    initial = initial_values(lowering.scop, {})
    names = tuple(sorted(expected))
    elements = changed = 0
    for name in names:
        if name not in actual:
            return StencilCheck(False, target, names, reason=f"the program wrote no output for {name}", code=code)
        values, flat = actual[name]
        full = np.asarray(expected[name])
        flat = np.arange(full.size) if flat is None else flat
        e, a = full.reshape(-1)[flat], values
        if e.shape != a.shape:
            return StencilCheck(False, target, names, reason=f"the program wrote {a.size} elements of {name}, "
                                f"the interpreter {e.size}", code=code)
        same = _bits(e) == _bits(a)
        elements += e.size
        changed += int(np.count_nonzero(_bits(e) != _bits(initial[name].reshape(-1)[flat])))
        if not same.all():
            k = int(np.argwhere(~same)[0][0])
            idx = tuple(int(x) for x in np.unravel_index(int(flat[k]), full.shape))
            return StencilCheck(False, target, names, elements, changed,
                                (name, idx, float(e[k]), float(a[k])), code=code)
    if changed == 0:
        return StencilCheck(None, target, names, elements, 0, code=code,
                            reason="the comparison would be vacuous: no output element changed")
    return StencilCheck(True, target, names, elements, changed, code=code)


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x)
    return x.view({8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}[x.dtype.itemsize])


def check(program: Program | Lowering, schedule: Any = None, target: str = "c", *, threads: int | None = None,
          timeout: float = 120.0) -> StencilCheck:
    """Lower ``program`` (unless it is a :class:`Lowering`), run it (under ``schedule`` for ``target``) and
    compare its output fields with the reference interpreter's, bit for bit."""
    lowering = program if isinstance(program, Lowering) else lower(program)
    if target not in PROGRAM_TARGETS:
        raise StencilError(f"unknown target {target!r}", hint=f"the targets are {', '.join(PROGRAM_TARGETS)}")
    actual, code, reason = run_lowered(lowering, schedule, target, threads=threads, timeout=timeout)
    if actual is None:
        return StencilCheck(None, target, reason=reason, code=code)
    return compare(lowering, reference(lowering), actual, target, code)


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
class PassCheck(render.TextDisplay):
    """One pass checked by the interpreter: ``verified`` (None: vacuous, ``reason``), the ``elements``
    compared, how many the program ``changed``, the ``first_difference`` (field, index, before, after)."""

    name: str
    verified: bool | None
    elements: int = 0
    changed: int = 0
    first_difference: tuple[str, tuple[int, ...], float, float] | None = None
    reason: str | None = None
    program: Any = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.verified is True

    def __str__(self) -> str:
        if self.verified:
            return f"{self.name}: verified ({self.elements} elements equal bit for bit, {self.changed} computed)"
        if self.first_difference is None:
            return f"{self.name}: NOT verified: {self.reason}"
        f, idx, e, a = self.first_difference
        return (f"{self.name}: NOT verified: {f}{list(idx)} is {a!r} after the pass and {e!r} before it")

    def raise_if_failed(self) -> None:
        if self.verified is True:
            return
        op = None
        if self.first_difference is not None and self.program is not None:
            op = next((s for s in self.program.stores
                       if self.program.argument_name(s.field) == self.first_difference[0]), None)
        message = str(self).split(": ", 1)[1]
        if self.program is not None:
            raise self.program.error(f"the pass {self.name} is {message[0].lower() + message[1:]}", op,
                                     hint="the pass changed what the program computes", error=PassVerificationError)
        raise PassVerificationError(f"the pass {self.name} is {message}")


def compare_fields(name: str, before: dict[str, np.ndarray], after: dict[str, np.ndarray],
                   initial: dict[str, Any], program: Any = None) -> PassCheck:
    """``before`` and ``after`` (field -> values) equal bit for bit, and not vacuously (see the module)."""
    if before.keys() != after.keys():
        return PassCheck(name, False, reason=f"the stored fields differ: {sorted(before)} before, {sorted(after)} "
                         "after", program=program)
    elements = changed = 0
    for f in sorted(before):
        e, a = np.asarray(before[f]), np.asarray(after[f])
        same = _bits(e) == _bits(a)
        elements += e.size
        changed += int(np.count_nonzero(_bits(e) != _bits(np.asarray(initial[f], dtype=e.dtype))))
        if not same.all():
            k = tuple(int(x) for x in np.argwhere(~same)[0])
            return PassCheck(name, False, elements, changed, (f, k, float(e[k]), float(a[k])), program=program)
    if changed == 0:
        return PassCheck(name, None, elements, 0, reason="vacuous: the program changes no element of its fields",
                         program=program)
    return PassCheck(name, True, elements, changed, program=program)


def check_pass(before: Program, after: Program, name: str, *, fields: Any = None) -> PassCheck:
    """The interpreter's outputs of ``after`` equal those of ``before`` (see the module)."""
    fields = fields if fields is not None else fields_for(before)
    want = interpret(before, fields)
    try:
        got = interpret(after, fields)
    except StencilError as err:
        return PassCheck(name, False, reason=f"the program after it cannot run: {err.message}", program=after)
    return compare_fields(name, want, got, fields, after)


def check_passes(program: Program, spec: str, *, fields: Any = None) -> tuple[PassCheck, ...]:
    """Each pass of ``spec`` run and checked independently (stops at the first pass that fails)."""
    from polylab.stencil.passes import apply_pass, pass_text, pipeline

    fields = fields if fields is not None else fields_for(program)
    out = []
    for p in pipeline(spec):
        try:
            after = apply_pass(program, p)
        except StencilError as err:
            out.append(PassCheck(pass_text(p), False, reason=f"the pass failed: {err.message}", program=program))
            break
        result = check_pass(program, after, pass_text(p), fields=fields)
        out.append(result)
        if result.verified is False:
            break
        program = after
    return tuple(out)
