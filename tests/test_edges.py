"""Inputs at the edges that once crashed, hung or returned NaN: each must now answer (or be refused with a
ValueError/TypeError naming the parameter) within a few seconds."""
import math

import mpmath as mp
import numpy as np
import pytest

from dpmia import audit, chisq, gaussian, glrt, noisy_mean, report, sgm


def test_likelihood_ratio_for_huge_t_matches_the_series():
    # scipy's scaled Bessel function gives up near z = 1e11; Hankel's expansion takes over
    for t in (1e10, 1e12):
        mp.mp.dps = 40
        ref = float(-400 + mp.log(mp.hyp0f1(1, mp.mpf(800) * t / 4)))
        assert chisq.log_likelihood_ratio(t, 2, 800.0) == pytest.approx(ref, rel=1e-13)
    for t in (1e20, 1e300):
        v = chisq.log_likelihood_ratio(t, 2, 800.0)
        assert math.isfinite(v) and v == pytest.approx(math.sqrt(800.0 * t) - 400.0, rel=1e-6)


def test_gaussian_epsilon_for_tiny_mu_answers_safely():
    e = gaussian.epsilon(1e-200, 1e-14)
    mu = 1e-14
    # delta(e) <= Phi(mu/2 - e/mu) <= 1e-200 certifies it; and it is not far above the root
    assert math.exp(float(mp.log(mp.ncdf(mp.mpf(mu) / 2 - mp.mpf(e) / mu)))) <= 1e-200
    assert e <= 1.01 * mu * (0.5 * mu + 30.3)


def test_huge_integers_are_refused_naming_the_parameter():
    with pytest.raises(ValueError, match="^d must be an integer"):
        chisq.ppf(0.0, 10**400, 0.0)
    with pytest.raises(ValueError, match="^dataset_size must be an integer"):
        report.training_setting(10**400, 10, 2.0)
    with pytest.raises(ValueError, match="^steps must be an integer"):
        sgm.advantage_bound(0.1, 1.0, 10**30)


def test_scalars_where_one_number_is_meant():
    with pytest.raises(TypeError, match="^delta must be a single number"):
        glrt.energy_epsilon_bracket([0.5, 0.5], 3, 0.5, 0.1, 10)
    with pytest.raises(TypeError, match="sigma"):
        sgm.plds(0.1, [0.5, 0.5], 10)


def test_wrong_types_and_empty_arrays():
    with pytest.raises(TypeError, match="^game must be a GameResult"):
        audit.epsilon_lower_bound(None, 1e-5)
    with pytest.raises(ValueError, match="^diff must be a non-empty"):
        noisy_mean.tv_laplace_lattice(np.array([]), 1.0, 1.0)


def test_delta_at_the_float_minimum_and_one_step_tails():
    lo, hi = sgm.epsilon_bracket(0.5, 1.0, 10, 5e-324)
    assert 0 < lo <= hi
    # one step: the closed form, both ends, far in the tail (was (0, 3.6e-10))
    lo, hi = sgm.delta_bracket(1e-6, 0.5, 1, 4.061208933695222)
    assert 0 < lo <= hi <= lo * (1 + 1e-11)
    assert lo == pytest.approx(2.2e-22, rel=0.02)


def test_no_grid_names_the_run():
    with pytest.raises(ValueError, match="q=1e-300, sigma=0.01, steps=111"):
        sgm.plds(1e-300, 0.01, 111)
    # where a certified answer needs no grid (the target is almost never sampled), it is given
    a, lo, hi = sgm.tradeoff_bracket(1e-300, 0.01, 111)
    assert np.all(lo <= hi) and np.max(hi - lo) <= 1e-290 and np.all(hi == 1.0 - a)



@pytest.mark.parametrize("q, sigma, steps, eps", [(1.0, 1.0, 4, 77.79561949973207), (1.0, 1.0, 4, 78.34506135593784),
                                                  (1.0, 5.0, 10_000, 1000.0), (1e-3, 2.0, 1, 12.2),
                                                  (1e-3, 2.0, 1, 12.0), (0.01, 1.0, 1, 39.7)])
def test_closed_form_deltas_below_the_normal_range_keep_their_bracket(q, sigma, steps, eps):
    # below 2.2e-308 a relative step leaves a subnormal where it is: the closed forms (q = 1, one step) returned
    # (v, v), off the exact value by up to an ulp either way (a review found 6.99999985e-316 outside (6.99999984e-316,
    # 6.99999984e-316)); their ends now move by four units of the least subnormal too. Exact values: 60-digit mpmath
    # (a local precision: other tests' module-level settings stand)
    def gauss(e, mu):
        e, mu = mp.mpf(e), mp.mpf(mu)
        return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)
    with mp.workdps(60):
        if q == 1.0:
            exact = gauss(eps, mp.sqrt(steps) / sigma)
        else:
            exact = q * gauss(mp.log(1 + (mp.exp(eps) - 1) / q), 1 / mp.mpf(sigma))
        lo, hi = sgm.delta_bracket(q, sigma, steps, eps)
        assert lo <= exact <= hi, (lo, float(exact), hi)
    assert hi <= 1e-300
