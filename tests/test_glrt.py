"""Tests for dpmia.chisq and dpmia.glrt (Kaissis et al.): the paper's numbers, exactness against
mpmath, safe rounding, invariants (hypothesis) and bad input."""

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmia import attacks, chisq, gaussian, glrt

mp.mp.dps = 40


# ------------------------------------------------------------------ the paper's numbers
@pytest.mark.parametrize("delta,d,lam,value", [
    (1e-4, 1, 0.09, 0.3768),          # Fig. 1 at mu = 0.3 (printed 0.37)
    (1e-4, 1, 0.25, 1.0279),          # Fig. 1 at the captioned mu = 0.5
    (1e-4, 1, 1.0, 3.1114),           # Fig. 3 (3.11)
    (1e-4, 30, 1.0, 0.4612),          # Fig. 3 (0.46)
    (1e-2, 1, 70 / 36, 2.9437),       # Figs. 8/9 (2.94)
    (1e-2, 50, 50 / 12.25, 0.7599),   # Fig. 10 (0.76)
    (1e-2, 1, 50 / 12.25, 5.3907),    # Fig. 10 (5.39)
    (1e-5, 300, 1000.0, 391.74),      # large-lambda bracket expansion
])
def test_epsilon_values(delta, d, lam, value):
    assert glrt.epsilon(delta, d, lam) == pytest.approx(value, abs=1e-4 if value < 100 else 5e-3)


def test_npo_values_reuse_gaussian():
    assert gaussian.epsilon(1e-4, 0.3) == pytest.approx(0.9501, abs=1e-4)
    assert gaussian.epsilon(1e-4, 0.5) == pytest.approx(1.6981, abs=1e-4)
    assert gaussian.epsilon(1e-2, math.sqrt(50 / 12.25)) == pytest.approx(6.0839, abs=1e-4)
    assert glrt.amplified_epsilon(1e-4, 1, 1.0, 1.0, adversary="npo") == pytest.approx(3.8044, abs=1e-4)


def test_fig2_values_tangent_tv_auc():
    x = np.array([0.01, 0.1, 0.5])
    assert np.allclose(glrt.roc(x, 1, 1.0), [0.05771, 0.26360, 0.67462], atol=1e-5)
    assert np.allclose(glrt.roc_reverse(x, 1, 1.0), [0.01649, 0.16371, 0.70653], atol=1e-5)
    assert np.allclose(gaussian.tpr_at_fpr(x, 1.0), [0.09236, 0.38914, 0.84134], atol=1e-5)
    x1, y1 = glrt.tangent_points(1, 1.0)
    assert (x1, y1) == pytest.approx((0.277905, 0.484648), abs=1e-6)
    assert glrt.tv(1, 1.0) == pytest.approx(0.206744, abs=1e-6)
    assert glrt.delta(0.0, 1, 1.0) == pytest.approx(glrt.tv(1, 1.0), rel=1e-9)
    assert glrt.best_accuracy(1, 1.0) == pytest.approx(0.603372, abs=1e-6)
    assert glrt.auc(1, 1.0) == pytest.approx(0.635460, abs=1e-5)


def test_fig4_and_fig6_tables():
    ds = [1, 2, 5, 10, 20, 50, 100, 200, 300, 500]
    e4 = [3.1114, 2.3556, 1.4615, 0.9512, 0.6030, 0.3304, 0.2122, 0.1379, 0.1076, 0.0789]
    assert np.allclose([glrt.epsilon(1e-4, d, 1.0) for d in ds], e4, atol=1e-4)
    e1 = [glrt.epsilon(1e-1, d, 1.0) for d in ds]
    assert e1[:3] == pytest.approx([0.4923, 0.2349, 0.0390], abs=1e-4) and all(v == 0.0 for v in e1[3:])
    eps = np.array([0, 0.5, 1, 2, 3, 4, 5.0])
    dg = [0.20674, 0.098750, 0.040206, 3.7635e-3, 1.5118e-4, 2.4667e-6, 1.5859e-8]
    assert np.allclose(glrt.delta(eps, 1, 1.0), dg, rtol=1e-4)
    assert np.allclose(glrt.delta(eps, 1, 1.0), glrt.delta_d1(eps, 1.0), rtol=1e-9)


