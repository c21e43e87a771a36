"""Bit-for-bit checks of lowered and transformed stencil programs against the reference interpreter.

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
from polylab.stencil.errors import StencilError
from polylab.stencil.interpret import interpret
from polylab.stencil.lower import Lowering, lower
from polylab.stencil.mlir import generate_code
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
