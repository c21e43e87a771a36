"""The storage layer's value-based dataflow agrees with the analysis layer's (two exact computations)."""

import islpy as isl
import pytest

import polylab
from polylab.storage.handmade import jacobi1d_time_scop, producer_consumer_scop
from polylab.storage.islutil import maps, read_flows

dataflow_mod = pytest.importorskip("polylab.analysis.dataflow")


@pytest.mark.parametrize("make", [lambda: polylab.parse_file(polylab.example_path("sl3.sy")).scop,
                                  jacobi1d_time_scop, producer_consumer_scop])
def test_sources_and_live_in_agree(make):
    scop = make()
    df = dataflow_mod.dataflow(scop)
    for rf in read_flows(scop):
        theirs = df.read(rf.statement.name, rf.access.index)
        mine = {m.get_tuple_name(isl.dim_type.in_): m for m in maps(rf.sources) if not m.is_empty()}
        assert set(mine) == {s.statement for s in theirs.sources if not s.relation.is_empty()}
        for s in theirs.sources:
            if not s.relation.is_empty():
                assert s.relation.intersect_params(scop.context).is_equal(mine[s.statement])
        assert theirs.live_in.domain().intersect_params(scop.context).is_equal(rf.live_in)
