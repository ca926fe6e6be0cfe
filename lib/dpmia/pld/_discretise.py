r"""Grid pairs from an exact privacy profile: pessimistic (dominating) and optimistic (dominated).

Writing :math:`y = e^{\varepsilon}`, the profile :math:`y \mapsto \delta` is convex, and every convex
piecewise-linear curve with kinks at :math:`e^{x_j}` is the profile of a unique grid pair.
**Pessimistic**: interpolate the exact profile at the grid points ("connect the dots",
Doroshenko et al. 2022); chords of a convex function lie above it. **Optimistic**: lower each grid
value by a bound on the chord gap of its cells and take the greatest convex minorant; it lies
below the exact profile. Both errors are second order in the step :math:`h`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import signal

from .. import _checks
from ._chords import _chord_gaps, _lowered_values
from ._convex import _convex_minorant, _convexify, _masses
from ._lossdist import _UNIT_ROUNDOFF, PLD, _check_kind, _normalise

__all__ = ["from_profile"]


def _increments(values, exact, dprofile):
    """Increments of ``values``: the exact ``dprofile`` where both ends are ``exact`` (unmodified profile), else
    differences."""
    d = np.diff(values)
    if dprofile is None:
        return d
    both = exact[:-1] & exact[1:]
    return np.where(both, dprofile, d)


def _total_ld(a):
    """Sum of ``a`` in extended precision (pairwise, error about 1e-19 relative where the platform has
    it): masses whose last bits decide slack that composition multiplies T-fold."""
    return float(np.sum(np.asarray(a, dtype=np.longdouble)))


def _line_profile(x):
    """max(1 - e^x, 0): the profile of a pair with all P-mass below x."""
    return np.maximum(-np.expm1(np.minimum(x, 0.0)), 0.0)


def from_profile(x, profile, nu_tail, kind, *, log_cell=None, dprofile=None, gap=None, h=None, one_sided=None,
                 minorant=True, rise=None, share=0.25, kinks="clip"):
    r"""Grid pair on the losses ``x`` (uniform step, :math:`x_0 \le` the smallest loss) from the exact profile.

    ``profile[j]`` = :math:`\delta(x_j)`; ``nu_tail[j]`` = :math:`P(L > x_j)` (minus the profile's slope
    in :math:`y` at :math:`e^{x_j}`); optionally ``log_cell[j]`` = :math:`x_j + \log P(x_j < L \le x_{j+1})`
    (computed stably by the caller; otherwise from ``nu_tail``) and ``dprofile[j]`` =
    :math:`\delta(x_{j+1}) - \delta(x_j)` (computed from cell masses, where differences of profile
    values would lose every digit on a plateau) and ``gap[j]``, an upper bound on the gap between
    the chord and the profile on cell j (the optimistic pair uses the smaller of it and
    :math:`\tfrac14 (e^h - 1)\,e^{x_j} P(\text{cell}_j)`). Returns a :class:`PLD` with full
    :math:`Q`-mass whose profile lies above (``"pessimistic"``) or below (``"optimistic"``) the exact one.
    ``h``: the step the caller built ``x`` with, as ``x[0] + h * arange(n)`` (default ``x[1] - x[0]``,
    which may differ from it in the last bits, so that a grid point meant to be 0 would miss it).
    ``one_sided``: optionally ``(d, a)``, upper bounds on :math:`D_j = Q(\text{cell}_j) - y_j P(\text{cell}_j)` and
    :math:`A_j = y_{j+1} P(\text{cell}_j) - Q(\text{cell}_j)`. On cell j the chord rises above the profile by at
    most :math:`t A_j` at the fraction :math:`t` of the cell (the profile lies above its tangent at the left
    end) and by at most :math:`(1-t) D_j` (the right end): where the left end is pinned to :math:`1 - y` the
    optimistic pair lowers the right end by :math:`A_j`, and the left end by :math:`D_j` where the right one
    is pinned (default four times the gap for both, which is the slope change times the width for the
    generic gap bound). ``rise``: optionally, with ``one_sided``, per cell the rise over the cell of a line through
    the right end that lies below the profile on the cell (:func:`chord_lowering`). ``share``: with ``one_sided``,
    the share of an end's value above which a cell's gap is shared between its ends in proportion to their values
    (:func:`chord_lowering`; 1 shares only a gap that would take an end to 0 or below).
    ``minorant``: where float noise in the values made the dominating pair's curve non-convex, it is made
    convex by raising the slopes right of each kink (a relative change: far tails keep their shape) or, if
    ``minorant`` and that moves at least 16 times less mass to :math:`+\infty`, by the greatest convex minorant
    plus its largest shortfall (an absolute one, which flattens a tail far below the shortfall: pass False
    where far tails are read). ``kinks``: where the lowered values of the dominated pair kink (a negative atom), it
    takes their greatest convex minorant if the atoms hold over 1e-9 of negative mass, and otherwise clips them as
    float noise (``"clip"``), or also where a clipped atom would raise a value by over 1e-9 of it (``"minorant"``:
    for far tails, read relative to the values, where such a raise costs more than the minorant's lowering).
    """
    _check_kind(kind)
    x = np.asarray(x, float)
    v = np.asarray(profile, float)
    if h is None:
        h = float(x[1] - x[0])
    else:
        h = float(_checks.positive("h", h))
        if not abs(h - (x[1] - x[0])) <= 1e-6 * h:
            raise ValueError(f"h must be the step of the grid x ({x[1] - x[0]!r}), got {h!r}")
    share = _checks.scalar("share", share, lo=0.0)
    if kinks not in ("clip", "minorant"):
        raise ValueError(f"kinks must be 'clip' or 'minorant', got {kinks!r}")
    if rise is not None:
        rise = _checks.real("rise", rise, lo=0.0)
        if np.shape(rise) != (x.size - 1,):
            raise ValueError(f"rise must hold one value per cell, shape ({x.size - 1},), got {np.shape(rise)}")
    x0 = float(x[0])
    offset, shift = _normalise(0, x0, h)
    xg = x0 + h * np.arange(x.size)
    if kind == "pessimistic":
        return _pessimistic(v, xg, x0, h, offset, shift, dprofile, minorant)
    return _optimistic(v, xg, x0, h, offset, shift, nu_tail, log_cell, dprofile, gap, one_sided, rise, share,
                       kinks == "minorant")


def _pessimistic(v, xg, x0, h, offset, shift, dprofile, minorant=True):
    r"""The dominating grid pair: the chords of the exact profile ``v`` at the grid points ``xg``.

    The values are :math:`\max(\delta(x_j), 1 - e^{x_j})` ("connect the dots", Doroshenko et al. 2022);
    ``_masses`` turns their increments into atoms, the value at the last point becomes
    :math:`Q`-mass at :math:`+\infty`, and every float error of the construction that could lower
    the curve is measured and recorded as slack (``slack_q``, and ``slack_p`` for the reflected pair).
    """
    line = _line_profile(xg)
    vv = np.maximum(v, line)
    # a value a few ulps below 1 - y is the profile's own, read at a point the caller built a bit off x_0 + jh (the
    # GLRT energy grid is built from its top): its increments are the profile's, as its neighbours', not differences
    # of values of 0.36 that flicker about the line (atoms of 1e-12 each, 889 of them negative at h = 9.3e-5)
    near = v >= line - 4.0 * _UNIT_ROUNDOFF * np.abs(line)
    dvv = _increments(vv, near, dprofile)
    # on 1 - y at both ends (left of 0): the exact increment -e^{x_j} (e^h - 1); differences of the
    # rounded values would put atoms of u / h on the line
    on = ~near
    dvv = np.where(on[:-1] & on[1:] & (xg[1:] <= 0.0), -np.exp(np.minimum(xg[:-1], 0.0)) * math.expm1(h), dvv)
    m = _masses(dvv, x0, h)
    inf_mass = max(float(vv[-1]), 0.0)              # Q-mass beyond the grid goes to +infinity
    if np.any(m < 0):
        m, inf_mass = _convexify(vv, dvv, xg, x0, h, inf_mass, minorant)
    # x_0 may sit above losses of negligible probability: the curve is pinned to 1 - y at y_0,
    # which lowers it by v_0 - (1 - y_0); record that as slack so read-outs stay upper bounds
    pin_0 = max(float(vv[0] - line[0]), 0.0)
    m, inf_mass = _cap_total(m, inf_mass)
    if m.any():
        # The atoms' Q-mass must not exceed 1 - inf_mass: reflected, it is the P-mass of the remove
        # pair, and P-mass above 1 lowers that profile (T-fold once composed: 1e-9 at T = 1e7 with
        # an excess of 4u). What they miss must go to +infinity: Q-mass lost would lower the add
        # profile, again T-fold. So scale them to just below their share, top up one atom by the rest
        # (raising the profile, which a dominating pair may), and put the last ~1e-19 at +infinity.
        m, inf_mass = _fill_to(m * ((1.0 - inf_mass) / _total_ld(m) * (1.0 - 2.0 * _UNIT_ROUNDOFF)), xg, inf_mass)
    # Rounding in the atoms (about u per atom) can leave the P-mass a hair above 1, which lowers
    # the profile by y times the excess (T-fold once composed)
    m, xg = shed_p_excess(m, xg, h)
    p_mass = _p_mass(m, offset, shift, h)
    # What the atoms actually give at the grid points against the values they were built from (the
    # curve must not fall below them): the float error of the construction, measured, becomes slack
    # (read-outs widen by it, T-fold when composed)
    bad = np.maximum(vv - (_grid_values(m, h) + inf_mass), 0.0)
    pin = pin_0 + float(np.max(bad))
    bad[0] = max(bad[0], pin_0)
    # Float rounding of values near y = 0 can leave the pair with P-mass slightly above 1; record it.
    p_excess = _up(max(p_mass - 1.0, 0.0))
    neg_inf = _up(max(1.0 - p_mass, 0.0))
    return PLD(h, offset, m, inf_mass, neg_inf, "pessimistic", slack_q=pin,
               slack_p=p_excess + _reflected_slack(bad, xg), shift=shift, ref=vv if vv.size == m.size else None)


def _optimistic(v, xg, x0, h, offset, shift, nu_tail, log_cell, dprofile, gap, one_sided=None, rise=None,
                share=0.25, kinks=False):
    r"""The dominated grid pair: the exact profile ``v`` lowered by the chord gaps, made convex.

    Each value drops by the bound on the chord-over-curve gap of its cells (``_chord_gaps``,
    ``_lowered_values``); where that breaks convexity the greatest convex minorant
    (``convex_minorant``) is taken. The curve keeps full :math:`Q`- and :math:`P`-mass by
    moves that only lower it, and every float error that could raise it is recorded as slack.
    """
    line = _line_profile(xg)
    w, lowered, c, on_line = _lowered_values(v, xg, line, _chord_gaps(xg, h, nu_tail, log_cell, gap), one_sided, rise,
                                             share)
    dw = _increments(w, lowered, None if dprofile is None else dprofile - np.diff(c))
    # from a point on its cell's line to a lowered right end: -r_j - c_{j+1} (its value, v_{j+1} + r_j, less the right
    # end's, v_{j+1} - c_{j+1}), without the cancellation of the profile's increment against the large lowering
    cell = on_line[:-1] & lowered[1:]
    if cell.any():
        dw = np.where(cell, -np.asarray(rise, float) - c[1:], dw)
    # on 1 - y at both ends (left of 0): the exact increment -e^{x_j} (e^h - 1), not a difference
    on_line = ~lowered
    both = on_line[:-1] & on_line[1:] & (xg[1:] <= 0.0)
    dw = np.where(both, -np.exp(np.minimum(xg[:-1], 0.0)) * math.expm1(h), dw)
    m = _masses(dw, x0, h)
    neg = -float(np.sum(m[m < 0]))
    if neg > 1e-9 or (kinks and neg > 0 and _kinked(m, w, h)):
        # a real kink (the lowering broke convexity): the greatest convex minorant of the values
        corr = _convex_minorant(xg, w)
        m = np.maximum(_masses(dw + np.diff(corr), x0, h), 0.0)
        w = w + corr
    elif neg > 0:
        # float noise in the atoms: clip it. The minorant would work on the values, whose
        # rounding (1e-16) becomes 1e-16 / h in the atoms; clipping raises the profile by at
        # most the clipped mass, which the check of the realized values below turns into slack
        m = np.maximum(m, 0.0)
    m, inf_mass = _cap_total(m, 0.0)
    short = 1.0 - float(m.sum())
    if short > 0.0 and short * math.exp(min(-float(xg[0]), 700.0)) <= 2.0**-30:
        # Q-mass lost to float noise and clipping: put it on x_0, where it changes no profile value
        # at a grid point (atoms count strictly above) and, with P-mass >= 1, none left of x_0
        # either. Left out, it makes the reflected pair's P-mass short, which raises its remove profile left
        # of its support (``q_short`` below): so only where x_0 lies so far left of 0 that its P-mass,
        # e^{-x_0} times it, would be more than noise (then the excess would be dropped again, below).
        m[0] += short
    # Rounding in the atoms (about u per atom, so n u in total: 1e-13 at n = 1e5) leaves the Q- or
    # P-mass a hair above 1. As slack it would grow T-fold; scaling all atoms down instead only
    # lowers both profiles (add and remove), which an optimistic pair may always do.
    p_mass = _p_mass(m, offset, shift, h)
    if p_mass > 1.0 + 2.0**-30:
        m = _drop_lowest(m, xg, p_mass - 1.0)
        p_mass = _p_mass(m, offset, shift, h)
    over = max(np.sum(m.astype(np.longdouble)), p_mass)
    if over > 1.0:
        # (the factor rounds by u/2 and each product by u/2: the sums stay below 1)
        m = m * float((1.0 - _UNIT_ROUNDOFF) / over)
        p_mass = _p_mass(m, offset, shift, h)
    # P-mass short of 1 (lowered values, or the scaling just above) would raise the profile left of x_0: Q-mass
    # moved down places it, and again for what that move's own rounding leaves (about u times an atom)
    for _ in range(3):
        if not (p_mass < 1.0 and m.any()):
            break
        m, xg, offset = _move_down(m, xg, h, offset, p_mass)
        p_mass = _p_mass(m, offset, shift, h)
    # What the atoms actually give at the grid points against the values they were built from (the
    # curve must not rise above them): the float error of the construction, measured, becomes slack
    intended = np.concatenate([_line_profile(xg[:m.size - w.size]), w])
    bad = np.maximum(_grid_values(m, h) + inf_mass - intended, 0.0)
    pin = float(np.max(bad))
    p_excess = _up(max(p_mass - 1.0, 0.0))
    # any P-mass still missing (float noise) would raise the profile left of x_0 by y (1 - p_mass),
    # and Q-mass above 1 raises every profile value by at most the excess: record both as slack
    miss = _up(max(1.0 - p_mass, 0.0))
    q_total = np.sum(m.astype(np.longdouble))
    q_excess = _up(max(q_total - 1.0, 0.0))
    # Q-mass short of 1 is P-mass missing from the reflected pair: it raises the remove profile at eps' below its
    # support, -x_top, by e^{eps'} times the shortfall
    top = np.flatnonzero(m)
    q_short = _up(max(1.0 - q_total, 0.0)) * math.exp(min(-float(xg[top[-1]]) if top.size else 0.0, 700.0))
    return PLD(h, offset, m, inf_mass, 0.0, "optimistic", slack_q=pin + q_excess + miss * math.exp(min(xg[0], 0.0)),
               slack_p=p_excess + miss + q_short + _reflected_slack(bad, xg), shift=shift,
               ref=intended if intended.size == m.size else None)


def _kinked(m, w, h, rel=1e-9):
    r"""Whether a negative atom of ``m`` (atoms at the points of the values ``w``) is a kink of the values, not float
    noise: clipped, the atom :math:`m_k < 0` would raise the profile at the point below it by
    :math:`|m_k|(1 - e^{-h})`, more than ``rel`` of its value there. Float noise raises values by far less (1e-12 of
    them at most, at the last points of the grid at q = 0.01, sigma = 1, where they are 1e-15); a kink of 1e-10 next
    to the bulk at tiny q (1.2e-6, sigma 0.97, h = 8.8e-5) raised values of 5e-12 by 0.7 % and those below them by up
    to 10 %, which a far tail's read-out grows :math:`T`-fold."""
    k = np.flatnonzero(m[1:w.size] < 0.0) + 1
    if k.size == 0:
        return False
    rise = -m[k] * -math.expm1(-h)
    return bool(np.any(rise > rel * w[k - 1]))


def _cap_total(m, inf_mass):
    """``(m, inf_mass)`` with the total :math:`Q`-mass brought down to 1 where it exceeds it.

    Rounding in the second differences (and clipping of float-noise atoms) can leave the Q-mass a
    few 1e-10 above its exact total; composed T times that would grow T-fold, so rescale.
    """
    total = float(m.sum()) + inf_mass
    if total > 1.0:
        if inf_mass >= 1.0 or m.sum() <= 0.0:       # everything beyond the grid (a very coarse step)
            inf_mass, m = min(inf_mass, 1.0), np.zeros_like(m) if inf_mass >= 1.0 else m
        else:
            m = m * ((1.0 - inf_mass) / float(m.sum()))
    return m, inf_mass


def _up(v):
    """The extended-precision ``v`` as a double, rounded up."""
    f = float(v)
    return float(np.nextafter(f, math.inf)) if f < v else f


def _exp_neg_tables(a, h, n):
    r"""``(blocks, within)``: :math:`e^{-(a + 64bh)}` for each block b of n grid points and :math:`e^{-kh}`, k < 64,
    in extended precision (``a`` extended), so that :math:`e^{-(a + sh)}` = ``blocks[s // 64] * within[s % 64]``
    (one extended-precision exponential an entry; an exponential a point would cost ten times a pair's
    construction)."""
    ld = np.longdouble
    hl = ld(h)
    with np.errstate(under="ignore", over="ignore"):
        within = np.exp(-(np.arange(_BLOCK, dtype=ld) * hl))
        blocks = np.exp(-(a + np.arange(-(-n // _BLOCK), dtype=ld) * (_BLOCK * hl)))
    return blocks, within


def _exp_neg_grid(a, h, n):
    r""":math:`e^{-(a + sh)}`, s = 0 .. n - 1, in extended precision, from :func:`_exp_neg_tables` (two roundings more
    a point)."""
    blocks, within = _exp_neg_tables(a, h, n)
    with np.errstate(under="ignore", over="ignore"):
        return (blocks[:, None] * within[None, :]).ravel()[:n]


def _p_mass(m, offset, shift, h):
    r"""The :math:`P`-mass :math:`\sum_s m_s e^{-x_s}` of the atoms at the pair's own losses
    :math:`x_s = (\text{offset} + s)h + \text{shift}`, in extended precision (not rounded to double: its last bits
    against 1 are slack that composition multiplies T-fold; double products alone err by about u in the total, 2e-9 at
    T = 8.5e6). As :math:`\sum_b e^{-(x_0 + 64bh)} \sum_k m_{64b+k} e^{-kh}` (:func:`_exp_neg_tables`): one pass."""
    ld = np.longdouble
    blocks, within = _exp_neg_tables(ld(offset) * ld(h) + ld(shift), h, m.size)
    padded = np.zeros(blocks.size * _BLOCK)
    padded[:m.size] = m
    with np.errstate(under="ignore", over="ignore"):
        return np.sum(blocks * np.einsum("ij,j->i", padded.reshape(blocks.size, _BLOCK).astype(ld), within))


_BLOCK = 64


def _reflected_slack(bad, xg):
    r""":math:`\max_j b_j e^{-x_j}`: the :math:`P`-side slack of the errors ``bad`` at the grid points.

    The remove direction reads the reflected pair: there an error :math:`b` at :math:`x_j` weighs
    :math:`e^{-x_j} b` (:math:`H_a(P\|Q) = a H_{1/a}(Q\|P) + 1 - a`).
    """
    with np.errstate(over="ignore"):
        return float(np.max(bad * np.exp(np.minimum(-xg, 700.0))))


def _drop_lowest(m, xg, excess):
    r"""``m`` without the :math:`Q`-mass at its lowest losses that carries P-mass ``excess`` (a copy).

    Where values within rounding of :math:`1 - y` far left of 0 give atoms whose P-mass (:math:`e^{-x}` times
    theirs) is noise, scaling every atom down by the P-excess would lower the profile everywhere by that share;
    the atoms with the most P-mass per unit of Q-mass are the lowest, and dropping them lowers the add profile only
    at losses below theirs and the remove profile only by P-mass that was not there. The Q-mass it leaves short
    of 1 is the reflected pair's P-mass missing (``q_short``, slack where it counts, below :math:`-x_{\rm top}`).
    """
    m = np.array(m, dtype=float)
    with np.errstate(over="ignore"):
        p = np.asarray(m, np.longdouble) * np.exp(-np.asarray(xg[:m.size], np.longdouble))
    cum = np.cumsum(p)
    k = int(np.searchsorted(cum, excess))          # atoms 0 .. k - 1 carry less than the excess
    m[:k] = 0.0
    if k < m.size:
        left = excess - (cum[k - 1] if k else 0.0)
        m[k] = max(float(m[k] - np.nextafter(float(left * np.exp(np.longdouble(xg[k]))), math.inf)), 0.0)
    return m


def _move_down(m, xg, h, offset, p_mass):
    r"""``(m, xg, offset)`` with the missing :math:`P`-mass :math:`1 - p` placed by moving :math:`Q`-mass down.

    Lowering the profile (and pinning the first point to 1 - y) leaves P-mass 1 - p_mass
    unplaced. At -infinity it would raise the profile left of x_0 above 1 - y, so the pair would
    no longer be dominated in the remove direction. Move Q-mass e from the atom with the most
    P-mass, x_a, down k steps instead: the profile only falls, and the P-mass grows by
    :math:`e\,e^{-x_a}(e^{kh} - 1) = 1 - p` (rounded up; the excess is recorded as slack). The grid is
    extended below :math:`x_0` if needed. ``m`` is changed in place.
    """
    with np.errstate(under="ignore", over="ignore"):
        a = int(np.argmax(m * np.exp(-np.maximum(xg, -700.0))))
    need = _up(1.0 - p_mass) * math.exp(xg[a]) * (1.0 + 1e-12)
    k = max(1, int(math.ceil(math.log1p(need / m[a]) / h)))
    e = min(need / math.expm1(k * h), m[a])
    if k > a:                                        # extend the grid below x_0
        m = np.concatenate([np.zeros(k - a), m])
        xg = np.concatenate([xg[0] - h * np.arange(k - a, 0, -1), xg])
        offset -= k - a
        a = k
    m[a] -= e
    m[a - k] += e
    return m, xg, offset


def shed_p_excess(m, xg, h, limit=1.0):
    r"""``(m', xg')``: Q-mass moved up the grid until the P-mass :math:`\sum_s m_s e^{-x_s}` (in extended
    precision) is at most ``limit``; the grid ``xg`` is extended upwards if needed.

    Moving Q-mass :math:`e` from the atom with the most P-mass, :math:`x_a`, up k steps only raises
    the profile, and lowers the P-mass by :math:`e\,e^{-x_a}(1 - e^{-kh})`: a dominating pair stays
    dominating, and its P-mass no longer lowers the profile left of its support (nor, reflected,
    exceeds the remove pair's Q-side total).
    """
    m = np.array(m, dtype=float)
    xg = np.array(xg, dtype=float)
    # in extended precision throughout: a margin for double products (4u) would be shed every step,
    # raising the profile T-fold (1.4e-3 of eps at T = 8.5e6)
    with np.errstate(under="ignore", over="ignore"):
        if m.size and xg[0] >= -700.0:
            # e^{-x} at x_j + (s - j) h from two short tables (:func:`_exp_neg_grid`), not an extended exponential a
            # point; anchored at the point nearest 0, whose rounding (u |x_j|) is the least
            j = int(np.argmin(np.abs(xg)))
            pm = m * _exp_neg_grid(np.longdouble(xg[j]) - j * np.longdouble(h), h, m.size)
        else:
            pm = m * np.exp(-np.maximum(xg, -700.0).astype(np.longdouble))
    total = np.sum(pm)
    for _ in range(4):
        excess = total - np.longdouble(limit)
        if not excess > 0:
            break
        a = int(np.argmax(pm))
        need = float(excess) * math.exp(xg[a]) * (1.0 + 1e-9) + 1e-300
        if not need < m[a]:
            break
        k = max(1, int(math.ceil(-math.log1p(-need / m[a]) / h)))
        e = min(need / -math.expm1(-k * h) * (1.0 + 1e-9), m[a])
        if a + k >= m.size:                          # extend the grid above its last point
            grow = a + k - m.size + 1
            m = np.concatenate([m, np.zeros(grow)])
            xg = np.concatenate([xg, xg[-1] + h * np.arange(1, grow + 1)])
            pm = np.concatenate([pm, np.zeros(grow, dtype=np.longdouble)])
        moved = float(np.longdouble(m[a]) - np.longdouble(m[a] - e))   # what leaves a, exactly
        m[a] -= e
        m[a + k] += moved
        # the two changed atoms' P-mass, and the total, updated in extended precision
        with np.errstate(under="ignore"):
            for j in (a, a + k):
                new = np.longdouble(m[j]) * np.exp(-np.longdouble(max(xg[j], -700.0)))
                total += new - pm[j]
                pm[j] = new
    return m, xg


def _fill_to(m, xg, inf_mass):
    """``(m', inf')`` with the atoms' extended-precision sum at most ``1 - inf_mass`` and within about
    1e-19 of it, and ``inf'`` >= 1 - (that sum) (rounded up). ``m`` must already sum to at most
    ``1 - inf_mass``; one atom at a loss >= 0 (its P-mass grows by at most the top-up) absorbs the rest."""
    m = np.array(m, dtype=float)
    target = np.longdouble(1.0) - np.longdouble(inf_mass)
    total = np.sum(m, dtype=np.longdouble)
    rest = target - total
    cand = np.flatnonzero((xg[:m.size] >= 0.0) & (m > 0.0))
    if rest > 0 and cand.size:
        # the smallest atom at least 2^12 times the top-up: its own rounding is then ~1e-4 of it
        big = cand[m[cand] >= float(rest) * 4096.0]
        j = int(big[np.argmin(m[big])]) if big.size else int(cand[np.argmax(m[cand])])
        new = float(np.longdouble(m[j]) + rest)
        for _ in range(8):
            if total + (np.longdouble(new) - np.longdouble(m[j])) <= target:
                break
            new = float(np.nextafter(new, 0.0))
        if total + (np.longdouble(new) - np.longdouble(m[j])) <= target and new >= m[j]:
            total += np.longdouble(new) - np.longdouble(m[j])
            m[j] = new
    short = target - total
    if short > 0:
        up = float(np.longdouble(inf_mass) + short)
        if np.longdouble(up) < np.longdouble(inf_mass) + short:
            up = float(np.nextafter(up, np.inf))
        inf_mass = up
    return m, inf_mass


def _grid_values(m, h):
    r"""Profile of the grid pair with atoms ``m`` at its own grid points: :math:`\sum_{s>j} m_s(1 - e^{-(s-j)h})`.

    In extended precision (where the platform has it): this is the check of the construction, and
    in double its own rounding (the difference of two sums near 1) would be measured as an error
    of the pair, then grown T-fold by composition.
    """
    cq, S, e = _tables_ld(m, h)
    return np.maximum(cq[1:] - e * S[1:], 0.0)


def _tables_ld(m, h):
    r"""Suffix tables of the atoms ``m`` in extended precision: Q-mass at and above each index, and
    :math:`S_k = \sum_{s \ge k} m_s e^{-(s-k)h}` (both with a trailing 0), and :math:`e^{-h}`."""
    ml = np.asarray(m, dtype=np.longdouble)
    e = np.exp(np.longdouble(-h))
    cq = np.concatenate([np.cumsum(ml[::-1])[::-1], np.zeros(1, dtype=np.longdouble)])
    S = np.concatenate([signal.lfilter(np.ones(1, dtype=np.longdouble), np.array([1.0, -e], dtype=np.longdouble),
                                       ml[::-1])[::-1], np.zeros(1, dtype=np.longdouble)])
    return cq, S, e
