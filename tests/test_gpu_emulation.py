"""The GPU mapping verified on the CPU: the CUDA kernels, host code, index arithmetic and block shapes,
compiled as C with every thread of every launch run in turn (``polylab.codegen.cuda_emulation``), must give
bit for bit the original program's output, for every corpus kernel and several schedules."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polylab
from polylab import toolchain as tc
from polylab.codegen import cuda_emulation, generate
from polylab.errors import PolylabError
from polylab.experiment import verify
from polylab.experiment.schedules import schedule_from_spec, variant_scop

from example_params import PARAMS

pytestmark = pytest.mark.skipif(tc.c_compiler() is None, reason="no C compiler")

SPECS = ("original", "wavefront; parallel", "auto; parallel", "auto; tile_wavefront(4, 4)")
EXTRA = [
    ("sl3.sy", "{ S0[i,j,k] -> [0,i,j,k]; S1[i,j,k] -> [1,i+j+k,j,i] }"),     # re-based wave
    ("jacobi2d.c", "{ S0[t,i,j] -> [t,0,j,i]; S1[t,i,j] -> [t,1,j,i] }"),     # transposed nest
    ("heat3d.c", "{ S0[t,i,j,k] -> [t,0,floor(j/4),i,j,k]; S1[t,i,j,k] -> [t,1,floor(j/4),i,j,k] }"),  # 4 loops
    ("sweep2d.c", "{ S0[i, j] -> [floor(i/4) + floor(j/4), floor(i/4), i, j] }"),   # tile wavefront
    ("seidel2d.c", "{ S0[t,i,j] -> [4t + 2i + j, t, i] }"),
]


def scop_of(name: str):
    return polylab.parse_file(polylab.example_path(name)).scop


def emulate(name: str, spec: str, threads: int | None = None, params=None, persistent: bool = False):
    scop = scop_of(name)
    sched = schedule_from_spec(scop, spec)
    code = cuda_emulation(variant_scop(scop, sched), sched)
    if threads is not None:
        code = dataclasses.replace(code, program=f"#define POLYLAB_BLOCK_THREADS {threads}\n"
                                   f"#define POLYLAB_TILE_THREADS {threads}\n" + code.program)
    if persistent:   # every wave loop that can runs as one cooperative kernel
        code = dataclasses.replace(code, program="#define POLYLAB_PERSISTENT_WAVES 0\n" + code.program)
    return scop, sched, code, verify(scop, sched, "c", params=params or PARAMS[name], code=code)


def test_every_corpus_kernel_is_in_the_table():
    assert set(PARAMS) == set(polylab.examples())


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PARAMS))
def test_corpus_kernel_schedules_emulated_equal_the_original(name):
    ran = 0
    for spec in SPECS:
        try:
            _, _, code, v = emulate(name, spec)
        except PolylabError:   # an illegal or impossible schedule for this kernel: refused, not compiled
            continue
        assert v.verified is True, f"{name} [{spec}]: {v}"
        assert not v.warnings, f"{name} [{spec}]: {v.warnings}"
        assert "POLYLAB_LAUNCH" in code.program
        ran += 1
    assert ran >= 1


@pytest.mark.parametrize("name,spec", EXTRA)
def test_handwritten_schedules_emulated_equal_the_original(name, spec):
    _, _, code, v = emulate(name, spec)
    assert v.verified is True, f"{name} [{spec}]: {v}"


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXTRA + [("jacobi2d.c", "auto; tile_wavefront(4, 4)"), ("sl3.sy", "wavefront; parallel")]),
       st.sampled_from([1, 2, 8, 32, 64, 1024]), st.integers(0, 5), st.booleans())
def test_any_block_size_and_size_emulates_exactly(case, threads, grow, persistent):
    """Partial blocks, one-thread blocks, blocks larger than the nest, one launch per wave or one
    cooperative kernel for all waves: the guards keep every point once, in an order the barriers allow."""
    name, spec = case
    params = {k: v + grow for k, v in PARAMS[name].items() if k != "T"} | (
        {"T": PARAMS[name]["T"]} if "T" in PARAMS[name] else {})
    _, _, code, v = emulate(name, spec, threads, params, persistent)
    assert v.verified is True, f"{name} [{spec}] threads={threads} {params} persistent={persistent}: {v}"


@pytest.mark.parametrize("name,spec", [("sweep2d.c", "wavefront; parallel"), ("sl3.sy", "wavefront; parallel"),
                                       ("seidel2d.c", "{ S0[t,i,j] -> [4t + 2i + j, t, i] }")])
def test_many_waves_run_as_one_cooperative_kernel(name, spec):
    _, _, code, v = emulate(name, spec, 4, persistent=True)
    assert "POLYLAB_COOPERATIVE(" in code.program and "POLYLAB_GRID_SYNC();" in code.program
    assert v.verified is True, f"{name} [{spec}]: {v}"


def test_a_wrong_guard_is_caught():
    """Not vacuous: an off-by-one bounds guard in the emulated code makes the comparison fail."""
    scop, sched, code, v = emulate("sweep2d.c", "wavefront; parallel")
    assert v.verified is True
    guard = "if (polylab_ix >= polylab_n0) return;"
    assert guard in code.program
    broken = dataclasses.replace(code, program=code.program.replace(guard, "if (polylab_ix > polylab_n0) return;"))
    bad = verify(scop, sched, "c", params={"N": 12}, code=broken)
    assert bad.verified is False


def test_a_wrong_coordinate_is_caught():
    scop, sched, code, v = emulate("heat3d.c", "{S0[t,i,j,k]->[t,0,i,j,k]; S1[t,i,j,k]->[t,1,i,j,k]}")
    assert v.verified is True
    line = "const int c3 = polylab_lo1 + (int)(polylab_iy);"
    assert line in code.program
    broken = dataclasses.replace(code, program=code.program.replace(line, "const int c3 = polylab_lo1 + (int)(polylab_iy) + 1;"))
    assert verify(scop, sched, "c", params=PARAMS["heat3d.c"], code=broken).verified is False


def test_emulation_is_the_cuda_text():
    scop = scop_of("jacobi2d.c")
    sched = schedule_from_spec(scop, "auto; tile_wavefront(4, 4)")
    v = variant_scop(scop, sched)
    cu, emu = generate(v, sched, "cuda"), cuda_emulation(v, sched)
    kernels = cu.kernel[: cu.kernel.index("static void kernel(")]
    assert kernels and kernels in emu.kernel
    assert cu.notes == emu.notes
