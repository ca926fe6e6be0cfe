"""The printed book (`make pdf`): real tables, no object or widget dumps, every glyph, the site's chapter numbers.

Runs where XeLaTeX, latexmk and pdftotext are installed (`make tex` installs them; `.ci/run` does, so the
check runs in CI) and is skipped, saying so, elsewhere. The PDF is rebuilt with `make pdf` when it is
missing or older than any of the book's sources; after `make book` that reuses the execution cache.
"""
import dataclasses
import importlib
import json
import pkgutil
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from built import ensure_built

import dpmia

ROOT = Path(__file__).resolve().parents[1]
PDF = ROOT / "_build" / "what-does-epsilon-say.pdf"
LATEX = ROOT / "_build" / "latex"
SOURCES = ["notebooks/*.ipynb", "book/**/*.md", "book/**/*.bib", "book/_ext/*.py", "book/latex/*",
           "lib/dpmia/**/*.py", "_config.yml", "_toc.yml", "Makefile"]


@pytest.fixture(scope="module")
def pdf():
    missing = [t for t in ("xelatex", "latexmk", "pdftotext") if not shutil.which(t)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: `make tex` installs Debian's TeX (CI does)")
    return ensure_built(PDF, "pdf", SOURCES)


@pytest.fixture(scope="module")
def text(pdf):
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True,
                          timeout=300).stdout


def test_no_pipe_tables(text):
    lines = text.splitlines()
    rows = [ln for ln in lines if re.fullmatch(r"\s*\|.*\|.*\|\s*", ln)]
    rules = [ln for ln in lines if re.search(r"\|\s*:?-{3,}:?\s*\|", ln)]
    assert not rows and not rules, f"Markdown pipe tables printed raw: {(rows + rules)[:5]}"


def _dataclass_reprs():
    """The repr prefix of every dataclass `dpmia` defines, as a dump would print it: `Name(first_field=`."""
    found = set()
    for info in pkgutil.walk_packages(dpmia.__path__, "dpmia."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__.startswith("dpmia")
                    and dataclasses.fields(obj)):
                found.add(f"{obj.__name__}({dataclasses.fields(obj)[0].name}=")
    return sorted(found)


def test_no_object_or_widget_dumps(text):
    reprs = _dataclass_reprs()
    assert "RiskReport(setting=" in reprs and "RiskRow(group=" in reprs
    flat = re.sub(r"\s+", "", text)   # a dump may be wrapped across lines
    dumps = [p for p in reprs + ["interactive(children=", "Box(children=", "<IPython.core.display", "objectat0x",
                                 "<Figuresize", "<matplotlib."]
             if p.replace(" ", "") in flat]
    assert not dumps, f"object reprs printed instead of their content: {dumps}"


def test_every_glyph_typeset(pdf):
    log = (LATEX / "book.log").read_text(errors="replace")
    missing = sorted(set(re.findall(r"Missing character: There is no (\S+)", log)))
    assert not missing, f"characters the PDF's fonts lack: {missing}"


def _site_numbering():
    """Chapter titles and numbers as the site numbers them: numbered parts count their chapters from 1 on."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    out, n = [], 0
    for part in toc["parts"]:
        for ch in part["chapters"]:
            path = ROOT / ch["file"]
            path = next(p for p in (path.with_suffix(".ipynb"), path.with_suffix(".md")) if p.exists())
            if path.suffix == ".ipynb":
                src = "".join(c for cell in json.loads(path.read_text())["cells"] for c in cell["source"]
                              if cell["cell_type"] == "markdown")
            else:
                src = path.read_text()
            title = re.search(r"^# (.+)$", src, re.M).group(1).strip()
            if part.get("numbered"):
                n += 1
                out.append((str(n), title))
            else:
                out.append((None, title))
    return out


def _latex_toc():
    """(number or None, title) of every chapter in the PDF's table of contents (LaTeX's book.toc)."""
    toc = (LATEX / "book.toc").read_text()
    out = []
    for m in re.finditer(r"\\contentsline \{chapter\}\{(\\numberline \{(\d+)\})?(.*?)\}\{\d+\}\{", toc):
        title = re.sub(r"\\sphinxhyphen\s*\{\}", "-", m.group(3))
        title = re.sub(r"\\[a-zA-Z]+\s*(\{\})?", "", title).replace("{", "").replace("}", "").strip()
        out.append((m.group(2), title))
    return out


def test_chapter_numbers_match_the_site(pdf):
    site, printed = _site_numbering(), _latex_toc()
    # after the book's own chapters LaTeX prints its indices, unnumbered
    printed, indices = printed[:len(site)], printed[len(site):]
    assert set(indices) <= {(None, "Proof Index"), (None, "Python Module Index"), (None, "Index")}, indices
    assert [n for n, _ in printed] == [n for n, _ in site], (site, printed)
    for (_, want), (_, got) in zip(site, printed):
        assert re.sub(r"\W", "", want.replace("`", "")) == re.sub(r"\W", "", got), (want, got)
    assert ("7", "One model, every bound") in printed
    assert (None, "References") in printed


def test_the_risk_report_is_a_table(pdf):
    """Chapter 7's risk report reaches LaTeX as a table (its Markdown), not as text."""
    tex = (LATEX / "book.tex").read_text()
    ch7 = tex[tex.index(r"\chapter{One model, every bound}"):]
    tables = re.findall(r"\\begin\{(?:tabulary|longtable|tabular)\}.*?\\end\{(?:tabulary|longtable|tabular)\}",
                        ch7, re.S)
    assert len(tables) >= 5
    assert any("advantage" in t and "TPR" in t for t in tables)


def test_continued_tables_name_their_own_number(text):
    """A table that breaks across pages says "Table N – continued" only when it is Table N (has a caption)."""
    continued = set(re.findall(r"Table (\d+\.\d+) – continued from previous page", text))
    captioned = set(re.findall(r"Table (\d+\.\d+): ", text))
    assert continued <= captioned, sorted(continued - captioned)


def test_references_resolve_and_numbers_match_the_site(text):
    """No "??" (an unresolved LaTeX reference), theorems and exercises numbered chapter.k as on the site, and the
    syllabus's exercise references print the numbers the site prints."""
    assert "??" not in text
    assert not re.findall(r"(?:Theorem|Definition|Exercise) \d+\.\d+\.\d+", text)
    site = (ROOT / "_build" / "html" / "book" / "syllabus.html")
    if not site.exists():
        pytest.skip("the site is not built")
    on_site = re.findall(r"Exercise \d+\.\d+", re.sub(r"<[^>]+>", "", site.read_text(encoding="utf-8")))
    plain = subprocess.run(["pdftotext", str(PDF), "-"], capture_output=True, text=True, check=True, timeout=300).stdout
    start = plain.index("SYLLABUS AND READING PATHS")
    page = re.sub(r"Exer-\s*cise", "Exercise", plain[start:plain.index("TEACHING OFFLINE", start)])
    in_pdf = re.findall(r"Exercise\s+(\d+\.\d+)", page)
    assert on_site and sorted(in_pdf) == sorted(x.split()[1] for x in on_site)
