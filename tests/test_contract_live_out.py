"""A contraction's buffer is local to the region: a kernel that writes a global array (so every written
element is live-out) verifies after ``contract``, and the harness never dumps the buffer."""

from __future__ import annotations

import pytest

from polylab.codegen.harness import live_outs
from polylab.experiment import verify
from polylab.frontend import parse
from polylab.schedule import parse_schedule
from polylab.storage import recipe_steps
from polylab.toolchain import c_compiler

GLOBAL = """
#define N 40
double x[N][N][N];
void kernel(int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        x[i][j][k] = 0.0;
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++)
      for (int k = 1; k < n; k++)
        x[i][j][k] = x[i-1][j][k] + x[i][j-1][k] + x[i][j][k-1];
}
"""
RECIPE = "fold_live_ins; remove_dead_writes; interleave; contract(x)"


def _contracted():
    scop = parse(GLOBAL).scops[0]
    return scop, parse_schedule(scop, RECIPE, steps=recipe_steps())


def test_the_buffer_is_temporary_and_not_live_out():
    scop, sched = _contracted()
    assert scop.live_out is None  # a global array: every written element is live-out
    buffers = [a for a in sched.scop.arrays if a.temporary]
    assert [a.name for a in buffers] == ["xbuf"]
    assert [lo.array.name for lo in live_outs(sched.scop)] == ["x"]


@pytest.mark.skipif(c_compiler() is None, reason="no C compiler here")
def test_contracted_global_array_verifies_against_the_original():
    scop, sched = _contracted()
    v = verify(scop, sched, "c", params={"n": 12})
    assert v.verified, v.reason