def test_asymptotics_fig5():
    assert glrt.gdp_mu_asymptotic(300, 10.0) == pytest.approx(0.408248, abs=1e-6)
    x = np.sort(np.concatenate([np.logspace(-8, 0, 4001)[:-1], np.linspace(0, 1, 4001)[1:-1]]))
    gdp = glrt.roc_clt(x, 300, 10.0, form="gdp")
    assert np.max(np.abs(glrt.roc(x, 300, 10.0) - gdp)) == pytest.approx(0.00379, abs=2e-4)
    assert np.max(np.abs(glrt.roc_reverse(x, 300, 10.0) - gdp)) == pytest.approx(0.00508, abs=2e-4)
    assert np.max(np.abs(glrt.roc(x, 300, 10.0) - glrt.roc_clt(x, 300, 10.0, form="eq35_printed"))) > 0.14
    assert np.max(np.abs(glrt.roc(x, 300, 10.0) - glrt.roc_clt(x, 300, 10.0))) < 0.007
    # not conservative: the GDP approximation understates epsilon
    assert glrt.epsilon(1e-5, 300, 10.0) == pytest.approx(1.7423, abs=1e-4)
    assert gaussian.epsilon(1e-5, 0.408248290463863) == pytest.approx(1.5906, abs=1e-4)


def test_asymptotic_regime_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        glrt.gdp_mu_asymptotic(300, 10.0)
    with pytest.warns(UserWarning, match="Theorem 3"):
        glrt.gdp_mu_asymptotic(300, 1000.0)
    with pytest.warns(UserWarning, match="regime"):
        glrt.gdp_mu_asymptotic(100, 50.0)


def test_subsampling_readings():
    a = [glrt.amplified_epsilon(dl, 1, 100 / 36, 0.2) for dl in (1e-2, 1e-4, 1e-5)]
    n = [glrt.amplified_epsilon(dl, 1, 100 / 36, 0.2, adversary="npo") for dl in (1e-2, 1e-4, 1e-5)]
    assert a == pytest.approx([1.3731, 4.0374, 5.0632], abs=1e-4)
    assert n == pytest.approx([1.9594, 4.7235, 5.7538], abs=1e-4)
    lo, hi = glrt.energy_epsilon_bracket(1e-4, 1, 1 / 36, 0.2, 100)
    assert lo <= hi and hi - lo < 1e-3 and abs(0.5 * (lo + hi) - 0.1085) < 2e-3
    # gamma = 1 is no subsampling: both adversaries' epsilon
    assert glrt.amplified_epsilon(1e-5, 1, 1000.0, 1.0) == pytest.approx(glrt.epsilon(1e-5, 1, 1000.0), rel=1e-9)
    assert glrt.amplified_epsilon(1e-5, 1, 1000.0, 1.0, adversary="npo") == pytest.approx(
        gaussian.epsilon(1e-5, math.sqrt(1000.0)), rel=1e-9)
    # the profile identity behind reading A
    e = np.array([0.5, 1.0, 2.0])
    ef = np.log1p(np.expm1(e) / 0.2)
    # (to rounding: the library deamplifies eps in the form with the least error, here an ulp from this one)
    assert np.all(glrt.amplified_delta(e, 1, 100 / 36, 0.2) >= 0.2 * glrt.delta_forward(ef, 1, 100 / 36) * (1 - 1e-13))


def test_composition():
    assert glrt.noncentrality(1.0, 6.0, 70) == pytest.approx(70 / 36)
    assert glrt.noncentrality_heterogeneous([1.0, 1.0], [6.0, 6.0]) == pytest.approx(2 / 36)
    with pytest.raises(ValueError, match="same length"):
        glrt.noncentrality_heterogeneous([1.0, 1.0], [1.0])


# ------------------------------------------------------------------ exactness against mpmath
def _mp_sf(t, d, lam, upper=True):
    t, lam, m = mp.mpf(t), mp.mpf(lam), mp.mpf(lam) / 2
    if lam == 0:
        return mp.gammainc(mp.mpf(d) / 2, t / 2, mp.inf, regularized=True) if upper else \
            mp.gammainc(mp.mpf(d) / 2, 0, t / 2, regularized=True)
    kc = int(max(m, mp.sqrt(lam * t) / 2))
    w = int(12 * mp.sqrt(kc + 1) + 60)
    ks = range(max(0, kc - w), kc + w) if upper else range(0, kc + w)
    s = mp.mpf(0)
    for k in ks:
        p = mp.exp(-m + k * mp.log(m) - mp.loggamma(k + 1))
        a = mp.mpf(d) / 2 + k
        s += p * (mp.gammainc(a, t / 2, mp.inf, regularized=True) if upper else
                  mp.gammainc(a, 0, t / 2, regularized=True))
    return s


@pytest.mark.parametrize("d,lam,t", [(1, 1.0, 1500.0), (5, 25.0, 3000.0), (30, 0.09, 0.01), (300, 4.0, 40.0),
                                     (300, 10.0, 2500.0), (1, 0.25, 1e-6), (50, 4.08, 150.0),
                                     (2237, 6689.152463000286, 8220.922567102953)])
