"""Index-set splitting (polylab.storage.split_index_sets): a loop cut where the only dependences it carries
start or end.

Two brute-force oracles: the reference interpreter runs the split program bit for bit against the
original, and it runs it again with every cut loop *reversed* in its pieces: a loop that carries no
dependence may run in any order, so the output must not change (and on the unsplit statement, reversed,
it does change: the oracle can fail). Random statements (hypothesis) split or are left alone; whatever is
split passes both."""

import islpy as isl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import polylab
from polylab.reference.interpret import default_initial, same_live_out
from polylab.schedule import original, parse_schedule
from polylab.schedule.optimize import loop_dims
from polylab.schedule.optimize.loops import iterator_of
from polylab.storage import recipe_steps, split_index_sets

FLOYD = """int path[N][N];
for (k = 0; k < N; k++)
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
"""


def scop_of(text):
    return polylab.parse(text).scop


def reversed_loop(s, names, iterator):
    """The union map of schedule ``s`` with the loop on ``iterator`` of each statement in ``names`` run
    backwards (its time dimension negated; nothing where that loop runs once, a constant)."""
    out = isl.UnionMap.empty(s.scop.context.get_space())
    for stmt in s.scop.statements:
        m = s.maps[stmt.name].intersect_domain(stmt.domain)
        k = stmt.iterators.index(iterator)
        dims = [d for d in loop_dims(s, stmt.name) if iterator_of(s.affs[stmt.name][d], stmt) == k]
        dims = dims if stmt.name in names else []
        if dims:
            n = s.n_dims
            ts = ", ".join(f"t{e}" for e in range(n))
            flip = ", ".join(f"-t{e}" if e == dims[0] else f"t{e}" for e in range(n))
            m = m.apply_range(isl.Map(f"{{ [{ts}] -> [{flip}] }}").align_params(m.get_space()))
        out = out.union(isl.UnionMap.from_map(m))
    return out


def pieces_run_in_any_order(scop, s, rep, params, initial=default_initial):
    """For each cut, the loop it cut run backwards in every piece (and in the pieces that later cuts made
    of them) computes what the original does: the cut loops carry no dependence."""
    for x in rep.splits:
        names = [st.name for st in s.scop.statements if any(st.name.startswith(p) for p, _ in x.pieces)]
        if same_live_out(scop, s.scop, params, schedule=reversed_loop(s, names, x.iterator), initial=initial):
            return False
    return True


def signed(array, index, ctype):
    """Initial values with negative ones on the diagonal (so Floyd-Warshall's minimum changes a path
    through k when its loops run in another order)."""
    return (index[0] * 7 + index[1] * 3) % 11 - 5


def test_floyd_warshall_splits_its_rows_and_columns_at_k_into_parallel_loops():
    scop = scop_of(FLOYD)
    s, rep = split_index_sets(original(scop))
    assert [(x.statement, x.iterator, x.at) for x in rep.splits] == [
        ("S0", "i", "k"), ("S0a", "j", "k"), ("S0b", "j", "k"), ("S0c", "j", "k")]
    assert rep.splits[0].pieces == (("S0a", "i < k"), ("S0b", "i = k"), ("S0c", "i > k"))
    assert rep.splits[1].pieces == (("S0aa", "j < k"), ("S0ab", "j = k"), ("S0ac", "j > k"))
    assert [st.name for st in s.scop.statements] == [a + b for a in ("S0a", "S0b", "S0c") for b in "abc"]
    assert all(st.text == scop.statements[0].text for st in s.scop.statements)
    # every dimension inside k is parallel now; in the original neither i nor j is
    loops = {d for st in s.scop.statements for d in loop_dims(s, st.name)} - {0}
    assert loops and all(s.is_coincident(d) for d in loops)
    o = original(scop)
    assert not o.is_coincident(1) and not o.is_coincident(2)
    for n in (1, 2, 4, 7):
        assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map, initial=signed) == [], n
        assert same_live_out(scop, s.scop, {"N": n}, initial=signed) == [], n  # the new SCoP's own order
        assert pieces_run_in_any_order(scop, s, rep, {"N": n}, initial=signed), n
    # the oracle can fail: the unsplit i or j loop run backwards computes something else
    for it in "ij":
        assert same_live_out(scop, scop, {"N": 5}, schedule=reversed_loop(o, ["S0"], it), initial=signed) != []
    assert "split into S0aa (j < k), S0ab (j = k), S0ac (j > k)" in str(rep)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_optimizer_splits_floyd_warshall_and_its_code_computes_what_the_original_does(threads):
    from polylab.experiment import verify

    scop = scop_of(FLOYD)
    s = parse_schedule(scop, f"optimize({threads})", steps=recipe_steps())
    assert any(line.startswith("split: S0: its i loop") for line in s.notes), s.notes
    assert {c.statement for c in s.provenance.optimize.choices if c.vector} >= {"S0aa", "S0ac", "S0ca", "S0cc"}
    # the rows before and after row k: parallel, and OpenMP loops where there are threads to share them
    assert s.parallel_dims and bool(s.marked) == (threads > 1)
    for n in (6, 13):  # (at N = 1 and 2 no path gets shorter: the check would be vacuous, and says so)
        v = verify(scop, s, "openmp", params={"N": n})
        assert v.verified, (n, v.reason)


