"""deploy/: the zero-to-jupyterhub values (limits per student, OpenMP following the CPU limit, persistent
homes, culling), the nbgitpuller links, and a real local JupyterHub: two students log in with chromium,
pull the labs with the nbgitpuller link, run lab 1, and each one's notebook and outputs are in their own
home only.

The hub test needs jupyterhub, nbgitpuller, configurable-http-proxy (npm), Playwright and chromium; it skips,
naming what is missing, where one is absent (.ci/run installs them)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
sys.path.insert(0, str(DEPLOY))
import links  # noqa: E402 - deploy/links.py, a script beside the config

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]


def test_the_hub_values():
    values = yaml.safe_load((DEPLOY / "config.yaml").read_text())
    user = values["singleuser"]
    assert user["cpu"]["limit"] >= 1 and user["memory"]["limit"].endswith("G")
    assert user["extraEnv"]["OMP_NUM_THREADS"] == str(user["cpu"]["limit"])
    assert user["storage"]["type"] == "dynamic" and user["storage"]["homeMountPath"] == "/home/jovyan"
    assert values["cull"]["enabled"] and values["cull"]["timeout"] > 0 and values["cull"]["users"] is False
    assert user["image"]["name"] and user["cmd"] is None  # the image's own start (binder/start) runs
    # binder/start, the image's entry point, gives OpenMP the CPU limit the pod gets (cgroup v2 cpu.max)
    cgroup = Path(os.environ.get("TMPDIR", "/tmp")) / f"polylab-cgroup-{os.getpid()}"
    cgroup.mkdir(exist_ok=True)
    (cgroup / "cpu.max").write_text(f"{int(user['cpu']['limit'] * 100000)} 100000\n")
    out = subprocess.run(["bash", str(ROOT / "binder" / "start"), "sh", "-c", "echo $OMP_NUM_THREADS"],
                         env={**os.environ, "POLYLAB_CGROUP_ROOT": str(cgroup)}, capture_output=True, text=True)
    shutil.rmtree(cgroup)
    assert out.stdout.strip() == str(user["cpu"]["limit"])


def test_links_open_each_lab_after_the_pull():
    url = links.link("https://hub.example.edu/", "https://github.com/org/polylab-labs.git", "lab1_affine.ipynb")
    parsed = urlparse(url)
    assert parsed.path == "/hub/user-redirect/git-pull"
    q = parse_qs(parsed.query)
    assert q == {"repo": ["https://github.com/org/polylab-labs.git"], "branch": ["main"],
                 "urlpath": ["lab/tree/polylab-labs/lab1_affine.ipynb"]}
    out = subprocess.run([sys.executable, str(DEPLOY / "links.py"), "https://h", "https://g/x"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == len(list((ROOT / "labs").glob("*.ipynb"))) and out[0].startswith("lab1_affine: https://h/hub/")


# -- a real hub -------------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chromium() -> str | None:
    for name in (os.environ.get("POLYLAB_CHROMIUM", ""), "chromium", "chromium-browser", "/usr/bin/chromium"):
        if name and (path := shutil.which(name)):
            return path
    return None


def _needs() -> None:
    for module, why in (("jupyterhub", "pip install jupyterhub"), ("nbgitpuller", "pip install nbgitpuller"),
                        ("playwright.sync_api", "pip install playwright")):
        pytest.importorskip(module, reason=f"{module} is not installed ({why})")
    if shutil.which("configurable-http-proxy") is None:
        pytest.skip("configurable-http-proxy is not installed (npm install -g configurable-http-proxy)")
    if _chromium() is None:
        pytest.skip("no chromium (apt-get install chromium)")
    if shutil.which("git") is None:
        pytest.skip("no git")


HUB_CONFIG = """
c = get_config()  # noqa
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.JupyterHub.db_url = "sqlite:///{work}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{work}/cookie_secret"
c.JupyterHub.pid_file = "{work}/hub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = "lab-password"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{homes}/{{username}}"
c.Spawner.cmd = ["{python}", "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.args = {args!r}
c.Spawner.environment = {environment!r}
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.JupyterHub.cleanup_servers = True
"""

_STATE_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent.trim());
  const status = [...document.querySelectorAll('.jp-StatusBar-TextItem')].map(e => e.textContent).join(' | ');
  return {prompts, status};
}"""


@pytest.fixture
def hub(tmp_path):
    """A JupyterHub on this machine (dummy logins, one local process per student, each with a home of its own
    under tmp_path/homes); yields (base URL, homes, release repository)."""
    _needs()
    work, homes = tmp_path / "hub", tmp_path / "homes"
    work.mkdir()
    homes.mkdir()
    release = tmp_path / "polylab-labs"  # the student release: labs/ only, in a repository of its own
    release.mkdir()
    for nb in (ROOT / "labs").glob("*.ipynb"):
        shutil.copy(nb, release / nb.name)
    git = ["git", "-c", "user.name=instructor", "-c", "user.email=i@example.edu"]
    for cmd in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "labs"]):
        subprocess.run(git + cmd, cwd=release, check=True)
    settings = tmp_path / "lab-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port = _free_port()
    args = ["--LabApp.expose_app_in_browser=True"] + (["--allow-root"] if os.geteuid() == 0 else [])
    environment = {"PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
                   "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"), "PATH": os.environ["PATH"]}
    (work / "jupyterhub_config.py").write_text(HUB_CONFIG.format(
        port=port, hub_port=_free_port(), api_port=_free_port(), work=work, homes=homes, python=sys.executable,
        args=args, environment=environment))
    log = open(work / "hub.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(work / "jupyterhub_config.py")], cwd=work,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/hub/api", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("JupyterHub did not start: " + (work / "hub.log").read_text()[-3000:])
                time.sleep(0.5)
        yield base, homes, release
    finally:
        children = _descendants(proc.pid)  # the proxy and the students' servers, started by this hub
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
        for pid in children:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        log.close()


def _descendants(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _wait_idle_and_done(page, deadline: float) -> None:
    stable = 0
    while time.monotonic() < deadline:
        state = page.evaluate(_STATE_JS)
        done = state and state["prompts"] and all(p not in ("[ ]:", "[*]:", "[]:", "") for p in state["prompts"])
        stable = stable + 1 if done and "Idle" in state["status"] else 0
        if stable >= 2:
            return
        time.sleep(1.0)
    pytest.fail(f"lab 1 did not finish: {page.evaluate(_STATE_JS)}")


def _student(context, base: str, name: str, link: str) -> None:
    """Log in, pull the labs with the link, mark the notebook as this student's, run it all, save it."""
    page = context.new_page()
    page.goto(f"{base}/hub/login", timeout=120_000)
    page.fill("#username_input", name)
    page.fill("#password_input", "lab-password")
    page.click("#login_submit")
    page.wait_for_url("**/user/**", timeout=240_000)
    page.goto(link, timeout=240_000)
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=240_000)
    deadline = time.monotonic() + 600
    while "Idle" not in (page.evaluate(_STATE_JS) or {}).get("status", ""):
        assert time.monotonic() < deadline, "the kernel never became idle"
        time.sleep(0.5)
    page.evaluate("""(name) => {
      const nb = window.jupyterapp.shell.currentWidget.content;
      nb.model.sharedModel.insertCell(0, {cell_type: 'code', source: `print("student " + "${name}")`.replace('${name}', name)});
    }""", name)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    _wait_idle_and_done(page, deadline)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_timeout(2000)
    page.close()


@pytest.mark.browser
@pytest.mark.slow
def test_two_students_on_a_real_hub(hub):
    from playwright.sync_api import sync_playwright

    base, homes, release = hub
    link = links.link(base, str(release), "lab1_affine.ipynb")
    start = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_FLAGS)
        try:
            for name in ("alice", "bob"):
                context = browser.new_context(viewport={"width": 1300, "height": 900})  # cookies of one student
                _student(context, base, name, link)
                context.close()
        finally:
            browser.close()
    for me, other in (("alice", "bob"), ("bob", "alice")):
        pulled = homes / me / "polylab-labs"
        assert (pulled / ".git").is_dir(), f"the link did not pull the labs into {me}'s home"
        assert sorted(p.name for p in pulled.glob("*.ipynb")) == sorted(p.name for p in release.glob("*.ipynb"))
        nb = json.loads((pulled / "lab1_affine.ipynb").read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(c.get("execution_count") for c in code), f"{me}'s lab 1 was not run to the end"
        outputs = json.dumps([c.get("outputs") for c in code])
        assert f"student {me}" in outputs and f"student {other}" not in outputs
        assert "missing" in outputs  # the checks of an untouched lab ran and said what is missing
        for path in (homes / other).rglob("*"):
            if path.is_file() and path.stat().st_size < 5_000_000:
                assert f"student {me}".encode() not in path.read_bytes(), f"{me}'s work is in {other}'s home: {path}"
    assert json.loads((release / "lab1_affine.ipynb").read_text()) == json.loads((ROOT / "labs" / "lab1_affine.ipynb")
                                                                                  .read_text())
    print(f"hub test: two students, {time.monotonic() - start:.0f} s")
