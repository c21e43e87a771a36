"""A parameter named like an isl keyword (``max``, ``floor``, ...) is the *same* parameter in every
relation polylab builds from text: storage contraction and the buffer's extents give the same answer as
for the program with an ordinary name, and the contracted program verifies.

(isl text needs a stand-in for such names; giving the real name back with a fresh ``isl.Id`` made a
second, unconstrained parameter of the same name, so relations built from text silently stopped
depending on the program's parameter.)"""

from __future__ import annotations

import islpy as isl
import pytest

from polylab.experiment import verify
from polylab.frontend import parse
from polylab.schedule import parse_schedule
from polylab.storage import recipe_steps
from polylab.toolchain import c_compiler

SOURCE = """
void kernel(int NAME, double x[NAME][NAME], double y[NAME][NAME]) {
#pragma scop
  for (int i = 0; i < NAME; i++)
    for (int j = 0; j < NAME; j++)
      x[i][j] = i + j;
  for (int i = 1; i < NAME; i++)
    for (int j = 0; j < NAME; j++)
      y[i][j] = x[i][j] + x[i - 1][j];
#pragma endscop
}
"""
RECIPE = "interleave; contract(x)"


def _contracted(name: str):
    scop = parse(SOURCE.replace("NAME", name)).scops[0]
    return scop, parse_schedule(scop, RECIPE, steps=recipe_steps())


@pytest.mark.parametrize("name", ["max", "floor", "exists"])
def test_a_keyword_named_parameter_contracts_like_an_ordinary_one(name):
    _, plain = _contracted("n")
    _, kw = _contracted(name)
    buf = [a for a in kw.scop.arrays if a.temporary]
    ref = [a for a in plain.scop.arrays if a.temporary]
    assert [a.name for a in buf] == [a.name for a in ref] == ["xbuf"]
    # same number of parameters everywhere (no second, unconstrained copy of the keyword-named one)
    for st in kw.scop.statements:
        assert st.domain.dim(isl.dim_type.param) == 1, str(st.domain)
    assert kw.text().replace(name, "n") == plain.text()


@pytest.mark.skipif(c_compiler() is None, reason="no C compiler here")
def test_the_contracted_keyword_named_program_verifies():
    scop, sched = _contracted("max")
    v = verify(scop, sched, "c", params={"max": 9})
    assert v.verified, v.reason