def test_the_recipe_step_splits_and_leaves_other_programs_as_they_are():
    scop = scop_of(FLOYD)
    s = parse_schedule(scop, "split; parallel", steps=recipe_steps())
    assert s.steps[0] == "split" and any(name == "split" for name, _ in s.provenance.storage)
    assert len(s.scop.statements) == 9 and s.marked
    for n in (3, 6):
        assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map, initial=signed) == [], n
    chain = scop_of("double a[N][N];\nfor (i = 0; i < N; i++)\n  for (j = 1; j < N; j++)\n"
                    "    a[i][j] = a[i][j - 1] + a[i][j];\n")
    s2 = parse_schedule(chain, "split", steps=recipe_steps())
    assert [st.name for st in s2.scop.statements] == ["S0"]
    rep = dict(s2.provenance.storage)["split"]
    assert rep.left and "neither end" in rep.left[0][1]


LEFT = {
    # a chain: j depends on j - 1 everywhere
    "chain": ("double a[N][N];\nfor (i = 0; i < N; i++)\n  for (j = 1; j < N; j++)\n"
              "    a[i][j] = a[i][j - 1] * 0.5 + a[i][j];\n", "neither end"),
    # two hyperplanes (j = k and j = i): no one of them holds every carried pair
    "two planes": ("double a[N][N];\nfor (k = 0; k < N; k++)\n  for (i = 0; i < N; i++)\n"
                   "    for (j = 0; j < N; j++)\n      a[i][j] = a[i][j] + a[i][k] * a[i][i];\n", "neither end"),
    # another statement shares the innermost loop
    "shared loop": ("double a[N][N]; double b[N][N];\nfor (k = 0; k < N; k++)\n  for (i = 0; i < N; i++)\n"
                    "    for (j = 0; j < N; j++) {\n      a[i][j] = a[i][j] + a[i][k];\n"
                    "      b[i][j] = a[i][j];\n    }\n", "same iteration"),
}


@pytest.mark.parametrize("name", sorted(LEFT))
def test_a_loop_that_one_cut_cannot_free_is_left_with_the_reason(name):
    text, why = LEFT[name]
    scop = scop_of(text)
    s, rep = split_index_sets(original(scop))
    assert not rep.splits and s.scop is scop
    assert any(why in reason for _, reason in rep.left), str(rep)


SUBSCRIPTS = ["k", "i", "0", "N - 1", "N - 1 - k"]
ROWS = ["k", "i", "N - 1 - i"]
OPS = ["+", "*", "-"]
INNER = ["", " + a[i][j] * 0.25", " + a[i][{r}] * 0.5", " + a[i][j - 1] * 0.5"]


@st.composite
def updates(draw):
    """``a[i][j] = a[i][j] OP a[i][c] * a[r][j] (+ extra)`` in a k, i, j nest whose j loop runs up or
    down (from 1 or from 0): the read ``a[i][c]`` stays put as j moves and meets the write at ``j = c``;
    the extra read may add a second meeting point or a chain."""
    c, r = draw(st.sampled_from(SUBSCRIPTS)), draw(st.sampled_from(ROWS))
    extra = draw(st.sampled_from(INNER)).format(r=draw(st.sampled_from(SUBSCRIPTS)))
    op = draw(st.sampled_from(OPS))
    start = draw(st.sampled_from(["0", "1"]))
    loop = (f"for (j = {start}; j < N; j++)" if draw(st.booleans())
            else f"for (j = N - 1; j >= {start}; j--)")
    return (f"double a[N][N];\nfor (k = 0; k < N; k++)\n  for (i = 0; i < N; i++)\n    {loop}\n"
            f"      a[i][j] = a[i][j] {op} a[i][{c}] * a[{r}][j]{extra};\n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(updates(), st.integers(1, 6))
def test_whatever_it_splits_computes_what_the_original_does_and_its_pieces_run_in_any_order(text, n):
    scop = scop_of(text)
    s, rep = split_index_sets(original(scop))
    assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map) == [], (text, str(rep))
    if rep.splits:
        assert pieces_run_in_any_order(scop, s, rep, {"N": n}), (text, str(rep))


def test_the_family_splits_some_and_leaves_some():
    """The random family is not vacuous: over a grid of it, some innermost loops are cut (pieces checked)
    and some are left (a chain or two meeting points); the rows, which read row k, are cut in all."""
    split = left = 0
    for c in SUBSCRIPTS:
        for extra in INNER:
            text = updates_text(c, "k", extra.format(r="i"))
            scop = scop_of(text)
            s, rep = split_index_sets(original(scop))
            assert rep.splits and rep.splits[0].iterator == "i", text
            cut = any(x.iterator == "j" for x in rep.splits)
            split += cut
            left += not cut
            if rep.splits:
                for n in (2, 5):
                    assert pieces_run_in_any_order(scop, s, rep, {"N": n}), text
    assert split >= 5 and left >= 5, (split, left)


def updates_text(c, r, extra):
    return (f"double a[N][N];\nfor (k = 0; k < N; k++)\n  for (i = 0; i < N; i++)\n    for (j = 0; j < N; j++)\n"
            f"      a[i][j] = a[i][j] + a[i][{c}] * a[{r}][j]{extra};\n")


def test_a_wrong_use_of_the_recipe_step_gets_line_column_and_hint():
    from polylab.errors import ScheduleError

    with pytest.raises(ScheduleError) as err:
        parse_schedule(scop_of(FLOYD), "split(S0)", steps=recipe_steps())
    text = str(err.value)
    assert text.startswith("1:1:") and "wrong arguments for split" in text and err.value.hint
    assert "index-set splitting" in err.value.hint
