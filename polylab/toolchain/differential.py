"""The differential run: one reference program and one candidate, run on the same inputs, every output
element compared, a vacuous comparison refused, the first difference reported.

This is the one place where polylab decides whether two programs computed the same thing; experiment
(a schedule's variant against the original), bench (a peer compiler's program) and the layers above call
:func:`differential_run` (two binaries) or :func:`judge` (outputs already in hand, e.g. an interpreter's).
The toolchain knows nothing of polyhedra: the caller says, as plain numbers, what the arrays' extents
are (to name a gathered element by its index in its array) and what each element held before the run
(to tell a computed value from an untouched one).

The verdict (:class:`DifferentialRun`):

* ``verified is False``: some compared element differs (bit for bit, or beyond a tolerance), or an array
  is missing on one side; ``difference`` is the first differing element (:class:`Difference`, in array
  order, named by its index in its array);
* ``verified is None`` (*vacuous*): the outputs are equal but cannot tell a wrong candidate from a right
  one (:func:`vacuity`): no element was compared; or every compared element of the reference is
  non-finite (NaN or infinite: an overflowing or 0/0 computation, equal whatever the order); or no
  compared element holds a computed value (each is unchanged from its initial value, or non-finite);
* ``verified is True``: equal, and some compared element holds a finite value the program computed.

Warnings (:func:`census_warnings`) do not refuse, but are reported: when every compared element is 0,
the result cannot depend on the order of the computation, so it says little about a reordering.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from polylab.errors import ToolchainError
from polylab.toolchain.build import Binary
from polylab.toolchain.compare import (OUTPUTS_VARIABLE, OUTPUTS_WRITTEN, Comparison, Difference, compare_arrays,
                                       read_indices, read_outputs)
from polylab.toolchain.runner import run

__all__ = ["ALL_ZERO_WARNING", "Census", "DifferentialRun", "Initial", "Outputs", "census", "census_warnings",
           "differential_run", "judge", "read_run", "run_outputs", "same_values", "vacuity"]

#: the warning of a comparison whose compared elements are all 0
ALL_ZERO_WARNING = "all compared elements are 0: the result does not depend on the order"

#: ``initial(array, flat_indices)``: the values the elements at these row-major flat indices of ``array``
#: held before the run
Initial = Callable[[str, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Outputs:
    """What one run wrote: each output array's elements (``arrays``) and, for an output gathered from some
    elements of its array, their row-major flat indices in the array (``indices``; None: the whole array)."""

    arrays: Mapping[str, np.ndarray]
    indices: Mapping[str, np.ndarray | None] = field(default_factory=dict)

    def flat_indices(self, name: str) -> np.ndarray:
        """The row-major flat indices, in its array, of output ``name``'s elements."""
        known = self.indices.get(name)
        return np.arange(self.arrays[name].size, dtype=np.uint64) if known is None else known.astype(np.uint64)


def read_run(directory: str | Path) -> Outputs:
    """The outputs a harness wrote to ``directory`` (:func:`polylab.toolchain.read_outputs` and the
    ``.idx`` files of gathered outputs)."""
    arrays = read_outputs(directory)
    return Outputs(arrays, {name: read_indices(directory, name) for name in arrays})


@dataclass(frozen=True)
class Census:
    """What the compared elements of the reference's output hold: how many (``elements``, in ``arrays``),
    and among them how many are NaN, infinite, exactly 0, and unchanged from their initial values (0 when
    the initial values were not given). The four counts of NaN, infinite and unchanged elements are
    disjoint (initial values are finite); ``zero`` may overlap ``unchanged``."""

    arrays: tuple[str, ...]
    elements: int
    nan: int = 0
    inf: int = 0
    zero: int = 0
    unchanged: int = 0

    @property
    def non_finite(self) -> int:
        return self.nan + self.inf

    @property
    def computed(self) -> int:
        """Elements that hold a finite value the program computed (changed from their initial value)."""
        return self.elements - self.nan - self.inf - self.unchanged

    def __str__(self) -> str:
        return (f"{self.elements:,} element(s) of {', '.join(self.arrays) or 'no array'}; {self.nan} NaN, "
                f"{self.inf} infinite, {self.zero} zero, {self.unchanged} unchanged from their initial values")

    def to_json(self) -> dict:
        return {"arrays": list(self.arrays), "elements": self.elements, "nan": self.nan, "inf": self.inf,
                "zero": self.zero, "unchanged": self.unchanged}


