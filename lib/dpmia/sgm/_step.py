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

from .. import _checks, gaussian
from ..pld import MAX_FFT
from ._rdp import _privacy_loss
from ._replace import replace_one_profile, replace_one_tv
from ._setting import check_neighbours, check_run

__all__ = ["profile", "single_step_tv", "single_step_grid"]

#: Largest single-step grid (points) the automatic grid uses.
_SINGLE_MAX = 2**21


def _eps_prime(e, q):
    r""":math:`\varepsilon' = \ln(1 + (e^{\varepsilon}-1)/q)` for :math:`\varepsilon > \ln(1-q)`, overflow-free."""
    e = np.asarray(e, float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = np.log1p(np.maximum(np.expm1(np.minimum(e, 30.0)) / q, -1.0))
        # (e^e - 1)/q + 1 = e^e (1 - (1-q) e^{-e}) / q
        large = e - math.log(q) + np.log1p(-(1.0 - q) * np.exp(-np.maximum(e, 30.0)))
    return np.where(e <= 30.0, small, large)


def _eps_prime_scalar(e, q):
    """:func:`_eps_prime` of one float ``e`` (finite, above ln(1 - q)), by the same ufuncs on a scalar: the same
    bits, without the array machinery (the merged anchor's fixed-point iteration calls it a few dozen times)."""
    if e <= 30.0:
        return float(np.log1p(max(np.expm1(np.float64(e)) / q, -1.0)))
    return float(e - math.log(q) + np.log1p(-(1.0 - q) * np.exp(-np.float64(e))))


def _values(x, q, sigma, tails=True):
    r"""``(profile, eps', below, t*, tails)`` at the losses ``x``: the exact profile, :math:`\varepsilon'`, whether
    :math:`x \le \ln(1-q)` (the profile is :math:`1 - e^x` there), the threshold :math:`t^*` on the output
    (:math:`L > x \iff t > t^*`) and :func:`_tail_logs` (``tails=False``: its first only, the others ``None``)."""
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
        return delta, eps_p, lin, t_star, _tail_logs(t_star, lin, q, sigma, tails)


def _value_error(x, q, sigma, delta, eps_p, log_nu):
    r"""A bound on the float error of :func:`_values`' profile at ``x``: :math:`\varepsilon'` is within
    :math:`64u(|\varepsilon'| + |x| + 1 + 1/\sigma^2)` of its value (a few roundings of terms of that size, and the
    kernel's cancellation of :math:`\Phi(-\sigma\varepsilon' \pm 1/(2\sigma))`, whose error grows as the slope,
    several times over), which moves the profile by at most its slope
    :math:`|d\delta/d\varepsilon'| = q e^{\varepsilon'} P(L > x) = (q + e^x - 1) P(L > x)` times that; the Gaussian
    kernel, the product and the exponential add a relative error below :data:`_KERNEL_REL` (measured against
    50-digit arithmetic in the tests: the whole bound is at least ten times the error found)."""
    u = np.finfo(float).eps / 2.0
    with np.errstate(over="ignore", under="ignore"):
        slope = np.abs(q + np.expm1(np.minimum(x, 700.0))) * np.exp(log_nu)
        # (and below the normal range, where the float keeps fewer digits, an absolute 1e-305)
        arg = (64.0 * u) * (np.abs(eps_p) + np.abs(x) + 1.0 + 1.0 / (sigma * sigma))
        return _KERNEL_REL * delta + slope * arg + 1e-305


#: The relative error the profile's closed form is allowed beyond its argument's share (measured below 2e-13 for
#: sigma in [0.01, 1e3], far tails included, against 50-digit arithmetic: a factor of a hundred; tested).
_KERNEL_REL = 2e-11


def _midpoint_gaps(x, q, sigma, delta, log_nu, log_cell, gap, D, eps_p=None):
    r"""``gap`` tightened by the exact profile in each cell's middle: at :math:`t = t_m` (the fraction of the cell in
    :math:`y = e^x`, about 1/2) the gap :math:`g` between the chord and the profile is :math:`m`, computed with the
    error bounds of :func:`_value_error`. On the cell :math:`g` is concave (chord minus a convex profile), 0 at both
    ends, at most :math:`tA` and :math:`(1-t)D` (the tangents at the ends, :math:`A = (e^h-1)E - D`); left of
    :math:`t_m` it is below the secant through :math:`(t_m, m)` and :math:`(1, 0)` extended, right of it below the one
    through :math:`(0, 0)` and :math:`(t_m, m)`, so

    .. math:: \max g \le \max\Big(\frac{Am}{A(1-t_m) + m},\ \frac{Dm}{m + Dt_m}\Big),

    :math:`\tfrac43` of the true gap on a cell of uniform density, where :math:`DA/(D+A)` is twice it: the dominated
    pair, lowered by these gaps, lies on average about as far below the profile as the dominating one above it (it lay
    twice as far). Cells at or below :math:`\ln(1-q)` keep their own bounds. ``eps_p``: :func:`_values`' at ``x``
    where already computed (q < 1: the same array as here)."""
    if x.size < 2:
        return gap
    h = float(x[1] - x[0])
    xm = x[:-1] + math.log1p(0.5 * math.expm1(h))
    fm, em, _, _, (lnm, _, _) = _values(xm, q, sigma, tails=False)
    tm = np.expm1(xm - x[:-1]) / math.expm1(h)
    below = x <= math.log1p(-q) if q < 1.0 else np.zeros(x.size, bool)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        if eps_p is None or q >= 1.0:
            eps_p = np.where(below, 0.0, _eps_prime(np.where(below, 1.0, x), q))
        err = _value_error(x, q, sigma, delta, eps_p, log_nu)
        err_m = _value_error(xm, q, sigma, fm, em, lnm)
        m = (delta[:-1] - fm) - tm * (delta[:-1] - delta[1:])
        u = np.finfo(float).eps / 2.0
        m = (np.maximum(m, 0.0) + err[:-1] + err_m + err[1:] + 4.0 * u * (delta[:-1] + fm)) * (1.0 + 1e-12) + 1e-300
        E = np.exp(np.minimum(log_cell, 0.0))
        width = math.expm1(h) * E
        # upper bounds on both tangents' ends: the cell masses within 1e-10 Q(cell) = 1e-10 (E + D), as in _grid_arrays
        slack = 1e-10 * (E + np.abs(D)) + 1e-300
        a = np.maximum(width - D, 0.0) + slack
        dd = np.maximum(D, 0.0) + slack
        bound = _gap_from_middle(m, tm, a, dd)
    ok = ~below[:-1] & np.isfinite(bound)
    return np.where(ok, np.minimum(gap, bound), gap)


def _gap_from_middle(m, tm, a, d):
    r"""The bound of :func:`_midpoint_gaps` on a cell's chord gap from upper bounds ``m`` on the gap at the fraction
    ``tm`` of the cell and ``a``, ``d`` on the tangents' ends (rounded up; ``nan`` where undefined). As
    :math:`m / ((1 - t_m) + m/A)`: in far tails (values near 1e-160) the products :math:`Am` leave the normal range."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        return np.maximum(m / ((1.0 - tm) + m / a), m / (m / d + tm)) * (1.0 + 1e-12)


def _grid_arrays(x, q, sigma):
    """Exact profile, log P(L > x), x + log P(x_j < L <= x_{j+1}), the profile's increments, the chord gaps' bounds,
    :math:`D_j = Q(\text{cell}_j) - e^{x_j} P(\text{cell}_j)` (without cancellation) and :math:`\varepsilon'` on the
    grid ``x``."""
    x = np.asarray(x, float)
    delta, eps_p, lin, t_star, (log_nu, log_r, log_qbar) = _values(x, q, sigma)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        d = log_nu[1:] - log_nu[:-1]                            # <= 0
        log_cell = x[:-1] + log_nu[:-1] + np.log(-np.expm1(np.minimum(d, -1e-300)))
        # Q-tail and Q(cell); the profile's increment is -(Q_j - E_j) - (e^h - 1) e^{x_j} P(L > x_{j+1})
        # with E_j = e^{x_j} P(cell_j): from cell masses, it keeps its digits where the profile is
        # flat (between the two mixture components for small sigma)
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
    return np.clip(delta, 0.0, 1.0), log_nu, log_cell, dv, gap, D, eps_p


def _tail_logs(t_star, lin, q, sigma, full=True):
    r"""``(log P(L > x), log R(L > x), log Q(L > x))`` from :math:`t^*` (:math:`L > x \iff t > t^*`),
    with :math:`R = \mathcal N(1, \sigma^2)`; where ``lin`` (x at or below ln(1 - q)) the first and last are 0.
    ``full=False``: the first only (the others ``None``)."""
    log_nu = np.where(lin, 0.0, special.log_ndtr(-t_star / sigma))
    if not full:
        return log_nu, None, None
    log_r = special.log_ndtr(-(t_star - 1.0) / sigma)
    log_qbar = log_r if q >= 1.0 else np.where(lin, 0.0, np.logaddexp(math.log1p(-q) + log_nu, math.log(q) + log_r))
    return log_nu, log_r, log_qbar


_GL = [np.polynomial.legendre.leggauss(n) for n in (3, 5, 10)]


def _cell_excess(D, z, eps_p, lin, q, sigma):
    r"""Overwrite ``D[j]`` = :math:`E_P[(e^L - e^{x_j}); \text{cell}_j]` by quadrature on the narrow cells.

    On cell j (:math:`z \in [z_j, z_{j+1}]`, :math:`z = t/\sigma` the standardised output),
    :math:`e^{L} - e^{x_j} = q e^{\varepsilon'_j}\,\mathrm{expm1}((z - z_j)/\sigma)`, so
    :math:`D_j = q\,e^{\varepsilon'_j}\varphi(z_j)\int_0^{\Delta}\mathrm{expm1}(s/\sigma)\,e^{-z_j s - s^2/2}\,ds`:
    a positive integrand, no cancellation. Gauss-Legendre (3, 5 or 10 nodes by the cell's width) where
    :math:`\Delta \max(1, |z|, 1/\sigma) \le 1/2` (the integrand is then a polynomial to far below
    rounding); elsewhere the difference of masses is already accurate.
    """
    j = np.flatnonzero(~lin[:-1] & ~lin[1:] & np.isfinite(z[:-1]) & np.isfinite(z[1:]))
    if j.size == 0:
        return
    z0, dz = z[j], z[j + 1] - z[j]
    scale = dz * np.maximum.reduce([np.ones_like(z0), np.abs(z0), np.abs(z[j + 1])]) * max(1.0, 1.0 / sigma)
    # n nodes are exact to degree 2n - 1; the remainder is about 1e-16 relative for 3 nodes at scale
    # <= 0.01 and 5 at <= 0.1 (measured: the cells agree with 10 nodes everywhere to 2.2e-16)
    for (lo, hi), (gx, gw) in zip(((0.0, 0.01), (0.01, 0.1), (0.1, 0.5)), _GL):
        ok = (dz > 0) & (scale > lo) & (scale <= hi) if lo > 0 else (dz > 0) & (scale <= hi)
        jj, a, b = j[ok], z0[ok], dz[ok]
        if jj.size == 0:
            continue
        sk = 0.5 * b[:, None] * (1.0 + gx[None, :])
        vals = np.expm1(sk / sigma) * np.exp(-a[:, None] * sk - 0.5 * sk * sk)
        integral = 0.5 * b * (vals @ gw)
        log_pref = math.log(q) + eps_p[jj] - 0.5 * a * a - 0.5 * math.log(2.0 * math.pi)
        D[jj] = np.exp(log_pref) * integral


def profile(eps, q, sigma, *, neighbours="add-remove"):
    r"""Exact single-step profile :math:`H_{e^\varepsilon}(Q\|P)` of the SGM, and :math:`P(L > \varepsilon)`.

    Returns ``(delta, p_tail)`` for real ``eps`` (scalar or array); ``p_tail`` is the :math:`P`-probability
    that the privacy loss exceeds ``eps`` (minus the profile's slope in :math:`e^\varepsilon`).
    Computed in log space: any real ``eps`` works. ``neighbours="replace-one"``: the pair
    :math:`(1-q)\mathcal N(0,\sigma^2) + q\mathcal N(\pm1,\sigma^2)` of a replaced record (Zhu, Dong and Wang
    2022), from a closed form without cancellation; ``delta`` is then rounded up by its float error bound
    (below 1e-8 relative; measured at most 2e-9).

    Examples
    --------
    >>> from dpmia import sgm
    >>> d_add, _ = sgm.profile(0.0, 0.01, 1.0)                         # TV of one step: q (2 Phi(1/2) - 1)
    >>> d_rep, _ = sgm.profile(0.0, 0.01, 1.0, neighbours="replace-one")  # q (2 Phi(1) - 1)
    >>> round(float(d_add), 6), round(float(d_rep), 6)
    (0.003829, 0.006827)
    """
    e = _checks.real("eps", eps)
    qq, ss, _ = check_run(q, sigma, 1)
    nb = check_neighbours(neighbours)
    if qq > 0.0 and nb == "replace-one":
        arr = np.atleast_1d(np.asarray(e, float))
        _, hi, tail = replace_one_profile(arr.ravel(), qq, ss)
        return (_checks.scalar_or_array(hi.reshape(arr.shape), eps),
                _checks.scalar_or_array(tail.reshape(arr.shape), eps))
    if qq == 0.0:
        zero = np.zeros(np.shape(e))
        d = np.where(np.asarray(e) < 0, -np.expm1(np.minimum(e, 0.0)), 0.0)
        return (_checks.scalar_or_array(d, eps), _checks.scalar_or_array(np.where(np.asarray(e) < 0, 1.0, zero), eps))
    arr = np.atleast_1d(np.asarray(e, float))
    if arr.size == 0:
        return np.zeros(0), np.zeros(0)
    d, log_nu = _grid_arrays(np.append(arr, arr[-1] + 1.0), qq, ss)[:2]
    return (_checks.scalar_or_array(d[:-1], eps), _checks.scalar_or_array(np.exp(log_nu[:-1]), eps))


def single_step_tv(q, sigma, *, neighbours="add-remove"):
    r"""One step (Mahloujifar et al., Lemma 7 with :math:`a=1`): :math:`q\,(2\Phi(1/(2\sigma)) - 1)`; under
    ``neighbours="replace-one"`` :math:`q\,(2\Phi(1/\sigma) - 1)` (the two mixture components 2 apart)."""
    qq, ss, _ = check_run(q, sigma, 1)
    if check_neighbours(neighbours) == "replace-one":
        return replace_one_tv(qq, ss)
    return _one_step_tv(qq, ss)


def _one_step_tv(q, sigma):
    """:func:`single_step_tv` for checked arguments."""
    return q * gaussian.tv(1.0 / sigma)


def _loss_range(q, sigma, tail):
    """Smallest loss (log(1 - q), or where the P- and Q-mass below is < min(1e-40, ``tail``)) and the loss above
    which the single-step profile is below ``tail``. (The remove direction's grid is this one reflected: the mass
    below its smallest loss is what the remove profile may still hold above the grid's top, so far-tail read-outs
    need it below ``tail`` too.)"""
    mu = 1.0 / sigma
    tail = max(tail, 1e-310)             # a smaller budget (delta near the float minimum) resolves nothing more
    t_min = sigma * float(special.ndtri(min(1e-40, tail)))
    l_min = float(_privacy_loss(np.float64(t_min), q, sigma))
    lo = max(math.log1p(-q), l_min) if q < 1 else l_min
    # beyond eps' = eps_hi the Gaussian profile is below tail / q: delta_G(eps') <= Phi(mu/2 - eps'/mu)
    eps_hi = mu * (0.5 * mu - float(special.ndtri(min(tail / q, 0.5))))
    hi = float(np.logaddexp(math.log1p(-q), math.log(q) + eps_hi)) if q < 1 else eps_hi
    return lo, max(hi, lo + 1e-12)


def _merged_loss(c, q, sigma):
    r"""Loss :math:`\ln(Q(A)/P(A))` of all outputs with loss :math:`\le c` (:math:`A`) merged into one, and
    :math:`P(A)`.

    With :math:`R = \mathcal N(1, \sigma^2)`, :math:`Q(A)/P(A) = (1-q) + q\,R(A)/P(A)`, both masses from
    lower tails (:math:`L \le c \iff t \le t^*`): accurate whether :math:`A` holds almost nothing or
    almost everything.
    """
    if c <= math.log1p(-q):
        return c, 0.0                                    # nothing below c: nothing merged
    t_star = sigma * sigma * _eps_prime_scalar(c, q) + 0.5
    log_p = float(special.log_ndtr(t_star / sigma))
    log_r = float(special.log_ndtr((t_star - 1.0) / sigma))
    if log_p == -math.inf:
        return c, 0.0
    ratio = math.exp(min(log_r - log_p, 700.0))
    return math.log1p(-q) + math.log1p(q / (1.0 - q) * ratio), math.exp(log_p)


def _merged_anchor(q, sigma, h, lo):
    r"""Grid point for the dominated pair's first cell: :math:`a \le \ell(a + h)`, close to it.

    :math:`\ell(c)` is the loss of all outputs with loss :math:`\le c` merged (:func:`_merged_loss`), a
    post-processing of the step, so its composition is a lower bound of the true one. With a grid
    point at :math:`a` and the merged atom just above it, the dominated pair's first cell is exact
    (its chord gap is about :math:`P(A)\,(\ell - a)`). Where nearly all mass sits in a hair above
    :math:`\ln(1-q)` (tiny q, small sigma) this is what keeps the lower end off 0: lowering a cell
    holding that mass by its chord gap costs about q x (its width) per step. :math:`\ell(\cdot + h)`
    is increasing, so the iterates :math:`a_{i+1} = \ell(a_i + h)` from :math:`a_0 = \ln(1-q)` rise to
    the fixed point and each satisfies :math:`a_i \le \ell(a_i + h)`; ``lo`` is a margin below.
    """
    a = lo
    for _ in range(200):
        nxt = _merged_loss(a + h, q, sigma)[0]
        if not nxt > a:
            break
        step = nxt - a
        a_prev, a = a, nxt
        if step <= 1e-9 * (a - lo) + 1e-300:
            a = a_prev + 0.5 * step
            break
    return a - 16.0 * abs(math.ulp(a)) - 1e-12 * (a - lo)


def _merged_first(arrays, k, q, sigma, h):
    """The arrays of :func:`grid_arrays` for the dominated pair that merges every output with loss at
    most ``x[k + 1]`` into one atom (just above ``x[k]``, see :func:`merged_anchor`): below and at
    ``x[k]`` the profile is 1 - y, cell k holds the atom, and the arrays above are unchanged."""
    x, d, log_nu, log_cell, dv, gap = (np.array(a, copy=True) for a in arrays)
    loss, p_a = _merged_loss(float(x[k + 1]), q, sigma)
    # D = Q(A) - y_k P(A) = P(A) e^{x_k} (e^{loss - x_k} - 1): the atom's excess over y_k
    log_e = float(x[k]) + math.log(p_a) if p_a > 0.0 else -math.inf     # log(y_k P(A)) <= log Q(A) <= 0
    D = math.exp(min(log_e, 0.0)) * math.expm1(loss - x[k])
    d[:k + 1] = -np.expm1(np.minimum(x[:k + 1], 0.0))
    if D < 0.0:
        d[k] -= D                                   # the atom is a hair below x_k (float noise)
    log_nu[:k + 1] = 0.0 if D > 0.0 else log_nu[k + 1]
    log_cell[:k] = -np.inf
    log_cell[k] = log_e
    dv[:k] = -np.exp(np.minimum(x[:k], 0.0)) * math.expm1(h)
    dv[k] = -max(D, 0.0) - math.expm1(h) * math.exp(min(x[k] + float(log_nu[k + 1]), 0.0))
    gap[:k] = 1e-300
    # the atom's loss is known to a few ulps and 1e-15 relative: pad its distance from x_k
    pad = 16.0 * abs(math.ulp(loss)) + 1e-12 * abs(loss - math.log1p(-q)) if q < 1 else 0.0
    gap[k] = math.exp(min(log_e, 0.0)) * math.expm1(max(loss - x[k], 0.0) + pad) * (1 + 1e-9) + 1e-300
    return x, d, log_nu, log_cell, dv, gap


def _grid_points(q, sigma, h, lo, hi, anchor):
    """Grid ``x`` (step ``h``) from just below ``lo`` to at least ``hi``, and the anchor index ``k``
    (see :func:`cached_grid`)."""
    k = -1
    if anchor and q < 1 and lo - math.log1p(-q) <= h:
        # The losses reach down to within a cell of ln(1 - q), where for small sigma or tiny q most
        # of the P-mass sits within a hair above it. (Elsewhere, as at large sigma, they spread
        # evenly about 0, and the grid j h has a point at 0.)
        lo0 = lo - 4.0 * abs(math.ulp(lo))
        a = _merged_anchor(q, sigma, h, lo0)
        k = max(int(math.ceil((a - lo0) / h)), 0)
        x0 = a
        n = k + int(math.ceil((hi - a) / h)) + 2
    else:
        j0 = math.floor(lo / h)
        x0, n = j0 * h, int(math.ceil(hi / h)) - j0 + 2
    if n > MAX_FFT:
        raise ValueError(f"the single-step grid needs {n} points at h = {h:g} (> {MAX_FFT})")
    return x0 + h * np.arange(-max(k, 0), n - max(k, 0)), k


@lru_cache(maxsize=16)
def _cached_grid(q, sigma, h, tail, anchor=False):
    """``(x, profile, log P(L > x), log cell, increments, gap bounds, k, D)`` on the single-step grid (``D`` as in
    :func:`_grid_arrays`).

    ``anchor``: a grid point ``x[k]`` at :func:`merged_anchor` (the dominated pair merges its first
    cell, :func:`merged_first`), the grid reaching down to just below the smallest loss; otherwise
    the grid j h and ``k = -1``.
    """
    lo, hi = _loss_range(q, sigma, tail)
    x, k = _grid_points(q, sigma, h, lo, hi, anchor)
    d, log_nu, log_cell, dv, gap, D, eps_p = _grid_arrays(x, q, sigma)
    return x, d, log_nu, log_cell, dv, _midpoint_gaps(x, q, sigma, d, log_nu, log_cell, gap, D, eps_p), k, D


@lru_cache(maxsize=8)
def _bulk_grid(q, sigma, h, b):
    """As :func:`cached_grid` (anchored), on a grid that ends at its first point at or above ``b``: the
    arrays of the full pair there, to be restricted with :func:`bulk_arrays`."""
    lo = _loss_range(q, sigma, 0.5)[0]
    x, k = _grid_points(q, sigma, h, lo, b, True)
    x = x[:int(np.searchsorted(x, b, side="left")) + 1]
    d, log_nu, log_cell, dv, gap, D, eps_p = _grid_arrays(x, q, sigma)
    return x, d, log_nu, log_cell, dv, _midpoint_gaps(x, q, sigma, d, log_nu, log_cell, gap, D, eps_p), k


def _bulk_arrays(arrays, q, sigma, h):
    r"""The arrays of :func:`grid_arrays` (full pair, grid ``x`` ending at :math:`b = x_J`) for the *bulk
    pair*: :math:`P` and :math:`Q` restricted to the outputs with loss :math:`\le b` and normalised,
    :math:`\tilde P = P_B / p_B`, :math:`\tilde Q = Q_B / q_B`, with losses :math:`\tilde x = x - c`,
    :math:`c = \ln(q_B / p_B)`.

    Its profile is :math:`\tilde\delta(\tilde x) = (\delta(x) - q_U + e^{x} p_U) / q_B` below b, with
    :math:`p_U = P(L > b)`, :math:`q_U = Q(L > b)` (all outputs above b have loss above x there), its
    tail :math:`(P(L > x) - p_U) / p_B`; cell masses and gap bounds are the full pair's (scaled), and
    the increments gain :math:`(e^h - 1) e^{x_j} p_U` (the P-mass above b no longer counts).
    Returns ``(arrays', log q_B, log p_B)``; ``arrays`` may be :func:`merged_first`'s.
    """
    x, d, log_nu, log_cell, dv, gap = arrays
    eps_p = float(_eps_prime(x[-1], q))
    log_pu, _, log_qu = (float(v) for v in _tail_logs(np.array(sigma * sigma * eps_p + 0.5), np.array(False), q, sigma))
    log_qb, log_pb = math.log1p(-math.exp(log_qu)), math.log1p(-math.exp(log_pu))
    c = log_qb - log_pb
    with np.errstate(divide="ignore", under="ignore", over="ignore"):
        nu_b = np.full(x.size, -np.inf)
        diff = log_pu - log_nu[:-1]
        ok = diff < 0.0
        nu_b[:-1][ok] = log_nu[:-1][ok] + np.log(-np.expm1(diff[ok]))
        d_b = np.maximum(d - math.exp(log_qu) + np.exp(np.minimum(x + log_pu, 0.0)), 0.0)
        d_b[-1] = 0.0
        dv_b = np.minimum(dv + math.expm1(h) * np.exp(np.minimum(x[:-1] + log_pu, 0.0)), 0.0)
    qb = math.exp(log_qb)
    return (x - c, d_b / qb, nu_b - log_pb, log_cell - log_qb, dv_b / qb, gap / qb), log_qb, log_pb


def single_step_grid(q, sigma, h, *, tail=1e-18):
    r"""The accountant's single-step loss grid ``x`` (step ``h``) with the exact profile and :math:`P(L > x)` on it.

    The grid runs from the smallest loss (:math:`\ln(1-q)`, or where the mass below is < min(1e-40, ``tail``)) to
    where the profile falls below ``tail``. Returns ``(x, delta, p_tail)``; feed them to
    :func:`dpmia.pld.from_profile` with ``h=h`` (``x[1] - x[0]`` may differ from ``h`` in the last bits, and then
    a grid point meant to be 0 would miss it).
    """
    qq, ss, _ = check_run(q, sigma, 1)
    if qq == 0.0:
        raise ValueError("q must be in (0, 1] (q = 0 releases nothing)")
    hh = _checks.scalar("h", h, lo=1e-9, hi=1.0)
    tl = _checks.scalar("tail", tail, lo=1e-300, hi=0.1)
    x, d, log_nu = _cached_grid(qq, ss, hh, tl)[:3]
    return x.copy(), d.copy(), np.exp(log_nu)
