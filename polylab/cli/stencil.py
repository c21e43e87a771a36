"""``polylab stencil FILE.mlir``: read a stencil program (the Open Earth MLIR dialect), run passes, lower it,
print it in another form, or run it.

``--passes`` is a pipeline such as ``shape,inline,unroll(j=2),cse`` (passes: shape, inline,
inline(recompute), unroll(DIM=FACTOR), cse, dce, cleanup). ``--domain 64,64,64`` runs the same operators on
another domain (store ranges and field bounds moved). ``--emit`` prints the program after the passes
(``stencil``, the default), its model (``scop``), its code (``c``, ``openmp``, ``cuda``) under ``--schedule``,
or its lowering as MLIR (``mlir``: affine loops over memrefs). ``--run`` checks the code for ``--target``
bit for bit against the reference interpreter, verifies it against the lowered program's own loops and times
both (``gcc -O3``); with ``--json`` it prints one object with ``verified``, ``seconds`` and ``speedup`` (null
when a run is too short to time). ``--bench`` compares the program plain, inlined and inlined with
recomputation (applies, temp storage, arithmetic per point, time; docs/performance.md).

Exit status: 0 on success (``--run``: verified), 1 when a run was not verified, 2 for a user error (malformed
MLIR with its line and column, an unsupported operation, a field too small, ...).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from polylab.codegen import PROGRAM_TARGETS, TARGETS
from polylab.errors import PolylabError


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("stencil", help="stencil programs (Open Earth MLIR): passes, lowering, running",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="a .mlir file, or the name of a shipped example (laplace3d.mlir)")
    p.add_argument("--passes", default="", metavar="SPEC", help="a pass pipeline, e.g. shape,inline,unroll(j=2),cse")
    p.add_argument("--emit", choices=("stencil", "scop", *TARGETS), default=None)
    p.add_argument("--domain", default=None, metavar="N0,N1,N2", help="the domain's extents, e.g. 64,64,64")
    p.add_argument("--schedule", default=None, metavar="SPEC",
                   help="a schedule recipe for the lowered model (default: its own loops; 'parallel' for OpenMP)")
    p.add_argument("--run", action="store_true", help="check against the interpreter, verify and time")
    p.add_argument("--bench", action="store_true", help="compare plain, inlined and recomputing variants")
    p.add_argument("--target", choices=PROGRAM_TARGETS, default="c")
    p.add_argument("--threads", type=int, default=None, help="OpenMP threads")
    p.add_argument("--repeat", type=int, default=5, help="timed runs (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def load(name: str):
    from polylab.corpus import example_path
    from polylab.stencil import parse

    path = Path(name)
    if not path.exists():
        try:
            path = example_path(f"stencil/{name}")
        except PolylabError:
            raise PolylabError(f"no such file: {name}", hint="give a .mlir file, or laplace3d.mlir, "
                               "diffusion.mlir, chain.mlir, blur2d.mlir") from None
    if path.is_dir():
        raise PolylabError(f"{name} is a directory", hint="give a .mlir file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise PolylabError(f"cannot read {name}: {exc}") from None
    return parse(text, filename=str(path))


def domain(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError:
        raise PolylabError(f"--domain {text!r} is not a list of integers", hint="for example --domain 64,64,64") \
            from None


def run(args: argparse.Namespace) -> int:
    from polylab import stencil

    if args.threads is not None and args.threads < 1:
        raise PolylabError("--threads must be at least 1")
    if args.repeat < 1:
        raise PolylabError("--repeat must be at least 1")
    program = load(args.file)
    extents = domain(args.domain)
    if extents is not None:
        program = stencil.with_domain(program, extents)
    if args.bench:
        return _bench(args, program)
    program = stencil.run_passes(program, args.passes) if args.passes else program
    if args.run:
        return _run(args, program)
    emit = args.emit or "stencil"
    if emit == "stencil":
        text = stencil.print_program(program)
    elif emit == "scop":
        text = str(stencil.lower(program).scop)
    elif emit == "mlir":
        text = stencil.lowered_mlir(program, args.schedule)
    else:
        text = _code(program, args.schedule, emit)
    print(text, end="" if text.endswith("\n") else "\n")
    return 0


def _code(program, schedule, target: str) -> str:
    from polylab.stencil import generate_code

    code = generate_code(program, schedule, target)
    return code.program or code.kernel


def _run(args: argparse.Namespace, program) -> int:
    from polylab.stencil.timing import run_program

    def progress(message: str) -> None:
        if not args.json:
            print(f"... {message}", file=sys.stderr)

    result = run_program(program, args.schedule, args.target, threads=args.threads, repeat=args.repeat,
                         progress=progress)
    print(json.dumps(result.to_json(), indent=2) if args.json else result)
    if result.verified is not None:
        return 0 if result.verified else 1
    return 1 if result.check.reason and "vacuous" in result.check.reason else 0   # not runnable here: 0


def _bench(args: argparse.Namespace, program) -> int:
    from polylab.stencil.bench import inline_tradeoff

    schedule = args.schedule or ("parallel" if TARGETS[args.target].parallel else None)
    table = inline_tradeoff(program, schedule=schedule, target=args.target, threads=args.threads,
                            repeat=args.repeat)
    print(json.dumps(table.to_json(), indent=2) if args.json else table)
    return 0 if all(r.verified is not False for r in table.rows) else 1