def test_log_laws_against_mpmath(d, lam, t):
    for upper in (True, False):
        ref = _mp_sf(t, d, lam, upper)
        ours = (chisq.log_sf if upper else chisq.log_cdf)(t, d, lam)
        lr = float(mp.log(ref))
        assert abs(ours - lr) <= 2e-13 * max(1.0, abs(lr)), (upper, ours, lr)


def test_mixture_of_a_batch_equals_its_points_one_by_one():
    # a batch shares one window of Poisson terms, as wide as its widest point needs: a point far in the lower tail
    # (t = 1.8e-5 at lam = 5364, d = 16, log cdf -2786) then runs a ladder of a thousand steps, each multiplying its
    # increment by ~1e6 (held rescaled), and the bulk points of lam = 6689, d = 2237 sum hundreds of terms near 1
    # (the per-term logs of the older sum lost 4.7e-12 there; mpmath above)
    for d, lam, ts in [(16, 5363.594208410207, [1.7589539829895372e-05, 3000.0, 5400.0, 9000.0]),
                       (2237, 6689.152463000286, [1e-3, 5000.0, 8220.922567102953, 9328.293794988736, 12000.0])]:
        ts = np.array(ts)
        for fn in (chisq.log_sf, chisq.log_cdf):
            batch = fn(ts, d, lam)
            alone = np.array([fn(t, d, lam) for t in ts])
            assert np.all(np.isfinite(batch)) and np.all(batch <= 0.0)
            assert np.allclose(batch, alone, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("d", [1, 2, 7, 100, 1000, 10_000])
@pytest.mark.parametrize("lam", [1e-3, 1.0, 100.0, 1e4])
def test_likelihood_ratio_against_mpmath(d, lam):
    for t in (1e-6, 0.5 * d, d + lam, 5.0 * (d + lam)):
        ref = -mp.mpf(lam) / 2 + mp.log(mp.hyp0f1(mp.mpf(d) / 2, mp.mpf(lam) * t / 4, maxterms=10**7))
        ours = chisq.log_likelihood_ratio(t, d, lam)
        assert abs(ours - float(ref)) <= 1e-11 * max(1.0, abs(float(ref)))


def _mp_delta_d1(eps, mu):
    """Exact d = 1 forward profile (the closed form), 40 digits."""
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    s = mp.acosh(mp.exp(eps + mu * mu / 2)) / mu
    Q = lambda z: mp.erfc(z / mp.sqrt(2)) / 2  # noqa: E731
    return Q(s - mu) + Q(s + mu) - 2 * mp.exp(eps) * Q(s)


@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-12, 1e-50, 1e-300])
@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0])
def test_epsilon_never_understates_d1(delta, mu):
    e = glrt.epsilon(delta, 1, mu * mu)
    assert e > 0
    assert _mp_delta_d1(e, mu) <= delta                       # safe
    assert _mp_delta_d1(e * (1 - 1e-6), mu) > delta           # and tight to 1e-6 relative
    assert glrt.delta(e, 1, mu * mu) >= float(_mp_delta_d1(e, mu)) * (1 - 1e-12)


def test_delta_upper_bound_against_closed_form():
    eps = np.array([0.0, 0.1, 1.0, 5.0, 20.0])
    for mu in (0.2, 1.0, 4.0):
        ref = np.array([float(_mp_delta_d1(e, mu)) for e in eps])
        ours = glrt.delta_forward(eps, 1, mu * mu)
        assert np.all(ours >= ref) and np.allclose(ours, ref, rtol=1e-9)


# ------------------------------------------------------------------ structure and invariants
def test_corollary1_equals_theorem1_and_reflection():
    x = np.concatenate([np.logspace(-300, -1, 200), np.linspace(0.1, 1, 200)])
    for mu in (0.3, 0.5, 1.0, 2.0):
        assert np.max(np.abs(glrt.roc_d1(x, mu) - glrt.roc(x, 1, mu * mu))) < 1e-12
    xr = np.linspace(0, 1, 1001)
    r = glrt.roc(xr, 5, 2.0)
    assert np.max(np.abs(glrt.roc_reverse(1 - r, 5, 2.0) - (1 - xr))) < 1e-10


def test_symmetric_curve_is_concave_envelope():
    x = np.linspace(0, 1, 20001)
    for d, lam in ((1, 1.0), (30, 4.0)):
        rs = glrt.roc_symmetric(x, d, lam)
        upper = np.maximum(glrt.roc(x, d, lam), glrt.roc_reverse(x, d, lam))
        assert np.all(rs >= upper - 1e-12)
        assert np.all(np.diff(rs, 2) <= 1e-9)                     # concave
        assert np.max(rs - x) == pytest.approx(glrt.tv(d, lam), abs=1e-8)


