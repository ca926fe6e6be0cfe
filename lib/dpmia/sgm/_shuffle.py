r"""Shuffled epochs: no certified upper bound, but a certified *lower* bound on the risk.

With shuffling, each epoch splits the data into ``batches`` disjoint batches, so the target is in
exactly one step per epoch. Poisson accounting (what :mod:`dpmia.sgm` certifies) does not cover
this sampler, and no tight accountant for it is known; Chua et al. (ICML 2024) show that its true
privacy can be far worse than the Poisson number. What can be certified is what one concrete
attack achieves on a worst-case dataset:

the other records' clipped gradients are 0 and the target's is one clipping norm along a direction
the attacker knows; its replacement's is the opposite (replace-one), or it is absent (add/remove).
Projected on that direction the :math:`T = EB` noisy updates (:math:`E` epochs, :math:`B` batches) are
independent :math:`\mathcal N(\mu_t, \sigma^2)`, with :math:`\mu_t = 1` at the target's step of each epoch
(uniform among the epoch's :math:`B`) and 0 elsewhere; :math:`-1` or 0 in the other world. The attack
thresholds the **largest update** :math:`S = \max_t y_t`, whose laws are exact:

.. math:: F_{\rm in}(s) = \Phi(s/\sigma)^{T-E}\,\Phi((s-1)/\sigma)^{E},\qquad
          F_{\rm out}(s) = \Phi(s/\sigma)^{T-E}\,\Phi((s+1)/\sigma)^{E}\ \text{(or } \Phi(s/\sigma)^{T}\text{)}.

"Member if :math:`S > s`" has advantage :math:`F_{\rm out}(s) - F_{\rm in}(s)` and, at the threshold
where :math:`1 - F_{\rm out}(s) = \alpha`, TPR :math:`1 - F_{\rm in}(s)` at FPR :math:`\alpha`: certified lower
bounds on the optimal attack's (every threshold is a real test), rounded down by their float error.

Under replace-one a second dataset is stronger where the noise is small: every other record's gradient
opposite to the target's, so that the target's batch sum moves by two clipping norms and every other
batch sum is the same in both worlds. In units of the shift that is the add/remove structure above at
:math:`\sigma/2`; the lower bounds take the larger of the two.

**An upper bound without amplification.** Under replace-one, couple the two runs through the same
shuffle: in each epoch only the target's batch differs, by at most two clipping norms, so for every
shuffle the run is a composition of :math:`E` Gaussian mechanisms with sensitivity 2, and mixing over the
shuffle (the same in both worlds) only lowers the divergence: the run is :math:`2\sqrt E/\sigma`-GDP
(Dong, Roth and Su 2022). Certified, but it ignores what shuffling hides and is loose, often vacuous.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .. import _checks
from ._setting import _SIGMA_HI, SIGMA_MIN, check_neighbours


def _check(batches, epochs, sigma, neighbours):
    b = _checks.integer("batches", batches, lo=1, hi=10**9)
    e = _checks.integer("epochs", epochs, lo=1, hi=10**7)
    s = _checks.scalar("sigma", sigma, lo=SIGMA_MIN, hi=_SIGMA_HI)
    return b, e, s, check_neighbours(neighbours)


def _log_cdfs(s, b, e, sigma, nb):
    """``(log F_in(s), log F_out(s))`` of the largest update (arrays)."""
    s = np.asarray(s, float)
    rest = (b * e - e) * special.log_ndtr(s / sigma)
    log_in = rest + e * special.log_ndtr((s - 1.0) / sigma)
    log_out = rest + e * (special.log_ndtr((s + 1.0) / sigma) if nb == "replace-one" else special.log_ndtr(s / sigma))
    return log_in, log_out


def _margin(b, e, log_in, log_out):
    """Relative float error bound of the exact laws: T terms of log_ndtr (a few ulps each) summed."""
    return 4.0 * 2.2e-16 * (abs(float(log_in)) + abs(float(log_out)) + 2.0 * b * e) + 1e-13


def _advantage_largest(b, e, s, nb):
    """Advantage of the largest-update attack at its best threshold, rounded down (one dataset)."""
    grid = s * np.linspace(-4.0, 12.0, 3201) + 0.5 * (1.0 if nb == "add-remove" else 0.0)
    grid = np.concatenate([grid, 1.0 + s * np.linspace(0.0, 40.0, 801)])
    li, lo = _log_cdfs(grid, b, e, s, nb)
    adv = np.exp(lo) - np.exp(li)
    k = int(np.argmax(adv))
    # refine the threshold near the best grid point (any threshold gives a valid lower bound)
    a, c = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    t_best = float(grid[k])
    if c > a:
        res = optimize.minimize_scalar(lambda t: -float(np.diff(np.exp(_log_cdfs(t, b, e, s, nb)[::-1]))[0]),
                                       bounds=(a, c), method="bounded", options={"xatol": 1e-10 * max(1.0, s)})
        if -res.fun > adv[k]:
            t_best = float(res.x)
    li, lo = _log_cdfs(t_best, b, e, s, nb)
    val = float(np.exp(lo) - np.exp(li))
    err = _margin(b, e, li, lo) * (float(np.exp(lo)) + float(np.exp(li)))
    return max(val - err, 0.0)


def shuffled_advantage_lower(batches, epochs, sigma, *, neighbours="add-remove"):
    r"""Certified lower bound on the membership advantage against ``epochs`` shuffled epochs of ``batches``
    batches each, noise multiplier ``sigma``: the largest-update attack on the worst of the datasets of the
    module docstring. No tight upper bound is known for shuffled batches (:func:`shuffled_gdp_mu` gives a
    loose one).

    Examples
    --------
    >>> from dpmia import sgm
    >>> round(sgm.shuffled_advantage_lower(100, 10, 0.5, neighbours="replace-one"), 3)   # 1,000 steps
    0.984
    """
    b, e, s, nb = _check(batches, epochs, sigma, neighbours)
    val = _advantage_largest(b, e, s, nb)
    if nb == "replace-one":
        val = max(val, _advantage_largest(b, e, 0.5 * s, "add-remove"))     # the opposite-gradient dataset
    return val


def shuffled_tpr_lower(fpr, batches, epochs, sigma, *, neighbours="add-remove"):
    r"""Certified lower bound on the largest TPR at ``fpr`` against shuffled epochs: the largest-update attack
    at the threshold whose FPR is ``fpr`` (module docstring), rounded down. ``fpr`` scalar in (0, 1)."""
    f = _checks.scalar("fpr", fpr, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    b, e, s, nb = _check(batches, epochs, sigma, neighbours)

    val = _tpr_largest(f, b, e, s, nb)
    if nb == "replace-one":
        val = max(val, _tpr_largest(f, b, e, 0.5 * s, "add-remove"))          # the opposite-gradient dataset
    return val


def _tpr_largest(f, b, e, s, nb):
    """TPR of the largest-update attack at the threshold whose FPR is at most ``f``, rounded down."""
    def log_sf_out(t):
        lo = _log_cdfs(t, b, e, s, nb)[1]
        return float(np.log(-np.expm1(min(float(lo), -1e-300))))

    # the threshold with FPR <= f: 1 - F_out(t) decreases in t; bisect, keep the safe (higher) end
    a, c = -50.0 * s - 2.0, 50.0 * s + 2.0
    while log_sf_out(c) > math.log(f) and c < 1e6:
        c *= 2.0
    target = math.log(f) + math.log1p(-1e-9)
    for _ in range(200):
        mid = 0.5 * (a + c)
        if log_sf_out(mid) > target:
            a = mid
        else:
            c = mid
        if c - a <= 1e-12 * max(1.0, abs(c)):
            break
    li, lo = _log_cdfs(c, b, e, s, nb)
    tpr = float(-np.expm1(float(li)))
    return max(tpr - _margin(b, e, li, lo) * (1.0 + tpr) - 1e-300, 0.0)


def shuffled_gdp_mu(epochs, sigma):
    r"""Certified upper bound for shuffled epochs under replace-one, without amplification: the run is
    :math:`\mu`-GDP with :math:`\mu = 2\sqrt E/\sigma` (module docstring), so its advantage is at most
    :math:`2\Phi(\mu/2) - 1` and its :math:`\varepsilon(\delta)` at most the Gaussian mechanism's at :math:`\mu`
    (:func:`dpmia.gaussian.tv`, :func:`dpmia.gaussian.epsilon`). Loose: shuffling hides which batch holds
    the target, which this ignores.

    Examples
    --------
    >>> from dpmia import sgm
    >>> sgm.shuffled_gdp_mu(4, 2.0)
    2.0
    """
    e = _checks.integer("epochs", epochs, lo=1, hi=10**7)
    s = _checks.scalar("sigma", sigma, lo=SIGMA_MIN, hi=_SIGMA_HI)
    return 2.0 * math.sqrt(e) / s
