"""JupyterLab, as a reader runs the book locally or on Binder, driven by headless Chromium.

A Lab server is started on copies of the chapters (so autosave never touches the repository) with
`DPMIA_FAST=1`. Chapter 1 is run top to bottom; a slider of its first explorer is moved and the
figure must change; the MyST markup (jupyterlab-myst) must render theorem boxes, not raw text.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import REPORT, ROOT, SHOTS
from playwright.sync_api import TimeoutError as PlaywrightTimeout

TOKEN = "dpmia-browser-test"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, browser):
    tmp = tmp_path_factory.mktemp("lab")
    nbdir = tmp / "notebooks"
    shutil.copytree(ROOT / "notebooks", nbdir, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    tracker = tmp / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)  # render every cell, so that the whole chapter can be inspected
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port = _free_port()
    env = dict(os.environ, DPMIA_FAST="1", JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ip=127.0.0.1", f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={nbdir}",
           "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
           "--ServerApp.disable_check_xsrf=True"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp / "lab.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited: {(tmp / 'lab.log').read_text()[-2000:]}")
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("JupyterLab did not start within 60 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _open(browser, url, name):
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("http://127.0.0.1")
              else r.abort())
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{url}/lab/tree/{name}?reset&token={TOKEN}", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell >> visible=true", timeout=120_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle'; }", timeout=120_000)
    return ctx, page, errors


MARKUP = """() => {
  const md = [...document.querySelectorAll('.jp-MarkdownOutput')].map(e => e.innerText).join('\\n');
  return {boxes: document.querySelectorAll('aside.myst-proof').length,
          titles: [...document.querySelectorAll('.myst-proof-title')].slice(0, 3).map(e => e.innerText),
          raw: (md.match(/\\{(prf:[a-z]+|cite|eq)\\}|```\\{prf/g) || []).slice(0, 5)};
}"""


def _prf_directives(name):
    """How many prf: directives the chapter's Markdown cells hold (each should render as one box)."""
    cells = json.loads((ROOT / "notebooks" / name).read_text())["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return len(re.findall(r"(?:```|:::)\{prf:[a-z]+\}", text))


def test_lab_renders_myst_chapter2(lab, browser):
    name = "02_bounding_from_epsilon.ipynb"
    expected = _prf_directives(name)
    assert expected >= 3, expected
    ctx, page, errors = _open(browser, lab, name)
    try:
        # Markdown cells render one by one after the notebook opens: wait for all the boxes, not the first.
        try:
            page.wait_for_function(f"() => document.querySelectorAll('aside.myst-proof').length >= {expected}",
                                   timeout=90_000, polling=250)
        except PlaywrightTimeout:
            pass  # the assertion below reports what did render
        found = page.evaluate(MARKUP)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.evaluate("() => document.querySelector('aside.myst-proof').scrollIntoView()")
        page.wait_for_timeout(500)
        page.screenshot(path=str(SHOTS / "lab-chapter2-theorems.png"))
    finally:
        ctx.close()
    assert found["boxes"] == expected, (expected, found)
    assert not found["raw"], f"raw MyST markup in rendered cells: {found['raw']}"
    REPORT.append(f"JupyterLab ch2: {found['boxes']} prf boxes rendered (e.g. {found['titles'][:2]}), "
                  "no raw {prf:}/{cite}/{eq} markup; screenshot _build/browser/lab-chapter2-theorems.png")


RUN_STATE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const cells = w.content.widgets.filter(c => c.model.type === 'code');
  const k = w.sessionContext.session.kernel;
  const errors = cells.flatMap(c => c.model.outputs.toJSON()).filter(o => o.output_type === 'error')
                      .map(o => o.ename + ': ' + o.evalue);
  return {n: cells.length, done: cells.filter(c => c.model.executionCount !== null).length,
          idle: k.status === 'idle', errors};
}"""

FIRST_EXPLORER_IMG = """() => {
  const box = [...document.querySelectorAll('.widget-interact')].find(
      b => b.querySelector('.noUi-handle, input[type=range]') && b.querySelector('img'));
  if (!box) return null;
  box.setAttribute('data-dpmia-test', 'explorer');
  return box.querySelector('img').getAttribute('src').length + ':' +
      box.querySelector('img').getAttribute('src').slice(-64);
}"""


def test_lab_runs_chapter1_and_slider_moves_figure(lab, browser):
    ctx, page, errors = _open(browser, lab, "01_hypothesis_testing.ipynb")
    try:
        t0 = time.perf_counter()
        page.click("div.lm-MenuBar-itemLabel:text-is('Run')")
        page.click("div.lm-Menu-itemLabel:text-is('Run All Cells')")
        page.wait_for_function(
            f"() => {{ const s = ({RUN_STATE})(); return s.idle && s.done === s.n; }}",
            timeout=300_000, polling=500)
        state = page.evaluate(RUN_STATE)
        run_s = time.perf_counter() - t0
        assert not state["errors"], state["errors"]
        page.wait_for_function(f"() => ({FIRST_EXPLORER_IMG})() !== null", timeout=60_000)
        before = page.evaluate(FIRST_EXPLORER_IMG)
        box = page.locator("[data-dpmia-test=explorer]")
        handle = box.locator(".noUi-handle").first
        handle.scroll_into_view_if_needed()
        handle.focus()
        for _ in range(5):
            handle.press("ArrowRight")
        page.wait_for_function(f"() => ({FIRST_EXPLORER_IMG})() !== {before!r}", timeout=60_000)
        after = page.evaluate(FIRST_EXPLORER_IMG)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "lab-chapter1-explorer.png"))
        found = page.evaluate(MARKUP)
    finally:
        ctx.close()
    assert after != before
    assert found["boxes"] >= 1 and not found["raw"], found
    assert not errors, errors[:3]
    REPORT.append(f"JupyterLab ch1: ran {state['n']} code cells in {run_s:.0f} s without error; "
                  f"first explorer's slider moved 5 steps and its figure changed; "
                  f"{found['boxes']} prf boxes")
