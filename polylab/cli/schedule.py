"""``polylab schedule FILE --schedule SPEC``: check a schedule (isl text or a recipe) against the exact
dependences and show its parallel loops.

    polylab schedule sweep2d.c --schedule "wavefront; parallel"
    polylab schedule sweep2d.c --schedule "{ S0[i, j] -> [j, i] }" --json
    polylab schedule jacobi2d.c --schedule "auto; tile_wavefront(32, 32)" --param N=8 --param T=4

JSON: ``{"file", "scop", "legal", "violations": [{dependence: {kind, source, sink, array}, source_instance,
sink_instance, params, source_time, sink_time, message}], "schedule" (isl text), "parallel" (the loop
dimensions that may run in parallel, exactly), "marked_parallel", "kinds", "bands", "steps", "notes"}``.
An illegal schedule is a valid answer (``legal: false``, exit status 0); a schedule that cannot be read
is an error (a caret under the bad step, exit status 2).
"""

from __future__ import annotations

import argparse
import json
import sys

from polylab.cli.common import add_source_options
from polylab.errors import PolylabError


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("schedule", help="check a schedule (isl text or recipe) and its parallelism",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="a C or SysY file, or the name of a shipped example (e.g. sweep2d.c)")
    p.add_argument("--schedule", "-s", required=True, metavar="SPEC",
                   help="isl text '{ S0[i, j] -> [i + j, j] }' or a recipe 'wavefront; tile(32, 32); parallel'")
    p.add_argument("--param", action="append", metavar="NAME=VALUE", default=[],
                   help="fix a parameter (repeatable)")
    p.add_argument("--scop", type=int, default=0, help="which static control part of the file (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_source_options(p)
    return p


def run(args) -> int:
    from polylab.cli.common import load_program, source_options
    from polylab.model.params import parse_params
    from polylab.schedule import check, parse_schedule
    from polylab.bench.machine import detect_machine
    from polylab.storage import recipe_steps

    params = parse_params(args.param)
    program, path = load_program(args.file, **source_options(args))
    if not program.scops:
        raise PolylabError(f"{args.file} has no static control part")
    if not 0 <= args.scop < len(program.scops):
        raise PolylabError(f"no SCoP number {args.scop}", hint=f"the file has {len(program.scops)}")
    scop = program.scops[args.scop]
    if params:
        scop = scop.with_parameters(params)
    try:
        schedule = parse_schedule(scop, args.schedule, steps=recipe_steps(detect_machine()))
    except PolylabError as err:
        if args.json:
            print(json.dumps({"file": path, "error": err.to_json()}, indent=2))
        print(err.render("--schedule"), file=sys.stderr)
        return 2
    report = check(schedule)
    if args.json:
        out = {"file": path, "scop": scop.name, **report.to_json(), "notes": list(schedule.notes)}
        print(json.dumps(out, indent=2))
    else:
        print(str(schedule))
        print(str(report))
    return 0
