"""``polylab bench [KERNELS...] [--schedules SPEC ...]``: many kernels x many variants, each verified
against the original program before it is timed, with a progress bar, a table, a JSON report and a chart.

KERNELS are files or names of shipped examples (default: sl3.sy jacobi2d.c seidel2d.c; with --quick:
sweep2d.c jacobi2d.c). A SPEC is 'original', a schedule recipe (``wavefront; parallel``,
``auto; tile_wavefront(32, 32)``), storage steps (``fold_live_ins; remove_dead_writes; interleave;
contract(x)``), isl text replacing the current schedule (``{ S0[i, j] -> [i + j, j] }``), or a mix
separated by ';'. ``NAME: SPEC`` names a variant in the table and chart. ``$T`` in a SPEC is replaced by each --tile-sizes value. A variant whose schedule is
illegal, that fails to build, or whose output differs from the original's is reported as such and never
timed. The baseline is the original program compiled with gcc -O3, timed before, between and after.
With --native every timed build (the original, each variant, each peer) also gets -march=native, as in
the harness "gcc -O3 -march=native -fopenmp", and -ffp-contract=off (no fused multiply-add, which rounds
once: a peer's timed build is compared bit for bit); the verification builds keep -O2 -ffp-contract=off.

Every verified variant is timed with --repeat runs after --warmup runs; speedup = median(baseline) /
median(variant). The runs are interleaved in --rounds rounds (default 3; --quick: 1): after a kernel's
variants are built, verified and timed with the first share of the runs, each further round times
the original and every verified variant once more, in order, and all runs are pooled, so a slow
moment of a shared machine falls on all of them instead of on one variant. OpenMP variants run with each --threads value (the original order once); a variant
whose code has no parallel loop shows "1 (seq)" threads in the table.

JSON report (--json FILE): {"polylab", "machine" {cpus, platform, compiler, ...}, "settings" {kernels,
schedules, threads, tile_sizes, params, repeat, warmup, rounds, target, quick, flags}, "baselines" {kernel: {median,
min, runs, ...}}, "results": [{kernel, variant, spec, threads, tile_size, params, verify_params, target, flags,
status ('verified'|'unverified'|'illegal'|'error'|'not run'), verified (true|false|null), median_s, min_s,
runs, baseline_median_s, baseline_min_s, speedup (null unless verified), parallel, schedule, reason,
first_difference, build_seconds}], "best" {kernel: {variant, threads, parallel, speedup, median_s}}, "seconds"}.

Peers (--peers, or --peer NAME): PLUTO (polycc on PATH), clang with Polly and gcc with Graphite, where they
are here, become rows of the same table: each gets the kernel's original program with the region between
'#pragma scop' and '#pragma endscop', is built with the variants' flags and thread counts, verified bit for
bit and timed like them (see polylab.bench.peers; spec 'peer:NAME' in --schedules does the same). Their
JSON results carry a "peer" object {name, title, version, command, transform_seconds, tool_times, input}.

The harness mode above times the region's text in polylab's harness, whose kernel takes its arrays as
restrict parameters (the table says so). --own-main times the user's programs as written instead: each FILE
with its own main, the original, polylab's rewritten file (the region replaced in place: optimize(T) for
each --threads value, or each --schedules spec) and PLUTO's rewritten file (--peers), all built with one
--build command ({src}, {exe}; polylab adds its -D/-I options, -I the file's folder and -fopenmp), verified
by what they print (a build with --verify-flags, default -ffp-contract=off and, for PolyBench files,
-DPOLYBENCH_DUMP_ARRAYS, compared by the toolchain's differential run) and timed by their own timer when
they print one (-DPOLYBENCH_TIME), else by the wall time, in interleaved rounds (see polylab.bench.ownmain):

    polylab bench bicg.c --own-main --peers --threads 1,2 -I utilities -DMEDIUM_DATASET \
      --build "gcc -O3 -march=native utilities/polybench.c -DPOLYBENCH_TIME {src} -o {exe} -lm"

--own-main --cpu-time times each run by its CPU time (user + system of the process, all its threads, from
wait4) instead, which a shared machine's waits for the processor do not inflate, and adds the program
"rest" (the file with its regions left out, timed alike): the ratios are of region CPU times, CPU time less
the rest's. CPU time sums the threads, so at 2 threads it is work, not a speedup (polylab.bench.ownmain).

--search-time times the engine instead of the code: the CPU seconds of each spec's schedule search (default
optimize(1) and optimize(2)) on each kernel, parsed anew for each of --repeat runs (default 3, the smallest
is reported), dependence analysis and storage steps included; nothing is compiled (polylab.bench.search).

Exit status: 0 when every variant that ran was verified (illegal variants are not failures); 1 when some
variant's output differed from the original's or it could not be built or run; 2 for a user error. Peer
rows never change the exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile

from polylab.cli.common import add_source_options, source_options
from polylab.codegen import CUDA, OPENMP, PROGRAM_TARGETS, TARGETS
from polylab.model.params import parse_params
from polylab.errors import PolylabError


def _int_list(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise PolylabError(f"bad {what} {text!r}", hint=f"write a comma-separated list, e.g. {what} 1,2") from None
    if not values or any(v < 1 for v in values):
        raise PolylabError(f"bad {what} {text!r}: give positive integers", hint=f"e.g. {what} 1,2")
    return values


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("bench", help="verify and time many kernels x variants; table, JSON, chart",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kernels", nargs="*", metavar="KERNEL", help="files or example names")
    p.add_argument("--schedules", nargs="+", action="extend", metavar="SPEC", default=None,
                   help="variant specs (repeatable); default: original, wavefront; parallel, auto; parallel, "
                        "auto; tile_wavefront($T, $T)")
    p.add_argument("--threads", default=None, metavar="T1,T2",
                   help="OpenMP thread counts, e.g. 1,2 (default: the number of processors)")
    p.add_argument("--tile-sizes", default=None, metavar="S1,S2", help="values of $T (default 32; --quick: 4)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter value for the timed runs, for every kernel that has it (repeatable)")
    p.add_argument("--verify-param", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter value for the verification runs (default: the --param values)")
    p.add_argument("--target", choices=PROGRAM_TARGETS, default="openmp",
                   help="cuda: on the GPU (polylab.bench.gpu): CUDA-event times, effective bandwidth and its "
                        "share of a device-to-device copy; verified bit for bit at --verify-param sizes (default: "
                        "the --quick sizes) and by checksum at the timing size; without a GPU: compiled with "
                        "nvcc and verified by CPU emulation, not timed")
    p.add_argument("--gpu-targets", action="store_true",
                   help="the measurements of issue 13 (heat3d, jacobi2d, sweep2d, sl3 at their sizes) on the "
                        "CUDA target; KERNELS, --schedules and --param are then ignored")
    p.add_argument("--repeat", type=int, default=None, help="timed runs per variant (default 3; --quick: 1)")
    p.add_argument("--warmup", type=int, default=None, help="untimed warm-up runs (default 1; --quick: 0)")
    p.add_argument("--rounds", type=int, default=None,
                   help="interleaved rounds the timed runs are split into, each timing the original and every "
                        "variant of a kernel in turn (default 3; --quick: 1)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per run (default 300)")
    p.add_argument("--json", dest="json_file", metavar="FILE", help="write the JSON report to FILE")
    p.add_argument("--chart", metavar="FILE.png", help="write a bar chart of the speedups to FILE")
    p.add_argument("--quick", action="store_true", help="tiny sizes, few variants, one run: a smoke test")
    p.add_argument("--native", action="store_true",
                   help="compile the original, every variant and every peer with -march=native -ffp-contract=off (this "
                        "machine's vector instructions, e.g. AVX2, without fused multiply-adds, so every timed "
                        "build still computes the original's bits); the binaries may not run on another CPU")
    p.add_argument("--wait-policy", choices=("passive", "active"), default=None,
                   help="OMP_WAIT_POLICY of the OpenMP runs (default: the environment's, else passive: "
                        "waiting threads sleep instead of spinning, which keeps a busy machine usable)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--search-time", action="store_true",
                   help="time the schedule search instead of the code: CPU seconds of each spec (default "
                        "optimize(1) and optimize(2)) on each kernel, each run on a newly parsed kernel, the "
                        "smallest of --repeat runs (default 3); nothing is compiled")
    p.add_argument("--force", action="store_true",
                   help="rebuild every binary (a fresh build cache for this run) instead of reusing cached builds")
    p.add_argument("--peers", action="store_true", help="also measure every peer found here (pluto, polly, graphite)")
    p.add_argument("--peer", action="append", default=[], choices=("pluto", "polly", "graphite"),
                   help="also measure this peer (repeatable)")
    own = p.add_argument_group("in the program's own harness (--own-main; see polylab.bench.ownmain)")
    own.add_argument("--own-main", action="store_true",
                     help="build and run each FILE with its own main: the original, polylab's rewritten file "
                          "(optimize(T) per --threads value, or each --schedules spec) and each peer's rewritten "
                          "file (PLUTO), verified by their printed output, timed by their own timer")
    own.add_argument("--build", metavar="CMD", default=None,
                     help="the build command of every program ({src}: the C file, {exe}: the program; default "
                          "'cc -O3 {src} -o {exe} -lm'); polylab adds its -D/-I options, -I the file's folder "
                          "and -fopenmp")
    own.add_argument("--cpu-time", action="store_true",
                     help="time each run by its CPU time (user + system, all threads; wait4) instead of its own "
                          "timer or the wall clock, and subtract that of the file without its regions (the "
                          "rest): the ratios are of region CPU times; at several threads CPU time is work, "
                          "not speed")
    own.add_argument("--verify-flags", metavar="FLAGS", default=None,
                     help="extra flags of the verification builds (default: -ffp-contract=off, and "
                          "-DPOLYBENCH_DUMP_ARRAYS for a file that includes polybench.h)")
    add_source_options(p)
    return p


def set_wait_policy(choice: str | None) -> str:
    """Set ``OMP_WAIT_POLICY`` for the programs this process runs; returns the policy in force.

    On a machine shared with other work, threads that spin at a barrier take the processor from the
    thread that still works; one barrier per wave then costs a scheduler time slice (measured here: a
    point wavefront 100x slower with spinning than with sleeping threads)."""
    import os

    if choice is not None:
        os.environ["OMP_WAIT_POLICY"] = choice
    else:
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    return os.environ["OMP_WAIT_POLICY"]


def run_cuda(args: argparse.Namespace) -> int:
    """``--target cuda`` / ``--gpu-targets``: the GPU bench (polylab.bench.gpu); exit 1 when a variant's
    output differed or it failed to build or run."""
    from dataclasses import replace

    from tqdm import tqdm

    from polylab import bench
    from polylab.bench import gpu

    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 5)
    warmup = args.warmup if args.warmup is not None else (0 if args.quick else 1)
    if repeat < 1 or warmup < 0:
        raise PolylabError("--repeat must be at least 1 and --warmup not negative")
    if args.gpu_targets:
        kernels, cases = gpu.target_cases()
    else:
        names = args.kernels or list(bench.QUICK_KERNELS if args.quick else bench.DEFAULT_KERNELS)
        specs = args.schedules or list(bench.QUICK_SCHEDULES if args.quick else bench.DEFAULT_SCHEDULES)
        tiles = (_int_list(args.tile_sizes, "--tile-sizes") if args.tile_sizes
                 else list(bench.sweep.QUICK_TILE_SIZES if args.quick else bench.sweep.DEFAULT_TILE_SIZES))
        options = source_options(args)
        kernels = [bench.load_kernel(n, defines=options["defines"], include_dirs=options["include_dirs"],
                                     language=options["language"]) for n in names]
        verify_params = parse_params(args.verify_param)
        cases = bench.plan(kernels, specs, threads=[None], tile_sizes=tiles, params=parse_params(args.param),
                           verify_params=verify_params, quick=args.quick, target="cuda")
        if not verify_params:   # verify at small sizes: the CPU runs the original and the emulation
            small = {k.name: bench.kernel_params(k.scop, {}, quick=True) for k in kernels}
            cases = [replace(c, verify_params=small[c.kernel]) for c in cases]
    settings = {"kernels": [k.name for k in kernels], "cases": [c.to_json() for c in cases], "repeat": repeat,
                "warmup": warmup, "target": "cuda", "gpu_targets": args.gpu_targets}
    bar = tqdm(total=len(cases), file=sys.stderr, unit="variant", disable=args.no_progress, dynamic_ncols=True)
    try:
        report = gpu.run_gpu_bench(
            kernels, cases, repeat=repeat, warmup=warmup, timeout=args.timeout, settings=settings,
            on_start=lambda c: bar.set_description_str(f"{c.kernel} [{bench.spec.short_label(c.label, 32)}]"),
            on_result=lambda r: bar.update(1),
            progress=lambda m: bar.set_postfix_str(m[:40], refresh=True))
    finally:
        bar.close()
    print(report.table())
    if not report.machine.get("has_gpu"):
        print("no GPU here: the CUDA variants were compiled and verified by CPU emulation, not timed")
    if args.json_file:
        import json
        from pathlib import Path

        Path(args.json_file).write_text(json.dumps(report.to_json(), indent=2) + "\n")
        print(f"JSON report: {args.json_file}")
    return 1 if any(r.status in ("unverified", "error") for r in report.results) else 0


def run_search_time(args: argparse.Namespace) -> int:
    """``--search-time``: CPU seconds of the schedule search (polylab.bench.search), a table and the JSON
    report {"polylab", "machine", "settings" {kernels, schedules, runs}, "results": [{kernel, spec,
    statements, seconds, runs}]}."""
    from tqdm import tqdm

    from polylab import bench
    from polylab.bench import search

    names = args.kernels or list(bench.DEFAULT_KERNELS)
    specs = args.schedules or list(search.DEFAULT_SEARCH_SPECS)
    runs = args.repeat if args.repeat is not None else 3
    if runs < 1:
        raise PolylabError("--repeat must be at least 1")
    options = source_options(args)

    def loader(name: str):
        return lambda: bench.load_kernel(name, defines=options["defines"], include_dirs=options["include_dirs"],
                                         language=options["language"])

    loaders = [loader(n) for n in names]
    for load in loaders:      # a file that cannot be read is a user error before anything is timed
        load()
    bar = tqdm(total=len(names) * len(specs), file=sys.stderr, unit="search", disable=args.no_progress,
               dynamic_ncols=True)
    try:
        results = search.search_times(
            loaders, specs, runs=runs,
            on_start=lambda k, spec: bar.set_description_str(f"{names[k]} [{bench.spec.short_label(spec, 32)}]"),
            on_result=lambda _r: bar.update(1))
    finally:
        bar.close()
    print(search.search_table(results))
    if args.json_file:
        import json
        from pathlib import Path

        from polylab.bench.runner import machine_info
        from polylab.version import __version__

        data = {"polylab": __version__, "machine": machine_info(),
                "settings": {"kernels": names, "schedules": specs, "runs": runs},
                "results": [r.to_json() for r in results]}
        Path(args.json_file).write_text(json.dumps(data, indent=2) + "\n")
        print(f"JSON report: {args.json_file}")
    return 0


def run(args: argparse.Namespace) -> int:
    import os

    from polylab import bench

    if args.cpu_time and (args.search_time or not args.own_main):
        raise PolylabError("--cpu-time times the programs of --own-main"
                           + (", and --search-time already times the search in CPU time" if args.search_time
                              else ""),
                           hint="polylab bench FILE.c --own-main --cpu-time (the harness mode times the kernel "
                                "by its harness's clock)")
    if args.search_time:
        return run_search_time(args)
    if args.own_main:
        return run_own_main(args)
    if TARGETS[args.target] is CUDA or args.gpu_targets:   # the GPU bench (polylab.bench.gpu)
        if args.native:
            raise PolylabError("--native applies to the CPU builds, not to --target cuda or --gpu-targets",
                               hint="leave out --native, or time --target openmp or c")
        return run_cuda(args)

    quick = args.quick
    names = args.kernels or list(bench.QUICK_KERNELS if quick else bench.DEFAULT_KERNELS)
    specs = args.schedules or list(bench.QUICK_SCHEDULES if quick else bench.DEFAULT_SCHEDULES)
    threads = _int_list(args.threads, "--threads") if args.threads else [2 if quick else (os.cpu_count() or 1)]
    tiles = (_int_list(args.tile_sizes, "--tile-sizes") if args.tile_sizes
             else list(bench.sweep.QUICK_TILE_SIZES if quick else bench.sweep.DEFAULT_TILE_SIZES))
    repeat = args.repeat if args.repeat is not None else (1 if quick else 3)
    warmup = args.warmup if args.warmup is not None else (0 if quick else 1)
    if repeat < 1:
        raise PolylabError("--repeat must be at least 1")
    if warmup < 0:
        raise PolylabError("--warmup must not be negative")
    rounds = args.rounds if args.rounds is not None else (1 if quick else 3)
    if rounds < 1:
        raise PolylabError("--rounds must be at least 1")
    from polylab.bench import peers

    chosen, absent = peers.select(args.peer or None) if args.peers or args.peer else ([], {})
    specs = [*specs, *(p.spec for p in chosen)]
    params = parse_params(args.param)
    verify_params = parse_params(args.verify_param)
    policy = set_wait_policy(args.wait_policy)
    options = source_options(args)
    kernels = [bench.load_kernel(n, defines=options["defines"], include_dirs=options["include_dirs"],
                                 language=options["language"]) for n in names]
    flags = bench.NATIVE_TIMING_FLAGS if args.native else ()
    cases = bench.plan(kernels, specs, threads=threads, tile_sizes=tiles, params=params,
                       verify_params=verify_params, quick=quick, target=args.target, flags=flags)
    settings = {"kernels": [k.name for k in kernels], "schedules": specs, "threads": threads, "tile_sizes": tiles,
                "params": params, "verify_params": verify_params, "repeat": repeat, "warmup": warmup,
                "rounds": min(rounds, repeat), "target": args.target, "quick": quick, "flags": list(flags),
                "omp_wait_policy": policy, "peers": [p.to_json(flags) for p in chosen], "peers_absent": absent}

    from tqdm import tqdm

    bar = tqdm(total=len(cases), file=sys.stderr, unit="variant", disable=args.no_progress,
               dynamic_ncols=True, leave=True)

    def on_start(case) -> None:
        bar.set_description_str(f"{case.kernel} [{bench.spec.short_label(case.label, 32)}] x{case.threads}")

    def on_result(result) -> None:
        bar.update(1)

    def progress(message: str) -> None:
        bar.set_postfix_str(message.rsplit(": ", 1)[-1][:40], refresh=True)

    with _fresh_cache(args.force):
        try:
            report = bench.run_bench(kernels, cases, repeat=repeat, warmup=warmup, timeout=args.timeout,
                                     rounds=rounds, settings=settings, on_start=on_start, on_result=on_result,
                                     progress=progress, run_one=peers.run_case)
        finally:
            bar.close()
    print(report.table())
    for line in peers.summary(report.results, absent):
        print(line)
    if args.json_file:
        path = bench.write_json(report, args.json_file)
        print(f"JSON report: {path}")
    if args.chart:
        path = bench.write_chart(report, args.chart)
        print(f"chart: {path}")
    bad = [r for r in report.results if r.status in ("unverified", "error") and not peers.is_peer(r.case.spec)]
    return 1 if bad else 0


@contextlib.contextmanager
def _fresh_cache(force: bool):
    """``--force``: every build of the run goes to a new, empty build cache (``POLYLAB_CACHE``), so nothing
    cached before is reused; the directory is removed afterwards."""
    if not force:
        yield
        return
    old = os.environ.get("POLYLAB_CACHE")
    fresh = tempfile.mkdtemp(prefix="polylab-force-")
    os.environ["POLYLAB_CACHE"] = fresh
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("POLYLAB_CACHE", None)
        else:
            os.environ["POLYLAB_CACHE"] = old
        shutil.rmtree(fresh, ignore_errors=True)


def run_own_main(args: argparse.Namespace) -> int:
    """``--own-main``: every FILE in its own harness (:mod:`polylab.bench.ownmain`); exit 1 when a program of
    polylab's did not verify or failed to build or run (a peer's failure is the peer's)."""
    import shlex
    from pathlib import Path

    from tqdm import tqdm

    from polylab.bench import ownmain, peers
    from polylab.cli.common import resolve
    from polylab.bench.machine import vector_bytes_of_flags

    if not args.kernels:
        raise PolylabError("--own-main needs the files to measure", hint="polylab bench FILE.c --own-main")
    if args.native or TARGETS[args.target] is not OPENMP or args.gpu_targets or args.quick:
        raise PolylabError("--own-main builds with the --build command and writes OpenMP code",
                           hint="put -march=native in --build; leave out --native, --target, --gpu-targets, --quick")
    threads = _int_list(args.threads, "--threads") if args.threads else [os.cpu_count() or 1]
    repeat = args.repeat if args.repeat is not None else 3
    warmup = args.warmup if args.warmup is not None else 1
    rounds = args.rounds if args.rounds is not None else 3
    if repeat < 1 or warmup < 0 or rounds < 1:
        raise PolylabError("--repeat and --rounds must be at least 1, --warmup not negative")
    files = [resolve(k) for k in args.kernels]
    options = source_options(args)
    extra = [f"-D{d}" for d in options["defines"]] + [f"-I{d}" for d in options["include_dirs"]]
    command = ownmain.BuildCommand(args.build or ownmain.DEFAULT_BUILD, tuple(extra))
    verify = shlex.split(args.verify_flags) if args.verify_flags is not None else None
    chosen, absent = peers.select(args.peer or None) if args.peers or args.peer else ([], {})
    for p in chosen:
        if not p.transformer:
            absent[p.name] = f"{p.title} is a compiler, not a rewrite of the file: measured in the harness mode only"
    vector = vector_bytes_of_flags(shlex.split(args.build or ""))
    policy = set_wait_policy(args.wait_policy)
    specs = [s for s in (args.schedules or ["optimize"])]
    settings = {"files": [str(f) for f in files], "build": command.text(), "verify_flags": verify,
                "threads": threads, "schedules": specs, "repeat": repeat, "warmup": warmup, "rounds": rounds,
                "omp_wait_policy": policy, "peers": [p.to_json() for p in chosen if p.transformer],
                "peers_absent": absent, "vector_bytes": vector}
    clock = "cpu" if args.cpu_time else "program"
    bar = tqdm(total=len(files), file=sys.stderr, unit="file", disable=args.no_progress, dynamic_ncols=True)
    try:
        report = ownmain.run_own_main(files, options, command, verify=verify, specs=specs, threads=threads,
                                      peers=[p for p in chosen if p.transformer], repeat=repeat, warmup=warmup,
                                      rounds=rounds, timeout=args.timeout, vector=vector, settings=settings,
                                      clock=clock,
                                      progress=lambda m: bar.set_postfix_str(m[:60], refresh=True),
                                      on_file=lambda _n: bar.update(1))
    finally:
        bar.close()
    print(report.table())
    for name, reason in absent.items():
        print(f"peer {name}: not measured: {reason}")
    if args.json_file:
        import json

        path = Path(args.json_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        print(f"JSON report: {path}")
    bad = [r for r in report.results if r.kind == "polylab" and r.status in ("unverified", "error")]
    return 1 if bad else 0
