r"""Convex curves above or below a grid pair's profile values (in :math:`y = e^x`), for the constructions of
``_discretise`` and ``_coarsen``: the greatest convex minorant of a polyline, and a convex curve above values that
float noise made slightly non-convex.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize


def _masses(dv, x0, h):
    r"""Atoms of the grid pair whose profile has the increments ``dv`` between the grid points :math:`x_j = x_0 + jh`.

    With :math:`u_j = (v_{j+1} - v_j)/(e^h - 1)` (:math:`y_j` times the slope right of :math:`y_j`)
    the atom at :math:`x_j` is :math:`u_j - e^h u_{j-1}`; left of :math:`y_0` the profile is
    :math:`1 - y` (:math:`y_0 u_{-1} = -y_0`), right of the last point it is flat. No
    :math:`e^{x}` is formed, so any loss range works.
    """
    em = math.expm1(h)
    u = np.asarray(dv, float) / em
    u_prev = np.concatenate([[-math.exp(x0 - h)], u])       # e^h u_{-1} = -y_0  ->  u_{-1} = -y_0 e^{-h}
    u_next = np.concatenate([u, [0.0]])
    return u_next - math.exp(h) * u_prev

def _convexify(vv, dvv, xg, x0, h, inf_mass, minorant=True):
    r"""``(m, inf_mass)`` of a convex curve above the values ``vv`` where float noise in them made an atom
    negative: one of two such curves, by the mass each moves to :math:`+\infty` (only (a) if not ``minorant``).

    (a) :func:`_raise_slopes`: the slopes right of each negative atom raised (the error travels to the
    end of the grid, so one early jump of size :math:`\epsilon` costs about :math:`\epsilon / h` there);
    (b) the greatest convex minorant of the values plus their largest shortfall below it, :math:`c`: convex,
    at or above every value, and ending only :math:`c` higher. Any convex curve through points at or
    above the exact (convex) profile's values lies above that profile (its chords do), so both are
    dominating; the construction's own rounding is measured afterwards like every other.
    """
    ma, ia = _raise_slopes(dvv, x0, h, inf_mass)
    if not minorant:
        return ma, ia
    corr = _convex_minorant(xg, vv)
    if not np.all(np.isfinite(corr)):
        return ma, ia
    c = float(np.max(-corr))
    w = vv + corr + c
    mb = np.maximum(_masses(np.diff(w), x0, h), 0.0)
    ib = max(inf_mass, float(w[-1]))
    # (b) adds its c to the profile everywhere, (a) raises it by a relative amount right of the kink: far in
    # the tail (delta ~ 1e-50 and below, read by sgm's tilted compositions) (a) stays the tighter, so (b) is
    # taken only where it moves at least 16 times less mass to +infinity (a noisy jump near the bottom of
    # the grid, as the GLRT energy profile's: 4e-13 against 1.7e-10)
    return (mb, ib) if 16.0 * ib < ia else (ma, ia)

def _raise_slopes(dvv, x0, h, inf_mass):
    r"""``(m, inf_mass)`` of the pessimistic curve with increments ``dvv`` after float noise made an atom
    negative: the slopes right of it are raised (the curve stays above its chords, so still pessimistic).

    With :math:`u_j = y_j \times` slope, convexity is :math:`u_j \ge e^h u_{j-1}`, i.e.
    :math:`r_j = \log(-u_j) \le r_{j-1} + h`: a running minimum of :math:`r_j - jh`. The raised curve
    ends higher; the difference goes to :math:`+\infty`. A slope that is not negative (:math:`u_j \ge 0`: an
    increment that underflowed to 0, as a profile's far below :math:`e^{-745}` of a step's mass, or float noise)
    bounds no later one: it is kept, and the negative atom next to it is clipped to 0 (raising the curve left of
    it; the caller measures the curve it gets against the values). Taken into the running minimum it would flatten
    every later slope: at :math:`\sigma = 0.01` under replace-one, the losses of a sampled step near 5000, whose
    increments below 1500 underflow, all 0.3 of their mass went to :math:`+\infty`.
    """
    em = math.expm1(h)
    u = np.concatenate([[-math.exp(x0 - h)], dvv / em])
    live = u < 0.0
    with np.errstate(divide="ignore"):
        r = np.log(np.where(live, -u, 1.0))
    j = np.arange(u.size)
    lim = np.minimum.accumulate(np.where(live, r - j * h, np.inf))
    u2 = np.where(live, -np.exp(np.minimum(r - j * h, lim) + j * h), u)
    m = np.maximum(np.concatenate([u2[1:], [0.0]]) - math.exp(h) * u2, 0.0)
    inf_mass = max(inf_mass + em * float(np.sum(u2[1:] - u[1:])), 0.0)   # the end of the raised curve
    return m, inf_mass

def _convex_minorant(x, w):
    r"""Correction (<= 0) that turns ``w`` into the greatest convex minorant (in :math:`y = e^x`) of the polyline
    through :math:`(0, 1), (y_j, w_j)`.

    Its slopes are the weighted isotonic regression of the segment slopes with the segment widths
    as weights. Done in blocks where the widths fit in a float; beyond :math:`x = 700` the profile
    of the pairs of this library is already convex and is kept.
    """
    lim = x <= 700.0
    k = int(np.count_nonzero(lim))
    if x[0] < -700.0:
        # below e^-700 the profile is 1 - y to float precision: keep those points as they are
        return np.zeros(w.size)
    y = np.exp(x[:k])
    yy = np.concatenate([[0.0], y])
    ww = np.concatenate([[1.0], w[:k]])
    dy = np.diff(yy)
    s = np.diff(ww) / dy
    s2 = optimize.isotonic_regression(s, weights=dy, increasing=True).x
    # add the change only: unchanged stretches keep their exact values (PAVA preserves each merged
    # block's total, so the correction returns to zero after every block). Summed block by block: a running sum
    # over the whole curve carries each block's float residual, about u times its terms, onto every point after
    # it (1.2e-19 from the cells next to 0 at q = 1e-3, sigma = 0.5 under replace-one, which took lowered values
    # of 1e-20 and below to 0 and made a far tail's dominated pair vacuous)
    d = (s2 - s) * dy
    cs = np.cumsum(d)
    starts = np.concatenate([[True], s2[1:] != s2[:-1]])
    first = np.maximum.accumulate(np.where(starts, np.arange(s2.size), 0))
    corr = np.zeros(w.size)
    corr[:k] = np.minimum(cs - np.where(first > 0, cs[np.maximum(first - 1, 0)], 0.0), 0.0)
    return corr
