"""Capture what C libraries (isl, a compiler driver) write on file descriptor 2.

isl reports some problems by printing on the C-level ``stderr`` before it returns an error; in a notebook
that text would go to the terminal that started Jupyter, not to the cell. :func:`c_stderr` redirects
descriptor 2 into a temporary file for the duration of a block (``os.dup2``) and hands back what was
written, so the magic can show it in the cell.
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterator


class Captured:
    """The text written on descriptor 2 inside a :func:`c_stderr` block (``.text`` after the block)."""

    def __init__(self) -> None:
        self.text = ""

    def __bool__(self) -> bool:
        return bool(self.text.strip())

    def __str__(self) -> str:
        return self.text


@contextmanager
def c_stderr() -> Iterator[Captured]:
    """Redirect the process's descriptor 2 into a temporary file; ``.text`` holds what was written.

    Python's own ``sys.stderr`` object is left alone (it may be a notebook stream); only the descriptor
    that C code writes to is redirected. Nested use is safe.
    """
    out = Captured()
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2 (some embedded interpreters): nothing to capture
        yield out
        return
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        try:
            sys.__stderr__ and sys.__stderr__.flush()
        except (ValueError, OSError):
            pass
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            try:
                sys.__stderr__ and sys.__stderr__.flush()
            except (ValueError, OSError):
                pass
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.text = tmp.read().decode("utf-8", "replace")
