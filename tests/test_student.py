"""The student edition (`make book-student`): the same exercises as the book, and no solution anywhere in it.

The edition is (re)built with `make book-student` when it is missing or older than the book's sources; after
`make book` that reuses the execution cache, so nothing is executed again.
"""
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import student_edition as se  # noqa: E402
from built import ensure_built  # noqa: E402

STUDENT = ROOT / "_build" / "student"
HTML = STUDENT / "_build" / "html"
SOURCES = ["notebooks/*.ipynb", "book/**/*.md", "book/**/*.bib", "book/_ext/*.py", "_config.yml", "_toc.yml"]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _markdown(nb_path):
    return ["".join(c["source"]) for c in json.loads(nb_path.read_text())["cells"] if c["cell_type"] == "markdown"]


def _solutions(nb_path):
    """The body text of every solution in a chapter (without its options), as the book's source has it."""
    out = []
    for text in _markdown(nb_path):
        for m in se.SOLUTION.finditer(text):
            body = [ln for ln in m.group(0).splitlines()[1:-1] if ln.strip() and not ln.startswith(":")]
            out.append(" ".join(body))
    return out


def _probe(solution):
    """The longest run of plain words in a solution (at most 8): text that the rendered page shows verbatim."""
    best, run = [], []
    for tok in solution.split():
        if re.fullmatch(r"[A-Za-z][A-Za-z'-]*[,.;:]?", tok):
            run.append(tok)
            best = max(best, run[:8], key=len)
        else:
            run = []
    return " ".join(best) if len(best) >= 4 else None


def _exercises(nb_path):
    return [lab for text in _markdown(nb_path) for _, lab in se.EXERCISE.findall(text)]


class _Text(HTMLParser):
    """The text of a page with the classes of the elements it sits in (scripts and styles dropped)."""

    def __init__(self):
        super().__init__()
        self.parts, self.ids, self.classes, self._skip = [], set(), set(), 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        self.classes.update((a.get("class") or "").split())
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def _page(path):
    p = _Text()
    p.feed(path.read_text(encoding="utf-8"))
    return p, re.sub(r"\s+", " ", " ".join(p.parts))


@pytest.fixture(scope="module")
def edition():
    ensure_built(HTML / "index.html", "book-student", SOURCES)
    return HTML


def test_strip_solutions_keeps_everything_else():
    text = ("## Exercises\n\n```{exercise} A (easy)\n:label: ex-a\n\nDo it.\n```\n\n"
            "```{solution} ex-a\n:class: dropdown\n\nThe answer is 42.\n```\n\nAfter.\n")
    out, n = se.strip_solutions(text)
    assert n == 1 and "42" not in out and "Do it." in out and out.endswith("```\n\nAfter.\n")
    assert [lab for _, lab in se.EXERCISE.findall(out)] == ["ex-a"]


def test_the_book_has_solutions_to_remove():
    counts = {p.name: len(_solutions(p)) for p in CHAPTERS}
    assert all(counts.values()), counts


@pytest.mark.parametrize("nb", CHAPTERS, ids=lambda p: p.stem)
def test_same_exercises_no_solutions(edition, nb):
    page, text = _page(edition / "notebooks" / f"{nb.stem}.html")
    labels = _exercises(nb)
    assert labels and set(labels) <= page.ids, sorted(set(labels) - page.ids)
    assert "solution" not in page.classes
    # no solution's text on the page, nor in the notebooks offered for download (source and executed)
    downloads = [edition / "_sources" / "notebooks" / nb.name, edition / "executed" / "notebooks" / nb.name]
    assert all(d.exists() for d in downloads), downloads
    stored = [re.sub(r"\s+", " ", d.read_text(encoding="utf-8")) for d in downloads]
    probes = [p for p in map(_probe, _solutions(nb)) if p]
    assert probes
    for probe in probes:
        assert probe not in text and all(probe not in s for s in stored), probe
    main = ROOT / "_build" / "html" / "notebooks" / f"{nb.stem}.html"
    if main.exists():                  # the same probes do find the solutions in the book itself
        _, full = _page(main)
        assert sum(p in full for p in probes) >= len(probes) / 2, probes
    executed = json.loads((edition / "executed" / "notebooks" / nb.name).read_text())
    assert sum(len(c.get("outputs", [])) for c in executed["cells"] if c["cell_type"] == "code") > 0


def test_the_edition_says_what_it_is(edition):
    _, text = _page(edition / "book" / "intro.html")
    assert "student edition" in text
    _, main = _page(ROOT / "_build" / "html" / "book" / "intro.html") if (ROOT / "_build" / "html").exists() \
        else (None, "")
    assert "student edition" not in main
