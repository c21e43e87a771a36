"""Folding of live-in reads (polylab.storage.fold_live_ins)."""

import numpy as np
import pytest

import polylab
from polylab.errors import ModelError
from polylab.model.expr import ArrayRef, Const, walk
from polylab.storage import fold_live_ins
from polylab.reference.cvalue import literal_value
from polylab.reference.builder import make_scop, sl3_scop, statement
from polylab.reference.interpret import same_live_out


def _consts(stmt):
    """The constants of the value, outside subscripts."""
    from polylab.model.expr import children

    out, todo = [], [stmt.body.value]
    while todo:
        e = todo.pop(0)
        if isinstance(e, Const):
            out.append(e)
        elif not isinstance(e, ArrayRef):
            todo.extend(children(e))
    return out


def _refs(stmt):
    return [r for r in walk(stmt.body.value) if isinstance(r, ArrayRef)]


@pytest.fixture(scope="module")
def sl3_parsed():
    return polylab.parse_file(polylab.example_path("sl3.sy")).scop


@pytest.mark.parametrize("which", ["hand", "parsed"])
def test_sl3_future_reads_fold_to_one(which, sl3_parsed):
    scop = sl3_scop() if which == "hand" else sl3_parsed
    new, rep = fold_live_ins(scop)
    sweep = new.statement("S1")
    consts = _consts(sweep)
    assert len(consts) == 3 and all(literal_value(c) == 1.0 for c in consts)
    assert all(c.ctype == "float" for c in consts)           # x is float: the literal keeps float arithmetic
    assert sorted(f.text for f in rep.folded) == ["x[i + 1][j][k]", "x[i][j + 1][k]", "x[i][j][k + 1]"]
    assert len(rep.kept) == 4
    # the remaining references are the past reads, renumbered consistently with the accesses
    refs = _refs(sweep)
    assert [r.array for r in refs] == ["x"] * 4
    for r in refs + [sweep.body.target]:
        acc = sweep.accesses[r.access]
        assert acc.index == r.access and acc.array == "x"
    assert [a.text for a in sweep.reads] == ["x[i - 1][j][k]", "x[i][j - 1][k]", "x[i][j][k - 1]",
                                            "x[i - 1][j - 1][k - 1]"]
    # nothing reassociated: the sum keeps its order, the constants sit where the reads were
    code = sweep.code()
    assert "x[i - 1][j][k] + 1.0f + x[i][j - 1][k] + 1.0f + x[i][j][k - 1] + 1.0f" in code


def test_sl3_kept_reads_explain_the_sweep_source():
    _, rep = fold_live_ins(sl3_scop())
    kept = {k.text: k for k in rep.kept}
    k = kept["x[i - 1][j][k]"]
    assert "i >= 2" in k.reason and "S1" in k.reason and "constant" in k.reason
    assert "S1[1, 1, 1] -> S1[2, 1, 1]" in k.example
    assert "folded" in str(rep) and "<table>" in rep._repr_html_()


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_sl3_folding_is_bit_identical(n, sl3_parsed):
    new, _ = fold_live_ins(sl3_parsed)
    assert same_live_out(sl3_parsed, new, {"n": n}) == []


def _one_d(init_value="2.5", *, second=None):
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "a[i]", init_value)
    stmts = [s0]
    if second is not None:
        stmts.append(statement("S2", "[N] -> { S2[i] : 0 <= i < N and i >= N - 2 }", "a[i]", second))
    s1 = statement("S1", "[N] -> { S1[i] : 0 <= i < N - 1 }", "b[i]", "a[i + 1] * 3.0 + c[i]")
    sched = "[N] -> { S0[i] -> [0, i]; S1[i] -> [2, i]" + ("; S2[i] -> [1, i] }" if second else " }")
    return make_scop("t", stmts + [s1], arrays=[("a", "float", ("N",)), ("b", "float", ("N",)),
                                               ("c", "float", ("N",))], schedule=sched,
                     context="[N] -> { : N >= 0 }")


def test_constant_expression_is_evaluated_in_the_element_type():
    new, rep = fold_live_ins(_one_d("1.0 / 3.0"))
    (c,) = _consts(new.statement("S1"))[:1]
    assert np.float32(literal_value(c)) == np.float32(1.0 / 3.0)
    assert c.text.endswith("f")
    assert [f.text for f in rep.folded] == ["a[i + 1]"]
    assert [k.text for k in rep.kept] == ["c[i]"]
    for n in range(0, 5):
        assert same_live_out(_one_d("1.0 / 3.0"), new, {"N": n}) == []


def test_different_constants_are_refused():
    _, rep = fold_live_ins(_one_d("1.0", second="2.0"))
    (k,) = [k for k in rep.kept if k.text == "a[i + 1]"]
    assert "different constants" in k.reason


def test_live_in_reads_need_a_declared_initial_value():
    scop = _one_d()
    _, rep = fold_live_ins(scop)
    (k,) = [k for k in rep.kept if k.text == "c[i]"]
    assert "live-in" in k.reason and "initial value of c" in k.reason
    new, rep2 = fold_live_ins(scop, initial_values={"c": "0.5"})
    assert sorted(f.text for f in rep2.folded) == ["a[i + 1]", "c[i]"]
    assert new.statement("S1").reads == ()
    with pytest.raises(ModelError):
        fold_live_ins(scop, initial_values={"c": "q + 1"})


def test_compound_assignment_read_folds_into_the_value():
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "a[i]", "4")
    s1 = statement("S1", "[N] -> { S1[i] : 0 <= i < N }", "a[i]", "b[i]", op="+=")
    scop = make_scop("t", [s0, s1], arrays=[("a", "int", ("N",)), ("b", "int", ("N",))],
                     schedule="[N] -> { S0[i] -> [0, i]; S1[i] -> [1, i] }")
    new, rep = fold_live_ins(scop)
    st = new.statement("S1")
    assert st.body.op == "=" and st.code() == "a[i] = 4 + b[i];"
    assert [a.kind for a in st.accesses] == ["write", "read"]
    for n in range(0, 4):
        assert same_live_out(scop, new, {"N": n}) == []
