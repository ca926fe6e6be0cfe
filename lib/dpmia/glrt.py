r"""The generalised likelihood-ratio-test (GLRT) adversary against the Gaussian mechanism.

Kaissis, Ziller, Kolek Martinez de Azagra and Rueckert, *Generalised Likelihood Ratio Testing
Adversaries through the Differential Privacy Lens*. The adversary of DP (the Neyman-Pearson-optimal,
"NPO", one) knows the direction of :math:`f(D') - f(D)`; the GLRT adversary knows :math:`f`,
:math:`\Delta` and :math:`\sigma` but not the direction, plugs in its maximum-likelihood estimate and
thresholds the energy :math:`T = \|y\|^2/\sigma^2`. Without the target :math:`T \sim \chi^2_d`, with it
:math:`T\sim\chi^2_d(\lambda)`, :math:`\lambda = \Delta^2/\sigma^2` (Theorem 1), and :math:`N` releases
with the same unknown direction give :math:`\lambda = N\Delta^2/\sigma^2` (Theorem 2). Everything here
depends on the dimension ``d`` and the noncentrality ``lam`` only.

* :func:`roc`, :func:`roc_reverse` - Theorem 1's curves :math:`R`, :math:`R'`; :func:`roc_d1` -
  Corollary 1; :func:`roc_symmetric` - the symmetrised, concavified curve :math:`R_s` with its
  :func:`tangent_points`; :func:`tv`, :func:`auc`, :func:`best_accuracy`.
* :func:`delta` / :func:`epsilon` - the privacy profile of :math:`R_s` (both directions) by the exact
  likelihood-ratio method: the slope of :math:`R` at threshold :math:`t` is :math:`e^{L(t)}`
  (:func:`dpmia.chisq.log_likelihood_ratio`), so :math:`\delta(\varepsilon)` is read at the
  :math:`t` with :math:`L(t) = \varepsilon`. Both are rounded to the safe side.
* :func:`noncentrality`, :func:`noncentrality_heterogeneous` (Theorem 2), :func:`gdp_mu_asymptotic`
  and :func:`roc_clt` (Theorem 3, eq. 35 corrected), :func:`amplified_delta` /
  :func:`amplified_epsilon` (Sec. 4.6, Poisson subsampling), :func:`energy_epsilon_bracket`
  (per-round subsampling through :mod:`dpmia.pld`).

The NPO side is :mod:`dpmia.gaussian` with :math:`\mu = \sqrt\lambda` (one implementation of the
Gaussian profile in the library).
"""

from __future__ import annotations

import math
import warnings
from functools import lru_cache

import numpy as np
from scipy import optimize, special

from . import _checks, chisq, gaussian, pld as _pld

__all__ = ["roc", "roc_reverse", "roc_d1", "tangent_points", "roc_symmetric", "tv", "auc",
           "best_accuracy", "delta", "delta_forward", "delta_reverse", "delta_d1", "epsilon",
           "epsilon_bracket", "noncentrality", "noncentrality_heterogeneous", "gdp_mu_asymptotic",
           "roc_clt", "amplified_delta", "amplified_epsilon", "energy_epsilon_bracket",
           "SAFETY_MARGIN"]

#: Relative allowance for the floating-point error of the log-probabilities and of :math:`L`
#: (measured below 2e-13 against 40-digit mpmath): every upper bound is raised by it.
SAFETY_MARGIN = 1e-11


def _d_lam(d, lam):
    """Validated (d, lam); a subnormal lam (below 1e-300, where the likelihood ratio's inverse loses
    all digits) is raised to 1e-300: every privacy quantity increases with lam, so upper bounds stay safe."""
    dd, ll = _checks.integer("d", d, lo=1), _checks.nonnegative("lam", lam)
    return dd, (1e-300 if 0.0 < ll < 1e-300 else ll)


def _fpr(x):
    return _checks.probability("fpr", x)


