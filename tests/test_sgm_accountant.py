"""dpmia.sgm's read-outs: checkable values of Mahloujifar et al., certified brackets, properties, determinism, bad
input."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpmia import bounds, gaussian, pld, sgm


def inside(bracket, ref, tol):
    lo, hi = bracket
    return lo - tol <= ref <= hi + tol


@pytest.mark.parametrize("q,s,v", [(0.02, 0.5, 0.013653789842741718), (0.02, 2, 0.003948253027316949),
                                   (0.001, 1, 0.0003829249225480261)])
def test_C5_single_step(q, s, v):
    assert sgm.single_step_tv(q, s) == pytest.approx(v, rel=1e-12)
    assert sgm.advantage_bound(q, s, 1) == pytest.approx(v, rel=1e-12)
    pe, op = sgm.plds(q, s, 2, h=1e-3)  # the PLD engine itself, one more step
    x, d, tail = sgm.single_step_grid(q, s, 1e-4)
    one_p = pld.from_profile(x, d, tail, "pessimistic")
    one_o = pld.from_profile(x, d, tail, "optimistic")
    assert one_o.tv() - 1e-8 <= v <= one_p.tv() + 1e-12


@pytest.mark.parametrize("s,v", [(5, 0.5204998778130465), (10, 0.2763263901682369), (20, 0.14031620480133383)])
def test_C6_full_batch(s, v):
    assert sgm.advantage_bound(1.0, s, 50) == pytest.approx(v, rel=1e-12)


@pytest.mark.parametrize("q,T,s,v", [
    (0.02, 2500, 0.5, 0.963193), (0.02, 2500, 0.75, 0.681782), (0.02, 2500, 1, 0.473502),
    (0.02, 2500, 1.5, 0.288974), (0.02, 2500, 2, 0.209188),                       # C7 CIFAR-10
    (0.001, 10000, 0.5, 0.242191), (0.001, 10000, 1, 0.052139), (0.001, 10000, 1.5, 0.029822),  # C8 MNIST
    (0.01, 5000, 0.5, 0.906142), (0.01, 5000, 1, 0.350834), (0.01, 5000, 5, 0.056922),        # C9 Fig 1b
    (0.1, 50, 0.5, 0.687589), (0.1, 50, 2, 0.146293),                                          # C10 App I
    (0.2, 25, 0.5, 0.768786),                                                                  # C11
])
def test_C7_to_C11_brackets_contain_reference(q, T, s, v):
    lo, hi = sgm.advantage_bracket(q, s, T)
    assert hi - lo <= 1e-4
    assert inside((lo, hi), v, 5e-7)  # survey values are printed to 6 decimals


def test_C14_sawtooth():
    a = sgm.advantage_bound(0.83, 1.0, 6, tol=1e-7)
    b = sgm.advantage_bound(0.84, 1.0, 5, tol=1e-7)
    assert a == pytest.approx(0.679195, abs=2e-6) and b == pytest.approx(0.641423, abs=2e-6) and a > b


def test_C18_C19_epsilon():
    assert sgm.epsilon_rdp(0.02, 1, 2500, 1e-5)[0] == pytest.approx(6.928, abs=2e-3)
    assert sgm.epsilon_rdp(0.001, 1, 10000, 1e-5)[0] == pytest.approx(0.788, abs=2e-3)
    for (q, s, T), v in [((0.02, 1, 2500), 6.345), ((0.02, 0.5, 2500), 39.890), ((0.02, 2, 2500), 2.184),
                         ((0.001, 1, 10000), 0.476), ((0.01, 1, 5000), 4.202)]:
        assert inside(sgm.epsilon_bracket(q, s, T, 1e-5), v, 5e-4)


def test_C20_C21_humphries():
    assert bounds.humphries_advantage(sgm.epsilon_rdp(0.02, 1, 2500, 1e-5)[0], 1e-5) == pytest.approx(0.9980, abs=5e-5)
    pe, _ = sgm.plds(0.02, 1.0, 2500)
    assert bounds.humphries_advantage(0.0, pe.delta(0.0)) == pytest.approx(pe.tv(), rel=1e-12)


def test_C22_C23_roc():
    np.testing.assert_allclose(sgm.tpr_at_fpr([1e-3, 1e-1], 0.02, 1, 2500), [0.03831, 0.49939], atol=2e-5)
    assert sgm.tpr_at_fpr(1e-3, 0.01, 1, 5000) == pytest.approx(0.015836, abs=1e-5)
    # ROC of the full-batch case is the Gaussian one
    assert sgm.tpr_at_fpr(0.01, 1.0, 2.0, 9) == pytest.approx(gaussian.tpr_at_fpr(0.01, 1.5), rel=1e-12)


def test_C24_C25_prior():
    assert sgm.prior_advantage(0.02, 1, 2500, 0.1) == pytest.approx(0.01261, abs=2e-5)
    assert sgm.prior_advantage(0.02, 1, 2500, 0.25) == pytest.approx(0.10719, abs=2e-5)
    for p, v in [(0.1, 0.012479), (0.25, 0.110162), (0.4, 0.304225)]:
        assert sgm.prior_advantage(1.0, 1 / 1.3, 1, p) == pytest.approx(v, abs=1e-6)
    assert sgm.prior_advantage(0.02, 1, 2500, 0.5) == pytest.approx(sgm.advantage_bound(0.02, 1, 2500), abs=1e-12)


@settings(max_examples=8, deadline=None)
@given(st.floats(0.005, 0.2), st.floats(0.6, 4.0), st.integers(10, 2000))
def test_monotone_and_below_other_bounds(q, s, T):
    lo, hi = sgm.advantage_bracket(q, s, T)
    assert 0.0 <= lo <= hi <= 1.0
    assert sgm.advantage_bracket(q, s, 2 * T)[1] >= lo            # increasing in T
    assert sgm.advantage_bracket(min(1.0, 1.5 * q), s, T)[1] >= lo  # increasing in q
    assert sgm.advantage_bracket(q, 1.5 * s, T)[0] <= hi           # decreasing in sigma
    assert lo <= sgm.pinsker_bound(q, s, T) + 1e-9
    for d in (1e-2, 1e-5):
        assert lo <= bounds.humphries_advantage(sgm.epsilon(q, s, T, d), d) + 1e-9


def test_budget_corner_never_above_one_never_nan():
    for q, s, T in [(0.5, 0.3, 100_000), (1e-4, 0.3, 100_000), (1e-4, 100, 100_000), (1.0, 0.3, 100_000)]:
        lo, hi = sgm.advantage_bracket(q, s, T)
        assert np.isfinite(lo) and np.isfinite(hi) and 0.0 <= lo <= hi <= 1.0


BAD = [
    (sgm.advantage_bound, dict(q=1.5, sigma=1.0, steps=10), ValueError, "q"),
    (sgm.advantage_bound, dict(q=0.1, sigma=0.0, steps=10), ValueError, "sigma"),
    (sgm.advantage_bound, dict(q=0.1, sigma=1.0, steps=2.5), ValueError, "steps"),
    (sgm.advantage_bound, dict(q=0.1, sigma=1.0, steps=True), TypeError, "steps"),
    (sgm.epsilon, dict(q=0.1, sigma=1.0, steps=10, delta=0.0), ValueError, "delta"),
    (sgm.tpr_at_fpr, dict(fpr=1.5, q=0.1, sigma=1.0, steps=10), ValueError, "fpr"),
    (sgm.rdp, dict(q=0.1, sigma=1.0, alpha=1.0), ValueError, "alpha"),
    (sgm.prior_advantage, dict(q=0.1, sigma=1.0, steps=10, prior=0.0), ValueError, "prior"),
    (sgm.mc_advantage, dict(q=0.1, sigma=1.0, steps=10, m=100, seed=0, variant="x"), ValueError, "variant"),
    (sgm.epsilon_rdp, dict(q=0.1, sigma=1.0, steps=10, delta=1e-5, conversion="x"), ValueError, "conversion"),
]


@pytest.mark.parametrize("fn,kwargs,exc,name", BAD, ids=lambda x: getattr(x, "__name__", None))
def test_bad_input_raises_clearly(fn, kwargs, exc, name):
    with pytest.raises(exc, match=rf"\b{name}\b"):
        fn(**kwargs)


def test_same_call_same_bits_under_load():
    """No clock in the result's path: identical bits with a busy thread beside the call."""
    import threading

    stop = threading.Event()

    def burn():
        x = np.random.default_rng(0).standard_normal(200_000)
        while not stop.is_set():
            np.fft.rfft(x)

    sgm.clear_caches()
    a = (sgm.advantage_bracket(1e-4, 5.0, 100_000), sgm.epsilon_bracket(0.01, 1.0, 10_000, 1e-5))
    sgm.clear_caches()
    th = threading.Thread(target=burn)
    th.start()
    try:
        b = (sgm.advantage_bracket(1e-4, 5.0, 100_000), sgm.epsilon_bracket(0.01, 1.0, 10_000, 1e-5))
    finally:
        stop.set()
        th.join()
    assert a == b


