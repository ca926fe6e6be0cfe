r"""ROC curves of the GLRT adversary (Kaissis et al., Theorem 1 and Corollary 1) and their summaries.

The energy test thresholds :math:`T = \|y\|^2/\sigma^2`, with :math:`T \sim \chi^2_d` without the target and
:math:`T \sim \chi^2_d(\lambda)` with it: :math:`R(x) = \Psi_{\chi^2_d(\lambda)}(\Psi^{-1}_{\chi^2_d}(x))`, the
swapped curve :math:`R'`, the symmetrised, concavified :math:`R_s` with its tangent points, and the total
variation, AUC and best accuracy read off them. Also the checks of ``(d, lam)`` and ``fpr`` that the
rest of :mod:`dpmia.glrt` shares.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from .. import _checks, chisq


def _d_lam(d, lam):
    """Validated (d, lam); a subnormal lam (below 1e-300, where the likelihood ratio's inverse loses
    all digits) is raised to 1e-300: every privacy quantity increases with lam, so upper bounds stay safe."""
    dd, ll = _checks.integer("d", d, lo=1), _checks.scalar("lam", lam, lo=0.0)
    return dd, (1e-300 if 0.0 < ll < 1e-300 else ll)


def _fpr(x):
    return _checks.probability("fpr", x)


def roc(fpr, d, lam):
    r"""Theorem 1: :math:`R(x) = \Psi_{\chi^2_d(\lambda)}\big(\Psi^{-1}_{\chi^2_d}(x)\big)`, the GLRT's TPR at FPR
    ``fpr``.

    The test "member iff :math:`\|y\|^2/\sigma^2 > c`" with :math:`c` set from the null law
    :math:`\chi^2_d`. Not symmetrised (see :func:`dpmia.glrt.roc_symmetric`). Vectorised over ``fpr`` in
    [0, 1]; accurate down to ``fpr`` = 1e-300. ``d`` integer >= 1, ``lam`` >= 0 (0: the diagonal).

    Examples
    --------
    >>> from dpmia import glrt
    >>> round(float(glrt.roc(0.01, 10, 4.0)), 4)   # d = 10 dimensions, noncentrality lam = 4
    0.077
    """
    x = _fpr(fpr)
    dd, ll = _d_lam(d, lam)
    xa = np.asarray(x, float)
    if ll == 0.0:
        return _checks.scalar_or_array(xa, fpr)
    t = np.asarray(chisq.isf(xa, dd), float)
    out = np.exp(np.asarray(chisq.log_sf(t, dd, ll), float))
    out = np.where(xa >= 1.0, 1.0, np.where(xa <= 0.0, 0.0, out))
    return _checks.scalar_or_array(np.clip(np.maximum(out, xa), 0.0, 1.0), fpr)


def roc_reverse(fpr, d, lam):
    r"""Theorem 1's :math:`R'(x) = \Phi_{\chi^2_d}\big(\Phi^{-1}_{\chi^2_d(\lambda)}(x)\big)`: the swapped test.

    Here the "positive" world is the one without the shift, and the test declares it when
    :math:`T < c`. :math:`R'` is the reflection of :math:`R` across the anti-diagonal:
    :math:`R'(1-R(x)) = 1-x`.
    """
    x = _fpr(fpr)
    dd, ll = _d_lam(d, lam)
    xa = np.asarray(x, float)
    if ll == 0.0:
        return _checks.scalar_or_array(xa, fpr)
    t = np.asarray(chisq.ppf(xa, dd, ll), float)
    out = np.exp(np.asarray(chisq.log_cdf(np.where(np.isfinite(t), t, 0.0), dd, 0.0), float))
    out = np.where(xa >= 1.0, 1.0, np.where(xa <= 0.0, 0.0, out))
    return _checks.scalar_or_array(np.clip(np.maximum(out, xa), 0.0, 1.0), fpr)


def roc_d1(fpr, mu):
    r"""Corollary 1 (:math:`d = 1`): :math:`R(x) = Q(Q^{-1}(x/2) - \mu) + Q(Q^{-1}(x/2) + \mu)`.

    :math:`Q = 1 - \Phi_{\mathcal N}`; ``mu`` = :math:`\Delta/\sigma` >= 0. Equals :func:`dpmia.glrt.roc` with
    ``d = 1, lam = mu**2``.
    """
    x = _fpr(fpr)
    m = _checks.nonnegative("mu", mu)
    xa = np.asarray(x, float)
    with np.errstate(divide="ignore"):
        s = -special.ndtri(xa / 2.0)
    out = special.ndtr(m - s) + special.ndtr(-s - m)
    out = np.where(xa <= 0.0, 0.0, out)
    return _checks.scalar_or_array(np.clip(out, 0.0, 1.0), fpr, mu)


@lru_cache(maxsize=256)
def _t0(d, lam):
    """Threshold bracket with L(t) = 0: the tangent of slope 1."""
    return chisq.likelihood_ratio_inverse(0.0, d, lam)


def tangent_points(d, lam):
    r"""The points :math:`(x_1, y_1)` where :math:`R` has slope 1; :math:`R_s` is linear on :math:`[x_1, 1-y_1]`.

    :math:`x_1 = \Psi_{\chi^2_d}(t_0)`, :math:`y_1 = \Psi_{\chi^2_d(\lambda)}(t_0)`, :math:`L(t_0) = 0`.
    The mirror point is :math:`(1-y_1, 1-x_1)`. ``lam`` > 0.
    """
    dd = _checks.integer("d", d, lo=1)
    ll = _checks.scalar("lam", lam, lo=0.0, lo_open=True)
    t0 = _t0(dd, ll)[1]
    return math.exp(chisq.log_sf(t0, dd, 0.0)), math.exp(chisq.log_sf(t0, dd, ll))


def roc_symmetric(fpr, d, lam):
    r"""The symmetrised, concavified ROC :math:`R_s` (Kaissis et al., Sec. 4.4, after Dong et al.).

    .. math:: R_s(x) = \begin{cases} R(x) & x \le x_1\\ x + (y_1 - x_1) & x_1 \le x \le 1-y_1\\
              R'(x) & x \ge 1 - y_1\end{cases}

    the concave upper envelope of :math:`R` and :math:`R'` (:func:`dpmia.glrt.tangent_points`). It is the best
    TPR at each FPR when either dataset of the pair may be the one with the target.
    """
    x = _fpr(fpr)
    dd, ll = _d_lam(d, lam)
    xa = np.asarray(x, float)
    if ll == 0.0:
        return _checks.scalar_or_array(xa, fpr)
    x1, y1 = tangent_points(dd, ll)
    out = np.where(xa <= x1, np.asarray(roc(xa, dd, ll)),
                   np.where(xa >= 1.0 - y1, np.asarray(roc_reverse(xa, dd, ll)), xa + (y1 - x1)))
    return _checks.scalar_or_array(np.clip(out, 0.0, 1.0), fpr)


def tv(d, lam):
    r"""Total variation :math:`y_1 - x_1 = \delta(0)`: the largest membership advantage (TPR - FPR) of the GLRT
    adversary.

    Computed as :math:`\Psi_{\chi^2_d(\lambda)}(t_0) - \Psi_{\chi^2_d}(t_0)` at :math:`L(t_0) = 0`.
    """
    dd, ll = _d_lam(d, lam)
    if ll == 0.0:
        return 0.0
    x1, y1 = tangent_points(dd, ll)
    return max(y1 - x1, 0.0)


def best_accuracy(d, lam):
    r"""Best membership accuracy at a fair coin, :math:`(1 + \mathrm{TV})/2` (Sec. 4.4)."""
    return 0.5 * (1.0 + tv(d, lam))


def auc(d, lam, *, symmetric=False):
    r"""Area under :math:`R` (:math:`=\Pr[X_\lambda > X_0]` for independent draws), or under :math:`R_s`.

    Integrated over the threshold :math:`t` with adaptive quadrature
    (:math:`\int \Psi_{\chi^2_d(\lambda)}(t)\, f_{\chi^2_d}(t)\,dt`); the symmetrised area adds the
    triangle between :math:`R` and the tangent segment on :math:`[x_1, 1-y_1]` and uses the symmetry of :math:`R_s`.
    """
    from scipy import integrate, stats

    dd, ll = _d_lam(d, lam)
    if ll == 0.0:
        return 0.5
    f = lambda u: float(np.exp(chisq.log_sf(u, dd, ll))) * stats.chi2.pdf(u, dd)  # noqa: E731
    hi = dd + ll + 40.0 * math.sqrt(2 * dd + 4 * ll) + 40.0
    brk = [dd, dd + ll]
    a_r = integrate.quad(f, 0.0, hi, points=brk, limit=400, epsabs=1e-13, epsrel=1e-12)[0]
    if not symmetric:
        return float(min(max(a_r, 0.5), 1.0))          # quadrature error can step past the ends
    t0 = _t0(dd, ll)[1]
    x1, y1 = tangent_points(dd, ll)
    # under R on [0, x1]: substitute x = Psi_0(u), so the area is int_{t0}^inf Psi_lam(u) f_0(u) du
    left = integrate.quad(f, t0, hi, limit=400, epsabs=1e-14, epsrel=1e-12)[0]
    # under the tangent segment x + (y1 - x1) on [x1, 1 - y1]
    middle = 0.5 * ((1.0 - y1) ** 2 - x1 * x1) + (y1 - x1) * (1.0 - y1 - x1)
    # under R' on [1 - y1, 1]: R' is R reflected across the anti-diagonal, which gives (1 - x1) y1 + left
    right = (1.0 - x1) * y1 + left
    return float(min(max(left + middle + right, 0.5), 1.0))
