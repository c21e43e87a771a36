"""Verification: does a schedule's code compute what the original program computes, and does the check say
anything?

The original program (the region's own text, :func:`polylab.codegen.original_program`) and the variant
(:func:`polylab.codegen.generate`) are wrapped in the same harness, so they start from identical arrays.
The parameters are validated first (:func:`polylab.experiment.params.validate_params`: integers, ranges,
memory, every access inside its array, proved with isl), then both programs are compiled with
:data:`VERIFY_FLAGS` (``-O2 -ffp-contract=off``: no fused multiply-add, so a legal reordering of the same
operations on each element gives bit-identical results), run with the same parameters, and their outputs
are compared element by element, bit for bit.

What is compared (``Verification.mode``):

* ``written`` (the default when the variant stores the same arrays as the original, i.e. no storage step
  changed them): every element some statement instance writes, in every written array
  (``POLYLAB_OUTPUTS=written``);
* ``live-out`` (after a storage step, whose variant keeps only what is read after the region): the
  live-out elements.

The comparison itself is the toolchain's one differential run (:func:`polylab.toolchain.differential_run`):
it refuses to call a vacuous comparison verified (no element compared, every compared element NaN or
infinite, or none holding a computed value: :func:`polylab.toolchain.vacuity`) and warns when every compared
element is 0. This module adds what only the model knows: the arrays' extents and initial values, and one
more rule for live-out comparisons: their values must change when the parameters shrink by one (else the
live-out does not depend on the part of the computation the larger size adds, like ``sl3``'s single
printed element for ``n >= 32``).

Several sizes (:class:`Verification` ``sizes``): besides the parameter values asked for, the variant is
verified at the smallest values at which every loop runs at least twice
(:func:`polylab.experiment.params.loops_run_twice`), so that "verified" never rests only on a run in which
some loop ran no iteration or one (a variant whose wrong loop runs no iteration at the values asked for is
caught at the other size).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from polylab import toolchain as tc
from polylab.codegen import GeneratedCode, Target, as_target, generate, original_program
from polylab.codegen.harness import SOURCE_FILE, initial_elements, live_outs, source_text
from polylab.errors import ModelError, VerificationError
from polylab.experiment.params import ParameterCheck, loops_run_twice, validate_params
from polylab.experiment.schedules import legal_schedule, variant_scop
from polylab.model.budget import bounded
from polylab.model.scop import Scop
from polylab.schedule import Schedule

__all__ = ["COMPARE_MODES", "VERIFY_FLAGS", "Progress", "SizeRun", "Verification", "compile_original",
           "compile_variant", "initial_of", "memory_limit", "no_progress", "param_args", "run_against_original",
           "verify"]

Progress = Callable[[str], None]

#: flags of verification builds: the toolchain's one preset (``-O2 -ffp-contract=off -Wall``)
VERIFY_FLAGS: tuple[str, ...] = tc.VERIFY_FLAGS

#: what :func:`verify` can compare: ``auto`` picks ``written`` unless a storage step changed the arrays
COMPARE_MODES = ("auto", "written", "live-out")

#: why a size was verified
ASKED, TWICE = "the values asked for", "every loop runs at least twice"


def no_progress(_: str) -> None:
    """A progress callback that ignores its messages."""


def param_args(scop: Scop, params: Mapping[str, int]) -> list[int]:
    """The harness's command-line arguments for ``params`` (in ``Scop.parameters`` order)."""
    return [int(params[p]) for p in scop.parameters]


def memory_limit(target: Target | str) -> int | None:
    """The memory limit (MB) of a run of ``target`` code (:attr:`polylab.codegen.Target.memory_limit_mb`)."""
    return as_target(target).memory_limit_mb


def initial_of(scop: Scop, values: Mapping[str, int]) -> tc.Initial:
    """The harness's initial values of ``scop``'s arrays at ``values``, as the toolchain's differential run
    asks for them (array name, row-major flat indices -> values)."""
    return lambda name, flat: initial_elements(scop, scop.array(name), values, flat)


