"""The sl3 story end to end, as a sequence of sections for ``polylab demo`` (and for a notebook).

``sl3.sy`` initialises a 3D array ``x`` to 1.0 and sweeps it in place with a 7-point stencil. The tour:

1. the model and the dependences of the sweep: flow distances (1,0,0) (0,1,0) (0,0,1) (1,1,1), anti
   distances (1,0,0) (0,1,0) (0,0,1);
2. the wavefront integer program: the smallest theta = a . (i, j, k) with a . d >= 1 for every distance d
   is theta = i + j + k;
3. the point wavefront (all points of one plane i + j + k = t in parallel), verified and timed: on a few
   cores it is *slower* than the original (no locality, one barrier per wave);
4. storage: folding of the three "future" reads (they only ever see the initial 1.0), removal of the
   initialisation writes nobody reads any more, interleaving of what remains with the sweep, and the
   contraction of ``x`` to two planes ``xbuf[i % 2][j][k]`` with its proof; one plane is refused with a
   concrete overwritten value;
5. schedules for the contracted program: the tile-level wavefront (the contraction recomputed for it: the
   storage layer finds the smallest modulus under that schedule) and skewed strips of rows, whose
   independent points keep the processor's pipelines full;
6. a summary table: every variant verified against the original program and timed against it (gcc -O3).

:func:`sl3_tour` yields :class:`Section` values; the caller prints them (library code never prints).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from polylab.analysis import compute_dependences
from polylab.bench.report import format_seconds
from polylab.bench.runner import BenchReport, CaseResult, machine_info, run_case, time_baseline
from polylab.bench.sweep import Case, Kernel, load_kernel
from polylab.schedule import find_wavefront, original, parse_schedule
from polylab.storage import ContractionRefused, contract, fold_live_ins, interleave, recipe_steps, remove_dead_writes
from polylab.storage.fold import constant_writers

#: the program of the story (its texts explain sl3's initialisation nest, sweep and array ``x``)
KERNEL = "sl3.sy"


@dataclass(frozen=True)
class Section:
    """One step of the tour: a title, text, and the facts a test (or a notebook) may check."""

    title: str
    text: str
    facts: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        bar = "=" * min(78, max(20, len(self.title) + 4))
        return f"{bar}\n  {self.title}\n{bar}\n{self.text}"


#: the storage chain of the story, as recipe steps (the schedule of the sweep stays the source order)
STORAGE_CHAIN = "fold_live_ins; remove_dead_writes; interleave"


def _indent(text: str, pad: str = "  ") -> str:
    return "\n".join(pad + ln if ln else ln for ln in str(text).splitlines())


def _timing_line(r: CaseResult) -> str:
    if r.status != "verified":
        extra = f" (first difference: {r.first_difference})" if r.first_difference else ""
        return f"{r.status.upper()}: {r.reason}{extra}"
    sp = r.speedup
    rel = (f"{sp:.2f}x faster than" if sp >= 1 else f"{1 / sp:.1f}x SLOWER than") if sp else "vs"
    return (f"verified (bit-exact, n={r.case.verify_params.get('n')}) and timed (n={r.case.params.get('n')}, "
            f"{r.case.threads} thread(s)): median {format_seconds(r.seconds.median)}, "
            f"{rel} gcc -O3 on the original ({format_seconds(r.baseline.median)})")


@dataclass
class _Tour:
    """The state the sections share: the kernel, the sizes, the baseline and the measured results."""

    kernel: Kernel
    n: int
    threads: int
    tile: int
    verify_n: int
    repeat: int
    quick: bool
    progress: Callable[[str], None]
    baseline: Any = None
    results: list[CaseResult] = field(default_factory=list)

    @property
    def warmup(self) -> int:
        return 0 if self.quick else 1

    def measure(self, label: str, spec: str, nthreads: int) -> CaseResult:
        """Verify (at ``verify_n``) and time (at ``n``) one variant against the original program."""
        self.progress(f"{label}: verifying at n={self.verify_n}, timing at n={self.n}")
        case = Case(self.kernel.name, spec, label, nthreads, None, {"n": self.n}, {"n": self.verify_n}, "openmp")
        r = run_case(self.kernel, case, self.baseline, repeat=self.repeat, warmup=self.warmup, timeout=600.0,
                     progress=lambda m: self.progress(f"{label}: {m}"))
        self.results.append(r)
        return r


def sl3_tour(*, n: int = 384, threads: int = 2, quick: bool = False, tile: int | None = None,
             verify_n: int | None = None, repeat: int | None = None,
             progress: Callable[[str], None] | None = None) -> Iterator[Section]:
    """The tour (module text) of ``sl3.sy`` at size ``n`` with ``threads`` OpenMP threads.

    ``quick``: one timed run, no warm-up (for tests; give a small ``n``). ``tile``: the tile size of the
    tile-level wavefront (default 16; 4 when quick). ``verify_n``: the size of the verification runs
    (default ``min(n, 16)``: after storage steps only sl3's printed element can be compared, and it stops
    depending on ``n`` near 30, which verification refuses as vacuous). The last section carries the :class:`BenchReport` in ``facts['report']``.
    """
    t = _Tour(load_kernel(KERNEL), n, threads, tile or (4 if quick else 16), verify_n or min(n, 16),
              repeat or (1 if quick else 3), quick, progress or (lambda _m: None))
    yield from _model_sections(t)
    t.progress("timing the original program (gcc -O3)")
    t.baseline = time_baseline(t.kernel, {"n": n}, repeat=t.repeat, warmup=t.warmup, timeout=600.0)
    yield _point_wavefront_section(t)
    yield from _storage_sections(t)
    yield from _schedule_sections(t)
    report = BenchReport(tuple(t.results), {t.kernel.name: t.baseline},
                         {"n": n, "verify_n": t.verify_n, "threads": threads, "tile": t.tile, "repeat": t.repeat},
                         machine_info())
    yield Section("12. Summary: every variant verified against the original, timed against gcc -O3",
                  report.table(), {"report": report})


def _model_sections(t: _Tour) -> Iterator[Section]:
    """1-3: the program, the dependences of the sweep and the wavefront integer program."""
    scop = t.kernel.scop
    lines = [f"{t.kernel.path}: parameters {', '.join(scop.parameters)}; statements:"]
    for s in scop.statements:
        lines.append(f"  {s.name}[{', '.join(s.iterators)}] (line {s.location.line}): " + " ".join(s.text.split()))
    yield Section("1. The program: an initialisation nest and an in-place 3D sweep", "\n".join(lines),
                  {"statements": [s.name for s in scop.statements]})
    sweep = scop.statements[-1].name
    graph = compute_dependences(scop)
    by_kind: dict[str, list[tuple[int, ...]]] = {}
    lines = [f"memory-based dependences of the sweep {sweep} -> {sweep} (exact, isl), source access -> "
             f"sink access:"]
    for d in graph.between(sweep, sweep):
        dist = d.distance
        pair = f"{d.source_ref.text} -> {d.sink_ref.text}"
        lines.append(f"  {d.kind:5s} on {d.array}: {pair:40s} distance {dist}")
        if dist is not None:
            by_kind.setdefault(d.kind, []).append(tuple(dist))
    for kind, ds in by_kind.items():
        lines.append(f"  {kind} distances: " + " ".join(str(x) for x in sorted(set(ds), reverse=True)))
    others = [d for d in graph.dependences if d.source != sweep or d.sink != sweep]
    if others:
        lines.append(f"  and {len(others)} dependence(s) from the initialisation to the sweep (the sweep reads "
                     f"x[i+1][j][k], x[i][j+1][k], x[i][j][k+1] before it writes them: they see the 1.0 of "
                     f"the initialisation)")
    yield Section("2. Dependences and their distance vectors", "\n".join(lines),
                  {"distances": {kk: sorted(set(v)) for kk, v in by_kind.items()}})
    wf = find_wavefront(original(scop))
    theta = wf.theta.get(sweep, "")
    yield Section("3. The wavefront search: theta(i, j, k) = a . (i, j, k), a . d >= 1 for every d",
                  str(wf) + f"\n\n  => theta = {theta}: every dependence crosses from one plane "
                  f"{theta} = t to a later one, so all points of a plane may run in parallel.",
                  {"theta": theta, "hyperplane": wf.hyperplane})


def _point_wavefront_section(t: _Tour) -> Section:
    """4: the point wavefront, verified and timed, beside polylab's code of the original order."""
    r_orig = t.measure("original order (polylab's code)", "original", 1)
    r_wave = t.measure("point wavefront", "wavefront; parallel", t.threads)
    slow = (1 / r_wave.speedup) if r_wave.speedup else None
    return Section(
        "4. The point wavefront, verified and timed",
        f"schedule: {r_wave.schedule}\n  {_timing_line(r_wave)}\n"
        f"  original order regenerated by polylab: {_timing_line(r_orig)}\n"
        "  Why slower: consecutive points of a wave are far apart in memory (no locality, no vectors),\n"
        "  and every one of the ~3n waves ends with a barrier.",
        {"verified": r_wave.verified, "slowdown": slow})