def test_forward_dominates_reverse_on_grid():
    for d in (1, 5, 50, 300):
        for lam in (0.1, 1.0, 10.0):
            e = np.linspace(0, 0.5 * lam, 7)
            # equal at eps = 0 (both TV); each side carries its own SAFETY_MARGIN rounding
            assert np.all(glrt.delta_forward(e, d, lam) >= glrt.delta_reverse(e, d, lam) - 4 * glrt.SAFETY_MARGIN)


def test_tiny_fpr_and_lambda_zero():
    v = glrt.roc(1e-300, 30, 4.0)
    assert 1e-300 <= v < 1e-200
    assert glrt.roc(0.3, 5, 0.0) == 0.3 and glrt.delta(1.0, 5, 0.0) == 0.0 and glrt.epsilon(1e-5, 5, 0.0) == 0.0
    assert glrt.tv(5, 0.0) == 0.0


def test_deterministic():
    a = [glrt.epsilon(1e-5, 30, 4.0) for _ in range(3)]
    assert a[0] == a[1] == a[2]


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 400), lam=st.floats(1e-3, 200.0), x=st.floats(0.0, 1.0))
def test_roc_properties(d, lam, x):
    r = glrt.roc(x, d, lam)
    assert x <= r <= 1.0
    assert r <= gaussian.tpr_at_fpr(x, math.sqrt(lam)) + 1e-12      # Neyman-Pearson: NPO is stronger
    assert glrt.roc(x, d + 1, lam) <= r + 1e-12                      # weaker in higher dimension


@settings(max_examples=25, deadline=None)
@given(d=st.integers(1, 300), lam=st.floats(1e-2, 100.0), logd=st.floats(-30.0, -1.0))
def test_epsilon_delta_roundtrip(d, lam, logd):
    dl = 10.0 ** logd
    e = glrt.epsilon(dl, d, lam)
    assert 0.0 <= e <= gaussian.epsilon(dl, math.sqrt(lam)) * (1 + 1e-9) + 1e-9   # never above NPO
    if e > 0:
        assert glrt.delta(e, d, lam) <= dl * (1 + 1e-9)
        assert glrt.delta(e * (1 - 1e-5), d, lam) > dl


# ------------------------------------------------------------------ the simulated adversary
def test_monte_carlo_matches_theorem1():
    g = np.random.default_rng(0)
    d, lam = 50, 50 / 12.25
    ti = attacks.glrt_energies(20_000, d, 1.0, 3.5, 50, member=True, explicit_rounds=False, rng=g)
    to = attacks.glrt_energies(20_000, d, 1.0, 3.5, 50, member=False, explicit_rounds=False, rng=g)
    x = np.array([0.01, 0.1, 0.3, 0.5])
    r = attacks.threshold_roc(ti, to, chisq.isf(x, d))
    se = np.sqrt(r["tpr"] * (1 - r["tpr"]) / ti.size) + 1 / ti.size
    assert np.all(np.abs(r["tpr"] - glrt.roc(r["fpr"], d, lam)) < 4.5 * se + 0.01)
    fwd, fse, rev, rse = attacks.glrt_delta_mc(ti, to, 0.7599, d, lam)
    assert abs(fwd - glrt.delta_forward(0.7599, d, lam)) < 4 * fse
    assert abs(rev - glrt.delta_reverse(0.7599, d, lam)) < 4 * rse