# ------------------------------------------------------------------------------------------
# ROC curves (Theorem 1, Corollary 1)
# ------------------------------------------------------------------------------------------
def roc(fpr, d, lam):
    r"""Theorem 1: :math:`R(x) = \Psi_{\chi^2_d(\lambda)}\big(\Psi^{-1}_{\chi^2_d}(x)\big)`, the GLRT's TPR at FPR ``fpr``.

    The test "member iff :math:`\|y\|^2/\sigma^2 > c`" with :math:`c` set from the null law
    :math:`\chi^2_d`. Not symmetrised (see :func:`roc_symmetric`). Vectorised over ``fpr`` in
    [0, 1]; accurate down to ``fpr`` = 1e-300. ``d`` integer >= 1, ``lam`` >= 0 (0: the diagonal).
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

    :math:`Q = 1 - \Phi_{\mathcal N}`; ``mu`` = :math:`\Delta/\sigma` >= 0. Equals :func:`roc` with
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
    ll = _checks.positive("lam", lam)
    t0 = _t0(dd, ll)[1]
    return math.exp(chisq.log_sf(t0, dd, 0.0)), math.exp(chisq.log_sf(t0, dd, ll))


def roc_symmetric(fpr, d, lam):
    r"""The symmetrised, concavified ROC :math:`R_s` (Kaissis et al., Sec. 4.4, after Dong et al.).

    .. math:: R_s(x) = \begin{cases} R(x) & x \le x_1\\ x + (y_1 - x_1) & x_1 \le x \le 1-y_1\\
              R'(x) & x \ge 1 - y_1\end{cases}

    the concave upper envelope of :math:`R` and :math:`R'` (:func:`tangent_points`). It is the best
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
    r"""Total variation :math:`y_1 - x_1 = \delta(0)`: the largest membership advantage (TPR - FPR) of the GLRT adversary.

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


# ------------------------------------------------------------------------------------------
# privacy profile (Algorithm 1 by the exact likelihood-ratio method)
# ------------------------------------------------------------------------------------------
def _eps_arr(eps):
    return np.atleast_1d(np.asarray(_checks.nonnegative("eps", eps, allow_inf=True), float)).ravel()


def _fwd_upper(e, dd, ll):
    """Upper bound on H_{e^eps}(chi2(lam) || chi2) for real eps > -lam/2 (array)."""
    lo, hi = chisq.likelihood_ratio_inverse(e, dd, ll)
    lo, hi = np.atleast_1d(lo), np.atleast_1d(hi)
    # the optimum t* lies in [lo, hi]: Psi_lam(t*) <= Psi_lam(lo), Psi_0(t*) >= Psi_0(hi)
    a = np.asarray(chisq.log_sf(lo, dd, ll), float)
    b = np.asarray(chisq.log_sf(hi, dd, 0.0), float) + e
    up = np.exp(a) * (1.0 + SAFETY_MARGIN) - np.exp(np.minimum(b, 700.0)) * (1.0 - SAFETY_MARGIN)
    return np.clip(up, 0.0, 1.0)


def _rev_upper(e, dd, ll):
    """Upper bound on H_{e^eps}(chi2 || chi2(lam)) for eps >= 0 (0 for eps >= lam/2)."""
    out = np.zeros_like(e)
    act = e < 0.5 * ll
    if np.any(act):
        lo, hi = chisq.likelihood_ratio_inverse(-e[act], dd, ll)
        lo, hi = np.atleast_1d(lo), np.atleast_1d(hi)
        # here the optimum t' with L(t') = -eps lies in [lo, hi]: Phi_0(t') <= Phi_0(hi), Phi_lam(t') >= Phi_lam(lo)
        a = np.asarray(chisq.log_cdf(hi, dd, 0.0), float)
        b = np.asarray(chisq.log_cdf(lo, dd, ll), float) + e[act]
        up = np.exp(a) * (1.0 + SAFETY_MARGIN) - np.exp(np.minimum(b, 700.0)) * (1.0 - SAFETY_MARGIN)
        out[act] = np.clip(up, 0.0, 1.0)
    return out


def delta_forward(eps, d, lam):
    r""":math:`\delta_{\rm fwd}(\varepsilon) = \Psi_{\chi^2_d(\lambda)}(t_\varepsilon) - e^\varepsilon\Psi_{\chi^2_d}(t_\varepsilon)`, :math:`L(t_\varepsilon) = \varepsilon`.

    The hockey-stick divergence :math:`H_{e^\varepsilon}(\chi^2_d(\lambda)\|\chi^2_d)` (the test of
    :math:`R`); for real ``eps`` (below :math:`-\lambda/2` it is :math:`1-e^\varepsilon`). Rounded up:
    the threshold is bracketed, each end bounds one term, and :data:`SAFETY_MARGIN` covers rounding.
    """
    ev = _checks.real("eps", eps, allow_inf=True)
    if np.any(np.asarray(ev) == -np.inf):
        raise ValueError("eps must be > -inf")
    dd, ll = _d_lam(d, lam)
    e = np.atleast_1d(np.asarray(ev, float)).ravel()
    out = np.zeros_like(e)
    if ll > 0.0:
        below = e <= -0.5 * ll
        out[below] = -np.expm1(e[below])
        mid = ~below & np.isfinite(e)
        if np.any(mid):
            out[mid] = _fwd_upper(e[mid], dd, ll)
    else:
        out = np.maximum(-np.expm1(np.minimum(e, 0.0)), 0.0)
    return _checks.scalar_or_array(out.reshape(np.shape(ev)), eps)


def delta_reverse(eps, d, lam):
    r""":math:`\delta_{\rm rev}(\varepsilon) = \Phi_{\chi^2_d}(t'_\varepsilon) - e^\varepsilon\Phi_{\chi^2_d(\lambda)}(t'_\varepsilon)`, :math:`L(t'_\varepsilon) = -\varepsilon`.

    :math:`H_{e^\varepsilon}(\chi^2_d\|\chi^2_d(\lambda))` for ``eps`` >= 0 (the swapped test of
    :math:`R'`); 0 for :math:`\varepsilon \ge \lambda/2`, the largest reverse privacy loss. Rounded up.
    """
    e = _eps_arr(eps)
    dd, ll = _d_lam(d, lam)
    out = _rev_upper(e, dd, ll) if ll > 0.0 else np.zeros_like(e)
    return _checks.scalar_or_array(out.reshape(np.shape(eps)), eps)


def delta(eps, d, lam):
    r"""Privacy profile of the GLRT adversary: :math:`\delta(\varepsilon) = \sup_x[R_s(x) - e^\varepsilon x] = \max(\delta_{\rm fwd}, \delta_{\rm rev})`.

    Kaissis et al., Sec. 4.5 / Algorithm 1 (whose root condition must be :math:`R_s'(x) = e^\varepsilon`),
    computed exactly through the likelihood ratio instead of a grid; never below the exact value.
    ``eps`` >= 0 (scalar or array), ``d`` integer >= 1, ``lam`` >= 0.
    """
    e = _eps_arr(eps)
    dd, ll = _d_lam(d, lam)
    if ll == 0.0:
        out = np.zeros_like(e)
    else:
        fin = np.isfinite(e)
        out = np.zeros_like(e)
        out[fin] = np.maximum(_fwd_upper(e[fin], dd, ll), _rev_upper(e[fin], dd, ll))
    return _checks.scalar_or_array(out.reshape(np.shape(eps)), eps)


def delta_d1(eps, mu):
    r"""Closed-form profile for :math:`d = 1` (derived from Corollary 1; not printed in the paper).

    With :math:`s = \operatorname{arccosh}(e^{\varepsilon + \mu^2/2})/\mu`:
    :math:`\delta_{\rm fwd} = Q(s-\mu) + Q(s+\mu) - 2e^\varepsilon Q(s)`; for :math:`\varepsilon < \mu^2/2`,
    with :math:`s' = \operatorname{arccosh}(e^{\mu^2/2-\varepsilon})/\mu`,
    :math:`\delta_{\rm rev} = 1 - 2Q(s') - e^\varepsilon[1 - Q(s'-\mu) - Q(s'+\mu)]`. Returns the max.
    A check on :func:`delta` (no safety rounding).
    """
    e = _eps_arr(eps)
    m = _checks.nonnegative("mu", mu)
    if m == 0.0:
        return _checks.scalar_or_array(np.zeros_like(e).reshape(np.shape(eps)), eps)

    def acosh_exp(y):  # arccosh(e^y) for y >= 0, without overflow
        return y + np.log1p(np.sqrt(-np.expm1(-2.0 * y)))

    with np.errstate(over="ignore"):  # tiny mu: s = inf, the limit in which delta_fwd = 0
        s = acosh_exp(e + 0.5 * m * m) / m
    fwd = special.ndtr(m - s) + special.ndtr(-s - m) - 2.0 * np.exp(e + special.log_ndtr(-s))
    out = fwd
    act = e < 0.5 * m * m
    if np.any(act):
        sp = acosh_exp(0.5 * m * m - e[act]) / m
        inner = np.maximum(1.0 - special.ndtr(m - sp) - special.ndtr(-sp - m), 1e-300)
        rev = 1.0 - 2.0 * special.ndtr(-sp) - np.exp(e[act] + np.log(inner))
        out = out.copy()
        out[act] = np.maximum(out[act], rev)
    return _checks.scalar_or_array(np.clip(out, 0.0, 1.0).reshape(np.shape(eps)), eps)


def _log_upper(log_a, log_b):
    """log of an upper bound on exp(log_a) - exp(log_b), allowing SAFETY_MARGIN relative error in each."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        r = np.exp(np.minimum(log_b - log_a, 0.0)) * (1.0 - SAFETY_MARGIN) / (1.0 + SAFETY_MARGIN)
        v = log_a + math.log1p(SAFETY_MARGIN) + np.log1p(-r)
    # where the two terms agree to within the margin, the difference is below 2 * margin * a
    return np.where(r < 1.0 - 2.0 * SAFETY_MARGIN, v, log_a + math.log(2.0 * SAFETY_MARGIN))