def _storage_sections(t: _Tour) -> Iterator[Section]:
    """5-9: folding, dead writes, interleaving, contraction (and the refused single plane), verified."""
    scop = t.kernel.scop
    folded, frep = fold_live_ins(scop)
    yield Section("5. Folding the reads that only ever see the initial value", str(frep),
                  {"folded": len(frep.folded)})
    dead, drep = remove_dead_writes(folded, statements=list(constant_writers(folded)))
    yield Section("6. Removing initialisation writes that no read uses any more", str(drep), {})
    inter, irep = interleave(dead, None)
    yield Section("7. Interleaving what remains of the initialisation with the sweep", str(irep), {})
    cscop, _, crep = contract(dead, inter, "x")
    try:
        contract(dead, inter, "x", modulus=1)
        refusal = None
    except ContractionRefused as err:
        refusal = err
    planes = crep.modulus
    text = str(crep) + "\n\n  one plane (modulus 1): "
    text += (f"REFUSED: {refusal.message}" + (f"\n  hint: {refusal.hint}" if refusal.hint else "")
             if refusal is not None else "accepted (unexpected)")
    yield Section(f"8. Contraction: x[i][j][k] -> xbuf[i % {planes}][j][k], {planes} planes instead of "
                  f"{scop.array('x').extents[0]}", text,
                  {"planes": planes, "refused_one_plane": refusal is not None,
                   "refusal": refusal.message if refusal is not None else None})
    r_con = t.measure("folded + contracted (2 planes)", f"{STORAGE_CHAIN}; contract(x)", 1)
    yield Section("9. The contracted program, verified and timed", _timing_line(r_con) + "\n\n"
                  + _indent("\n".join(f"{s.name}: {s.code()}" for s in cscop.statements)),
                  {"verified": r_con.verified})


