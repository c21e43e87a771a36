"""``polylab codegen FILE --schedule SPEC --target c|openmp|cuda|mlir``: print the generated code.

``SPEC`` is ``original`` (default), a schedule recipe of :mod:`polylab.schedule` (storage steps such as
``fold_live_ins; remove_dead_writes; interleave; contract(x)`` included), or an isl union map
(``"{ S0[i, j] -> [i + j, i] }"``), whose exactly parallel dimensions are marked by the schedule layer's
``parallel`` step (see :mod:`polylab.experiment.schedules`). An illegal schedule is refused (exit 2, with
the violated dependence and a violating pair); the code printed is that of the schedule's own SCoP (the
transformed one after a storage step).

``-o OUT.c`` writes the whole file instead: the input file with each ``#pragma scop`` region replaced in place
by the schedule's code, with the file's own names for arrays, scalars and parameters, every helper the code
needs defined before the function, OpenMP's outlined loop bodies with ``--target openmp``, every other byte
unchanged; it compiles in the file's own build (PolyBench's harness, for example) with the same ``-D``
options given here (see ``polylab.codegen.inplace``).

``--param N=64`` fixes parameters for code generation, so isl can simplify the loop bounds; the values are
checked first (integers in the range of C's ``int``, inside the program's context; with every parameter
given, also the array sizes and that every access stays inside its declared array). The schedule itself
is chosen on the program as written, its parameters free, so ``--param`` never changes it (an ``optimize``
step picks the same schedule as without ``--param``); ``--specialize`` reads the spec with the values fixed
instead (the optimizer then chooses for those sizes). With ``-o``, code specialised for the values runs when
the parameters have them, the general code otherwise. ``--kernel-only`` prints the kernel without the
harness.
"""

from __future__ import annotations

import argparse

from polylab.cli.common import add_source_options, load_scop, source_options, write_file
from polylab.codegen import TARGETS
from polylab.errors import PolylabError
from polylab.model.params import parse_params


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("codegen", help="print C, OpenMP, CUDA or MLIR code for a schedule",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="a .c or .sy file, or the name of a shipped example")
    p.add_argument("--schedule", default="original", metavar="SPEC",
                   help="'original', a schedule recipe, or an isl union map (default: original)")
    p.add_argument("--target", choices=tuple(TARGETS), default="c")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="fix a parameter in the generated code (repeatable)")
    p.add_argument("--specialize", action="store_true",
                   help="choose the schedule for the --param values (default: for any value)")
    p.add_argument("--kernel-only", action="store_true", help="print the kernel without the harness")
    p.add_argument("-o", "--output", metavar="OUT.c", default=None,
                   help="write FILE with each #pragma scop region replaced by the code (C or OpenMP)")
    add_source_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    from polylab.bench.machine import detect_machine
    from polylab.codegen import generate
    from polylab.experiment.params import validate_params
    from polylab.experiment.schedules import schedule_from_spec, variant_scop

    params = parse_params(args.param)
    if args.specialize and not params:
        raise PolylabError("--specialize chooses the schedule for the --param values, and none were given",
                           hint="give --param NAME=VALUE, or leave out --specialize")
    if args.output is not None:
        return write_file(args, args.schedule, params, args.target, args.specialize)
    scop, _ = load_scop(args.file, **source_options(args))
    fixed = scop
    if params:
        validate_params(scop, params, complete=False, memory_limit_mb=None)
        fixed = scop.with_parameters(params)
    schedule = schedule_from_spec(fixed if args.specialize else scop, args.schedule, machine=detect_machine())
    variant = variant_scop(fixed if args.specialize else scop, schedule)
    code = generate(variant.with_parameters(params) if params else variant, schedule, args.target)
    text = code.kernel if args.kernel_only or code.program is None else code.program
    if args.kernel_only and code.program is not None:
        text = code.header + "\n" + text
    print(text, end="" if text.endswith("\n") else "\n")
    return 0
