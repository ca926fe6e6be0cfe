r"""The Gaussian mechanism as a hypothesis test.

Throughout, ``mu`` is the ratio :math:`\mu = \Delta/s` of the :math:`\ell_2` sensitivity :math:`\Delta` to the
noise standard deviation :math:`s`. Every privacy quantity of the Gaussian mechanism
:math:`M(D) = q(D) + \mathcal N(0, s^2 I)` depends on :math:`\mu` only: the worst pair of neighbouring
outputs reduces to testing :math:`P = \mathcal N(0, 1)` against :math:`Q = \mathcal N(\mu, 1)`.

* :func:`delta` - tight privacy profile :math:`\delta(\varepsilon)` (Balle & Wang 2018, Thm 8;
  Lowy et al. 2024, Lemma 10), computed in log space.
* :func:`epsilon` - its inverse, the smallest :math:`\varepsilon`.
* :func:`calibrate_sigma` - the analytic Gaussian mechanism: the smallest noise std.
* :func:`classical_sigma` - Dwork & Roth's :math:`\sqrt{2\ln(1.25/\delta)}\,\Delta/\varepsilon`.
* :func:`tv`, :func:`tv_a` - total variation and scaled total variation (Mahloujifar et al., Def. 4, corrected App. B).
* :func:`tradeoff`, :func:`tpr_at_fpr` - the trade-off curve :math:`G_\mu` of Dong, Roth & Su (2022) and the
  ROC of the optimal (likelihood-ratio) test.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from . import _checks
from ._gaussian_kernel import _delta_up, _log_delta_scalar, _safe_up, _within_target, log_delta_kernel

__all__ = ["delta", "log_delta", "epsilon", "calibrate_sigma", "classical_sigma", "gdp_mu", "tv", "advantage",
           "mu_from_advantage", "tv_a", "tradeoff", "tpr_at_fpr", "classical_sigma_formula",
           "classical_failure_epsilon", "tangent_fpr", "threshold_precision", "threshold_accuracy"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_SQRT2 = math.sqrt(2.0)


# --------------------------------------------------------------------------------------
# privacy profile
# --------------------------------------------------------------------------------------
def log_delta(eps, mu):
    r"""Natural log of the tight :math:`\delta(\varepsilon)` of the Gaussian mechanism.

    .. math:: \delta(\varepsilon;\mu) = \Phi\Big(\frac{\mu}{2} - \frac{\varepsilon}{\mu}\Big)
              - e^{\varepsilon}\,\Phi\Big(-\frac{\mu}{2} - \frac{\varepsilon}{\mu}\Big)

    (Balle & Wang 2018, Thm 8). For :math:`a = \mu/2 - \varepsilon/\mu \ge 0` it is evaluated as
    :math:`\tfrac12[\operatorname{erf}(a/\sqrt2) + \operatorname{erf}(-b/\sqrt2)] - (e^\varepsilon-1)\Phi(b)`
    (a sum of non-negative terms minus a small one); for :math:`a < 0` as
    :math:`\varphi(a)\sqrt{\pi/2}\,[\operatorname{erfcx}(-a/\sqrt2) - \operatorname{erfcx}(-b/\sqrt2)]`
    using :math:`e^{\varepsilon}\varphi(b) = \varphi(a)`, so it neither overflows nor
    underflows for :math:`\varepsilon` up to :math:`10^{3}` and :math:`\delta` far below
    :math:`10^{-300}`. Relative accuracy is about :math:`10^{-16}\max(1, \varepsilon/\mu)/\mu`
    (the two terms differ by a relative :math:`O(\mu)`), i.e. full precision for
    :math:`\mu \gtrsim 10^{-2}`; tested against 80-digit mpmath in ``tests/test_gaussian.py``.
    Returns ``-inf`` where :math:`\delta = 0` (``mu = 0`` or ``eps = inf``).

    Parameters: ``eps`` in [0, inf], ``mu`` in [0, inf] (scalars or arrays, broadcast).
    """
    e = _checks.nonnegative("eps", eps, allow_inf=True)
    m = _checks.nonnegative("mu", mu, allow_inf=True)
    return _checks.scalar_or_array(log_delta_kernel(e, m), eps, mu)


def delta(eps, mu):
    r"""Tight :math:`\delta(\varepsilon)` of the Gaussian mechanism with :math:`\mu=\Delta/s`.

    .. math:: \delta(\varepsilon;\mu) = \Phi\Big(\frac{\mu}{2} - \frac{\varepsilon}{\mu}\Big)
              - e^{\varepsilon}\,\Phi\Big(-\frac{\mu}{2} - \frac{\varepsilon}{\mu}\Big)
              = H_{e^\varepsilon}\big(\mathcal N(\mu,1)\,\|\,\mathcal N(0,1)\big)

    Balle & Wang (2018), Thm 8; Lowy et al. (2024), Lemma 10, Eq. (4). The mechanism is
    :math:`(\varepsilon,\delta)`-DP **iff** ``delta(eps, mu) <= delta``. Decreasing in ``eps``,
    increasing in ``mu``; ``delta(0, mu)`` is the total variation :func:`tv`.
    Computed through :func:`log_delta`, so tiny values keep full relative accuracy.

    Examples
    --------
    >>> from dpmia import gaussian; round(float(gaussian.delta(1.0, 1.0)), 6)   # tight delta at eps = 1, mu = 1
    0.126937
    """
    e = _checks.nonnegative("eps", eps, allow_inf=True)
    m = _checks.nonnegative("mu", mu, allow_inf=True)
    return _checks.scalar_or_array(_delta_up(e, m), eps, mu)


def _epsilon1(delta_: float, mu: float) -> float:
    if mu == 0.0 or delta_ >= 1.0:
        return 0.0
    if 0.5 * mu * mu > 1.7e308:        # eps(delta) >= mu^2/2 - mu Phi^-1(...) lies beyond the float range
        return math.inf
    target = math.log(delta_)
    if _log_delta_scalar(0.0, mu) <= target:
        return 0.0
    # delta(eps) <= Phi(mu/2 - eps/mu), which equals delta_ at eps_hi: a valid upper bracket.
    eps_hi = max(mu * (0.5 * mu - float(special.ndtri(delta_))), 1e-300)
    f = lambda e: _log_delta_scalar(e, mu) - target  # noqa: E731
    if f(eps_hi) > 0.0:  # rounding at the bracket end; widen
        eps_hi = _safe_up(eps_hi, lambda e: f(e) <= 0.0)
    root = optimize.brentq(f, 0.0, eps_hi, xtol=1e-15, rtol=8.9e-16, maxiter=200)
    return _safe_up(root, None, batch=lambda e: _within_target(e, mu, delta_))


def epsilon(delta, mu):
    r"""Smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon;\mu) \le` ``delta``.

    The inverse of :func:`delta` (Balle & Wang 2018): ``0.0`` when even :math:`\varepsilon = 0` suffices. Found by
    Brent's method on :math:`\log\delta(\varepsilon)` in the bracket :math:`[0,\ \mu^2/2 - \mu\,\Phi^{-1}(\delta)]` and
    then rounded **up**, so the returned :math:`\varepsilon` never understates the tight value.

    Parameters: ``delta`` in (0, 1], ``mu`` in [0, inf) (scalars or arrays, broadcast).

    Examples
    --------
    >>> from dpmia import gaussian; round(float(gaussian.epsilon(1e-5, 1.0)), 4)   # smallest eps: delta <= 1e-5
    4.3772
    """
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True)
    m = _checks.nonnegative("mu", mu)
    db, mb = np.broadcast_arrays(np.asarray(d, float), np.asarray(m, float))
    out = np.array([_epsilon1(float(x), float(y)) for x, y in zip(db.ravel(), mb.ravel())])
    return _checks.scalar_or_array(out.reshape(db.shape), delta, mu)


def _calibrate_mu(eps: float, delta_: float) -> float:
    """Largest mu with delta(eps; mu) <= delta_, by Brent's method in log mu."""
    target = math.log(delta_)
    f = lambda x: _log_delta_scalar(eps, math.exp(x)) - target  # noqa: E731
    # start from the classical calibration, then double/halve until the root is bracketed
    if eps > 0.0:
        x0 = math.log(eps / math.sqrt(2.0 * (math.log(1.25) - math.log(delta_))))
    else:
        x0 = math.log(max(2.0 * _SQRT2 * float(special.erfinv(delta_)), 1e-300))
    lo = hi = x0
    while f(lo) > 0.0:
        lo -= 1.0
    while f(hi) <= 0.0:
        hi += 1.0
    if lo == hi:
        lo = hi - 1.0
    x = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=8.9e-16, maxiter=200)
    mu = math.exp(x)
    # round down so the calibrated mechanism is guaranteed (eps, delta)-DP
    while _log_delta_scalar(eps, mu) > target:
        mu = float(np.nextafter(mu, 0.0))
    return mu


def calibrate_sigma(eps, delta, sensitivity=1.0):
    r"""Analytic Gaussian mechanism: smallest noise std :math:`s` giving :math:`(\varepsilon,\delta)`-DP.

    Solves :math:`\delta(\varepsilon;\Delta/s) = \delta` (Balle & Wang 2018, Thm 8 and Alg. 1) by Brent's method on
    :math:`\log\delta` in :math:`\log\mu`, to relative error :math:`\le 10^{-12}` (at most :math:`1.2\times10^{-13}`
    against 50-digit mpmath in ``benchmarks/bench_gaussian.py``, about 0.05 ms per call), then rounds :math:`s` up, past
    the floating-point error of :math:`\delta`, so that the exact :math:`\delta` at the returned :math:`s` never exceeds
    the target. Valid for every :math:`\varepsilon \ge 0`, unlike :func:`classical_sigma`.

    Parameters: ``eps`` in [0, inf), ``delta`` in (0, 1), ``sensitivity`` in (0, inf).
    Scalars or arrays (broadcast; each element solved separately).

    Examples
    --------
    >>> from dpmia import gaussian
    >>> round(gaussian.calibrate_sigma(1.0, 1e-5), 4)    # noise std for (1, 1e-5)-DP at sensitivity 1
    3.7306
    """
    e = _checks.nonnegative("eps", eps)
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    s = _checks.positive("sensitivity", sensitivity)
    eb, db, sb = np.broadcast_arrays(np.asarray(e, float), np.asarray(d, float), np.asarray(s, float))
    out = np.empty(eb.shape)
    for i, (ei, di, si) in enumerate(zip(eb.ravel(), db.ravel(), sb.ravel())):
        if ei == 0.0:
            # delta(0; mu) = erf(mu / (2 sqrt 2)) exactly: mu = 2 sqrt(2) erfinv(delta) (for tiny delta,
            # erfinv(x) = x sqrt(pi)/2 to double precision), rounded down past erfinv's few-ulp error
            mu = (math.sqrt(2.0 * math.pi) * di if di < 1e-100 else 2.0 * _SQRT2 * float(special.erfinv(di)))
            mu *= 1.0 - 1e-14
        else:
            mu = _calibrate_mu(float(ei), float(di))
        with np.errstate(over="ignore"):
            sig = si / mu
        if not math.isfinite(sig) or mu <= 0.0:
            raise ValueError(f"delta = {di:g} at eps = {ei:g} needs a noise std above the float range "
                             f"(sensitivity {si:g} / mu with mu = {mu:g})")
        out.flat[i] = (sig * (1.0 + 1e-14) if ei == 0.0
                       else _safe_up(sig, None, batch=lambda v, ei=ei, si=si, di=di:
                                     _delta_up(np.float64(ei), si / v) <= float(di)))
    return _checks.scalar_or_array(out, eps, delta, sensitivity)


def gdp_mu(eps, delta):
    r"""Largest :math:`\mu` such that :math:`\mu`-GDP implies :math:`(\varepsilon,\delta)`-DP.

    :math:`\mu`-GDP holds for the Gaussian mechanism with :math:`\mu = \Delta/s` and is
    equivalent to :math:`(\varepsilon, \delta(\varepsilon;\mu))`-DP for all :math:`\varepsilon`
    (Dong, Roth & Su 2022, Cor. 2.13). Hence ``gdp_mu(eps, delta) = 1 / calibrate_sigma(eps, delta)``.
    """
    return _checks.scalar_or_array(1.0 / np.asarray(calibrate_sigma(eps, delta, 1.0)), eps, delta)


def classical_sigma(eps, delta, sensitivity=1.0):
    r"""Classical Gaussian calibration :math:`s = \sqrt{2\ln(1.25/\delta)}\,\Delta/\varepsilon`.

    Dwork & Roth (2014), Thm A.1: sufficient for :math:`(\varepsilon,\delta)`-DP **only for**
    :math:`\varepsilon \in (0, 1)`, and loose there (about 30 % more noise than :func:`calibrate_sigma` at
    :math:`\varepsilon=1,\delta=10^{-5}`). For :math:`\varepsilon \ge 1` the theorem does not apply and the formula can
    under-noise (see chapter 1), so this function raises instead of returning a number that is not a guarantee.

    Parameters: ``eps`` in (0, 1), ``delta`` in (0, 1), ``sensitivity`` in (0, inf).
    """
    e = _checks.real("eps", eps, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    s = _checks.positive("sensitivity", sensitivity)
    return _checks.scalar_or_array(np.sqrt(2.0 * np.log(1.25 / d)) * s / e, eps, delta, sensitivity)


def classical_sigma_formula(eps, delta, sensitivity=1.0):
    r"""The expression :math:`\sqrt{2\ln(1.25/\delta)}\,\Delta/\varepsilon` for any :math:`\varepsilon > 0`.

    For plotting what the classical recipe *would* give outside its range of validity; it is
    not a privacy guarantee for :math:`\varepsilon \ge 1`. Use :func:`classical_sigma` for a
    calibration.
    """
    e = _checks.positive("eps", eps)
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    s = _checks.positive("sensitivity", sensitivity)
    return _checks.scalar_or_array(np.sqrt(2.0 * np.log(1.25 / d)) * s / e, eps, delta, sensitivity)


def classical_failure_epsilon(delta):
    r"""Smallest :math:`\varepsilon` at which the classical recipe stops being :math:`(\varepsilon,\delta)`-DP.

    The classical noise :math:`s(\varepsilon) = \sqrt{2\ln(1.25/\delta)}/\varepsilon` (Dwork & Roth
    2014, Thm A.1, proved for :math:`\varepsilon < 1`) gives :math:`\mu = 1/s`; its true
    :math:`\delta_\mu(\varepsilon)` (Balle & Wang 2018, Thm 8) exceeds the target beyond the root of
    :math:`\log\delta_{1/s(\varepsilon)}(\varepsilon) = \log\delta`. The root is bracketed by the first
    sign change on a fixed logarithmic grid from :math:`\varepsilon = 1` and refined by Brent's
    method to :math:`10^{-12}` relative; the returned value is rounded down (the recipe is already
    invalid just above it). Parameter: ``delta`` in (0, 0.5] (scalar).
    """
    d = _checks.scalar("delta", delta, lo=0.0, hi=0.5, lo_open=True)
    c = math.sqrt(2.0 * math.log(1.25 / d))
    log_d = math.log(d)

    def gap(e):
        return float(_log_delta_scalar(e, e / c)) - log_d

    grid = np.logspace(0.0, 4.0, 401)
    values = [gap(e) for e in grid]
    if values[0] > 0:
        raise ValueError(f"delta={delta!r}: the classical recipe already fails at eps = 1")
    k = next((i for i, v in enumerate(values) if v > 0), None)
    if k is None:  # pragma: no cover - delta_mu(eps) -> 1 along this path, so a crossing exists
        raise ValueError(f"delta={delta!r}: no failure of the classical recipe below eps = 1e4")
    root = optimize.brentq(gap, grid[k - 1], grid[k], xtol=1e-14, rtol=1e-12)
    return float(np.nextafter(root * (1.0 - 1e-12), 0.0))


def tangent_fpr(eps, mu):
    r"""The false-positive rates at which :math:`G_\mu` touches the DP region of
    :math:`(\varepsilon, \delta_\mu(\varepsilon))`.

    The most powerful test of :math:`\mathcal N(0,1)` against :math:`\mathcal N(\mu,1)` with threshold :math:`t` has
    :math:`\alpha = \Phi(-t)`, :math:`\beta = \Phi(t-\mu)` and slope :math:`d\beta/d\alpha = -e^{\mu t - \mu^2/2}`. The
    boundary :math:`f_{\varepsilon,\delta}` of the DP region (Dong, Roth & Su 2022, Prop. 2.5) has two segments, of
    slopes :math:`-e^{\varepsilon}` and :math:`-e^{-\varepsilon}`; with :math:`\delta = \delta_\mu(\varepsilon)` each is
    tangent to :math:`G_\mu`, at

    .. math:: \alpha_1 = \Phi(-\varepsilon/\mu - \mu/2), \qquad \alpha_2 = \Phi(\varepsilon/\mu - \mu/2)

    (mirror images under the symmetry of :math:`G_\mu` about the diagonal). Returns
    ``(alpha_1, alpha_2)``. Parameters: ``eps`` in [0, inf), ``mu`` in (0, inf).
    """
    e = _checks.nonnegative("eps", eps)
    m = _checks.positive("mu", mu)
    a1 = special.ndtr(-e / m - 0.5 * m)
    a2 = special.ndtr(e / m - 0.5 * m)
    return _checks.scalar_or_array(a1, eps, mu), _checks.scalar_or_array(a2, eps, mu)


# --------------------------------------------------------------------------------------
# hypothesis-testing read-outs
# --------------------------------------------------------------------------------------
def tv(mu):
    r"""Total variation
    :math:`\mathrm{TV}(\mathcal N(0,1),\mathcal N(\mu,1)) = 2\Phi(\mu/2)-1 = \operatorname{erf}(\mu/2\sqrt2)`.

    The largest membership advantage TPR - FPR of any attack on the Gaussian mechanism (Mahloujifar et al., Eq. 4 and
    App. B with :math:`a=1`). Equal to :func:`delta` at :math:`\varepsilon=0`. ``mu`` in [0, inf].
    """
    m = _checks.nonnegative("mu", mu, allow_inf=True)
    return _checks.scalar_or_array(special.erf(np.asarray(m) / (2.0 * _SQRT2)), mu)


advantage = tv


def mu_from_advantage(adv):
    r"""The :math:`\mu` whose Gaussian mechanism has advantage ``adv``:
    :math:`\mu = 2\sqrt2\,\operatorname{erf}^{-1}(\mathrm{adv})`.

    Inverse of :func:`tv`. ``adv`` in [0, 1] (1 gives ``inf``).
    """
    a = _checks.probability("adv", adv)
    return _checks.scalar_or_array(2.0 * _SQRT2 * special.erfinv(np.asarray(a)), adv)


def tv_a(a, mu):
    r"""Scaled total variation :math:`\mathrm{TV}_a = \tfrac12\int|p - a\,q|` for :math:`p=\mathcal N(0,1)`,
    :math:`q=\mathcal N(\mu,1)`.

    Mahloujifar et al., Def. 4, with the corrected closed form of their App. B:
    :math:`\mathrm{TV}_a = \tfrac12[\operatorname{erf}(A) - a\operatorname{erf}(B)]`,
    :math:`A = (\mu^2 - 2\ln a)/(2\sqrt2\mu)`, :math:`B = (-\mu^2 - 2\ln a)/(2\sqrt2\mu)`. Evaluated without
    cancellation through the hockey-stick divergence :math:`\mathrm{TV}_a = H_a + (a-1)/2`: for :math:`a\ge1`,
    :math:`\delta(\ln a;\mu) + (a-1)/2`; for :math:`a<1`, :math:`(1-a)/2 + a\,\delta(-\ln a;\mu)` (the Gaussian pair is
    symmetric).

    Parameters: ``a`` in (0, inf), ``mu`` in [0, inf).
    """
    av = _checks.positive("a", a)
    m = _checks.nonnegative("mu", mu)
    A, M = np.broadcast_arrays(np.asarray(av, float), np.asarray(m, float))
    la = np.log(A)
    res = np.where(
        A >= 1.0,
        np.exp(log_delta_kernel(np.abs(la), M)) + 0.5 * (A - 1.0),
        0.5 * (1.0 - A) + A * np.exp(log_delta_kernel(np.abs(la), M)),
    )
    return _checks.scalar_or_array(res, a, mu)


def tradeoff(alpha, mu):
    r"""Trade-off curve :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)` (Dong, Roth & Su 2022, Eq. 6).

    The smallest type-II error (false-negative rate, 1 - TPR) of any test of
    :math:`\mathcal N(0,1)` vs :math:`\mathcal N(\mu,1)` at type-I error (FPR) :math:`\alpha`;
    attained by the likelihood-ratio (threshold) test. Computed as
    :math:`\Phi(-\Phi^{-1}(\alpha) - \mu)` to stay accurate at tiny :math:`\alpha`.

    Parameters: ``alpha`` in [0, 1], ``mu`` in [0, inf].

    Examples
    --------
    >>> from dpmia import gaussian; round(float(gaussian.tradeoff(0.05, 1.0)), 4)   # type-II error at 0.05
    0.7405
    """
    al = _checks.probability("alpha", alpha)
    m = _checks.nonnegative("mu", mu, allow_inf=True)
    with np.errstate(invalid="ignore"):
        z = -special.ndtri(np.asarray(al)) - np.asarray(m)
    z = np.where(np.isnan(z), -np.inf, z)  # alpha = 0 and mu = inf: beta = 0
    return _checks.scalar_or_array(special.ndtr(z), alpha, mu)


def tpr_at_fpr(fpr, mu):
    r"""Largest TPR of any attack at false-positive rate ``fpr``:
    :math:`1 - G_\mu(\mathrm{fpr}) = \Phi(\Phi^{-1}(\mathrm{fpr}) + \mu)`.

    The ROC curve of the likelihood-ratio attack on the Gaussian mechanism.
    Parameters: ``fpr`` in [0, 1], ``mu`` in [0, inf].
    """
    f = _checks.probability("fpr", fpr)
    m = _checks.nonnegative("mu", mu, allow_inf=True)
    with np.errstate(invalid="ignore"):
        z = special.ndtri(np.asarray(f)) + np.asarray(m)
    z = np.where(np.isnan(z), np.inf, z)
    return _checks.scalar_or_array(special.ndtr(z), fpr, mu)


# --------------------------------------------------------------------------------------
# one threshold test, under a membership prior
# --------------------------------------------------------------------------------------
def threshold_precision(tau, mu, prior=0.5):
    r"""Precision :math:`\Pr(\text{member}\mid y > \tau)` of the test "member iff :math:`y > \tau`".

    Non-members give :math:`y\sim\mathcal N(0,1)`, members :math:`y\sim\mathcal N(\mu,1)`, members
    have prior :math:`\pi`:

    .. math:: \frac{\pi\,\Phi(\mu-\tau)}{\pi\,\Phi(\mu-\tau) + (1-\pi)\,\Phi(-\tau)}

    (Thudi et al., Sec. 5.2, Eqs. 2-3, with :math:`\mu = \text{shift}/\sigma`). Evaluated as a
    logistic function of a difference of ``log_ndtr`` terms, so it stays finite far in the tail,
    where it tends to 1: under :math:`(\varepsilon,\delta)`-DP with :math:`\delta>0` precision is
    not bounded away from 1. ``tau`` real (may be +-inf), ``mu`` in [0, inf), ``prior`` in (0, 1).
    """
    t = _checks.real("tau", tau, allow_inf=True)
    m = _checks.nonnegative("mu", mu)
    p = _checks.real("prior", prior, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    t_, m_, p_ = np.asarray(t), np.asarray(m), np.asarray(p)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        z = np.log(p_) - np.log1p(-p_) + special.log_ndtr(m_ - t_) - special.log_ndtr(-t_)
        # beyond tau ~ 1e154 both log-tails are -inf: Mills' ratio gives their difference,
        # log Phi(mu - tau) - log Phi(-tau) = mu tau - mu^2/2 - log1p(-mu/tau) + o(1)
        far = (np.log(p_) - np.log1p(-p_) + m_ * t_ - 0.5 * m_ * m_
               - np.log1p(-np.minimum(m_ / np.where(t_ > 0, t_, 1.0), 0.5)))
        z = np.where(np.isnan(z) & (t_ > 0), far, z)
    z = np.where(np.isposinf(t_), np.inf, z)  # empty event: report the limit
    return _checks.scalar_or_array(special.expit(z), tau, mu, prior)


def threshold_accuracy(tau, mu, prior=0.5):
    r"""Accuracy of the test "member iff :math:`y > \tau`": :math:`(1-\pi)\Phi(\tau) + \pi\,\Phi(\mu-\tau)`.

    Thudi et al., Eq. (4). At :math:`\pi = 1/2` it is maximal at :math:`\tau = \mu/2`, where it
    equals :math:`\Phi(\mu/2) = (1 + \mathrm{TV})/2`. ``tau`` real, ``mu`` in [0, inf), ``prior`` in [0, 1].
    """
    t = _checks.real("tau", tau, allow_inf=True)
    m = _checks.nonnegative("mu", mu)
    p = _checks.probability("prior", prior)
    t_, m_, p_ = np.asarray(t), np.asarray(m), np.asarray(p)
    return _checks.scalar_or_array((1.0 - p_) * special.ndtr(t_) + p_ * special.ndtr(m_ - t_), tau, mu, prior)