def _where(values: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


@dataclass(frozen=True)
class SizeRun:
    """One differential run of a verification: the parameter values, why they were chosen (:data:`ASKED`
    or :data:`TWICE`) and the toolchain's verdict."""

    params: Mapping[str, int]
    why: str
    run: tc.DifferentialRun

    def to_json(self) -> dict:
        return {"params": dict(self.params), "why": self.why, "verified": self.run.verified,
                "reason": self.run.reason, "compared": self.run.census.to_json()}


@dataclass(frozen=True)
class Verification:
    """The outcome of comparing a variant with the original program.

    ``verified``: True (every compared element equal at every size, and the comparison at the values asked
    for not vacuous), False (a difference: ``difference`` says where, ``params`` at which values) or None
    (not verified: the variant could not run here, or the comparison was vacuous; ``reason`` says which).
    ``mode``: what was compared (``written`` or ``live-out``); ``sizes``: every run, the values asked for
    first (:class:`SizeRun`); ``census``: what the run at the values asked for compared. ``warnings``: the
    compiler's warnings about the variant; ``parameter_warnings``: the parameter check's (accesses that
    other parameter values would take out of their arrays); ``remarks``: what the comparison warns of
    (every compared element 0) and sizes that could not be verified.
    """

    verified: bool | None
    target: str
    params: Mapping[str, int]
    threads: int | None = None
    mode: str | None = None
    sizes: tuple[SizeRun, ...] = ()
    reason: str | None = None
    vacuous: bool = False
    code: GeneratedCode | None = field(default=None, repr=False)
    warnings: tuple[str, ...] = field(default=())
    parameter_warnings: tuple[str, ...] = field(default=())
    remarks: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.verified)

    @property
    def run(self) -> tc.DifferentialRun | None:
        """The run that decided: the first that failed, else the one at the values asked for."""
        failed = [s.run for s in self.sizes if s.run.verified is False]
        return failed[0] if failed else self.sizes[0].run if self.sizes else None

    @property
    def census(self) -> tc.Census | None:
        return self.sizes[0].run.census if self.sizes else None

    @property
    def comparison(self) -> tc.Comparison | None:
        return self.run.comparison if self.run is not None else None

    @property
    def difference(self) -> tc.Difference | None:
        return self.run.difference if self.run is not None else None

    @property
    def first_difference(self) -> str | None:
        """The first difference as text (``a[2][3]: expected 1.5, got 2.0``), or what else differs."""
        return self.run.first_difference if self.run is not None else None

    def require(self) -> Verification:
        """``self`` when verified; else :class:`~polylab.errors.VerificationError` with the first
        differing element (array, index, both values) or the reason the check was vacuous."""
        if self.verified:
            return self
        d = self.difference
        if self.verified is False:
            raise VerificationError(f"the {self.target} variant's output differs from the original's at "
                                    f"{self.first_difference}", array=d.array if d else None,
                                    index=d.index if d else None, expected=d.expected if d else None,
                                    actual=d.actual if d else None,
                                    hint="the schedule was accepted as legal: please report this case")
        raise VerificationError(f"not verified: {self.reason}", vacuous=self.vacuous,
                                hint="verify at other parameter values" if self.vacuous else None)

    def _compared(self, census: tc.Census | None = None) -> str:
        census = census if census is not None else self.census
        what = "every element the program writes" if self.mode == "written" else "the live-out elements"
        return f"{census} ({what})" if census is not None else ""

    def __str__(self) -> str:
        where = "".join(f", {k}={v}" for k, v in self.params.items())
        notes = "".join(f"\n  warning: {r}" for r in self.remarks)
        if self.verified is None:
            head = f"not verified ({self.target}{where}): {self.reason}"
            return head + (f"\n  compared: {self._compared()}" if self.census else "") + notes
        if self.verified is False:
            at = _where(self.run_params)
            return (f"VERIFICATION FAILED ({self.target}{where}): first difference"
                    f"{f' (at {at})' if at and self.run_params != self.params else ''} at {self.first_difference}"
                    f"\n{self.comparison}" + (f"\n  compared: {self._compared(self.run.census)}" if self.census else "")
                    + notes)
        also = "".join(f"\n  also verified at {_where(s.params)} ({s.why}): {s.run.census.elements:,} element(s)"
                       for s in self.sizes[1:] if s.run.verified)
        return f"verified ({self.target}{where}): compared bit for bit {self._compared()}{also}{notes}"

    @property
    def run_params(self) -> Mapping[str, int]:
        """The parameter values of :attr:`run`."""
        failed = [s.params for s in self.sizes if s.run.verified is False]
        return failed[0] if failed else self.params

    @property
    def verified_sizes(self) -> tuple[Mapping[str, int], ...]:
        """The parameter values at which the outputs were compared and found equal, not vacuously."""
        return tuple(s.params for s in self.sizes if s.run.verified)

    def compared_json(self) -> dict | None:
        """What was compared at the values asked for (``mode`` and the toolchain's census)."""
        return {"mode": self.mode, **self.census.to_json()} if self.census is not None else None

    def to_json(self) -> dict:
        return {"verified": self.verified, "target": self.target, "params": dict(self.params),
                "threads": self.threads, "first_difference": self.first_difference, "reason": self.reason,
                "vacuous": self.vacuous, "compared": self.compared_json(),
                "sizes": [s.to_json() for s in self.sizes], "warnings": list(self.remarks)}


