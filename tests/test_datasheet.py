"""The run-time datasheet (book/_ext/datasheet.py, book/datasheet.md): what it scans, what decides a rerun, and the
built page against the chapters' sources."""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGE = ROOT / "_build" / "html" / "book" / "datasheet.html"
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import datasheet  # noqa: E402

sys.path.pop(0)


def _nb(cells):
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": [text]}


def _code(src, html=None):
    outs = [] if html is None else [{"output_type": "display_data", "data": {"text/html": html}, "metadata": {}}]
    return {"cell_type": "code", "metadata": {}, "source": [src], "outputs": outs, "execution_count": None}


def test_scan_finds_explorers_and_kernel_cells_with_their_sections():
    inactive = ('<div class="dpmia-inactive"><p class="dpmia-inactive-note">The calibration runs in JupyterLab or '
                'Binder: <a href="x">launch</a></p></div>')
    nb = _nb([_md("# Title\n\n## First"), _code("a", '<div class="dpmia-explorer" id="e1"></div>'),
              _md("## Second\n\ntext"), _code("b"), _code("c", inactive), _md("### not a section")])
    found = datasheet.scan(nb)
    assert found["explorers"] == [{"cell": 1, "section": "1|First"}]
    assert found["kernel_only"] == [{"cell": 4, "section": "2|Second", "what": "The calibration"}]


def test_code_key_follows_code_cells_only(tmp_path):
    req = [tmp_path / "requirements.txt"]
    req[0].write_text("numpy==1\n")
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(_nb([_md("prose"), _code("x = 1")])))
    key = datasheet.code_key(path, req)
    path.write_text(json.dumps(_nb([_md("other prose, a solution cut"), _code("x = 1")])))
    assert datasheet.code_key(path, req) == key
    path.write_text(json.dumps(_nb([_md("prose"), _code("x = 2")])))
    assert datasheet.code_key(path, req) != key
    path.write_text(json.dumps(_nb([_md("prose"), _code("x = 1")])))
    req[0].write_text("numpy==2\n")
    assert datasheet.code_key(path, req) != key


def _kernel_calls(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum("".join(c["source"]).count("explore.needs_kernel(") for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.skipif(not PAGE.exists(), reason="the book is not built (make book)")
def test_built_page_has_one_row_per_chapter_and_every_kernel_cell():
    text = PAGE.read_text(encoding="utf-8")
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", text, re.S)
    cells = [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)]
             for r in rows]
    body = [c for c in cells if c and c[0].isdigit()]
    assert [int(c[0]) for c in body] == list(range(1, len(CHAPTERS) + 1))
    for c in body:
        assert re.fullmatch(r"\d+ s", c[2]) and re.fullmatch(r"\d+ s", c[3]), c
    # every explore.needs_kernel call in a chapter's code is listed, with its chapter
    listed = re.findall(r"Chapter (\d+), §\1\.\d+ [^:]+: ([^<]+?) \(cell \d+ of the notebook\)", text)
    for path in CHAPTERS:
        number = int(path.stem.split("_")[0])
        assert sum(1 for n, _ in listed if int(n) == number) == _kernel_calls(path), path.name
    assert sum(_kernel_calls(p) for p in CHAPTERS) > 0
