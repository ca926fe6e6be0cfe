"""Shared fixtures of the browser tests: Debian's Chromium driven by Playwright, with every request
that leaves 127.0.0.1 blocked (a classroom without internet), and a report of what was checked."""
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "browser"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REPORT: list[str] = []


def chromium_path():
    for name in (os.environ.get("DPMIA_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def pytest_terminal_summary(terminalreporter):
    if REPORT:
        terminalreporter.section("browser checks")
        for line in REPORT:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def browser():
    exe = chromium_path()
    if exe is None:
        pytest.skip("Chromium not installed (Debian package `chromium`); .ci/run installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def is_local(url: str) -> bool:
    return url.startswith(("http://127.0.0.1", "data:", "blob:", "about:"))


@pytest.fixture
def offline_page(browser):
    """A page in a fresh context where every non-local request is aborted and recorded, together
    with console errors, page errors and failed local requests."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    log = {"blocked": [], "errors": [], "failed": []}

    def route(r):
        if is_local(r.request.url):
            r.continue_()
        else:
            log["blocked"].append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    page = ctx.new_page()
    page.on("console", lambda m: m.type == "error" and log["errors"].append(m.text))
    page.on("pageerror", lambda e: log["errors"].append(f"page error: {e}"))
    page.on("response", lambda r: r.status >= 400 and log["failed"].append(f"{r.status} {r.url}"))
    yield page, log
    ctx.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url():
    if not (SITE / "index.html").exists():
        pytest.skip("the book is not built: run `make book` first")
    handler = functools.partial(_Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
