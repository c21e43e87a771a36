"""``polylab stencil FILE.mlir``: read a stencil program (the stencil dialect in today's MLIR syntax, or Open
Earth's 2020 syntax), run xDSL's passes, lower it, print it in another form, or run it.

``--upgrade`` prints a 2020-syntax file in today's syntax. ``--passes`` is an xDSL pass pipeline such as
``shape-inference,stencil-inlining`` or ``polylab-unroll{unroll-factor=1,2,1},shape-inference``;
``--check-passes`` runs each pass and checks it with the reference interpreter (bit for bit; a failure names
the pass). ``--domain 64,64,64`` runs the same operators on another domain. ``--emit`` prints the program
after the passes (``stencil``, the default), polylab's model (``scop``), its code (``c``, ``openmp``,
``cuda``) under ``--schedule``, polylab's MLIR affine loops (``mlir``), xDSL's lowered ``scf.parallel``
loops (``loops``) or the GPU dialect's two forms (``gpu``, checked by mlir-opt). ``--distribute 2x1`` applies
xDSL's domain decomposition and lists the halo exchanges (with ``--run``: built with
``mpicc``, run with ``mpirun`` and checked against the reference interpreter). ``--run`` checks the code for
``--target`` bit for bit against the reference interpreter, verifies it against the lowered program's own
loops and times both (``gcc -O3``); ``--json`` prints one object. ``--bench`` compares the program plain and
inlined.

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
    p.add_argument("--passes", default="", metavar="SPEC",
                   help="an xDSL pass pipeline, e.g. shape-inference,stencil-inlining")
    p.add_argument("--check-passes", action="store_true", help="check each pass with the reference interpreter")
    p.add_argument("--upgrade", action="store_true", help="print the program in today's syntax")
    p.add_argument("--distribute", default=None, metavar="GRID", help="decompose over MPI ranks, e.g. 2x1")
    p.add_argument("--emit", choices=("stencil", "scop", *TARGETS, "loops", "gpu"), default=None)
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
    from polylab.frontend import read_text_file
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
    return parse(read_text_file(path, what="stencil program"), filename=str(path))


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
    if args.upgrade:
        print(program.text, end="")
        return 0
    extents = domain(args.domain)
    if extents is not None:
        program = stencil.with_domain(program, extents)
    if args.bench:
        return _bench(args, program)
    if args.check_passes:
        return _check_passes(program, args.passes or "shape-inference")
    program = stencil.run_passes(program, args.passes) if args.passes else program
    if args.distribute:
        return _distribute(args, program)
    if args.run:
        return _run(args, program)
    emit = args.emit or "stencil"
    if emit == "stencil":
        text = program.text
    elif emit == "loops":
        text = stencil.lowered_loops(program).text
    elif emit == "gpu":
        text = str(stencil.gpu_forms(program))
    elif emit == "scop":
        text = str(stencil.lower(program).scop)
    elif emit == "mlir":
        text = stencil.lowered_mlir(program, args.schedule)
    else:
        text = _code(program, args.schedule, emit)
    print(text, end="" if text.endswith("\n") else "\n")
    return 0


def _distribute(args: argparse.Namespace, program) -> int:
    from polylab.stencil.mlir import distribute
    from polylab.stencil.check import check_mpi
    from polylab.toolchain.mlirbuild import mpi_tools

    d = distribute(program, args.distribute)
    print(d)
    if not args.run:
        return 0
    ok, reason = mpi_tools()
    if not ok or d.mpi is None:
        print(f"not run: {reason or d.reason}")
        return 0
    result = check_mpi(program, d.grid[0])
    print(result)
    return 0 if result.verified else 1


def _check_passes(program, spec: str) -> int:
    from polylab import stencil

    results = stencil.check_passes(program, spec)
    for r in results:
        print(r)
    return 0 if results and all(r.verified is True for r in results) else 1


def _code(program, schedule, target: str) -> str:
    from polylab.stencil import generate_code

    code = generate_code(program, schedule, target)
    return code.program or code.kernel


def _run(args: argparse.Namespace, program) -> int:
    from polylab.bench.stencil import run_program

    def progress(message: str) -> None:
        if not args.json:
            print(f"... {message}", file=sys.stderr)

    result = run_program(program, args.schedule, args.target, threads=args.threads, repeat=args.repeat,
                         progress=progress)
    print(json.dumps(result.to_json(), indent=2) if args.json else result)
    if result.verified is not None:
        return 0 if result.verified else 1
    return 1 if result.check.verdict is not None else 0   # vacuous: 1; not runnable here: 0


def _bench(args: argparse.Namespace, program) -> int:
    from polylab.bench.stencil import inline_tradeoff

    schedule = args.schedule or ("parallel" if TARGETS[args.target].parallel else None)
    table = inline_tradeoff(program, schedule=schedule, target=args.target, threads=args.threads,
                            repeat=args.repeat)
    print(json.dumps(table.to_json(), indent=2) if args.json else table)
    return 0 if all(r.verified is not False for r in table.rows) else 1