def _log_g(t, dd, ll, forward):
    """Upper bound on log delta at the exact point of the curve with threshold t (vector t > 0).

    Forward: eps = L(t), delta = Psi_lam(t) - e^eps Psi_0(t). Reverse: eps = -L(t),
    delta = Phi_0(t) - e^eps Phi_lam(t). The pair (eps, delta) is exact for the exact L(t).
    """
    L = np.asarray(chisq.log_likelihood_ratio(t, dd, ll), float)
    if forward:
        return _log_upper(np.asarray(chisq.log_sf(t, dd, ll), float), np.asarray(chisq.log_sf(t, dd, 0.0), float) + L)
    return _log_upper(np.asarray(chisq.log_cdf(t, dd, 0.0), float), np.asarray(chisq.log_cdf(t, dd, ll), float) - L)


def _eps_up(t, dd, ll, sign):
    """sign * L(t), rounded up by the safety margin."""
    v = sign * float(chisq.log_likelihood_ratio(t, dd, ll))
    # the float error of L is below 1e-15 (|L| + lam/2): L = -lam/2 + log 0F1 cancels at most that much
    return max(v + SAFETY_MARGIN * (abs(v) + 0.5 * ll) + 1e-300, 0.0)


def _search(fn, a, b, target, forward, points=5, rel=1e-12):
    """Safe threshold in log t: fn decreases in u = log t (forward) or increases (reverse).

    Two rounds of ``points``-point searches (vectorised) narrow [a, b] to the cell where fn crosses
    ``target``, Brent's method finishes, and the result is moved to the side where fn <= target (the
    safe side; that end of the cell is known to qualify). A fixed rule: the same bits on every call.
    """
    for _ in range(3):
        u = np.linspace(a, b, points)
        ok = fn(np.exp(u)) <= target
        if forward:
            ok[-1] = True
            k = int(np.argmax(ok))
            a, b = u[max(k - 1, 0)], u[k]
        else:
            ok[0] = True
            k = int(points - 1 - np.argmax(ok[::-1]))
            a, b = u[k], u[min(k + 1, points - 1)]
        if b - a <= 0.5:
            break
    safe = b if forward else a
    g = lambda v: float(fn(np.array([math.exp(v)]))[0]) - target  # noqa: E731
    if a == b or g(a) * g(b) > 0.0:
        return math.exp(safe)
    root = optimize.brentq(g, a, b, xtol=rel * max(abs(a), abs(b), 1.0), rtol=8.9e-16, maxiter=200)
    step = rel * max(abs(root), 1.0)
    for _ in range(60):
        if (root >= safe) if forward else (root <= safe):
            return math.exp(safe)
        if g(root) <= 0.0:
            return math.exp(root)
        root = root + step if forward else root - step
        step *= 4.0
    return math.exp(safe)  # pragma: no cover


