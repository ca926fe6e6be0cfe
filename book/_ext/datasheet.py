"""The run-time datasheet: each chapter's full and FAST run times and the cells that need a kernel, measured
by the build.

The ``{datasheet}`` directive (on ``book/datasheet.md``) writes one table and one list:

* **full run**: the seconds myst-nb took to execute the chapter as the page shows it (its execution record,
  which the cache keeps with the outputs it reuses);
* **FAST run**: the seconds papermill took to run the chapter with ``FAST = True`` (the run a teacher starts in
  JupyterLab and the tests use). The build runs it itself, one chapter at a time, and keeps the result under
  ``dpmia_datasheet_store`` keyed on what decides it (the chapter's code cells, the library's sources and the
  pinned requirements), so it reruns only when one of those changes. The executed notebook is kept next to it;
  ``tests/test_notebooks.py`` reuses a current one instead of running the chapter a second time;
* the cells that **need a kernel** (the library's ``explore.needs_kernel`` boxes, found in the executed
  outputs by their ``dpmia-inactive`` markup) and the number of **explorers** that work on the static page
  (``dpmia-explorer``), each with the section it sits in.

The directive's page is read after every chapter (``env-before-read-docs`` moves it last) and re-read on
every build, so its numbers are those of the chapters just executed or taken from the cache. A failed FAST
run is a build warning, which ``-W`` turns into a failed build.
"""
from __future__ import annotations

import hashlib
import html
import json
import re
import subprocess
import sys
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

LOGGER = logging.getLogger(__name__)
WAKEUP = Path(__file__).with_name("nbclient_wakeup.py")
INACTIVE = re.compile(r'<p class="dpmia-inactive-note">(.*?) runs in JupyterLab or Binder', re.S)
EXPLORER = 'class="dpmia-explorer"'
TIMEOUT = 600


def _library_files() -> list[Path]:
    import dpmia

    root = Path(dpmia.__file__).resolve().parent
    return sorted(root.rglob("*.py"))


def code_key(notebook: Path, requirements: list[Path]) -> str:
    """What decides a FAST run: the chapter's code cells, the library's sources and the pinned requirements."""
    h = hashlib.sha256()
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            h.update(b"\0cell\0" + "".join(cell["source"]).encode())
    for path in _library_files() + [p for p in requirements if p.exists()]:
        h.update(b"\0file\0" + path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:24]


def scan(nb: dict) -> dict:
    """The explorers and kernel-only boxes in an executed notebook, each with its cell index and section.

    Sections are numbered as the book numbers them: the chapter's second-level headings in order.
    """
    section, number, explorers, kernel = "", 0, [], []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("## "):
                    number += 1
                    section = f"{number}|{line[3:].strip()}"
            continue
        for out in cell.get("outputs", []):
            page = out.get("data", {}).get("text/html", "")
            page = "".join(page) if isinstance(page, list) else page
            if EXPLORER in page:
                explorers.append({"cell": i, "section": section})
            for what in INACTIVE.findall(page):
                kernel.append({"cell": i, "section": section, "what": html.unescape(what)})
    return {"explorers": explorers, "kernel_only": kernel}


def record(notebook: Path, store: Path, requirements: list[Path]) -> dict | None:
    """The stored FAST record of ``notebook`` if it is current, else None."""
    path = store / f"{notebook.stem}.json"
    if not path.exists():
        return None
    rec = json.loads(path.read_text(encoding="utf-8"))
    if rec.get("key") != code_key(notebook, requirements) or not (store / f"{notebook.stem}.ipynb").exists():
        return None
    return rec


def measure(notebook: Path, store: Path, requirements: list[Path]) -> dict:
    """Run ``notebook`` with ``FAST = True`` through papermill and store its time and scan."""
    store.mkdir(parents=True, exist_ok=True)
    out = store / f"{notebook.stem}.ipynb"
    cmd = [sys.executable, str(WAKEUP), str(notebook), str(out), "-p", "FAST", "True", "--cwd",
           str(notebook.parent), "--kernel", "python3", "--execution-timeout", str(TIMEOUT), "--no-progress-bar"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT * 4)
    if run.returncode != 0:
        raise RuntimeError(f"FAST run of {notebook.name} failed:\n{run.stderr[-3000:]}")
    nb = json.loads(out.read_text(encoding="utf-8"))
    rec = {"key": code_key(notebook, requirements), "notebook": notebook.name,
           "fast_seconds": float(nb["metadata"]["papermill"]["duration"]), **scan(nb)}
    (store / f"{notebook.stem}.json").write_text(json.dumps(rec, indent=1), encoding="utf-8")
    return rec


