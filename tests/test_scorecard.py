import pytest

from dpmia.scorecard import Scorecard


def test_pass_and_render():
    sc = Scorecard("ch")
    sc.check("C1", "tv", 0.38292492254802, 0.3829249225480261, paper=0.383, rtol=1e-12,
             paper_atol=5e-4)
    sc.check("E1", "erlingsson at 2", 0.9323, 0.9323, paper=0.95, atol=1e-4, paper_agrees=False)
    sc.check("Q1", "monotone", True)
    html = sc.table()._repr_html_()
    assert "C1" in html and "✘ differs from paper" in html and "<table" in html
    assert sc.n_differs == 1 and len(sc.rows) == 3
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
