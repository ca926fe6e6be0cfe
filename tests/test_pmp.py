"""Tests for dpmia.pmp (Lowy et al.): exact exponential-mechanism PMP against brute force, Monte Carlo,
the Gaussian bound's sum trick against the double sum and the exact mixture, Prop. 5, Lemma 6, Lemma 13,
and bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmia import gaussian, mip, pmp


def _brute_expmech(a, beta):
    n = a.shape[1] // 2
    inc = pmp.subsets(2 * n, n)
    logits = -(beta / n) * (inc.astype(float) @ a.T)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p_in, p_out = pmp.mixtures(p, inc)
    d = np.log(p_in) - np.log(p_out)
    return float(np.max(np.abs(d))), float(max(d.max(), 0.0))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5), m=st.integers(2, 6), beta=st.floats(0.0, 10.0), seed=st.integers(0, 10**6))
def test_exponential_mechanism_matches_brute_force(n, m, beta, seed):
    a = np.random.default_rng(seed).random((m, 2 * n)) * 3     # logit gaps <= 30: the linear-space brute force is exact
    r = pmp.exponential_mechanism(a, beta)
    two, one = _brute_expmech(a, beta)
    # the brute force works in linear space: its log-ratios of small probabilities carry relative error ~1e-11
    assert r.eps_tilde == pytest.approx(two, rel=1e-9, abs=1e-10)
    assert r.one_sided == pytest.approx(one, rel=1e-9, abs=1e-10)
    assert r.one_sided <= r.eps_tilde + 1e-12


def test_one_sided_formula_understates_sometimes():
    """Prop. 9 prints a one-sided ratio; the two-sided value is larger on some instances."""
    g = np.random.default_rng(1)
    gaps = []
    for _ in range(100):
        a = g.random((4, 6)) * 3
        r = pmp.exponential_mechanism(a, 5.0)
        gaps.append(r.eps_tilde - r.one_sided)
    assert max(gaps) > 1e-3 and min(gaps) >= -1e-12


def test_n1_is_local_dp():
    a = np.array([[0.2, 1.3], [0.9, 0.1], [0.5, 0.5]])
    beta = 2.0
    lp = -beta * a - np.log(np.sum(np.exp(-beta * a), axis=0))
    assert pmp.exponential_mechanism(a, beta).eps_tilde == pytest.approx(np.max(np.abs(lp[:, 0] - lp[:, 1])), abs=1e-12)


def test_large_beta_no_underflow():
    """At the temperatures of Fig. 1 with tiny data spread, probabilities underflow in linear space."""
    g = np.random.default_rng(0)
    w = np.array([[1.0], [-1.0], [1.0]])
    x = pmp.parent_set(3, 1, sigma=0.01, clip=10.0, center=[1.0], rng=g)
    a = pmp.geometric_median_losses(w, x)
    beta = 5.0 / (2 * pmp.loss_sensitivity(a))
    r = pmp.exponential_mechanism(a, beta)
    assert math.isfinite(r.eps_tilde) and 0 < r.eps_tilde <= pmp.restricted_epsilon(a, beta) + 1e-9


def test_tilde_below_restricted_below_sensitivity_epsilon():
    g = np.random.default_rng(2)
    for _ in range(5):
        w = g.standard_normal((6, 2))
        w /= np.linalg.norm(w, axis=1, keepdims=True)
        x = pmp.parent_set(3, 2, rng=g)
        a = pmp.geometric_median_losses(w, x)
        beta = 5.0 / (2 * pmp.loss_sensitivity(a))
        r = pmp.exponential_mechanism(a, beta)
        assert r.eps_tilde <= pmp.restricted_epsilon(a, beta) + 1e-9 <= 5.0 + 1e-9


def test_monte_carlo_close_to_exact():
    g = np.random.default_rng(3)
    a = g.random((5, 12)) * 2
    exact = pmp.exponential_mechanism(a, 4.0).eps_tilde
    est, se = pmp.exponential_mechanism_mc(a, 4.0, 200_000, rng=g)
    assert abs(est - exact) < 4 * se + 0.01


def test_prop5_modular_sum():
    assert pmp.modular_sum_pmp(2) == math.inf
    assert pmp.modular_sum_pmp(3) == pytest.approx(math.log(2), abs=1e-12)
    assert pmp.modular_sum_pmp(4) == pytest.approx(math.log(1.25), abs=1e-12)
    assert pmp.modular_sum_pmp(5) == pytest.approx(math.log(7 / 6), abs=1e-12)
    assert pmp.modular_sum_pmp(6) == pytest.approx(math.log(38 / 37), abs=1e-12)
    assert pmp.modular_sum_pmp(6, loose=True) == pytest.approx(math.log(40 / 37), abs=1e-12)
    assert pmp.modular_sum_pmp(7) == pytest.approx(0.024491, abs=1e-6)
    assert pmp.modular_sum_pmp(8) == pytest.approx(0.002472, abs=1e-6)


def test_lemma6_and_lemma13():
    for e, v in [(0.1, 0.52498), (0.123, 0.53071), (1, 0.73106), (2.14, 0.89473), (5, 0.99331), (7, 0.99909),
                 (10, 0.99995)]:
        assert pmp.mia_success_bound(e) == pytest.approx(v, abs=1e-5)
    assert pmp.mia_success_bound(1.0, 0.05) == pytest.approx((math.e + 0.05) / (1 + math.e), abs=1e-12)
    assert pmp.mia_success_bound(1.0, 0.0, 0.1) == pytest.approx(0.9)       # "always out" is already best
    post = max(0.1 * math.exp(5) / (0.1 * math.exp(5) + 0.9), 0.9 * math.exp(5) / (0.9 * math.exp(5) + 0.1))
    assert 0.9 < pmp.mia_success_bound(5.0, 0.0, 0.1) <= post + 1e-12
    assert pmp.mip_eta_from_pmp(1.0) == pytest.approx((1 - math.exp(-1)) / 2)
    assert pmp.mip_eta_from_pmp(1.0, tight=True) == pytest.approx(mip.eta_from_dp(1.0))
    assert pmp.mip_eta_from_pmp(0.1, tight=True) < pmp.mip_eta_from_pmp(0.1)


@settings(max_examples=40, deadline=None)
@given(e=st.floats(0.0, 20.0), d=st.floats(0.0, 0.5), p=st.floats(0.01, 0.99))
def test_lemma6_bounds_the_posterior_form(e, d, p):
    b = pmp.mia_success_bound(e, d, p)
    assert max(p, 1 - p) <= b <= 1.0
    if d == 0.0:
        post = max(p * math.exp(e) / (p * math.exp(e) + 1 - p), (1 - p) * math.exp(e) / ((1 - p) * math.exp(e) + p))
        assert b <= post + 1e-12


def test_gaussian_sum_trick_equals_double_sum_and_bounds_exact():
    g = np.random.default_rng(4)
    x = g.standard_normal((8, 2))
    s = 0.3
    n = 4
    eps = 0.7
    dist = np.linalg.norm(x[:, None] - x[None], axis=2) / n
    trick = max(np.mean([gaussian.delta(eps, dist[i, j] / s) for j in range(8) if j != i]) for i in range(8))
    assert pmp.gaussian_pmp_double_sum(x, s, eps) == pytest.approx(trick, rel=1e-12)
    x1 = g.standard_normal(8)
    bound = pmp.gaussian_pmp_bound(x1[:, None], 0.2, 1e-3)
    exact = pmp.gaussian_pmp_exact_1d(x1, 0.2, 1e-3)
    assert 0 < exact <= bound + 1e-9


def test_gaussian_n1_is_tight():
    x = np.array([[0.0], [1.7]])
    s, dl = 0.9, 1e-3
    expected = gaussian.epsilon(dl, 1.7 / s)
    assert pmp.gaussian_pmp_bound(x, s, dl) == pytest.approx(expected, rel=1e-9)
    assert pmp.gaussian_pmp_exact_1d(x.ravel(), s, dl) == pytest.approx(expected, rel=1e-5)


def test_parent_set_and_sensitivity():
    g = np.random.default_rng(5)
    x = pmp.parent_set(50, 5, sigma=1.0, clip=20.0, outliers=2, outlier_scale=100.0, rng=g)
    norms = np.linalg.norm(x, axis=1)
    assert norms.max() <= 20.0 + 1e-12 and np.sum(norms > 19.99) >= 2
    assert pmp.global_loss_sensitivity(10.0, 6) == pytest.approx(11 / 6)
    a = np.array([[0.0, 2.0, 1.0, 3.0]])
    assert pmp.loss_sensitivity(a) == pytest.approx(3.0 / 2)


@pytest.mark.parametrize("call,exc,word", [
    (lambda: pmp.exponential_mechanism(np.ones((3, 5)), 1.0), ValueError, "2n"),
    (lambda: pmp.exponential_mechanism(np.ones((3, 4)), -1.0), ValueError, "beta"),
    (lambda: pmp.exponential_mechanism(np.array([[0.0, np.inf]]), 1.0), ValueError, "losses"),
    (lambda: pmp.exponential_mechanism(np.ones((2, 34)), 1.0), ValueError, "exponential_mechanism_mc"),
    (lambda: pmp.gaussian_pmp_bound(np.ones((4, 1)), 0.0, 1e-3), ValueError, "s"),
    (lambda: pmp.gaussian_pmp_bound(np.ones((4, 1)), 1.0, 1.0), ValueError, "delta"),
    (lambda: pmp.gaussian_pmp_bound(np.ones((3, 1)), 1.0, 1e-3), ValueError, "even"),
    (lambda: pmp.mia_success_bound(1.0, 2.0), ValueError, "delta"),
    (lambda: pmp.modular_sum_pmp(0), ValueError, "n"),
    (lambda: pmp.exponential_mechanism(np.ones((3, 4)), True), TypeError, "beta"),
])
def test_bad_input(call, exc, word):
    with pytest.raises(exc, match=word):
        call()
