"""What a program of the user's own prints, read as outputs for the differential run (:func:`judge`), and
the time it prints.

A user's program (``polylab bench FILE.c --own-main``) does not write polylab's output files; what it
computed is what it prints. :func:`printed_outputs` turns its standard output and error into
:class:`~polylab.toolchain.differential.Outputs`, so the one differential run compares them, with its
vacuity rules (nothing printed is no comparison at all):

* PolyBench's dump (``-DPOLYBENCH_DUMP_ARRAYS``: ``begin dump: NAME``, the numbers, ``end   dump: NAME``,
  on standard error): one array per name, each number as printed (read into a double, so two dumps are
  equal exactly when they print the same numbers; PolyBench prints ``%0.2lf``, which is what the program
  itself offers to compare);
* everything else the program prints (both streams; standard output left out when it is only the
  program's timer, see :func:`printed_time`): its bytes, as one array ``printed`` of ``uint8``.

:func:`printed_time`: a standard output that is one number and nothing else is the program's own timer
(PolyBench's ``-DPOLYBENCH_TIME`` prints the kernel's seconds with ``%0.6f``), else None.
"""

from __future__ import annotations

import re

import numpy as np

from polylab.errors import ToolchainError
from polylab.toolchain.differential import Outputs

__all__ = ["PRINTED", "printed_outputs", "printed_time"]

#: the name of the array holding the bytes a program printed besides its dump
PRINTED = "printed"

_DUMP = re.compile(r"begin dump: (?P<name>\S+)(?P<body>.*?)end   dump: (?P=name)", re.S)
_DUMP_FRAME = re.compile(r"==(BEGIN|END)\s+DUMP_ARRAYS==\n?")
_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*|\s*[-+]?(nan|inf)\s*", re.I)


def printed_time(stdout: str) -> float | None:
    """The seconds a program printed as its only standard output (its own timer), else None."""
    text = stdout.strip()
    if not text or "\n" in text or not _NUMBER.fullmatch(text):
        return None
    return float(text)


def _numbers(name: str, body: str) -> np.ndarray:
    words = body.split()
    try:
        return np.array([float(w) for w in words], dtype=np.float64)
    except ValueError:
        bad = next(w for w in words if not _NUMBER.fullmatch(w))
        raise ToolchainError(f"the dump of {name} holds {bad!r}, which is not a number") from None


def printed_outputs(stdout: str, stderr: str, *, truncated: bool = False) -> Outputs:
    """The outputs a program printed (module text); ``truncated``: the run's output was cut at the
    runner's limit, which is refused (a comparison of part of the output would be called complete)."""
    if truncated:
        raise ToolchainError("the program printed more than the runner keeps, so its output cannot be compared",
                             hint="compare at a smaller size")
    arrays: dict[str, np.ndarray] = {}
    rest = []
    for stream in (stderr, stdout if printed_time(stdout) is None else ""):
        at = 0
        for m in _DUMP.finditer(stream):
            rest.append(stream[at:m.start()])
            name = m["name"]
            if name in arrays or name == PRINTED:
                raise ToolchainError(f"the program dumps {name} twice")
            arrays[name] = _numbers(name, m["body"])
            at = m.end()
        rest.append(stream[at:])
    text = _DUMP_FRAME.sub("", "".join(rest)).strip()
    if text:
        arrays[PRINTED] = np.frombuffer(text.encode(), dtype=np.uint8).copy()
    return Outputs(arrays)