@lru_cache(maxsize=256)
def _tv_cached(dd, ll):
    t0 = _t0(dd, ll)[1]
    return max(math.exp(chisq.log_sf(t0, dd, ll)) - math.exp(chisq.log_sf(t0, dd, 0.0)), 0.0)


def _eps_forward(dl, dd, ll):
    target = math.log(dl)
    t_lo = _t0(dd, ll)[1]
    t_hi = max(t_lo * 2.0, dd + ll + 1.0)
    for _ in range(400):
        if _log_g(np.array([t_hi]), dd, ll, True)[0] <= target:
            break
        t_hi *= 4.0
    t = _search(lambda tt: _log_g(tt, dd, ll, True), math.log(t_lo), math.log(t_hi), target, True)
    return _eps_up(t, dd, ll, 1.0)


def _eps_reverse(dl, dd, ll):
    target = math.log(dl)
    t_hi = _t0(dd, ll)[0]
    t_lo = t_hi
    for _ in range(2000):
        t_lo *= 0.25
        if t_lo < 1e-300:
            return 0.5 * ll       # below target only at the end of the reverse branch
        if _log_g(np.array([t_lo]), dd, ll, False)[0] <= target:
            break
    t = _search(lambda tt: _log_g(tt, dd, ll, False), math.log(t_lo), math.log(t_hi), target, False)
    return min(_eps_up(t, dd, ll, -1.0), 0.5 * ll)


