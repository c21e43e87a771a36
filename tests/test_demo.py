"""``polylab demo --quick``: the sl3 story runs end to end and states its key facts."""

from __future__ import annotations

import re

import pytest

from polylab.cli import main


@pytest.fixture(scope="module")
def demo_output():
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_WAIT_POLICY", "passive")
        rc = main(["demo", "--quick", "--n", "16"])
    return rc, out.getvalue(), err.getvalue()


def test_demo_runs_end_to_end(demo_output):
    rc, out, err = demo_output
    assert rc == 0, out[-3000:] + err[-2000:]
    assert "Traceback" not in out + err
    titles = re.findall(r"^  (\d+)\. ", out, re.M)
    assert titles == [str(k) for k in range(1, 13)]


def test_demo_shows_distances_and_the_wavefront(demo_output):
    _, out, _ = demo_output
    for d in ("(1, 0, 0)", "(0, 1, 0)", "(0, 0, 1)", "(1, 1, 1)"):
        assert d in out
    assert re.search(r"flow distances: .*\(1, 1, 1\)", out)
    assert "theta = i + j + k" in out


def test_demo_shows_folding_contraction_and_the_refusal(demo_output):
    _, out, _ = demo_output
    assert "3 read(s) folded" in out
    assert "xbuf[i0 % 2]" in out and "2 planes" in out
    refusal = out[out.index("one plane (modulus 1):"):]
    assert refusal.split(":", 1)[1].strip().startswith("REFUSED")
    assert "overwrites" in refusal.splitlines()[0]


def test_demo_verifies_and_times_every_variant(demo_output):
    _, out, _ = demo_output
    summary = out[out.index("12. Summary"):]
    rows = [ln for ln in summary.splitlines() if ln.startswith("sl3.sy")]
    assert len(rows) == 6           # the baseline and five variants
    assert all(ln.rstrip().endswith(("yes", "reference")) for ln in rows), rows
    assert "point wavefront" in summary and "tile-level wavefront" in summary
    assert out.count("verified (bit-exact") >= 5
    assert re.search(r"point wavefront.*\n.*SLOWER|SLOWER than gcc -O3", out)


def test_demo_refuses_a_size_the_program_cannot_hold(capsys, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert main(["demo", "--n", "1000"]) == 2
    assert "400" in capsys.readouterr().err
