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


def test_markdown_rendering_for_the_pdf():
    """Tables print as real (pipe) tables where HTML cannot be shown: one line per row, markup escaped."""
    from dpmia.tables import Table, markdown_table
    t = Table(["σ", "TPR [interval]\nat 1 %"], [["0.5", "0.1 [0.0, 0.2]\n(FPR 0.01)"]], caption="a *caption*")
    md = t._repr_markdown_()
    assert md.splitlines()[0] == "*a \\*caption\\**"
    assert "| TPR \\[interval\\] at 1 % |" in md and "| 0.5 | 0.1 \\[0.0, 0.2\\] (FPR 0.01) |" in md
    assert markdown_table(["a"], [["x|y"]]).splitlines()[-1] == "| x\\|y |"