def compile_variant(code: GeneratedCode, flags: tuple[str, ...], progress: Progress = no_progress, *,
                    force: bool = False) -> tc.Binary:
    """Compile generated code with ``flags`` (its target's compiler: gcc, with ``-fopenmp`` for OpenMP, or
    nvcc); ``force=True`` rebuilds instead of reusing the toolchain's cached build."""
    progress(f"compiling the {code.target} variant")
    return code.target.compile(code, flags, force=force)


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


def _sizes(scop: Scop, variant: Scop, schedule: Schedule | None, asked: ParameterCheck,
           target: str) -> tuple[list[tuple[ParameterCheck, str]], list[str]]:
    """The parameter values to verify at: those asked for, then (when they differ) the smallest at which
    every loop runs at least twice, if they pass the parameter check; and remarks on what was left out."""
    with bounded("choosing the parameter values at which every loop runs twice"):
        twice = loops_run_twice(scop)
    remarks = [f"{', '.join(twice.missed)} cannot run twice at the same parameter values as the other loops"] \
        if twice.missed else []
    sizes = [(asked, ASKED)]
    if twice.values is not None and dict(twice.values) != dict(asked.values):
        try:
            sizes.append((_check_parameters(scop, variant, schedule, twice.values, target), TWICE))
        except ModelError as err:
            remarks.append(f"not verified at {_where(twice.values)} ({TWICE}): {err.message}")
    return sizes, remarks


def run_against_original(scop: Scop, reference: tc.Binary, candidate: tc.Binary, check: ParameterCheck, *,
                         written: bool = False, threads: int | None = None,
                         timeout: float = 60.0) -> tc.DifferentialRun:
    """The toolchain's differential run of ``candidate`` (any harness program of ``scop``'s arrays: a
    variant, a peer compiler's program) against ``reference`` (the original program) at the checked
    parameter values, with the model's initial values and extents (every written element when
    ``written``, else the live-out data)."""
    values = dict(check.values)
    return tc.differential_run(reference, candidate, param_args(scop, values), written=written, threads=threads,
                               timeout=timeout, initial=initial_of(scop, values),
                               extents={s.name: s.extents for s in check.sizes},
                               where=f" at {_where(values)}" if values else "")


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


def _live_out_insensitive(scop: Scop, ref: tc.Binary, values: Mapping[str, int], reference: tc.Outputs,
                          target: str, timeout: float) -> str | None:
    """When only some elements are live-out: a reason if their values are the same at the parameters one
    and two smaller (two sizes, since ``n / 2`` is the same for ``n`` and ``n - 1``): then they do not
    depend on the computation these sizes add (sl3's centre element for ``n >= 32``)."""
    if not scop.parameters or all(lo.elements is None for lo in live_outs(scop)):
        return None
    smaller = _smaller_parameters(scop, values, target)
    if not all(tc.same_values(reference, tc.run_outputs(ref, param_args(scop, cand), timeout=timeout))
               for cand in smaller):
        return None
    if not smaller:
        return None
    here = ", ".join(f"{k} = {v}" for k, v in values.items())
    there = " and ".join(", ".join(f"{k} = {v}" for k, v in c.items()) for c in smaller)
    return (f"the comparison would be vacuous: the live-out elements ({', '.join(sorted(reference.arrays))}) take the "
            f"same values at {there} as at {here}, so they do not depend on the computation the larger sizes add; "
            "verify at smaller parameters, or without storage steps (then every written element is compared)")


