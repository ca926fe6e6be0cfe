r"""Rényi and KL accounting of the subsampled Gaussian mechanism (the approximations the book compares against).

One DP-SGD step is the pair :math:`P = \mathcal N(0,\sigma^2)`,
:math:`Q = (1-q)\mathcal N(0,\sigma^2) + q\mathcal N(1,\sigma^2)`. In the standard variable
:math:`u = t/\sigma`, with :math:`\mu = 1/\sigma`, its privacy loss is

.. math:: \ell(u) = \log\big(1 - q + q\,e^{\mu u - \mu^2/2}\big).

* :func:`kl` - :math:`\mathrm{KL}(Q\|P)` or :math:`\mathrm{KL}(P\|Q)` by quadrature of a non-negative
  integrand (no cancellation, so tiny values keep their relative accuracy);
* :func:`pinsker_bound` - Mahloujifar et al., Eq. 5;
* :func:`rdp` - Rényi divergence at any order :math:`\alpha > 1` (Mironov, Talwar & Zhang 2019);
* :func:`epsilon_rdp` - :math:`\varepsilon(\delta)` from RDP (Balle et al. 2020 or Mironov 2017).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import integrate, special

from .. import _checks
from ._setting import _check_schedule

__all__ = ["privacy_loss", "kl", "pinsker_bound", "rdp", "epsilon_rdp", "epsilon_rdp_certified", "OPACUS_ORDERS"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

#: Opacus' default RDP orders.
OPACUS_ORDERS = tuple([1.0 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))


def _qs(q, sigma, *, q_lo_open=False):
    return (_checks.scalar("q", q, lo=0.0, hi=1.0, lo_open=q_lo_open),
            _checks.scalar("sigma", sigma, lo=0.0, lo_open=True))


def privacy_loss(t, q, sigma):
    r"""Privacy loss :math:`\log(dQ/dP)(t) = \log(1 - q + q\,e^{(2t - 1)/(2\sigma^2)})` of one SGM step,
    overflow-free."""
    tt = _checks.real("t", t)
    qq, ss = _qs(q, sigma)
    return _checks.scalar_or_array(_privacy_loss(np.asarray(tt, float), qq, ss), t)


def _privacy_loss(t, qq, ss):
    """:func:`privacy_loss` of checked arguments, as an array."""
    z = (2.0 * t - 1.0) / (2.0 * ss * ss)
    with np.errstate(divide="ignore"):
        if qq >= 1.0:
            out = z
        elif qq == 0.0:
            out = np.zeros_like(z)
        else:
            # log1p(q expm1(z)) where accurate (|z| small), logaddexp otherwise
            small = np.abs(z) < 1.0
            out = np.where(small, np.log1p(qq * np.expm1(np.where(small, z, 0.0))),
                           np.logaddexp(math.log1p(-qq), math.log(qq) + z))
    return out


def _u_grid(mu, right=0.0, step=0.005, max_points=2_000_001):
    """Grid in u = t / sigma covering both mixture components (and ``right``) by 40 standard units."""
    lo, hi = -40.0, max(mu, right) + 40.0
    if not hi <= 1e7:
        raise ValueError(f"sigma = {1.0 / mu:g} is too small for the quadrature in u (it needs mu = 1/sigma and "
                         f"the order times mu at most 1e7)")
    n = int(min(max_points, math.ceil((hi - lo) / step) + 1))
    n += (n + 1) % 2                                   # odd, for Simpson's rule
    return np.linspace(lo, hi, n)


def _phi(u):
    return np.exp(-0.5 * u * u - _LOG_SQRT_2PI)


def kl(q, sigma, *, direction="QP"):
    r"""One-step KL divergence of the SGM by quadrature.

    ``"QP"``: :math:`\mathrm{KL}(Q\|P) = \mathbb E_P[(1+w)\log(1+w) - w]`, ``"PQ"``:
    :math:`\mathrm{KL}(P\|Q) = \mathbb E_P[w - \log(1+w)]`, with :math:`w = q(e^{\mu u-\mu^2/2}-1)` and
    :math:`\mathbb E_P w = 0` (both integrands are non-negative: no cancellation). ``"QP"`` is the
    limit :math:`\alpha\to1` of Opacus' RDP direction. Simpson's rule in :math:`u`, step 0.005 over
    :math:`[-40, \mu + 40]`. ``q`` in [0, 1], ``sigma`` > 0.
    """
    qq, ss = _qs(q, sigma)
    if direction not in ("QP", "PQ"):
        raise ValueError(f"direction must be 'QP' or 'PQ', got {direction!r}")
    return _kl(qq, ss, direction)


@lru_cache(maxsize=256)
def _kl(q, sigma, direction):
    if q == 0.0:
        return 0.0
    mu = 1.0 / sigma
    u = _u_grid(mu)
    z = mu * u - 0.5 * mu * mu
    p = _phi(u)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        w = q * np.expm1(np.minimum(z, 700.0))
        ell = _privacy_loss(u * sigma, q, sigma)
        small = np.abs(w) < 1e-3
        if direction == "QP":
            # p [(1+w) log(1+w) - w]; (1+w) p = (1-q) phi(u) + q phi(u - mu) (no overflow)
            qd = (1.0 - q) * p + q * _phi(u - mu)
            big = qd * ell - q * (_phi(u - mu) - p)
            ser = p * w * w * (0.5 - w / 6.0 + w * w / 12.0)
        else:
            big = p * (w - ell)
            ser = p * w * w * (0.5 - w / 3.0 + w * w / 4.0)
        f = np.where(small, ser, big)
    f = np.maximum(np.nan_to_num(f, nan=0.0, posinf=0.0), 0.0)
    return float(max(integrate.simpson(f, x=u), 0.0))


def pinsker_bound(q, sigma, steps, *, direction="QP"):
    r"""Pinsker's bound on the advantage: :math:`\min\{1, \sqrt{T\,\mathrm{KL}/2}\}` (Mahloujifar et al., Eq. 5)."""
    qq, ss = _qs(q, sigma)
    tt = _checks.integer("steps", steps, lo=0)
    return float(min(1.0, math.sqrt(tt * kl(qq, ss, direction=direction) / 2.0)))


