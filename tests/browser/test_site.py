"""Every page of the built book, loaded in headless Chromium with the network blocked.

Checks per page: nothing requested from outside the site, no console or page error and no failed
local request, MathJax loaded from the site and every formula typeset (no raw TeX delimiters in the
visible text, no MathJax error), every image loaded, and every saved widget view rendered.
"""
import base64
import json
import re
import urllib.parse
import urllib.request

import pytest
from conftest import REPORT, SHOTS, SITE

from dpmia import plotting

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
    return prev && prev.classList.contains('widget-subarea') &&
        prev.querySelector('.jupyter-widgets, .widget-output, .lm-Widget');
  });
  return [views.length, rendered.length];
}"""

IMAGES = """() => [...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])"""

VISIBLE_TEXT = """() => {
  // text a reader sees, without code blocks (which may legitimately show TeX source)
  const clone = document.querySelector('main') ? document.querySelector('main').cloneNode(true)
                                               : document.body.cloneNode(true);
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
    # math as Sphinx wrote it in the page (MathJax's own stylesheet names mjx-container on every page)
    has_math = "math notranslate" in (SITE / rel).read_text(encoding="utf-8")
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
    # the message grows with its text: nothing clipped, and the element after it starts below it
    box = page.evaluate("""() => { const m = document.querySelector('.dpmia-thebe-failed');
      let next = m.parentElement.nextElementSibling;
      while (next && next.getBoundingClientRect().height === 0) next = next.nextElementSibling;
      return {sh: m.scrollHeight, ch: m.clientHeight, bottom: m.getBoundingClientRect().bottom,
              nextTop: next ? next.getBoundingClientRect().top : Infinity}; }""")
    assert box["sh"] <= box["ch"] + 1, f"the message is clipped: {box}"
    assert box["bottom"] <= box["nextTop"] + 1, f"the message runs over what follows it: {box}"
    assert all("unpkg.com" in u for u in log["blocked"]), log["blocked"]
    REPORT.append(f"Live Code offline: message shown ({text[:60]}...)")


# ------------------------------------------------------------------ layout: what a reader sees
LAYOUT = r"""() => {
  const art = document.querySelector('article.bd-article') || document.querySelector('main');
  const scrolled = [];
  art.querySelectorAll('*').forEach(e => {
    const cs = getComputedStyle(e);
    if ((cs.overflowX === 'auto' || cs.overflowX === 'scroll') && e.scrollWidth > e.clientWidth + 1
        && !(e.tagName === 'MJX-CONTAINER' && window.innerWidth < 640)
        && !(e.classList.contains('dpmia-explorer-scroll') && window.innerWidth < 640
             && e.closest('.dpmia-explorer').classList.contains('dpmia-scrolls')
             && e.parentElement.querySelector('.dpmia-explorer-hint').offsetHeight > 0))
      scrolled.push(e.tagName + ' ' + (e.innerText || '').slice(0, 50).replace(/\s+/g, ' '));
  });
  const wide = [...art.querySelectorAll('table, pre, img, .dpmia-explorer')].filter(
    e => !(e.tagName === 'IMG' && e.closest('.dpmia-explorer-scroll'))).filter(
    e => e.getBoundingClientRect().right > art.getBoundingClientRect().right + 1).map(
    e => e.tagName + ' ' + (e.innerText || e.getAttribute('src') || '').slice(0, 50));
  const figures = [...art.querySelectorAll('img')].filter(i => i.closest('.cell_output, .dpmia-explorer')).map(
    i => [i.currentSrc || i.src, i.getBoundingClientRect().width, i.naturalWidth, !!i.closest('.dpmia-explorer')]);
  const noAlt = [...art.querySelectorAll('.cell_output img')].filter(i => !i.closest('.widget-subarea')).filter(
    i => !i.alt || /\.(svg|png|jpe?g)$/.test(i.alt)).map(i => i.getAttribute('src').slice(0, 60));
  // a formula (inline or display) whose right edge passes the column: its end cannot be read
  const mathPast = [...art.querySelectorAll('mjx-container')].filter(
    m => m.offsetParent !== null && m.getBoundingClientRect().right > art.getBoundingClientRect().right + 1).map(
    m => (m.getAttribute('aria-label') || m.innerText || '').slice(0, 50));
  return {column: art.getBoundingClientRect().width, page: document.documentElement.scrollWidth,
          scrolled, wide, figures, noAlt, mathPast};
}"""
# matplotlib writes each text as <g id="text_N"> of glyph outlines scaled by size/100 (a formula's sub-
# and superscripts get a further relative scale, so they count at the formula's size)
SVG_TEXT_SIZE = re.compile(r'<g id="text_\d+">.*?scale\(([\d.]+) -[\d.]+\)', re.S)
PNG_NOTE = re.compile(rb"tEXtComment\x00dpmia min-text-pt=([\d.]+) dpi=([\d.]+)")
SVG_VIEWBOX = re.compile(r'viewBox="[\d.\-]+ [\d.\-]+ ([\d.]+) [\d.]+"')
CHAPTERS = [p for p in PAGES if p.startswith("notebooks/")]


def _svg_text(src: str, base: str) -> str:
    if src.startswith("data:image/svg+xml;base64,"):
        return base64.b64decode(src.split(",", 1)[1]).decode()
    if src.startswith("data:image/svg+xml,"):
        return urllib.parse.unquote(src.split(",", 1)[1])
    assert src.startswith(base), src
    return (SITE / src[len(base):].lstrip("/")).read_text()


@pytest.mark.parametrize("width", [1280, 400])
@pytest.mark.parametrize("rel", [p for p in PAGES if not REDIRECT.search((SITE / p).read_text())])
def test_page_fits_and_figures_read(browser, site_url, rel, width):
    """No horizontal scroll in the text column (tables, code, output, figures), and every figure's
    smallest text at least 9 CSS px as displayed: measured from the SVG's own font sizes and the
    width the browser gives the image (the sub- and superscripts of a formula, 70 % of its size by
    typographic convention, count at the formula's size); a live widget's PNG carries its smallest
    text size in a tEXt chunk (plotting.widget_png)."""
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    page = ctx.new_page()
    page.goto(f"{site_url}/{rel}", wait_until="load", timeout=60_000)
    if "math notranslate" in (SITE / rel).read_text(encoding="utf-8"):
        page.evaluate(WAIT_FOR_MATH)
    page.wait_for_timeout(500)
    r = page.evaluate(LAYOUT)
    SHOTS.mkdir(parents=True, exist_ok=True)
    if width == 1280:
        assert r["column"] >= plotting.COLUMN_PX, f"{rel}: text column {r['column']} px < {plotting.COLUMN_PX}"
    assert r["page"] <= width, f"{rel} at {width} px: the page scrolls sideways ({r['page']} px)"
    assert not r["scrolled"], f"{rel} at {width} px: horizontal scroll in {r['scrolled'][:5]}"
    assert not r["wide"], f"{rel} at {width} px: wider than the column: {r['wide'][:5]}"
    assert not r["noAlt"], f"{rel}: figures without alt text: {r['noAlt'][:5]}"
    assert not r["mathPast"], f"{rel} at {width} px: formulas past the column's edge: {r['mathPast'][:5]}"
    smallest, explorers = [], []
    for src, shown, natural, in_explorer in r["figures"]:
        if src.startswith("data:image/png;base64,") or src.endswith(".png"):   # plotting.widget_png
            raw = (base64.b64decode(src.split(",", 1)[1]) if src.startswith("data:")
                   else (SITE / src[len(site_url):].lstrip("/")).read_bytes())
            note = PNG_NOTE.search(raw)
            assert note, f"{rel}: PNG figure without its text-size record: {src[:60]}"
            if shown:
                smallest.append(float(note.group(1)) * float(note.group(2)) / 72.0 * shown / natural)
            continue
        if not src.endswith(".svg") and not src.startswith("data:image/svg+xml"):
            raise AssertionError(f"{rel}: figure is neither SVG nor a recorded PNG: {src[:80]}")
        svg = _svg_text(src, site_url)
        view = float(SVG_VIEWBOX.search(svg).group(1))
        sizes = [100.0 * float(x) for x in SVG_TEXT_SIZE.findall(svg)]
        if sizes:
            smallest.append(min(sizes) * shown / view)
            if in_explorer and shown:
                explorers.append(smallest[-1])
    if width == 1280 and smallest:
        assert min(smallest) >= plotting.MIN_TEXT_PX, (
            f"{rel}: a figure's text is {min(smallest):.1f} px on screen (< {plotting.MIN_TEXT_PX})")
        REPORT.append(f"{rel:<55} {len(smallest):3d} figures, smallest text {min(smallest):.1f} px at 1280")
    # an explorer's figure stays legible on a phone too: it keeps its legible width and scrolls (with a hint)
    if explorers:
        assert min(explorers) >= plotting.MIN_TEXT_PX - 0.05, (
            f"{rel} at {width} px: an explorer's text is {min(explorers):.1f} px on screen")
        if width == 400:
            REPORT.append(f"{rel:<55} {len(explorers):3d} explorer figures, smallest text "
                          f"{min(explorers):.1f} px at 400")
    page.screenshot(path=str(SHOTS / f"layout-{width}-{rel.replace('/', '-').replace('.html', '.png')}"),
                    full_page=width == 400)
    ctx.close()


@pytest.mark.parametrize("rel", CHAPTERS)
def test_static_explorer_moves_offline(offline_page, site_url, rel):
    """The chapter's main explorer works in the static page with the network blocked: moving a
    slider switches the frame and the read-out."""
    page, log = offline_page
    page.goto(f"{site_url}/{rel}", wait_until="load", timeout=60_000)
    box = page.locator(".dpmia-explorer").first
    box.scroll_into_view_if_needed()
    img = box.locator("img")
    before = (img.get_attribute("src"), box.locator(".dpmia-explorer-text").inner_text(),
              box.get_attribute("data-frame"))
    slider = box.locator("input[type=range]").first
    start = int(slider.input_value())
    slider.focus()
    page.keyboard.press("ArrowRight" if start < int(slider.get_attribute("max")) else "ArrowLeft")
    after = (img.get_attribute("src"), box.locator(".dpmia-explorer-text").inner_text(),
             box.get_attribute("data-frame"))
    assert before[2] is not None and after[2] != before[2], f"{rel}: the frame did not change"
    assert after[0] != before[0] and after[0].startswith("data:image/svg+xml;base64,"), f"{rel}: same image"
    assert img.evaluate("i => i.complete && i.naturalWidth > 0"), f"{rel}: the new frame did not load"
    assert not log["blocked"] and not log["errors"], (log["blocked"][:3], log["errors"][:3])
    REPORT.append(f"{rel:<55} static explorer: frame {before[2]} -> {after[2]} offline")


@pytest.mark.parametrize("rel", CHAPTERS)
def test_no_dead_control(offline_page, site_url, rel):
    """Every control on a chapter page works without a kernel or says it cannot: each range input belongs to a
    static explorer and moving it changes that explorer's frame; no live widget control is rendered outside a
    box marked inactive (dpmia.explore.needs_kernel), and each inactive box links to Binder."""
    page, log = offline_page
    page.goto(f"{site_url}/{rel}", wait_until="load", timeout=60_000)
    stray = page.evaluate("""() => [...document.querySelectorAll(
        '.cell_output input, .cell_output select, .cell_output button, .cell_output .jupyter-widgets')]
        .filter(e => !e.closest('.dpmia-explorer') && !e.closest('.dpmia-inactive') && !e.matches('.copybtn')
                && e.offsetParent !== null)
        .map(e => e.outerHTML.slice(0, 80))""")
    assert not stray, f"{rel}: controls outside an explorer or an inactive box: {stray[:3]}"
    boxes = page.locator(".dpmia-explorer")
    moved = 0
    for b in range(boxes.count()):
        box = boxes.nth(b)
        for s in range(box.locator("input[type=range]").count()):
            slider = box.locator("input[type=range]").nth(s)
            if int(slider.get_attribute("max")) == 0:
                continue                                   # a slider with one value (FAST builds)
            box.scroll_into_view_if_needed()
            before = box.get_attribute("data-frame")
            slider.focus()
            page.keyboard.press("ArrowRight" if int(slider.input_value()) < int(slider.get_attribute("max"))
                                else "ArrowLeft")
            assert box.get_attribute("data-frame") != before, f"{rel}: explorer {b}, slider {s} moved nothing"
            moved += 1
    inactive = page.locator(".dpmia-inactive")
    for k in range(inactive.count()):
        assert "mybinder.org" in inactive.nth(k).locator("a").first.get_attribute("href"), f"{rel}: no launch link"
    assert not log["errors"], log["errors"][:3]
    REPORT.append(f"{rel:<55} {moved} sliders move their explorer; {inactive.count()} kernel-only boxes")


IMG_SRC = re.compile(r'<img[^>]*\ssrc="([^"]+)"')


@pytest.mark.parametrize("rel", CHAPTERS)
def test_chapter_page_weight(rel):
    """A chapter page with its own figures and explorer frames stays under 5 MB (the site's shared
    scripts, fetched once, not counted)."""
    page = SITE / rel
    text = page.read_text()
    total = len(text.encode())
    for src in set(IMG_SRC.findall(text)):
        if not src.startswith(("data:", "http")) and "_static/" not in src:
            total += (page.parent / src).resolve().stat().st_size
    assert total < 5_000_000, f"{rel}: {total / 1e6:.2f} MB"
    REPORT.append(f"{rel:<55} page weight {total / 1e6:.2f} MB")


@pytest.mark.parametrize("rel", CHAPTERS)
def test_executed_notebook_download(offline_page, site_url, rel):
    """The download menu offers the notebook as executed by the build, and the link resolves to it."""
    page, log = offline_page
    page.goto(f"{site_url}/{rel}", wait_until="load", timeout=60_000)
    link = page.locator("a.dropdown-item", has_text=".ipynb (executed)")
    assert link.count() == 1, f"{rel}: no executed-notebook entry in the download menu"
    href = link.get_attribute("href")
    target = urllib.parse.urljoin(f"{site_url}/{rel}", href)
    assert target.endswith("/executed/" + rel.replace(".html", ".ipynb")), target
    with urllib.request.urlopen(target, timeout=30) as resp:
        nb = json.loads(resp.read())
    outputs = sum(len(c.get("outputs", [])) for c in nb["cells"] if c["cell_type"] == "code")
    assert outputs > 0, f"{target}: the executed notebook has no outputs"


def test_a_chapter_works_from_file_urls(browser):
    """A USB copy of the site opened from the files: math typeset, the explorer moves, nothing fetched."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors, outside = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r):
        if r.request.url.startswith(("file://", "data:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()
    page.route("**/*", route)
    page.goto((SITE / "notebooks" / "02_bounding_from_epsilon.html").as_uri(), wait_until="load")
    page.evaluate(WAIT_FOR_MATH)
    assert page.evaluate("() => document.querySelectorAll('mjx-container').length") > 50
    src = "() => document.querySelector('.dpmia-explorer img').src"
    before = page.evaluate(src)
    page.evaluate("() => { const r = document.querySelector('.dpmia-explorer input[type=range]'); "
                  "r.value = r.max; r.dispatchEvent(new Event('input')); }")
    assert page.evaluate(src) != before
    assert not errors and not outside, (errors[:3], outside[:3])
    page.close()