def epsilon_bracket(delta, d, lam):
    r"""``(eps_forward, eps_reverse)``: the smallest :math:`\varepsilon` per direction with profile <= ``delta``.

    Each is rounded up (never understated); :func:`epsilon` is their maximum. The reverse value is
    solved only when the reverse profile at the forward value exceeds ``delta``; otherwise it is
    reported as that upper bound, the forward value.
    """
    dl = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    dd, ll = _d_lam(d, lam)
    if ll == 0.0 or _tv_cached(dd, ll) * (1.0 + SAFETY_MARGIN) <= dl:
        return 0.0, 0.0
    e_f = _eps_forward(dl, dd, ll)
    if e_f >= 0.5 * ll or float(_rev_upper(np.array([e_f]), dd, ll)[0]) <= dl:
        return e_f, min(e_f, 0.5 * ll)
    return e_f, _eps_reverse(dl, dd, ll)


def epsilon(delta, d, lam):
    r"""Smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le` ``delta`` for the GLRT adversary (symmetrised curve).

    Kaissis et al., Sec. 4.5. Solved on the exact curve :math:`(\varepsilon, \delta) = (L(t),\
    \Psi_{\chi^2_d(\lambda)}(t) - e^{L(t)}\Psi_{\chi^2_d}(t))` (and its reverse branch) by Brent's
    method in :math:`\log t`, then moved to the safe side: the returned value is never below the exact
    one (up to :data:`SAFETY_MARGIN`). ``delta`` in (0, 1), ``d`` integer >= 1 (up to 1e4), ``lam`` >= 0
    (up to 1e4); ``delta`` down to 1e-300.
    """
    return max(epsilon_bracket(delta, d, lam))


# ------------------------------------------------------------------------------------------
# composition and asymptotics (Theorems 2 and 3)
# ------------------------------------------------------------------------------------------
def noncentrality(sensitivity, sigma, rounds=1):
    r"""Theorem 2: :math:`\lambda = N\Delta^2/\sigma^2` for ``rounds`` = :math:`N` releases with the same unknown direction.

    The adversary averages the releases; :math:`\bar y \sim \mathcal N(\nu, \sigma^2/N)` is sufficient.
    """
    s = _checks.nonnegative("sensitivity", sensitivity)
    sg = _checks.positive("sigma", sigma)
    n = _checks.integer("rounds", rounds, lo=1)
    return n * (s / sg) ** 2


