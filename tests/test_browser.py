"""The real-browser test: JupyterLab started headless, Debian's chromium driven by Playwright (the system
browser, launched by path; no browser download), each solved lab opened, all cells run, and once the status
bar says the kernel is Idle (the execution indicator is not reliable): no error output, every picture
loaded, every widget rendered, and moving a slider of an explorer changes its picture. Screenshots go to
``build/browser/`` for a person to look at.

Skips, with the reason, where Playwright, chromium or JupyterLab is missing. Bounded: one JupyterLab and
one browser for all labs, a time limit per lab (``POLYLAB_BROWSER_LAB_SECONDS``, default 420). Every solved
lab runs, on CI too (each lab's see-why parts open, its explorers and pictures are drawn, its checks pass).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOLVED = sorted((ROOT / "solutions").glob("*.ipynb"))
SHOTS = ROOT / "build" / "browser"
LAB_SECONDS = float(os.environ.get("POLYLAB_BROWSER_LAB_SECONDS", "420"))
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]

pytestmark = pytest.mark.browser


def _chromium() -> str | None:
    for name in (os.environ.get("POLYLAB_CHROMIUM", ""), "chromium", "chromium-browser", "/usr/bin/chromium"):
        if name and (path := shutil.which(name)):
            return path
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """A headless JupyterLab on a copy of the solved notebooks; yields (base URL, token, folder)."""
    pytest.importorskip("playwright.sync_api", reason="the Playwright Python package is not installed "
                                                      "(pip install playwright; no browser download needed)")
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed")
    if _chromium() is None:
        pytest.skip("no chromium on this machine (apt-get install chromium)")
    from polylab.toolchain import c_compiler

    if c_compiler() is None:
        pytest.skip("the labs compile code: no C compiler here")
    folder = tmp_path_factory.mktemp("notebooks")
    for nb in SOLVED:
        shutil.copy(nb, folder / nb.name)
    port, token = _free_port(), uuid.uuid4().hex
    settings = tmp_path_factory.mktemp("lab-settings")
    for plugin, values in (("notebook-extension/tracker", {"windowingMode": "none"}),  # every cell in the DOM
                           ("apputils-extension/notification", {"fetchNews": "false"})):
        path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "JUPYTER_CONFIG_DIR": str(tmp_path_factory.mktemp("jupyter-config")), "MPLBACKEND": "Agg",
           "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
           f"--ServerApp.root_dir={folder}", f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
           "--ServerApp.disable_check_xsrf=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(folder.parent / "jupyterlab.log", "wb")
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("JupyterLab did not start: " + (folder.parent / "jupyterlab.log").read_text()[-2000:])
                time.sleep(0.5)
        yield base, token, folder
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
        log.close()


@pytest.fixture(scope="module")
def browser(lab_server, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=_chromium(), headless=True,
            args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000})
        try:
            yield context
        finally:
            context.close()


_STATE_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent.trim());
  const status = [...document.querySelectorAll('.jp-StatusBar-TextItem')].map(e => e.textContent).join(' | ');
  return {prompts, status};
}"""

_CHECKS_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const errors = [...panel.querySelectorAll('[data-mime-type="application/vnd.jupyter.error"]')]
      .map(e => e.textContent.slice(0, 300));
  const stderr = [...panel.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')]
      .map(e => e.textContent.slice(0, 300));
  const imgs = [...panel.querySelectorAll('.jp-OutputArea-output img')];
  const broken = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).length;
  const views = panel.querySelectorAll('.jp-OutputArea-output .jupyter-widgets').length;
  const text = panel.innerText;
  return {errors, stderr, images: imgs.length, broken, views,
          widgetErrors: (text.match(/Error displaying widget|Loading widget\\.\\.\\./g) || []).length,
          internal: text.includes('internal error in polylab'),
          failedChecks: (text.match(/\\u2718 lab\\d+\\.q\\d+/g) || []).length,
          passedChecks: (text.match(/\\u2714 lab\\d+\\.q\\d+/g) || []).length};
}"""

_SLIDER_IMAGE_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  for (const handle of panel.querySelectorAll('.widget-slider .noUi-handle')) {
    let box = handle.closest('.widget-vbox');
    while (box && !box.querySelector('img.widget-image')) box = box.parentElement.closest('.widget-vbox');
    if (box) {
      handle.setAttribute('data-polylab-test', 'slider');
      return box.querySelector('img.widget-image').src;
    }
  }
  return null;
}"""


