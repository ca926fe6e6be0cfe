"""The course kit around the chapters: the glossary and its links, the syllabus's references, the exercises."""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))
GLOSSARY = ROOT / "book" / "glossary.md"
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import student_edition as se  # noqa: E402

sys.path.pop(0)


def _markdown(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _glossary_terms():
    text = GLOSSARY.read_text(encoding="utf-8")
    body = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    # a term is an unindented line; its definition follows, indented
    return {line.strip() for line in body.splitlines() if line.strip() and not line.startswith(" ")}


def _term_links():
    """(chapter, shown text, glossary term) for every {term} role in the chapters' prose."""
    links = []
    for path in CHAPTERS:
        for m in re.finditer(r"\{term\}`([^`<]+?)\s*<([^>]+)>`", _markdown(path)):
            links.append((path.stem, m.group(1), m.group(2)))
    return links


def test_glossary_has_the_course_terms():
    terms = {t.lower() for t in _glossary_terms()}
    for needed in ("advantage", "accuracy", "precision", "posterior", "neighbouring relation", "add/remove neighbours",
                   "replace-one neighbours", "hockey-stick divergence", "trade-off curve", "pld", "η-mip", "pmp",
                   "glrt"):
        assert needed in terms, needed


def test_every_term_link_names_a_glossary_term_and_the_core_terms_are_linked():
    terms = {t.lower() for t in _glossary_terms()}
    links = _term_links()
    assert links
    unknown = [(c, t) for c, _, t in links if t.lower() not in terms]
    assert not unknown, unknown
    linked = {t.lower() for _, _, t in links}
    for core in ("advantage", "accuracy", "precision", "posterior", "neighbouring relation", "hockey-stick divergence",
                 "trade-off curve", "privacy-loss distribution", "membership inference privacy",
                 "practical membership privacy",
                 "glrt"):
        assert core in linked, f"no chapter links its first use of {core!r} to the glossary"
    # one link per term and chapter: the first use
    per_chapter = [(c, t.lower()) for c, _, t in links]
    assert len(per_chapter) == len(set(per_chapter))


def _exercises(path):
    """(title, label) of each exercise of a chapter, with the student edition's pattern."""
    return se.EXERCISE.findall(_markdown(path))


def test_syllabus_cites_existing_exercises():
    labels = {lab for p in CHAPTERS for _, lab in _exercises(p)}
    cited = set(re.findall(r"\{ref\}`(ex\d-[\w-]+)`", (ROOT / "book" / "syllabus.md").read_text(encoding="utf-8")))
    assert cited and cited <= labels, sorted(cited - labels)


@pytest.mark.parametrize("path", CHAPTERS[3:], ids=lambda p: p.name)
def test_chapters_4_to_7_have_seven_exercises_with_an_exam_question(path):
    titles = [t for t, _ in _exercises(path)]
    assert len(titles) >= 7, titles
    assert any(t.startswith("Exam question") for t in titles), titles
    assert any("Extend dpmia" in t for t in titles) and any("Predict" in t for t in titles)
    assert all(re.search(r"\((easy|medium|hard)\)$", t) for t in titles), titles


def test_three_exercises_across_chapters():
    cross = [(p.stem, lab) for p in CHAPTERS for _, lab in _exercises(p) if lab.endswith("-cross")]
    assert len(cross) >= 3, cross
