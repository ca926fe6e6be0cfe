"""dpmia.sgm under replace-one neighbours and fixed-size batches, against independent computations.

* Poisson, replace-one, two steps: the exact profile by one numerical integral over the first step's
  output (the second step's tails in closed form at a threshold found by root finding), no grid;
* fixed-size batches without replacement: the exact profile of concrete datasets (every batch of
  n = 4 records, B = 2) never exceeds the certified bound, which a configuration attains at T = 1;
* orderings that the theory implies (replace-one above add/remove's one step, fixed batches above
  Poisson's replace-one), the closed forms at q = 1 and T = 1, the refused combinations.
"""
import itertools
import math

import numpy as np
import pytest
from scipy import integrate, optimize, special

from dpmia import sgm

RO = {"neighbours": "replace-one"}
FIXED = {"neighbours": "replace-one", "sampler": "fixed"}


def _mix_logpdf(t, q, s, m):
    """log density of (1-q) N(0, s^2) + q N(m, s^2)."""
    return np.logaddexp(math.log1p(-q) - 0.5 * (t / s) ** 2, math.log(q) - 0.5 * ((t - m) / s) ** 2) \
        - math.log(s * math.sqrt(2 * math.pi))


def _loss(t, q, s):
    return _mix_logpdf(t, q, s, 1.0) - _mix_logpdf(t, q, s, -1.0)


def _tails(t, q, s):
    """(Q_R(T > t), P_R(T > t))."""
    a = (1 - q) * special.ndtr(-t / s) + q * special.ndtr(-(t - 1) / s)
    b = (1 - q) * special.ndtr(-t / s) + q * special.ndtr(-(t + 1) / s)
    return a, b


def _threshold(c, q, s):
    """The output t where the loss is c (the loss increases in t), by root finding."""
    lo, hi = -60 * s - 5, 60 * s + 5
    if _loss(lo, q, s) >= c:
        return -math.inf
    if _loss(hi, q, s) <= c:
        return math.inf
    return optimize.brentq(lambda t: _loss(t, q, s) - c, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=500)


def _delta_two_steps(eps, q, s):
    r"""H_{e^eps}(Q_R^2 || P_R^2) = \int [q(t) Q_R(L > eps - L(t)) - e^eps p(t) P_R(L > eps - L(t))] dt."""
    def inner(t):
        z = _threshold(eps - _loss(t, q, s), q, s)
        a, b = _tails(z, q, s) if math.isfinite(z) else ((1.0, 1.0) if z < 0 else (0.0, 0.0))
        lq, lp = _mix_logpdf(t, q, s, 1.0), _mix_logpdf(t, q, s, -1.0)
        return max(math.exp(lq) * a - math.exp(eps + lp) * b, 0.0)
    lim = 12 * s + 2
    pts = [-1.0, 0.0, 1.0]
    val, err = integrate.quad(inner, -lim, lim, points=pts, limit=400, epsabs=1e-13, epsrel=1e-11)
    return val, err


TWO_STEP = [(0.05, 1.0), (0.3, 0.7), (0.01, 0.5), (0.5, 2.0)]


@pytest.mark.parametrize("q, s", TWO_STEP)
def test_two_steps_against_direct_integration(q, s):
    for eps in (0.0, 0.3, 1.0):
        ref, err = _delta_two_steps(eps, q, s)
        lo, hi = sgm.delta_bracket(q, s, 2, eps, **RO)
        margin = 10 * err + 1e-12
        assert lo <= ref + margin and ref <= hi + margin, (eps, lo, ref, hi)
        assert hi - lo <= 1e-3 * max(ref, 1e-2)
    tv, err = _delta_two_steps(0.0, q, s)
    lo, hi = sgm.advantage_bracket(q, s, 2, **RO)
    assert lo - 10 * err <= tv <= hi + 10 * err


@pytest.mark.parametrize("q, s", TWO_STEP[:2])
def test_epsilon_two_steps_brackets_the_root(q, s):
    d = 1e-3
    lo, hi = sgm.epsilon_bracket(q, s, 2, d, **RO)
    assert _delta_two_steps(hi, q, s)[0] <= d * (1 + 1e-6)
    if lo > 0:
        assert _delta_two_steps(lo, q, s)[0] >= d * (1 - 1e-6)


