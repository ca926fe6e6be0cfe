import pytest

from dpmia.scorecard import Scorecard


def test_pass_and_render():
    sc = Scorecard("ch")
    sc.check("C1", "tv", 0.38292492254802, 0.3829249225480261, paper=0.383, rtol=1e-12,
             paper_atol=5e-4)
    sc.check("E1", "erlingsson at 2", 0.9323, 0.9323, paper=0.95, atol=1e-4, paper_agrees=False)
    sc.check("Q1", "monotone", True)
    html = sc.table()._repr_html_()
    assert "C1" in html and "✘ not reproduced" in html and "<table" in html
    assert html.count("<th>") == 5 and "reference 0.382925 (rel 1e-12)" in html and html.count(">✘<") == 1
    assert [r.status for r in sc.rows] == ["✔ reproduced", "✘ not reproduced", "● own check"]
    assert sc.n_differs == 1 and len(sc.rows) == 3
    assert sc.summary() == "ch: 3 checks passed (1 reproduced, 1 not reproduced, 1 own check)"
    assert "| C1 |" in sc.to_markdown()


def test_regression_raises():
    sc = Scorecard("ch")
    with pytest.raises(AssertionError, match="C2"):
        sc.check("C2", "x", 1.0, 1.1, rtol=1e-3)
    with pytest.raises(AssertionError, match="qualitative"):
        sc.check("Q", "y", False)
    with pytest.raises(AssertionError, match="non-finite"):
        sc.check("N", "z", float("nan"))


def test_stale_erratum_and_unexpected_mismatch_raise():
    sc = Scorecard("ch")
    with pytest.raises(AssertionError, match="now matches"):
        sc.check("E", "e", 0.95, paper=0.95, atol=1e-3, paper_agrees=False)
    with pytest.raises(AssertionError, match="does not match"):
        sc.check("F", "f", 0.93, paper=0.95, atol=1e-3)


def test_explicit_statuses():
    from dpmia.scorecard import Scorecard

    card = Scorecard("t")
    card.check("a", "agrees", 1.0, 1.0, paper=1.0, atol=1e-9, status="reproduced")
    card.check("b", "differs", 6.08, 6.08, paper=6.01, atol=1e-3, status="not reproduced")
    card.check("c", "typo", True, status="erratum confirmed")
    card.check("d", "ours", 0.5, 0.5, atol=1e-9, status="own check")
    assert [r.status for r in card.rows] == ["✔ reproduced", "✘ not reproduced", "✎ erratum confirmed", "● own check"]
    assert "1 not reproduced" in card.summary()
    with pytest.raises(AssertionError):
        card.check("e", "claimed reproduced but differs", 6.08, 6.08, paper=6.01, atol=1e-3, status="reproduced")
    with pytest.raises(ValueError, match="status"):
        card.check("f", "bad", 1.0, status="holds")


def test_boolean_claims_say_what_happened():
    sc = Scorecard("ch")
    sc.check("a", "the paper's claim holds", True, paper="Sec. 2")
    sc.check("b", "the paper's claim fails", True, paper="Sec. 3", paper_agrees=False)
    sc.check("c", "our identity", True)
    sc.check("d", "printed formula is wrong", True, paper="App. B", status="erratum confirmed")
    assert [r.status for r in sc.rows] == ["✔ reproduced", "✘ not reproduced", "● own check", "✎ erratum confirmed"]
    assert sc.n_reproduced == 1 and sc.n_differs == 2
