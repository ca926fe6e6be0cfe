"""Every page of the built book, loaded in headless Chromium with the network blocked.

Checks per page: nothing requested from outside the site, no console or page error and no failed
local request, MathJax loaded from the site and every formula typeset (no raw TeX delimiters in the
visible text, no MathJax error), every image loaded, and every saved widget view rendered.
"""
import re

import pytest

from conftest import REPORT, SHOTS, SITE

PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")
               if not p.relative_to(SITE).parts[0].startswith("_")) if SITE.exists() else []
REDIRECT = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.I)
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\$\\[a-zA-Z]")

WAIT_FOR_MATH = """async () => {
  if (!window.MathJax || !MathJax.startup) return false;
  await MathJax.startup.promise;
  return true;
}"""

WIDGETS = """() => {
  const views = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
  const rendered = views.filter(s => {
    const prev = s.previousElementSibling;
    return prev && prev.classList.contains('widget-subarea') && prev.querySelector('.jupyter-widgets, .widget-output, .lm-Widget');
  });
  return [views.length, rendered.length];
}"""

IMAGES = """() => [...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])"""

VISIBLE_TEXT = """() => {
  // text a reader sees, without code blocks (which may legitimately show TeX source)
  const clone = document.querySelector('main') ? document.querySelector('main').cloneNode(true) : document.body.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-assistive-mml, .MathJax_Preview').forEach(e => e.remove());
  return clone.innerText;
}"""


def test_site_has_pages(site_url):
    assert len(PAGES) >= 9, PAGES


@pytest.mark.parametrize("rel", PAGES)
def test_page_offline(offline_page, site_url, rel):
    page, log = offline_page
    redirect = REDIRECT.search((SITE / rel).read_text())
    if redirect:  # index.html sends the reader to the introduction, which is checked itself
        target = (SITE / rel).parent / redirect.group(1)
        assert target.exists(), f"{rel} redirects to a missing page {redirect.group(1)}"
        REPORT.append(f"{rel:<55} redirects to {redirect.group(1)}")
        return
    page.goto(f"{site_url}/{rel}", wait_until="load", timeout=60_000)
    html = page.content()
    has_math = "math notranslate" in html or "mjx-container" in html
    if has_math:
        assert page.evaluate(WAIT_FOR_MATH), f"{rel}: MathJax did not load from the site"
        n_math = page.locator("mjx-container").count()
        assert n_math > 0, f"{rel}: no formula typeset"
        assert page.locator("mjx-merror").count() == 0, f"{rel}: MathJax reports a TeX error"
    else:
        n_math = 0
    text = page.evaluate(VISIBLE_TEXT)
    raw = [text[max(m.start() - 60, 0):m.end() + 40] for m in RAW_TEX.finditer(text)]
    assert not raw, f"{rel}: raw TeX in the visible text: {raw[:5]}"

    n_views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
    rendered = 0
    if n_views:
        page.wait_for_function(f"() => ({WIDGETS})()[1] === {n_views}", timeout=60_000)
        _, rendered = page.evaluate(WIDGETS)
    images = page.evaluate(IMAGES)
    broken = [src for src, ok in images if not ok]
    assert not broken, f"{rel}: images not loaded: {broken[:5]}"

    page.wait_for_timeout(300)  # late console messages
    SHOTS.mkdir(parents=True, exist_ok=True)
    if n_views:  # the first saved explorer, with the math around it
        page.locator(".widget-subarea").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / ("site-" + rel.replace("/", "-").replace(".html", ".png"))))
    assert not log["blocked"], f"{rel}: requested from outside the site: {log['blocked'][:5]}"
    assert not log["failed"], f"{rel}: failed requests: {log['failed'][:5]}"
    assert not log["errors"], f"{rel}: console errors: {log['errors'][:5]}"
    REPORT.append(f"{rel:<55} {n_math:5d} formulas  {len(images):3d} images  "
                  f"{rendered:2d}/{n_views:<2d} widget views  0 external requests")


def test_live_code_offline_message(offline_page, site_url):
    """Live Code needs Binder; offline it must say so instead of spinning forever."""
    page, log = offline_page
    page.goto(f"{site_url}/notebooks/01_hypothesis_testing.html", wait_until="load")
    page.evaluate("() => window.initThebeSBT()")
    msg = page.locator(".thebe-launch-button.dpmia-thebe-failed")
    msg.wait_for(timeout=30_000)
    text = msg.inner_text()
    assert "Live Code is unavailable" in text and "internet" in text
    assert all("unpkg.com" in u for u in log["blocked"]), log["blocked"]
    REPORT.append(f"Live Code offline: message shown ({text[:60]}...)")
