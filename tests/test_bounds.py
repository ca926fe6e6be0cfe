"""dpmia.bounds: closed forms, values quoted in the specs, properties, bad input."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmia import bounds as b
from dpmia import gaussian as g

eps_st = st.floats(0.0, 50.0)
prior_st = st.floats(0.0, 1.0)


def test_values_quoted_in_specs():
    # 1/(1+e^-eps)
    for e, v in [(0.1, 0.524979), (7, 0.999089), (0.123, 0.530711), (2.14, 0.894731)]:
        assert b.sigmoid_accuracy(e) == pytest.approx(v, abs=5e-7)
    # 2 sigmoid(1) - 1 vs Humphries(1, 1e-5)
    assert 2 * b.sigmoid_accuracy(1.0) - 1 == pytest.approx(0.462117, abs=5e-7)
    assert b.humphries_advantage(1.0, 1e-5) == pytest.approx(0.462123, abs=5e-7)
    # Thudi at p = 1/2 vs Erlingsson (93.2 %, paper says 95 %)
    assert b.posterior_upper(1.0, 0.5) == pytest.approx(0.731, abs=5e-4)
    assert b.accuracy_from_advantage(b.erlingsson_advantage(2.0)) == pytest.approx(0.932, abs=5e-4)
    assert b.accuracy_from_advantage(b.erlingsson_advantage(1.0)) == pytest.approx(0.816, abs=5e-4)
    assert b.posterior_upper(2.0, 0.01) == pytest.approx(0.069, abs=5e-4)


def test_closed_forms():
    e, d = 1.3, 0.01
    assert b.humphries_advantage(e, d) == pytest.approx((math.exp(e) - 1 + 2 * d) / (math.exp(e) + 1), rel=1e-14)
    assert b.humphries_accuracy(e, d) == pytest.approx((math.exp(e) + d) / (math.exp(e) + 1), rel=1e-14)
    assert b.yeom_advantage(0.5) == pytest.approx(math.expm1(0.5))
    assert b.yeom_advantage(0.7) == 1.0  # vacuous above ln 2
    assert b.erlingsson_advantage(e, d) == pytest.approx(1 - math.exp(-e) * (1 - d))
    p = 0.2
    assert b.posterior_upper(e, p) == pytest.approx(p * math.exp(e) / (p * math.exp(e) + 1 - p), rel=1e-14)
    assert b.posterior_lower(e, p) == pytest.approx(p / (p + math.exp(e) * (1 - p)), rel=1e-14)
    assert b.tpr_at_fpr(0.01, e, d) == pytest.approx(math.exp(e) * 0.01 + d, rel=1e-14)


def test_large_eps_no_overflow():
    assert b.humphries_advantage(1e4, 0.0) == 1.0
    assert b.humphries_advantage(800.0, 0.3) == 1.0
    assert b.posterior_upper(1e3, 1e-6) == 1.0
    assert b.posterior_lower(1e3, 0.999) == 0.0
    assert b.tradeoff(1e-300, 800.0, 0.0) == 0.0
    assert b.tpr_at_fpr(0.0, math.inf, 0.0) == 0.0


def test_humphries_at_tight_profile_minimised_at_zero_equals_tv():
    # min over eps of Humphries(eps, delta(eps)) is attained at eps = 0 and equals TV
    mu = 0.8
    eps = np.linspace(0, 5, 201)
    vals = b.humphries_advantage(eps, g.delta(eps, mu))
    assert vals.min() == pytest.approx(g.tv(mu), rel=1e-12)
    assert np.argmin(vals) == 0


@given(eps_st, st.floats(0.0, 1.0))
def test_humphries_never_below_tight_gaussian_advantage(e, mu):
    # any (eps, delta)-DP claim about the Gaussian mechanism must bound its true advantage
    assert b.humphries_advantage(e, g.delta(e, mu)) >= g.tv(mu) - 1e-12


@given(eps_st, eps_st, st.floats(0.0, 1.0))
def test_monotone_in_eps(e1, e2, d):
    lo, hi = sorted([e1, e2])
    for f in (b.humphries_advantage, b.erlingsson_advantage):
        assert f(lo, d) <= f(hi, d) + 1e-15
    assert b.sigmoid_accuracy(lo) <= b.sigmoid_accuracy(hi)


@given(eps_st, prior_st)
def test_posterior_bracket(e, p):
    lo, hi = b.posterior_lower(e, p), b.posterior_upper(e, p)
    assert 0.0 <= lo <= p + 1e-15
    assert p - 1e-15 <= hi <= 1.0
    assert hi <= min(1.0, math.exp(min(e, 700)) * p) + 1e-12
    # Corollary 1 symmetry: 1 - L(eps, p) = U(eps, 1 - p)
    assert 1 - lo == pytest.approx(b.posterior_upper(e, 1 - p), abs=1e-12)


@given(eps_st)
def test_posterior_at_half_is_sigmoid(e):
    assert b.posterior_upper(e, 0.5) == pytest.approx(b.sigmoid_accuracy(e), rel=1e-13)
    assert b.humphries_accuracy(e, 0.0) == pytest.approx(b.sigmoid_accuracy(e), rel=1e-13)


@given(st.floats(0.0, 1.0), eps_st, st.floats(0.0, 1.0))
def test_tradeoff_region(alpha, e, d):
    beta = b.tradeoff(alpha, e, d)
    assert 0.0 <= beta <= 1.0 - alpha + 1e-12
    assert b.tpr_at_fpr(alpha, e, d) == pytest.approx(1 - beta)
    # the largest TPR - FPR on the region is Humphries' bound
    grid = np.linspace(0, 1, 2001)
    adv = (1 - b.tradeoff(grid, e, d) - grid).max()
    assert adv <= b.humphries_advantage(e, d) + 1e-12


BAD = [
    (b.humphries_advantage, dict(eps=-1.0), ValueError, "eps"),
    (b.humphries_advantage, dict(eps=1.0, delta=1.5), ValueError, "delta"),
    (b.humphries_advantage, dict(eps=1.0, delta=True), TypeError, "delta"),
    (b.yeom_advantage, dict(eps=float("nan")), ValueError, "eps"),
    (b.erlingsson_advantage, dict(eps=1.0, delta=-0.1), ValueError, "delta"),
    (b.sigmoid_accuracy, dict(eps="2"), TypeError, "eps"),
    (b.accuracy_from_advantage, dict(adv=1.5), ValueError, "adv"),
    (b.advantage_from_accuracy, dict(acc=-0.1), ValueError, "acc"),
    (b.tradeoff, dict(alpha=2.0, eps=1.0), ValueError, "alpha"),
    (b.tpr_at_fpr, dict(fpr=-0.5, eps=1.0), ValueError, "fpr"),
    (b.posterior_upper, dict(eps=1.0, prior=1.5), ValueError, "prior"),
    (b.posterior_lower, dict(eps=-2.0, prior=0.5), ValueError, "eps"),
    (b.posterior_upper, dict(eps=1.0, prior=[0.1, float("nan")]), ValueError, "prior"),
]


@pytest.mark.parametrize("fn,kwargs,exc,name", BAD, ids=lambda x: getattr(x, "__name__", None))
def test_bad_input_raises_clearly(fn, kwargs, exc, name):
    with pytest.raises(exc, match=rf"\b{name}\b"):
        fn(**kwargs)
