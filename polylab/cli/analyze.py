"""``polylab analyze FILE [--param N=64 ...] [--json]``: the polyhedral model of a C fragment / SysY program.

The text form is for a student (statements, iteration domains as isl sets and as inequalities, accesses with
``F x + c``, the original schedule, what was left out); ``--json`` prints one object::

    {"file": ..., "language": "c"|"sysy",
     "scops": [{"name", "parameters", "context", "arrays": [{"name", "type", "extents", "declared"}],
                "scalars", "schedule", "live_out", "dead_after",
                "statements": [{"name", "line", "column", "text", "iterators", "domain", "instances",
                                "accesses": [{"kind", "array", "text", "relation", "matrix", "offset",
                                              "line", "column"}]}]}],
     "rejected": [{"line", "column", "reason", "hint", "text"}]}

``matrix`` (F, one row per array dimension) and ``offset`` (c, C-like expressions in the parameters) are
null when the access is not affine without division. ``--param`` fixes parameters in the context; domains
and relations are then shown for those values and ``instances`` counts each statement's iterations.
A refused input exits with status 2 and the message (with a caret under the offending code) on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys

import islpy as isl

from polylab.cli.common import add_source_options, load_program, source_options
from polylab.model.params import parse_params
from polylab.errors import ModelError, TooComplexError
from polylab.model.budget import bounded
from polylab.model.islutil import count_points
from polylab.model.scop import Access, Program, Scop


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("analyze", help="show the polyhedral model of a loop nest",
                              description="Parse FILE (a C fragment, a C file with #pragma scop, or a SysY "
                                          "program) and show its static control parts.")
    p.add_argument("file", metavar="FILE", help="a .c or .sy file, or the name of a shipped example")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="fix a parameter in the context (repeatable), e.g. --param N=64")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_source_options(p)
    return p


def fix_parameters(program: Program, values: dict[str, int]) -> list[Scop]:
    """Each SCoP with the given parameters fixed in its context (a name no SCoP has is an error)."""
    known = {p for s in program.scops for p in s.parameters}
    for name in values:
        if name not in known:
            raise ModelError(f"no parameter named {name!r}",
                             hint=f"the parameters are {', '.join(sorted(known)) or 'none'}")
    return [s.with_parameters({k: v for k, v in values.items() if k in s.parameters})
            for s in program.scops]


def _fixed(obj, context: isl.Set):
    return obj.intersect_params(context).coalesce()


def _count(dom: isl.Set) -> int | None:
    if dom.is_empty():
        return 0
    if dom.dim(isl.dim_type.param) and not _all_fixed(dom):
        return None
    try:
        with bounded("counting the instances"):
            return count_points(dom)
    except (isl.Error, TooComplexError):  # unbounded, or too many to count: the count is left out
        return None


def _all_fixed(dom: isl.Set) -> bool:
    params = dom.params()
    return all(params.plain_get_val_if_fixed(isl.dim_type.param, k) is not None
               and not params.plain_get_val_if_fixed(isl.dim_type.param, k).is_nan()
               for k in range(dom.dim(isl.dim_type.param)))


def access_json(a: Access, context: isl.Set | None = None) -> dict:
    rel = a.relation if context is None else _fixed(a.relation, context)
    out = {"kind": a.kind, "array": a.array, "text": a.text, "relation": str(rel),
           "matrix": None, "offset": None, "line": a.location.line, "column": a.location.column}
    if a.matrix is not None:
        out["matrix"] = [[int(x) for x in a.matrix.row(r)] for r in range(a.matrix.rows)]
        out["offset"] = [int(c) if c.is_Integer else str(c) for c in a.offset]
    return out


def scop_json(scop: Scop, fixed: Scop | None = None) -> dict:
    ctx = (fixed or scop).context
    use_ctx = fixed is not None and not ctx.plain_is_universe()
    stmts = []
    for s in scop.statements:
        dom = _fixed(s.domain, ctx) if use_ctx else s.domain
        stmts.append({
            "name": s.name, "line": s.line, "column": s.location.column, "text": s.text,
            "iterators": list(s.iterators), "domain": str(dom),
            "instances": _count(dom) if use_ctx else None,
            "accesses": [access_json(a, ctx if use_ctx else None) for a in s.accesses]})
    return {
        "name": scop.name, "parameters": list(scop.parameters), "context": str(ctx),
        "arrays": [{"name": a.name, "type": a.ctype, "extents": list(a.extents), "declared": a.declared}
                   for a in scop.arrays],
        "scalars": [{"name": s.name, "type": s.ctype, "value": s.value} for s in scop.scalars],
        "statements": stmts,
        "schedule": str(scop.schedule_map),
        "live_out": None if scop.live_out is None else str(scop.live_out),
        "dead_after": list(scop.dead_after),
        "line": scop.location.line if scop.location else None,
        "notes": list(scop.notes)}


def program_json(program: Program, values: dict[str, int] | None = None) -> dict:
    fixed = fix_parameters(program, values) if values else [None] * len(program.scops)
    return {"file": program.filename, "language": program.language,
            "scops": [scop_json(s, f) for s, f in zip(program.scops, fixed)],
            "rejected": [{"line": r.location.line, "column": r.location.column, "reason": r.reason,
                          "hint": r.hint, "text": r.location.text} for r in program.rejected]}


def program_text(program: Program, values: dict[str, int] | None = None) -> str:
    fixed = fix_parameters(program, values) if values else [None] * len(program.scops)
    out: list[str] = [f"{program.filename or '<input>'}: {len(program.scops)} static control part(s)"]
    for scop, f in zip(program.scops, fixed):
        out.append(str(scop))
        if f is not None:
            out.append(f"  with {', '.join(f'{k} = {v}' for k, v in values.items() if k in scop.parameters)}:")
            for s in scop.statements:
                dom = _fixed(s.domain, f.context)
                n = _count(dom)
                out.append(f"    {s.name}: {dom}" + (f"  ({n} instances)" if n is not None else ""))
    if program.rejected:
        out.append("left out of any static control part:")
        for r in program.rejected:
            out.append(f"  line {r.location.line}, column {r.location.column}: {r.reason}")
            if r.location.source_line:
                out.extend("      " + ln for ln in r.location.caret().splitlines())
            if r.hint:
                out.append(f"      hint: {r.hint}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    values = parse_params(args.param)
    program, _ = load_program(args.file, **source_options(args))
    if args.json:
        json.dump(program_json(program, values), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(program_text(program, values))
    return 0