def test_same_bits_whatever_the_blas_thread_count():
    """The read-outs' sums are numpy's own (a BLAS dot's bits depend on how many threads it splits the sum over:
    delta and the advantage differed in their last digits with OPENBLAS_NUM_THREADS=1)."""
    import os
    import subprocess
    import sys

    code = ("from dpmia import sgm; print(repr((sgm.advantage_bracket(0.01, 1.0, 10_000), "
            "sgm.delta_bracket(0.01, 1.0, 10_000, 5.0), sgm.delta_bracket(1e-3, 5.0, 10, 0.337486))))")
    outs = []
    for n in ("1", "2", "4"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=n, OMP_NUM_THREADS=n, MKL_NUM_THREADS=n)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == outs[2]


@pytest.mark.parametrize("q,s,T,lo_ref", [
    # true eps above 709 (log of the largest double): the old accountant capped it there
    (0.9412548713422324, 0.512447804843228, 387, 825.0),
    (0.8538084383055233, 2.6615742427000333, 15111, 947.0),
    (0.07474954197861787, 0.7147989957484994, 66679, 940.0),
    (0.1862275641059474, 0.7313753658733225, 32348, 1970.0),   # dp-accounting's pessimistic value: 1974
])
def test_epsilon_beyond_exp_range(q, s, T, lo_ref):
    lo, hi = sgm.epsilon_bracket(q, s, T, 1e-5)
    assert lo_ref <= lo <= hi < math.inf and (hi - lo) <= 1e-3 * hi


