"""The ``polylab`` command line: one module per subcommand, each with ``add_parser`` and ``run``.

User mistakes (a :class:`~polylab.errors.PolylabError`) print their message on stderr and exit with
status 2; nothing a user types produces a Python traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from polylab.errors import PolylabError

#: subcommand name -> module under polylab.cli (a module that does not exist yet is skipped)
SUBCOMMANDS = ("analyze", "deps", "schedule", "codegen", "run", "bench", "demo", "grade")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="polylab", description="Polyhedral loop optimization on isl.")
    parser.add_argument("--version", action="version", version=f"polylab {__import__('polylab').__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"polylab.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"polylab.cli.{name}":
                continue
            raise
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


def load_program(name: str):
    """``(Program, path)`` for a file or the name of a shipped example (``sl3.sy``); user errors for a
    missing, unreadable or directory path."""
    from pathlib import Path

    import polylab

    path = Path(name)
    if not path.exists():
        try:
            path = polylab.example_path(name)
        except PolylabError:
            raise PolylabError(f"no such file: {name}",
                               hint="give a path, or an example name: " + ", ".join(polylab.examples())) from None
    if path.is_dir():
        raise PolylabError(f"{name} is a directory", hint="give a C (.c) or SysY (.sy) file")
    try:
        path.read_bytes()
    except OSError as exc:
        raise PolylabError(f"cannot read {name}: {exc.strerror}") from None
    return polylab.parse_file(path), str(path)


def parse_params(items: list[str] | None) -> dict[str, int]:
    """``["N=64", "T=10"]`` -> ``{"N": 64, "T": 10}``; a malformed item is a user error."""
    out: dict[str, int] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        try:
            if not sep or not name.strip().isidentifier():
                raise ValueError
            out[name.strip()] = int(value)
        except ValueError:
            raise PolylabError(f"bad --param {item!r}", hint="write --param NAME=INTEGER, e.g. --param N=64")
    return out


if __name__ == "__main__":
    sys.exit(main())