def rdp(q, sigma, alpha):
    r"""Rényi divergence :math:`D_\alpha(Q\|P)` of one SGM step (Mironov, Talwar & Zhang 2019).

    Integer :math:`\alpha \le 256`: the binomial expansion
    :math:`\frac{1}{\alpha-1}\log\sum_k\binom{\alpha}{k}(1-q)^{\alpha-k}q^k e^{(k^2-k)/(2\sigma^2)}`.
    Other orders: :math:`\frac1{\alpha-1}\log\int \varphi(u)\,e^{\alpha\ell(u)}\,du` by Simpson's rule in
    log space on a grid that covers the integrand's peak near :math:`u = \alpha\mu` (a fixed window
    would truncate it for small :math:`\sigma`), *not* the absolute-value series dp-accounting uses,
    which overstates it. ``alpha`` > 1 (scalar or array), ``q`` in [0, 1], ``sigma`` > 0.
    """
    qq, ss = _qs(q, sigma)
    a = np.atleast_1d(_checks.real("alpha", alpha, lo=1.0, lo_open=True, hi=1e6))
    out = _rdp(qq, ss, a)
    return float(out[0]) if np.ndim(alpha) == 0 else out


#: log k! for k = 0 ... 256 (the binomial expansion's integer orders)
_LOG_FACT = special.gammaln(np.arange(257, dtype=float) + 1.0)