def noncentrality_heterogeneous(sensitivities, sigmas):
    r""":math:`\lambda = \sum_i \Delta_i^2/\sigma_i^2` (releases with different noise, same direction).

    The precision-weighted mean is sufficient, so Theorem 1 applies with this :math:`\lambda` - the
    GLRT analogue of :math:`\mu^2` adding up in GDP (our extension; the paper mentions only a numerical route).
    """
    s = np.atleast_1d(_checks.nonnegative("sensitivities", sensitivities))
    sg = np.atleast_1d(_checks.positive("sigmas", sigmas))
    if s.shape != sg.shape or s.ndim != 1 or s.size == 0:
        raise ValueError(f"sensitivities and sigmas must be 1-d arrays of the same length >= 1, "
                         f"got shapes {s.shape} and {sg.shape}")
    return float(np.sum((s / sg) ** 2))


def gdp_mu_asymptotic(d, lam, *, warn=True):
    r"""Theorem 3 (eqs. 36-37): for :math:`d \gg 1` and small :math:`\lambda/d`, :math:`R \approx` GDP with :math:`\mu = \lambda/\sqrt{2d}`.

    **Not a bound.** Chi-square tails are heavier than Gaussian ones, so the approximation
    understates :math:`\varepsilon` (it is not conservative even inside its regime). The regime is
    :math:`d\to\infty` with :math:`\lambda/\sqrt{2d}` fixed, not the paper's ":math:`N\to\infty`": with
    ``warn`` a ``UserWarning`` is raised when :math:`\lambda/d > 0.1`, and when :math:`\lambda > 2d`,
    where the value even exceeds the NPO adversary's :math:`\sqrt\lambda`.
    """
    dd, ll = _d_lam(d, lam)
    mu = ll / math.sqrt(2.0 * dd)
    if warn and ll > 2.0 * dd:
        warnings.warn(f"lam = {ll:g} > 2d = {2 * dd}: the asymptotic GDP mu = {mu:.4g} exceeds the NPO "
                      f"value sqrt(lam) = {math.sqrt(ll):.4g}; Theorem 3 does not apply", UserWarning, stacklevel=2)
    elif warn and ll > 0.1 * dd:
        warnings.warn(f"lam/d = {ll / dd:.3g} > 0.1: outside Theorem 3's regime (lam/d -> 0); the GDP "
                      f"approximation is far from the exact GLRT curve", UserWarning, stacklevel=2)
    return mu


def roc_clt(fpr, d, lam, *, form="eq44"):
    r"""Gaussian approximations of Theorem 1's :math:`R` for large :math:`d` (Theorem 3).

    * ``"eq44"`` (= eq. 35 corrected): :math:`Q\big((Q^{-1}(x) - \lambda/\sqrt{2d})/\sqrt{1+2\lambda/d}\big)`;
    * ``"eq35_printed"``: the printed eq. (35), with :math:`\lambda/(\sqrt2\,d)` in place of :math:`\lambda/\sqrt{2d}`;
    * ``"gdp"`` (eq. 36): :math:`Q(Q^{-1}(x) - \mu)`, :math:`\mu = \lambda/\sqrt{2d}` (:func:`dpmia.gaussian.tpr_at_fpr`).
    """
    x = _fpr(fpr)
    dd, ll = _d_lam(d, lam)
    xa = np.asarray(x, float)
    if form == "gdp":
        return gaussian.tpr_at_fpr(x, ll / math.sqrt(2.0 * dd))
    if form not in ("eq44", "eq35_printed"):
        raise ValueError(f"form must be 'eq44', 'eq35_printed' or 'gdp', got {form!r}")
    root = math.sqrt(1.0 + 2.0 * ll / dd)
    shift = ll / math.sqrt(2.0 * dd) if form == "eq44" else ll / (math.sqrt(2.0) * dd)
    with np.errstate(divide="ignore"):
        z = -special.ndtri(xa)
    out = special.ndtr(-(z / root - shift / root))
    return _checks.scalar_or_array(np.clip(out, 0.0, 1.0), fpr)