def test_closed_forms():
    # q = 1: N(1, s^2) against N(-1, s^2) T times, the Gaussian mechanism with mu = 2 sqrt(T) / s
    lo, hi = sgm.advantage_bracket(1.0, 2.0, 9, **RO)
    assert lo <= math.erf(1.5 / math.sqrt(2.0)) <= hi        # 2 Phi(mu / 2) - 1, mu = 3
    e = sgm.epsilon(1.0, 2.0, 9, 1e-5, **RO)
    assert e == pytest.approx(sgm.epsilon(1.0, 1.0, 9, 1e-5), rel=1e-12)      # add/remove at sigma / 2
    # one step: q (2 Phi(1/s) - 1), and the exact single-step epsilon
    lo, hi = sgm.advantage_bracket(0.02, 1.5, 1, **RO)
    assert lo <= 0.02 * math.erf(1 / (1.5 * math.sqrt(2))) <= hi
    lo, hi = sgm.epsilon_bracket(0.02, 1.5, 1, 1e-4, **RO)
    assert hi - lo <= 1e-9 * hi
    assert float(sgm.profile(hi, 0.02, 1.5, **RO)[0]) <= 1e-4 * (1 + 1e-8)


@pytest.mark.parametrize("q, s, T", [(0.01, 1.0, 1000), (0.001, 0.8, 10_000), (0.1, 5.0, 100), (0.01, 0.3, 300)])
def test_orderings(q, s, T):
    add = sgm.advantage_bracket(q, s, T)
    rep = sgm.advantage_bracket(q, s, T, **RO)
    fix = sgm.advantage_bracket(q, s, T, **FIXED)
    # replace-one: at least the add/remove game's one step, at most twice its TV (triangle inequality)
    assert rep[0] <= 2 * add[1] + 1e-12
    assert rep[1] >= sgm.single_step_tv(q, s, **RO)
    # the fixed-batch bound dominates Poisson's replace-one pair step by step, hence after T steps
    assert fix[1] >= rep[0]
    for b in (rep, fix):
        assert 0 <= b[0] <= b[1] <= min(1.0, sgm.sampled_cap(q, T))
    assert rep[1] - rep[0] <= 1.5e-5
    # fixed batches: the lower end is what the dataset with opposite gradients attains, the add/remove run at
    # sigma / 2 (so the bracket holds the worst case, and is as wide as the bound is loose)
    assert fix[0] == pytest.approx(sgm.advantage_bracket(q, s / 2, T)[0], abs=1e-12) or fix[0] > fix[1] - 1.5e-5


def _batch_mixture(grads, target, q_batch, s):
    """The output law of one fixed-size step (every batch of size B equally likely) as (means, weights)."""
    n = len(grads)
    b = q_batch
    means = []
    for batch in itertools.combinations(range(n), b):
        means.append(sum(grads[i] for i in batch))
    return np.array(means, float), np.full(len(means), 1.0 / len(means))


def _hockey(eps, m1, m2, s):
    """H_{e^eps}(sum_i w N(m1_i, s^2) || sum_j w N(m2_j, s^2)) by integration over a fine grid (1-d)."""
    t = np.linspace(min(m1.min(), m2.min()) - 12 * s, max(m1.max(), m2.max()) + 12 * s, 400_001)
    f1 = np.mean(np.exp(-0.5 * ((t[:, None] - m1[None, :]) / s) ** 2), axis=1) / (s * math.sqrt(2 * math.pi))
    f2 = np.mean(np.exp(-0.5 * ((t[:, None] - m2[None, :]) / s) ** 2), axis=1) / (s * math.sqrt(2 * math.pi))
    return float(integrate.simpson(np.maximum(f1 - math.exp(eps) * f2, 0.0), x=t))


@pytest.mark.parametrize("others", [(-1.0, -1.0, -1.0), (0.0, 0.0, 0.0), (0.3, -0.8, 1.0)])
def test_fixed_batches_never_exceed_the_bound(others):
    """n = 4 records, batches of B = 2 (q = 1/2): the target x = +1 replaced by x' = -1, every batch enumerated."""
    s = 1.2
    d = [1.0, *others]
    d2 = [-1.0, *others]
    m1, _ = _batch_mixture(d, 0, 2, s)
    m2, _ = _batch_mixture(d2, 0, 2, s)
    for eps in (0.0, 0.5, 1.5):
        exact = max(_hockey(eps, m1, m2, s), _hockey(eps, m2, m1, s))
        lo, hi = sgm.delta_bracket(0.5, s, 1, eps, **FIXED)
        assert exact <= hi + 1e-9, (others, eps, exact, hi)
        if others == (-1.0, -1.0, -1.0):
            # this configuration is the bounding pair itself (1 - q) N(-2) + q N(0) against N(-2)
            assert exact >= lo - 1e-6


