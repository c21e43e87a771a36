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


def test_auto_on_the_five_deep_sum_subscript_answers_with_isl_after_its_own_seconds(monkeypatch):
    # issue 28, item 7: within the budget, the search has an allowance of its own (SEARCH_SECONDS); past it
    # auto answers with isl's scheduler (which finds the parallel sum hyperplane), and says why
    from polylab.schedule import pluto

    monkeypatch.setattr(pluto, "SEARCH_SECONDS", 0.5)
    scop = polylab.parse(FIVE_DEEP).scop
    sched = parse_schedule(scop, "auto", steps=recipe_steps())
    assert "more than its 0.5 s); using isl's scheduler instead" in "\n".join(sched.notes)
    assert sched.text().endswith("-> [i0 + i1 + i2 + i3 + i4, i0, i1, i2, i3] }") and 0 in sched.parallel_dims
    assert not budget._STACK


def test_a_block_of_its_own_seconds_does_not_use_up_the_budget(monkeypatch):
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "60")
    with budget.bounded("outer"):
        with pytest.raises(TooComplexError, match="too complex for inner: more than its 0.1 s"):
            with budget.bounded("inner", seconds=0.1):
                budget.isolated(lambda: (__import__("time").sleep(5), "x")[1])
        assert not budget.exhausted()
        budget.tick()  # the outer block goes on


def test_auto_on_fifty_statements_stops_at_the_operation_budget(monkeypatch):
    monkeypatch.setenv("POLYLAB_MAX_OPERATIONS", "20000")
    body = "\n".join(f"  a[i] = a[i] + {k}.0;" for k in range(50))
    scop = polylab.parse(f"double a[N];\nfor (i = 0; i < N; i++) {{\n{body}\n}}\n").scop
    with pytest.raises(TooComplexError, match=r"too complex for .*: more than 20,000 isl operations"):
        parse_schedule(scop, "auto", steps=recipe_steps())
    # isl is usable again afterwards: the limit is lifted and the count reset when the block ends
    assert isl.DEFAULT_CONTEXT.get_max_operations() == 0
    assert not isl.Set("{ [i] : 0 <= i < 4 }").is_empty()


def test_dependence_analysis_of_a_thousand_statements_stops_soon_after_the_budget(monkeypatch):
    # a million statement pairs on one array: far more than 0.5 s of analysis. Reading the loop structure
    # asked isl for the statements under a tree node once per statement (2,001 walks over 1,000 statements,
    # about 8 s of CPU, all before the first check of the budget); it asks once per node now
    import time

    from polylab.analysis import loops

    walks = []
    real = loops._TreeReader.stmts_of
    monkeypatch.setattr(loops._TreeReader, "stmts_of", lambda self, node: walks.append(1) or real(self, node))
    n = 1000
    stmts = [statement(f"S{k}", f"[N] -> {{ S{k}[i] : 0 <= i < N }}", "a[i]", f"a[i] + {k}.0") for k in range(n)]
    sched = "[N] -> { " + "; ".join(f"S{k}[i] -> [i, {k}]" for k in range(n)) + " }"
    scop = make_scop("many", stmts, arrays=[("a", "double", ("N",))], schedule=sched)
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "0.5")
    cpu = time.process_time()
    with pytest.raises(TooComplexError, match="too complex for the dependence analysis: more than 0.5 s") as exc:
        compute_dependences(scop)
    cpu = time.process_time() - cpu
    assert "fewer statements" in exc.value.hint
    assert len(walks) < 10  # one walk per tree node (root, band, leaf), not one per statement and node
    assert cpu < 0.5 + 3  # CPU time (not wall clock: the machine may be busy); it was about 8 s


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

    scop = polylab.parse_file(polylab.example_path("polybench/adi.c"), defines={"MINI_DATASET": ""}).scop
    deps = isl_scheduler.dependences(scop)  # before the 0.5 s: on a busy machine they alone took that long
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "0.5")
    forked = _record_forks(monkeypatch)
    with pytest.raises(TooComplexError, match="more than 0.5 s"):
        with budget.bounded("isl's scheduler"):
            isl_scheduler.isl_schedule(scop, deps)
    assert forked


MODULO = """double a[N][N];
for (i = 0; i < N; i++)
  for (j = 0; j < N; j++)
    for (k = 0; k < N; k++)
      a[(i + 2 * j) % 5][(j + k) % 3] = a[(i + k) % 4][(2 * i + j) % 7] + 1.0;
"""


