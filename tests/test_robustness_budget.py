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


def test_a_time_order_under_a_tiled_schedule_is_computed_exactly_in_a_child(monkeypatch):
    from polylab.storage import islutil as sutil

    calls = []
    real = sutil.isolated
    monkeypatch.setattr(sutil, "isolated", lambda f: calls.append(1) or real(f))
    # a parameter named like an isl keyword travels through the child's text too
    f = isl.MultiUnionPwAff.from_union_map(isl.UnionMap(
        "[N] -> { S[i, j] -> [floor(i / 4), floor((i + j) / 3), j]; T[i] -> [floor(i / 2), i, 0] }"))
    f = f.set_dim_name(isl.dim_type.param, 0, "max")
    rel = isl.UnionMap("[N] -> { S[i, j] -> S[a, b] : 0 <= i, j, a, b < N; S[i, j] -> T[a] : 0 <= a < i < N }")
    direct = {"<": rel.lex_lt_at_multi_union_pw_aff(f), "<=": rel.lex_le_at_multi_union_pw_aff(f),
              "=": rel.eq_at_multi_union_pw_aff(f)}
    for order, expected in direct.items():
        got = sutil.restrict_order(rel, f, order)
        assert got.is_equal(expected), order
    assert len(calls) == 3


def test_contract_under_a_tiled_schedule_stops_at_the_seconds_budget(monkeypatch):
    # sl3 with its producer fused and tiled: each time order of the contraction's conflict set is one
    # isl call of many seconds; it runs in a child, so the budget stops it (a fuzz finding: seed 2026)
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "2")
    forked = _record_forks(monkeypatch)
    scop = polylab.parse_file(polylab.example_path("sl3.sy")).scop
    with pytest.raises(TooComplexError, match="too complex for the step contract: more than 2 s") as exc:
        parse_schedule(scop, "fuse_producers; tile_wavefront(8, 8); contract(x)", steps=recipe_steps())
    assert exc.value.location is not None and exc.value.location.text == "contract(x)"
    assert forked
    for pid in forked:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # every child reaped


def test_an_isolated_computation_that_passes_the_operation_limit_is_too_complex(monkeypatch):
    monkeypatch.setenv("POLYLAB_MAX_OPERATIONS", "1000")

    def heavy() -> str:
        return str(isl.UnionSet("[N] -> { [i, j, k, l] : 0 <= i, j, k, l < N and 3i + 5j - 7k + 11l = N }")
                   .coalesce().lexmin())

    with pytest.raises(TooComplexError, match="too complex for a heavy step: more than 1,000 isl operations"):
        with budget.bounded("a heavy step"):
            budget.isolated(heavy)


def test_isls_scheduler_runs_in_a_child_and_stops_at_the_seconds_budget(monkeypatch):
    # isl's search on adi ran for minutes in one call; in a child the budget stops it
    from polylab.schedule import isl_scheduler

    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "0.5")
    forked = _record_forks(monkeypatch)
    scop = polylab.parse_file(polylab.example_path("polybench/adi.c"), defines={"MINI_DATASET": ""}).scop
    with pytest.raises(TooComplexError, match="more than 0.5 s"):
        with budget.bounded("isl's scheduler"):
            isl_scheduler.isl_schedule(scop)
    assert forked
