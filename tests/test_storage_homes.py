"""Scalar homes (polylab.storage.home_scalars): each live range of a scalar kept in the element it ends in.

Every rewrite is checked against the reference interpreter (bit for bit, every live-out element), on the
ludcmp shape, on the cases it must refuse (each would compute something else), and on random programs
(hypothesis): whatever it homes computes what the original does."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import polylab
from polylab.reference.interpret import same_live_out
from polylab.schedule import parse_schedule
from polylab.storage import home_scalars, recipe_steps

LUDCMP = """double A[N][N]; double b[N]; double x[N]; double y[N]; double w;
for (i = 0; i < N; i++) {
  for (j = 0; j < i; j++) {
    w = A[i][j];
    for (k = 0; k < j; k++)
      w -= A[i][k] * A[k][j];
    A[i][j] = w / A[j][j];
  }
  for (j = i; j < N; j++) {
    w = A[i][j];
    for (k = 0; k < i; k++)
      w -= A[i][k] * A[k][j];
    A[i][j] = w;
  }
}
for (i = 0; i < N; i++) {
  w = b[i];
  for (j = 0; j < i; j++)
    w -= A[i][j] * y[j];
  y[i] = w;
}
for (i = N - 1; i >= 0; i--) {
  w = y[i];
  for (j = i + 1; j < N; j++)
    w -= A[i][j] * x[j];
  x[i] = w / A[i][i];
}
"""


def scop_of(text):
    return polylab.parse(text).scop


def test_ludcmp_keeps_its_accumulations_in_the_elements_they_end_in():
    scop = scop_of(LUDCMP)
    new, rep = home_scalars(scop)
    homed = {w.statements: w.home for w in rep.homed}
    assert homed == {("S0", "S1", "S2"): "A[i][j]", ("S3", "S4", "S5"): "A[i][j]", ("S6", "S7", "S8"): "y[i]"}
    # the last web holds the value w keeps after the region: left as it is
    last = [w for w in rep.webs if not w.homed]
    assert [w.statements for w in last] == [("S9", "S10", "S11")] and "last value" in last[0].reason
    # the copies that store what is there already are gone; lu's statements remain
    assert rep.removed == ("S0", "S3", "S5", "S8")
    texts = {s.name: s.text for s in new.statements}
    assert texts["S1"] == "A[i][j] -= A[i][k] * A[k][j];" and texts["S2"] == "A[i][j] = A[i][j] / A[j][j];"
    assert texts["S6"] == "y[i] = b[i];" and texts["S10"] == "w -= A[i][j] * x[j];"
    for n in (1, 2, 5, 8):
        assert same_live_out(scop, new, {"N": n}) == [], n
    assert "kept in A[i][j]" in str(rep)


def test_the_optimizer_homes_them_and_its_code_computes_what_the_original_does():
    from polylab.experiment import verify

    scop = scop_of(LUDCMP)
    s = parse_schedule(scop, "optimize(1)", steps=recipe_steps())
    assert any(line.startswith("home_scalars: w in S0, S1, S2: kept in A[i][j]") for line in s.notes), s.notes
    # the upper part's update is no longer serialized by w: it gets a vector loop
    assert {c.statement for c in s.provenance.optimize.choices if c.vector} >= {"S4"}
    v = verify(scop, s, "openmp", params={"N": 13})
    assert v.verified, v.reason


REFUSED = {
    # the home A[i][0] is read by the live range itself (j = 0) before the end stores to it
    "home read while live": ("""double A[N][M]; double w;
for (i = 0; i < N; i++) {
  w = 0.0;
  for (j = 0; j < M; j++)
    w += A[i][j];
  A[i][0] = w;
}
w = 1.0;
""", "S1 A[i][j] would"),
    # two statements end the values: no one home
    "two ends": ("""double x[N]; double y[N]; double a[N]; double w;
for (i = 0; i < N; i++) {
  w = a[i] * 2.0;
  x[i] = w;
  y[i] = w + 1.0;
}
w = 1.0;
""", "not one"),
    # the only web holds the value w keeps after the region
    "last value": ("""double x[N]; double a[N]; double w;
for (i = 0; i < N; i++) {
  w = a[i] * 2.0;
  x[i] = w;
}
""", "last value"),
    # the first read sees w from before the region
    "live-in": ("""double x[N]; double a[N]; double w;
for (i = 0; i < N; i++) {
  x[i] = w;
  w = a[i];
}
w = 1.0;
""", "before the region"),
    # another statement reads the home while it holds a partial sum
    "home read by another": ("""double A[N][M]; double B[N]; double w;
