"""Sphinx extension that makes the built book self-contained and tidy.

* **Offline assets.** MathJax 3, RequireJS and the ipywidgets HTML manager are fetched once from
  the npm registry at pinned versions, checked against the registry's sha512 integrity strings,
  and served from ``_static/offline/`` with their licences. No page loads a script from a CDN, so a
  classroom without internet sees typeset math and every saved widget view.
* **Live Code** (Thebe) still needs mybinder.org; ``dpmia-thebe.js`` replaces sphinx-thebe's
  loader and says so plainly when Binder or the Thebe library cannot be reached.
* **One copy of each script.** sphinx-thebe registers its configuration script once per
  read phase; duplicates are dropped (they raised "THEBE_JS_URL has already been declared").
* **No stalls.** ``nbclient_wakeup`` repairs nbclient's lost wake-up with Output widgets.
* **Tables** fit the column; on a phone, `dpmia-tables.js` labels each cell so rows stack as cards.
* **Alt text** for every figure: its caption, else its own titles (myst-nb leaves the file name).
* **Executed notebooks** are copied into the site (``executed/``) and offered by each chapter's
  download button next to the source notebook.
* **References.** Bibliography labels read as the text cites them ("Thudi et al., 2022"), and
  ``$...$`` in a BibTeX title becomes real math.

The npm registry is ``$NPM_CONFIG_REGISTRY`` (or ``$npm_config_registry``) when set, else
https://registry.npmjs.org. Downloaded tarballs are cached in ``_build/.vendor-cache``.
"""
from __future__ import annotations

import base64
import hashlib
import html
import io
import os
import re
import shutil
import tarfile
import urllib.request
from pathlib import Path

from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

# name, version, npm integrity, {path inside the package: path under _static/offline}
# A path ending in "/" copies the directory.
PACKAGES = [
    ("mathjax", "3.2.2",
     "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
     {"LICENSE": "mathjax/LICENSE",
      "es5/tex-mml-chtml.js": "mathjax/tex-mml-chtml.js",
      "es5/input/": "mathjax/input/",
      "es5/output/chtml/": "mathjax/output/chtml/",
      "es5/ui/": "mathjax/ui/",
      "es5/a11y/": "mathjax/a11y/",
      "es5/sre/": "mathjax/sre/"}),
    ("requirejs", "2.3.7",
     "sha512-DouTG8T1WanGok6Qjg2SXuCMzszOo0eHeH9hDZ5Y4x8Je+9JB38HdTLT4/VA8OaUhBa0JPVHJ0pyBkM1z+pDsw==",
     {"require.js": "requirejs/require.js",
      "README.md": "requirejs/README.md"}),
    ("@jupyter-widgets/html-manager", "1.0.6",
     "sha512-+Mn+Ra8wyIHrYaUpfmf9A3dsLkt/NuwzPQN8sthdxBD35VV5cOJbpmgMhNR27n/rmP3mKyEe0PWCJrtZrXTXDQ==",
     {"dist/": "html-manager/", "package.json": "html-manager/package.json"}),
]
SKIP_SUFFIXES = (".map",)

MATHJAX_PATH = "offline/mathjax/tex-mml-chtml.js"
IPYWIDGETS_JS = {
    "offline/requirejs/require.js": {},
    "dpmia-widgets.js": {},
    "offline/html-manager/embed-amd.js": {},
}
LICENCES = """Third-party files served by this site (fetched from the npm registry at build time):

mathjax 3.2.2                        Apache License 2.0   mathjax/LICENSE
requirejs 2.3.7                      MIT                  requirejs/README.md (licence section)
@jupyter-widgets/html-manager 1.0.6  BSD-3-Clause         html-manager/package.json, embed.js.LICENSE.txt
"""


def _registry() -> str:
    url = os.environ.get("NPM_CONFIG_REGISTRY") or os.environ.get("npm_config_registry")
    return (url or "https://registry.npmjs.org").rstrip("/")