def test_ordinary_settings_not_vacuous():
    lo, hi = sgm.epsilon_bracket(0.001, 1.0, 2, 1e-5)
    assert hi < 0.02 and hi - lo <= 1e-3 * hi
    lo, hi = sgm.advantage_bracket(0.001, 0.8, 500_000)             # dp-accounting: 0.506
    # the automatic FFT cap (2**21) limits the width here (about 0.02); certified, not vacuous
    assert lo <= 0.5057 and 0.5045 <= hi and hi - lo <= 0.03
    lo, hi = sgm.advantage_bracket(0.01, 0.2, 10)                   # exact: 0.0923
    assert lo <= 0.0923 <= hi + 1e-4 and hi - lo <= 1e-5
    assert sgm.advantage_bound(1e-4, 0.5, 2) <= 2e-4                 # truth <= 1.37e-4; 1 - (1-q)^T
    lo, hi = sgm.advantage_bracket(0.0001760278830770685, 0.8328952232876068, 3)   # exact: 1.65e-4
    # the exact value is printed to three digits: the truth lies in [1.645e-4, 1.655e-4]; the
    # width asked for is 1e-3 relative, but never below 1e-6 absolute (advantage_bracket's tol)
    assert 1.645e-4 <= hi and lo <= 1.655e-4 and hi - lo <= max(1e-3 * hi, 1e-6)
    lo, hi = sgm.epsilon_bracket(0.00031635303775357117, 0.5224203497265646, 14, 1e-5)   # truth ~ 0.22
    assert 0.21 <= lo <= hi <= 0.23 and hi - lo <= 1e-3 * hi
    # one step: exact in closed form (add) and by bisection (remove), also at delta = 1e-300
    assert sgm.epsilon(0.9, 0.2, 1, 1e-300) == pytest.approx(197.33, abs=0.01)
    assert sgm.epsilon_rdp(0.9, 0.2, 1, 1e-300)[0] >= sgm.epsilon(0.9, 0.2, 1, 1e-300)
    assert sgm.advantage_bound(1e-4, 0.5, 2) <= sgm.advantage_bound(1e-4, 0.5, 3)


