"""dpmia.bounds, prior-dependent part (Thudi et al.): checkable values and properties."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize

from dpmia import bounds as b

eps_st = st.floats(0.0, 30.0)
p_st = st.floats(0.0, 1.0)


def test_spec003_theorem1_values():
    assert b.posterior_upper(1, 0.5) == pytest.approx(0.7310585786, rel=1e-9)
    assert b.posterior_upper(2, 0.5) == pytest.approx(0.8807970780, rel=1e-9)
    assert b.posterior_upper(2, 0.01) == pytest.approx(0.0694531597, rel=1e-9)
    assert b.posterior_lower(1, 0.5) == pytest.approx(0.2689414214, rel=1e-9)
    assert b.posterior_lower(2, 0.01) == pytest.approx(0.0013651569, abs=5e-11)
    assert b.posterior_upper(5, 0.001) == pytest.approx(0.129346, abs=5e-7)


def test_spec003_baselines():
    assert b.erlingsson_accuracy(1) == pytest.approx(0.8160602794, rel=1e-9)
    assert b.erlingsson_accuracy(2) == pytest.approx(0.9323323584, rel=1e-9)  # paper says 95 %
    assert b.sablayrolles_posterior(1, 0.5) == 0.75
    assert b.sablayrolles_posterior(2, 0.5) == 1.0
    assert b.yeom_accuracy(math.log(2)) == pytest.approx(1.0)
    assert b.humphries_accuracy(1, 1e-5) == pytest.approx(0.7310613, abs=5e-8)


def test_spec003_orderings_and_crossing():
    eps = np.linspace(0, 10, 1001)
    u = b.posterior_upper(eps, 0.5)
    assert np.all(u <= b.sablayrolles_posterior(eps, 0.5) + 1e-15)
    assert np.all(u <= b.erlingsson_accuracy(eps) + 1e-15)
    assert np.all(u <= b.yeom_accuracy(eps) + 1e-15)
    cross = optimize.brentq(lambda e: b.sablayrolles_posterior(e, 0.5) - b.erlingsson_accuracy(e), 0.5, 3)
    assert cross == pytest.approx(1.593624, abs=1e-6)
    grid = np.arange(0, 5.0001, 0.01)
    gap = b.erlingsson_accuracy(grid) - b.posterior_upper(grid, 0.5)
    assert gap.max() == pytest.approx(0.08579, abs=1e-4) and grid[gap.argmax()] == pytest.approx(0.88, abs=0.01)


@pytest.mark.parametrize("eps,gap", [(1.0, 0.0050813376), (2.0, 0.0378828427)])
def test_spec003_fig5_smallest_gap(eps, gap):
    p = np.linspace(0, 0.5, 200_001)  # below the cap at 1 - eps/4, where the gap is the uncapped one
    diff = b.sablayrolles_posterior(eps, p) - b.posterior_upper(eps, p)
    assert diff.min() == pytest.approx(gap, abs=1e-9)
    assert eps / 4 - math.tanh(eps / 4) == pytest.approx(gap, rel=1e-8)


@pytest.mark.parametrize("eps,val,pstar", [(0.1, 0.0499896, 0.4875026), (1, 0.4898373, 0.3775407),
                                           (3, 1.2702979, 0.1824255), (5, 1.6965673, 0.0758582)])
def test_spec003_positive_advantage_argmax(eps, val, pstar):
    ps, v = b.positive_advantage_argmax(eps)
    assert ps == pytest.approx(pstar, abs=5e-8) and v == pytest.approx(val, abs=5e-8)
    grid = np.linspace(0, 1, 200_001)
    assert grid[np.argmax(b.positive_advantage_upper(eps, grid))] == pytest.approx(ps, abs=1e-5)
    assert b.positive_advantage_upper(eps, 0.5) == pytest.approx(math.tanh(eps / 2), rel=1e-12)


def test_spec003_defender_inverses():
    assert b.max_sampling_probability(2, 0.5) == pytest.approx(0.1192029, abs=5e-8)
    assert b.max_epsilon(0.01, 0.5) == pytest.approx(4.5951199, abs=5e-8)
    for e, a in [(0.5, 0.1), (3, 0.9), (8, 0.01)]:
        assert b.posterior_upper(e, b.max_sampling_probability(e, a)) == pytest.approx(a, rel=1e-12)
    with pytest.raises(ValueError, match="target must be >= prior"):
        b.max_epsilon(0.3, 0.2)


def test_edges_no_nan_no_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert b.posterior_upper(0, 0.3) == pytest.approx(0.3) and b.posterior_lower(0, 0.3) == pytest.approx(0.3)
        assert b.posterior_upper(3, 0.0) == 0.0 and b.posterior_lower(3, 0.0) == 0.0
        assert b.posterior_upper(3, 1.0) == 1.0 and b.posterior_lower(3, 1.0) == 1.0
        assert b.posterior_upper(800, 1e-3) == 1.0


@given(eps_st, p_st)
def test_corollary1_identities(e, p):
    assert b.nonmember_posterior_upper(e, p) == pytest.approx(1 - b.posterior_lower(e, p), abs=1e-12)
    assert b.nonmember_posterior_lower(e, p) == pytest.approx(1 - b.posterior_upper(e, p), abs=1e-12)
    assert b.posterior_lower(e, p) >= math.exp(-e) * p * (1 - 1e-12)


@given(st.floats(0.01, 20), st.floats(0.001, 0.999), st.floats(0.001, 0.999))
def test_monotone_in_prior(e, p1, p2):
    lo, hi = sorted([p1, p2])
    assert b.posterior_upper(e, lo) <= b.posterior_upper(e, hi) + 1e-15


@given(st.floats(0.0, 8.0), st.floats(0.0, 1.0))
def test_overall_accuracy_is_the_max_over_the_dp_region(e, p):
    # brute force: accuracy = (1-p)(1-FPR) + p TPR over the region's boundary TPR = 1 - f(FPR)
    alpha = np.linspace(0, 1, 4001)
    acc = (1 - p) * (1 - alpha) + p * (1 - b.tradeoff(alpha, e, 0.0))
    assert acc.max() <= b.overall_accuracy_upper(e, p) + 1e-12
    assert acc.max() >= b.overall_accuracy_upper(e, p) - 2e-3


BAD = [
    (b.posterior_upper, dict(eps=float("inf") * 0, prior=0.5), ValueError, "eps"),
    (b.nonmember_posterior_upper, dict(eps=1, prior=-0.1), ValueError, "prior"),
    (b.positive_advantage_upper, dict(eps=-1, prior=0.5), ValueError, "eps"),
    (b.positive_advantage_argmax, dict(eps=float("inf")), ValueError, "eps"),
    (b.overall_accuracy_upper, dict(eps=1, prior=2), ValueError, "prior"),
    (b.sablayrolles_posterior, dict(eps="1"), TypeError, "eps"),
    (b.max_sampling_probability, dict(eps=1, target=1.0), ValueError, "target"),
    (b.max_sampling_probability, dict(eps=-1, target=0.5), ValueError, "eps"),
    (b.max_epsilon, dict(prior=0.0, target=0.5), ValueError, "prior"),
    (b.erlingsson_accuracy, dict(eps=1, delta=2), ValueError, "delta"),
]


@pytest.mark.parametrize("fn,kwargs,exc,name", BAD, ids=lambda x: getattr(x, "__name__", None))
def test_bad_input_raises_clearly(fn, kwargs, exc, name):
    with pytest.raises(exc, match=rf"\b{name}\b"):
        fn(**kwargs)