def _tarball(name: str, version: str, integrity: str, cache: Path) -> bytes:
    """The package tarball, from the cache or the registry, verified against `integrity`."""
    algo, _, expected = integrity.partition("-")
    base = name.rsplit("/", 1)[-1]
    path = cache / f"{base}-{version}.tgz"
    data = path.read_bytes() if path.exists() else None
    if data is None or base64.b64encode(hashlib.new(algo, data).digest()).decode() != expected:
        url = f"{_registry()}/{name}/-/{base}-{version}.tgz"
        logger.info(f"[dpmia_site] fetching {url}")
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                data = r.read()
        except OSError as exc:
            raise ExtensionError(
                f"could not fetch {name}@{version} from {url} ({exc}). The site serves MathJax "
                "and the widget manager itself so that it works offline; build once with access "
                "to the npm registry (or set NPM_CONFIG_REGISTRY to a mirror), or place the "
                f"tarball at {path}.") from exc
        got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
        if got != expected:
            raise ExtensionError(f"{url}: {algo} checksum {got} does not match the pinned {expected}")
        cache.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return data


def _extract(data: bytes, files: dict[str, str], dest: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or member.name.endswith(SKIP_SUFFIXES):
                continue
            inner = member.name.split("/", 1)[1]  # drop the leading "package/"
            for src, dst in files.items():
                if inner == src or (src.endswith("/") and inner.startswith(src)):
                    target = dest / (dst + inner[len(src):] if src.endswith("/") else dst)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(member).read())


def vendor_assets(root: Path) -> Path:
    """Fetch, verify and unpack the pinned packages; return the static directory to serve."""
    static = root / "_build" / ".vendor-static"
    stamp = static / "offline" / "VERSIONS.txt"
    wanted = "\n".join(f"{n}@{v} {i}" for n, v, i, _ in PACKAGES)
    if stamp.exists() and stamp.read_text() == wanted:
        return static
    shutil.rmtree(static, ignore_errors=True)
    for name, version, integrity, files in PACKAGES:
        data = _tarball(name, version, integrity, root / "_build" / ".vendor-cache")
        _extract(data, files, static / "offline")
    (static / "offline" / "LICENSES.txt").write_text(LICENCES)
    stamp.write_text(wanted)
    return static


def _config_inited(app, config) -> None:
    static = vendor_assets(Path(app.confdir))
    config.html_static_path = list(config.html_static_path) + [str(static)]
    config.mathjax_path = MATHJAX_PATH
    config.nb_ipywidgets_js = dict(IPYWIDGETS_JS)
    # pydata-sphinx-theme logs a console error on a first visit when no colour mode is set.
    config.html_context = {**config.html_context, "default_mode": "light"}


def _page_context(app, pagename, templatename, context, doctree) -> None:
    """Drop duplicate scripts and sphinx-thebe's loader (replaced by dpmia-thebe.js)."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        name = str(getattr(js, "filename", js) or "")
        if name.endswith("sphinx-thebe.js"):
            continue
        attrs = getattr(js, "attributes", {}) or {}
        key = (name, tuple(sorted((k, str(v)) for k, v in attrs.items())))
        if key in seen:
            continue
        seen.add(key)
        kept.append(js)
    scripts[:] = kept


EXECUTED_DIR = "executed"
_SVG_LABEL = re.compile(r"<!-- (.*?) -->\s*<g transform=\"[^\"]*scale\(([\d.]+) -", re.S)


def _svg_titles(path: Path) -> list[str]:
    """Titles of a matplotlib SVG (texts of 11 pt and more), in drawing order, without duplicates."""
    if path.suffix != ".svg":
        return []
    try:
        svg = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    out = []
    for text, size in _SVG_LABEL.findall(svg):
        text = html.unescape(text).replace("$", "").replace("\\", "").strip()
        if 100.0 * float(size) >= 11 and text and text not in out:  # glyph outlines scaled by size/100
            out.append(text)
    return out


def _figure_alt(app, doctree, docname) -> None:
    """Alt text for every figure of a chapter: its caption paragraph ("**Figure N.M.** ...") when one
    follows the cell, else the figure's own titles. myst-nb otherwise leaves the file name."""
    for image in list(doctree.findall(nodes.image)):
        uri = image.get("uri", "")
        if image.get("alt") and image["alt"] != uri and not image["alt"].endswith(Path(uri).name):
            continue
        cell = image.parent
        while cell is not None and "cell" not in cell.get("classes", []):
            cell = cell.parent
        caption = None
        if cell is not None:
            nxt = cell.next_node(descend=False, siblings=True)
            if isinstance(nxt, nodes.paragraph) and nxt.astext().startswith("Figure"):
                caption = nxt.astext()
        if caption is None:
            path = Path(uri) if Path(uri).is_absolute() else Path(app.srcdir) / uri
            titles = _svg_titles(path)
            caption = "Figure: " + "; ".join(titles) if titles else "Figure: see the text around it"
        image["alt"] = caption[:400]


