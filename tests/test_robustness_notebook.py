"""Issue 15, section 2 (the magics and the command line): no traceback for what a person types.

``%%scop "abc`` (no closing quotation), a whitespace-only cell, ``--param N=-5`` / ``N=0`` / ``N=500``
(pictures), ``%polyrun --param N=10**20``, interrupting ``%polyrun`` or ``%%schedule auto``, and
``polylab deps FILE --json | head -1`` (a closed pipe).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import io  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import polylab  # noqa: E402
from polylab.errors import PolylabError  # noqa: E402
from polylab.model import Scop  # noqa: E402

SWEEP = polylab.example_path("sweep2d.c").read_text()


def run(ip, text: str):
    with capture_output() as cap:
        res = ip.run_cell(text)
    out = "\n".join(o.data.get("text/plain", "") for o in cap.outputs) + cap.stdout + cap.stderr
    return res, out


def _magics(ip):
    return ip.magics_manager.registry["PolylabMagics"]


@pytest.mark.parametrize("line", ['scop "abc', "scop 'x", 'schedule "', 'scop --param "N=8'])
def test_an_option_line_shlex_cannot_split_is_a_usage_error(ip, line):
    res, out = run(ip, f"%%{line}\n{SWEEP}")
    assert "No closing quotation" in out and "Traceback" not in out
    assert not isinstance(res.error_in_exec, ValueError)


def test_polyrun_with_an_unreadable_line(ip):
    res, out = run(ip, '%polyrun "abc')
    assert "No closing quotation" in out and "Traceback" not in out


@pytest.mark.parametrize("cell", ["", "   \n\t\n", "\n\n"])
def test_a_whitespace_only_cell_stores_nothing(ip, cell):
    ip.user_ns.pop("empty", None)
    res, out = run(ip, "%%scop empty\n" + cell)
    assert "Traceback" not in out
    assert "empty" not in ip.user_ns


def test_a_region_without_statements_stores_nothing(ip):
    ip.user_ns.pop("empty", None)
    res, out = run(ip, "%%scop empty\n#pragma scop\n#pragma endscop\n")
    assert "empty" not in ip.user_ns and "Traceback" not in out


@pytest.mark.parametrize("value", ["-5", "0"])
def test_pictures_of_empty_domains(ip, value):
    ip.user_ns.pop("sw", None)
    res, out = run(ip, f"%%scop sw --param N={value}\n{SWEEP}")
    assert "Traceback" not in out and "internal error" not in out
    assert isinstance(ip.user_ns["sw"], Scop)
    assert f"N = {value}" in out
    assert _magics(ip).last_error is None


def test_a_picture_of_more_than_200000_points_is_refused_and_the_scop_stored(ip):
    ip.user_ns.pop("big", None)
    res, out = run(ip, f"%%scop big --param N=500\n{SWEEP}")
    assert "Traceback" not in out and "_TooMany" not in out and "_Enough" not in out
    assert "more than 200,000 points" in out and "too many to draw" in out
    assert "SCoP stored as `big`" in out  # the summary is still shown, without the picture
    assert isinstance(ip.user_ns["big"], Scop)


def test_a_picture_at_a_parameter_beyond_64_bits(ip):
    ip.user_ns.pop("huge", None)
    res, out = run(ip, f"%%scop huge --param N=9999999999999999999\n{SWEEP}")
    assert "Traceback" not in out and "too many to draw" in out and "islpy" not in out
    res, out = run(ip, "%%schedule huge --param N=99999999999999999999999\nwavefront")
    assert "Traceback" not in out and "too many to draw" in out and "islpy" not in out
    assert isinstance(_magics(ip).last_error, type(None)) or isinstance(_magics(ip).last_error, PolylabError)


def test_polyrun_with_a_parameter_beyond_every_integer_type(ip):
    run(ip, f"%%scop sw -q\n{SWEEP}")
    run(ip, "%%schedule sw s -q\nwavefront")
    for value in ("10**20", "100000000000000000000"):
        res, out = run(ip, f"%polyrun s --param N={value}")
        assert "Traceback" not in out
        assert isinstance(_magics(ip).last_error, PolylabError)


def test_interrupting_polyrun_shows_a_message_not_a_traceback(ip, monkeypatch):
    from polylab.notebook import backend

    run(ip, f"%%scop sw -q\n{SWEEP}")
    run(ip, "%%schedule sw s -q\nwavefront")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(backend, "experiment", interrupted)
    res, out = run(ip, "%polyrun s --param N=8 --force")
    assert "interrupted" in out and "Traceback" not in out and "KeyboardInterrupt" not in out
    assert res.error_in_exec is None


def test_interrupting_schedule_auto_shows_a_message(ip, monkeypatch):
    from polylab.notebook import backend

    run(ip, f"%%scop sw -q\n{SWEEP}")
    monkeypatch.setattr(backend, "parse_schedule", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    res, out = run(ip, "%%schedule sw s\nauto")
    assert "interrupted" in out and "KeyboardInterrupt" not in out


class _ClosedPipe(io.TextIOBase):
    """A standard output whose reader has gone (``| head -1``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no descriptor")


def test_a_closed_pipe_ends_the_command_quietly(monkeypatch, capsys):
    from polylab.cli import main

    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    status = main(["deps", str(polylab.example_path("sweep2d.c")), "--json"])
    assert status == 141
    assert "Traceback" not in capsys.readouterr().err


def test_a_closed_pipe_in_a_real_pipeline(tmp_path):
    import subprocess

    body = "\n".join(f"  a[i] = a[i] + {k}.0;" for k in range(30))
    src = tmp_path / "many.c"
    src.write_text(f"double a[N];\nfor (i = 0; i < N; i++) {{\n{body}\n}}\n")
    script = f"{sys.executable} -m polylab deps {src} --json | head -1; echo ${{PIPESTATUS[0]}} >&2"
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=600)
    assert out.stdout.strip() == "{"
    assert "Traceback" not in out.stderr and "BrokenPipeError" not in out.stderr
    assert out.stderr.strip().splitlines()[-1] in ("141", "0")  # 0 only if the output fit in the pipe


def test_bench_force_builds_in_a_fresh_cache(monkeypatch, tmp_path):
    import os

    from polylab.cli import bench as bench_cli

    monkeypatch.setenv("POLYLAB_CACHE", str(tmp_path / "usual"))
    with bench_cli._fresh_cache(True):
        fresh = os.environ["POLYLAB_CACHE"]
        assert fresh != str(tmp_path / "usual") and os.path.isdir(fresh) and not os.listdir(fresh)
    assert os.environ["POLYLAB_CACHE"] == str(tmp_path / "usual") and not os.path.exists(fresh)
    with bench_cli._fresh_cache(False):
        assert os.environ["POLYLAB_CACHE"] == str(tmp_path / "usual")
    from polylab.cli import build_parser

    args = build_parser().parse_args(["bench", "sweep2d.c", "--force"])
    assert args.force