def census(outputs: Outputs, initial: Initial | None = None) -> Census:
    """Count what ``outputs`` (the reference's) hold; ``initial`` gives the elements' values before the run."""
    elements = nan = inf = zero = unchanged = 0
    for name, data in outputs.arrays.items():
        values = np.asarray(data).reshape(-1)
        elements += values.size
        if values.dtype.kind in "fc":
            nan += int(np.count_nonzero(np.isnan(values)))
            inf += int(np.count_nonzero(np.isinf(values)))
        if values.dtype.kind in "fciub":
            zero += int(np.count_nonzero(values == 0))
        if initial is not None and values.size:
            before = np.asarray(initial(name, outputs.flat_indices(name))).reshape(-1)
            unchanged += int(np.count_nonzero(values == before))
    return Census(tuple(sorted(outputs.arrays)), elements, nan, inf, zero, unchanged)


def vacuity(counts: Census, where: str = "") -> str | None:
    """Why a comparison of outputs with these counts proves nothing, or None when it proves something.

    ``where`` (``" at N = 4"``) is added to the reasons. The rules, in order: no element compared; every
    compared element non-finite (NaN or infinite); no compared element holds a computed value (each is
    unchanged from its initial value or non-finite)."""
    if counts.elements == 0:
        return f"the comparison would be vacuous: the reference program writes no element{where}"
    if counts.non_finite == counts.elements:
        kinds = "NaN" if counts.inf == 0 else "infinite" if counts.nan == 0 else "NaN or infinite"
        return (f"the comparison would be vacuous: all {counts.elements} compared elements are {kinds} in the "
                f"reference program's output{where}, whatever the order of the computation")
    if counts.computed <= 0:
        return (f"the comparison would be vacuous: the reference program leaves every compared element at its "
                f"initial value, NaN or infinite{where} (do its loops run? was its kernel optimised away?)")
    return None


def census_warnings(counts: Census) -> tuple[str, ...]:
    """What a comparison with these counts should be reported with, without refusing it."""
    return (ALL_ZERO_WARNING,) if counts.elements and counts.zero == counts.elements else ()


@dataclass(frozen=True)
class DifferentialRun:
    """The verdict of comparing a candidate's outputs with a reference's (see the module).

    ``verified``: True, False (``difference`` and ``comparison`` say what differs) or None (vacuous:
    ``reason``). ``census``: what the reference's compared elements hold; ``warnings``:
    :func:`census_warnings`. ``reference``: the reference's outputs (for further checks by the caller)."""

    verified: bool | None
    comparison: Comparison
    census: Census
    difference: Difference | None = None
    reason: str | None = None
    warnings: tuple[str, ...] = ()
    reference: Outputs | None = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.verified is True

    @property
    def vacuous(self) -> bool:
        return self.verified is None

    @property
    def first_difference(self) -> str | None:
        """The first difference as text (``a[2][3]: expected 1.5, got 2.0``), or what else differs."""
        if self.difference is not None:
            return str(self.difference)
        if not self.comparison.equal:
            return "; ".join(self.comparison.problems) or None
        return None

    def __str__(self) -> str:
        if self.verified is False:
            return f"outputs differ: first difference at {self.first_difference}"
        head = "verified" if self.verified else f"not verified: {self.reason}"
        return "\n".join([f"{head}; compared {self.census}", *self.warnings])


def _in_array(difference: Difference, outputs: Outputs,
              extents: Mapping[str, Sequence[int]] | None) -> Difference:
    """The difference at its index in its array (a gathered output's position mapped through its flat
    indices and the array's ``extents``)."""
    flat = outputs.indices.get(difference.array)
    shape = (extents or {}).get(difference.array)
    if flat is None or shape is None or len(difference.index) != 1 or difference.index[0] >= flat.size:
        return difference
    shape = tuple(int(e) for e in shape)
    index = tuple(int(i) for i in np.unravel_index(int(flat[difference.index[0]]), shape)) if shape else ()
    return Difference(difference.array, index, difference.expected, difference.actual)