def _screenshots(page, stem: str, limit: int = 12) -> None:
    """The whole window, then each output that holds a picture, a widget or a check result."""
    for old in SHOTS.glob(f"{stem}*.png"):
        old.unlink()
    page.screenshot(path=str(SHOTS / f"{stem}.png"))
    outputs = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell-outputArea").filter(
        has=page.locator("img, .jupyter-widgets, .polylab-grade"))
    for k in range(min(outputs.count(), limit)):
        outputs.nth(k).screenshot(path=str(SHOTS / f"{stem}-output-{k + 1:02d}.png"))


def _wait_until_done(page, deadline: float) -> dict:
    """Every code cell has run (a number in its prompt, none queued) and the status bar says Idle, twice
    in a row one second apart."""
    stable = 0
    state = None
    while time.monotonic() < deadline:
        state = page.evaluate(_STATE_JS)
        done = state and state["prompts"] and all(p not in ("[ ]:", "[*]:", "[]:") and p != "" for p in state["prompts"])
        stable = stable + 1 if done and "Idle" in state["status"] else 0
        if stable >= 2:
            return state
        time.sleep(1.0)
    pytest.fail(f"the notebook did not finish within {LAB_SECONDS:g} s: {state}")


def _browser_labs() -> list[str]:
    """Every solved lab."""
    return [p.name for p in SOLVED]


@pytest.mark.parametrize("notebook", _browser_labs())
def test_solved_lab_runs_in_the_browser(lab_server, browser, notebook):
    base, token, folder = lab_server
    SHOTS.mkdir(parents=True, exist_ok=True)
    stem = Path(notebook).stem
    source = json.loads((folder / notebook).read_text())
    code = "\n".join("".join(c["source"]) for c in source["cells"] if c["cell_type"] == "code")
    code_cells = sum(1 for c in source["cells"] if c["cell_type"] == "code")
    page = browser.new_page()
    try:
        # a workspace of its own, reset: only this notebook is open
        page.goto(f"{base}/lab/workspaces/{stem}/tree/{notebook}?reset&token={token}", timeout=120_000)
        page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=120_000)
        deadline = time.monotonic() + LAB_SECONDS
        while "Idle" not in (page.evaluate(_STATE_JS) or {}).get("status", ""):  # the kernel is up
            assert time.monotonic() < deadline, "the kernel never became idle"
            time.sleep(0.5)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        _wait_until_done(page, deadline)
        page.wait_for_timeout(1500)  # let the last images decode
        result = page.evaluate(_CHECKS_JS)
        state = page.evaluate(_STATE_JS)
        assert len(state["prompts"]) == code_cells, "every code cell is on the page"
        _screenshots(page, stem)
        assert not result["errors"], result["errors"]
        assert not result["internal"], "a polylab internal error box is shown"
        assert result["images"] > 0 and result["broken"] == 0, result
        assert result["widgetErrors"] == 0, result
        assert result["failedChecks"] == 0 and result["passedChecks"] > 0, result
        if "Explorer(" in code:
            assert result["views"] > 0, "the explorers rendered no widget"
        if "ScheduleExplorer(" in code or "TilingExplorer(" in code:
            before = page.evaluate(_SLIDER_IMAGE_JS)
            assert before, "an explorer with a slider and a picture is on the page"
            handle = page.locator("[data-polylab-test=slider]")
            handle.scroll_into_view_if_needed()
            handle.focus()
            page.keyboard.press("ArrowRight")
            after, waited = before, 0.0
            while after == before and waited < 60:
                page.wait_for_timeout(250)
                waited += 0.25
                after = page.evaluate(_SLIDER_IMAGE_JS)
            handle.locator("xpath=ancestor::div[contains(@class, 'jp-Cell-outputArea')]").screenshot(
                path=str(SHOTS / f"{stem}-slider-moved.png"))
            assert after != before, "moving the slider did not change the explorer's picture"
    finally:
        page.close()
