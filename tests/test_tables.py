"""Printed numbers: outward rounding keeps a printed bound a bound."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmia import tables

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@given(finite, st.integers(1, 17))
def test_upper_never_below_lower_never_above(x, digits):
    up, lo = float(tables.fmt(x, digits, "up")), float(tables.fmt(x, digits, "down"))
    assert lo <= x <= up
    if x != 0:
        # one unit in the last printed digit at most
        assert up - lo <= 10.0 ** (math.floor(math.log10(abs(x))) - digits + 2) * (1 + 1e-12)


@given(finite)
def test_nearest_within_half_a_unit(x):
    s = tables.fmt(x, 6)
    if x != 0:
        assert abs(float(s) - x) <= 0.5 * 10.0 ** (math.floor(math.log10(abs(x))) - 5) * (1 + 1e-9)


@pytest.mark.parametrize("x, up, lo", [(1.17534, "1.176", "1.175"), (9.99991, "10.00", "9.999"),
                                       (0.0, "0", "0"), (math.inf, "inf", "inf"), (2.5e-7, "2.500e-7", "2.499e-7"),
                                       (-0.5, "-0.5000", "-0.5000")])
def test_examples(x, up, lo):
    assert tables.fmt_upper(x) == up and tables.fmt_lower(x) == lo


def test_integers_are_rounded_exactly():
    # 2**53 + 1 has no float: rounding its float (2**53) up would print a number below it
    assert tables.fmt(2**53 + 1, 17, "up") == "9.0071992547409930e+15"
    assert tables.fmt_upper(10**17 + 1, 17) == "1.0000000000000001e+17"
    assert tables.fmt_lower(10**17 - 1, 17) == "9.9999999999999999e+16"


def test_bracket_and_errors():
    assert tables.fmt_bracket(0.12344, 0.12346) == "[0.1234, 0.1235]"
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        tables.fmt_bracket(0.5, 0.4)
    with pytest.raises(ValueError, match="hi must"):
        tables.fmt_bracket(0.1, math.nan)
    with pytest.raises(ValueError, match="rounding"):
        tables.fmt(1.0, rounding="outward")
    with pytest.raises(ValueError, match="digits"):
        tables.fmt(1.0, 0)
    with pytest.raises(ValueError, match="x must"):
        tables.fmt(math.nan)
    with pytest.raises(TypeError, match="x must"):
        tables.fmt("1.0")


def test_lazy_modules():
    import subprocess
    import sys
    code = ("import dpmia; print(dpmia.sgm.__name__, dpmia.plotting.__name__, dpmia.pld.__name__, "
            "'importlib' in dir(dpmia), 'sgm' in dir(dpmia), 'pld' in dir(dpmia))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["dpmia.sgm", "dpmia.plotting", "dpmia.pld", "False", "True", "True"]
    import dpmia
    with pytest.raises(AttributeError, match="nonexistent"):
        _ = dpmia.nonexistent


def _parse_myst(text):
    """The docutils tree MyST makes of ``text`` (as the book's PDF build reads a text/markdown output)."""
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    return publish_doctree(text, parser=Parser(), settings_overrides={"report_level": 5,
                                                                        "myst_enable_extensions": ["dollarmath"]})


def test_markdown_rendering_for_the_pdf():
    """Tables print as real tables where HTML cannot be shown: MyST reads every cell back verbatim (markup
    escaped, line breaks as spaces), with relative widths and as a long table that may break across pages."""
    from docutils import nodes

    from dpmia.tables import Table, markdown_table
    headers = ["σ", "TPR [interval]\nat 1 %", "note"]
    rows = [["0.5", "0.1 [0.0, 0.2]\n(FPR 0.01)", "- not a list"], ["1", "x|y *a* `b` $c$ <d> _e_", "2. no list"],
            ["3", "", "# no heading"]]
    t = Table(headers, rows, caption="a *caption*")
    tree = _parse_myst(t._repr_markdown_())
    assert tree.next_node(nodes.paragraph).astext() == "a *caption*"
    table = tree.next_node(nodes.table)
    assert "longtable" in table["classes"]
    got = [[e.astext() for e in row.findall(nodes.entry)] for row in table.findall(nodes.row)]
    assert got == [[c.replace("\n", " ") for c in r] for r in [headers] + rows]
    widths = [c["colwidth"] for c in table.findall(nodes.colspec)]
    assert widths[1] > widths[0] and len(widths) == 3
    with pytest.raises(ValueError, match="rows"):
        markdown_table(["a", "b"], [["1"]])


def test_risk_report_prints_symbols_and_real_tables():
    """The report a page shows (HTML) and prints (Markdown) names quantities with the book's symbols, while
    its keys and the terminal's text stay ASCII; its Markdown reads back as one table row per report row."""
    from docutils import nodes

    from dpmia import report
    rep = report.risk_report(0.02, 1.0, 2500, delta=1e-5)
    page = rep._repr_html_()
    assert "ε (Rényi DP)" in page and "2Φ(μ/2) − 1" in page and "σ = 1" in page
    assert "Phi(mu" not in page and "epsilon" not in page
    assert rep.value("epsilon (Renyi DP)") > 0 and "epsilon (Renyi DP)" in str(rep)
    table = _parse_myst(rep._repr_markdown_()).next_node(nodes.table)
    body = [[e.astext() for e in row.findall(nodes.entry)] for row in table.findall(nodes.row)][1:]
    groups = len({r.group for r in rep.rows})
    assert len(body) == len(rep.rows) + groups
    assert any(r[0] == "ε (tight)" and r[3] == "certified bracket" for r in body)
