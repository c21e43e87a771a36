"""The children a polylab process starts end with it: on an interrupt, and on ``SIGTERM`` and ``SIGHUP`` alike.

Every program and compiler the toolchain starts runs in a process group of its own (``start_new_session``),
so a terminal's signals do not reach it and a timeout can kill all of it. The price: when polylab itself
ends, nothing ends its children unless polylab does it. For ``SIGINT`` Python raises ``KeyboardInterrupt``
and the code that waits for a child kills its group on the way out. This module gives ``SIGTERM`` (a
``kill``, a job scheduler, ``timeout``) and ``SIGHUP`` (a closed terminal or SSH session) the same path:

* :func:`started` / :func:`ended` keep the set of process groups this process runs (the toolchain's
  runner and compiler calls register theirs; any layer that starts a group of its own may too);
* inside :func:`children_end_with_us` the two signals kill every registered group at once (``SIGKILL``)
  and raise :class:`Terminated` in the main thread, so the waiting code unwinds and reaps as for an
  interrupt; when the block is left by that exception, the process ends by the signal it received
  (its default action, as if polylab had not caught it: a shell sees ``143`` or ``129``).

The command line wraps every command in it; the notebook magics wrap each cell; the grader may wrap its
batch. Child processes forked for isl computations end with their parent by themselves
(:func:`polylab.model.budget.die_with_parent`). This module is part of the base (it imports nothing of
polylab's), so the command line loads it without loading a layer.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Iterator

__all__ = ["TERMINATING_SIGNALS", "Terminated", "children_end_with_us", "ended", "held", "kill_children",
           "started", "unhold"]

#: the signals that end polylab with its children (SIGINT already does, through KeyboardInterrupt)
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)

_GROUPS: set[int] = set()
_LOCK = threading.Lock()


class Terminated(BaseException):
    """``SIGTERM`` or ``SIGHUP`` arrived (``signum``): a BaseException, like ``KeyboardInterrupt``, so that
    no handler of polylab's errors swallows it and every ``finally`` runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = signum


def started(pgid: int) -> None:
    """Record a process group this process started (its leader's pid)."""
    with _LOCK:
        _GROUPS.add(pgid)


def ended(pgid: int) -> None:
    """Forget a process group that was reaped."""
    with _LOCK:
        _GROUPS.discard(pgid)


#: the signals held while a child is started and recorded (so none lands in between)
_HELD = {signal.SIGINT, *TERMINATING_SIGNALS}


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Hold back SIGINT, SIGTERM and SIGHUP in this thread for the block (they arrive after it): around
    starting a child and recording it, so that no signal finds it started and not yet recorded. A child
    started inside inherits the mask: it must call :func:`unhold` before its program starts."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def unhold() -> None:
    """In a child started inside :func:`held` (a ``preexec_fn``): receive those signals again."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)


def kill_children() -> None:
    """``SIGKILL`` every recorded process group (the records stay until their waiters reap them)."""
    with _LOCK:
        groups = list(_GROUPS)
    for pgid in groups:
        with contextlib.suppress(OSError):  # already gone
            os.killpg(pgid, signal.SIGKILL)


def _on_signal(signum: int, frame) -> None:  # noqa: ANN001 - a signal handler
    kill_children()
    raise Terminated(signum)


@contextlib.contextmanager
def children_end_with_us() -> Iterator[None]:
    """Within the block, ``SIGTERM`` and ``SIGHUP`` end this process's children and raise
    :class:`Terminated`; a block left by it ends the process by that signal (see the module). Outside the
    main thread (where Python delivers no signal) the block changes nothing. Nested blocks are one."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is _on_signal:
        yield
        return
    # a signal this process ignores (SIGHUP under nohup) stays ignored
    old = {s: signal.signal(s, _on_signal) for s in TERMINATING_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        yield
    except Terminated as stop:
        kill_children()
        for s, handler in old.items():
            signal.signal(s, handler)
        if old[stop.signum] in (signal.SIG_DFL, None):
            signal.signal(stop.signum, signal.SIG_DFL)
            os.kill(os.getpid(), stop.signum)  # end as the signal would have ended us
        raise
    finally:
        for s, handler in old.items():
            if signal.getsignal(s) is _on_signal:
                signal.signal(s, handler)
