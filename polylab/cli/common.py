"""What the subcommands share: reading the program a command names (a file or a shipped example)."""

from __future__ import annotations

from pathlib import Path

from polylab.corpus import example_path, examples
from polylab.errors import PolylabError
from polylab.frontend import parse_file
from polylab.model import Program, Scop

__all__ = ["load_program", "load_scop"]


def load_program(name: str) -> tuple[Program, str]:
    """``(Program, path)`` for a file or the name of a shipped example (``sl3.sy``); user errors for a
    missing, unreadable or directory path."""
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
    return parse_file(path), str(path)


def load_scop(name: str) -> tuple[Scop, str]:
    """The (first) SCoP of a file or a shipped example, and the path read."""
    program, path = load_program(name)
    return program.scop, path
