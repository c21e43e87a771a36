"""``polylab deps FILE``: the exact dependences of a kernel and the parallel loops of its original schedule.

    polylab deps sweep2d.c                      # memory-based, text
    polylab deps sl3.sy --value-based --json    # dataflow, JSON
    polylab deps jacobi2d.c --param N=8 --param T=4 --kinds flow,anti,output,input

JSON: ``{"file", "scop", "value_based", "parameters", "dependences": [{kind, source, sink, array, relation,
distances (null unless constant), direction, carried_level (null when loop-independent), ...}],
"parallel": {statement: [{level, iterator, parallel, prevented_by}]}}``; with several SCoPs in the file,
``"scops"`` lists the same object for each (the top level describes the first).
"""

from __future__ import annotations

import argparse
import json
import sys

from polylab.cli.common import add_source_options
from polylab.errors import PolylabError


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("deps", help="exact dependences and parallel loops of a kernel",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="a C or SysY file, or the name of a shipped example (e.g. sweep2d.c)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE", default=[],
                   help="fix a parameter (repeatable)")
    p.add_argument("--json", action="store_true", help="print JSON")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--memory-based", dest="value_based", action="store_false", default=False,
                   help="every pair of accesses to the same element (default)")
    g.add_argument("--value-based", dest="value_based", action="store_true",
                   help="only the last write before each read (dataflow)")
    p.add_argument("--kinds", default="flow,anti,output",
                   help="comma-separated kinds among flow, anti, output, input (default flow,anti,output)")
    add_source_options(p)
    return p


def describe(scop, *, value_based: bool, kinds: tuple[str, ...], params: dict[str, int]) -> dict:
    """The JSON object for one SCoP."""
    from polylab.analysis import compute_dependences
    from polylab.analysis.parallelism import parallelism

    scop = scop.with_parameters(params) if params else scop
    graph = compute_dependences(scop, value_based=value_based, kinds=kinds)
    # parallelism always uses memory-based flow/anti/output dependences; with --value-based the
    # "prevented_by" indices refer to that memory-based list (given as "memory_dependences")
    full = not value_based and {"flow", "anti", "output"} <= set(kinds)
    par_graph = graph if full else compute_dependences(scop)
    par = parallelism(par_graph)
    par_json = par.to_json()
    out = {"scop": scop.name, "value_based": value_based, "parameters": list(scop.parameters),
           "context": str(scop.context), "loops": {s.name: list(graph.structure.loop_names(s.name))
                                                   for s in scop.statements},
           "dependences": [d.to_json() for d in graph.dependences], "parallel": par_json}
    if par_graph is not graph:
        out["memory_dependences"] = [d.to_json() for d in par_graph.dependences]
    return out


def run(args: argparse.Namespace) -> int:
    from polylab.analysis import compute_dependences
    from polylab.analysis.parallelism import parallelism
    from polylab.cli.common import load_program, source_options
    from polylab.model.params import parse_params

    params = parse_params(args.param)
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    program, path = load_program(args.file, **source_options(args))
    scops = tuple(s for s in program.scops if s.statements)
    if not scops:
        reasons = "; ".join(str(r) for r in program.rejected) or "no loop nest found"
        raise PolylabError(f"{args.file} has no static control part", hint=reasons)
    known = sorted({p for scop in scops for p in scop.parameters})
    unknown = [p for p in params if p not in known]
    if unknown:
        raise PolylabError(f"no parameter named {unknown[0]!r}",
                           hint=f"the parameters are {', '.join(known) or 'none'}")
    if args.json:
        objs = []
        for scop in scops:
            mine = {k: v for k, v in params.items() if k in scop.parameters}
            objs.append(describe(scop, value_based=args.value_based, kinds=kinds, params=mine))
        out = {"file": path, **objs[0]}
        if len(objs) > 1:
            out["scops"] = objs
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    chunks = []
    for scop in scops:
        mine = {k: v for k, v in params.items() if k in scop.parameters}
        scop = scop.with_parameters(mine) if mine else scop
        graph = compute_dependences(scop, value_based=args.value_based, kinds=kinds)
        full = not args.value_based and {"flow", "anti", "output"} <= set(kinds)
        par = parallelism(graph if full else compute_dependences(scop))
        chunks.append(f"{graph}\n{par}")
    print("\n\n".join(chunks))
    return 0
