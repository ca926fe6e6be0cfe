"""dpmia.sgm's bounds that need no PLD (Rényi DP, KL/Pinsker, χ², exact attacks, sampling patterns, CLT, Monte
Carlo)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmia import sgm


def inside(bracket, ref, tol):
    lo, hi = bracket
    return lo - tol <= ref <= hi + tol


def test_C15_C16_kl_pinsker():
    for (q, s), v in zip([(0.02, 0.5), (0.02, 1), (0.001, 1), (0.3, 2)],
                         [4.366150e-3, 3.280884e-4, 8.568462e-7, 1.192402e-2]):
        assert sgm.kl(q, s) == pytest.approx(v, rel=1e-6)
    assert sgm.pinsker_bound(0.02, 1, 2500) == pytest.approx(0.6404, abs=5e-5)
    assert sgm.pinsker_bound(0.001, 1.5, 10000) == pytest.approx(0.0374, abs=5e-5)
    assert sgm.kl(0.02, 0.5, direction="PQ") == pytest.approx(2.9141e-3, rel=1e-4)


def test_C17_rdp_integer_and_fractional():
    np.testing.assert_allclose(sgm.rdp(0.02, 0.5, [2, 3, 1.5]), [0.021212671944, 0.430402066994, 0.009152489055],
                               rtol=1e-9)
    # fractional quadrature agrees with the integer closed form when the order is (almost) an integer
    assert sgm.rdp(0.02, 0.5, 3.0 + 1e-9) == pytest.approx(sgm.rdp(0.02, 0.5, 3), rel=1e-6)
    assert sgm.rdp(0.3, 2.0, 1.0001) == pytest.approx(sgm.kl(0.3, 2.0), rel=1e-3)


def test_C28_monte_carlo_within_4_se():
    est, se = sgm.mc_advantage(0.02, 1.0, 2500, 20_000, seed=0)
    assert abs(est - 0.473502) <= 4 * se
    bad, _ = sgm.mc_advantage(0.02, 1.0, 200, 2_000, seed=0, variant="as_printed")
    assert bad < 0  # the printed Algorithm 1 estimates -TV


def test_clt():
    assert sgm.clt_advantage(0.02, 0.5, 2500) == pytest.approx(0.99975, abs=5e-6)


def test_rdp_fractional_orders_cover_the_peak():
    r105 = sgm.rdp(0.5, 0.1, 10.5)
    assert sgm.rdp(0.5, 0.1, 10.0) <= r105 <= sgm.rdp(0.5, 0.1, 11.0)   # increasing in the order
    assert r105 == pytest.approx(524.2, rel=1e-3)
    assert sgm.kl(0.0264, 5.23e250) >= 0.0
    assert sgm.kl(0.0, 1.0) == 0.0 and sgm.rdp(0.0, 1.0, 2.5) == 0.0


@settings(max_examples=25, deadline=None)
@given(q=st.floats(1e-4, 0.5), sigma=st.floats(0.2, 20.0), steps=st.integers(2, 3000))
def test_pld_free_bounds_agree_with_the_certified_bracket(q, sigma, steps):
    lo, hi = sgm.advantage_bracket(q, sigma, steps, tol=1e-4)
    assert sgm.threshold_count_tv(q, sigma, steps) <= hi
    assert sgm.sum_test_tv(q, sigma, steps) <= hi
    assert sgm.chi2_tv_upper(q, sigma, steps) >= lo


def test_threshold_count_tv_equals_the_binomial_sum():
    # at c = 1/2 the monotone-likelihood-ratio tail difference is the summed TV of the two binomials
    from scipy import special, stats
    for q, s, T in [(0.1, 0.5, 50), (0.01, 0.3, 400), (0.3, 1.0, 20)]:
        a = special.ndtr(-0.5 / s)
        b = (1 - q) * a + q * (1 - a)
        k = np.arange(T + 1)
        direct = np.sum(np.maximum(stats.binom.pmf(k, T, b) - stats.binom.pmf(k, T, a), 0))
        assert sgm._tvbounds._count_tv(q, s, T, 0.5) == pytest.approx(direct, rel=1e-10, abs=2e-12)
        assert sgm.threshold_count_tv(q, s, T) >= sgm._tvbounds._count_tv(q, s, T, 0.5)


@pytest.mark.parametrize("q, s", [(1e-6, 0.2), (1e-4, 1.0), (0.3, 0.05), (0.01, 100.0)])
def test_sampling_pattern_bound_is_above_the_exact_one_step_profile(q, s):
    e = np.array([0.0, 0.01, 0.3, 2.0, 10.0])
    add = sgm.profile(e, q, s)[0]
    rem = -np.expm1(e) + np.exp(e) * sgm.profile(-e, q, s)[0]
    mix = np.array([sgm.mixture_delta_upper(q, s, 1, x) for x in e])
    assert np.all(mix >= add)
    assert np.all(mix >= rem - 1e-15)     # (the reference for remove cancels: 1 - y + y delta)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.floats(-6.0, 0.0), st.floats(-1.5, 3.0), st.integers(0, 7)), min_size=1, max_size=3),
       st.floats(-300.0, -0.5))
def test_rdp_certified_low_orders_first_gives_the_full_set_of_orders(stages, log_delta):
    # the certified Renyi eps reads the orders up to 32 first and the rest only where a lower bound on their
    # conversion does not clear the best low order: the answer (eps and order) must be the bits of all orders
    from dpmia.sgm._rdp import _FINE_ORDERS, _INT_ORDERS, _best_epsilon, _epsilon_rdp_certified, _rdp, _rdp_chord
    from dpmia.sgm._setting import Run
    runs = [Run(10.0 ** lq, 10.0 ** ls, int(10 ** lt)) for lq, ls, lt in stages]
    d = 10.0 ** log_delta
    r_int = np.zeros(_INT_ORDERS.size)
    for run in runs:
        r_int = r_int + run.steps * _rdp(run.q, run.sigma, _INT_ORDERS)
    a = np.concatenate([_INT_ORDERS, _FINE_ORDERS])
    full = _best_epsilon(np.concatenate([r_int, _rdp_chord(r_int, _FINE_ORDERS)]), a, d)
    assert _epsilon_rdp_certified(runs, d) == full
