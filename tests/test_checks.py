import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmia import _checks


def test_real_scalar_and_array():
    assert _checks.real("x", 1) == 1.0 and isinstance(_checks.real("x", 1), float)
    out = _checks.real("x", [1, 2.5])
    assert isinstance(out, np.ndarray) and out.dtype == np.float64


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), "1", None, 1 + 2j, [True, False],
                                 np.array(["a"])])
def test_real_type_errors(bad):
    with pytest.raises(TypeError, match="x"):
        _checks.real("x", bad)


def test_real_value_errors_name_parameter_value_and_range():
    with pytest.raises(ValueError, match=r"eps must lie in \[0, inf\), got -1"):
        _checks.nonnegative("eps", -1.0)
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        _checks.real("delta", 0.0, lo=0, hi=1, lo_open=True, hi_open=True)
    with pytest.raises(ValueError, match="nan"):
        _checks.real("mu", float("nan"))
    with pytest.raises(ValueError, match="finite"):
        _checks.real("mu", float("inf"))
    with pytest.raises(ValueError, match="got 2"):  # array: first bad element quoted
        _checks.probability("p", [0.5, 2.0, 3.0])


def test_integer():
    assert _checks.integer("T", 1e4) == 10000
    assert _checks.integer("T", np.int64(3)) == 3
    with pytest.raises(TypeError, match="T"):
        _checks.integer("T", True)
    with pytest.raises(ValueError, match="T must be an integer"):
        _checks.integer("T", 2.5)
    with pytest.raises(ValueError, match=r"T must be an integer in \[1, inf\), got 0"):
        _checks.integer("T", 0, lo=1)
    with pytest.raises(TypeError):
        _checks.integer("T", "3")


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_probability_accepts_exactly_unit_interval(x):
    if 0.0 <= x <= 1.0:
        assert _checks.probability("p", x) == x
    else:
        with pytest.raises(ValueError, match="p must lie in"):
            _checks.probability("p", x)
