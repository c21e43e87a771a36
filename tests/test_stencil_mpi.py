"""xDSL's distribution of a stencil program over MPI ranks, built (mlir-opt, mlir-translate, llc, mpicc) and run
with ``mpirun -np 2`` and ``-np 4``: the assembled output equals the reference interpreter's run of the whole
program, bit for bit. Rows a rank does not own start as NaN, so only the halo exchange can make them right."""

from __future__ import annotations

import pytest

from polylab import stencil
from polylab.stencil.check import check_mpi
from polylab.toolchain.mlirbuild import mpi_tools

available, why = mpi_tools()
pytestmark = pytest.mark.skipif(not available, reason=why or "MPI present")


@pytest.mark.parametrize("ranks", [2, 4])
def test_laplacian_over_mpi_ranks_equals_the_reference(ranks):
    p = stencil.with_domain(stencil.example("laplace3d"), (8, 8, 4))
    result = check_mpi(p, ranks)
    assert result.verified is True, str(result)


def test_diagonal_reads_need_the_corners_xdsl_does_not_exchange():
    """The inlined bi-Laplacian reads diagonal neighbours ((1, -1, 0), ...); xDSL 0.74 exchanges the halo along
    each dimension without the corners, so a rank's last row reads a corner point no rank sent it (NaN here):
    the comparison names the first such point instead of calling the run verified."""
    from polylab.grading.labs.lab8 import BILAP

    p = stencil.run_passes(stencil.with_domain(stencil.parse(BILAP), (8, 8, 4)), "stencil-inlining,cse")
    result = check_mpi(p, 2)
    assert result.verified is False and result.first_difference.array == "out"


def test_a_program_with_temps_between_applies_is_refused_by_xdsls_pipeline():
    from polylab.grading.labs.lab8 import BILAP

    with pytest.raises(stencil.StencilError) as info:
        check_mpi(stencil.with_domain(stencil.parse(BILAP), (8, 8, 4)), 2)
    assert "xDSL's MPI pipeline refused" in info.value.message


def test_a_domain_that_does_not_split_evenly_is_refused():
    p = stencil.with_domain(stencil.example("laplace3d"), (6, 6, 4))
    with pytest.raises(stencil.StencilError) as info:
        check_mpi(p, 4)
    assert "do not split evenly" in info.value.message