def verify(scop: Scop, schedule=None, target: Target | str = "c", *, params: Mapping[str, int] | None = None,
           threads: int | None = None, timeout: float = 60.0, progress: Progress | None = None,
           code: GeneratedCode | None = None, force: bool = False, compare: str = "auto") -> Verification:
    """Build and run the original program and the variant on the same inputs; compare their outputs.

    ``scop``: the original SCoP (its program is the reference). ``schedule``: a
    :class:`polylab.schedule.Schedule` (or an ``isl.Schedule``/``isl.UnionMap``, read into one; None: the
    original schedule). The variant is generated from the schedule's own SCoP (``schedule.scop``: after a
    storage step, the transformed one), never from ``scop``. An illegal schedule is refused before any code
    is generated (:class:`~polylab.errors.IllegalTransformationError` names the violated dependence and a
    violating pair); parameter values that cannot be run are refused before anything is built
    (:class:`~polylab.errors.ModelError`, see :mod:`polylab.experiment.params`). Both programs run at
    ``params`` and at the smallest values where every loop runs twice (see the module). ``compare``:
    ``auto``, ``written`` or ``live-out`` (see the module's documentation). ``force=True`` rebuilds both
    programs instead of reusing cached builds. ``target``: a :class:`~polylab.codegen.Target` or its
    name (``'c'``, ``'openmp'``, ``'cuda'``; ``verified`` is None, with the reason, where its code cannot be
    built or run here). A compile error raises
    :class:`~polylab.errors.CompileError`; a run past ``timeout`` seconds raises
    :class:`~polylab.errors.RunTimeout`. ``.require()`` on the result raises
    :class:`~polylab.errors.VerificationError` unless the variant was verified.
    """
    progress = progress or no_progress
    kind = as_target(target)
    target = kind.name
    schedule = legal_schedule(scop, schedule)  # also when ``code`` is given: never run an illegal one
    variant_of = variant_scop(scop, schedule)
    mode = _compare_mode(scop, variant_of, compare)
    check = _check_parameters(scop, variant_of, schedule, params, target)
    values = dict(check.values)
    if code is None:
        code = generate(variant_of, schedule, target)
    common = dict(threads=threads, mode=mode, code=code, parameter_warnings=check.warnings)
    if not kind.build_status():
        return Verification(None, target, values, reason=kind.build_status().reason, **common)
    progress("compiling the original program")
    ref = compile_original(scop, VERIFY_FLAGS, force=force)
    variant = compile_variant(code, VERIFY_FLAGS, progress, force=force)
    common["warnings"] = tuple(str(w) for w in variant.warnings)
    if not kind.run_status():
        return Verification(None, target, values, reason=f"{kind.run_status().reason}; the {target} code compiled",
                            **common)
    sizes, remarks = _sizes(scop, variant_of, schedule, check, target)
    runs: list[SizeRun] = []
    for size, why in sizes:
        progress(f"running the original program and the variant at {_where(size.values) or 'no parameters'}")
        run = run_against_original(scop, ref, variant, size, written=mode == "written", threads=threads,
                                   timeout=timeout)
        runs.append(SizeRun(dict(size.values), why, run))
        if run.verified is False:
            return Verification(False, target, values, sizes=tuple(runs), remarks=tuple(remarks), **common)
    main = runs[0].run
    reason = main.reason
    if reason is None and mode == "live-out":
        reason = _live_out_insensitive(scop, ref, values, main.reference, target, timeout)
    remarks = [*main.warnings, *remarks, *(f"at {_where(r.params)} ({r.why}) {r.run.reason}" for r in runs[1:]
                                           if r.run.verified is None)]
    if reason is not None:
        return Verification(None, target, values, sizes=tuple(runs), reason=reason, vacuous=True,
                            remarks=tuple(remarks), **common)
    return Verification(True, target, values, sizes=tuple(runs), remarks=tuple(remarks), **common)
