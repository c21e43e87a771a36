"""The ``polylab`` command line: one module per subcommand, each with ``add_parser`` and ``run``.

User mistakes (a :class:`~polylab.errors.PolylabError`) print their message on stderr and exit with
status 2; nothing a user types produces a Python traceback.
"""

from __future__ import annotations

import argparse
import sys

from polylab.cli import analyze, bench, codegen, demo, deps, grade, optimize, run, schedule
from polylab.cli.common import load_program, load_scop
from polylab.errors import PolylabError
from polylab.model.params import parse_params
from polylab.version import __version__

__all__ = ["build_parser", "load_program", "load_scop", "main", "parse_params"]

#: the subcommand modules, in the order of the help text (each has ``add_parser`` and ``run``)
SUBCOMMANDS = (analyze, deps, schedule, optimize, codegen, run, bench, demo, grade)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="polylab", description="Polyhedral loop optimization on isl.")
    parser.add_argument("--version", action="version", version=f"polylab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        p = module.add_parser(sub)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args._run(args) or 0)
    except PolylabError as err:
        print(err.render(getattr(args, "file", None)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
