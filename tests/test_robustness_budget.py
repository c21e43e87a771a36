"""Issue 15, section 3: every isl computation is bounded and says "too complex for ...: ..." with a hint.

The bounds (:mod:`polylab.model.budget`) are set small here, by the environment variables a user sets
(``POLYLAB_MAX_OPERATIONS``, ``POLYLAB_MAX_SECONDS``), so the tests are fast; nothing here measures time:
the tests assert *which* answer comes (the error, its message and hint, the state isl is left in).
"""

from __future__ import annotations

import os
import signal

import islpy as isl
import pytest

import polylab
from polylab.analysis import compute_dependences
from polylab.errors import PolylabError, TooComplexError
from polylab.model import budget
from polylab.reference.builder import make_scop, statement
from polylab.schedule import core, parse_schedule
from polylab.schedule.pluto import pluto_schedule
from polylab.storage import recipe_steps


def _nest(depth: int, subscript: str, body: str = "1.0") -> str:
    loops = "".join(f"{' ' * k}for (int i{k} = 0; i{k} < N; i{k}++)\n" for k in range(depth))
    return f"void f(int N, double a[{depth}*N]) {{\n#pragma scop\n{loops}  a[{subscript}] = {body};\n#pragma endscop\n}}\n"


FIVE_DEEP = _nest(5, "i0 + i1 + i2 + i3 + i4")


def test_auto_on_the_five_deep_sum_subscript_stops_at_the_seconds_budget(monkeypatch):
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "1")
    scop = polylab.parse(FIVE_DEEP).scop
    with pytest.raises(TooComplexError) as exc:
        parse_schedule(scop, "auto", steps=recipe_steps())
    err = exc.value
    assert err.message.startswith("too complex for the Pluto-style search (auto): more than 1 s")
    assert "POLYLAB_MAX_SECONDS" in err.hint and "isl step" in err.hint
    assert err.location is not None and err.location.text == "auto"


def test_auto_on_fifty_statements_stops_at_the_operation_budget(monkeypatch):
    monkeypatch.setenv("POLYLAB_MAX_OPERATIONS", "20000")
    body = "\n".join(f"  a[i] = a[i] + {k}.0;" for k in range(50))
    scop = polylab.parse(f"double a[N];\nfor (i = 0; i < N; i++) {{\n{body}\n}}\n").scop
    with pytest.raises(TooComplexError, match=r"too complex for .*: more than 20,000 isl operations"):
        parse_schedule(scop, "auto", steps=recipe_steps())
    # isl is usable again afterwards: the limit is lifted and the count reset when the block ends
    assert isl.DEFAULT_CONTEXT.get_max_operations() == 0
    assert not isl.Set("{ [i] : 0 <= i < 4 }").is_empty()


def test_dependence_analysis_of_a_thousand_statements_stops(monkeypatch):
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "0.5")
    stmts = [statement(f"S{k}", f"[N] -> {{ S{k}[i] : 0 <= i < N }}", "a[i]", f"a[i] + {k}.0")
             for k in range(1000)]
    sched = "[N] -> { " + "; ".join(f"S{k}[i] -> [i, {k}]" for k in range(1000)) + " }"
    scop = make_scop("many", stmts, arrays=[("a", "double", ("N",))], schedule=sched)
    with pytest.raises(TooComplexError, match="too complex for the dependence analysis: more than 0.5 s") as exc:
        compute_dependences(scop)
    assert "fewer statements" in exc.value.hint


def test_dependence_analysis_of_a_fifty_deep_nest_stops(monkeypatch):
    monkeypatch.setenv("POLYLAB_MAX_OPERATIONS", "20000")
    scop = polylab.parse(_nest(50, "i0", "a[i0] + a[i49]")).scop
    with pytest.raises(TooComplexError, match="too complex for the dependence analysis"):
        compute_dependences(scop)


