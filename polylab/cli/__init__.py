"""The ``polylab`` command line: one module per subcommand, each with ``add_parser`` and ``run``.

User mistakes (a :class:`~polylab.errors.PolylabError`) print their message on stderr and exit with
status 2; nothing a user types produces a Python traceback. A subcommand's module is imported only when
that command runs (or its help is asked for), so ``polylab --help`` starts without loading isl, sympy,
matplotlib or IPython.
"""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType

from polylab.errors import PolylabError
from polylab.version import __version__

__all__ = ["build_parser", "load_program", "load_scop", "main", "parse_params", "subcommand"]

#: the subcommands, in the order of the help text, with the one line ``polylab --help`` shows for each
#: (the module ``polylab.cli.<name>`` has ``add_parser`` and ``run``)
SUBCOMMANDS = {
    "analyze": "show the polyhedral model of a loop nest",
    "deps": "exact dependences and parallel loops of a kernel",
    "schedule": "check a schedule (isl text or recipe) and its parallelism",
    "optimize": "choose a fast schedule automatically and explain it",
    "codegen": "print C, OpenMP, CUDA or MLIR code for a schedule",
    "run": "verify and time a schedule's code",
    "bench": "verify and time many kernels x variants; table, JSON, chart",
    "demo": "the sl3 story: dependences, wavefront, folding, contraction, tiling",
    "grade": "grade student notebooks (batch, sandboxed)",
    "stencil": "stencil programs (Open Earth MLIR): passes, lowering, running",
    "fuzz": "throw mutated inputs at polylab and count tracebacks",
}


def subcommand(name: str) -> ModuleType:
    """The module of subcommand ``name`` (imported on first use)."""
    match name:
        case "analyze":
            from polylab.cli import analyze as module
        case "deps":
            from polylab.cli import deps as module
        case "schedule":
            from polylab.cli import schedule as module
        case "optimize":
            from polylab.cli import optimize as module
        case "codegen":
            from polylab.cli import codegen as module
        case "run":
            from polylab.cli import run as module
        case "bench":
            from polylab.cli import bench as module
        case "demo":
            from polylab.cli import demo as module
        case "grade":
            from polylab.cli import grade as module
        case "stencil":
            from polylab.cli import stencil as module
        case "fuzz":
            from polylab.cli import fuzz as module
        case _:
            raise PolylabError(f"no command {name!r}", hint="commands: " + ", ".join(SUBCOMMANDS))
    return module


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every subcommand's own parser (``command=None``), or only that of
    ``command`` with one-line entries for the others (``""``: none, for the top-level help)."""
    parser = argparse.ArgumentParser(prog="polylab", description="Polyhedral loop optimization on isl.")
    parser.add_argument("--version", action="version", version=f"polylab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, line in SUBCOMMANDS.items():
        if command is None or name == command:
            module = subcommand(name)
            p = module.add_parser(sub)
            p.set_defaults(_run=module.run)
        else:
            sub.add_parser(name, help=line)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), "")
    parser = build_parser(command if command in SUBCOMMANDS else "")
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return 2
    args.cli_main = main  # the fuzz command drives the command line through this entry point
    from polylab import processes  # here: `polylab --help` loads nothing more

    try:
        with processes.children_end_with_us():  # SIGTERM and SIGHUP end the programs it runs, as SIGINT does
            return int(args._run(args) or 0)
    except PolylabError as err:
        print(err.render(getattr(args, "file", None)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader left (``polylab deps F --json | head -1``): stop quietly
        _silence_stdout()
        return 141  # as a shell reports a command killed by SIGPIPE (128 + 13)


def _silence_stdout() -> None:
    """Point descriptor 1 at /dev/null, so the interpreter's final flush of what is still buffered does
    not fail a second time on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no descriptor to redirect (a replaced sys.stdout): nothing to flush
        pass


def __getattr__(name: str):
    """``load_program``, ``load_scop`` (:mod:`polylab.cli.common`) and ``parse_params``
    (:mod:`polylab.model.params`), loaded on first use."""
    if name in ("load_program", "load_scop"):
        from polylab.cli import common

        return getattr(common, name)
    if name == "parse_params":
        from polylab.model.params import parse_params

        return parse_params
    raise AttributeError(f"module 'polylab.cli' has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
