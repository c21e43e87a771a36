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

Every public entry point that can run long is :func:`budgeted`: called outside any block (a script or a
notebook cell calling the API directly), it opens one of its own, so the three mechanisms apply there too;
inside a block (the CLI, a magic, a recipe step, another entry point) it adds nothing and the outer budget
applies.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import select
import signal
import time
from dataclasses import dataclass
from typing import Callable, Iterator, TypeVar

import islpy as isl

from polylab.errors import TooComplexError

__all__ = ["Limits", "bounded", "budgeted", "die_with_parent", "exhausted", "isolated", "limits", "tick"]


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
    #: a block's own allowance of seconds (a nested block given ``seconds``), with its monotonic deadline
    seconds: float | None = None
    deadline: float | None = None


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
def bounded(what: str, *, hint: str | None = None, seconds: float | None = None) -> Iterator[None]:
    """Run the block under the limits (see the module text); ``what`` names the computation in the
    message ("too complex for the dependence analysis: ..."). Blocks nest: the outermost sets the budget,
    the innermost names the computation. ``seconds``: an allowance of the block's own (within the
    budget), for a computation its caller can do without: when it passes, :func:`tick` and
    :func:`isolated` raise the TooComplexError naming this block, and :func:`exhausted` stays false as
    long as the budget itself is not used up (so the caller can fall back)."""
    ctx = isl.DEFAULT_CONTEXT
    outer = not _STACK
    lim = limits() if outer else _STACK[0].limits
    now = time.monotonic()
    active = _Active(what, hint or _HINT, lim, now if outer else _STACK[0].start,
                     seconds, now + seconds if seconds else None)
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


_F = TypeVar("_F", bound=Callable)


def budgeted(what: str, *, hint: str | None = None) -> Callable[[_F], _F]:
    """Decorate a public entry point that can run long: a call outside any :func:`bounded` block runs in
    one of its own (``what`` names the computation in the message, ``hint`` its advice); a call inside a
    block runs as it is, under the outer budget and the outer block's name."""

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def entry(*args, **kwargs):
            if _STACK:
                return fn(*args, **kwargs)
            with bounded(what, hint=hint):
                return fn(*args, **kwargs)

        return entry  # type: ignore[return-value]

    return decorate


def _expired() -> TooComplexError | None:
    """The error of the first bound whose time has passed (the budget, else a block's own allowance)."""
    if not _STACK:
        return None
    now = time.monotonic()
    first = _STACK[0]
    if first.limits.seconds and now - first.start > first.limits.seconds:
        return _too_complex(_STACK[-1], f"more than {first.limits.seconds:g} s")
    for a in _STACK[1:]:
        if a.deadline is not None and now > a.deadline:
            return _too_complex(a, f"more than its {a.seconds:g} s")
    return None


def exhausted() -> bool:
    """Whether the outermost block's budget is used up (its seconds or isl's operations): a TooComplexError
    caught inside it then cannot be answered by a fallback."""
    if not _STACK:
        return False
    first = _STACK[0]
    late = bool(first.limits.seconds) and time.monotonic() - first.start > first.limits.seconds
    return late or _exhausted(isl.DEFAULT_CONTEXT)


def tick() -> None:
    """Raise the TooComplexError when the outermost :func:`bounded` block has used its seconds, or a block
    its own allowance (called in the loops of the analyses; outside any block it does nothing)."""
    err = _expired()
    if err is not None:
        raise err


def _remaining() -> float | None:
    """Seconds until the first bound in force passes (None: no bound)."""
    if not _STACK:
        return None
    now = time.monotonic()
    ends = [a.deadline for a in _STACK[1:] if a.deadline is not None]
    if _STACK[0].limits.seconds:
        ends.append(_STACK[0].start + _STACK[0].limits.seconds)
    return min(ends) - now if ends else None


def die_with_parent(parent: int) -> None:
    """In a forked child: be killed (SIGKILL) when the parent process ends, however it ends (Linux's
    ``PR_SET_PDEATHSIG``), so no computation outlives the process that wanted it; leave at once when the
    parent has already gone. Elsewhere nothing is done."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def isolated(compute: Callable[[], str], *, seconds: float | None = None) -> str:
    """``compute()`` (isl text) run in a forked child process, waited for in Python: the wall-clock budget
    stops it (TooComplexError) and an interrupt stops it at once (KeyboardInterrupt, the child killed and
    reaped). ``seconds``: a deadline of its own (the earlier of it and the budget's applies; outside any
    :func:`bounded` block only it), for a computation whose answer is optional. The child inherits isl's
    operation limit and count: when it passes the limit, the parent raises the same TooComplexError as a
    computation here would. Where ``fork`` does not exist, ``compute()`` runs here."""
    if not hasattr(os, "fork"):
        return compute()
    deadline = None if seconds is None else time.monotonic() + seconds
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: compute, send the text (or the error), leave without running Python's exit
        die_with_parent(parent)
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
            own = None if deadline is None else deadline - time.monotonic()
            if own is not None and own <= 0:
                active = _STACK[-1] if _STACK else _Active("an isolated computation", _HINT, limits(), 0.0)
                raise _too_complex(active, f"more than its own {seconds:g} s")
            if left is not None and left <= 0:
                raise _expired() or _too_complex(_STACK[-1], "more than its seconds")
            if own is not None:
                left = own if left is None else min(left, own)
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
