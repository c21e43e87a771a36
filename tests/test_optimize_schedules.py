"""The ``optimize`` schedules of every shipped kernel, pinned: ``optimize(1)`` and ``optimize(2)`` on each file
of the corpus (the examples and the PolyBench-style files), for the reference
:class:`~polylab.schedule.optimize.Machine`, must be the schedules recorded in ``optimize_schedules.json``
(text, OpenMP dimensions, steps, statements after the storage steps).

A change of the engine that is not meant to change a choice keeps them; one that is (a better model) changes
the file, in the commit that says which schedules changed and why: regenerate it with

    PYTHONPATH=. python tests/test_optimize_schedules.py --update
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from polylab.schedule import parse_schedule
from polylab.schedule.optimize import Machine
from polylab.storage import recipe_steps

sys.path.insert(0, str(Path(__file__).parent))
from example_params import corpus, scop_of  # noqa: E402

EXPECTED = Path(__file__).with_name("optimize_schedules.json")
SPECS = ("optimize(1)", "optimize(2)")


def record(name: str, spec: str) -> dict:
    s = parse_schedule(scop_of(name), spec, steps=recipe_steps(Machine()))
    return {"schedule": s.text(), "openmp_dims": sorted(s.marked), "steps": list(s.steps),
            "statements": [st.name for st in s.scop.statements]}


@pytest.mark.parametrize("name", corpus())
def test_the_optimize_schedules_are_the_recorded_ones(name):
    expected = json.loads(EXPECTED.read_text())
    for spec in SPECS:
        assert record(name, spec) == expected[f"{name} {spec}"], (name, spec)


def test_the_record_covers_the_corpus():
    assert set(json.loads(EXPECTED.read_text())) == {f"{n} {s}" for n in corpus() for s in SPECS}


if __name__ == "__main__" and "--update" in sys.argv:
    EXPECTED.write_text(json.dumps({f"{n} {s}": record(n, s) for n in corpus() for s in SPECS}, indent=1,
                                   sort_keys=True) + "\n")
    print(f"wrote {EXPECTED}")
