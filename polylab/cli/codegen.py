"""``polylab codegen FILE --schedule SPEC --target c|openmp|cuda|mlir``: print the generated code.

``SPEC`` is ``original`` (default), a schedule recipe of :mod:`polylab.schedule` (storage steps such as
``fold_live_ins; remove_dead_writes; interleave; contract(x)`` included), or an isl union map
(``"{ S0[i, j] -> [i + j, i] }"``), whose exactly parallel dimensions are marked by the schedule layer's
``parallel`` step (see :mod:`polylab.experiment.schedules`). An illegal schedule is refused (exit 2, with
the violated dependence and a violating pair); the code printed is that of the schedule's own SCoP (the
transformed one after a storage step). ``--param N=64``
fixes parameters in the context, so isl can simplify the loop bounds; the values are checked first (integers
in the range of C's ``int``, inside the program's context; with every parameter given, also the array sizes
and that every access stays inside its declared array). ``--kernel-only`` prints the kernel without the
harness.
"""

from __future__ import annotations

import argparse

from polylab.cli.common import add_source_options, load_scop, source_options
from polylab.codegen import TARGETS
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
    p.add_argument("--kernel-only", action="store_true", help="print the kernel without the harness")
    add_source_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    from polylab.codegen import generate
    from polylab.experiment.params import validate_params
    from polylab.experiment.schedules import schedule_from_spec, variant_scop

    scop, _ = load_scop(args.file, **source_options(args))
    params = parse_params(args.param)
    if params:
        validate_params(scop, params, complete=False, memory_limit_mb=None)
        scop = scop.with_parameters(params)
    schedule = schedule_from_spec(scop, args.schedule)
    code = generate(variant_scop(scop, schedule), schedule, args.target)
    text = code.kernel if args.kernel_only or code.program is None else code.program
    if args.kernel_only and code.program is not None:
        text = code.header + "\n" + text
    print(text, end="" if text.endswith("\n") else "\n")
    return 0