def test_within_the_budget_the_answers_are_unchanged(monkeypatch):
    scop = polylab.parse_file(polylab.example_path("jacobi2d.c")).scop
    free = pluto_schedule(scop).schedule.text()
    monkeypatch.setenv("POLYLAB_MAX_OPERATIONS", "50000000")
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "600")
    assert pluto_schedule(scop).schedule.text() == free


def test_a_malformed_setting_keeps_the_default(monkeypatch):
    monkeypatch.setenv("POLYLAB_MAX_OPERATIONS", "lots")
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "")
    assert budget.limits() == budget.Limits(50_000_000, 120.0)
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "0")
    assert budget.limits().seconds == 0


def test_a_fallback_that_swallows_isl_failures_cannot_pass_for_an_answer(monkeypatch):
    """Inside a bounded block, a result returned after isl's limit was hit is replaced by the error."""
    monkeypatch.setenv("POLYLAB_MAX_OPERATIONS", "1000")

    def swallowing() -> str:
        try:
            isl.Set("{ [i, j] : 0 <= i < 100 and 0 <= j < i }").coalesce().lexmin().lexmax()
            for _ in range(200):
                isl.Set("{ [i, j] : 0 <= i < 100 and 0 <= j < i }").compute_divs().coalesce().lexmax()
        except isl.Error:
            return "a fallback answer"
        return "the exact answer"

    with pytest.raises(TooComplexError, match="more than 1,000 isl operations"):
        with budget.bounded("a test"):
            swallowing()


def test_the_isolated_farkas_step_is_exact(monkeypatch):
    scop = polylab.parse(_nest(3, "i0 + i1 + i2")).scop
    flat = compute_dependences(scop).dependences[0].relation.wrap().flatten()
    here = core.farkas_coefficients(flat)
    calls = []
    real = core.isolated
    monkeypatch.setattr(core, "ISOLATE_DIMS", 0)
    monkeypatch.setattr(core, "isolated", lambda f: calls.append(1) or real(f))
    child = core.farkas_coefficients(flat)
    assert calls and child.is_equal(here)


def test_the_farkas_step_of_a_deep_nest_runs_isolated(monkeypatch):
    calls = []
    real = core.isolated
    monkeypatch.setattr(core, "isolated", lambda f: calls.append(1) or real(f))
    scop = polylab.parse(_nest(4, "i0 + i1 + i2 + i3")).scop
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "0.5")
    with pytest.raises(TooComplexError):
        pluto_schedule(scop)
    assert calls


def _interrupt_after(seconds: float) -> None:
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _record_forks(monkeypatch) -> list[int]:
    """The pids of the children :func:`budget.isolated` forks (recorded in the parent)."""
    forked: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(budget.os, "fork", fork)
    return forked


def test_an_interrupt_stops_an_isolated_computation_and_reaps_the_child(monkeypatch):
    import time

    forked = _record_forks(monkeypatch)

    old = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    pids = []

    def forever() -> str:
        pids.append(os.getpid())
        time.sleep(600)
        return ""

    try:
        _interrupt_after(0.3)
        with pytest.raises(KeyboardInterrupt):
            budget.isolated(forever)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert not pids and len(forked) == 1  # the function ran in the child, not here
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)  # the child was killed and reaped: no zombie


def test_an_isolated_computation_stops_at_the_seconds_budget(monkeypatch):
    import time

    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "0.3")
    forked = _record_forks(monkeypatch)
    with pytest.raises(TooComplexError, match="too complex for a slow step: more than 0.3 s"):
        with budget.bounded("a slow step"):
            budget.isolated(lambda: time.sleep(600) or "")
    assert len(forked) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)


def test_an_error_in_the_isolated_computation_comes_back_as_an_isl_error():
    with pytest.raises(isl.Error, match="ZeroDivisionError"):
        budget.isolated(lambda: str(1 // 0))


def test_too_complex_is_a_polylab_error_with_its_own_kind():
    err = TooComplexError("too complex for x: more than 1 s", hint="h")
    assert isinstance(err, PolylabError) and err.render().startswith("stopped: too complex for x")
