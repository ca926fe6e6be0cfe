"""dpmia.sgm's far tails of long runs in two levels (white box): the coarse pairs measured against the composite, and
the read-outs against exact values and the one-level read-out."""
import math

import numpy as np
import pytest

from dpmia import gaussian, sgm
from dpmia.sgm import _fartail, _tiltlevels
from dpmia.sgm._chain import _initial_step
from dpmia.sgm._setting import check_run


def _spy(monkeypatch):
    used, real = [], _tiltlevels.leveled_direction

    def spy(*a, **k):
        got = real(*a, **k)
        used.append(got is not None)
        return got
    monkeypatch.setattr(_fartail, "leveled_direction", spy)
    return used


def _composite(n=3000, hf=2e-4, seed=1):
    # a smooth tilted composite with FFT-like noise (1e-14) on top: what the fine level hands the coarse one
    x = np.arange(n) * hf
    return np.exp(-0.5 * ((x - 0.3) / 0.05) ** 2) + 1e-14 * np.random.default_rng(seed).random(n), hf


@pytest.mark.parametrize("dominating", [True, False])
def test_the_coarse_pairs_hold_their_side_up_to_float_noise(dominating):
    r, hf = _composite()
    m, lam = 8, 6.0
    atoms = (_tiltlevels._split if dominating else _tiltlevels._lowered)(r, m, hf, lam)
    splits, total = _tiltlevels._measured(r, atoms, m, hf, lam, dominating)
    kap, a = splits[0]                       # (the tightest threshold: relative excess at most 1e-13)
    assert kap <= 1e-13 and a <= 1e-12 * total, (kap, a)
    assert abs(float(np.sum(atoms)) / float(np.sum(r)) - 1.0) < 1e-2


def test_the_dominated_coarse_pair_holds_its_side_at_a_sharp_edge():
    # a composite that starts abruptly (as 73,564 steps at q = 6.9e-5, sigma = 0.35 do): the lowering exceeds the
    # atoms at the edge, and the negative ones carried up kept their tilted mass, raising the untilted total by 6.5e-3
    # (an excess the measurement found and a read-out charged K-fold); carried with their untilted mass, none
    n, hf, m, lam = 3000, 2e-4, 8, 6.0
    x = np.arange(n) * hf
    r = np.where(x < 0.1, 0.0, np.exp(-0.5 * ((x - 0.1) / 0.05) ** 2))
    r[:5] = 1e-16
    r += 1e-14 * np.random.default_rng(1).random(n) * (x >= 0.1)
    atoms = _tiltlevels._lowered(r, m, hf, lam)
    splits, total = _tiltlevels._measured(r, atoms, m, hf, lam, False)
    kap, a = splits[0]
    assert kap <= 1e-13 and a <= 1e-12 * total, (kap, a)


def test_a_coarse_pair_on_the_wrong_side_is_measured_so():
    # the measurement, not the construction, certifies: atoms 1 % too heavy for a dominated pair (or too light for a
    # dominating one) show as a relative excess of about 1 %, which a K-fold read-out then charges
    r, hf = _composite()
    m, lam = 8, 6.0
    low = _tiltlevels._lowered(r, m, hf, lam) * 1.01
    high = _tiltlevels._split(r, m, hf, lam) * 0.99
    for atoms, dominating in ((low, False), (high, True)):
        splits, total = _tiltlevels._measured(r, atoms, m, hf, lam, dominating)
        assert all(kap >= 5e-3 or a >= 5e-3 * 1e-3 * total for kap, a in splits), (dominating, splits)


@pytest.mark.parametrize("sigma, steps, z", [(300.0, 2**17, 6.0), (300.0, 2**17, 25.0), (500.0, 10**6, 12.0)])
def test_two_levels_contain_the_exact_gaussian_tail(monkeypatch, sigma, steps, z):
    # q = 1: T steps are the Gaussian mechanism at mu = sqrt(T) / sigma, whose far tail is known in log space
    used = _spy(monkeypatch)
    run = check_run(1.0, sigma, steps)
    mu = math.sqrt(steps) / sigma
    e = 0.5 * mu * mu + z * mu
    exact = float(np.exp(gaussian.log_delta(e, mu)))
    sgm.clear_caches()
    lo, hi = _fartail.tilted_delta_bracket(run, e, 1e-3, _initial_step(run, 1e-3), exact / 10)
    assert any(used), used
    assert lo <= exact <= hi, (lo, exact, hi)
    assert hi - lo <= 1.5e-3 * hi


def test_a_long_run_far_tail_within_tol_in_two_levels(monkeypatch):
    # (1e-3, 1, 1e7), delta at eps(1e-10): one level is 1.2e-3 wide at its wide cap (3.9 M points), within tol only
    # after one more pass at the longest cap (8.4 M points); two levels (3125 steps on the fine grid, 3200 on one 27
    # times coarser) read it within tol on grids of 0.2 M points. The bracket meets the one-level one, read here on the
    # same call with the two levels turned off
    used = _spy(monkeypatch)
    e = 34.39240224554506
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(1e-3, 1.0, 10**7, e)
    assert any(used) and hi - lo <= 1e-3 * hi, (used, lo, hi)
    monkeypatch.setattr(_fartail, "leveled_direction", lambda *a, **k: None)
    sgm.clear_caches()
    one = sgm.delta_bracket(1e-3, 1.0, 10**7, e)
    assert max(lo, one[0]) <= min(hi, one[1]), (lo, hi, one)
    sgm.clear_caches()


def test_a_measurement_beyond_the_extended_range_gives_no_bound():
    # (a review's case) across a window of 240 at tilt 60 the untilting e^{-lam x} leaves the extended range: the masses
    # beyond would count as 0 and their excess go unmeasured (or, times e^{lam x}, give NaN): no bound, not a zero one
    r = np.full(241, 1e-3)
    r[-3] = 1.0
    splits, _ = _tiltlevels._measured(r, np.full(61, 1e-3), 4, 1.0, 60.0, True)
    assert all(a == math.inf for _, a in splits), splits
    assert all(math.isfinite(a) for _, a in _tiltlevels._measured(r, np.full(61, 1e-3), 4, 1.0, 1.0, True)[0])


def test_a_far_tail_at_a_sharp_edge_within_tol_in_two_levels(monkeypatch):
    # (a QA sweep's draw) the T1-fold composite starts abruptly; its dominated coarse pair, lowered by the generic gap
    # bound (a quarter of slope change times width), read 2.7e-3 wide where one level read 2.6e-4: lowered by the
    # gaps measured on the fine profile, within tol, on the same grids
    used = _spy(monkeypatch)
    sgm.clear_caches()
    lo, hi = sgm.delta_bracket(6.850043484077631e-05, 0.35132457656297245, 73564, 193.30194448154663)
    assert any(used) and 0.0 < lo <= hi and hi - lo <= 1e-3 * hi, (used, lo, hi)
    sgm.clear_caches()
