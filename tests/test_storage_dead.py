"""Dead-write removal (polylab.storage.remove_dead_writes)."""

import islpy as isl
import pytest

from polylab.storage import fold_live_ins, remove_dead_writes
from polylab.reference.builder import make_scop, sl3_scop, statement
from polylab.reference.interpret import execute, same_live_out


@pytest.fixture(scope="module")
def folded():
    return fold_live_ins(sl3_scop())[0]


def test_sl3_init_shrinks_to_the_faces_the_sweep_reads(folded):
    new, rep = remove_dead_writes(folded)
    s0 = new.statement("S0").domain
    # the faces i = 0, j = 0, k = 0 (inside the sweep's reach) are kept ...
    for p in ["S0[0, 1, 1]", "S0[2, 0, 1]", "S0[2, 3, 0]"]:
        assert isl.Set(f"[n] -> {{ {p} : n = 6 }}").is_subset(s0)
    # ... the interior and the far faces are gone
    for p in ["S0[2, 2, 2]", "S0[5, 2, 2]", "S0[2, 5, 2]", "S0[1, 1, 5]"]:
        assert not isl.Set(f"[n] -> {{ {p} : n = 6 }}").is_subset(s0)
    assert "S0" in str(rep) and "<table>" in rep._repr_html_()
    for n in range(1, 7):
        assert same_live_out(folded, new, {"n": n}) == []


def test_sl3_without_folding_the_future_planes_stay():
    scop = sl3_scop()
    new, rep = remove_dead_writes(scop, statements=["S0"])
    s0 = new.statement("S0").domain
    # x[2][2][2] is read by S1[1, 2, 2] (as x[i + 1]) before the sweep overwrites it; the far face too
    for p in ["S0[2, 2, 2]", "S0[5, 2, 2]"]:
        assert isl.Set(f"[n] -> {{ {p} : n = 6 }}").is_subset(s0)
    # x[1][1][1] is overwritten by S1[1, 1, 1] before anyone reads it
    assert not isl.Set("[n] -> { S0[1, 1, 1] : n = 6 }").is_subset(s0)
    for n in range(1, 6):
        assert same_live_out(scop, new, {"n": n}) == []


def test_only_restricts_the_named_statements(folded):
    new, _ = remove_dead_writes(folded, statements=["S0"])
    assert new.statement("S1").domain.is_equal(folded.statement("S1").domain)
    new_all, _ = remove_dead_writes(folded)
    # the last sweep corner is read by nobody and not printed (n = 7: x[5][5][5] vs x[3][3][3])
    assert not isl.Set("[n] -> { S1[5, 5, 5] : n = 7 }").is_subset(new_all.statement("S1").domain)


def test_statement_with_no_used_instance_is_dropped():
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "a[i]", "1.0")
    s1 = statement("S1", "[N] -> { S1[i] : 0 <= i < N }", "a[i]", "2.0")
    s2 = statement("S2", "[N] -> { S2[i] : 0 <= i < N }", "b[i]", "a[i] * 2.0")
    scop = make_scop("t", [s0, s1, s2], arrays=[("a", "double", ("N",)), ("b", "double", ("N",))],
                     schedule="[N] -> { S0[i] -> [0, i]; S1[i] -> [1, i]; S2[i] -> [2, i] }",
                     live_out="[N] -> { b[i] : 0 <= i < N }")
    new, rep = remove_dead_writes(scop)
    assert [s.name for s in new.statements] == ["S1", "S2"]
    assert "removed" in str(rep)
    for n in range(0, 4):
        assert same_live_out(scop, new, {"N": n}) == []
    # with every array live-out, S0 is still dead (S1 overwrites it) but S1 stays
    new2, _ = remove_dead_writes(scop, live_out="[N] -> { a[i] : 0 <= i < N; b[i] : 0 <= i < N }")
    assert [s.name for s in new2.statements] == ["S1", "S2"]


def test_transitive_rounds_slice_the_program():
    s0 = statement("S0", "[N] -> { S0[i] : 0 <= i < N }", "a[i]", "1.0")
    s1 = statement("S1", "[N] -> { S1[i] : 0 <= i < N }", "b[i]", "a[i] + 1.0")
    s2 = statement("S2", "[N] -> { S2[i] : 0 <= i < N }", "c[i]", "b[i] * 2.0")
    scop = make_scop("t", [s0, s1, s2], arrays=[("a", "double", ("N",)), ("b", "double", ("N",)),
                                               ("c", "double", ("N",))],
                     schedule="[N] -> { S0[i] -> [0, i]; S1[i] -> [1, i]; S2[i] -> [2, i] }",
                     live_out="[N] -> { c[0] : N > 0 }")
    one, _ = remove_dead_writes(scop)
    assert len(one.statements) == 3
    three, rep = remove_dead_writes(scop, rounds=3)
    for s in three.statements:
        assert s.domain.is_equal(isl.Set(f"[N] -> {{ {s.name}[0] : N > 0 }}"))
    mem = execute(three, {"N": 5})
    assert mem.get("c", (0,)) == execute(scop, {"N": 5}).get("c", (0,))


def test_the_only_writer_of_an_array_that_never_runs_stays_without_instances(tmp_path):
    # issue 28, item 5: S0 never runs; removing it made A vanish from the variant's outputs, and `run`
    # reported "array A is missing from the candidate's output" although neither program writes A
    from polylab.cli import main
    from polylab.experiment import verify
    from polylab.experiment.schedules import schedule_from_spec
    import polylab

    source = ("double A[N];\ndouble B[N];\nfor (i = 0; i < N; i++)\n  if (i > N)\n    A[i] = 1.0;\n"
              "for (i = 0; i < N; i++)\n  B[i] = B[i] + 1.0;\n")
    scop = polylab.parse(source).scop
    new, rep = remove_dead_writes(scop)
    assert [s.name for s in new.statements] == ["S0", "S1"] and new.statement("S0").domain.is_empty()
    assert "removed" in str(rep)
    v = verify(scop, schedule_from_spec(scop, "remove_dead_writes"), "c", params={"N": 8})
    assert v.verified is True and v.census.arrays == ("A", "B"), str(v)
    path = tmp_path / "dead.c"
    path.write_text(source)
    assert main(["run", str(path), "--schedule", "remove_dead_writes", "--param", "N=8", "--repeat", "1"]) == 0
