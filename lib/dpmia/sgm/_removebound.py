r"""A certified upper bound on the remove direction's privacy profile of an add/remove Poisson run, by Chernoff's
bound on the exact log-MGF of one step's remove privacy loss (an integral bounded from above below tangents of a
concave integrand): the far-tail read-outs (:mod:`._fartail`, :mod:`._splitread`) let it stand for that direction
where it is already below the value sought."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

#: Unit roundoff of a double.
_U = np.finfo(float).eps / 2.0

#: The tilts of the remove direction's Chernoff bound (:func:`_remove_log_mgfs`): to 1e8, three a decade above 1e5
#: (at sigma = 100 and q = 1e-4 a far tail's slope is near 1e6).
_CH_LAMS = np.concatenate([np.geomspace(1e-3, 1e5, 97), np.geomspace(1e5, 1e8, 10)[1:]])


@lru_cache(maxsize=16)
def _remove_log_mgfs(q, sigma):
    r"""Upper bounds on :math:`K(\lambda) = \ln \mathbb E_P[(P/Q)^\lambda]` of one step's remove direction
    (:math:`P = \mathcal N(0, \sigma^2)`, :math:`Q = (1-q)P + q\,\mathcal N(1, \sigma^2)`) at each tilt of ``_CH_LAMS``.

    :math:`K(\lambda) = \ln\int e^{g}`, :math:`g(x) = \ln\varphi_\sigma(x) - \lambda\ln r(x)` with
    :math:`r = Q/P = 1 - q + q e^{(2x-1)/(2\sigma^2)}`. :math:`\ln r` is a log-sum-exp of affine functions (convex),
    so :math:`g` is concave, with :math:`g' = -(x + \lambda w)/\sigma^2`,
    :math:`w = q e^{(2x-1)/(2\sigma^2)}/r \in (0,1)`, and :math:`g'' = -1/\sigma^2 - \lambda w(1-w)/\sigma^4`: its
    mode :math:`x^*` solves :math:`x + \lambda w(x) = 0` in :math:`(-\lambda, 0)`. A concave :math:`g` lies below its
    tangent at every point, so on each cell of a grid :math:`e^g` is at most the exponential of the smaller of the
    two end tangents (integrated in closed form, split where they cross: second order in the cell width), and
    beyond the grid's ends at most :math:`e^{g(a)}/g'(a)` and :math:`e^{g(b)}/|g'(b)|`. The grid:
    :math:`x^* \pm 12\sigma` (beyond it :math:`g'' \le -1/\sigma^2` leaves :math:`e^{-72}` of the peak) in steps of
    1/200 of the width :math:`1/\sqrt{-g''(x^*)}` at the mode (the bound's excess is then about 1e-6 in :math:`K`).
    A margin of :math:`64u(1 + \max|g|)` plus :math:`8u` per term covers the float error of the terms and their sum.
    """
    s2 = sigma * sigma
    modes = _modes(q, sigma, _CH_LAMS)
    out = np.empty(_CH_LAMS.size)
    for i, (lam, lo) in enumerate(zip(_CH_LAMS, modes)):
        z = math.log(q) + (2.0 * lo - 1.0) / (2.0 * s2)
        w = math.exp(z - np.logaddexp(math.log1p(-q), z))
        width = 1.0 / math.sqrt(1.0 / s2 + lam * w * (1.0 - w) / (s2 * s2))
        n = int(min(max(math.ceil(24.0 * sigma / (0.005 * width)), 3000), 1_000_000))
        x = np.linspace(lo - 12.0 * sigma, lo + 12.0 * sigma, n + 1)
        v = _log_int_below_tangents(*_log_integrand(x, q, sigma, lam))
        out[i] = v if v == v else math.inf           # (NaN from an overflow: no bound at this tilt)
    return out


def _modes(q, sigma, lams):
    """The modes :math:`x^*` of :func:`_remove_log_mgfs`'s integrands at the tilts ``lams``: bisection on the
    increasing :math:`x + \\lambda w(x)` over :math:`[-\\lambda - 1, 0]` (any point gives a valid grid)."""
    lq, l1q, s2 = math.log(q), math.log1p(-q), sigma * sigma
    lo, hi = -lams - 1.0, np.zeros(lams.size)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        z = lq + (2.0 * mid - 1.0) / (2.0 * s2)
        up = mid + lams * np.exp(z - np.logaddexp(l1q, z)) > 0.0
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    return lo


def _log_integrand(x, q, sigma, lam):
    """``(x, g, g')`` of :func:`_remove_log_mgfs` at the points ``x`` (rows of tilts ``lam`` broadcast)."""
    s2 = sigma * sigma
    z = math.log(q) + (2.0 * x - 1.0) / (2.0 * s2)
    lr = np.logaddexp(math.log1p(-q), z)
    g = -x * x / (2.0 * s2) - 0.5 * math.log(2.0 * math.pi * s2) - lam * lr
    return x, g, -(x + lam * np.exp(z - lr)) / s2


def _log_int_below_tangents(x, g, dg):
    """The log of the integral bound of :func:`_remove_log_mgfs` from ``g`` and ``g'`` on the grid ``x`` (along the
    last axis: one value per row)."""
    a, b = x[..., :-1], x[..., 1:]
    ga, gb, da, db = g[..., :-1], g[..., 1:], dg[..., :-1], dg[..., 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        c = (gb - ga - db * b + da * a) / (da - db)
    c = np.where(np.isfinite(c), np.clip(c, a, b), 0.5 * (a + b))   # (any split point gives a bound)
    l1, l2 = c - a, b - c
    with np.errstate(divide="ignore", invalid="ignore"):
        ends = [g[..., :1] - np.log(np.where(dg[..., :1] > 0.0, dg[..., :1], np.nan)),
                g[..., -1:] - np.log(np.where(dg[..., -1:] < 0.0, -dg[..., -1:], np.nan))]
        terms = np.concatenate([ga + np.log(l1) + _log_exprel(da * l1), gb + np.log(l2) + _log_exprel(-db * l2)]
                               + ends, axis=-1)
        # (a grid end on the wrong side of the mode, or an overflow: no bound at this tilt)
        terms = np.where(np.isnan(terms) & np.isfinite(g[..., :1]), np.inf, terms)
        mx = np.max(terms, axis=-1, keepdims=True)
        out = (mx[..., 0] + np.log(np.sum(np.exp(terms - mx), axis=-1))
               + 64.0 * _U * (1.0 + np.max(np.abs(g), axis=-1)) + 8.0 * _U * terms.shape[-1])
    return float(out) if out.ndim == 0 else out


def _log_exprel(v):
    """:math:`\\ln((e^v - 1)/v)`, and above v = 50 its upper bound :math:`v - \\ln v` (no overflow)."""
    big = v > 50.0
    return np.where(big, v - np.log(np.where(big, v, 1.0)), np.log(special.exprel(np.minimum(v, 50.0))))


def _remove_chernoff(run):
    r"""A certified upper bound on the remove direction's :math:`\delta_T(\varepsilon)` of an add/remove Poisson run,
    as a function of :math:`\varepsilon`: :math:`\delta = \mathbb E_{P^T}[(1 - e^{\varepsilon - L})_+]` with
    :math:`L = \sum_t \ln(P/Q)`, and :math:`(1 - e^{-t})_+ \le c_\lambda e^{\lambda t}` with
    :math:`c_\lambda = \max_{t \ge 0}(1 - e^{-t})e^{-\lambda t} = (\lambda/(1+\lambda))^\lambda/(1+\lambda)`, so
    :math:`\delta \le \min_\lambda c_\lambda\,e^{T K(\lambda) - \lambda\varepsilon}` (Chernoff; :math:`K` from
    :func:`_remove_log_mgfs`). The remove pairs, reflected from the add pairs, lose the far tail of that direction
    (it sits at the add pair's lowest losses, below values near 1), so that their tilted read-outs stall near
    1e-42 at q = 0.9; this bound is far below it wherever the add direction sets delta."""
    q, sigma, steps = run
    if not 0.0 < q < 1.0 or run.symmetric:
        return None
    lam = _CH_LAMS
    c = -lam * np.log1p(1.0 / lam) - np.log1p(lam)
    tk = steps * _remove_log_mgfs(q, sigma)
    base = c + tk
    size = np.abs(c) + np.abs(tk)

    def bound(e):
        # (each exponent within 8u of its terms' sizes: rounded up by that)
        with np.errstate(invalid="ignore"):
            v = base - lam * e + 8.0 * _U * (size + lam * abs(e)) + 1e-15
        return math.exp(min(float(np.min(np.where(np.isnan(v), math.inf, v))), 0.0)) * (1.0 + 4.0 * _U)
    return bound
