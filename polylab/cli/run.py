"""``polylab run FILE --schedule SPEC --target c|openmp|cuda``: generate, verify against the original
program, and time against the original compiled with ``gcc -O3``.

Verification runs at the ``--param`` values unless ``--verify-param`` gives smaller ones (verify small,
time large); it compares every element the program writes (after storage steps: the live-out elements)
and says how many it compared, how many are NaN or infinite and how many still hold their initial
values; a comparison that could not tell a wrong variant from a right one is *vacuous* and not called
verified. Parameter values are checked before anything is built: integers in the range of C's ``int``,
inside the program's context, arrays that fit in memory, every access inside its declared array (a
refusal names the access, the element and the instance). With ``--json`` the output is one object:
``verified`` (true, false, or null when the variant was not verified: it could not run here, or the
comparison was vacuous), ``compared`` {``mode``, ``arrays``, ``elements``, ``nan``, ``inf``,
``unchanged``}, ``vacuous``, ``seconds`` {``median``, ``min``, ``runs``}, ``baseline_seconds``,
``speedup``, ``threads``, ``target``, ``params``, and ``reason``/``first_difference``/``warnings`` when
they apply. ``--force`` rebuilds every binary instead of reusing the build cache; ``--compare live-out``
compares only the live-out elements.

Exit status: 0 when the variant was verified and timed, or when it could not run on this machine (CUDA
without nvcc or a GPU: the reason is printed and ``verified`` is null; the code can still be shown with
``polylab codegen``); 1 when it was not verified: its output differs from the original's, or the
comparison was vacuous (choose other ``--verify-param`` values); 2 for a user error (a bad schedule, an
illegal schedule -- the message names the violated dependence and a violating pair --, parameter values
that cannot be run, a compile error in the program's own code, a run that timed out). Schedules may use
the storage steps (``fold_live_ins; remove_dead_writes; interleave; contract(x)``): the variant is the
transformed SCoP's code, verified against the original program.
"""

from __future__ import annotations

import argparse
import json
import sys

from polylab.codegen import PROGRAM_TARGETS
from polylab.model.params import parse_params
from polylab.cli.common import add_source_options, load_scop, source_options


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("run", help="verify and time a schedule's code",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="a .c or .sy file, or the name of a shipped example")
    p.add_argument("--schedule", default="original", metavar="SPEC",
                   help="'original', a schedule recipe, or an isl union map (default: original)")
    p.add_argument("--target", choices=PROGRAM_TARGETS, default="c")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter value for the runs (repeatable; every parameter needs one)")
    p.add_argument("--verify-param", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter value for the verification run (default: the --param values)")
    p.add_argument("--threads", type=int, default=None, help="OpenMP threads (default: the runtime's)")
    p.add_argument("--repeat", type=int, default=5, help="timed runs (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed warm-up runs (default 1)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per run (default 300)")
    p.add_argument("--no-baseline", action="store_true", help="do not time the original program")
    p.add_argument("--no-verify", action="store_true", help="time without verifying")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--force", action="store_true", help="rebuild every binary instead of reusing cached builds")
    p.add_argument("--compare", choices=("auto", "written", "live-out"), default="auto",
                   help="what verification compares: every written element (default unless a storage step "
                        "changed the arrays) or the live-out elements")
    add_source_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    from polylab.errors import PolylabError
    from polylab.experiment import measure
    from polylab.bench.machine import detect_machine
    from polylab.experiment.schedules import schedule_from_spec

    if args.threads is not None and args.threads < 1:
        raise PolylabError("--threads must be at least 1")
    if args.repeat < 1:
        raise PolylabError("--repeat must be at least 1")
    if args.warmup < 0:
        raise PolylabError("--warmup must not be negative")
    if not args.timeout > 0:
        raise PolylabError("--timeout must be a positive number of seconds")
    scop, _ = load_scop(args.file, **source_options(args))
    params = parse_params(args.param)
    verify_params = {**params, **parse_params(args.verify_param)} if args.verify_param else None
    schedule = schedule_from_spec(scop, args.schedule, machine=detect_machine(args.threads))

    def progress(message: str) -> None:
        if not args.json:
            print(f"... {message}", file=sys.stderr)

    report = measure(scop, schedule, args.target, params=params, threads=args.threads, repeat=args.repeat,
                     warmup=args.warmup, baseline=not args.no_baseline, check=not args.no_verify,
                     verify_params=verify_params, timeout=args.timeout, progress=progress, force=args.force,
                     compare=args.compare)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report)
    vacuous = report.verification is not None and report.verification.vacuous
    return 1 if report.verified is False or vacuous else 0
