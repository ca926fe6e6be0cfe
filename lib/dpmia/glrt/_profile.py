r"""Privacy profile of the GLRT adversary's symmetrised curve :math:`R_s` (Kaissis et al., Sec. 4.5, Algorithm 1).

Computed exactly through the likelihood ratio instead of on a grid: the slope of :math:`R` at
threshold :math:`t` is :math:`e^{L(t)}` (:func:`dpmia.chisq.log_likelihood_ratio`), so
:math:`\delta(\varepsilon)` is read at the :math:`t` with :math:`L(t) = \varepsilon` (forward branch,
:math:`R`) or :math:`L(t) = -\varepsilon` (reverse branch, :math:`R'`); :math:`\varepsilon(\delta)` is
found by a fixed search in :math:`\log t` along the exact curve. Every value is rounded to the safe
side by ``SAFETY_MARGIN``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import optimize, special

from .. import _checks, chisq
from ._curves import _d_lam, _t0

#: Relative allowance for the floating-point error of the log-probabilities and of :math:`L`
#: (measured below 2e-13 against 40-digit mpmath): every upper bound is raised by it.
SAFETY_MARGIN = 1e-11


def _eps_arr(eps):
    return np.atleast_1d(np.asarray(_checks.nonnegative("eps", eps, allow_inf=True), float)).ravel()


def _fwd_upper(e, dd, ll):
    """Upper bound on H_{e^eps}(chi2(lam) || chi2) for real eps > -lam/2 (array)."""
    lo, hi = chisq.likelihood_ratio_inverse(e, dd, ll)
    return _fwd_upper_at(e, dd, ll, np.atleast_1d(lo), np.atleast_1d(hi))


def _fwd_upper_at(e, dd, ll, lo, hi):
    """:func:`_fwd_upper` from the bracket ``[lo, hi]`` of the threshold with L(t) = eps."""
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
    r""":math:`\delta_{\rm fwd}(\varepsilon) =`
    :math:`\Psi_{\chi^2_d(\lambda)}(t_\varepsilon) - e^\varepsilon\Psi_{\chi^2_d}(t_\varepsilon)`,
    :math:`L(t_\varepsilon) = \varepsilon`.

    The hockey-stick divergence :math:`H_{e^\varepsilon}(\chi^2_d(\lambda)\|\chi^2_d)` (the test of
    :math:`R`); for real ``eps`` (below :math:`-\lambda/2` it is :math:`1-e^\varepsilon`). Rounded up:
    the threshold is bracketed, each end bounds one term, and ``SAFETY_MARGIN`` covers rounding.
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
    r""":math:`\delta_{\rm rev}(\varepsilon) =`
    :math:`\Phi_{\chi^2_d}(t'_\varepsilon) - e^\varepsilon\Phi_{\chi^2_d(\lambda)}(t'_\varepsilon)`,
    :math:`L(t'_\varepsilon) = -\varepsilon`.

    :math:`H_{e^\varepsilon}(\chi^2_d\|\chi^2_d(\lambda))` for ``eps`` >= 0 (the swapped test of
    :math:`R'`); 0 for :math:`\varepsilon \ge \lambda/2`, the largest reverse privacy loss. Rounded up.
    """
    e = _eps_arr(eps)
    dd, ll = _d_lam(d, lam)
    out = _rev_upper(e, dd, ll) if ll > 0.0 else np.zeros_like(e)
    return _checks.scalar_or_array(out.reshape(np.shape(eps)), eps)


def delta(eps, d, lam):
    r"""Privacy profile of the GLRT adversary:
    :math:`\delta(\varepsilon) = \sup_x[R_s(x) - e^\varepsilon x] = \max(\delta_{\rm fwd}, \delta_{\rm rev})`.

    Kaissis et al., Sec. 4.5 / Algorithm 1 (whose root condition must be :math:`R_s'(x) = e^\varepsilon`),
    computed exactly through the likelihood ratio instead of a grid; never below the exact value.
    ``eps`` >= 0 (scalar or array), ``d`` integer >= 1, ``lam`` >= 0.

    Examples
    --------
    >>> from dpmia import glrt
    >>> round(float(glrt.delta(1.0, 10, 4.0)), 4)
    0.0791
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
    A check on :func:`dpmia.glrt.delta` (no safety rounding).
    """
    e = _eps_arr(eps)
    m = _checks.scalar("mu", mu, lo=0.0)
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
    t = np.asarray(t, float)
    L = chisq._log_likelihood_ratio_1d(t, dd, ll)
    law = chisq._log_law_1d                  # (d and lam were checked by the public call)
    if forward:
        return _log_upper(law(t, dd, ll, True), law(t, dd, 0.0, True) + L)
    return _log_upper(law(t, dd, 0.0, False), law(t, dd, ll, False) - L)


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

    Each is rounded up (never understated); :func:`dpmia.glrt.epsilon` is their maximum. The reverse value is
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
    r"""Smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le` ``delta`` for the GLRT adversary
    (symmetrised curve).

    Kaissis et al., Sec. 4.5. Solved on the exact curve :math:`(\varepsilon, \delta) = (L(t),\
    \Psi_{\chi^2_d(\lambda)}(t) - e^{L(t)}\Psi_{\chi^2_d}(t))` (and its reverse branch) by Brent's
    method in :math:`\log t`, then moved to the safe side: the returned value is never below the exact
    one (up to ``SAFETY_MARGIN``). ``delta`` in (0, 1), ``d`` integer >= 1 (up to 1e4), ``lam`` >= 0
    (up to 1e4); ``delta`` down to 1e-300.

    Examples
    --------
    >>> from dpmia import glrt
    >>> round(float(glrt.epsilon(1e-5, 10, 4.0)), 3)    # the GLRT adversary's epsilon at delta = 1e-5
    4.64
    """
    return max(epsilon_bracket(delta, d, lam))