def judge(reference: Outputs, candidate: Outputs, *, initial: Initial | None = None,
          extents: Mapping[str, Sequence[int]] | None = None, where: str = "", rtol: float = 0.0,
          atol: float = 0.0) -> DifferentialRun:
    """Compare ``candidate`` with ``reference`` element by element (bit for bit by default), count what the
    reference holds, and give the verdict of the module's rules.

    ``initial(array, flat_indices)``: the elements' values before the run (without it no element counts
    as unchanged); ``extents``: each array's extents, to name a gathered element by its index in its
    array; ``where``: the inputs in words for the reasons (``" at N = 4"``)."""
    cmp = compare_arrays(reference.arrays, candidate.arrays, rtol=rtol, atol=atol)
    if any(reference.indices.get(n) is not None and candidate.indices.get(n) is not None
           and not np.array_equal(reference.indices[n], candidate.indices[n]) for n in cmp.arrays
           if n in reference.arrays and n in candidate.arrays):
        cmp = Comparison(False, cmp.arrays, cmp.first, cmp.mismatches, cmp.max_abs_error, cmp.max_rel_error,
                         (*cmp.problems, "the candidate's outputs gather other elements than the reference's"),
                         rtol, atol)
    counts = census(reference, initial)
    warnings = census_warnings(counts)
    if not cmp.equal:
        first = _in_array(cmp.first, reference, extents) if cmp.first is not None else None
        return DifferentialRun(False, cmp, counts, first, warnings=warnings, reference=reference)
    reason = vacuity(counts, where)
    return DifferentialRun(None if reason else True, cmp, counts, reason=reason, warnings=warnings,
                           reference=reference)


def differential_run(reference: Binary, candidate: Binary, args: Sequence[int | str], *,
                     candidate_args: Sequence[int | str] | None = None, written: bool = False,
                     threads: int | None = None, timeout: float = 60.0, initial: Initial | None = None,
                     extents: Mapping[str, Sequence[int]] | None = None, where: str = "",
                     rtol: float = 0.0, atol: float = 0.0) -> DifferentialRun:
    """Run ``reference`` and ``candidate`` (two harness programs, :mod:`polylab.toolchain.compare`'s
    protocol) on the same inputs and :func:`judge` the candidate.

    Both get ``args`` (the candidate ``candidate_args`` when its parameters differ) and start from the
    harness's initial arrays; ``written=True`` compares every element the programs write
    (``POLYLAB_OUTPUTS=written``), else their live-out data. The candidate runs with ``threads`` (the
    reference with the default). A run that fails or passes ``timeout`` raises
    (:class:`~polylab.errors.RunFailure`, :class:`~polylab.errors.RunTimeout`)."""
    ref = run_outputs(reference, args, written=written, timeout=timeout)
    cand = run_outputs(candidate, args if candidate_args is None else candidate_args, written=written,
                       threads=threads, timeout=timeout)
    if not ref.arrays and not cand.arrays:
        raise ToolchainError("neither program wrote any array output",
                             hint="the harness writes its outputs where $POLYLAB_OUTPUT_DIR says")
    return judge(ref, cand, initial=initial, extents=extents, where=where, rtol=rtol, atol=atol)


def run_outputs(binary: Binary, args: Sequence[int | str], *, written: bool = False, threads: int | None = None,
                timeout: float = 60.0) -> Outputs:
    """Run a harness program once and read the outputs it wrote (``written``: every element it writes,
    else its live-out data)."""
    env = {OUTPUTS_VARIABLE: OUTPUTS_WRITTEN} if written else None
    with tempfile.TemporaryDirectory(prefix="polylab-differential-") as tmp:
        directory = Path(tmp)
        run(binary, args, timeout=timeout, threads=threads, output_dir=directory, env=env)
        _check_disk(directory)
        return read_run(directory)


def same_values(a: Outputs, b: Outputs) -> bool:
    """Whether every array of ``a`` holds, in ``b``, the same values in some order (the same multiset):
    outputs that do not change between two runs of a program at different sizes."""
    for name, data in a.arrays.items():
        other = b.arrays.get(name)
        if other is None or other.size != data.size or \
                not np.array_equal(np.sort(np.asarray(other).reshape(-1)), np.sort(np.asarray(data).reshape(-1))):
            return False
    return True


def _check_disk(directory: Path) -> None:
    usage = shutil.disk_usage(directory)
    if usage.free < 16 * 2 ** 20:
        raise ToolchainError(f"less than 16 MB free on the disk of {directory} after writing the outputs",
                             hint="free disk space, or set TMPDIR to a larger disk")
