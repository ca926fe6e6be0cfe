r"""One step of the subsampled Gaussian mechanism, exactly: its privacy profile and the accountant's grid.

One DP-SGD step is, in the worst case for a target, the pair :math:`P = \mathcal N(0, \sigma^2)`,
:math:`Q = (1-q)\,\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2)`. With :math:`\mu = 1/\sigma` and
:math:`\varepsilon' = \ln(1 + (e^\varepsilon - 1)/q)`,
:math:`H_{e^\varepsilon}(Q\|P) = q\,H_{e^{\varepsilon'}}(\mathcal N(\mu,1)\|\mathcal N(0,1))` for
:math:`\varepsilon > \ln(1-q)`, and :math:`1 - e^{\varepsilon}` below. :mod:`dpmia.sgm` builds its
certified grid pairs from the arrays computed here (profile values, tail masses, cell masses and
the profile's increments, each without cancellation).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from . import _checks, gaussian
from .lossdist import MAX_FFT
from .rdp import privacy_loss
from .tvbounds import SIGMA_MIN

__all__ = ["profile", "single_step_tv", "single_step_grid"]

#: Largest single-step grid (points) the automatic grid uses.
SINGLE_MAX = 2**21


def check_args(q, sigma, steps, *, steps_lo=0):
    """Checked ``(q, sigma, steps)`` as (float, float, int): q in [0, 1], sigma in [SIGMA_MIN, 1e6], steps >= steps_lo."""
    qq = _checks.real("q", q, lo=0.0, hi=1.0)
    if not np.ndim(qq) == 0:
        raise TypeError("q must be a scalar")
    ss = _checks.real("sigma", sigma, lo=SIGMA_MIN, hi=1e6)
    tt = _checks.integer("steps", steps, lo=steps_lo, hi=10**9)
    return float(qq), float(ss), tt


def _eps_prime(e, q):
    r""":math:`\varepsilon' = \ln(1 + (e^{\varepsilon}-1)/q)` for :math:`\varepsilon > \ln(1-q)`, overflow-free."""
    e = np.asarray(e, float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = np.log1p(np.maximum(np.expm1(np.minimum(e, 30.0)) / q, -1.0))
        # (e^e - 1)/q + 1 = e^e (1 - (1-q) e^{-e}) / q
        large = e - math.log(q) + np.log1p(-(1.0 - q) * np.exp(-np.maximum(e, 30.0)))
    return np.where(e <= 30.0, small, large)


def grid_arrays(x, q, sigma):
    """Exact profile, log P(L > x) and x + log P(x_j < L <= x_{j+1}) on the grid ``x``."""
    x = np.asarray(x, float)
    mu = 1.0 / sigma
    if q >= 1.0:
        eps_p = x
        lin = np.zeros(x.shape, bool)
    else:
        lin = x <= math.log1p(-q)
        eps_p = np.where(lin, 0.0, _eps_prime(np.where(lin, 1.0, x), q))
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        # a < 1: H_a(Q||P) = 1 - a + a H_{1/a}(P||Q) = 1 - a + a delta(-ln a) (the Gaussian pair is symmetric)
        hs = np.empty_like(eps_p)
        pos = eps_p >= 0.0
        hs[pos] = np.exp(gaussian.log_delta_kernel(eps_p[pos], np.full(int(pos.sum()), mu)))
        neg = ~pos
        a = np.exp(eps_p[neg])
        hs[neg] = (1.0 - a) + a * np.exp(gaussian.log_delta_kernel(-eps_p[neg], np.full(int(neg.sum()), mu)))
        delta = np.where(lin, -np.expm1(np.minimum(x, 0.0)), q * hs)
        t_star = sigma * sigma * eps_p + 0.5                 # loss > x  <=>  t > t_star
        log_nu = np.where(lin, 0.0, special.log_ndtr(-t_star / sigma))
        d = log_nu[1:] - log_nu[:-1]                            # <= 0
        log_cell = x[:-1] + log_nu[:-1] + np.log(-np.expm1(np.minimum(d, -1e-300)))
        # Q-tail and Q(cell); the profile's increment is -(Q_j - E_j) - (e^h - 1) e^{x_j} P(L > x_{j+1})
        # with E_j = e^{x_j} P(cell_j): from cell masses, it keeps its digits where the profile is
        # flat (between the two mixture components for small sigma)
        log_r = special.log_ndtr(-(t_star - 1.0) / sigma)
        log_qbar = log_r if q >= 1.0 else np.where(lin, 0.0, np.logaddexp(math.log1p(-q) + log_nu, math.log(q) + log_r))
        dq = log_qbar[1:] - log_qbar[:-1]
        log_qc = log_qbar[:-1] + np.log(-np.expm1(np.minimum(dq, -1e-300)))
        D = np.exp(log_qc) * -np.expm1(np.minimum(log_cell - log_qc, 0.0))
        # That difference loses digits where a cell is narrow (D_j ~ h Q(cell_j)), and the atoms of
        # the grid pairs are D / (e^h - 1): there integrate instead (see _cell_excess)
        _cell_excess(D, t_star / sigma, eps_p, lin, q, sigma)
        # D_j = Q(cell) - y_j P(cell) = E_P[(Y - y_j); cell] with Y = e^L, which also bounds the gap
        # between the chord and the profile on the cell. Where x_j <= ln(1-q) it is
        # ((1-q) - y_j) P(cell) + q R(cell) (R = N(1, sigma^2)), two terms >= 0: no cancellation.
        # That keeps both pairs tight on the cell holding the P-mass piled up just above ln(1-q)
        # when sigma is small.
        # On any cell the gap is also at most E_P[(y_{j+1} - Y); cell] = (e^h - 1) E_j - D_j (Jensen:
        # it is at most D A / (D + A)); on coarse grids (small sigma, many steps) where the mass sits
        # near one end of a cell these are far below the generic (e^h - 1) E_j / 4. A margin of
        # 1e-10 Q(cell) covers the rounding of the cell masses.
        E = np.exp(np.minimum(log_cell, 0.0))
        slack = 1e-10 * np.exp(log_qc) + 1e-300
        gap = np.minimum(np.maximum(D, 0.0), np.maximum(math.expm1(x[1] - x[0]) * E - D, 0.0)) * (1.0 + 1e-12) + slack
        if q < 1.0:
            lq = math.log1p(-q)
            j = np.flatnonzero(lin[:-1])
            if j.size:
                p_cell = np.maximum(np.exp(log_nu[j]) - np.exp(log_nu[j + 1]), 0.0)
                lr = np.where(lin, 0.0, log_r)                        # R(L > x_j) = 1 at and below ln(1-q)
                r_cell = np.exp(lr[j]) * -np.expm1(np.minimum(lr[j + 1] - lr[j], 0.0))
                below = -(1.0 - q) * np.expm1(x[j] - lq)
                D[j] = np.maximum(below, 0.0) * p_cell + q * r_cell
                # upper bound: ln(1-q) is known to a few ulps
                below_up = (1.0 - q) * ((lq - x[j]) + 4.0 * abs(math.ulp(lq)))
                gap[j] = (np.maximum(below_up, 0.0) * p_cell + q * r_cell) * (1.0 + 1e-12) + 1e-300
        dv = -D - math.expm1(x[1] - x[0]) * np.exp(np.minimum(x[:-1] + log_nu[1:], 0.0))
    return np.clip(delta, 0.0, 1.0), log_nu, log_cell, dv, gap


_GL_X, _GL_W = np.polynomial.legendre.leggauss(10)


def _cell_excess(D, z, eps_p, lin, q, sigma):
    r"""Overwrite ``D[j]`` = :math:`E_P[(e^L - e^{x_j}); \text{cell}_j]` by quadrature on the narrow cells.

    On cell j (:math:`z \in [z_j, z_{j+1}]`, :math:`z = t/\sigma` the standardised output),
    :math:`e^{L} - e^{x_j} = q e^{\varepsilon'_j}\,\mathrm{expm1}((z - z_j)/\sigma)`, so
    :math:`D_j = q\,e^{\varepsilon'_j}\varphi(z_j)\int_0^{\Delta}\mathrm{expm1}(s/\sigma)\,e^{-z_j s - s^2/2}\,ds`:
    a positive integrand, no cancellation. Gauss-Legendre (10 nodes, exact to degree 19) where
    :math:`\Delta \max(1, |z|, 1/\sigma) \le 1/2` (the integrand is then a polynomial to far below
    rounding); elsewhere the difference of masses is already accurate.
    """
    j = np.flatnonzero(~lin[:-1] & ~lin[1:] & np.isfinite(z[:-1]) & np.isfinite(z[1:]))
    if j.size == 0:
        return
    z0, dz = z[j], z[j + 1] - z[j]
    ok = (dz > 0) & (dz * np.maximum.reduce([np.ones_like(z0), np.abs(z0), np.abs(z[j + 1])]) * max(1.0, 1.0 / sigma) <= 0.5)
    j, z0, dz = j[ok], z0[ok], dz[ok]
    sk = 0.5 * dz[:, None] * (1.0 + _GL_X[None, :])
    vals = np.expm1(sk / sigma) * np.exp(-z0[:, None] * sk - 0.5 * sk * sk)
    integral = 0.5 * dz * (vals @ _GL_W)
    log_pref = math.log(q) + eps_p[j] - 0.5 * z0 * z0 - 0.5 * math.log(2.0 * math.pi)
    D[j] = np.exp(log_pref) * integral


def profile(eps, q, sigma):
    r"""Exact single-step profile :math:`H_{e^\varepsilon}(Q\|P)` of the SGM, and :math:`P(L > \varepsilon)`.

    Returns ``(delta, p_tail)`` for real ``eps`` (scalar or array); ``p_tail`` is the :math:`P`-probability
    that the privacy loss exceeds ``eps`` (minus the profile's slope in :math:`e^\varepsilon`).
    Computed in log space: any real ``eps`` works.
    """
    e = _checks.real("eps", eps)
    qq, ss, _ = check_args(q, sigma, 1)
    if qq == 0.0:
        zero = np.zeros(np.shape(e))
        d = np.where(np.asarray(e) < 0, -np.expm1(np.minimum(e, 0.0)), 0.0)
        return (_checks.scalar_or_array(d, eps), _checks.scalar_or_array(np.where(np.asarray(e) < 0, 1.0, zero), eps))
    arr = np.atleast_1d(np.asarray(e, float))
    d, log_nu = grid_arrays(np.append(arr, arr[-1] + 1.0), qq, ss)[:2]
    return (_checks.scalar_or_array(d[:-1], eps), _checks.scalar_or_array(np.exp(log_nu[:-1]), eps))


def single_step_tv(q, sigma):
    r"""One step (Mahloujifar et al., Lemma 7 with :math:`a=1`): :math:`q\,(2\Phi(1/(2\sigma)) - 1)`."""
    qq, ss, _ = check_args(q, sigma, 1)
    return qq * gaussian.tv(1.0 / ss)


def loss_range(q, sigma, tail):
    """Smallest loss (log(1 - q), or where the P- and Q-mass below is < 1e-40) and the loss above
    which the single-step profile is below ``tail``."""
    mu = 1.0 / sigma
    t_min = sigma * float(special.ndtri(1e-40))
    l_min = float(privacy_loss(t_min, q, sigma))
    lo = max(math.log1p(-q), l_min) if q < 1 else l_min
    # beyond eps' = eps_hi the Gaussian profile is below tail / q: delta_G(eps') <= Phi(mu/2 - eps'/mu)
    eps_hi = mu * (0.5 * mu - float(special.ndtri(min(tail / q, 0.5))))
    hi = float(np.logaddexp(math.log1p(-q), math.log(q) + eps_hi)) if q < 1 else eps_hi
    return lo, max(hi, lo + 1e-12)


@lru_cache(maxsize=16)
def cached_grid(q, sigma, h, tail, anchor=False):
    lo, hi = loss_range(q, sigma, tail)
    if anchor and q < 1 and lo == math.log1p(-q):
        # A point just below ln(1 - q): for small sigma most of the P-mass sits within a hair above
        # it, at the left end of the first cell, where its chord gap is bounded by its own (tiny)
        # E_P[Y - y_0] (see _single_step_arrays) and costs the optimistic pair almost nothing
        x0 = lo - 4.0 * abs(math.ulp(lo))
        n = int(math.ceil((hi - x0) / h)) + 2
    else:
        j0 = math.floor(lo / h)
        x0, n = j0 * h, int(math.ceil(hi / h)) - j0 + 2
    if n > MAX_FFT:
        raise ValueError(f"the single-step grid needs {n} points at h = {h:g} (> {MAX_FFT})")
    x = x0 + h * np.arange(n)
    return (x,) + grid_arrays(x, q, sigma)


def single_step_grid(q, sigma, h, *, tail=1e-18):
    r"""The accountant's single-step loss grid ``x`` (step ``h``) with the exact profile and :math:`P(L > x)` on it.

    The grid runs from the smallest loss (:math:`\ln(1-q)`, or where the mass below is < 1e-40) to
    where the profile falls below ``tail``. Returns ``(x, delta, p_tail)``; feed them to
    :func:`dpmia.pld.from_profile`.
    """
    qq, ss, _ = check_args(q, sigma, 1)
    if qq == 0.0:
        raise ValueError("q must be in (0, 1] (q = 0 releases nothing)")
    hh = float(_checks.real("h", h, lo=1e-9, hi=1.0))
    tl = float(_checks.real("tail", tail, lo=1e-300, hi=0.1))
    x, d, log_nu = cached_grid(qq, ss, hh, tl)[:3]
    return x.copy(), d.copy(), np.exp(log_nu)