def test_fixed_batches_need_replace_one_and_shuffling_is_refused():
    with pytest.raises(ValueError, match="needs neighbours='replace-one'"):
        sgm.epsilon(0.01, 1.0, 100, 1e-5, sampler="fixed")
    with pytest.raises(ValueError, match="no certified upper bound"):
        sgm.advantage_bound(0.01, 1.0, 100, neighbours="replace-one", sampler="shuffled")
    with pytest.raises(ValueError, match="sampler must be"):
        sgm.calibrate_sigma(0.01, 100, advantage=0.1, sampler="uniform")


def test_default_is_add_remove_poisson_bit_for_bit():
    for f in (lambda **k: sgm.advantage_bracket(0.01, 1.0, 500, **k),
              lambda **k: sgm.epsilon_bracket(0.01, 1.0, 500, 1e-5, **k),
              lambda **k: sgm.tpr_bracket(1e-3, 0.01, 1.0, 500, **k)):
        assert f() == f(neighbours="add-remove", sampler="poisson")


def test_calibration_under_replace_one():
    s = sgm.calibrate_sigma(0.01, 1000, advantage=0.1, **RO)
    assert sgm.advantage_bound(0.01, s, 1000, **RO) <= 0.1 < sgm.advantage_bound(0.01, s / 1.002, 1000, **RO)
    # replacing needs more noise than adding or removing
    assert s > sgm.calibrate_sigma(0.01, 1000, advantage=0.1)
    t = sgm.max_steps(0.01, 1.0, advantage=0.1, **RO)
    assert sgm.target_met(0.01, 1.0, t, advantage=0.1, **RO)[0]
    assert not sgm.target_met(0.01, 1.0, t + 1, advantage=0.1, **RO)[0]


def test_schedules_under_replace_one():
    one = sgm.advantage_bracket(0.01, 1.0, 400, **RO)
    sched = sgm.advantage_bracket_schedule([(0.01, 1.0, 200), (0.01, 1.0, 200)], **RO)
    assert sched[0] <= one[1] + 1e-6 and one[0] <= sched[1] + 1e-6


def test_sum_test_under_replace_one():
    from dpmia.sgm._tvbounds import _sum_test_tv
    # one step: the sign of the output is the optimal test, and its advantage the step's TV
    run = sgm.check_run(0.03, 0.7, 1, neighbours="replace-one")
    assert _sum_test_tv(run) == pytest.approx(sgm.single_step_tv(0.03, 0.7, **RO), rel=1e-12)
    for q, s, T in [(0.01, 1.0, 1000), (1e-4, 10.0, 100_000), (0.2, 3.0, 50)]:
        lo = _sum_test_tv(sgm.check_run(q, s, T, neighbours="replace-one"))
        assert 0 < lo <= sgm.advantage_bound(q, s, T, **RO)


def _largest_update_mc(batches, epochs, sigma, threshold, sign, n, rng):
    """Monte Carlo of P(max update > threshold) on the worst-case dataset (target's mean +1, or sign)."""
    y = rng.standard_normal((n, batches * epochs)) * sigma
    pos = rng.integers(0, batches, size=(n, epochs)) + batches * np.arange(epochs)
    np.put_along_axis(y, pos, np.take_along_axis(y, pos, axis=1) + sign, axis=1)
    return float(np.mean(y.max(axis=1) > threshold))