def _executed_download(app, pagename, templatename, context, doctree) -> None:
    """Offer the executed notebook (with every output) next to the theme's source ``.ipynb``."""
    notebook = context.get("ipynb_source") or context.get("page_source_suffix") == ".ipynb"
    if app.builder.format != "html" or not notebook:
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].insert(1, {
                "type": "link",
                "url": context["pathto"](f"{EXECUTED_DIR}/{pagename}.ipynb", 1),
                "text": ".ipynb (executed)",
                "icon": "fas fa-book-open",
                "tooltip": "Download the notebook with its outputs",
                "label": "download-executed-notebook-button",
            })


def _copy_executed(app, exception) -> None:
    """Put the notebooks as executed by the build into the site (``executed/``).

    The outputs come from the execution cache (the record myst-nb executed or reused for this build), so a
    chapter read from the cache still has them; ``jupyter_execute/`` holds outputs only for the chapters that
    ran in the latest build of any format.
    """
    if exception is not None or app.builder.format != "html":
        return
    import nbformat
    from jupyter_cache import get_cache

    configured = getattr(app.config, "nb_execution_cache_path", "")
    cache = get_cache(Path(configured) if configured else Path(app.outdir).parent / ".jupyter_cache")
    for docname in sorted(app.env.found_docs):
        source = Path(app.srcdir) / f"{docname}.ipynb"
        if not source.exists():
            continue
        _, executed = cache.merge_match_into_notebook(nbformat.read(source, as_version=4))
        dest = Path(app.outdir) / EXECUTED_DIR / f"{docname}.ipynb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(executed, dest)


_MATH_IN_TEXT = re.compile(r"\$([^$]+)\$")


def _bib_math(app, doctree, docname) -> None:
    """Turn ``$...$`` left in bibliography entries into math nodes."""
    found = False
    for citation in doctree.findall(nodes.citation):
        for text in list(citation.findall(nodes.Text)):
            if "$" not in text:
                continue
            parts = _MATH_IN_TEXT.split(str(text))
            if len(parts) == 1:
                continue
            new = [nodes.Text(p) if i % 2 == 0 else nodes.math(p.strip(), p.strip())
                   for i, p in enumerate(parts) if p]
            text.parent.replace(text, new)
            found = True
    if found:
        app.env.get_domain("math").data["has_equations"][docname] = True


class AuthorYearLabels(BaseLabelStyle):
    """Labels as the text cites: "Thudi et al., 2022", "Balle and Wang, 2018"."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            last = [" ".join(p.last_names) for p in people]
            if not last:
                who = entry.fields.get("key", entry.key)
            elif len(last) == 1:
                who = last[0]
            elif len(last) == 2:
                who = f"{last[0]} and {last[1]}"
            else:
                who = f"{last[0]} et al."
            who = re.sub(r"[{}]", "", who)
            yield f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearStyle(PlainStyle):
    default_label_style = "dpmia_author_year"
    default_sorting_style = "author_year_title"


def setup(app):
    import nbclient_wakeup  # book/_ext is on sys.path (local_extensions)

    nbclient_wakeup.apply()  # jupyter-book executes the chapters in this process
    register_plugin("pybtex.style.labels", "dpmia_author_year", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "dpmia_author_year", AuthorYearStyle)
    app.connect("config-inited", _config_inited, priority=900)
    app.connect("html-page-context", _page_context, priority=900)
    app.connect("html-page-context", _executed_download, priority=502)
    app.connect("build-finished", _copy_executed)
    app.connect("doctree-resolved", _bib_math)
    app.connect("doctree-resolved", _figure_alt)
    app.add_js_file("dpmia-thebe.js", defer="defer")
    app.add_js_file("dpmia-tables.js", defer="defer")
    app.add_js_file("dpmia-math.js", defer="defer")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
