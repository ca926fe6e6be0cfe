r"""One DP-SGD step under *replace-one* neighbours, exactly: its privacy profile without cancellation.

Replacing the target :math:`x` by :math:`x'` changes the clipped gradient sum by up to 2 clipping
norms, but only on the steps that sample the target's slot. With Poisson rate :math:`q` and noise
multiplier :math:`\sigma` the worst pair of one step is (Zhu, Dong & Wang 2022; dp-accounting's
``REPLACE`` adjacency)

.. math:: Q_R = (1-q)\,\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2),\qquad
          P_R = (1-q)\,\mathcal N(0,\sigma^2) + q\,\mathcal N(-1,\sigma^2),

symmetric under :math:`t \mapsto -t`, so one direction suffices and
:math:`H_{e^{-\varepsilon}}(Q_R\|P_R) = 1 - e^{-\varepsilon} + e^{-\varepsilon} H_{e^\varepsilon}(Q_R\|P_R)`.

**The threshold in closed form.** With :math:`\mu = 1/\sigma`, :math:`c = \mu^2/2` and the output in
units of :math:`\sigma` (:math:`z = t/\sigma`), the privacy loss is
:math:`L = \ln\frac{(1-q) + q e^{\mu z - c}}{(1-q) + q e^{-\mu z - c}}`, increasing in :math:`z`, and
:math:`L(z) = \varepsilon` is a quadratic in :math:`w = e^{\mu z}`:
:math:`q e^{-c} w^2 - (1-q)(e^\varepsilon - 1) w - q e^{-c} e^{\varepsilon} = 0`, whose positive root
has no cancellation for :math:`\varepsilon \ge 0`.

**The profile without cancellation.** With tails :math:`A = Q_R(Z > z)`, :math:`B = P_R(Z > z)` and
densities :math:`a, b` at :math:`z` (so :math:`e^\varepsilon = a/b`),
:math:`H_{e^\varepsilon}(Q_R\|P_R) = A - e^\varepsilon B = (Ab - aB)/b`. Writing every Gaussian tail
with Mills' ratio :math:`M = \bar\Phi/\varphi` (decreasing), the :math:`(1-q)^2` terms cancel exactly
and what remains is a sum of positive terms:

.. math:: Ab - aB = (1-q)q\,\varphi(z)\big[\varphi(z-\mu)(M(z-\mu) - M(z)) + \varphi(z+\mu)(M(z) - M(z+\mu))\big]
          + q^2\,\varphi(z-\mu)\varphi(z+\mu)\,(M(z-\mu) - M(z+\mu)).

The only differences left are of the monotone :math:`M` over a step :math:`\mu`; each loses at most
about :math:`u\,|z|/\mu` relative (:math:`u` the unit roundoff), which :func:`_profile_r` bounds and
rounds outward.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_U = np.finfo(float).eps / 2.0


def _threshold(e, q, sigma):
    r"""The output :math:`z \ge 0` (in units of :math:`\sigma`) where the loss is ``e`` >= 0, as ``mu * z``."""
    mu = 1.0 / sigma
    c = 0.5 * mu * mu
    # w = e^{mu z} solves q e^-c w^2 - (1-q)(e^e - 1) w - q e^-c e^e = 0; in logs, with b = (1-q)(e^e - 1)
    # and k = q e^-c: w = (b + sqrt(b^2 + 4 k^2 e^e)) / (2k)
    with np.errstate(divide="ignore", over="ignore"):
        log_b = math.log1p(-q) + np.where(e > 0, e + np.log(-np.expm1(-np.maximum(e, 1e-300))), -np.inf) \
            if q < 1.0 else np.full(np.shape(e), -np.inf)
        log_k = math.log(q) - c
        # log sqrt(b^2 + 4 k^2 e^e) = 0.5 logaddexp(2 log b, log 4 + 2 log k + e)
        log_root = 0.5 * np.logaddexp(2.0 * log_b, math.log(4.0) + 2.0 * log_k + e)
        log_w = np.logaddexp(log_b, log_root) - math.log(2.0) - log_k
    return log_w                                             # = mu * z


def _log_phi(x):
    return -0.5 * x * x - _LOG_SQRT_2PI


def _log_mills(x):
    r""":math:`\ln M(x)` with Mills' ratio :math:`M = \bar\Phi/\varphi`, and a bound on its absolute float error.

    :math:`M(x) = \sqrt{\pi/2}\,\mathrm{erfcx}(x/\sqrt2)` for :math:`x \ge 0` (accurate to a few ulps);
    for :math:`x < 0`, where :math:`M` grows like :math:`1/\varphi(x)`,
    :math:`\ln\bar\Phi(x) + x^2/2 + \ln\sqrt{2\pi}`, with an error of a few ulps of :math:`x^2`.
    """
    x = np.asarray(x, float)
    pos = x >= 0.0
    lm = np.empty(x.shape)
    with np.errstate(under="ignore", divide="ignore"):
        # (each branch on its own entries only: erfcx and log_ndtr cost most of a profile's time)
        xp, xn = x[pos], x[~pos]
        lm[pos] = np.log(math.sqrt(0.5 * math.pi) * special.erfcx(xp / math.sqrt(2.0)))
        lm[~pos] = special.log_ndtr(-xn) + 0.5 * xn * xn + _LOG_SQRT_2PI
    err = np.where(pos, 8.0 * _U, 4.0 * _U * (2.0 + x * x))
    return lm, err


def _log_gap(a, b):
    r"""``(ln(M(a) - M(b)), relative error bound)`` for :math:`a < b` (so :math:`M(a) > M(b)`); ``a`` and ``b`` may
    be given as their :func:`_log_mills` pairs."""
    la, ea = a if isinstance(a, tuple) else _log_mills(a)
    lb, eb = b if isinstance(b, tuple) else _log_mills(b)
    d = np.minimum(lb - la, 0.0)                                 # <= 0: M is decreasing
    with np.errstate(divide="ignore"):
        g = -np.expm1(d)
        log_gap = la + np.log(np.maximum(g, 1e-300))
    # the error of d moves -expm1(d) by at most (ea + eb) e^d, relative (ea + eb) e^d / (1 - e^d)
    rel = (ea + eb) * np.exp(d) / np.maximum(g, 1e-300) + 4.0 * _U
    return log_gap, rel


def _profile_r(e, q, sigma):
    r"""``(lower, upper, log P_R(L > e))`` on :math:`H_{e^\varepsilon}(Q_R\|P_R)` for an array ``e`` >= 0.

    The bracket covers the float error of the closed form: the relative errors of the three Mills
    differences (:func:`_log_gap`), the largest of which bounds that of the positive sum, widened
    16 times and by 1e-13.
    """
    e = np.asarray(e, float)
    mu = 1.0 / sigma
    z = _threshold(e, q, sigma) / mu
    lq = math.log(q)
    lq1 = math.log1p(-q) if q < 1.0 else -np.inf
    m_lo, m_z, m_hi = _log_mills(z - mu), _log_mills(z), _log_mills(z + mu)
    g1, r1 = _log_gap(m_lo, m_z)                               # ln(M(z - mu) - M(z))
    g2, r2 = _log_gap(m_z, m_hi)                               # ln(M(z) - M(z + mu))
    g3, r3 = _log_gap(m_lo, m_hi)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        t1 = lq1 + lq + _log_phi(z) + np.logaddexp(_log_phi(z - mu) + g1, _log_phi(z + mu) + g2)
        t2 = 2.0 * lq + _log_phi(z - mu) + _log_phi(z + mu) + g3
        log_b = _log_phi(z) + np.logaddexp(lq1, lq - mu * z - 0.5 * mu * mu)
        log_h = np.logaddexp(t1, t2) - log_b
        log_tail = np.logaddexp(lq1 + special.log_ndtr(-z), lq + special.log_ndtr(-(z + mu)))
    rel = 16.0 * np.maximum.reduce([r1, r2, r3]) + 1e-13
    h = np.exp(np.minimum(log_h, 0.0))
    return np.clip(h * (1.0 - rel), 0.0, 1.0), np.clip(h * (1.0 + rel), 0.0, 1.0), log_tail


def replace_one_profile(e, q, sigma):
    r"""``(lower, upper)`` on the replace-one profile :math:`H_{e^\varepsilon}(Q_R\|P_R)` at real ``e``
    (array), and :math:`P_R(L > \varepsilon)`; checked arguments, ``0 < q <= 1``."""
    e = np.asarray(e, float)
    a = np.abs(e)
    lo, hi, log_tail = _profile_r(a, q, sigma)
    neg = e < 0
    if np.any(neg):
        # H_{e^-x} = 1 - e^-x + e^-x H_{e^x}: two terms >= 0
        y = np.exp(e[neg])
        lo[neg] = np.minimum(-np.expm1(e[neg]) + y * lo[neg], 1.0)
        hi[neg] = np.minimum(-np.expm1(e[neg]) + y * hi[neg], 1.0)
        # L > -x  <=>  Z > -z (z the threshold of x): P_R(Z > -z) = (1-q) Phi(z) + q Phi(z - mu), P_R's
        # components centred at 0 and -mu; both terms from log_ndtr, accurate in either tail
        z = _threshold(a[neg], q, sigma) * sigma
        mu = 1.0 / sigma
        log_tail[neg] = np.logaddexp((math.log1p(-q) if q < 1.0 else -np.inf) + special.log_ndtr(z),
                                     math.log(q) + special.log_ndtr(z - mu))
    return lo, hi, np.exp(log_tail)


def replace_one_tv(q, sigma):
    r"""One step's TV under replace-one:
    :math:`q\,\mathrm{TV}(\mathcal N(1,\sigma^2), \mathcal N(-1,\sigma^2)) = q(2\Phi(1/\sigma) - 1)`."""
    return q * float(special.erf(1.0 / (sigma * math.sqrt(2.0))))
