"""The corpus: every kernel is modelled exactly (domains against hand-written isl sets, access functions,
schedules); every file of reject/ is refused with the right line and reason."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest
import sympy

import polylab
from polylab.errors import NotAffineError, SourceSyntaxError
from polylab.frontend import parse, parse_file

# kernel -> [(iterators, domain as isl text)] in statement order
DOMAINS = {
    "shift.c": [("i j", "[N, M] -> { S0[i, j] : 1 <= i < N and 0 <= j < M }")],
    "sweep2d.c": [("i j", "[N] -> { S0[i, j] : 1 <= i < N and 1 <= j < N }")],
    "gemm.c": [("i j", "[NI, NJ, NK] -> { S0[i, j] : 0 <= i < NI and 0 <= j < NJ }"),
               ("i k j", "[NI, NJ, NK] -> { S1[i, k, j] : 0 <= i < NI and 0 <= k < NK and 0 <= j < NJ }")],
    "mvt.c": [("i j", "[N] -> { S0[i, j] : 0 <= i < N and 0 <= j < N }"),
              ("i j", "[N] -> { S1[i, j] : 0 <= i < N and 0 <= j < N }")],
    "lu.c": [("i j k", "[N] -> { S0[i, j, k] : 0 <= i < N and 0 <= j < i and 0 <= k < j }"),
             ("i j", "[N] -> { S1[i, j] : 0 <= i < N and 0 <= j < i }"),
             ("i j k", "[N] -> { S2[i, j, k] : 0 <= i < N and i <= j < N and 0 <= k < i }")],
    "jacobi2d.c": [("t i j", "[T, N] -> { S0[t, i, j] : 0 <= t < T and 1 <= i < N - 1 and 1 <= j < N - 1 }"),
                   ("t i j", "[T, N] -> { S1[t, i, j] : 0 <= t < T and 1 <= i < N - 1 and 1 <= j < N - 1 }")],
    "seidel2d.c": [("t i j", "[T, N] -> { S0[t, i, j] : 0 <= t <= T - 1 and 1 <= i <= N - 2 "
                             "and 1 <= j <= N - 2 }")],
    "heat3d.c": [("t i j k", "[T, N] -> { S0[t, i, j, k] : 1 <= t <= T and 1 <= i < N - 1 and 1 <= j < N - 1 "
                             "and 1 <= k < N - 1 }"),
                 ("t i j k", "[T, N] -> { S1[t, i, j, k] : 1 <= t <= T and 1 <= i < N - 1 and 1 <= j < N - 1 "
                             "and 1 <= k < N - 1 }")],
    "fdtd2d.c": [("t j", "[T, NX, NY] -> { S0[t, j] : 0 <= t < T and 0 <= j < NY }"),
                 ("t i j", "[T, NX, NY] -> { S1[t, i, j] : 0 <= t < T and 1 <= i < NX and 0 <= j < NY }"),
                 ("t i j", "[T, NX, NY] -> { S2[t, i, j] : 0 <= t < T and 0 <= i < NX and 1 <= j < NY }"),
                 ("t i j", "[T, NX, NY] -> { S3[t, i, j] : 0 <= t < T and 0 <= i < NX - 1 "
                           "and 0 <= j < NY - 1 }")],
}

SCHEDULES = {
    "lu.c": "[N] -> { S0[i, j, k] -> [i, 0, j, 0, k]; S1[i, j] -> [i, 0, j, 1, 0]; S2[i, j, k] -> [i, 1, j, k, 0] }",
    "gemm.c": "[NI, NJ, NK] -> { S0[i, j] -> [i, 0, j, 0]; S1[i, k, j] -> [i, 1, k, j] }",
    "mvt.c": "[N] -> { S0[i, j] -> [0, i, j]; S1[i, j] -> [1, i, j] }",
}


def _load(name: str):
    return parse_file(polylab.example_path(name))


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_kernel_domains(name):
    scop = _load(name).scop
    expected = DOMAINS[name]
    assert [s.name for s in scop.statements] == [f"S{k}" for k in range(len(expected))]
    for st, (iters, dom) in zip(scop.statements, expected):
        assert st.iterators == tuple(iters.split())
        want = isl.Set(dom)
        got = st.domain
        assert got.get_tuple_name() == st.name
        # compare on the same parameter space (isl aligns names)
        assert got.is_equal(want.align_params(got.get_space())), (st.name, str(got), dom)
    assert scop.live_out is None  # a C fragment: every array is live after it
    assert scop.language == "c"


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_kernel_schedules(name):
    scop = _load(name).scop
    want = isl.UnionMap(SCHEDULES[name]).intersect_domain(scop.domain)
    assert scop.schedule_map.is_equal(want)


def test_shift_access_function():
    st = _load("shift.c").scop.statements[0]
    read, write = st.accesses
    assert (read.kind, write.kind) == ("read", "write")
    for a in (read, write):
        assert a.array == "Z" and a.text == "Z[i - 1]"
        assert a.matrix == sympy.Matrix([[1, 0]])
        assert a.offset == sympy.Matrix([-1])
        assert a.location.line == 7
    assert write.location.column == 5 and read.location.column == 16
    assert read.relation.is_equal(isl.Map("[N, M] -> { S0[i, j] -> Z[i - 1] : 1 <= i < N and 0 <= j < M }"))


def test_gemm_accesses_scalars_arrays():
    scop = _load("gemm.c").scop
    assert scop.parameters == ("NI", "NJ", "NK")
    assert [(s.name, s.ctype) for s in scop.scalars] == [("beta", "double"), ("alpha", "double")]
    assert {a.name: a.extents for a in scop.arrays} == {"C": ("NI", "NJ"), "A": ("NI", "NK"),
                                                         "B": ("NK", "NJ")}
    assert all(a.declared for a in scop.arrays)
    s1 = scop.statements[1]
    # compound assignment: the target read first, then the right-hand side, then the write
    assert [(a.kind, a.text) for a in s1.accesses] == [
        ("read", "C[i][j]"), ("read", "A[i][k]"), ("read", "B[k][j]"), ("write", "C[i][j]")]
    assert s1.body.op == "+="
    assert s1.accesses[2].matrix == sympy.Matrix([[0, 1, 0], [0, 0, 1]])
    assert s1.code() == "C[i][j] += alpha * A[i][k] * B[k][j];"
    assert s1.text == "C[i][j] += alpha * A[i][k] * B[k][j];"
    assert s1.line == 13


def test_mvt_transpose_access():
    s1 = _load("mvt.c").scop.statements[1]
    a = [x for x in s1.accesses if x.array == "A"][0]
    assert a.matrix == sympy.Matrix([[0, 1], [1, 0]]) and list(a.offset) == [0, 0]


def test_body_refs_match_accesses():
    for name in DOMAINS:
        for st in _load(name).scop.statements:
            from polylab.model.expr import ArrayRef, walk

            refs = [r for e in (st.body.value, st.body.target) for r in walk(e) if isinstance(r, ArrayRef)]
            for r in refs:
                acc = st.accesses[r.access]
                assert acc.array == r.array
                assert len(r.indices) == acc.relation.dim(isl.dim_type.out)
            assert st.accesses[st.body.target.access].kind == "write"
            assert st.accesses[-1].kind == "write"


def test_source_is_exact_region_text():
    scop = _load("sweep2d.c").scop
    lines = polylab.example_path("sweep2d.c").read_text().splitlines()
    assert scop.source == "\n".join(lines[4:7])
    assert scop.location.line == 5
    heat = _load("heat3d.c").scop
    assert heat.statements[0].text.startswith("B[i][j][k] = 0.125 * (A[i + 1][j][k]")
    assert heat.statements[0].text.endswith("+ A[i][j][k];")
    assert len(heat.statements[0].accesses) == 11


def test_sl3_one_scop_with_init_and_sweep():
    prog = _load("sl3.sy")
    assert prog.language == "sysy"
    assert len(prog.scops) == 1
    scop = prog.scop
    assert scop.parameters == ("n",)
    s0, s1 = scop.statements
    assert s0.line == 18 and s1.line == 32
    assert s0.iterators == s1.iterators == ("i", "j", "k")
    assert s0.domain.is_equal(isl.Set("[n] -> { S0[i, j, k] : 0 <= i < n and 0 <= j < n and 0 <= k < n }"))
    assert s1.domain.is_equal(isl.Set("[n] -> { S1[i, j, k] : 1 <= i < n - 1 and 1 <= j < n - 1 "
                                      "and 1 <= k < n - 1 }"))
    assert [a.kind for a in s1.accesses] == ["read"] * 7 + ["write"]
    assert s0.body.value.text == "1.0"
    assert [(a.name, a.ctype, a.extents) for a in scop.arrays] == [("x", "float", ("400", "400", "400"))]
    assert [(s.name, s.ctype, s.value) for s in scop.scalars] == [("f", "float", "7.01")]
    assert dict(scop.constants) == {"MAXN": 400}
    # the init nest runs before the sweep
    want = isl.UnionMap("[n] -> { S0[i, j, k] -> [0, i, j, k]; S1[i, j, k] -> [1, i, j, k] }")
    assert scop.schedule_map.is_equal(want.intersect_domain(scop.domain))
    # the timing markers do not split the region; the region text spans both nests
    assert "starttime();" in scop.source and scop.source.startswith("int i = 0;")
    assert any("starttime" in note for note in scop.notes)
    # live-out: exactly the element putfloat prints, x[n/2][n/2][n/2] with C division
    trunc = ("[n] -> { x[a, b, c] : (n >= 0 and 2a <= n <= 2a + 1 and 2b <= n <= 2b + 1 and 2c <= n <= 2c + 1)"
             " or (n < 0 and n <= 2a <= n + 1 and n <= 2b <= n + 1 and n <= 2c <= n + 1) }")
    assert scop.live_out.is_equal(isl.UnionSet(trunc))
    assert [r.location.line for r in prog.rejected] == [10, 43, 44, 45]
    assert "getint" in prog.rejected[0].reason and "putfloat" in prog.rejected[1].reason


REJECTS = {
    "call.c": (NotAffineError, 4, 10, "side effects"),
    "datawhile.c": (NotAffineError, 4, 8, "data-dependent"),
    "indirect.c": (NotAffineError, 5, 5, "data-dependent"),
    "nonlinear.c": (NotAffineError, 5, 7, "not affine"),
    "syntax.c": (SourceSyntaxError, 4, 21, "not valid C"),
}


@pytest.mark.parametrize("name", sorted(REJECTS))
def test_reject_corpus(name):
    kind, line, column, reason = REJECTS[name]
    with pytest.raises(kind) as info:
        _load(f"reject/{name}")
    err = info.value
    assert (err.location.line, err.location.column) == (line, column)
    assert reason in err.message
    assert err.location.source_line == polylab.example_path(f"reject/{name}").read_text().splitlines()[line - 1]
    picture = err.render(name)
    assert f"{name}:{line}:{column}:" in picture and "^" in picture
    assert err.to_json()["line"] == line


def test_reject_texts():
    texts = {n: _err_text(n) for n in REJECTS}
    assert texts["call.c"] == "compute(a[i])"
    assert texts["indirect.c"] == "b[i]"
    assert texts["nonlinear.c"] == "i * j"
    assert texts["datawhile.c"] == "a[i]"


def _err_text(name):
    try:
        _load(f"reject/{name}")
    except polylab.PolylabError as e:
        return e.location.text
    raise AssertionError("accepted")


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "kernels"


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/kernels is not present")
def test_shared_corpus_matches_package_copies():
    for path in sorted(SHARED.glob("*.c")) + sorted(SHARED.glob("*.sy")):
        prog = parse_file(path)
        ours = parse_file(polylab.example_path(path.name))
        assert [str(s.domain) for s in prog.scop.statements] == [str(s.domain) for s in ours.scop.statements]
    for path in sorted((SHARED / "reject").glob("*.c")):
        with pytest.raises(polylab.PolylabError):
            parse_file(path)


def test_parse_text_same_as_file():
    text = polylab.example_path("lu.c").read_text()
    a, b = parse(text), _load("lu.c")
    assert [str(s.domain) for s in a.scop.statements] == [str(s.domain) for s in b.scop.statements]
    assert b.filename.endswith("lu.c") and a.filename is None
