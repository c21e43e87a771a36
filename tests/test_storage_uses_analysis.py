"""The storage steps use the analysis layer's exact dataflow (one implementation, no second one)."""

import pathlib

import islpy as isl
import pytest

import polylab
import polylab.storage as st
import polylab.storage.islutil as islutil
from polylab.analysis import compute_dependences, dataflow
from polylab.reference.builder import jacobi1d_time_scop, producer_consumer_scop

STORAGE = pathlib.Path(st.__file__).parent


def test_no_dataflow_of_its_own():
    for name in ("read_flows", "ReadFlow", "last_writes", "memory_dependences"):
        assert not hasattr(islutil, name), name
    for path in STORAGE.glob("*.py"):
        text = path.read_text()
        assert "compute_flow" not in text and "UnionAccessInfo" not in text, path.name


def _sl3():
    return polylab.parse_file(polylab.example_path("sl3.sy")).scop


@pytest.mark.parametrize("make", [_sl3, jacobi1d_time_scop, producer_consumer_scop])
def test_dataflow_views_used_by_storage(make):
    """``flow_map``, ``source_map``, ``live_in_instances`` and ``last_write_instances`` are exact views of
    the value-based flow dependences and the last writes."""
    scop = make()
    df = dataflow(scop)
    vb = compute_dependences(scop, value_based=True, kinds=("flow",)).union()
    assert df.flow_map().is_equal(vb)
    for r in df.reads:
        assert r.source_map.is_subset(vb)
        # every instance of the read has a source or is live-in, never both
        acc = scop.statement(r.statement).accesses[r.access]
        inst = acc.relation.domain().intersect_params(scop.context)
        sourced = r.source_map.range()
        assert isl.UnionSet.from_set(inst).is_equal(sourced.union(isl.UnionSet.from_set(r.live_in_instances)))
        assert sourced.intersect(isl.UnionSet.from_set(r.live_in_instances)).is_empty()
    # a last write is overwritten by no later write of its element
    last = df.last_write_instances()
    out = compute_dependences(scop, kinds=("output",)).union()
    assert out.intersect_domain(last).is_empty()


def test_dead_write_removal_keeps_exactly_the_used_instances():
    scop = _sl3()
    folded, _ = st.fold_live_ins(scop)
    dead, _ = st.remove_dead_writes(folded)
    df = dataflow(folded)
    used = df.flow_map().domain().union(df.last_write_instances())
    kept = dead.domain.intersect_params(scop.context)
    assert kept.is_subset(used) and used.intersect(folded.domain).intersect_params(scop.context).is_subset(kept)
