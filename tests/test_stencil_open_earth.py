"""Acceptance: the Open Earth compiler's 20 public example programs (its test/Examples), read from the directory
named by ``POLYLAB_OPEN_EARTH_EXAMPLES`` (skipped when unset; the files are never copied into this repository).

Each program is read (Open Earth's 2020 syntax through polylab's reader into xDSL's dialect), prints in today's
syntax and parses back to the same program; xDSL's shape inference, inlining and (where the fields have the
halo xDSL's shape inference asks for) unrolling are each checked by the reference interpreter at two sizes,
and the lowered model runs bit for bit like the interpreter. The programs xDSL cannot express, and the passes
xDSL refuses, are listed with the operation the refusal names.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polylab import stencil

DIRECTORY = os.environ.get("POLYLAB_OPEN_EARTH_EXAMPLES")
FILES = sorted(Path(DIRECTORY).glob("*.mlir")) if DIRECTORY and Path(DIRECTORY).is_dir() else []
#: programs xDSL's dialect cannot express, with the operation the refusal names
REFUSED = {"tridiagonal.mlir": "stencil.apply seq"}
#: programs the model cannot hold (not affine), with the operation the refusal names
NOT_AFFINE = {"semi_lag.mlir": "stencil.dyn_access"}
#: programs whose inlining xDSL refuses (its inlining recomputes producers: more halo than the fields have)
NOT_INLINED = {"semi_lag.mlir"}
#: programs with accesses inside scf.if, which xDSL's unroll does not shift: polylab-unroll refuses them
NOT_UNROLLED = {"fvtp2d.mlir", "fvtp2d_flux.mlir", "fvtp2d_qi.mlir", "fvtp2d_qj.mlir", "upstream.mlir"}
#: programs with combines split at fixed indices: their domain cannot shrink below the split
FIXED = {"fastwavesuvfull.mlir": (64, 72)}

pytestmark = pytest.mark.skipif(not FILES, reason="POLYLAB_OPEN_EARTH_EXAMPLES is not set to the directory of "
                                                  "the Open Earth compiler's test/Examples")


def _ids(path: Path) -> str:
    return path.stem


def test_all_twenty_are_there():
    assert len(FILES) == 20


@pytest.mark.parametrize("path", FILES, ids=_ids)
def test_reads_prints_and_parses_back(path):
    text = path.read_text()
    if path.name in REFUSED:
        with pytest.raises(stencil.UnsupportedStencilError) as info:
            stencil.parse(text, filename=str(path))
        assert REFUSED[path.name] in info.value.message and info.value.location is not None
        return
    p = stencil.parse(text, filename=str(path))
    assert stencil.parse(p.text) == p


def _sizes(path: Path) -> tuple[int, int]:
    return FIXED.get(path.name, (16, 24))


@pytest.mark.parametrize("path", [f for f in FILES if f.name not in REFUSED], ids=_ids)
def test_each_pass_is_verified_at_two_sizes(path):
    original = stencil.parse(path.read_text())
    for size in _sizes(path):
        p = stencil.with_domain(original, (size,) * 3) if path.name != "semi_lag.mlir" else original
        spec = "shape-inference" if path.name in NOT_INLINED else "stencil-inlining,cse,shape-inference"
        checks = stencil.check_passes(p, spec)
        assert all(c.verified is True for c in checks), [str(c) for c in checks]
        if path.name not in NOT_INLINED and size == _sizes(path)[0]:
            shaped = stencil.run_passes(p, "shape-inference")
            unrolled = stencil.check_passes(shaped, "polylab-unroll{unroll-factor=1,2,1}")
            if path.name in NOT_UNROLLED:
                assert unrolled[-1].verified is False and "scf.if" in str(unrolled[-1])
            else:
                assert all(c.verified is True for c in unrolled), [str(c) for c in unrolled]


@pytest.mark.parametrize("path", [f for f in FILES if f.name not in REFUSED], ids=_ids)
def test_the_lowered_model_runs_like_the_interpreter(path):
    p = stencil.parse(path.read_text())
    if path.name in NOT_AFFINE:
        with pytest.raises(stencil.StencilError) as info:
            stencil.lower(p)
        assert NOT_AFFINE[path.name] in info.value.message and info.value.location is not None
        return
    p = stencil.with_domain(p, (_sizes(path)[0],) * 3)
    assert stencil.check(stencil.lower(p)).verified is True


def _fvtp2d() -> stencil.Program:
    path = next((f for f in FILES if f.name == "fvtp2d.mlir"), None)
    if path is None:
        pytest.skip("fvtp2d.mlir is not there")
    return stencil.parse(path.read_text(), filename=str(path))


def _applies(program: stencil.Program) -> int:
    return sum(1 for op in program.walk() if op.name == "stencil.apply")


def test_fvtp2d_inlined_before_shape_inference_is_verified():
    """xDSL 0.74.0 inlines all 18 applies of fvtp2d into one, and the shape inference after it fits the fields'
    halo of 4: both passes leave every stored element bit for bit as the interpreter computed it before."""
    p = _fvtp2d()
    checks = stencil.check_passes(p, "stencil-inlining,shape-inference")
    assert [c.name for c in checks] == ["stencil-inlining", "shape-inference"]
    assert all(c.verified is True and c.changed > 0 for c in checks), [str(c) for c in checks]
    assert (_applies(p), _applies(checks[0].program)) == (18, 1)


def test_xdsls_refusal_of_an_inlining_after_shape_inference_is_located():
    """Inlined after shape inference, fvtp2d's one apply reads [-6, -3, 0] to [68, 67, 64] of fields bounded by
    [-4, 68): xDSL's verifier refuses the shape inference after it, and the error names the pass, the reason
    and the load, at its line (in xDSL's printed program after the earlier passes)."""
    with pytest.raises(stencil.StencilError) as info:
        stencil.run_passes(_fvtp2d(), "shape-inference,stencil-inlining,shape-inference")
    err = info.value
    assert "the program after the pass shape-inference does not verify" in err.message
    assert "too big for the loaded field" in err.message and "stencil.load" in err.message
    assert err.location is not None and f"line {err.location.line}," in err.message
    assert "stencil.load" in err.location.source_line and "halo" in err.hint