def _schedule_sections(t: _Tour) -> Iterator[Section]:
    """10-11: the tile-level wavefront (the contraction recomputed for it) and skewed strips."""
    tile = t.tile
    tw = parse_schedule(t.kernel.scop, f"{STORAGE_CHAIN}; tile_wavefront({tile}, {tile})", steps=recipe_steps())
    t.progress("contraction under the tile-level wavefront: searching the smallest modulus")
    lines = [f"schedule: {STORAGE_CHAIN}; tile_wavefront({tile}, {tile})", _indent(tw.text())]
    try:
        _, _, trep = contract(tw.scop, tw, "x", max_modulus=2 * tile + 2)
        tplanes: int | None = trep.modulus
        failed = [a for a in trep.attempts if not a.safe]
        lines.append(f"contraction recomputed for this schedule: {trep.mapping} ({tplanes} planes); "
                     f"{len(failed)} smaller moduli refuted, e.g. modulo {failed[-1].moduli[0]}: "
                     f"{failed[-1].conflict}" if failed else f"contraction: {trep.mapping}")
        spec_tw = f"{STORAGE_CHAIN}; tile_wavefront({tile}, {tile}); contract(x, {tplanes}); parallel"
    except ContractionRefused as err:
        tplanes = None
        lines.append(f"contraction under this schedule refused: {err.message}")
        spec_tw = f"{STORAGE_CHAIN}; tile_wavefront({tile}, {tile}); parallel"
    r_tw = t.measure(f"tile-level wavefront {tile}x{tile}", spec_tw, t.threads)
    lines.append(_timing_line(r_tw))
    yield Section("10. The tile-level wavefront: tiles of one wave in parallel", "\n".join(lines),
                  {"planes": tplanes, "verified": r_tw.verified})
    spec_strips = f"{STORAGE_CHAIN}; tile(1, 8); skew(5, 4); interchange(4, 5); contract(x)"
    r_strip = t.measure("skewed strips of 8 rows, 2 planes", spec_strips, 1)
    yield Section(
        "11. Skewed strips: the schedule [i, floor(j/8), j + k, j] on the contracted program",
        f"spec: {spec_strips}\nschedule: {r_strip.schedule}\n  {_timing_line(r_strip)}\n"
        "  Each point waits for its left neighbour (x[i][j][k-1]): in the source order every point is one\n"
        "  long chain of dependent additions and a division. Skewing k by j inside strips of 8 rows puts\n"
        "  8 independent points (one per row, on an anti-diagonal j + k = t) next to each other, so the\n"
        "  processor overlaps 8 chains; with two planes the data stays in cache.",
        {"verified": r_strip.verified})
