"""nvcc builds every corpus kernel's CUDA variants (the schedules the bench and the labs use), without
warnings; a GPU is not needed (what runs is checked by tests/test_gpu_emulation.py on the CPU)."""

from __future__ import annotations

import pytest

import polylab
from polylab import toolchain as tc
from polylab.bench.gpu import GPU_FLAGS, target_cases
from polylab.codegen import generate
from polylab.errors import PolylabError
from polylab.experiment.schedules import schedule_from_spec, variant_scop

SPECS = ("original", "wavefront; parallel", "auto; parallel", "auto; tile_wavefront(32, 32)")

pytestmark = [pytest.mark.needs_nvcc, pytest.mark.slow,
              pytest.mark.skipif(tc.cuda_compiler() is None, reason="nvcc not found")]


def _requests(items):
    requests, labels = [], []
    for name, scop, spec in items:
        try:
            sched = schedule_from_spec(scop, spec)
            code = generate(variant_scop(scop, sched), sched, "cuda")
        except PolylabError:   # illegal for this kernel: refused before any code exists
            continue
        requests.append(tc.BuildRequest(code.program, language="cuda", flags=GPU_FLAGS))
        labels.append((name, spec))
    return requests, labels


def _check(requests, labels):
    results = tc.compile_many(requests)
    for label, res in zip(labels, results):
        assert not isinstance(res, Exception), f"{label}: {res}"
        assert not res.warnings, f"{label}: {[str(w) for w in res.warnings]}"


def test_every_corpus_kernel_builds_with_nvcc():
    items = []
    for name in polylab.examples():
        scop = polylab.parse_file(polylab.example_path(name)).scop
        items += [(name, scop, spec) for spec in SPECS]
    requests, labels = _requests(items)
    assert {n for n, _ in labels} == set(polylab.examples())
    _check(requests, labels)


def test_issue_13_targets_build_with_nvcc():
    kernels, cases = target_cases()
    by = {k.name: k.scop for k in kernels}
    requests, labels = _requests([(c.kernel, by[c.kernel], c.spec) for c in cases])
    assert len(labels) == len(cases)
    _check(requests, labels)