def test_explicit_rounds_same_law():
    g = np.random.default_rng(1)
    a = attacks.glrt_energies(4000, 3, 1.0, 2.0, 10, member=True, explicit_rounds=True, rng=g)
    from scipy import stats
    assert stats.kstest(a, stats.ncx2(3, 10 / 4).cdf).pvalue > 1e-3


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call,exc,word", [
    (lambda: glrt.roc(0.5, 2.5, 1.0), ValueError, "d"),
    (lambda: glrt.roc(0.5, True, 1.0), TypeError, "d"),
    (lambda: glrt.roc(0.5, 2, -1.0), ValueError, "lam"),
    (lambda: glrt.roc(0.5, 2, float("nan")), ValueError, "lam"),
    (lambda: glrt.roc(1.5, 2, 1.0), ValueError, "fpr"),
    (lambda: glrt.roc(-0.1, 2, 1.0), ValueError, "fpr"),
    (lambda: glrt.epsilon(0.0, 2, 1.0), ValueError, "delta"),
    (lambda: glrt.epsilon(1.0, 2, 1.0), ValueError, "delta"),
    (lambda: glrt.delta(-0.5, 2, 1.0), ValueError, "eps"),
    (lambda: glrt.amplified_epsilon(1e-5, 1, 1.0, 0.0), ValueError, "gamma"),
    (lambda: glrt.amplified_epsilon(1e-5, 1, 1.0, 1.5), ValueError, "gamma"),
    (lambda: glrt.noncentrality(1.0, 1.0, 0), ValueError, "rounds"),
    (lambda: glrt.energy_epsilon_bracket(1e-5, 1, 1.0, 0.5, 0), ValueError, "rounds"),
    (lambda: glrt.roc_clt(0.5, 2, 1.0, form="bogus"), ValueError, "form"),
    (lambda: glrt.amplified_delta(1.0, 1, 1.0, 0.5, adversary="x"), ValueError, "adversary"),
    (lambda: attacks.glrt_energies(10, 2, 1.0, 1.0, 1, member=1, seed=0), TypeError, "member"),
    (lambda: chisq.log_sf(-1.0, 2), ValueError, "t"),
])
def test_bad_input(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


@pytest.mark.parametrize("delta,d,lam", [(1e-300, 1, 1e4), (1e-300, 10_000, 1e4), (1e-300, 10_000, 1e-6),
                                         (1e-5, 10_000, 1e-6), (0.5, 10_000, 1e4)])
def test_extreme_range_no_overflow(delta, d, lam):
    """Edges of the promised range (d, lam up to 1e4, delta down to 1e-300, eps above 709): finite, safe, no
    warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = glrt.epsilon(delta, d, lam)
        assert math.isfinite(e) and e <= gaussian.epsilon(delta, math.sqrt(lam)) * (1 + 1e-9) + 1e-9
        if e > 0 and lam >= 1e-3:   # for tiny lam, delta() is a valid but loose bound (Psi_lam - e^eps Psi_0 cancels)
            assert glrt.delta(e, d, lam) <= delta * (1 + 1e-9)
        ea = glrt.amplified_epsilon(delta, d, lam, 0.01)
        assert 0.0 <= ea <= e + 1e-12
        r = glrt.roc(np.array([0.0, 1e-300, 1e-5, 0.5, 1.0]), d, lam)
        assert np.all(np.isfinite(r)) and np.all((r >= 0) & (r <= 1)) and np.all(np.diff(r) >= 0)


def test_energy_bracket_default_grid_meets_its_tol_and_agrees_with_finer_grids():
    # the default grid is sized from the energy loss's own spread (chi-square divergence, not the
    # known-direction e^lam, 50x too wide at d = 650); every grid's bracket is certified, so all intersect
    lo, hi = glrt.energy_epsilon_bracket(1e-5, 650, 1.0, 0.02, 2500)
    assert hi - lo <= 1e-3 * hi
    for step in (3e-5, 1e-5):
        a, b = glrt.energy_epsilon_bracket(1e-5, 650, 1.0, 0.02, 2500, h=step)
        assert a <= hi and lo <= b
    # a finer grid never widens the pessimistic end by mass pushed to infinity (was 0.0845 at h = 1e-5)
    assert glrt.energy_epsilon_bracket(1e-5, 650, 1.0, 0.02, 2500, h=1e-5)[1] <= 0.0842
    lo4, hi4 = glrt.energy_epsilon_bracket(1e-4, 1, 1 / 36, 0.2, 100, tol=1e-4)
    assert hi4 - lo4 <= 1e-4 * hi4


def test_likelihood_ratio_inverse_brackets_the_root():
    for d, lam in ((1, 0.5), (3, 0.5), (650, 1.0), (2, 800.0)):
        y = -0.5 * lam + np.geomspace(1e-12, 30.0, 300)
        lo, hi = chisq.likelihood_ratio_inverse(y, d, lam)
        assert np.all(chisq.log_likelihood_ratio(lo, d, lam) <= y)
        assert np.all(chisq.log_likelihood_ratio(hi, d, lam) >= y)
        assert np.all(hi - lo <= 1e-14 * hi)


def test_energy_profile_not_understated_just_above_its_lowest_loss():
    # thresholds are sought at least 1e-12 (relative) above L(0) = -lam/2; a loss inside that window must
    # still get a profile at or above the exact one, which is at least 1 - e^x (was read at the floor: lower)
    from dpmia.glrt._energy import _forward, _log_tails, _loss_bounds

    for d, lam, g in ((3, 0.5, 1.0), (1, 2.0, 1.0), (650, 1.0, 0.02)):
        low = math.log1p(g * math.expm1(-0.5 * lam))
        x = low + np.abs(low) * np.array([1e-15, 1e-14, 1e-13, 5e-13, 1e-10, 1e-6])
        lo_s = _loss_bounds(lam, g)[0]
        b = _forward(x, 1.0, g, _log_tails(x, d, lam, g, lo_s), lo_s)
        assert np.all(b.up >= -np.expm1(x)), (d, lam, g)
        assert np.all((b.low <= b.up) & (b.low >= -np.expm1(x) - 4e-16)), (d, lam, g)


@pytest.mark.parametrize("d, lam, g", [(3, 800.0, 0.1), (2, 50.0, 1.0), (650, 1.0, 0.02), (1, 1 / 36, 0.2)])
def test_energy_one_round_bounds_are_tight_and_agree_with_reading_a(d, lam, g):
    # both directions' one-round bounds (the thresholds bracketed to 1e-14, the tails to 1e-13) lie within 1e-7
    # of each other (SAFETY_MARGIN times terms that cancel 1e3-fold in the far tail), and straddle the profiles of
    # reading A's identities (each rounded up there)
    from dpmia.glrt._energy import _energy_grid, _energy_span, _forward, _log_tails, _reverse

    span = _energy_span(d, lam, g)
    h = (span[2] - span[0]) / 2000
    x = _energy_grid(span, h)
    tails = _log_tails(x, d, lam, g, span[0])
    fwd = _forward(x, h, g, tails, span[0])
    rev = _reverse(x, h, g, tails, fwd.log_cell)
    # (away from the least loss: within 1e-12 of L(0) the threshold is only known to lie in [0, t_hi])
    away = x > span[1] + 1.5 * h
    for b, far in ((fwd, away), (rev, away[::-1])):
        assert np.all(b.low <= b.up) and np.all(b.up[far] - b.low[far] <= 1e-7 * b.up[far] + 1e-15)
    ef = glrt._subsampling._deamplify(np.maximum(x, span[1]), g)
    mid = (x > span[1]) & (ef > -0.5 * lam * (1 - 1e-9))
    ref_f = g * np.asarray(glrt.delta_forward(ef[mid], d, lam))
    assert np.all(fwd.low[mid] <= ref_f * (1 + 1e-9) + 1e-15)
    # reading A's add-remove profile at eps >= 0 is the larger of the two directions
    z = -x[::-1]
    pos = z >= 0.0
    ref = np.asarray(glrt.amplified_delta(z[pos], d, lam, g))
    assert np.all(rev.low[pos] <= ref * (1 + 1e-9) + 1e-15)
    at_z = _forward(z[pos], h, g, _log_tails(z[pos], d, lam, g, span[0]), span[0])
    both = np.maximum(at_z.up, rev.up[pos])
    assert np.all(ref <= both * (1 + 1e-6) + 1e-12)


def test_energy_bracket_without_subsampling_at_large_noncentrality():
    # gamma = 1: the lowest loss is -lam/2 itself (log1p(g expm1(-lam/2)) hit log1p(-1) from lam ~ 75 on);
    # the remove pair's losses are at most lam/2 a round, which caps its vacuous pessimistic end
    lo, hi = glrt.energy_epsilon_bracket(1e-5, 2, 50.0, 1.0, 10)
    assert 0.0 < lo <= hi <= lo * (1 + 1e-3)
    lo, hi = glrt.energy_epsilon_bracket(1e-5, 2, 80.0, 1.0, 10)
    assert 0.0 < lo <= hi < math.inf


def test_energy_bracket_where_lam_over_two_passes_709():
    # the remove direction was the add pair reflected, whose P-masses overflow a double beyond lam / 2 = 709; it
    # then fell back to its greatest loss, n lam / 2, as the upper end. Built on its own (the same thresholds and
    # tails, the negated grid), it reads like any other
    for args in ((1e-5, 2, 1600.0, 1.0, 10), (1e-5, 2, 3000.0, 0.5, 10)):
        lo, hi = glrt.energy_epsilon_bracket(*args)
        assert 0.0 < hi - lo <= 1e-3 * hi


def test_energy_bracket_at_large_noncentrality_keeps_the_included_rounds_mass():
    # at lam = 800 the null's mass sits within 1e-150 of the least loss, log(1 - gamma + gamma e^{-lam/2}); with
    # it inside a cell the dominated pair lost (1 - gamma)(e^{x_{j+1} - s} - 1) of the included rounds' mass, and
    # the bracket stayed 1.4 % wide on every grid; with a grid point just above it the default grid meets tol
    lo, hi = glrt.energy_epsilon_bracket(1e-5, 3, 800.0, 0.1, 10)
    assert 0.0 < hi - lo <= 1e-3 * hi
    a, b = glrt.energy_epsilon_bracket(1e-5, 3, 800.0, 0.1, 10, h=0.05)
    assert a <= hi and lo <= b and b - a <= 1e-4 * b


def test_energy_brackets_agree_where_the_null_tail_underflows():
    # beyond loss 700 the null's tail underflows; its cell masses, as differences of tails, were 0 there, and so
    # were the dominated pair's chord gaps: its curve lay above the exact profile between grid points, and a
    # coarse grid's lower end above a fine grid's upper end. Certified brackets on any grids must intersect.
    a, b = glrt.energy_epsilon_bracket(1e-5, 3, 2000.0, 0.5, 100, h=0.331)
    c, d = glrt.energy_epsilon_bracket(1e-5, 3, 2000.0, 0.5, 100, h=0.1)
    assert a <= d and c <= b
    assert b - a <= 1e-3 * b and d - c <= 1e-3 * d


def test_deamplify_keeps_its_digits_without_subsampling_far_below_zero():
    # log(1 + (e^x - 1)/g) is x itself at g = 1; as log1p(expm1(x)/g) it was -inf below x = -37 (e^x - 1
    # rounds to -1), every threshold there was read at T = 0, and the one-round bounds with it
    from dpmia.glrt._subsampling import _deamplify

    x = np.array([-300.0, -60.0, -37.5, -1.0, 0.3, 5.0])
    assert np.array_equal(_deamplify(x, 1.0), x)
    for g in (0.5, 0.999, 1 - 1e-12):
        ref = [float(mp.log(1 + (mp.e ** mp.mpf(v) - 1) / mp.mpf(g))) for v in x if v > math.log1p(-g)]
        got = _deamplify(x[x > math.log1p(-g)], g)
        assert np.allclose(got, ref, rtol=1e-13, atol=0.0), g


@pytest.mark.parametrize("dl, d, lam, g", [(1e-10, 100, 112.0, 1.0), (1e-5, 3, 800.0, 0.1), (1e-8, 10, 463.0, 1.0),
                                           (1e-6, 650, 1019.0, 0.5), (1e-9, 1, 0.5, 0.3)])
def test_energy_bracket_of_one_round_holds_reading_a(dl, d, lam, g):
    # one round with its own coin is reading A's pair: its eps (a root of the exact likelihood-ratio profiles,
    # computed apart from the grid pairs) lies in the bracket
    lo, hi = glrt.energy_epsilon_bracket(dl, d, lam, g, 1)
    ref = glrt.amplified_epsilon(dl, d, lam, g)
    assert lo <= ref * (1 + 1e-12) and ref <= hi * (1 + 1e-12) and hi - lo <= 1e-3 * hi


@pytest.mark.parametrize("args", [(3.0062159077899094e-06, 10, 463.19132404092, 1.0, 922),
                                  (1.2056675366794468e-09, 650, 0.9089551323343713, 1.0, 803),
                                  (1.0870563585385883e-10, 10, 658.6434301162549, 0.0028391401687209526, 1849)])
def test_energy_bracket_meets_tol_without_subsampling_and_at_large_noncentrality(args):
    # without subsampling the null's losses lie far below 0 (near -lam/2): values 1 - e^x plus terms far below an
    # ulp, whose differences were noise (atoms of u / (e^x h), clipped, the P-mass scaled away) and the remove
    # direction read from the reflected pair had vacuous slack: brackets 87 %, 1.1e-2 (or inf) and 1.7e-2 wide.
    # Now each value is read in the form whose error is least, increments from the small terms, the remove pair
    # built on its own
    lo, hi = glrt.energy_epsilon_bracket(*args)
    assert 0.0 < hi - lo <= 1e-3 * hi


@pytest.mark.parametrize("upper", [True, False])
def test_incomplete_gamma_ladder_along_its_columns_matches_mpmath(upper):
    # a few rows (one threshold search's worth) run the ladder along their columns at once (a step a column in
    # Python cost glrt.epsilon 60 ms at lam = 1000); both ladders against 40-digit mpmath, in the mixture's range
    # (a near x, up to 600 columns)
    rng = np.random.default_rng(3)
    mp.mp.dps = 40
    for _ in range(6):
        k, n = int(rng.integers(1, 5)), int(rng.integers(1, 600))
        x = rng.uniform(1.0, 1500.0, k)
        a0 = np.maximum(x * rng.uniform(0.5, 1.2, k) - 0.5 * n, 0.5)
        cols = chisq._ladder_columns(a0, x, n, upper)
        rows = chisq._ladder_rows(a0, x, n, upper)
        for i in range(k):
            for j in sorted({0, n // 2, n - 1}):
                a, xx = mp.mpf(a0[i]) + j, mp.mpf(x[i])
                ref = mp.gammainc(a, xx, mp.inf, regularized=True) if upper else mp.gammainc(a, 0, xx, regularized=True)
                if ref < mp.mpf("1e-280"):
                    continue
                ref = mp.log(ref)
                tol = 2e-14 * max(1.0, abs(float(ref)))       # the probability to 2e-14 relative
                assert abs(float(cols[i, j] - ref)) <= tol and abs(float(rows[i, j] - ref)) <= tol, (a0[i], x[i], j)


def test_energy_bracket_keeps_one_rounds_lower_end_where_inclusions_are_rare():
    # at gamma = 1.5e-4 the included rounds' losses sit a few steps of any affordable grid above the rest, and the grid
    # pairs' lower end was 0 (one round or a thousand); one round's certified lower bound (a threshold test) is a lower
    # end for any number of rounds: one round is then within tol of reading A's eps, and the thousand are at least it
    one = glrt.energy_epsilon_bracket(1e-6, 10, 40.0, 1.5e-4, 1)
    a = glrt.amplified_epsilon(1e-6, 10, 40.0, 1.5e-4)
    assert one[0] <= a <= one[1] * (1 + 1e-9) and one[1] - one[0] <= 1e-6 * one[1], (one, a)
    lo, hi = glrt.energy_epsilon_bracket(1e-6, 10, 40.0, 1.5e-4, 1000)
    assert one[0] <= lo <= hi and hi >= one[1] * (1 - 1e-9), (lo, hi, one)


def test_series_stopping_early_give_the_full_series_bits():
    # Loader's bd0 series and 0F1's power series stop as soon as no later term can change a bit (their terms keep one
    # sign and shrink); each must equal, bit for bit, the series summed term by term to its end
    rng = np.random.default_rng(11)
    for _ in range(200):
        x = 10 ** rng.uniform(-3, 6)
        a = x * (1 + rng.uniform(-0.25, 0.25, 50) * 10 ** rng.uniform(-12, 0, 50))
        near = np.abs(a - x) < 0.1 * (a + x)
        v = np.where(near, (a - x) / (a + x), 0.0)
        s, ej, v2 = (a - x) * v, 2.0 * a * v, v * v
        for j in range(1, 60):
            ej = ej * v2
            s = s + ej / (2 * j + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            full = np.where(near, s, a * np.log(a / x) + x - a)
        assert np.array_equal(chisq._bd0(a, x), full)
        b = 0.5 * int(rng.integers(1, 2000))
        w = rng.uniform(0.0, b + 1.0, 50)
        term, total = np.ones_like(w), np.zeros_like(w)
        for k in range(40):
            term = term * w / ((b + k) * (k + 1.0))
            total = total + term
        assert np.array_equal(chisq._log_0f1(b, w), np.log1p(total))


def test_energy_bracket_below_the_grids_float_slack_is_finite():
    # below about 1e-13 the grid pairs' float slack hides delta and their upper end was inf (and, as inf - lo > tol *
    # inf is False, one round's lower end was not applied); the full-output adversary's certified eps caps it (the
    # energies are a function of the releases), and one round's lower end stands
    from dpmia import sgm

    lo, hi = glrt.energy_epsilon_bracket(1e-20, 10, 5.0, 0.01, 100)
    full = sgm.epsilon_bracket(0.01, 1.0 / math.sqrt(5.0), 100, 1e-20)[1]
    assert 0.0 < lo < hi == full < math.inf
    assert lo >= glrt.energy_epsilon_bracket(1e-20, 10, 5.0, 0.01, 1)[0]
    # where the grid pairs are tight, the energy adversary's eps lies below the full-output adversary's, as it must
    lo10, hi10 = glrt.energy_epsilon_bracket(1e-10, 10, 5.0, 0.01, 1000)
    assert hi10 - lo10 <= 1e-3 * hi10 and hi10 <= sgm.epsilon_bracket(0.01, 1.0 / math.sqrt(5.0), 1000, 1e-10)[0]


def test_energy_bracket_outside_the_full_output_accountants_range_keeps_its_answer():
    # the full-output cap applies only where sgm accepts the setting (noise multiplier 1/sqrt(lam) in [0.01, 1e6],
    # steps <= 1e9); elsewhere the bracket is the grid pairs' one, not an error
    for args in [(1e-100, 1, 1e-13, 0.01, 100), (1e-20, 10, 5.0, 1e-9, 2 * 10**9)]:
        lo, hi = glrt.energy_epsilon_bracket(*args)
        assert 0.0 <= lo <= hi
