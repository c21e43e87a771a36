"""``polylab fuzz --count N --seed S``: the fuzz suite (:mod:`polylab.fuzz`) from the command line.

Runs cases ``--start .. --start + --count - 1`` of campaign ``--seed`` and prints how many produced a
traceback (an exception other than polylab's own errors, or a case past its CPU time) and how many
answered later than POLYLAB_MAX_SECONDS + 5 s of wall-clock time, grouped by where they were raised, each
with the command that replays it. ``--show`` prints every finding's input
and traceback; ``--json FILE`` writes the report. Exit status 0 when no case produced a traceback and none was slow, 1
otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys

from polylab.fuzz import KINDS, case, run_campaign


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("fuzz", help="throw mutated inputs at polylab and count tracebacks",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=1000, help="number of cases (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    p.add_argument("--start", type=int, default=0, help="index of the first case (default 0)")
    p.add_argument("--kind", action="append", choices=sorted(KINDS), help="only cases of this kind")
    p.add_argument("--seconds", type=float, default=30.0, help="CPU seconds one case may use (default 30)")
    p.add_argument("--show", action="store_true", help="print each finding's input and traceback")
    p.add_argument("--json", metavar="FILE", help="write the report as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    if args.count < 0 or args.start < 0 or args.seconds <= 0:
        print("polylab fuzz: --count and --start must be >= 0, --seconds > 0", file=sys.stderr)
        return 2
    report = run_campaign(args.seed, args.count, start=args.start, kinds=tuple(args.kind or ()),
                          progress=sys.stderr.isatty(), seconds=args.seconds, cli=args.cli_main)
    print(report.text())
    if args.show:
        for f in report.findings + report.slow:
            print(f"\n=== case {f.case.index} ({f.case.kind}): {f.error[:300]}")
            print(case(args.seed, f.case.index).describe()[:3000])
            print(f.trace)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report.to_json(), fh, indent=1)
    return 1 if report.findings or report.slow else 0
