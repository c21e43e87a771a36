"""``polylab optimize FILE [--threads T] [--tune] [--json]``: the optimizer's schedule, every choice explained.

    polylab optimize seidel2d.c                       # the choices, the schedule, the spec that replays it
    polylab optimize sl3.sy --threads 1 --json
    polylab optimize gemm.c --tune --param NI=600,NJ=600,NK=600 --verify-param NI=20,NJ=24,NK=18

Without ``--tune`` nothing is compiled: the schedule is chosen by the optimizer's model (loop structure,
exact parallelism, stride-1 innermost loops, independent chains; see ``polylab.schedule.optimize``) and
checked exactly. With ``--tune`` a handful of candidates (the optimizer's choice for ``T`` threads and for
one, other strip and tile sizes, the source order with its parallel loops) are verified against the
original program at the ``--verify-param`` values and timed at the ``--param`` values with ``T`` threads,
under a progress bar; the fastest verified one is kept, and the original order when none beats the
original program. The last line is the spec to give ``polylab run`` / ``codegen`` / ``bench``.

One schedule per choice: the optimizer chooses on the program as written, its parameters free, so
``--param`` (the sizes ``--tune`` times at, and that ``-o`` specialises the code for) never changes the
schedule it picks; ``--specialize`` makes it choose for the ``--param`` values instead. The report says
which sizes the schedule was chosen for (``chosen for``).

``-o OUT.c`` writes the file with each ``#pragma scop`` region replaced in place by the code of the chosen
schedule (``--target openmp``, the default, or ``c``; see ``polylab codegen -o``), one schedule per region.

JSON: ``{"file", "schedule", "spec", "steps", "parallel_dims", "explanation", "structure", "time_tiling",
"statements": [{statement, shape, why, parallel_loops, vector_innermost}], "jams", "serial_dims",
"source_parallel_loops", "seconds", "machine"}`` and,
with ``--tune``, ``"tune": {"best", "best_seconds", "baseline_seconds", "speedup", "threads", "params",
"trials": [{spec, seconds, verified, reason, schedule}]}``; ``"chosen_for"``: the sizes the schedule was
chosen for.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from polylab.cli.common import add_source_options


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("optimize", help="choose a fast schedule automatically and explain it",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="a C or SysY file, or the name of a shipped example (e.g. seidel2d.c)")
    p.add_argument("--threads", type=int, default=None, metavar="T",
                   help="threads the code will run on (default: OMP_NUM_THREADS, else the CPUs available)")
    p.add_argument("--tune", action="store_true", help="time candidate variants and keep the fastest verified")
    p.add_argument("--param", action="append", metavar="NAME=VALUE", default=[],
                   help="parameter values for timing (--tune; repeatable, or N=64,T=10)")
    p.add_argument("--verify-param", action="append", metavar="NAME=VALUE", default=[],
                   help="parameter values for verification (--tune; default: --param)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per candidate (--tune)")
    p.add_argument("--native", action="store_true",
                   help="choose for a build with -march=native (this machine's vector width; "
                        "the spec printed then names it)")
    p.add_argument("--specialize", action="store_true",
                   help="choose for the --param values (default: for any value of the parameters)")
    p.add_argument("-o", "--output", metavar="OUT.c", default=None,
                   help="write FILE with each #pragma scop region replaced by the chosen schedule's code")
    p.add_argument("--target", choices=("openmp", "c"), default="openmp", help="the code -o writes")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_source_options(p)
    return p


def run(args) -> int:
    from polylab.cli.common import load_scop, source_options, write_file
    from polylab.errors import PolylabError
    from polylab.experiment import schedule_from_spec, validate_params
    from polylab.experiment.rewrite import chosen_for
    from polylab.model.params import parse_params
    from polylab.bench.machine import detect_machine
    from polylab.schedule.optimize import Settings, step_text

    scop, path = load_scop(args.file, **source_options(args))
    if args.threads is not None and args.threads < 1:
        raise PolylabError(f"--threads {args.threads} is not a thread count", hint="give 1 or more")
    if args.native and args.tune:
        raise PolylabError("--tune times its candidates with the default build, not -march=native",
                           hint="drop --native to tune, or drop --tune to choose for -march=native")
    machine = detect_machine(args.threads, ("-march=native",) if args.native else ())
    spec = step_text(machine.threads, Settings(machine))
    params = parse_params(args.param)
    if args.specialize and not params:
        raise PolylabError("--specialize chooses for the --param values, and none were given",
                           hint="give --param NAME=VALUE, or leave out --specialize")
    fixed = {p: v for p, v in params.items() if p in scop.parameters}
    if fixed:
        validate_params(scop, fixed, complete=False, memory_limit_mb=None)
    schedule = schedule_from_spec(scop.with_parameters(fixed) if args.specialize else scop, spec, machine=machine)
    report = schedule.provenance.optimize
    out = {"schedule": schedule.text(), "steps": list(schedule.steps), "parallel_dims": sorted(schedule.marked),
           **report.to_json(), "file": path, "spec": spec,
           "chosen_for": chosen_for(scop, fixed if args.specialize else None)}
    threads = machine.threads
    tuned = None
    if args.tune:
        from tqdm import tqdm

        from polylab.experiment.tune import tune

        if not params and scop.parameters:
            raise PolylabError("--tune needs the parameter values to time at",
                               hint="--param " + ",".join(f"{p}=..." for p in scop.parameters))
        verify_params = parse_params(args.verify_param, option="--verify-param") if args.verify_param else None
        tuned = tune(scop, threads=threads, params=params, verify_params=verify_params, repeat=args.repeat,
                     bar=lambda it, **kw: tqdm(it, file=sys.stderr, **kw), machine=machine)
        out["tune"] = tuned.to_json()
        out["spec"] = tuned.best
    if args.output is not None:
        with contextlib.redirect_stdout(sys.stderr if args.json else sys.stdout):
            write_file(args, out["spec"], params, args.target, args.specialize)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(report.text())
    if tuned is not None:
        print()
        print(tuned.text())
    print(f"\nchosen for: {out['chosen_for']}")
    print(f"spec: {out['spec']}")
    return 0
