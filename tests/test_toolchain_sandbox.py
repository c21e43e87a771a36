"""The bubblewrap sandbox of the toolchain: what a command inside sees (its own processes only, no network,
a read-only system and Python, a private /tmp, one writable folder, none of the caller's files) and that
every process it starts dies with it, within the time, memory and output limits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import polylab
from polylab.toolchain import sandbox as sb

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(polylab.__file__).resolve().parent

if sb.unavailable() is not None:
    pytest.skip(f"no isolated sandbox here: {sb.unavailable()}", allow_module_level=True)


def _box(tmp_path: Path, **kw) -> sb.Sandbox:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    opts = dict(workdir=work, timeout=20, readonly=(PACKAGE,), env={"PYTHONPATH": str(PACKAGE.parent)})
    opts.update(kw)
    return sb.Sandbox(**opts)


def _py(box: sb.Sandbox, code: str) -> sb.SandboxResult:
    return sb.run(box, [sys.executable, "-c", code])


def test_what_the_command_sees(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("hidden")
    code = """
import os, socket, sys
print(os.getcwd())
print(sorted(p for p in os.listdir('/proc') if p.isdigit()))
for target in ('/usr/polylab-x', sys.prefix + '/polylab-x', os.path.dirname(__import__('polylab').__file__) + '/x'):
    try:
        open(target, 'w'); print('wrote', target)
    except OSError as e:
        print('refused', e.errno)
open('mine.txt', 'w').write('ok'); open('/tmp/t', 'w').write('ok')
print(os.path.exists(%r), os.path.exists(%r), os.path.exists(%r))
try:
    socket.create_connection(('1.1.1.1', 80), timeout=3); print('network')
except OSError:
    print('no network')
print(os.getuid())
""" % (str(secret), str(ROOT / "solutions"), str(ROOT / "tests"))
    r = _py(_box(tmp_path), code)
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().splitlines()
    assert lines[0] == sb.INSIDE
    assert len(eval(lines[1])) <= 3  # the namespace's reaper, the command (and nothing of the host)
    assert lines[2:5] == ["refused 30"] * 3  # EROFS: the system, Python and the package are read-only
    assert lines[5] == "False False False"  # the caller's files, the repository's other folders
    assert lines[6] == "no network"
    assert lines[7] != "0"
    assert (tmp_path / "work" / "mine.txt").read_text() == "ok"


def test_private_tmp_is_not_the_hosts(tmp_path):
    marker = Path("/tmp") / f"polylab-sbx-{os.getpid()}"
    marker.write_text("host")
    try:
        r = _py(_box(tmp_path), f"import os; print(os.path.exists({str(marker)!r})); open('/tmp/x-{os.getpid()}', 'w')")
        assert r.stdout.decode().strip() == "False"
        assert not Path(f"/tmp/x-{os.getpid()}").exists()
    finally:
        marker.unlink()


def _sleepers(mark: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if mark in ln and "ps -eo" not in ln]


def test_daemons_die_with_the_command_and_at_the_time_limit(tmp_path):
    mark = f"{os.getpid() % 1000 + 7000}.5"
    r = sb.run(_box(tmp_path), ["sh", "-c", f"setsid env -i sleep {mark} & echo started"])
    assert r.returncode == 0 and b"started" in r.stdout
    assert _sleepers(mark) == []  # gone as soon as run() returns
    start = time.monotonic()
    r = sb.run(_box(tmp_path, timeout=2), ["sh", "-c", f"setsid sleep {mark} & while :; do :; done"])
    assert r.timed_out and time.monotonic() - start < 10
    assert _sleepers(mark) == []


def test_standard_input_is_given(tmp_path):
    data = b"x" * 300_000  # more than a pipe holds: nothing blocks
    r = sb.run(_box(tmp_path), ["wc", "-c"], stdin=data)
    assert r.returncode == 0 and r.stdout.split()[0] == b"300000"


def test_memory_and_output_limits(tmp_path):
    r = _py(_box(tmp_path, memory_mb=300), "x = bytearray(600 * 2**20)")
    assert r.returncode != 0 and b"MemoryError" in r.stderr
    r = _py(_box(tmp_path, output_bytes=1000), "import sys\nfor _ in range(10000): sys.stdout.write('y' * 1000)")
    assert r.returncode == 0 and len(r.stdout) == 1000 and r.truncated


def test_read_output_is_data_and_follows_no_link(tmp_path):
    box = _box(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("instructor only")
    code = (f"import os; os.makedirs('out', exist_ok=True); os.symlink({str(secret)!r}, 'out/link.json'); "
            f"os.symlink({str(tmp_path)!r}, 'dirlink'); open('out/big.json', 'w').write('x' * 5000); "
            "open('out/ok.json', 'w').write('{}')")
    assert _py(box, code).returncode == 0
    assert sb.read_output(box.workdir, "out/ok.json", 100) == b"{}"
    assert sb.read_output(box.workdir, "out/link.json", 100) is None
    assert sb.read_output(box.workdir, "dirlink/secret.txt", 100) is None
    assert sb.read_output(box.workdir, "out/big.json", 100) is None
    assert sb.read_output(box.workdir, "out/absent.json", 100) is None
    with pytest.raises(ValueError):
        sb.read_output(box.workdir, "../secret.txt", 100)


def test_unavailable_names_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("POLYLAB_BWRAP", str(tmp_path / "no-bwrap"))
    assert "bubblewrap (bwrap) is not installed" in sb.unavailable()
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("POLYLAB_BWRAP", str(fake))
    said = sb.unavailable()
    assert "user namespaces" in said and "No permissions" in said


def test_the_weaker_fence_kills_its_processes_too(tmp_path):
    mark = f"{os.getpid() % 1000 + 8000}.5"
    r = sb.run(_box(tmp_path, isolated=False, timeout=3), ["sh", "-c", f"setsid sleep {mark} & sleep 100"])
    assert r.timed_out
    assert _sleepers(mark) == []
