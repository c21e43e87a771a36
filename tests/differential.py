"""Differential testing of the whole pipeline: random loop nests x random schedules.

Each case draws an affine loop nest (:mod:`strategies`: loops that count down, reads under a condition whose
subscript leaves the array where the condition keeps them from running, modulo subscripts), parameter values, a schedule (a recipe of the
schedule layer, a random isl time transformation, sometimes storage steps) and a target (C or OpenMP).
The schedule layer's legality gate decides: an illegal schedule must be refused by :func:`verify` before
anything is compiled. A legal one is generated, compiled, run and compared

* with the original program (:func:`polylab.experiment.verify`, every written element, bit for bit), and
* with an independent interpreter (``oracle_interp``, which does not use polylab's front end): the original
  program's final value of every element it writes must equal the interpreter's, bit for bit, starting
  from the same initial values (:func:`polylab.codegen.harness.initial_values`).

And the verdict itself is checked: a variant called verified must have compared at least one element that
the interpreter saw change (0 vacuous verifications), and a comparison refused as vacuous must be one in
which the interpreter saw no element change.

Long campaign (the test suite runs a few dozen cases; this runs as many as asked and prints a summary;
exit status 1 on a mismatch, 2 when some layer raised a traceback, listed with the first case of each)::

    python tests/differential.py --cases 1000 [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import islpy as isl
import numpy as np
from hypothesis import HealthCheck, Phase, given, seed as fixed_seed, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # the tests' helpers, and this checkout's polylab

import polylab  # noqa: E402
from polylab.storage import recipe_steps  # noqa: E402  - the storage recipe steps (fold_live_ins, ...)
from polylab import toolchain as tc  # noqa: E402
from polylab.codegen.harness import initial_values, output_points  # noqa: E402
from polylab.errors import IllegalTransformationError, PolylabError  # noqa: E402
from polylab.experiment import verify  # noqa: E402
from polylab.experiment.verify import VERIFY_FLAGS, compile_original, param_args  # noqa: E402
from polylab.schedule import is_legal, original, parse_schedule  # noqa: E402

from oracle_interp import run_fragment  # noqa: E402
from strategies import affine_nests  # noqa: E402

RECIPES = ["original", "original; parallel", "wavefront", "wavefront; parallel", "tile(2, 2)", "tile(3)",
           "tile_wavefront(2, 2)", "auto", "isl", "interchange(0, 1)", "reverse(0)", "reverse(1)",
           "skew(1, 0)", "skew(1, 0, 2)", "skew(2, 1)", "shift(S0, 0, 1)", "fuse", "distribute",
           "interchange(0, 1); parallel", "fold_live_ins; remove_dead_writes"]


class Mismatch(AssertionError):
    """A case in which polylab's verdict is wrong."""


@dataclass
class Stats:
    """What a campaign saw (each case lands in exactly one outcome). ``errors``: exceptions that are not a
    verdict (a traceback somewhere in the pipeline), by kind, with the first case that raised each."""

    outcomes: Counter = field(default_factory=Counter)
    #: how many cases had each feature of issue 28 (downward loops, reads under a condition, modulo subscripts)
    features: Counter = field(default_factory=Counter)
    elements: int = 0
    seconds: float = 0.0
    errors: dict = field(default_factory=dict)

    def __str__(self) -> str:
        total = sum(self.outcomes.values())
        parts = ", ".join(f"{k}: {v}" for k, v in sorted(self.outcomes.items()))
        text = (f"{total} cases in {self.seconds:.0f} s ({parts}); {self.elements:,} elements compared with the "
                "interpreter; mismatches: 0, vacuous verifications: 0; cases with "
                + ", ".join(f"{k}: {v}" for k, v in sorted(self.features.items())))
        for kind, (count, case) in self.errors.items():
            text += f"\npipeline error ({count} case(s)): {kind}\n  first: {case}"
        return text


@st.composite
def time_transform(draw, n: int) -> str:
    """An isl map on time vectors of length n: interchange, skew, reversal or an added wave dimension."""
    t = [f"t{k}" for k in range(n)]
    out = list(t)
    kind = draw(st.sampled_from(["swap", "skew", "reverse", "wave"]))
    a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
    if kind == "swap":
        out[a], out[b] = out[b], out[a]
    elif kind == "skew" and a != b:
        out[a] = f"{t[a]} + {draw(st.integers(1, 2))}{t[b]}"
    elif kind == "reverse":
        out[a] = f"-{t[a]}"
    elif kind == "wave":
        out = [f"{t[a]} + {t[b]}"] + out
    return f"{{ [{', '.join(t)}] -> [{', '.join(out)}] }}"


@dataclass(frozen=True)
class Case:
    source: str
    params: dict
    spec: str | None  # a recipe, or None: a random isl time transformation of the source order
    target: str
    data: st.DataObject = field(repr=False)


@st.composite
def cases(draw) -> Case:
    source = draw(affine_nests(max_statements=3))
    sizes = st.sampled_from([0, 1, 2, 3, 4, 5, 6])  # 0 now and then: loops that do not run
    params = {"N": draw(sizes), "M": draw(sizes)}
    spec = None if draw(st.integers(0, 2)) == 0 else draw(st.sampled_from(RECIPES))
    return Case(source, params, spec, draw(st.sampled_from(["c", "openmp"])), draw(st.data()))


def schedule_of(scop, case: Case) -> tuple[object, str]:
    """The case's schedule (a Schedule value) and its text, or None when it does not apply to this nest."""
    try:
        if case.spec is not None:
            return parse_schedule(scop, case.spec, steps=recipe_steps()), case.spec
        source_order = original(scop)
        if source_order.n_dims == 0:
            return None, "a time transformation"
        text = case.data.draw(time_transform(source_order.n_dims), label="transform")
        umap = source_order.union_map.apply_range(isl.UnionMap.from_map(isl.Map(text)))
        return parse_schedule(scop, str(umap.coalesce())), text
    except PolylabError:
        return None, case.spec or "a time transformation"


