"""dpmia.gaussian: closed forms, checkable values of the specs, mpmath references, properties."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dpmia import bounds
from dpmia import gaussian as g

mp.mp.dps = 80


def mp_delta(eps, mu):
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    a = mu / 2 - eps / mu
    b = -mu / 2 - eps / mu
    return mp.ncdf(a) - mp.exp(eps) * mp.ncdf(b)


# ---------------------------------------------------------------- checkable values
def test_spec000_C8_delta():
    assert g.delta(1.0, 1.0) == pytest.approx(0.1269367375066, rel=1e-12)


@pytest.mark.parametrize("eps,delta,s", [(1, 1e-5, 3.730632), (10, 1e-2, 0.350097), (1, 1e-2, 1.877876),
                                         (0.5, 1e-5, 7.031827), (8, 1e-5, 0.600229)])
def test_spec000_C9_calibration(eps, delta, s):
    assert g.calibrate_sigma(eps, delta) == pytest.approx(s, rel=1e-6)


def test_calibration_against_high_precision_reference():
    # peers.md: sigma* = 3.730631634815942 (mpmath, 50 digits)
    assert g.calibrate_sigma(1.0, 1e-5) == pytest.approx(3.730631634815942, rel=1e-13)


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (0.5, 1e-5), (8.0, 1e-5), (10.0, 1e-2), (1.0, 1e-2),
                                       (0.1, 1e-10), (20.0, 1e-12), (3.0, 1e-50), (0.01, 1e-5), (50.0, 1e-5)])
def test_calibration_and_epsilon_safe_in_exact_arithmetic(eps, delta):
    s = g.calibrate_sigma(eps, delta)
    assert mp_delta(eps, 1 / mp.mpf(s)) <= delta
    mu = 1 / s
    e = g.epsilon(delta, mu)
    assert mp_delta(e, mu) <= delta
    # and tight: within 1e-13 relative of the exact root
    assert float(abs(mp_delta(eps, 1 / mp.mpf(s)) - delta) / delta) < 1e-11


def test_spec000_C10_scale_invariance():
    assert g.calibrate_sigma(1.0, 1e-5, 7.5) == pytest.approx(7.5 * g.calibrate_sigma(1.0, 1e-5), rel=1e-14)


def test_spec000_C11_epsilon():
    assert g.epsilon(1e-5, 1.0) == pytest.approx(4.377178, rel=1e-6)
    # round trip
    assert g.epsilon(1e-5, 1 / 3.730632) == pytest.approx(0.99999989, rel=1e-6)


def test_spec002_C1_tv():
    assert g.tv(1.0) == pytest.approx(0.3829249225480261, rel=1e-12)
    assert g.delta(0.0, 1.0) == pytest.approx(g.tv(1.0), rel=1e-13)


@pytest.mark.parametrize("a,mu,val", [(0.5, 1, 0.345305057618), (2, 1, 0.690610115237),
                                      (0.1, 2.5, 0.497926629464), (7.3, 1, 3.171486185299)])
def test_spec002_C2_tv_a(a, mu, val):
    assert g.tv_a(a, mu) == pytest.approx(val, rel=1e-10)


def test_tv_a_matches_erf_closed_form():
    from scipy.special import erf
    for a in [0.1, 0.5, 1.0, 2.0, 7.3]:
        for mu in [0.3, 1.0, 2.5]:
            A = (mu**2 - 2 * math.log(a)) / (2 * math.sqrt(2) * mu)
            B = (-mu**2 - 2 * math.log(a)) / (2 * math.sqrt(2) * mu)
            assert g.tv_a(a, mu) == pytest.approx(0.5 * (erf(A) - a * erf(B)), rel=1e-12, abs=1e-15)


def test_tv_a_by_quadrature():
    from scipy import integrate, stats
    for a, mu in [(0.3, 0.7), (3.0, 1.5)]:
        f = lambda x, a=a, mu=mu: abs(stats.norm.pdf(x) - a * stats.norm.pdf(x, mu))  # noqa: E731
        val = 0.5 * integrate.quad(f, -40, 40, points=[(mu**2 - 2 * math.log(a)) / (2 * mu)], limit=200)[0]
        assert g.tv_a(a, mu) == pytest.approx(val, rel=1e-9)


# ---------------------------------------------------------------- extreme arguments
@pytest.mark.parametrize("eps,mu", [(100, 1.0), (50, 0.5), (300, 3.0), (1, 20.0), (0.0, 0.01),
                                    (30, 7.0), (5, 0.2), (700, 40.0), (720, 40.0), (1000, 45.0),
                                    (799, 40.0), (801, 40.0), (0.5, 1.0), (1.0, 1.5), (0.999, 2.0)])
def test_delta_relative_accuracy_in_the_tails(eps, mu):
    ref = mp_delta(eps, mu)
    assert ref > 0
    ours = g.log_delta(eps, mu)
    assert abs(ours - float(mp.log(ref))) <= 1e-10 * max(1.0, abs(float(mp.log(ref))))
    if float(ref) > 1e-300:
        assert g.delta(eps, mu) == pytest.approx(float(ref), rel=1e-9)


def test_delta_tiny_reaches_1e_minus_300_and_epsilon_inverts_it():
    mu = 1.0
    e = g.epsilon(1e-300, mu)
    assert g.delta(e, mu) <= 1e-300
    assert g.delta(e, mu) == pytest.approx(1e-300, rel=1e-9)
    assert float(mp.log(mp_delta(e, mu))) == pytest.approx(math.log(1e-300), rel=1e-12)


def test_tiny_mu_keeps_relative_accuracy():
    for mu in [1e-20, 1e-8, 1e-3]:
        for eps in [0.0, mu * mu / 4, mu * mu]:
            assert g.delta(eps, mu) == pytest.approx(float(mp_delta(eps, mu)), rel=1e-9)


def test_edges():
    assert g.delta(1.0, 0.0) == 0.0
    assert g.delta(math.inf, 1.0) == 0.0
    assert g.delta(3.0, math.inf) == 1.0
    assert g.epsilon(0.5, 0.0) == 0.0
    assert g.epsilon(1.0, 2.0) == 0.0
    assert g.tv(0.0) == 0.0 and g.tv(math.inf) == 1.0
    assert g.tradeoff(0.0, 1.0) == 1.0 and g.tradeoff(1.0, 1.0) == 0.0
    assert g.tpr_at_fpr(0.0, math.inf) == 1.0
    assert g.tv_a(1.0, 0.0) == 0.0 and g.tv_a(3.0, 0.0) == 1.0 and g.tv_a(0.2, 0.0) == pytest.approx(0.4)
    assert g.calibrate_sigma(0.0, 0.1) == pytest.approx(1 / g.mu_from_advantage(0.1), rel=1e-12)


def test_vector_and_scalar_kernels_agree():
    eps = np.linspace(0, 60, 121)
    for mu in [0.05, 0.3, 1.0, 4.0, 15.0]:
        vec = g.log_delta(eps, mu)
        sca = np.array([g._log_delta_scalar(float(e), mu) for e in eps])
        fin = np.isfinite(vec)
        assert np.array_equal(fin, np.isfinite(sca))
        np.testing.assert_allclose(vec[fin], sca[fin], rtol=1e-13, atol=1e-13)


def test_array_broadcasting_and_types():
    out = g.delta([0.0, 1.0], [[1.0], [2.0]])
    assert out.shape == (2, 2)
    assert isinstance(g.delta(1, 1), float)
    assert isinstance(g.calibrate_sigma([1, 2], 1e-5), np.ndarray)


def test_classical_calibration():
    assert g.classical_sigma(0.5, 1e-5) == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5)
    # the classical recipe is valid (over-noises) for eps < 1 ...
    for e in [0.1, 0.5, 0.9]:
        assert g.classical_sigma(e, 1e-5) >= g.calibrate_sigma(e, 1e-5)
    # ... and can under-noise above its range: at eps = 10, delta = 1e-2
    s = g.classical_sigma_formula(10.0, 1e-2)
    assert s == pytest.approx(0.31075, rel=1e-4)
    assert g.delta(10.0, 1 / s) > 1e-2
    with pytest.raises(ValueError, match=r"eps must lie in \(0, 1\)"):
        g.classical_sigma(1.0, 1e-5)


def test_gdp_mu_and_advantage_inverse():
    assert g.gdp_mu(1.0, 1e-5) == pytest.approx(1 / 3.730631634815942, rel=1e-13)
    assert g.tv(g.mu_from_advantage(0.25)) == pytest.approx(0.25, rel=1e-14)


# ---------------------------------------------------------------- properties
pos_eps = st.floats(0.0, 60.0)
pos_mu = st.floats(1e-3, 30.0)


@given(pos_eps, pos_eps, pos_mu)
def test_delta_decreasing_in_eps(e1, e2, mu):
    lo, hi = sorted([e1, e2])
    assert g.log_delta(hi, mu) <= g.log_delta(lo, mu) + 1e-12


@given(pos_eps, pos_mu, pos_mu)
def test_delta_increasing_in_mu(e, m1, m2):
    lo, hi = sorted([m1, m2])
    assert g.log_delta(e, lo) <= g.log_delta(e, hi) + 1e-12 * max(1, abs(g.log_delta(e, hi)))


@given(pos_eps, pos_mu)
def test_delta_in_unit_interval_and_below_tv(e, mu):
    d = g.delta(e, mu)
    assert 0.0 <= d <= g.tv(mu) * (1 + 1e-12)
    assert g.tv(mu) <= 1.0


@given(st.floats(0.01, 30.0), st.floats(1e-12, 0.5))
def test_calibration_is_safe_and_tight(e, d):
    s = g.calibrate_sigma(e, d)
    assert g.delta(e, 1 / s) <= d
    assert g.delta(e, 1 / s) == pytest.approx(d, rel=1e-9)


@given(st.floats(1e-250, 0.99), st.floats(0.01, 20.0))
def test_epsilon_never_understates(d, mu):
    e = g.epsilon(d, mu)
    assert g.delta(e, mu) <= d
    if e > 0:  # and is tight: a slightly smaller eps violates delta
        assert g.delta(e * (1 - 1e-9), mu) > d * (1 - 1e-6) or e < 1e-12


@given(st.floats(0.0, 1.0), st.floats(0.0, 10.0))
def test_tradeoff_is_symmetric_and_below_chance(alpha, mu):
    beta = g.tradeoff(alpha, mu)
    assert 0.0 <= beta <= 1.0 - alpha + 1e-12
    assume(1e-12 < alpha < 1 - 1e-12 and 1e-12 < beta < 1 - 1e-12)
    assert g.tradeoff(beta, mu) == pytest.approx(alpha, rel=1e-7, abs=1e-12)
    assert g.tpr_at_fpr(alpha, mu) == pytest.approx(1 - beta, abs=1e-12)


@given(st.floats(0.0, 1.0), st.floats(0.01, 6.0), st.floats(0.0, 20.0))
def test_gaussian_tradeoff_inside_every_dp_region_it_satisfies(alpha, mu, eps):
    # mu-GDP => (eps, delta(eps))-DP for every eps, so G_mu lies on or above f_{eps, delta(eps)}
    d = g.delta(eps, mu)
    assert g.tradeoff(alpha, mu) >= bounds.tradeoff(alpha, eps, d) - 1e-12


@given(st.floats(0.01, 50.0), st.floats(0.0, 6.0))
def test_tv_a_lower_bound_and_a_equals_one(a, mu):
    assert g.tv_a(a, mu) >= 0.5 * abs(1 - a) - 1e-15
    assert g.tv_a(1.0, mu) == pytest.approx(g.tv(mu), rel=1e-12, abs=1e-15)


# ---------------------------------------------------------------- bad input
BAD = [
    (g.delta, dict(eps=-1.0, mu=1.0), ValueError, "eps"),
    (g.delta, dict(eps=1.0, mu=-0.5), ValueError, "mu"),
    (g.delta, dict(eps=float("nan"), mu=1.0), ValueError, "eps"),
    (g.delta, dict(eps=True, mu=1.0), TypeError, "eps"),
    (g.delta, dict(eps="1", mu=1.0), TypeError, "eps"),
    (g.log_delta, dict(eps=1.0, mu=[1.0, -1.0]), ValueError, "mu"),
    (g.epsilon, dict(delta=0.0, mu=1.0), ValueError, "delta"),
    (g.epsilon, dict(delta=1.5, mu=1.0), ValueError, "delta"),
    (g.epsilon, dict(delta=1e-5, mu=float("inf")), ValueError, "mu"),
    (g.calibrate_sigma, dict(eps=-0.1, delta=1e-5), ValueError, "eps"),
    (g.calibrate_sigma, dict(eps=1.0, delta=0.0), ValueError, "delta"),
    (g.calibrate_sigma, dict(eps=1.0, delta=1.0), ValueError, "delta"),
    (g.calibrate_sigma, dict(eps=1.0, delta=1e-5, sensitivity=0.0), ValueError, "sensitivity"),
    (g.calibrate_sigma, dict(eps=float("inf"), delta=1e-5), ValueError, "eps"),
    (g.calibrate_sigma, dict(eps=None, delta=1e-5), TypeError, "eps"),
    (g.classical_sigma, dict(eps=2.0, delta=1e-5), ValueError, "eps"),
    (g.classical_sigma_formula, dict(eps=0.0, delta=1e-5), ValueError, "eps"),
    (g.gdp_mu, dict(eps=1.0, delta=2.0), ValueError, "delta"),
    (g.tv, dict(mu=-1.0), ValueError, "mu"),
    (g.mu_from_advantage, dict(adv=1.2), ValueError, "adv"),
    (g.tv_a, dict(a=0.0, mu=1.0), ValueError, "a"),
    (g.tv_a, dict(a=1.0, mu=float("inf")), ValueError, "mu"),
    (g.tradeoff, dict(alpha=1.5, mu=1.0), ValueError, "alpha"),
    (g.tradeoff, dict(alpha=0.5, mu=-1.0), ValueError, "mu"),
    (g.tpr_at_fpr, dict(fpr=-0.1, mu=1.0), ValueError, "fpr"),
]


@pytest.mark.parametrize("fn,kwargs,exc,name", BAD, ids=lambda x: getattr(x, "__name__", None))
def test_bad_input_raises_clearly(fn, kwargs, exc, name):
    with pytest.raises(exc, match=rf"\b{name}\b"):
        fn(**kwargs)


@given(st.one_of(st.floats(max_value=-1e-300), st.just(float("nan"))), st.floats(0.01, 10))
def test_negative_or_nan_eps_always_rejected(e, mu):
    with pytest.raises(ValueError, match="eps"):
        g.delta(e, mu)


# ---------------------------------------------------------------- threshold test under a prior
SIG = 4.0412


@pytest.mark.parametrize("offset,val", [(-100, 0.9977679797), (-50, 0.9548227450), (-10, 0.6603839494),
                                        (0, 0.5445106445)])
def test_spec003_toy_positive_accuracy(offset, val):
    assert g.threshold_precision(-offset / SIG, 1 / SIG) == pytest.approx(val, abs=5e-10)


@pytest.mark.parametrize("offset,val", [(-10, 0.5031503412), (0, 0.5488602466), (10, 0.5017130722)])
def test_spec003_toy_accuracy(offset, val):
    assert g.threshold_accuracy(-offset / SIG, 1 / SIG) == pytest.approx(val, abs=5e-10)


def test_spec003_toy_max_accuracy_and_tail():
    from scipy import optimize
    res = optimize.minimize_scalar(lambda o: -g.threshold_accuracy(-o / SIG, 1 / SIG), bounds=(-5, 5),
                                   method="bounded", options={"xatol": 1e-8})
    assert res.x == pytest.approx(-0.5, abs=1e-4)
    assert -res.fun == pytest.approx(0.5492337396, abs=1e-10)
    assert g.threshold_precision(0.5 / SIG, 1 / SIG) == pytest.approx(-res.fun, abs=1e-9)
    deep = g.threshold_precision(1000 / SIG, 1 / SIG)
    assert np.isfinite(deep) and deep > 0.999999
    offs = np.linspace(-300, 300, 601)
    prec = g.threshold_precision(-offs / SIG, 1 / SIG)
    assert np.all(np.diff(prec) <= 1e-15) and np.all(np.abs(prec[offs >= 60] - 0.5) < 1e-12)


@pytest.mark.parametrize("fn,kwargs,name", [(g.threshold_precision, dict(tau=0.0, mu=1.0, prior=0.0), "prior"),
                                            (g.threshold_precision, dict(tau=float("nan"), mu=1.0), "tau"),
                                            (g.threshold_accuracy, dict(tau=0.0, mu=-1.0), "mu")])
def test_threshold_bad_input(fn, kwargs, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        fn(**kwargs)


def test_tangent_fpr_touches_the_dp_region_at_two_mirror_points():
    mu = g.gdp_mu(1.0, 1e-5)
    a1, a2 = g.tangent_fpr(1.0, mu)
    assert 5.5e-5 < a1 < 5.7e-5 and 0.99983 < a2 < 0.99985
    for a in (a1, a2):  # G_mu meets f_{1,1e-5} there ...
        assert abs(g.tradeoff(a, mu) - bounds.tradeoff(a, 1.0, 1e-5)) < 1e-12
    # ... and lies strictly above it elsewhere
    alpha = np.linspace(1e-6, 1 - 1e-6, 20001)
    gap = g.tradeoff(alpha, mu) - bounds.tradeoff(alpha, 1.0, 1e-5)
    far = (np.abs(alpha - a1) > 1e-3) & (np.abs(alpha - a2) > 1e-3)
    assert gap.min() > -1e-12 and gap[far].min() > 1e-6
    # mirror images under the diagonal symmetry of G_mu
    assert abs(g.tradeoff(a1, mu) - a2) < 1e-12 and abs(g.tradeoff(a2, mu) - a1) < 1e-12


def test_classical_failure_epsilon_is_the_crossing():
    for d in (1e-2, 1e-5, 1e-6, 1e-12, 1e-300):
        e = g.classical_failure_epsilon(d)
        c = np.sqrt(2 * np.log(1.25 / d))
        assert e > 1.0
        assert g.delta(e, e / c) <= d * (1 + 1e-9)
        assert g.delta(e * (1 + 1e-6), e * (1 + 1e-6) / c) > d
    assert abs(g.classical_failure_epsilon(1e-5) - 8.4198) < 1e-4
    with pytest.raises(ValueError, match="delta"):
        g.classical_failure_epsilon(0.7)


@given(st.floats(-300.0, -1e-3), st.floats(-3.0, 2.0), st.floats(-12.0, 0.0))
def test_safe_up_in_batches_gives_the_sequential_answer(log_d, log_mu, rel):
    # gaussian.epsilon and calibrate_sigma round their roots up by testing x, x + s, x + 2s, ... 24 candidates per
    # call: the answer must be the candidate the one-at-a-time walk stops at, to the bit
    from dpmia import _gaussian_kernel as gk
    d, mu = 10.0 ** log_d, 10.0 ** log_mu
    root = float(g.epsilon(d, mu)) * (1.0 - 10.0 ** rel)
    seq = gk._safe_up(root, lambda e: gk._within_target(e, mu, d))
    batched = gk._safe_up(root, None, batch=lambda e: gk._within_target(e, mu, d))
    assert batched == seq
    assert float(g.delta(batched, mu)) <= d