@pytest.mark.parametrize("s", [0.01, 0.03, 0.1, 0.3])
def test_small_sigma_no_overflow(s):
    lo, hi = sgm.advantage_bracket(0.01, s, 10)
    assert 0.0 <= lo <= hi <= 1.0 - 0.99 ** 10 + 1e-12
    elo, ehi = sgm.epsilon_bracket(0.01, s, 1, 1e-5)      # one step: exact, in log space
    assert 0.0 < elo <= ehi <= elo * (1 + 1e-10) < math.inf
    if s >= 0.03:
        elo, ehi = sgm.epsilon_bracket(0.01, s, 10, 1e-5)
        assert 0.0 < elo <= ehi <= 1.01 * elo


def test_small_sigma_long_runs_and_tiny_q():
    # two separated mixture components: the threshold-counting attacker's exact binomial TV is a
    # lower end, the sampling probability 1 - (1 - q)^T an upper one
    lo, hi = sgm.advantage_bracket(0.3, 0.01, 10**7)
    assert 0.999 <= lo <= hi <= 1.0
    lo, hi = sgm.advantage_bracket(1e-6, 0.01, 10**7)
    cap = -math.expm1(10**7 * math.log1p(-1e-6)) * (1 + 1e-14)      # rounded up, as the library does
    assert lo <= hi <= cap and hi - lo <= 1e-5
    # no grid fits 1e7 steps at sigma = 0.1: the lower end comes from the most steps T / 4^k that fit
    # (eps grows with T), far above the one-step value (about 87.8)
    lo, hi = sgm.epsilon_bracket(0.3, 0.1, 10**7, 1e-5)
    lo_fewer = sgm.epsilon_bracket(0.3, 0.1, 10**7 // 4**2, 1e-5)[0]
    assert 1e6 < lo_fewer <= lo <= hi
    # delta far below the composition's float accuracy: the grid's upper end is infinite, which a finer
    # grid cannot change, so the read-out stops at once; RDP gives the upper end, one step the lower
    lo, hi = sgm.epsilon_bracket(0.01, 1.0, 1000, 1e-300)
    assert (sgm.epsilon_bracket(0.01, 1.0, 1, 1e-300)[1] <= lo <= hi
            <= sgm.epsilon_rdp_certified([(0.01, 1.0, 1000)], 1e-300)[0])
    # the same for a schedule; its RDP is the sum over the stages
    sched = [(0.01, 1.0, 500), (0.02, 2.0, 500)]
    lo, hi = sgm.epsilon_bracket_schedule(sched, 1e-300)
    assert 0 <= lo <= hi == pytest.approx(sgm.epsilon_rdp_certified(sched, 1e-300)[0], rel=1e-12) and math.isfinite(hi)
    # T = 2, q = 1e-4, sigma = 0.5: a 2-d quadrature (4001^2 points) gives 1.19946e-4
    lo, hi = sgm.advantage_bracket(1e-4, 0.5, 2)
    assert lo <= 1.19946e-4 <= hi and hi - lo <= 1e-2 * hi


@pytest.mark.parametrize("q, sigma, steps", [
    (1e-6, 1000.0, 10**7), (1e-6, 0.1, 10**5), (1e-6, 0.1, 10**7), (1e-4, 0.1, 1000),
    (0.01, 0.01, 10**7), (0.3, 0.1, 10**7), (1e-6, 0.01, 10), (0.01, 1000.0, 10**7)])
def test_corners_of_the_range_are_tight(q, sigma, steps):
    # tol 1e-5: width <= 1e-5 absolute or <= 1e-3 relative
    lo, hi = sgm.advantage_bracket(q, sigma, steps)
    assert 0.0 <= lo <= hi <= 1.0
    assert hi - lo <= max(1e-5, 1e-3 * hi)
    # the truth: CLT where the loss is nearly linear, the sampling probability for small sigma
    if sigma >= 100:
        assert (lo <= sgm.clt_advantage(q, sigma, steps) * (1 + 1e-3)
                and hi >= sgm.clt_advantage(q, sigma, steps) * (1 - 1e-3))


def test_epsilon_is_zero_when_even_the_tv_is_below_delta():
    # TV <= 1 - (1 - q)^T = 9.99996e-6 < delta: delta(eps) <= delta already at eps = 0
    assert sgm.epsilon_bracket(1e-6, 0.01, 10, 1e-5) == (0.0, 0.0)
    assert sgm.advantage_bracket(1e-6, 0.01, 10)[1] <= 1e-5
    # just above: not zero
    assert sgm.epsilon_bracket(1e-6, 0.01, 10, 9e-6)[1] > 0.0


def test_closed_forms_and_the_cap_are_rounded_outward():
    # exact values in 40-digit arithmetic; the float bracket must contain them (a reviewer found
    # 1-ulp breaks when (v, v) was returned rounded to nearest)
    import mpmath as mp
    mp.mp.dps = 40
    for q, s, T in [(0.01, 1.0, 1), (0.5, 0.1, 1), (1.0, 0.7, 2), (0.45212549072259206, 0.05, 1)]:
        exact = mp.mpf(q) * (2 * mp.ncdf(mp.sqrt(T) / (2 * mp.mpf(s))) - 1)
        lo, hi = sgm.advantage_bracket(q, s, T)
        assert mp.mpf(lo) <= exact <= mp.mpf(hi)
    for q, T in [(0.001, 2), (0.001, 3), (1e-6, 10**7), (0.00111004, 1000)]:
        cap = 1 - (1 - mp.mpf(q)) ** T
        assert sgm.sampled_cap(q, T) >= cap
        # at sigma = 0.05 the TV is within 2 T Phi(-10) of the cap; the upper end must still cover it
        assert mp.mpf(sgm.advantage_bracket(q, 0.05, T)[1]) >= cap - 2 * T * mp.ncdf(-10)


def test_same_bits_whatever_was_read_before():
    # composed pairs are shared through the engine's caches: a read-out must not round differently
    # because another read-out already built a pair's tables
    sgm.clear_caches()
    cold = sgm.advantage_bracket(0.01, 1.0, 1000)
    sgm.tpr_bracket([1e-3, 0.1], 0.01, 1.0, 1000)
    assert sgm.advantage_bracket(0.01, 1.0, 1000) == cold


@pytest.mark.parametrize("args", [(0.01, 1.0, 1000, 1e-3), (0.01, 1000, 1e-3, 1.0), (1000, 0.01, 1.0, 1e-3)])
def test_tpr_at_fpr_in_the_wrong_order_says_which_argument_is_which(args):
    # (q, sigma, steps, fpr) or other orders: still refused, and the message gives the order
    with pytest.raises((TypeError, ValueError), match=r"\(fpr, q, sigma, steps\)"):
        sgm.tpr_at_fpr(*args)


@pytest.mark.parametrize("q, sigma, steps, eps, neighbours", [
    (3.5489406428725797e-06, 12.342128204146345, 3, 0.0, "add-remove"),
    (2.434922596824015e-06, 8.939233643070294, 762, 0.0, "add-remove"),
    (2.7861551340177455e-06, 1.4902204485285093, 44, 0.0, "replace-one"),
    (1e-06, 1000.0, 10**7, 1e-12, "add-remove")])
def test_delta_next_to_zero_is_read_from_the_total_variation(q, sigma, steps, eps, neighbours):
    # delta(eps) lies between TV - (e^eps - 1) and TV: at tiny q a QA sweep found delta(0) 60 % wide, (1.17e-7,
    # 2.96e-7) from tilted read-outs that have no tilt at 0, where the TV read-out is tight at once
    lo, hi = sgm.delta_bracket(q, sigma, steps, eps, neighbours=neighbours)
    assert 0.0 < lo <= hi and hi - lo <= 1e-3 * hi, (lo, hi)
    a_lo, a_hi = sgm.advantage_bracket(q, sigma, steps, neighbours=neighbours, tol=1e-12)
    assert lo <= a_hi and a_lo - math.expm1(eps) <= hi
    # and no larger than delta a hair further from 0 allows (delta falls with eps)
    assert sgm.delta_bracket(q, sigma, steps, eps + 1e-9, neighbours=neighbours)[0] <= hi