for (i = 0; i < N; i++) {
  w = A[i][0];
  for (j = 1; j < M; j++) {
    w += A[i][j];
    B[i] = A[i][0] * 0.5;
  }
  A[i][0] = w;
}
w = 1.0;
""", "S2 A[i][0] would"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_web_that_would_compute_something_else_is_left_alone(name):
    text, why = REFUSED[name]
    scop = scop_of(text)
    new, rep = home_scalars(scop)
    assert not rep.homed, str(rep)
    assert any(why in w.reason for w in rep.webs), str(rep)
    assert [s.text for s in new.statements] == [s.text for s in scop.statements]


HOMES = ["A[i][0]", "A[i][1]", "A[0][i]", "B[i]", "B[i + 1]", "A[i][i]"]
STARTS = ["0.0", "A[i][0]", "A[i][1]", "B[i]", "B[i + 1]"]
OPERANDS = ["A[i][j]", "A[j][i]", "B[j]", "A[i][0] * B[j]", "C[j]"]
INNER = ["", "    C[j] = B[i] + 1.0;\n", "    C[j] = A[i][0] * 0.5;\n"]
ENDS = ["{h} = w;", "{h} = w * 0.5;", "{h} = w / 3.0;", "{h} = {h} + w;"]


def accumulation(home, start, operand, op, inner, end):
    """A row accumulation into the scalar ``w`` ended in ``home``, then a last write of ``w``."""
    return (f"double A[9][9]; double B[10]; double C[9]; double w;\n"
            f"for (i = 0; i < N; i++) {{\n  w = {start};\n  for (j = 0; j < M; j++) {{\n"
            f"    w {op} {operand};\n{inner}  }}\n  {end.format(h=home)}\n}}\nw = 2.0;\n")


@st.composite
def accumulations(draw):
    """A row accumulation into a scalar ended in a random element (home subscripts from the outer loop,
    constants and a shift), its operands reading the home's array at random subscripts, another
    statement that may read that array inside the live range, and a last write of the scalar."""
    return accumulation(draw(st.sampled_from(HOMES)), draw(st.sampled_from(STARTS)),
                        draw(st.sampled_from(OPERANDS)), draw(st.sampled_from(["+=", "-=", "*="])),
                        draw(st.sampled_from(INNER)), draw(st.sampled_from(ENDS)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accumulations(), st.integers(1, 8), st.integers(1, 8))
def test_whatever_it_homes_computes_what_the_original_does(text, n, m):
    scop = scop_of(text)
    new, rep = home_scalars(scop)
    assert same_live_out(scop, new, {"N": n, "M": m}) == [], (text, str(rep))


def test_every_home_and_end_of_one_accumulation_homes_or_is_refused_correctly():
    """A grid of the random family (each home with each end, two starts and two operands): some are
    homed, some refused, and each computes what the original does."""
    homed = refused = 0
    for home in HOMES:
        for end in ENDS:
            for start, operand in (("0.0", "A[i][j]"), ("B[i]", "C[j]")):
                scop = scop_of(accumulation(home, start, operand, "+=", "", end))
                new, rep = home_scalars(scop)
                homed += bool(rep.homed)
                refused += not rep.homed
                for n, m in ((1, 1), (4, 3), (7, 8)):
                    assert same_live_out(scop, new, {"N": n, "M": m}) == [], (home, end, start, operand)
    assert homed >= 10 and refused >= 10, (homed, refused)


def test_the_recipe_step_homes_and_a_wrong_use_gets_line_column_and_hint():
    from polylab.errors import ScheduleError

    scop = scop_of(LUDCMP)
    s = parse_schedule(scop, "home_scalars; parallel", steps=recipe_steps())
    assert [st.name for st in s.scop.statements] == ["S1", "S2", "S4", "S6", "S7", "S9", "S10", "S11"]
    assert s.steps[0] == "home_scalars" and any(name == "home_scalars" for name, _ in s.provenance.storage)
    for n in (3, 6):
        assert same_live_out(scop, s.scop, {"N": n}, schedule=s.union_map) == [], n
    with pytest.raises(ScheduleError) as err:
        parse_schedule(scop, "home_scalars(w)", steps=recipe_steps())
    text = str(err.value)
    assert text.startswith("1:1:") and "home_scalars" in text and err.value.hint
    assert "kept in the array elements they end in" in err.value.hint
