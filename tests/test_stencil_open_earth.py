"""Acceptance: the Open Earth compiler's public example programs (github spcl/open-earth-compiler,
test/Examples), read from the directory named by ``POLYLAB_OPEN_EARTH_EXAMPLES`` (skipped when unset; the
files are never copied into this repository).

Each program parses, prints back and parses again to the same IR, infers its shapes, inlines, lowers, and
runs bit for bit like the reference interpreter at a 32^3 and a 64^3 domain (inlined and not: the
interpreter's results of both agree, and each lowered program agrees with the interpreter). The programs
polylab refuses are listed with the reason it must give.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from polylab.stencil import (StencilError, check, cleanup, infer_shapes, inline, interpret, lower, parse,
                             print_program, with_domain)
from polylab.stencil.check import reference

DIRECTORY = os.environ.get("POLYLAB_OPEN_EARTH_EXAMPLES")
FILES = sorted(Path(DIRECTORY).glob("*.mlir")) if DIRECTORY and Path(DIRECTORY).is_dir() else []
#: programs the dialect allows and polylab does not support, with the operation the refusal names
REFUSED = {"semi_lag.mlir": "stencil.dyn_access", "tridiagonal.mlir": "stencil.depend"}

pytestmark = pytest.mark.skipif(not FILES, reason="POLYLAB_OPEN_EARTH_EXAMPLES is not set to the directory of "
                                                  "the Open Earth compiler's test/Examples")


def _ids(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("path", FILES, ids=_ids)
def test_parses_prints_and_parses_back(path):
    text = path.read_text()
    if path.name in REFUSED:
        with pytest.raises(StencilError) as info:
            parse(text, filename=str(path))
        assert REFUSED[path.name] in info.value.message and info.value.location is not None
        return
    p = parse(text, filename=str(path))
    printed = print_program(p)
    assert parse(printed) == p
    shaped = infer_shapes(p)
    assert parse(print_program(shaped)) == shaped


@pytest.mark.parametrize("size", [32, 64])
@pytest.mark.parametrize("path", [f for f in FILES if f.name not in REFUSED], ids=_ids)
def test_inlines_lowers_and_verifies(path, size):
    p = with_domain(parse(path.read_text()), (size,) * 3)
    inlined = infer_shapes(cleanup(inline(p)))
    assert len(inlined.applies) <= len(p.applies)
    plain = lower(p)
    fields = {arg: data for arg, data in _initial(plain).items()}
    want, got = interpret(p, fields), interpret(inlined, fields)
    assert want.keys() == got.keys()
    for k in want:
        assert np.array_equal(want[k].view(np.uint64), got[k].view(np.uint64)), k
    for program in (plain, lower(inlined)):
        result = check(program)
        assert result.verified is True, f"{path.name} at {size}^3: {result}"
    assert set(reference(plain)) == {name for arg, name in plain.fields if arg in p.output_fields()}


def _initial(lowering):
    from polylab.codegen.harness import initial_values

    values = initial_values(lowering.scop, {})
    return {arg: values[name] for arg, name in lowering.fields}