def test_printing_dependences_of_modulo_subscripts_is_bounded(monkeypatch):
    # issue 28, item 7: simplifying a distance set with local variables for display took isl minutes in one
    # call, outside any bound; it is given READABLE_SECONDS in a child, then shown unsimplified (exact)
    from polylab.model import islutil

    monkeypatch.setattr(islutil, "READABLE_SECONDS", 0.3)
    graph = compute_dependences(polylab.parse(MODULO).scop)
    text = str(graph)
    assert "flow (RAW)" in text and "distance" in text
    for d in graph.dependences:
        assert "exists" in d.distance_description or d.distances is not None or "[" in d.distance_description


def test_a_wavefront_after_optimize_stops_at_the_seconds_budget(monkeypatch):
    # issue 28, item 7: the Farkas step of a tiled schedule's distances (6 free dimensions, 3 of them local)
    # ran in this process for minutes, past POLYLAB_MAX_SECONDS
    scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    optimized = parse_schedule(scop, "optimize", steps=recipe_steps())
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "1")
    with pytest.raises(TooComplexError, match="too complex for the step wavefront: more than 1 s"):
        parse_schedule(scop, f"{optimized.text()}; wavefront", steps=recipe_steps())


def test_an_isolated_computation_dies_with_its_process(tmp_path):
    import subprocess
    import sys
    import time

    pidfile = tmp_path / "child.pid"
    script = ("import os, time\nfrom polylab.model import budget\n"
              f"budget.isolated(lambda: (open({str(pidfile)!r}, 'w').write(str(os.getpid())), time.sleep(60), 'x')[2])\n")
    proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    for _ in range(300):
        if pidfile.exists() and pidfile.read_text():
            break
        time.sleep(0.05)
    child = int(pidfile.read_text())
    proc.kill()
    proc.wait()
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the isolated computation outlived its process")


def _tiled_sweep2d():
    scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    return parse_schedule(scop, "optimize", steps=recipe_steps())


def test_the_api_called_outside_any_block_is_bounded_by_a_block_of_its_own(monkeypatch):
    # issue 28: a script calling the public API directly (no CLI, no magic, no recipe step around it) waited
    # for the Farkas child without end: only a bounded block gave it a deadline
    from polylab.schedule import wavefront

    optimized = _tiled_sweep2d()
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "1")
    forked = _record_forks(monkeypatch)
    assert not budget._STACK
    with pytest.raises(TooComplexError, match="too complex for the wavefront search: more than 1 s"):
        wavefront(optimized)
    with pytest.raises(TooComplexError, match="too complex for the Farkas step: more than 1 s"):
        core.farkas_coefficients(optimized.deltas)
    assert not budget._STACK and isl.DEFAULT_CONTEXT.get_max_operations() == 0
    assert forked
    for pid in forked:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # every child killed and reaped


def test_an_entry_point_inside_a_block_runs_under_the_outer_budget(monkeypatch):
    from polylab.schedule import wavefront

    optimized = _tiled_sweep2d()
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "1")
    with pytest.raises(TooComplexError, match="too complex for a notebook cell: more than 1 s"):
        with budget.bounded("a notebook cell"):
            wavefront(optimized)
    assert not budget._STACK


def test_the_public_entry_points_that_can_run_long_are_budgeted():
    import inspect

    from polylab import analysis, codegen, schedule, storage

    entries = [analysis.dataflow, analysis.parallelism, analysis.textbook_all, analysis.textbook_test,
               schedule.wavefront, schedule.find_wavefront, schedule.tile, schedule.tile_wavefront,
               schedule.isl_schedule, schedule.optimize_schedule, schedule.space_time, schedule.violations,
               schedule.smallest_example, core.farkas_coefficients, storage.contract, storage.remove_dead_writes,
               storage.fold_live_ins, storage.interleave, storage.optimize_program, storage.storage_pipeline,
               codegen.generate]
    for fn in entries:
        assert fn.__module__.startswith("polylab.") and hasattr(fn, "__wrapped__"), fn.__qualname__
        assert inspect.signature(fn) == inspect.signature(fn.__wrapped__)  # recipe steps bind their arguments


