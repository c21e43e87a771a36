"""Binder, tested without Docker: the files agree with each other and with pyproject.toml, ``start`` sets the
OpenMP thread count from the CPU quota (cgroup v2, v1, none) and execs the command it is given, the README's
badge opens the first lab, and where jupyter-repo2docker installs, the Dockerfile it writes (``--no-build``)
installs the compiler, the requirements, runs postBuild and starts through ``start``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def _lines(name: str) -> list[str]:
    return [ln.strip() for ln in (BINDER / name).read_text().splitlines() if ln.strip() and not ln.startswith("#")]


def _name(req: str) -> str:
    return re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower()


def test_runtime_pin_matches_pyproject():
    pin = (BINDER / "runtime.txt").read_text().strip()
    m = re.fullmatch(r"python-(\d+)\.(\d+)", pin)
    assert m, f"runtime.txt pins a Python version: {pin!r}"
    need = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    low = tuple(int(x) for x in re.search(r">=\s*(\d+)\.(\d+)", need).groups())
    assert (int(m.group(1)), int(m.group(2))) >= low


def test_requirements_are_the_package_dependencies():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert sorted(_lines("requirements.txt"), key=_name) == sorted(deps, key=_name)


def test_apt_has_a_c_compiler_with_openmp():
    apt = _lines("apt.txt")
    assert "build-essential" in apt and "libgomp1" in apt  # gcc, libc headers, make; the OpenMP runtime


def test_post_build_and_start_are_strict_executable_scripts():
    for name in ("postBuild", "start"):
        text = (BINDER / name).read_text()
        assert text.startswith("#!/bin/bash\n") and "\nset -e\n" in text, name
        assert os.access(BINDER / name, os.X_OK), f"binder/{name} is executable"
    post = (BINDER / "postBuild").read_text()
    assert "pip install --no-deps -e ." in post and "rm -rf solutions tests" in post
    start = (BINDER / "start").read_text().rstrip().splitlines()
    assert start[-1] == 'exec "$@"'
    assert "export OMP_WAIT_POLICY=passive" in start


def _start(tmp_path: Path, files: dict[str, str]) -> tuple[str, str]:
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    env = {**os.environ, "POLYLAB_CGROUP_ROOT": str(root), "OMP_NUM_THREADS": "99", "OMP_WAIT_POLICY": "active"}
    out = subprocess.run(["bash", str(BINDER / "start"), "sh", "-c", 'echo "$OMP_NUM_THREADS $OMP_WAIT_POLICY $0"',
                          "passed"], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[2] == "passed"  # exec "$@": the command and its arguments run as given
    return out[0], out[1]


@pytest.mark.parametrize("files,threads", [
    ({"cpu.max": "150000 100000\n"}, "2"),                  # v2: 1.5 CPUs -> 2 threads
    ({"cpu.max": "400000 100000\n"}, "4"),
    ({"cpu/cpu.cfs_quota_us": "250000\n", "cpu/cpu.cfs_period_us": "100000\n"}, "3"),  # v1
    ({"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, "1"),
])
def test_start_sets_threads_from_the_cpu_quota(tmp_path, files, threads):
    assert _start(tmp_path, files) == (threads, "passive")


@pytest.mark.parametrize("files", [{"cpu.max": "max 100000\n"},
                                   {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, {}])
def test_start_without_a_quota_uses_the_cpus(tmp_path, files):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_THREAD_LIMIT")}
    nproc = subprocess.run(["nproc"], capture_output=True, text=True, env=env).stdout.strip()
    assert _start(tmp_path, files) == (nproc, "passive")


def test_readme_badge_opens_the_first_lab():
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"\[!\[Binder\]\(https://mybinder\.org/badge_logo\.svg\)\]\((https://mybinder\.org/v2/gh/[^)]+)\)",
                  readme)
    assert m, "the README has a Binder badge"
    url = m.group(1)
    first = sorted(p.name for p in (ROOT / "labs").glob("*.ipynb"))[0]
    assert url.endswith(f"?urlpath=lab/tree/labs/{first}")


def test_student_release_excludes_solutions_and_hidden_cases():
    """What Binder opens: the build context leaves out .git, solutions/, instructor/ (the hidden cases) and
    tests/ (``.dockerignore``, which repo2docker reads), and postBuild removes them again; the README's main
    command opens labs/ only; no hidden case (its label) is in labs/, solutions/ or the package."""
    post = (BINDER / "postBuild").read_text()
    assert "rm -rf solutions tests instructor" in post
    ignored = {ln.strip().strip("/") for ln in (ROOT / ".dockerignore").read_text().splitlines()
               if ln.strip() and not ln.startswith("#")}
    assert {".git", "solutions", "instructor", "tests"} <= ignored
    assert (ROOT / "instructor" / "hidden").is_dir() and not (ROOT / "labs" / "hidden").exists()
    assert not (ROOT / "solutions" / "hidden").exists()
    readme = (ROOT / "README.md").read_text()
    assert "jupyter lab labs/" in readme
    from polylab.grading import get_lab, lab_names, load_hidden

    labels = {c.label for n in lab_names() for cases in load_hidden(ROOT / "instructor" / "hidden", get_lab(n)).values()
              for c in cases if len(c.label) > 12}
    assert labels
    shipped = [*(ROOT / "labs").glob("*.ipynb"), *(ROOT / "solutions").glob("*"), *(ROOT / "polylab").rglob("*.py")]
    for path in shipped:
        text = path.read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text or path.parent.name != "labs"
        found = [lb for lb in labels if lb in text]
        assert not found, f"{path} holds hidden cases: {found}"


def test_repo2docker_writes_the_expected_dockerfile():
    r2d = shutil.which("jupyter-repo2docker") or shutil.which("repo2docker")
    if r2d is None:
        pytest.skip("jupyter-repo2docker is not installed (pip install jupyter-repo2docker)")
    proc = subprocess.run([r2d, "--no-build", "--debug", str(ROOT)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dockerfile = proc.stdout + proc.stderr
    assert "python=3.11" in dockerfile or "python-3.11" in dockerfile
    assert re.search(r"apt-get install .*build-essential libgomp1", dockerfile)
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in dockerfile
    assert "RUN ./binder/postBuild" in dockerfile
    assert 'R2D_ENTRYPOINT="${REPO_DIR}/binder/start"' in dockerfile
