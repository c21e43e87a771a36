"""Bounds on isl computations: every analysis answers, or says it is too complex, in bounded time.

Exact Presburger arithmetic can take exponential time (a dependence polyhedron of a 5-deep nest whose
subscript is ``i0 + i1 + i2 + i3 + i4``; a thousand statements; a 50-deep nest). polylab never approximates
instead; it stops and says so with :class:`~polylab.errors.TooComplexError` ("too complex for ...: ...",
with a hint). Three mechanisms, all configurable by environment variables:

* **isl's operation limit** (``isl_ctx_set_max_operations``): inside :func:`bounded`, isl counts its
  operations from zero and fails when it passes ``POLYLAB_MAX_OPERATIONS`` (default 50,000,000, about a
  minute; ``0`` = no limit). Any result computed after the limit was hit is discarded: an ``isl.Error``,
  a polylab error or even a normal return inside the block becomes the TooComplexError, so a fallback
  that swallowed isl's failure can never pass for an answer.
* **a wall-clock budget** (``POLYLAB_MAX_SECONDS``, default 120; ``0`` = none): :func:`tick`, called in
  the Python loops of the analyses and searches, raises the TooComplexError once the outermost
  :func:`bounded` block has run that long.
* **isolation of single long isl calls** (:func:`isolated`): a computation isl does in one call without
  counting operations (``coefficients``, the Farkas step of the Pluto-style search) runs in a forked child
  process when it is big. The parent waits in Python, so it stops the child at the wall-clock budget and
  answers an interrupt (Ctrl-C, the notebook's stop button) at once; the child sends back isl text, which
  is exact (a set read back from its text is the same set).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import islpy as isl

from polylab.errors import TooComplexError

__all__ = ["Limits", "bounded", "isolated", "limits", "tick"]


@dataclass(frozen=True)
class Limits:
    """The bounds in force: isl operations (0: none) and seconds (0: none)."""

    operations: int
    seconds: float


def _env_number(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        return default  # a malformed setting keeps the default rather than disabling the bound
    return max(value, 0.0)


def limits() -> Limits:
    """The limits from ``POLYLAB_MAX_OPERATIONS`` and ``POLYLAB_MAX_SECONDS`` (read at each outermost
    :func:`bounded`, so a notebook can change them between cells)."""
    return Limits(int(_env_number("POLYLAB_MAX_OPERATIONS", 50_000_000)),
                  _env_number("POLYLAB_MAX_SECONDS", 120.0))


@dataclass
class _Active:
    what: str
    hint: str
    limits: Limits
    start: float


_STACK: list[_Active] = []

_HINT = ("simplify the program (fewer statements, shallower nests, simpler subscripts), fix parameters, "
         "or raise the bound: POLYLAB_MAX_OPERATIONS (isl operations) and POLYLAB_MAX_SECONDS (0 = no bound)")


def _exhausted(ctx: isl.Context) -> bool:
    """Has isl's operation limit been hit (every counted operation now fails)?"""
    if not ctx.get_max_operations():
        return False
    try:
        isl.Set("{ [i] : 0 <= i <= 1 }").lexmin()
    except isl.Error:
        return True
    return False


def _too_complex(active: _Active, why: str) -> TooComplexError:
    return TooComplexError(f"too complex for {active.what}: {why}", hint=active.hint)


@contextlib.contextmanager
def bounded(what: str, *, hint: str | None = None) -> Iterator[None]:
    """Run the block under the limits (see the module text); ``what`` names the computation in the
    message ("too complex for the dependence analysis: ..."). Blocks nest: the outermost sets the budget,
    the innermost names the computation."""
    ctx = isl.DEFAULT_CONTEXT
    outer = not _STACK
    lim = limits() if outer else _STACK[0].limits
    active = _Active(what, hint or _HINT, lim, time.monotonic() if outer else _STACK[0].start)
    _STACK.append(active)
    if outer:
        ctx.reset_operations()
        ctx.set_max_operations(lim.operations)
    try:
        yield
        if outer and _exhausted(ctx):
            raise _too_complex(active, f"more than {lim.operations:,} isl operations")
    except Exception as exc:  # isl's failure, or a fallback's error, after the limit was hit is the limit
        if isinstance(exc, TooComplexError) or not _exhausted(ctx):
            raise
        raise _too_complex(active, f"more than {lim.operations:,} isl operations") from None
    finally:
        _STACK.pop()
        if outer:
            ctx.set_max_operations(0)
            ctx.reset_operations()


def tick() -> None:
    """Raise the TooComplexError when the outermost :func:`bounded` block has used its seconds (called
    in the loops of the analyses; outside any block it does nothing)."""
    if not _STACK:
        return
    first = _STACK[0]
    if first.limits.seconds and time.monotonic() - first.start > first.limits.seconds:
        raise _too_complex(_STACK[-1], f"more than {first.limits.seconds:g} s")


def _remaining() -> float | None:
    if not _STACK or not _STACK[0].limits.seconds:
        return None
    return _STACK[0].limits.seconds - (time.monotonic() - _STACK[0].start)


def isolated(compute: Callable[[], str]) -> str:
    """``compute()`` (isl text) run in a forked child process, waited for in Python: the wall-clock budget
    stops it (TooComplexError) and an interrupt stops it at once (KeyboardInterrupt, the child killed and
    reaped). The child inherits isl's operation limit and count: when it passes the limit, the parent
    raises the same TooComplexError as a computation here would. Where ``fork`` does not exist,
    ``compute()`` runs here."""
    if not hasattr(os, "fork"):
        return compute()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send the text (or the error), leave without running Python's exit
        os.close(read_fd)
        try:
            data = b"T" + compute().encode()
        except BaseException as exc:  # the parent re-raises it (as the limit's error, or an isl error)
            limit = isl.DEFAULT_CONTEXT.get_max_operations()
            data = (b"L" + str(limit).encode() if _exhausted(isl.DEFAULT_CONTEXT)
                    else b"E" + f"{type(exc).__name__}: {exc}".encode())
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
        os._exit(0)
    os.close(write_fd)
    chunks: list[bytes] = []
    done = False
    try:
        while True:
            left = _remaining()
            if left is not None and left <= 0:
                raise _too_complex(_STACK[-1], f"more than {_STACK[0].limits.seconds:g} s")
            ready, _, _ = select.select([read_fd], [], [], 0.1 if left is None else min(0.1, max(left, 0.0)))
            if ready:
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        os.waitpid(pid, 0)
        done = True
    finally:
        os.close(read_fd)
        if not done:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    data = b"".join(chunks)
    if data.startswith(b"L"):  # the child inherited the operation limit (and the count) and hit it
        active = _STACK[-1] if _STACK else _Active("an isolated computation", _HINT, limits(), 0.0)
        raise _too_complex(active, f"more than {int(data[1:]):,} isl operations")
    if not data.startswith(b"T"):
        raise isl.Error(data[1:].decode(errors="replace") or "the isolated computation died")
    return data[1:].decode()