def reference_outputs(scop, params: dict, directory: Path) -> dict[str, np.ndarray]:
    """The original program's written elements (``POLYLAB_OUTPUTS=written``), built from the cache."""
    binary = compile_original(scop, VERIFY_FLAGS)
    tc.run(binary, param_args(scop, params), timeout=30, output_dir=directory,
           env={tc.OUTPUTS_VARIABLE: tc.OUTPUTS_WRITTEN})
    return tc.read_outputs(directory)


def _same(a: float | int, b: float | int) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return a == b


def oracle_check(case: Case, scop, params: dict) -> tuple[int, bool]:
    """Compare the original program with the interpreter on every written element; return the number of
    elements compared and whether the interpreter saw some element change (to a non-NaN value)."""
    init = initial_values(scop, params)
    trace = run_fragment(case.source, params, initial=init)
    written = {(a, idx) for (_, _, kind, a, idx) in trace.accesses if kind == "write"}
    with tempfile.TemporaryDirectory(prefix="polylab-diff-") as tmp:
        outputs = reference_outputs(scop, params, Path(tmp))
    compared, changed = 0, False
    for name, data in outputs.items():
        points = output_points(scop, name, params, written=True)
        assert points is not None
        if {(name, p) for p in points} != {w for w in written if w[0] == name}:
            raise Mismatch(f"the model's written elements of {name} differ from the interpreter's")
        for p, value in zip(points, data.reshape(-1).tolist()):
            expected = trace.memory[name][p]
            if not _same(float(expected), float(value)):
                raise Mismatch(f"{name}{list(p)}: the original program computes {value!r}, the interpreter "
                               f"{expected!r}")
            start = init[name][p].item()
            changed |= not _same(float(expected), float(start)) and not np.isnan(expected)
            compared += 1
    return compared, changed


def features(source: str) -> list[str]:
    """The features of issue 28 a nest has: a loop that counts down, a read under a condition (a ``?:`` arm,
    an operand of ``&&`` / ``||``), a modulo subscript."""
    return [name for name, present in (("negative steps", "--)" in source),
                                       ("conditional reads", "?" in source),
                                       ("modulo subscripts", re.search(r"\[[^\]]*%", source) is not None))
            if present]


def run_case(case: Case, stats: Stats) -> None:
    """One case; raises :class:`Mismatch` (with the case) when polylab's verdict is wrong."""
    stats.features.update(features(case.source))
    try:
        scop = polylab.parse(case.source).scop
    except PolylabError:
        stats.outcomes["not a SCoP"] += 1
        return
    sched, text = schedule_of(scop, case)
    if sched is None:
        stats.outcomes["schedule not applicable"] += 1
        return
    context = f"\nschedule {text}, target {case.target}, params {case.params}\n{case.source}"
    if not is_legal(sched):
        try:
            verify(scop, sched, case.target, params=case.params, threads=2, timeout=30)
        except IllegalTransformationError:
            stats.outcomes["illegal, refused"] += 1
            return
        raise Mismatch("an illegal schedule was not refused" + context)
    v = verify(scop, sched, case.target, params=case.params, threads=2, timeout=30)
    if v.verified is False:
        raise Mismatch(f"the variant differs from the original: {v.first_difference}" + context)
    compared, changed = oracle_check(case, scop, case.params)
    stats.elements += compared
    if v.verified and not changed:
        raise Mismatch(f"verified, but the interpreter saw no element change: vacuous ({v.census})" + context)
    if v.vacuous and changed and v.census is not None and v.mode == "written":
        raise Mismatch(f"refused as vacuous, but the interpreter saw elements change: {v.reason}" + context)
    stats.outcomes["verified" if v.verified else "vacuous, refused"] += 1


def campaign(n_cases: int, *, seed: int | None = None, stats: Stats | None = None,
             tolerate_errors: bool = False) -> Stats:
    """Run ``n_cases`` random cases (hypothesis draws them; a failure is shrunk and reported).

    ``tolerate_errors``: an exception that is not a :class:`Mismatch` (a traceback in some layer) is
    counted in ``stats.errors`` and the campaign goes on; otherwise it fails the campaign like a mismatch."""
    stats = stats or Stats()
    start = time.perf_counter()

    @settings(max_examples=n_cases, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate, Phase.shrink])
    @given(case=cases())
    def one(case: Case) -> None:
        try:
            run_case(case, stats)
        except Mismatch:
            raise
        except Exception as exc:  # a traceback in the pipeline: counted (campaign) or raised (tests)
            if not tolerate_errors:
                raise
            kind = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            count, first = stats.errors.get(kind, (0, case))
            stats.errors[kind] = (count + 1, first)
            stats.outcomes["pipeline error"] += 1

    if seed is not None:
        one = fixed_seed(seed)(one)
    one()
    stats.seconds = time.perf_counter() - start
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000, help="number of random cases (default 1000)")
    parser.add_argument("--seed", type=int, default=None, help="a seed, for a reproducible campaign")
    args = parser.parse_args(argv)
    os.environ.setdefault("POLYLAB_CACHE", tempfile.mkdtemp(prefix="polylab-diff-cache-"))
    stats = Stats()
    try:
        campaign(args.cases, seed=args.seed, stats=stats, tolerate_errors=True)
    except Mismatch as err:
        print(f"MISMATCH after {sum(stats.outcomes.values())} cases: {err}", file=sys.stderr)
        return 1
    print(stats)
    return 2 if stats.errors else 0


if __name__ == "__main__":
    sys.exit(main())