def _seconds(x) -> str:
    return "–" if x is None else f"{x:.0f} s"


def _where(item: dict, chapter: int) -> str:
    number, _, title = item["section"].partition("|")
    return f"§{chapter}.{number} {title}" if number else f"chapter {chapter}"


class DatasheetDirective(SphinxDirective):
    """The datasheet's table and kernel list (module docstring)."""

    def run(self):
        from myst_nb.sphinx_ import NbMetadataCollector

        from dpmia.tables import markdown_table

        config, env = self.config, self.env
        srcdir = Path(env.srcdir)
        store = Path(config.dpmia_datasheet_store or srcdir / "_build" / ".datasheet")
        requirements = [Path(config.dpmia_datasheet_root or srcdir) / n
                        for n in ("requirements.txt", "requirements-dev.txt")]
        rows, kernel_lines, shown = [], [], []
        chapters = sorted(d for d in env.found_docs if d.startswith("notebooks/"))
        for doc in chapters:
            nb_path = srcdir / f"{doc}.ipynb"
            rec = record(nb_path, store, requirements)
            if rec is None:
                LOGGER.info(f"[datasheet] FAST run of {nb_path.name}")
                try:
                    rec = measure(nb_path, store, requirements)
                except (RuntimeError, subprocess.TimeoutExpired) as err:
                    LOGGER.warning(f"[datasheet] {err}", location=self.get_location())
                    continue
            number = int(nb_path.stem.split("_")[0])
            exec_data = NbMetadataCollector.get_exec_data(env, doc) or {}
            kernel = rec["kernel_only"]
            shown.append(doc)
            rows.append([str(number), env.titles[doc].astext(), _seconds(exec_data.get("runtime")),
                         _seconds(rec["fast_seconds"]),
                         str(len(rec["explorers"])), str(len(kernel)) if kernel else "none"])
            for item in kernel:
                kernel_lines.append(f"* Chapter {number}, {_where(item, number)}: {item['what']} "
                                    f"(cell {item['cell'] + 1} of the notebook).")
            self.env.note_dependency(str(nb_path))
        table = markdown_table(
            ["Chapter", "Title", "Full run", "FAST run", "Explorers (work on the page)", "Cells needing a kernel"],
            rows, caption="Run times measured by the build that made this page, and what needs a kernel.")
        text = table + "\n\n" + ("\n".join(kernel_lines) if kernel_lines else "No cell needs a kernel.") + "\n"
        container = nodes.container(classes=["dpmia-datasheet"])
        self.state.nested_parse(StringList(text.splitlines(), source=self.get_source_info()[0]),
                                self.content_offset, container)
        _link_titles(container, shown, env.docname)
        return [container]


def _link_titles(container, chapters, docname):
    """Make each body row's title cell a link to its chapter (the table text is escaped Markdown)."""
    from sphinx.addnodes import pending_xref

    tbody = next(iter(container.findall(nodes.tbody)), None)
    if tbody is None:
        return
    for row, doc in zip(tbody.findall(nodes.row), chapters):
        para = next(iter(row.children[1].findall(nodes.paragraph)))
        ref = pending_xref("", refdoc=docname, reftarget=f"/{doc}", reftype="doc", refdomain="std",
                           refexplicit=True, refwarn=True)
        ref += nodes.inline(text=para.astext(), classes=["xref", "doc"])
        para.children = []
        para += ref


def _read_last(app, env, docnames):
    doc = app.config.dpmia_datasheet_doc
    if doc in docnames:
        docnames.remove(doc)
        docnames.append(doc)


def _always_outdated(app, env, added, changed, removed):
    doc = app.config.dpmia_datasheet_doc
    return [doc] if doc in env.found_docs and doc not in added | changed else []


def setup(app):
    app.add_config_value("dpmia_datasheet_doc", "book/datasheet", "env")
    app.add_config_value("dpmia_datasheet_store", "", "env")
    app.add_config_value("dpmia_datasheet_root", "", "env")
    app.add_directive("datasheet", DatasheetDirective)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("env-before-read-docs", _read_last, priority=900)
    return {"version": "1.0", "parallel_read_safe": False, "parallel_write_safe": True}