# ------------------------------------------------------------------------------------------
# Poisson subsampling (Sec. 4.6)
# ------------------------------------------------------------------------------------------
def _gamma(gamma):
    return _checks.real("gamma", gamma, lo=0.0, hi=1.0, lo_open=True)


def _amplify(e, g):
    """log(1 + g (e^e - 1)) for e >= 0, without overflow (= logaddexp(log(1-g), log g + e))."""
    e = np.asarray(e, float)
    if g >= 1.0:
        return e
    return np.logaddexp(math.log1p(-g), math.log(g) + e)


def _deamplify(x, g):
    """log(1 + (e^x - 1)/g) for real x > log(1 - g), without overflow."""
    x = np.asarray(x, float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        small = np.log1p(np.expm1(np.minimum(x, 1.0)) / g)
        big = x - math.log(g) + np.log1p(-(1.0 - g) * np.exp(-np.maximum(x, 1.0)))
    return np.where(x <= 1.0, small, big)


def _profiles(d, lam, adversary):
    if adversary == "glrt":
        return (lambda e: np.asarray(delta_forward(e, d, lam), float),
                lambda e: np.asarray(delta_reverse(e, d, lam), float),
                lambda dl: epsilon_bracket(dl, d, lam)[0])
    if adversary == "npo":
        mu = math.sqrt(lam)
        fwd = lambda e: np.asarray(gaussian.delta(np.maximum(e, 0.0), mu), float)  # noqa: E731
        return fwd, fwd, lambda dl: float(gaussian.epsilon(dl, mu))
    raise ValueError(f"adversary must be 'glrt' or 'npo', got {adversary!r}")


def amplified_delta(eps, d, lam, gamma, *, adversary="glrt"):
    r"""Tight profile after Poisson subsampling with rate ``gamma``, one inclusion coin (reading A of Fig. 7).

    With :math:`M = (1-\gamma)Q + \gamma P` (a post-processing of :math:`y`, so exact for the energy
    statistic): :math:`H_{e^{\varepsilon'}}(M\|Q) = \gamma\,\delta_{\rm fwd}(\varepsilon)`,
    :math:`e^\varepsilon = 1 + (e^{\varepsilon'}-1)/\gamma`; :math:`H_{e^{\varepsilon'}}(Q\|M) = c\,\delta_{\rm rev}(\tilde\varepsilon)`,
    :math:`c = 1 - e^{\varepsilon'}(1-\gamma)`, :math:`e^{\tilde\varepsilon} = \gamma e^{\varepsilon'}/c`.
    Returns the max. ``adversary`` "glrt" (energy test) or "npo" (the Gaussian pair, :math:`\mu=\sqrt\lambda`).
    """
    e = _eps_arr(eps)
    dd, ll = _d_lam(d, lam)
    g = _gamma(gamma)
    fwd, rev, _ = _profiles(dd, ll, adversary)
    ef = _deamplify(e, g)
    out = g * fwd(ef)
    with np.errstate(over="ignore"):
        c = -np.expm1(e + math.log1p(-g)) if g < 1.0 else np.ones_like(e)
    act = c > 0
    if np.any(act):
        et = np.log(g) + e[act] - np.log(c[act])
        out[act] = np.maximum(out[act], c[act] * rev(np.maximum(et, 0.0)))
    return _checks.scalar_or_array(np.clip(out, 0.0, 1.0).reshape(np.shape(eps)), eps)


def amplified_epsilon(delta, d, lam, gamma, *, adversary="glrt"):
    r"""Smallest :math:`\varepsilon'` of the subsampled pair (reading A) with profile <= ``delta``; never understated.

    Forward direction in closed form, :math:`\varepsilon' = \log(1 + \gamma(e^{\varepsilon(\delta/\gamma)} - 1))`
    (Balle et al. 2018, the amplification the paper applies); the reverse direction by root-finding.
    """
    dl = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    dd, ll = _d_lam(d, lam)
    g = _gamma(gamma)
    if ll == 0.0:
        return 0.0
    _, rev, eps_fwd = _profiles(dd, ll, adversary)
    e_f = eps_fwd(dl / g) if dl / g < 1.0 else 0.0
    out_f = float(_amplify(e_f, g))

    def rev_amp(ep):
        c = -math.expm1(ep + math.log1p(-g)) if g < 1.0 else 1.0
        if c <= 0.0:
            return 0.0
        et = max(math.log(g) + ep - math.log(c), 0.0)
        return c * float(rev(np.array([et]))[0])

    if g < 1.0:
        hi = -math.log1p(-g)          # c = 0 there: the reverse profile vanishes
    else:
        hi = 1.0
        while rev_amp(hi) > dl:       # no subsampling: expand until the reverse profile is below delta
            hi *= 2.0
    if rev_amp(0.0) <= dl:
        out_r = 0.0
    else:
        root = optimize.brentq(lambda ep: rev_amp(ep) - dl, 0.0, hi, xtol=1e-14, rtol=8.9e-16)
        out_r = root
        step = 1e-15 * max(root, 1.0)
        while rev_amp(out_r) > dl:
            out_r += step
            step *= 2.0
    return max(out_f, out_r)


def energy_epsilon_bracket(delta, d, lam_round, gamma, rounds, *, h=None):
    r"""Certified bracket on :math:`\varepsilon(\delta)` of the per-round energy adversary under per-round subsampling (reading B of Fig. 7).

    DP-SGD semantics: each of ``rounds`` releases includes the target with probability ``gamma``
    (fresh coin), and the adversary sees the energies :math:`T_i = \|y_i\|^2/\sigma^2` (noncentrality
    ``lam_round`` = :math:`\Delta^2/\sigma^2` each). One round is the pair
    :math:`(\chi^2_d,\ (1-\gamma)\chi^2_d + \gamma\chi^2_d(\lambda))`; its exact profile
    (:func:`amplified_delta`'s forward identity) is discretised with pessimistic and optimistic rounding
    and composed by FFT in :mod:`dpmia.pld`. Returns ``(lower, upper)`` for add/remove adjacency.
    ``h`` is the loss grid step (default: 1/4000 of the composed loss's spread).
    """
    dl = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    dd = _checks.integer("d", d, lo=1)
    ll = _checks.positive("lam_round", lam_round)
    g = _gamma(gamma)
    n = _checks.integer("rounds", rounds, lo=1)
    loss_min = math.log1p(g * math.expm1(-0.5 * ll))
    # spread of the composed loss: per-round variance ~ g^2 (e^{lam} - 1) (second order), as for the SGM
    sd = math.sqrt(n * g * g * math.expm1(min(ll, 700.0)))
    hh = float(_checks.positive("h", h)) if h is not None else min(1e-2, max(sd / 4000.0, 1e-6))
    # upper end: where the one-round profile falls below 1e-16
    e_hi = float(_amplify(epsilon(min(1e-16 / g, 0.5), dd, ll), g))
    lo = math.floor(loss_min / hh) * hh
    x = lo + hh * np.arange(int(math.ceil((e_hi - lo) / hh)) + 2)
    if x.size > _pld.MAX_FFT // 4:
        raise ValueError(f"the one-round grid needs {x.size} points at h = {hh:g}; pass a coarser h")
    ef = _deamplify(np.maximum(x, loss_min), g)
    prof = np.where(x <= loss_min, -np.expm1(x), g * np.asarray(delta_forward(np.maximum(ef, -0.5 * ll), dd, ll)))
    prof = np.clip(prof, 0.0, 1.0)
    t_lo = np.atleast_1d(chisq.likelihood_ratio_inverse(np.maximum(ef, -0.5 * ll * (1 - 1e-12)), dd, ll)[1])
    tail = np.where(x <= loss_min, 1.0, np.exp(np.asarray(chisq.log_sf(t_lo, dd, 0.0), float)))
    out = []
    for kind in ("pessimistic", "optimistic"):
        one = _pld.from_profile(x, prof, tail, kind)
        add = _pld.compose(one, n)
        rem = _pld.compose(one.reflect(), n)
        out.append(max(add.epsilon(dl, direction="add"), rem.epsilon(dl, direction="add")))
    return out[1], out[0]
