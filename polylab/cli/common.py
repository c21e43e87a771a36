"""What the subcommands share: reading the program a command names (a file or a shipped example), with the
preprocessor options a C compiler takes (``-DNAME=VALUE``, ``-DNAME``, ``-I DIR``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from polylab.corpus import example_path, examples
from polylab.errors import PolylabError
from polylab.frontend import parse_file
from polylab.model import Program, Scop

__all__ = ["add_source_options", "load_program", "load_scop", "source_options", "write_file"]


def add_source_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``-D NAME[=VALUE]`` and ``-I DIR`` (repeatable, attached or separate: ``-DN=100``, ``-I inc``)."""
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                        help="define a macro for the C preprocessor, as a C compiler does (repeatable), "
                             "e.g. -DN=100")
    parser.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                        help="search DIR for #include files (repeatable)")
    parser.add_argument("--language", choices=("c", "sysy"), default=None,
                        help="input language (default: from the file name, .sy is SysY)")
    return parser


def source_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`load_program` that ``args`` carries (``defines``, ...)."""
    return {"defines": tuple(getattr(args, "defines", None) or ()),
            "include_dirs": tuple(getattr(args, "include_dirs", None) or ()),
            "language": getattr(args, "language", None)}


def resolve(name: str) -> Path:
    """The path of a file, or of the shipped example of that name; user errors for a missing, unreadable
    or directory path."""
    path = Path(name)
    if not path.exists():
        try:
            path = example_path(name)
        except PolylabError:
            raise PolylabError(f"no such file: {name}",
                               hint="give a path, or an example name: " + ", ".join(examples())) from None
    if path.is_dir():
        raise PolylabError(f"{name} is a directory", hint="give a C (.c) or SysY (.sy) file")
    try:
        path.read_bytes()
    except OSError as exc:
        raise PolylabError(f"cannot read {name}: {exc.strerror}") from None
    return path


def load_program(name: str, *, defines=(), include_dirs=(), language: str | None = None) -> tuple[Program, str]:
    """``(Program, path)`` for a file or the name of a shipped example (``sl3.sy``, ``2mm.c``), read with
    the ``-D`` macros and ``-I`` folders given."""
    path = resolve(name)
    return parse_file(path, defines=defines, include_dirs=include_dirs, language=language), str(path)


def load_scop(name: str, **options) -> tuple[Scop, str]:
    """The (first) SCoP of a file or a shipped example, and the path read."""
    program, path = load_program(name, **options)
    return program.scop, path


def write_file(args: argparse.Namespace, spec: str, params: dict[str, int], target: str, specialize: bool) -> int:
    """``-o OUT.c``: the input file with its regions replaced (:func:`polylab.experiment.rewrite.rewrite`);
    prints, per region, the lines replaced and the sizes its schedule was chosen for."""
    from polylab.bench.machine import detect_machine
    from polylab.experiment.rewrite import rewrite

    program, path = load_program(args.file, **source_options(args))
    if not program.scops:
        raise PolylabError(f"{path} has no static control part to replace",
                           hint="put #pragma scop / #pragma endscop around the loop nest")
    try:
        with open(path, newline="") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise PolylabError(f"cannot read {path}: {exc}") from None
    result = rewrite(program, text, spec, target, params=params, specialize=specialize,
                     machine=detect_machine(getattr(args, "threads", None)))
    try:
        with open(args.output, "w", newline="") as fh:
            fh.write(result.text)
    except OSError as exc:
        raise PolylabError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    for r in result.regions:
        print(f"{r.scop.name} (lines {r.lines[0]}-{r.lines[1]}): {result.target} code of {result.spec}, "
              f"chosen for {r.sizes}")
    print(f"wrote {args.output}")
    return 0
