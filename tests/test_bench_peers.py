"""Peers in ``polylab bench``: the input a peer gets (the original harness, region between ``#pragma scop``
and ``#pragma endscop``), peer discovery with reasons, and end-to-end runs: fake transformers (an identity,
one that corrupts the program, one that rejects ``while`` nests, one that fails) and a reassociating
compiler show that only bit-identical output is called verified; the real peers (gcc Graphite, clang
Polly, PLUTO's polycc) are measured where this machine has them and skipped with the reason where not."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import stat
from pathlib import Path

import pytest

import polylab
from polylab import toolchain as tc
from polylab.bench import load_kernel, plan
from polylab.bench import peers
from polylab.bench.sweep import split_name
from polylab.cli import main
from polylab.codegen import original_program
from polylab.errors import PolylabError

pytestmark = pytest.mark.skipif(not tc.c_compiler_status(), reason="no C compiler")

QUICK = {"N": 12, "T": 3, "n": 8}


def _region_between_pragmas(program: str) -> str:
    lines = program.splitlines()
    assert lines.count("#pragma scop") == 1 and lines.count("#pragma endscop") == 1
    return "\n".join(lines[lines.index("#pragma scop") + 1:lines.index("#pragma endscop")])


@pytest.mark.parametrize("name", ["jacobi2d.c", "sl3.sy", "gemm.c", "lu.c"])
def test_peer_input_is_the_original_program_with_the_region_between_pragmas(name):
    scop = polylab.parse_file(polylab.example_path(name)).scop
    text = peers.peer_input(scop)
    # the same program, with the pragmas where the reference has its #line directive (peers need none)
    reference = re.sub(r'#line \d+ "[^"]*"\n', "", original_program(scop))
    assert text.replace("#pragma scop\n", "").replace("\n#pragma endscop", "") == reference
    region = _region_between_pragmas(text)
    # the region's own statements, nothing of the harness
    assert "polylab_" not in region
    for line in scop.source.strip().splitlines():
        assert line.strip() in region


def test_for_loop_input_computes_what_the_original_computes(tmp_path):
    """The fallback input of a transformer (polylab's for loops for the original order) in the original
    harness: no while loop left between the pragmas, and bit-identical output."""
    scop = polylab.parse_file(polylab.example_path("sl3.sy")).scop
    text = peers.for_loop_input(scop)
    region = _region_between_pragmas(text)
    assert "while" not in region and "for (" in region
    a = tc.compile(original_program(scop))
    b = tc.compile(text)
    tc.run(a, [10], output_dir=tmp_path / "a")
    tc.run(b, [10], output_dir=tmp_path / "b")
    assert tc.compare_outputs(tmp_path / "a", tmp_path / "b").equal


def test_peer_specs():
    assert peers.peer_name("peer:pluto") == "pluto"
    assert peers.peer_name(" peer:Graphite ") == "graphite"
    assert peers.peer_name("original") is None and not peers.is_peer("auto; parallel")
    peer = peers.Peer("graphite", "gcc 12.2.0 Graphite", "12.2.0", tc.Compiler("/usr/bin/gcc", "gcc", "gcc 12"),
                      flags=("-floop-nest-optimize",), threads_flag="-ftree-parallelize-loops={}")
    assert split_name(peer.spec) == ("gcc 12.2.0 Graphite", "peer:graphite")
    assert peer.compile_flags(4) == ("-floop-nest-optimize", "-ftree-parallelize-loops=4")
    assert peer.compile_flags(None)[-1] == f"-ftree-parallelize-loops={os.cpu_count()}"


def test_select_refuses_an_unknown_peer():
    with pytest.raises(PolylabError, match="no peer named 'icc'"):
        peers.select(["icc"])


def _script(path: Path, body: str) -> Path:
    """A fake transformer: ``SCRIPT [OPTIONS] IN -o OUT`` (``$in`` and ``$out`` are set for ``body``)."""
    path.write_text("#!/bin/sh\n"
                    'if [ "$1" = "--version" ]; then echo "PLUTO version 9.9.1 - a fake"; exit 1; fi\n'
                    'in=""; out=""\n'
                    'while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; -*) ;; *) in="$1";; esac; shift; done\n'
                    + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_polycc_named_by_POLYCC_is_found_with_its_version(tmp_path, monkeypatch):
    fake = _script(tmp_path / "polycc", 'cp "$in" "$out"')
    monkeypatch.setenv("POLYCC", str(fake))
    peer = peers.find_peer("pluto")
    assert peer is not None and peer.version == "9.9.1" and peer.transformer[0] == str(fake)
    assert peer.openmp and "--tile" in peer.transformer and "--parallel" in peer.transformer
    monkeypatch.setenv("POLYCC", str(tmp_path / "nothing-here"))
    status = peers.peer_status("pluto")
    assert not status and "POLYCC" in status.reason and "PLUTO 0.13.0" in status.reason


def test_no_clang_on_path_is_a_reason(tmp_path, monkeypatch):
    monkeypatch.delenv("CLANG", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    status = peers.peer_status("polly")
    assert not status and "no clang" in status.reason and "libpolly" in status.reason


def _fake_peer(script: Path, title: str = "fake") -> peers.Peer:
    cc = tc.c_compiler()
    assert cc is not None
    return peers.Peer("pluto", title, "0", cc, transformer=(str(script), "--tile"), openmp=True)


def _measure(peer: peers.Peer, kernel_name: str, threads: int = 2) -> peers.PeerResult:
    kernel = load_kernel(kernel_name)
    (case,) = plan([kernel], [peer.spec], threads=[threads], params=QUICK, quick=True)
    return peers.measure_peer(peer, kernel, case, None, repeat=1, warmup=0, timeout=60)


def test_identity_transformer_is_verified_and_timed(tmp_path):
    r = _measure(_fake_peer(_script(tmp_path / "same", 'grep -q "#pragma scop" "$in" || exit 1\ncp "$in" "$out"')),
                 "jacobi2d.c")
    assert r.status == "verified" and r.verified and r.seconds is not None and r.seconds.median > 0
    assert r.input == "region" and r.transform_seconds is not None and r.parallel is False
    assert r.to_json()["peer"]["input"] == "region"


def test_a_corrupted_program_is_unverified_and_never_timed(tmp_path):
    r = _measure(_fake_peer(_script(tmp_path / "bad", "sed 's/0\\.2 \\*/0.25 */' \"$in\" > \"$out\"")), "jacobi2d.c")
    assert r.status == "unverified" and r.verified is False
    assert r.seconds is None and r.speedup is None
    assert r.first_difference and r.first_difference.startswith("A[1][1]: expected ") and ", got " in r.first_difference
    assert "bit-identical" in (r.reason or "")


def test_a_rejected_region_falls_back_to_polylabs_for_loops(tmp_path):
    """A transformer that (like PLUTO's clan) reads no while loop gets polylab's for-loop form of sl3."""
    script = _script(tmp_path / "nowhile", 'if grep -q "while" "$in"; then echo "[Clan] Error: syntax error"; '
                                           'exit 1; fi\ncp "$in" "$out"')
    r = _measure(_fake_peer(script, "fakepluto"), "sl3.sy")
    assert r.status == "verified" and r.input == "polylab for-loop form"
    assert "rejected the region text" in (r.reason or "") and "syntax error" in (r.reason or "")


def test_a_transformer_that_fails_gives_a_rejected_row_with_its_message(tmp_path):
    script = _script(tmp_path / "fails", 'echo "[Clan] Error: syntax error at line 3"; exit 1')
    r = _measure(_fake_peer(script), "jacobi2d.c")
    assert r.status == peers.REJECTED and r.seconds is None
    assert "syntax error at line 3" in (r.reason or "")


def test_a_program_that_does_not_compile_is_an_error_row(tmp_path):
    script = _script(tmp_path / "garbage", 'echo "this is not C" > "$out"')
    r = _measure(_fake_peer(script), "jacobi2d.c")
    assert r.status == "error" and "CompileError" in (r.reason or "")


def test_reassociation_is_never_called_verified(tmp_path):
    """gcc -O3 -ffast-math vectorizes a floating-point sum, which reorders its additions: the output
    differs in the last bits and the row is unverified (with the count and the largest relative error)."""
    src = tmp_path / "dot.c"
    src.write_text("double a[N]; double b[N]; double s[1];\n"
                   "for (i = 0; i < N; i++)\n  s[0] = s[0] + a[i] * b[i];\n")
    cc = tc.c_compiler()
    assert cc is not None
    fast = peers.Peer("graphite", "gcc fast-math", "0", cc, flags=("-ffast-math",))
    kernel = load_kernel(str(src))
    (case,) = plan([kernel], [fast.spec], threads=[1], params={"N": 4000}, quick=True)
    r = peers.measure_peer(fast, kernel, case, None, repeat=1, warmup=0, timeout=60)
    assert r.status == "unverified" and r.seconds is None
    assert "largest relative error" in (r.reason or "") and r.first_difference.startswith("s[0]")


def test_summary_lists_commands_times_and_absent_peers(tmp_path):
    peer = _fake_peer(_script(tmp_path / "same", 'cp "$in" "$out"'), "fakepluto")
    r = _measure(peer, "jacobi2d.c")
    lines = peers.summary([r], {"polly": "no clang on PATH"})
    assert lines[0].startswith("peer fakepluto: ") and "--tile" in lines[0]
    assert any(ln.strip().startswith("jacobi2d.c: fakepluto took") for ln in lines)
    assert lines[-1] == "peer polly: not measured: no clang on PATH"


def test_native_flags_reach_the_peers_timed_build_only(tmp_path, monkeypatch):
    """A case's flags (``--native``) go to the peer's timed build and its command, not to its verification
    build."""
    built = []
    real = tc.compile

    def spy(source, **kwargs):
        binary = real(source, **kwargs)
        built.append(binary)
        return binary

    monkeypatch.setattr(tc, "compile", spy)
    peer = _fake_peer(_script(tmp_path / "same", 'cp "$in" "$out"'), "fakepluto")
    kernel = load_kernel("jacobi2d.c")
    (case,) = plan([kernel], [peer.spec], threads=[2], params=QUICK, quick=True, flags=("-march=native",))
    r = peers.measure_peer(peer, kernel, case, None, repeat=1, warmup=0, timeout=60)
    assert r.status == "verified", r.reason
    mine = [b for b in built if "#pragma scop" in b.source]      # the peer's builds, not the reference's
    timed = [b for b in mine if b.flags[0] == "-O3"]
    checks = [b for b in mine if "-ffp-contract=off" in b.flags]
    assert len(timed) == 1 and len(checks) == 1, [b.flags for b in mine]
    assert timed[0].flags[:2] == ("-O3", "-march=native") and "-march=native" in timed[0].command
    assert "-march=native" not in checks[0].flags and "-march=native" not in checks[0].command
    assert r.retime is not None and r.retime.binary == timed[0]
    assert "-O3 -march=native" in r.to_json()["peer"]["command"]
    assert "-O3 -march=native" in peers.summary([r])[0]
    assert "-march=native" not in peer.command                  # the peer itself carries no flags


def _bench_with_peer(name: str, tmp_path) -> tuple[int, str, dict]:
    status = peers.peer_status(name)
    if not status:
        pytest.skip(f"peer {name} is not on this machine: {status.reason}")
    js = tmp_path / "report.json"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_WAIT_POLICY", "passive")
        rc = main(["bench", "jacobi2d.c", "--quick", "--no-progress", "--schedules", "original", "--peer", name,
                   "--threads", "1,2", "--json", str(js)])
    return rc, buf.getvalue(), json.loads(js.read_text())


@pytest.mark.parametrize("name", peers.PEER_NAMES)
def test_bench_measures_a_real_peer_in_the_same_table(name, tmp_path):
    rc, out, data = _bench_with_peer(name, tmp_path)
    assert rc == 0, out
    rows = [r for r in data["results"] if r["spec"] == f"peer:{name}"]
    assert rows, out
    for r in rows:
        assert r["status"] == "verified" and r["verified"] is True, r
        assert r["median_s"] > 0 and r["speedup"] == pytest.approx(r["baseline_median_s"] / r["median_s"])
        assert r["peer"]["name"] == name and r["peer"]["version"]
    assert [p["name"] for p in data["settings"]["peers"]] == [name]
    title = data["settings"]["peers"][0]["title"]
    assert title in out and f"peer {title}: " in out
    if name == "pluto":
        assert rows[0]["peer"]["tool_times"]["auto-transformation"] >= 0
        assert rows[0]["schedule"].startswith("T(S")
    if name == "graphite":
        # -ftree-parallelize-loops=2 makes gcc parallelize jacobi's outer space loops
        assert [r["threads"] for r in rows] == [1, 2] and rows[1]["parallel"] is True
        assert "gcc parallelized 2 loop(s)" in rows[1]["reason"]
    if name == "polly":
        assert all(r["reason"].startswith("Polly modelled 1 SCoP(s) in the kernel") for r in rows), rows


PLUTO_LOG = """\
[pluto] Affine transformations [<iter coeff's> <param> <const>]

T(S1): (2t-i, 2t+i, 2t+j)
loop types (loop, loop, loop)

[Pluto] After tile scheduling:
T(S1): ((2t-i)/32+(2t+i)/32, (2t+i)/32, (2t+j)/32, t, 2t+i, 2t+j)
loop types (loop, loop, loop, loop, loop, loop)

T(S2): (zT3+zT4, zT4, zT5, t, 2t+i+1, 2t+j+1)
[pluto] Timing statistics
[pluto] SCoP extraction + dependence analysis time: 0.001226s
[pluto] Auto-transformation time: 0.019320s
[pluto] \t\tTotal constraint solving time (LP/MIP/ILP) time: 0.002417s
[pluto] Total time: 1.183743s
[pluto] All times: 0.001226 0.019320 0.863401 0.299796
"""


def test_plutos_log_gives_its_final_transformation_and_its_own_times():
    """Read from PLUTO 0.13.0's output format (so CI, which has no PLUTO, checks the reading)."""
    times = dict(peers._tool_times(PLUTO_LOG))
    assert times == {"scop extraction + dependence analysis": 0.001226, "auto-transformation": 0.01932,
                     "total constraint solving (lp/mip/ilp)": 0.002417, "total": 1.183743}
    assert peers._pluto_schedule(PLUTO_LOG) == ("T(S1): ((2t-i)/32+(2t+i)/32, (2t+i)/32, (2t+j)/32, t, 2t+i, 2t+j); "
                                               "T(S2): (zT3+zT4, zT4, zT5, t, 2t+i+1, 2t+j+1)")


def test_an_unknown_peer_spec_is_a_row_not_a_crash():
    kernel = load_kernel("jacobi2d.c")
    (case,) = plan([kernel], ["peer:icc"], threads=[1], params=QUICK, quick=True)
    r = peers.run_peer_case(kernel, case, None, repeat=1, warmup=0, timeout=60)
    assert r.status == "not run" and "no peer named 'icc'" in (r.reason or "")


def test_peers_flag_measures_every_peer_found_and_names_the_absent(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYCC", str(tmp_path / "no-polycc"))
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    js = tmp_path / "report.json"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["bench", "sweep2d.c", "--quick", "--no-progress", "--schedules", "original", "--peers",
                   "--threads", "1", "--json", str(js)])
    out, data = buf.getvalue(), json.loads(js.read_text())
    assert rc == 0, out
    assert "POLYCC" in data["settings"]["peers_absent"]["pluto"]
    assert "peer pluto: not measured: POLYCC=" in out
    here = [p.name for p in peers.available_peers()]
    assert [p["name"] for p in data["settings"]["peers"]] == here
    assert sorted({r["spec"] for r in data["results"]} - {"original"}) == sorted(f"peer:{n}" for n in here)