#: a nest of the differential campaign (seed 2818): the live-in reads of its dataflow are one
#: ``subtract_domain`` of 20 s (a union of 32 pieces with integer divisions), in one isl call
SLOW_DATAFLOW = """double A[6 * N + 6 * M + 24][6 * N + 6 * M + 24];
double B[6 * N + 6 * M + 24][6 * N + 6 * M + 24];
double C[6 * N + 6 * M + 24];
for (i = N - 1; i >= 1; i--) {
  for (j = i; j < M; j++) {
    for (k = 0; k <= N - j - 1; k += 2) {
      if (2 * j != M - 1) {
        A[2 * i + 2 * j + 2 * k][(i + 2 * k + 1) % 2] = C[i + 2 * j + 2 * k + 2] + A[2 * i + 2 * j + k + 2][2 * i + j + 2 * k] + 1.0;
      }
      A[i + 2 * k + 2][2 * k] = A[(2 * i + j + k + 1) / 2][(2 * i + 2 * j + k + 2) / 2] + 1.0;
    }
    for (k = 1; k <= M - 1; k++) {
      A[j][i + k] = B[2 * i + j + k + 2][(j + 2) / 2] + 0.5;
    }
  }
}
"""


def test_a_long_isl_call_of_the_dataflow_stops_at_the_seconds_budget(monkeypatch):
    # issue 28: fold_live_ins spent minutes in one isl_map_subtract (only isl's operation limit ended it,
    # past POLYLAB_MAX_SECONDS); it runs in a child now, which the budget kills
    from polylab.storage import fold_live_ins

    scop = polylab.parse(SLOW_DATAFLOW).scop
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "1")
    forked = _record_forks(monkeypatch)
    killed = []
    real_kill = os.kill
    monkeypatch.setattr(budget.os, "kill", lambda pid, sig: killed.append((pid, sig)) or real_kill(pid, sig))
    with pytest.raises(TooComplexError, match="too complex for the folding of live-in constants .*: more than 1 s"):
        fold_live_ins(scop)
    assert forked and (forked[-1], signal.SIGKILL) in killed  # stopped in the middle of the isl call
    assert not budget._STACK and isl.DEFAULT_CONTEXT.get_max_operations() == 0
    for pid in forked:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_an_isl_call_in_a_child_comes_back_exact_with_its_names():
    from polylab.model.islutil import in_child

    m = isl.Map("[N, K] -> { S0[i, j] -> A[floor((i + j) / 2), (i + 2 * j) mod 3] : 0 <= i < N and 0 <= j < K }")
    s = isl.Set("[N, K] -> { S0[i, j] : exists (e : i = 2e) and i + j < K; S0[i, j] : j mod 3 = 1 }")
    # a parameter named like an isl keyword travels through the child's text too
    m, s = m.set_dim_name(isl.dim_type.param, 1, "max"), s.set_dim_name(isl.dim_type.param, 1, "max")
    direct = m.subtract_domain(s)
    calls = []
    got = in_child(lambda: calls.append(os.getpid()) or m.subtract_domain(s), m, s)
    assert not calls  # computed in the child, not here
    assert got.is_equal(direct) and got.get_space() == direct.get_space()
    assert got.get_dim_name(isl.dim_type.in_, 1) == "j" and got.get_dim_name(isl.dim_type.param, 1) == "max"
    plain = isl.Set("[N] -> { [i] : 0 <= i < N }")
    assert in_child(lambda: calls.append(os.getpid()) or plain.coalesce(), plain) == plain and calls  # here


HUGE_SWEEP = """double a[N][N];
for (i = 0x7fffffff; i < N; i++)
  for (j = 0x7fffffff; j < N; j++)
    a[i][j] = a[i - 0x7fffffff][j] + a[i][j - 0x7fffffff];
"""


def test_auto_with_huge_constants_stops_at_the_seconds_budget(monkeypatch):
    # issue 28, item 7 (fuzz case 28/90396): one lexmin of the Pluto search on coefficients near 2**31 ran
    # for 47 minutes in one isl call, past every budget; such a lexmin now runs in a killable child
    import time

    from polylab.model.islutil import has_large_coefficients

    assert has_large_coefficients(isl.Set("{ [i] : 0 <= i <= 2147483647 }"))
    assert not has_large_coefficients(isl.Set("{ [i] : 0 <= i <= 1000 }"))
    monkeypatch.setenv("POLYLAB_MAX_SECONDS", "2")
    scop = polylab.parse(HUGE_SWEEP).scop
    start = time.monotonic()
    try:
        sched = parse_schedule(scop, "auto", steps=recipe_steps())
        assert sched.text()  # an answer (isl's scheduler after the search's allowance) is fine too
    except TooComplexError as err:
        assert "more than 2 s" in err.message
    assert time.monotonic() - start < 60
    assert not budget._STACK and isl.DEFAULT_CONTEXT.get_max_operations() == 0
