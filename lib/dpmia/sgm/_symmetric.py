r"""Grid pairs of one step under replace-one neighbours: Poisson sampling and fixed-size batches.

Both pairs are *symmetric* (their profile is the same in both directions), so the accountant
composes one direction only. On a grid :math:`x_j = jh` symmetric about 0 each is given by its
profile at :math:`x \ge 0` and, below 0, by the identity of a symmetric pair

.. math:: \delta(-a) = 1 - e^{-a} + e^{-a}\,\delta(a),\qquad P(L > -a) = Q(L \le a) = 1 - \delta(a) - e^{a} P(L > a).

**Poisson sampling** (rate :math:`q`): the pair :math:`Q_R = (1-q)\mathcal N(0,\sigma^2) + q\mathcal N(1,\sigma^2)`
against :math:`P_R = (1-q)\mathcal N(0,\sigma^2) + q\mathcal N(-1,\sigma^2)`, whose profile
:mod:`._replace` computes without cancellation and rounds outward.

**Fixed-size batches** of :math:`B` drawn without replacement from :math:`n` records (:math:`q = B/n`).
With :math:`J` the batch and :math:`i` the replaced slot, :math:`M(D) = (1-q)\mu_0 + q\mu_1` and
:math:`M(D') = (1-q)\mu_0 + q\mu_1'`. By advanced joint convexity (Balle, Barthe and Gaboardi 2018,
Theorem 2), for :math:`\alpha \ge 1`, :math:`\alpha' = 1 + q(\alpha - 1)` and :math:`\beta = \alpha'/\alpha`,

.. math:: H_{\alpha'}(M(D)\|M(D')) = q\,H_\alpha(\mu_1\|(1-\beta)\mu_0 + \beta\mu_1')
          \le q\,H_\alpha(\mathcal N(2,\sigma^2)\|\mathcal N(0,\sigma^2)),

since :math:`\mu_1` and :math:`\mu_0` (couple the batches: replace a random member of :math:`\mu_0`'s batch
by the target) and :math:`\mu_1`, :math:`\mu_1'` are mixtures of Gaussians at most two clipping norms
apart (joint convexity). The right side is :math:`H_{\alpha'}` of the add/remove pair at noise
multiplier :math:`\sigma/2` (the same steps as that paper's Theorem 10). The bound holds for every
ordered pair of neighbours and every :math:`\varepsilon \ge 0`; the relation being symmetric, the
step is :math:`f`-DP for the symmetric trade-off curve with that profile (Dong, Roth and Su 2022,
Proposition 2.12), which the symmetric pair built here realises (its profile is convex: the
perspective below 0 meets the profile above 0 with slopes in order, as
:math:`P(L>0) + Q(L>0) = q + 2(1-q)\bar\Phi(1/\sigma) \le 1`). It is the curve
:math:`\mathrm{conv}(\min(f_q, f_q^{-1}))` with :math:`f = G_{2/\sigma}` of their Theorem 4.2 (sampling without
replacement); composition (their Theorem 3.2) applies to it. It is attained at one step (the other
records' gradients opposite to the target's), not in general after several.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np
from scipy import special

from .. import pld as _pld
from ._replace import _profile_r, _threshold, replace_one_profile
from ._step import _eps_prime, _gap_from_middle, _loss_range, _value_error, _values

_U = np.finfo(float).eps / 2.0
#: Below this, a P-mass times e^x is taken from its log (the product of a subnormal loses its digits)
_SMALL = 1e-290


def _half_sigma(run_sigma):
    """Noise multiplier of the add/remove pair that bounds a fixed-size batch (sensitivity 2)."""
    return 0.5 * run_sigma


def _positive_profile(a, q, sigma, sampler, with_log=False):
    """``(lower, upper, P(L > a))`` of the one-sided profile at ``a >= 0`` (array); ``with_log``: and the log of
    ``P(L > a)`` (relatively accurate where it is subnormal)."""
    a = np.asarray(a, float)
    if sampler == "poisson":
        lo, hi, log_nu = _profile_r(a, q, sigma)
    else:
        s = _half_sigma(sigma)
        d, eps_p, lin, _, (log_nu, _, _) = _values(a, q, s, tails=False)
        # the add/remove profile, rounded outward by its error bound
        err = _value_error(a, q, s, d, np.where(lin, 0.0, eps_p), log_nu) + 4.0 * _U * d
        lo, hi = np.maximum(d - err, 0.0), np.minimum(d + err, 1.0)
    with np.errstate(under="ignore"):
        nu = np.exp(log_nu)
    return (lo, hi, nu, log_nu) if with_log else (lo, hi, nu)


def _half_arrays(x, q, sigma, sampler):
    r"""``(lower, upper, P(L > x), log cell, increments, gap, D, A)`` of the symmetric pair on the grid
    ``x`` = 0, h, 2h, ... (ascending, step h, from 0).

    ``log cell`` is :math:`x_j + \ln P(x_j < L \le x_{j+1})`, the increments
    :math:`\delta(x_{j+1}) - \delta(x_j) = -(Q(\text{cell}_j) - y_j P(\text{cell}_j)) - (e^h - 1) y_j P(L > x_{j+1})`
    from the cell masses (differences of the rounded values would break convexity by their
    rounding), and ``gap``, ``D``, ``A`` bounds on the chord's rise over the profile (:func:`_cell_gaps`).
    """
    lo, hi, nu, log_nu = _positive_profile(x, q, sigma, sampler, with_log=True)
    p_cell, q_cell, p_err, q_err, (log_p, p_rel) = _cell_masses(x, q, sigma, sampler)
    y0 = np.exp(np.minimum(x[:-1], 700.0))
    y1 = np.exp(np.minimum(x[1:], 700.0))
    # y P(cell) and y P(L > x) on the scale of the profile: where the P-masses are subnormal (far out, where Q-masses
    # of 1e-300 are e^x times larger) from their logs, within their relative error and exp's rounding of its argument
    # (a mass whose log is -inf, a cell too narrow for its two tails to differ in floats, keeps the linear form)
    small = (p_cell < _SMALL) & np.isfinite(log_p)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        yp0 = np.where(small, np.exp(np.minimum(x[:-1] + log_p, 709.0)), y0 * p_cell)
        yp1 = np.where(small, np.exp(np.minimum(x[1:] + log_p, 709.0)), y1 * p_cell)
        rel = p_rel + 4.0 * _U * (2.0 + np.abs(x[1:] + log_p))
        yp0_err = np.where(small, yp0 * rel, y0 * p_err)
        yp1_err = np.where(small, yp1 * rel, y1 * p_err)
        ynu = np.where(nu[1:] < _SMALL, np.exp(np.minimum(x[:-1] + log_nu[1:], 709.0)), y0 * nu[1:])
        log_cell = np.where(small, x[:-1] + log_p + rel, x[:-1] + np.log(p_cell + p_err + 1e-300))
    d_ex = np.maximum(q_cell - yp0, 0.0)
    a_ex = np.maximum(yp1 - q_cell, 0.0)
    # their float error: the masses' own and the rounding of the difference (on narrow cells this is a
    # large part of D or A, but both only widen the gaps and move the increments by about u Q(cell),
    # which the pairs' measured slack covers)
    d_err = q_err + yp0_err + 4.0 * _U * (q_cell + yp0)
    a_err = q_err + yp1_err + 4.0 * _U * (q_cell + yp1)
    dv = -d_ex - math.expm1(x[1] - x[0]) * np.minimum(ynu, 1.0)
    gap, d_side, a_side = _cell_gaps(d_ex + d_err, a_ex + a_err)
    if x.size > 1:
        # the profile's lower end in each cell's middle bounds the chord's rise there (from the upper ends) and so
        # the gap everywhere on the cell (sgm._step._midpoint_gaps); only on cells whose D and A are known to a
        # thousandth (in far tails their error bounds, y_j times the masses' absolute ones, swamp them, and so do the
        # increments the pair is built from: the lowering must then stay on their scale)
        h = float(x[1] - x[0])
        xm = x[:-1] + math.log1p(0.5 * math.expm1(h))
        tm = np.expm1(xm - x[:-1]) / math.expm1(h)
        lo_m = _positive_profile(xm, q, sigma, sampler)[0]
        m = ((1.0 - tm) * hi[:-1] + tm * hi[1:] - lo_m)
        m = (np.maximum(m, 0.0) + 4.0 * _U * (hi[:-1] + hi[1:])) * (1.0 + 1e-12) + 1e-300
        bound = _gap_from_middle(m, tm, a_side, d_side)
        known = (d_err <= 1e-3 * d_ex) & (a_err <= 1e-3 * a_ex)
        gap = np.where(known & np.isfinite(bound), np.minimum(gap, bound), gap)
    return lo, hi, nu, log_cell, dv, gap, d_side, a_side


def _mass(lo, hi, m):
    r"""``(N(m, 1)[lo, hi], bound on its float error, its log, bound on the log's error)`` for arrays ``lo <= hi``,
    from the tail on the side away from the mean (no cancellation but that of the two tails, bounded by their own
    error). The log keeps its relative accuracy where the mass itself is subnormal or underflows: its error is the
    mass's relative one, computed in logs, plus its own rounding."""
    a, b = lo - m, hi - m
    up = a >= 0.0                                   # the cell lies above the mean: upper tails
    # the larger tail and the smaller one: log_ndtr(-a), log_ndtr(-b) above the mean, log_ndtr(b), log_ndtr(a) below
    # (each on its own entries: log_ndtr costs most of the pair's construction)
    la, lb = np.empty(a.shape), np.empty(a.shape)
    dn = ~up
    with np.errstate(divide="ignore", under="ignore", invalid="ignore"):
        la[up], lb[up] = special.log_ndtr(-a[up]), special.log_ndtr(-b[up])
        la[dn], lb[dn] = special.log_ndtr(b[dn]), special.log_ndtr(a[dn])
        mass = np.exp(la) * -np.expm1(np.minimum(lb - la, 0.0))
        z2 = np.where(up, a * a, b * b)
    # each tail is accurate to a few ulps of z^2 (log_ndtr's argument): their difference to that
    # times the larger tail; where the tail or the mass is subnormal (or underflows to 0) their roundings are
    # absolute, a few units of 5e-324 each, which 1e-320 covers (a floor of 1e-300, times y = e^x in the gaps'
    # bounds, swamped the far tail's cells: the dominated pair was 0 beyond eps 9 at q = 1e-4, sigma = 2)
    err = 16.0 * _U * (2.0 + z2) * np.exp(la) + 1e-320
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_mass = la + np.log(-np.expm1(np.minimum(lb - la, 0.0)))
        # the same error relative to the mass (the larger tail over the mass, in logs), and the log's own rounding
        rel = 16.0 * _U * (2.0 + z2) * np.exp(np.minimum(la - log_mass, 700.0)) + 8.0 * _U
    straddle = (a < 0.0) & (b > 0.0)
    if np.any(straddle):
        # both ends on either side of the mean: 1 - both outer tails, no cancellation to speak of
        # (a < 0 there: lb holds log_ndtr(a))
        mass = np.where(straddle, -np.expm1(np.logaddexp(lb, special.log_ndtr(-b))), mass)
        err = np.where(straddle, 16.0 * _U, err)
        with np.errstate(divide="ignore"):
            log_mass = np.where(straddle, np.log(np.maximum(mass, 1e-300)), log_mass)
            rel = np.where(straddle, 16.0 * _U / np.maximum(mass, 1e-300) + 8.0 * _U, rel)
    return np.maximum(mass, 0.0), err, log_mass, rel


def _cell_masses(x, q, sigma, sampler):
    """``(P(cell), Q(cell), their error bounds, (log P(cell), its error))`` for the cells of the grid ``x >= 0`` of the
    symmetric pair."""
    if sampler == "poisson":
        # outputs in units of sigma: P_R = (1-q) N(0,1) + q N(-mu,1), Q_R = (1-q) N(0,1) + q N(mu,1)
        mu = 1.0 / sigma
        with np.errstate(over="ignore"):
            z = _threshold(x, q, sigma) / mu
        return _mix_masses(z[:-1], z[1:], [(0.0, 1.0 - q, 1.0 - q), (-mu, q, 0.0), (mu, 0.0, q)])
    # the add/remove pair at s = sigma / 2 in units of s: P = N(0,1), Q = (1-q) N(0,1) + q N(1/s,1), its loss
    # increasing in u = t / s
    s = _half_sigma(sigma)
    with np.errstate(over="ignore", invalid="ignore"):
        u = (s * s * _eps_prime(np.maximum(x, 1e-300), q) + 0.5) / s
    u = np.where(x > 0, u, 0.5 / s)
    return _mix_masses(u[:-1], u[1:], [(0.0, 1.0, 1.0 - q), (1.0 / s, 0.0, q)])


def _mix_masses(lo, hi, comps):
    """Masses of ``[lo, hi]`` under the two mixtures ``comps`` = [(mean, weight in P, weight in Q)], with errors, and
    ``(log, relative error)`` of the ``P``-masses (accurate where they are subnormal: :func:`_mass`)."""
    p = np.zeros(lo.shape)
    qm = np.zeros(lo.shape)
    pe = np.zeros(lo.shape)
    qe = np.zeros(lo.shape)
    log_p = np.full(lo.shape, -np.inf)
    p_rel = np.zeros(lo.shape)
    for m, wp, wq in comps:
        v, e, lv, rv = _mass(lo, hi, m)
        p, pe = p + wp * v, pe + wp * e
        qm, qe = qm + wq * v, qe + wq * e
        if wp > 0.0:
            # (a sum of positive terms: its relative error at most the largest term's, plus the sum's rounding)
            log_p, p_rel = np.logaddexp(log_p, math.log(wp) + lv), np.maximum(p_rel, rv)
    return p, qm, pe + 4.0 * _U * p, qe + 4.0 * _U * qm, (log_p, p_rel + 8.0 * _U)


def _cell_gaps(d_up, a_up):
    r"""Bound on the chord's rise over the profile on each cell from upper bounds on
    :math:`D = Q(\text{cell}) - y_j P(\text{cell})` and :math:`A = y_{j+1} P(\text{cell}) - Q(\text{cell})`
    (both :math:`\ge 0`): the gap is at most :math:`DA/(D+A)` (the profile is convex, its slopes at the
    cell's ends bound it on either side), and where one end of the cell cannot be lowered the chord
    rises at most :math:`D` (or :math:`A`) above it. Returns ``(gap, D, A)``, rounded up."""
    with np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore"):
        tot = d_up + a_up
        # (as a times d / (d + a) where the product d a would leave the normal range: in a far tail, D and A near
        # 1e-160 multiply to 0, and the bound, then 0, let the dominated pair's values sit on the chord)
        g = np.where(tot > 0, np.where(d_up * a_up >= 1e-290, d_up * a_up / tot, a_up * (d_up / tot)), 0.0)
    return np.nan_to_num(g, nan=np.inf) * (1.0 + 1e-12) + 1e-300, d_up * (1.0 + 1e-12), a_up * (1.0 + 1e-12)


@lru_cache(maxsize=64)
def _symmetric_range(q, sigma, sampler, tail):
    """Loss ``H`` beyond which the one-sided profile is below ``tail``.

    Fixed-size batches: the bounding add/remove pair's own range at sigma / 2. Poisson: that range
    bounds it too (advanced joint convexity, module docstring: the components are two clipping norms
    apart) but far from tightly; bisect the replace-one profile's upper end below it instead (it
    decreases in epsilon).
    """
    top = _loss_range(q, _half_sigma(sigma), tail)[1]
    if sampler != "poisson":
        return top
    if float(replace_one_profile(np.array([0.0]), q, sigma)[1][0]) <= tail:
        return 1e-12
    a, b = 0.0, top
    for _ in range(4):
        # 64 points at once: the first whose upper end is at most tail (the last one is, by the bound)
        xs = np.linspace(a, b, 65)
        ok = replace_one_profile(xs, q, sigma)[1] <= tail
        k = int(np.argmax(ok))
        if not ok[k]:
            break
        a, b = float(xs[max(k - 1, 0)]), float(xs[k])
        if b - a <= 1e-3 * b:
            break
    return b


@lru_cache(maxsize=16)
def _symmetric_grid(q, sigma, sampler, h, tail):
    """``(x, arrays)``: the grid ``j h`` for ``0 <= x <= H`` (:func:`_symmetric_range`) and
    :func:`_half_arrays` on it."""
    top = _symmetric_range(q, sigma, sampler, tail)
    n = int(math.ceil(top / h)) + 1
    if 2 * n + 1 > _pld.MAX_FFT:
        raise ValueError(f"the single-step grid needs {2 * n + 1} points at h = {h:g} (> {_pld.MAX_FFT})")
    x = h * np.arange(n + 1)
    return x, _half_arrays(x, q, sigma, sampler)


def _symmetric_pair(q, sigma, sampler, h, kind, tail):
    r"""The dominating (``kind="pessimistic"``, from the upper ends) or dominated (from the lower ends)
    grid pair of one step: its atoms above 0 from :func:`dpmia.pld.from_profile`, mirrored.

    Of any pair, :math:`\delta(\varepsilon) = \sum_{x > \varepsilon} Q(x)(1 - e^{\varepsilon - x})` for
    :math:`\varepsilon \ge 0` depends on the atoms above :math:`\varepsilon` only, so the atoms at
    :math:`x_j > 0` of a grid pair whose profile lies above (below) the true one on :math:`\varepsilon \ge 0`
    define, with the mirror atoms :math:`Q(-x_j) = e^{-x_j} Q(x_j)`, the atom
    :math:`1 - Q(L>0) - P(L>0)` at 0 and :math:`P(-\infty) = Q(+\infty)`, a symmetric pair above (below)
    the true one everywhere. Below 0 :func:`~dpmia.pld.from_profile` gets the first cell's chord,
    continued down to :math:`1 - y`: a convex curve whose own atoms are dropped. Building the pair
    below 0 from the profile there would weigh the float error of its :math:`Q`-atoms by
    :math:`e^{-x}` in :math:`P`-mass (1e-7 at :math:`x = -8`).
    """
    x, (lo, hi, nu, log_cell, dv, gap, d_side, a_side) = _symmetric_grid(q, sigma, sampler, h, tail)
    n = x.size - 1
    em = math.expm1(h)
    v = hi if kind == "pessimistic" else lo
    rise = _rises(x, nu, em)
    # the first cell's slope (of the values as they will be lowered) continued left of 0, then 1 - y
    if kind == "pessimistic":
        c0, c1 = 0.0, 0.0
    else:
        # (from_profile lowers the first two points alike: the extension's cells add nothing there)
        m = min(2, n)
        c_first = _pld.chord_lowering(v[:m + 1], gap[:m], (d_side[:m], a_side[:m]), rise=rise[:m])
        c0, c1 = float(c_first[0]), float(c_first[1])
    w0 = float(v[0]) - c0
    slope = (float(dv[0]) - (c1 - c0)) / em
    # the tangent meets 1 - y at y* = (1 - w0 + slope) / (1 + slope) (> 0: slope > -1); two points below
    if slope > -1.0:
        y_star = (1.0 - w0 + slope) / (1.0 + slope)
        k = int(math.ceil(-math.log(max(y_star, 1e-300)) / h)) + 2 if y_star > 0 else n
    else:
        k = n
    k = max(min(k, n), 2)
    xl = -h * np.arange(k, 0, -1)
    yl = np.exp(xl)
    tangent = w0 + slope * (yl - 1.0)
    line = -np.expm1(xl)
    ext = np.maximum(tangent, line)
    xf = np.concatenate([xl, x])
    vf = np.concatenate([ext, v])
    zeros = np.zeros(k)
    # the extension's increments exactly (differences of its rounded values would leave atoms of
    # float noise, which a dominating pair raises and piles up at +infinity); the last cell, up to 0,
    # carries the lowering c0 of the point at 0
    on_t = tangent >= line
    d_ext = np.diff(np.append(ext, w0 + c0))
    both_t = on_t[:-1] & on_t[1:]
    both_l = ~on_t[:-1] & ~on_t[1:]
    d_ext[:-1] = np.where(both_l, -em * yl[:-1], np.where(both_t, slope * em * yl[:-1], d_ext[:-1]))
    if on_t[-1]:
        d_ext[-1] = c0 - slope * math.expm1(-h)
    dv_f = np.concatenate([d_ext, dv])
    pr = _pld.from_profile(xf, vf, np.concatenate([np.ones(k), nu]), kind,
                           log_cell=np.concatenate([np.full(k, -np.inf), log_cell]),
                           dprofile=dv_f, gap=np.concatenate([zeros, gap]), h=h,
                           one_sided=(np.concatenate([zeros, d_side]), np.concatenate([zeros, a_side])),
                           minorant=False, rise=np.concatenate([zeros, rise]))
    if kind == "optimistic" and pr.pmf.size >= x.size:
        # (the profile's own values at the points from 0 up, lower and upper ends, for the far-tail read-outs; the
        # points below 0 are not the profile's and not used: mirrored, only x >= 0 counts)
        pad = np.zeros(pr.pmf.size - x.size)
        pr = dataclasses.replace(pr, ref_points=(np.concatenate([pad, lo]), np.concatenate([pad, hi])))
    return _mirrored(pr, h)


def _rises(x, nu, em):
    r"""Per cell of the grid ``x`` (step h, ``em`` = :math:`e^h - 1`) the rise :math:`(y_{j+1} - y_j)\nu` over the
    cell of the line through the right end with slope :math:`-\nu`, :math:`\nu` a lower bound on :math:`P(L >
    x_{j+1})` (``nu`` less 1e-6 relative, far above its rounding; 0 where it is not a normal float, and then no line).
    The profile is convex in :math:`y = e^x` with slope :math:`-P(L \ge x_{j+1})` from the left at :math:`y_{j+1}`,
    so on the cell it lies above its tangent there and so above this line through the right end's lower value
    (:func:`dpmia.pld.chord_lowering` lowers a cell's left end to it where the cell's chord gap would take its right
    end's value)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        nl = np.where(nu[1:] >= 1e-290, nu[1:] * (1.0 - 1e-6), 0.0)
        r = em * np.exp(np.minimum(x[:-1], 700.0)) * nl * (1.0 - 4.0 * np.finfo(float).eps)
    return np.where(np.isfinite(r), r, 0.0)


def _mirrored(pr, h):
    """The symmetric pair with the atoms of ``pr`` above 0 (see :func:`_symmetric_pair`)."""
    losses = pr.losses
    pos = losses > 0.5 * h
    k = int(np.argmax(pos))
    if not pos[k] or abs(losses[k] - h) > 1e-9 * h:
        raise _pld.GridError("the single-step pair has no grid point at h")
    m = np.asarray(pr.pmf[pos], float)
    xs = losses[pos]
    with np.errstate(under="ignore"):
        pm = m * np.exp(-xs)
    inf = float(pr.inf_mass)
    used = float(np.sum(m.astype(np.longdouble)) + np.sum(pm.astype(np.longdouble)))
    zero = 1.0 - inf - used
    slack = max(float(pr.slack_q), float(pr.slack_p))
    if zero < 0.0:
        if pr.kind == "optimistic":
            # lowering every atom above 0 lowers the profile, which a dominated pair may
            f = (1.0 - inf) / used * (1.0 - 4.0 * _U)
            m, pm = m * f, pm * f
            zero = max(1.0 - inf - float(np.sum(m.astype(np.longdouble)) + np.sum(pm.astype(np.longdouble))), 0.0)
        else:
            slack += -zero                  # float noise: the masses exceed 1 by this much
            zero = 0.0
    pmf = np.concatenate([pm[::-1], [zero], m])
    return _pld.PLD(h, -m.size, pmf, inf, inf, pr.kind, slack_q=slack, slack_p=slack, shift=0.0,
                    ref=_mirrored_ref(pr, pos, k, m.size),
                    ref_points=None if pr.ref_points is None else
                    tuple(_mirrored_ref(pr, pos, k, m.size, v, up) for v, up in zip(pr.ref_points, (False, True))))


def _mirrored_ref(pr, pos, k, size, ref=None, upward=None):
    r"""The values the mirrored pair was built from (:attr:`dpmia.pld.PLD.ref`: upper ones for a dominating pair,
    lowered ones for a dominated pair; or ``ref``, rounded up if ``upward``, else down) at its grid points, or ``None``:
    those of ``pr`` at :math:`x \ge 0`, and :math:`1 - e^{-x} + e^{-x} v(x)` at :math:`-x` (a symmetric pair's
    profile below 0; the perspective of a chord is a chord, so lowered values stay below the profile between the
    points too), rounded outward."""
    upward = pr.kind == "pessimistic" if upward is None else upward
    ref = pr.ref if ref is None else ref
    if ref is None or ref.size != pr.pmf.size or k < 1 or abs(pr.losses[k - 1]) > 1e-9 * pr.h:
        return None
    up = np.asarray(ref, float)[pos]
    x = pr.losses[pos]
    with np.errstate(under="ignore"):
        em = np.exp(-x)
        below = -np.expm1(-x) + em * up            # two terms >= 0: within 2u of their sum, taken 4u
    below = below * (1.0 + 4.0 * _U) if upward else below * (1.0 - 4.0 * _U)
    out = np.concatenate([np.minimum(below[::-1], 1.0), [float(ref[k - 1])], up])
    return out if out.size == 2 * size + 1 else None


def _symmetric_extent(q, sigma, sampler, tail):
    """``(lo, hi)`` loss range of the symmetric single-step pair."""
    top = _symmetric_range(q, sigma, sampler, tail)
    return -top, top