@pytest.mark.parametrize("batches, epochs, sigma", [(20, 3, 0.5), (50, 1, 0.8)])
def test_shuffled_lower_bounds_are_achieved_by_the_attack(batches, epochs, sigma):
    from dpmia.sgm._shuffle import _log_cdfs
    rng = np.random.default_rng(11)
    n = 200_000
    for t in (1.0, 1.5, 2.5):
        li, lo = _log_cdfs(t, batches, epochs, sigma, "replace-one")
        p_in = _largest_update_mc(batches, epochs, sigma, t, 1.0, n, rng)
        p_out = _largest_update_mc(batches, epochs, sigma, t, -1.0, n, rng)
        # the exact laws against simulation, within 5 standard errors
        assert abs(p_in - (1 - math.exp(li))) <= 5 * math.sqrt(0.25 / n)
        assert abs(p_out - (1 - math.exp(lo))) <= 5 * math.sqrt(0.25 / n)
    for t in (1.0, 2.0):
        # the opposite-gradient dataset: the target's batch moves by two clipping norms (add/remove form at sigma/2)
        li, lo = _log_cdfs(t / 2, batches, epochs, sigma / 2, "add-remove")
        p_in = _largest_update_mc(batches, epochs, sigma, t, 2.0, n, rng)
        p_out = _largest_update_mc(batches, epochs, sigma, t, 0.0, n, rng)
        assert abs(p_in - (1 - math.exp(li))) <= 5 * math.sqrt(0.25 / n)
        assert abs(p_out - (1 - math.exp(lo))) <= 5 * math.sqrt(0.25 / n)
    adv = sgm.shuffled_advantage_lower(batches, epochs, sigma, neighbours="replace-one")
    # the certified upper bound without amplification (2 sqrt(E) / sigma-GDP) is above every lower bound
    from dpmia import gaussian
    assert adv <= gaussian.tv(sgm.shuffled_gdp_mu(epochs, sigma))
    tpr = sgm.shuffled_tpr_lower(0.01, batches, epochs, sigma, neighbours="replace-one")
    assert 0 < tpr <= 1 and 0 < adv < 1
    # an attacker who knows less cannot do better than the worst-case game of the same sampler
    assert sgm.shuffled_advantage_lower(batches, epochs, sigma) <= adv
    with pytest.raises(ValueError, match="batches"):
        sgm.shuffled_advantage_lower(0, 1, 1.0)
    with pytest.raises(ValueError, match="fpr"):
        sgm.shuffled_tpr_lower(1.5, 10, 1, 1.0)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=20, deadline=None)
@given(q=st.floats(1e-4, 0.5), s=st.floats(0.3, 20.0), T=st.integers(1, 3000),
       sampler=st.sampled_from(["poisson", "fixed"]))
def test_replace_one_brackets_are_sane_and_deterministic(q, s, T, sampler):
    kw = {"neighbours": "replace-one", "sampler": sampler}
    lo, hi = sgm.advantage_bracket(q, s, T, **kw)
    assert 0.0 <= lo <= hi <= min(1.0, sgm.sampled_cap(q, T))
    assert hi >= sgm.single_step_tv(q, s, neighbours="replace-one") * (1 - 1e-12)
    if sampler == "poisson":
        assert lo <= 2.0 * sgm.advantage_bound(q, s, T) + 1e-12          # triangle inequality
    sgm.clear_caches()
    assert sgm.advantage_bracket(q, s, T, **kw) == (lo, hi)               # same bits from a cold start
    e_lo, e_hi = sgm.epsilon_bracket(q, s, T, 1e-5, **kw)
    assert 0.0 <= e_lo <= e_hi


def test_counting_attacker_under_replace_one(monkeypatch):
    from dpmia.sgm import _accountant
    from dpmia.sgm._tvbounds import _count_tv_r, _count_tv_r_at
    # the formula is the advantage of the attack "more ups than downs" (a step is up above c, down below -c):
    # against a simulation of the worst-case dataset (the slot's +1 against its replacement's -1)
    q, s, T, c = 0.3, 0.4, 20, 0.7
    rng = np.random.default_rng(5)
    n = 200_000
    wins = []
    for sign in (1.0, -1.0):
        y = rng.standard_normal((n, T)) * s + sign * (rng.random((n, T)) < q)
        wins.append(np.mean(np.sum(y > c, axis=1) > np.sum(y < -c, axis=1)))
    assert abs((wins[0] - wins[1]) - _count_tv_r_at(q, s, T, c)) < 5 * math.sqrt(0.5 / n)
    # the threshold is optimised: at least each fixed one, and at sigma = 0.1 over 1e5 steps with q = 1e-6 the
    # bracket meets tol on the counting attacker and the sampling cap alone, without a grid
    run = sgm.check_run(1e-6, 0.1, 100_000, neighbours="replace-one")
    best = _count_tv_r(run)
    assert all(best >= _count_tv_r_at(1e-6, 0.1, 100_000, c) for c in (0.5, 0.6, 0.7, 0.9))

    def no_grid(*args):
        raise AssertionError("a grid was built")
    monkeypatch.setattr(_accountant, "_plds", no_grid)
    sgm.clear_caches()
    lo, hi = sgm.advantage_bracket(1e-6, 0.1, 100_000, **RO)
    assert lo == best and hi - lo <= 1e-4 * hi