def _rdp(qq, ss, a, width=None):
    """:func:`rdp` of checked arguments at the orders ``a`` (a 1-d array). ``width``: the integer orders' rows
    hold the terms k = 0 ... ``width`` (default the largest order): each row's value depends on its own order and
    that width only, so a subset of the orders at ``width`` 256 gives the bits of the full set."""
    out = np.empty(a.size)
    mu = 1.0 / ss
    integral = (a == np.floor(a)) & (a <= 256)
    if 0.0 < qq < 1.0 and integral.any():
        # all integer orders at once: row i holds the binomial terms of order al_i (k > al_i masked)
        al = a[integral][:, None]
        k = np.arange(max(int(al.max()), width or 0) + 1)[None, :]
        ai = al.astype(np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            # (log-factorials from one table: the same values as gammaln on the matrix, without its cost)
            logc = _LOG_FACT[ai] - _LOG_FACT[k] - _LOG_FACT[np.maximum(ai - k, 0)]
            terms = logc + (al - k) * math.log1p(-qq) + k * math.log(qq) + (k * k - k) * mu * mu / 2.0
        terms = np.where(k <= al, terms, -np.inf)
        mx = terms.max(axis=1, keepdims=True)
        out[integral] = (mx[:, 0] + np.log(np.exp(terms - mx).sum(axis=1))) / (al[:, 0] - 1)
    for i, al in enumerate(a):
        if qq == 0.0:
            out[i] = 0.0
        elif qq >= 1.0:                    # the Gaussian mechanism: D_alpha = alpha / (2 sigma^2)
            out[i] = al * mu * mu / 2.0
        elif integral[i]:
            continue
        else:
            u = _u_grid(mu, right=al * mu, step=0.005)
            ell = _privacy_loss(u * ss, qq, ss)
            g = -0.5 * u * u - _LOG_SQRT_2PI + al * ell
            mx = float(g.max())
            val = integrate.simpson(np.exp(g - mx), x=u)
            out[i] = max((mx + math.log(val)) / (al - 1), 0.0)
    return out


def epsilon_rdp(q, sigma, steps, delta, *, orders=OPACUS_ORDERS, conversion="balle2020"):
    r""":math:`\varepsilon(\delta)` from RDP accounting, minimised over ``orders``. Returns ``(eps, best_order)``.

    ``"balle2020"`` (Balle et al. 2020, Opacus' current default):
    :math:`\varepsilon = T D_\alpha + \log((\alpha-1)/\alpha) - (\log\delta + \log\alpha)/(\alpha-1)`;
    ``"classic"`` (Mironov 2017): :math:`T D_\alpha + \log(1/\delta)/(\alpha-1)`. Both are upper
    bounds on the tight :math:`\varepsilon` for the add direction :math:`D_\alpha(Q\|P)`, which
    dominates the remove direction for the subsampled Gaussian (Mironov et al. 2019, Thm. 5).
    """
    qq, ss = _qs(q, sigma)
    tt = _checks.integer("steps", steps, lo=0)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    a = np.atleast_1d(_checks.real("orders", np.asarray(orders, float), lo=1.0, lo_open=True, hi=1e6))
    if conversion not in ("balle2020", "classic"):
        raise ValueError(f"conversion must be 'balle2020' or 'classic', got {conversion!r}")
    return _best_epsilon(tt * _rdp(qq, ss, a), a, d, conversion)


def _best_epsilon(r, a, d, conversion="balle2020"):
    """(eps, order): the conversion of the RDP curve ``r`` at orders ``a`` to eps(delta), minimised."""
    if conversion == "balle2020":
        eps = r + np.log((a - 1) / a) - (math.log(d) + np.log(a)) / (a - 1)
    else:
        eps = r + math.log(1 / d) / (a - 1)
    i = int(np.argmin(eps))
    return float(max(eps[i], 0.0)), float(a[i])


#: Integer orders with closed-form RDP, and the fine grid of orders between them that
#: :func:`epsilon_rdp_certified` bounds by convexity.
_INT_ORDERS = np.arange(2, 257, dtype=float)
_FINE_ORDERS = np.round(np.arange(1.05, 256.0001, 0.05), 10)


def _rdp_chord(r_int, a):
    r"""Upper bound on :math:`D_\alpha` at any orders ``a`` in (1, 256] from the values ``r_int`` at 2, …, 256.

    :math:`(\alpha - 1) D_\alpha` is convex in :math:`\alpha` (van Erven & Harremoës 2014, Thm. 11) and
    0 at :math:`\alpha = 1`, so it lies below its chords between consecutive integer orders."""
    k = np.concatenate([[1.0], _INT_ORDERS])
    g = np.concatenate([[0.0], (_INT_ORDERS - 1.0) * r_int])
    j = np.clip(np.searchsorted(k, a, side="left"), 1, k.size - 1)       # k[j-1] < a <= k[j]
    w = (a - k[j - 1]) / (k[j] - k[j - 1])
    chord = (1.0 - w) * g[j - 1] + w * g[j]
    return chord / (a - 1.0) * (1.0 + 1e-12)                              # rounded up


def epsilon_rdp_certified(schedule, delta):
    r""":math:`\varepsilon(\delta)` from RDP for ``[(q_i, sigma_i, T_i), ...]``, safe at every order used.

    Rényi divergences add over the stages (:math:`\sum_i T_i D_\alpha(q_i,\sigma_i)`); the integer orders
    2…256 use the closed form, the orders between them (step 0.05, from 1.05) a convexity bound
    (a chord bound), so no quadrature enters; then Balle et al.'s (2020) conversion. An upper
    bound on the tight :math:`\varepsilon` (the add direction dominates for the subsampled Gaussian).
    Returns ``(eps, best_order)``."""
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    return _epsilon_rdp_certified(_check_schedule(schedule), d)


#: Integer orders above :data:`_LOW_TOP` at which :func:`_epsilon_rdp_certified` bounds the conversion from below
_LB_ORDERS = np.array([40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256], dtype=float)
_LOW_TOP = 32


def _epsilon_rdp_certified(runs, d):
    r""":func:`epsilon_rdp_certified` for checked stages (:class:`~._setting.Run`); ``(0, inf)`` for none.

    The orders up to :data:`_LOW_TOP` are computed first (their values are the full computation's bits). Above it,
    on each piece :math:`(a, b]` of :data:`_LB_ORDERS`, every order's computed :math:`D_\alpha` is at least the
    true one (rounded closed forms; chords above a convex function), so at least :math:`D_a` (Rényi divergences
    grow with the order), and its conversion :math:`T D_\alpha + \ln(1 - 1/\alpha) - (\ln\delta + \ln\alpha) /
    (\alpha - 1)` at least :math:`T D_a + \ln(1 - 1/a) - \ln\delta / (b - 1) - \ln a / (a - 1)`. Where the
    smallest of these (less a 1e-9 relative margin for rounding) is above the low orders' best, that best is the
    answer of the full set of orders (same order, same bits); otherwise all orders are computed.
    """
    if not runs:
        return 0.0, math.inf
    low = _INT_ORDERS <= _LOW_TOP
    a_lb = np.concatenate([[float(_LOW_TOP)], _LB_ORDERS])
    r_lb = np.zeros(a_lb.size)
    r_low = np.zeros(int(low.sum()))
    for run in runs:
        r = _rdp(run.q, run.sigma, np.concatenate([_INT_ORDERS[low], _LB_ORDERS]), width=int(_INT_ORDERS[-1]))
        r_low = r_low + run.steps * r[:r_low.size]
        r_lb = r_lb + run.steps * np.concatenate([[r[r_low.size - 1]], r[r_low.size:]])
    fine = _FINE_ORDERS[_FINE_ORDERS <= _LOW_TOP]
    r_int = np.concatenate([r_low, np.full(_INT_ORDERS.size - r_low.size, np.inf)])
    a = np.concatenate([_INT_ORDERS[low], fine])
    best = _best_epsilon(np.concatenate([r_low, _rdp_chord(r_int, fine)]), a, d)
    lo_a, hi_a = a_lb[:-1], a_lb[1:]
    with np.errstate(over="ignore", invalid="ignore"):
        lb = r_lb[:-1] * (1.0 - 1e-9) + np.log1p(-1.0 / lo_a) - math.log(d) / (hi_a - 1.0) - np.log(lo_a) / (lo_a - 1.0)
    above = float(np.min(lb))
    if above - 1e-9 * abs(above) - 1e-12 > best[0] * (1.0 + 1e-12) + 1e-300:
        return best
    r_int = np.zeros(_INT_ORDERS.size)
    for run in runs:
        r_int = r_int + run.steps * _rdp(run.q, run.sigma, _INT_ORDERS)
    a = np.concatenate([_INT_ORDERS, _FINE_ORDERS])
    return _best_epsilon(np.concatenate([r_int, _rdp_chord(r_int, _FINE_ORDERS)]), a, d)


def _log_delta_rdp(run, eps):
    r"""Log of Rényi accounting's :math:`\delta(\varepsilon)` for an add/remove run (Balle et al. 2020's conversion
    solved for :math:`\delta`, minimised over the integer orders 2…256):
    :math:`\ln\delta = (\alpha - 1)(T D_\alpha - \varepsilon + \ln(1 - 1/\alpha)) - \ln\alpha`. An upper bound,
    used to tell a far tail (below what a plain composition resolves) cheaply."""
    a = _INT_ORDERS
    with np.errstate(over="ignore", invalid="ignore"):
        ld = (a - 1.0) * (run.steps * _rdp(run.q, run.sigma, a) - eps + np.log1p(-1.0 / a)) - np.log(a)
    ld = ld[np.isfinite(ld)]
    return float(np.min(ld)) if ld.size else 0.0


def _tilted_step(q, sigma, lam, symmetric=False):
    r"""``(K, m, v, k3)`` of one add/remove step's privacy loss :math:`L` under the mixture :math:`Q` (the Gaussian
    :math:`\varphi_\sigma` is the base measure of the quadrature below), tilted by
    ``lam``: :math:`K(\lambda) = \ln\mathbb E_Q[e^{\lambda L}] = (\alpha - 1)D_\alpha` at :math:`\alpha = 1 + \lambda`,
    and the tilted law's mean :math:`K'`, variance :math:`K''` and third central moment :math:`K'''`. The tilted density
    :math:`\varphi_\sigma(x)\,e^{(1+\lambda)L(x)}` has its unsampled part near 0 and its sampled one near
    :math:`1 + \lambda`: a Riemann sum over both, 12 sigma either side, at most 100001 points. ``symmetric``: the
    replace-one pair instead, :math:`L = \ln(Q_R/P_R)` with :math:`Q_R = (1-q)\mathcal N(0,\sigma^2) +
    q\mathcal N(1,\sigma^2)` and :math:`P_R` the same with :math:`\mathcal N(-1,\sigma^2)`, tilted under :math:`Q_R`."""
    lo, hi = -12.0 * sigma - (1.0 if symmetric else 0.0), 2.0 + lam + 12.0 * sigma
    x = np.linspace(lo, hi, int(min(max((hi - lo) * 100.0 / sigma, 4001.0), 100_001.0)))
    ell = _privacy_loss(x, q, sigma)
    if symmetric:
        # Q_R / phi_sigma = e^{ell(x)} and P_R / phi_sigma = e^{ell(-x)}: L = ell(x) - ell(-x), weight Q_R e^{lam L}
        loss = ell - _privacy_loss(-x, q, sigma)
        lw = -x * x / (2.0 * sigma * sigma) + ell + lam * loss
        ell = loss
    else:
        lw = -x * x / (2.0 * sigma * sigma) + (1.0 + lam) * ell
    mx = float(np.max(lw))
    w = np.exp(lw - mx)
    tot = float(np.sum(w))
    m = float(np.sum(w * ell)) / tot
    d = ell - m
    v = float(np.sum(w * d * d)) / tot
    k3 = float(np.sum(w * d * d * d)) / tot
    return mx + math.log(tot * (x[1] - x[0])) - _LOG_SQRT_2PI - math.log(sigma), m, v, k3


#: The tilted delta read-out's relative width is about this times :math:`T(\lambda h)^2` (its grid pairs' error is
#: second order in the step, each step's weighed by the tilt): measured 0.11 to 0.24 on far tails at q = 1e-3 ... 0.01,
#: sigma 1 to 5, T = 100 ... 1e6, delta 1e-10 ... 1e-300. It sets the first pass's step where the saddle-point
#: estimate gives the tilt (delta and eps read-outs).
_WIDTH = 0.25


def _saddle_log_delta(run, eps, max_skew=1.0, with_tilt=False):
    r"""Log of the saddle-point estimate of a Poisson run's :math:`\delta(\varepsilon)` (add direction; replace-one:
    its symmetric pair), or ``None`` where it is not to be trusted. An estimate, not a bound: it sizes the far-tail
    read-outs' grids.

    With :math:`\lambda` at the saddle point, :math:`T K'(\lambda) = \varepsilon` (:func:`_tilted_step`), the tilted
    :math:`T`-step loss has mean :math:`\varepsilon` and standard deviation :math:`s = \sqrt{T K''(\lambda)}`, and

    .. math:: \delta(\varepsilon) = e^{T K(\lambda) - \lambda\varepsilon}\,
        \mathbb E_\lambda\big[e^{-\lambda(L - \varepsilon)}(1 - e^{\varepsilon - L})_+\big]
        \approx e^{T K(\lambda) - \lambda\varepsilon}\,\tfrac12\big[\mathrm{erfcx}(\lambda s/\sqrt2)
        - \mathrm{erfcx}((\lambda + 1)s/\sqrt2)\big]

    (the tilted loss taken as normal). Where few sampled steps set the tail, the tilted loss is a sum of rare large
    jumps, far from normal, and the estimate is wrong by many decades (1e7 to 1e180 too high at sigma 2 to 5): it is
    given up where the tilted sum's skewness :math:`T K'''/(T K'')^{3/2}` exceeds ``max_skew`` (measured: within a
    factor 25 of the true value at skewness up to 0.91, above 1e7 from 1.24 on), and where :math:`\varepsilon` is at
    or below the mean :math:`T K'(0)` (no far tail). With ``with_tilt``: ``(log delta, lambda)``."""
    q, sigma, steps = run
    sym = run.symmetric
    if run.sampler != "poisson" or not 0.0 < q < 1.0 or not steps >= 1:
        return None
    target = eps / steps
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        if not _tilted_step(q, sigma, 0.0, sym)[1] < target:
            return None
        lo, hi = 0.0, 1.0
        while _tilted_step(q, sigma, hi, sym)[1] < target:
            lo, hi = hi, 2.0 * hi
            if hi > 1e5:
                return None
        for _ in range(80):                  # bisection on the increasing mean, geometric once off 0
            mid = 0.5 * hi if lo == 0.0 else math.sqrt(lo * hi)
            lo, hi = (mid, hi) if _tilted_step(q, sigma, mid, sym)[1] < target else (lo, mid)
            if hi - lo <= 1e-6 * hi:
                break
        lam = 0.5 * (lo + hi)
        got = _saddle_at(run, lam, max_skew)
    if got is None:
        return None
    log_d = steps * got[2] - lam * eps + got[3]
    return (log_d, lam) if with_tilt else log_d


def _saddle_at(run, lam, max_skew):
    """``(eps, log delta, K, log tail)`` of :func:`_saddle_log_delta` at the tilt ``lam`` (eps the tilted mean of the
    T steps, log delta at that eps), or ``None`` where the tilted sum's skewness exceeds ``max_skew``."""
    q, sigma, steps = run
    k, m, v, k3 = _tilted_step(q, sigma, lam, run.symmetric)
    s = math.sqrt(steps * v)
    if not (s > 0.0 and math.isfinite(k) and steps * k3 <= max_skew * s ** 3):
        return None
    tail = 0.5 * (special.erfcx(lam * s / math.sqrt(2.0)) - special.erfcx((lam + 1.0) * s / math.sqrt(2.0)))
    if not tail > 0.0:
        return None
    eps = steps * m
    return eps, steps * k - lam * eps + math.log(tail), k, math.log(tail)


def _saddle_epsilon(run, delta, max_skew=1.0):
    r"""The eps at which the saddle-point estimate (:func:`_saddle_log_delta`; replace-one too, with its symmetric
    pair) gives ``delta``, or ``None`` where it is not to be trusted: the estimate falls as the tilt grows, so
    bisection on the tilt, geometric. An estimate, not a bound: it centres the far-tail eps read-out's first tilt."""
    q, sigma, steps = run
    if run.sampler != "poisson" or not 0.0 < q < 1.0 or not steps >= 1 or not 0.0 < delta < 1e-8:
        return None
    target = math.log(delta)
    lo, hi = 1e-3, 1.0
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        while True:
            got = _saddle_at(run, hi, math.inf)
            if got is None or got[1] <= target:
                break
            lo, hi = hi, 2.0 * hi
            if hi > 1e5:
                return None
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            got = _saddle_at(run, mid, math.inf)
            lo, hi = (mid, hi) if got is not None and got[1] > target else (lo, mid)
            if hi - lo <= 1e-7 * hi:
                break
        got = _saddle_at(run, hi, max_skew)
    return None if got is None else got[0]


def _epsilon_rdp_replace_one(run, d):
    r"""Rényi accounting's :math:`\varepsilon(\delta)` for a replace-one Poisson run: an upper bound, from the
    add/remove divergences. The replace-one pair
    :math:`Q_R = (1-q)\mathcal N(0,\sigma^2) + q\mathcal N(1,\sigma^2)`,
    :math:`P_R = (1-q)\mathcal N(0,\sigma^2) + q\mathcal N(-1,\sigma^2)` has
    :math:`P_R \ge (1-q)\mathcal N(0,\sigma^2)`, so for :math:`\alpha > 1` (where :math:`P_R^{1-\alpha}` falls as
    :math:`P_R` grows)

    .. math:: D_\alpha(Q_R\|P_R) \le D_\alpha(Q_R\|\mathcal N(0,\sigma^2)) + \ln\frac{1}{1-q},

    the add/remove divergence of :func:`rdp` plus a constant (the pair is symmetric: the other direction is the same).
    :math:`T` steps add; the orders and the conversion are :func:`epsilon_rdp_certified`'s (the chords between integer
    orders hold as :math:`(\alpha - 1)(D_\alpha + c)` stays convex and 0 at 1). Loose by about :math:`T\ln(1/(1-q))`
    where the tilted read-outs are tight; finite where they cannot bound a far tail at all."""
    q, sigma, steps = run
    if not 0.0 < q < 1.0 or run.sampler != "poisson":
        return math.inf
    shift = steps * -math.log1p(-q) * (1.0 + 1e-12) + 1e-300
    r_int = steps * _rdp_int(q, sigma) + shift
    a = np.concatenate([_INT_ORDERS, _FINE_ORDERS])
    with np.errstate(over="ignore", invalid="ignore"):
        out = _best_epsilon(np.concatenate([r_int, _rdp_chord(r_int, _FINE_ORDERS)]), a, d)[0]
    return out if out == out else math.inf


@lru_cache(maxsize=64)
def _rdp_int(q, sigma):
    """:func:`_rdp` at the integer orders 2 ... 256 (read-only: shared by the calls it is cached for)."""
    out = _rdp(q, sigma, _INT_ORDERS)
    out.flags.writeable = False
    return out


def _rdp_cap_replace_one(run, d, lo, hi):
    """``hi`` capped by :func:`_epsilon_rdp_replace_one` (both certified upper ends: a cap below ``lo`` is a bug)."""
    cap = _epsilon_rdp_replace_one(run, d)
    if not lo <= cap:
        raise AssertionError(f"replace-one Renyi bound {cap!r} below the lower end {lo!r} at {run}, delta {d!r}")
    return min(hi, cap)
