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
from scipy import optimize, signal

from . import _checks
from .lossdist import PLD, UNIT_ROUNDOFF, GridError, check_kind, normalise

__all__ = ["from_profile", "regrid"]


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


def _increments(values, exact, dprofile):
    """Increments of ``values``: the exact ``dprofile`` where both ends are ``exact`` (unmodified profile), else differences."""
    d = np.diff(values)
    if dprofile is None:
        return d
    both = exact[:-1] & exact[1:]
    return np.where(both, dprofile, d)


def _total(a):
    """Sum of ``a`` in extended precision (pairwise, error about 1e-19 relative where the platform has
    it): masses whose last bits decide slack that composition multiplies T-fold."""
    return float(np.sum(np.asarray(a, dtype=np.longdouble)))


def _line(x):
    """max(1 - e^x, 0): the profile of a pair with all P-mass below x."""
    return np.maximum(-np.expm1(np.minimum(x, 0.0)), 0.0)


def from_profile(x, profile, nu_tail, kind, *, log_cell=None, dprofile=None, gap=None, h=None):
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
    """
    check_kind(kind)
    x = np.asarray(x, float)
    v = np.asarray(profile, float)
    if h is None:
        h = float(x[1] - x[0])
    else:
        h = float(_checks.positive("h", h))
        if not abs(h - (x[1] - x[0])) <= 1e-6 * h:
            raise ValueError(f"h must be the step of the grid x ({x[1] - x[0]!r}), got {h!r}")
    x0 = float(x[0])
    offset, shift = normalise(0, x0, h)
    xg = x0 + h * np.arange(x.size)
    line = _line(xg)
    if kind == "pessimistic":
        vv = np.maximum(v, line)
        dvv = _increments(vv, v >= line, dprofile)
        # on 1 - y at both ends (left of 0): the exact increment -e^{x_j} (e^h - 1); differences of the
        # rounded values would put atoms of u / h on the line
        on = v < line
        dvv = np.where(on[:-1] & on[1:] & (xg[1:] <= 0.0), -np.exp(np.minimum(xg[:-1], 0.0)) * math.expm1(h), dvv)
        m = _masses(dvv, x0, h)
        inf_mass = max(float(vv[-1]), 0.0)              # Q-mass beyond the grid goes to +infinity
        if np.any(m < 0):
            # float noise made an atom negative: raise the slopes right of it (the curve stays above
            # its chords, so still pessimistic). With u_j = y_j * slope, convexity is
            # u_j >= e^h u_{j-1}, i.e. r_j = log(-u_j) <= r_{j-1} + h: a running minimum of r_j - j h.
            em = math.expm1(h)
            u = np.concatenate([[-math.exp(x0 - h)], dvv / em])
            with np.errstate(divide="ignore"):
                r = np.log(np.maximum(-u, 0.0))
            j = np.arange(u.size)
            u2 = -np.exp(np.minimum.accumulate(r - j * h) + j * h)
            m = np.maximum(np.concatenate([u2[1:], [0.0]]) - math.exp(h) * u2, 0.0)
            inf_mass = max(inf_mass + em * float(np.sum(u2[1:] - u[1:])), 0.0)   # the end of the raised curve
        # x_0 may sit above losses of negligible probability: the curve is pinned to 1 - y at y_0,
        # which lowers it by v_0 - (1 - y_0); record that as slack so read-outs stay upper bounds
        pin = max(float(vv[0] - line[0]), 0.0)
    else:
        if log_cell is None:
            nu = np.asarray(nu_tail, float)
            with np.errstate(divide="ignore", over="ignore"):
                log_cell = xg[:-1] + np.log(np.maximum(nu[:-1] - nu[1:], 0.0))
        with np.errstate(over="ignore", under="ignore"):
            E = np.exp(np.minimum(np.asarray(log_cell, float), 0.0))   # e^{x_j} P(cell_j) <= Q(cell_j) <= 1
        gap_c = 0.25 * math.expm1(h) * E                              # chord-over-curve gap on cell j
        if gap is not None:
            gap_c = np.minimum(gap_c, np.asarray(gap, float))
        gap = gap_c
        c = np.zeros(x.size)
        c[:-1] = gap
        c[1:] = np.maximum(c[1:], gap)
        # A point that cannot be lowered by its full gap (it would cross 1 - y: P has mass 1) leaves
        # the chord of its cells unlowered at that end; the other end then needs the one-sided
        # bound (slope change) x (width) = 4 gap.
        one_sided = 4.0 * gap
        # points within float noise of 1 - y count as on it (w = 1 - y there, which is never above the
        # profile): left to noise, stuck and free points would alternate at the bottom of the grid
        # and their mixed increments give negative atoms
        noise = 64.0 * UNIT_ROUNDOFF * np.maximum(np.abs(v), np.abs(line))

        def on_line(c):
            # strictly below, or within noise of 1 - y in the run that starts at x_0
            return (v - c < line) | np.logical_and.accumulate(v - c < line + 4.0 * noise)

        for _ in range(4):
            stuck = on_line(c)
            need = np.zeros(x.size)
            need[1:] = np.where(stuck[:-1], one_sided, 0.0)
            need[:-1] = np.maximum(need[:-1], np.where(stuck[1:], one_sided, 0.0))
            if np.all(c >= need):
                break
            c = np.maximum(c, need)
        stuck = on_line(c)
        w = np.where(stuck, line, v - c)
        w[0] = line[0]                                                  # pinned: Q-mass exactly 1
        w[-1] = line[-1]                                               # no mass at +infinity
        # 1 - y bends at x = 0: if 0 lies strictly inside a cell whose ends both sit on 1 - y, the
        # chord there is above 1 - y and may be above the profile; no grid pair fixes that
        a = int(np.searchsorted(xg, 0.0)) - 1
        if 0 <= a < x.size - 1 and xg[a] < 0.0 < xg[a + 1] and w[a] <= line[a] and w[a + 1] <= line[a + 1]:
            raise GridError("x = 0 is not a grid point and both ends of its cell are pinned to 1 - y; "
                            "use a grid with a point at 0")
        lowered = ~stuck
        lowered[0] = lowered[-1] = False
        _tail_tangent(xg, w, lowered)
        dw = _increments(w, lowered, None if dprofile is None else dprofile - np.diff(c))
        # on 1 - y at both ends (left of 0): the exact increment -e^{x_j} (e^h - 1), not a difference
        on_line = ~lowered
        both = on_line[:-1] & on_line[1:] & (xg[1:] <= 0.0)
        dw = np.where(both, -np.exp(np.minimum(xg[:-1], 0.0)) * math.expm1(h), dw)
        m = _masses(dw, x0, h)
        neg = -float(np.sum(m[m < 0]))
        if neg > 1e-9:
            # a real kink (the lowering broke convexity): the greatest convex minorant of the values
            corr = _convex_minorant(xg, w)
            m = np.maximum(_masses(dw + np.diff(corr), x0, h), 0.0)
            w = w + corr
        elif neg > 0:
            # float noise in the atoms: clip it. The minorant would work on the values, whose
            # rounding (1e-16) becomes 1e-16 / h in the atoms; clipping raises the profile by at
            # most the clipped mass, which the check of the realized values below turns into slack
            m = np.maximum(m, 0.0)
        inf_mass = 0.0
        pin = 0.0
    pin_0 = pin
    # Rounding in the second differences (and clipping of float-noise atoms) can leave the Q-mass a
    # few 1e-10 above its exact total; composed T times that would grow T-fold, so rescale.
    total = float(m.sum()) + inf_mass
    if total > 1.0:
        if inf_mass >= 1.0 or m.sum() <= 0.0:       # everything beyond the grid (a very coarse step)
            inf_mass, m = min(inf_mass, 1.0), np.zeros_like(m) if inf_mass >= 1.0 else m
        else:
            m = m * ((1.0 - inf_mass) / float(m.sum()))
    if kind == "pessimistic":
        # Q-mass lost to rounding in the atoms (about u each) would leak from every composed step:
        # T-fold, the composed profile would fall below the true one. Scale the atoms up to the full
        # mass instead: that multiplies the profile by 1 + (the deficit), a relative change, which
        # only raises it (the P-mass this adds is taken back below, again only raising it).
        short = 1.0 - (_total(m) + inf_mass)
        if short > 0.0 and m.any():
            m = m * ((1.0 - inf_mass) / _total(m) * (1.0 + 4.0 * UNIT_ROUNDOFF))
            inf_mass += max(1.0 - (_total(m) + inf_mass), 0.0)
    if kind == "optimistic" and m.sum() < 1.0:
        # Q-mass lost to float noise and clipping: put it on x_0, where it changes no profile value
        # at a grid point (atoms count strictly above) and, with P-mass >= 1, none left of x_0
        # either. (Left out, it would make the reflected pair's P-mass short: then its remove
        # profile is no longer a lower bound.)
        m[0] += 1.0 - float(m.sum())
    with np.errstate(under="ignore", over="ignore"):
        pm = m * np.exp(-np.maximum(xg, -700.0))
    p_mass = _total(pm)
    if kind == "optimistic" and p_mass < 1.0 and m.any():
        # Lowering the profile (and pinning the first point to 1 - y) leaves P-mass 1 - p_mass
        # unplaced. At -infinity it would raise the profile left of x_0 above 1 - y, so the pair would
        # no longer be dominated in the remove direction. Move Q-mass e from the atom with the most
        # P-mass, x_a, down k steps instead: the profile only falls, and the P-mass grows by
        # e e^{-x_a} (e^{kh} - 1) = 1 - p_mass (rounded up; the excess is recorded below).
        a = int(np.argmax(pm))
        need = (1.0 - p_mass) * math.exp(xg[a]) * (1.0 + 1e-12)
        k = max(1, int(math.ceil(math.log1p(need / m[a]) / h)))
        e = min(need / math.expm1(k * h), m[a])
        if k > a:                                        # extend the grid below x_0
            m = np.concatenate([np.zeros(k - a), m])
            xg = np.concatenate([xg[0] - h * np.arange(k - a, 0, -1), xg])
            offset -= k - a
            a = k
        m[a] -= e
        m[a - k] += e
        with np.errstate(under="ignore", over="ignore"):
            pm = m * np.exp(-np.maximum(xg, -700.0))
        p_mass = _total(pm)
    if kind == "pessimistic" and p_mass > 1.0:
        # Rounding in the atoms (about u per atom, n u in total) can leave the P-mass a hair above 1,
        # which lowers the profile by y times the excess (T-fold once composed). Move Q-mass e from
        # the atom with the most P-mass, x_a, up k steps: the profile only rises, and the P-mass falls
        # by e e^{-x_a} (1 - e^{-kh}) = the excess (rounded up).
        a = int(np.argmax(pm))
        need = (p_mass - 1.0) * math.exp(xg[a]) * (1.0 + 1e-12)
        if need < m[a]:
            k = max(1, int(math.ceil(-math.log1p(-need / m[a]) / h)))
            e = min(need / -math.expm1(-k * h), m[a])
            if a + k >= m.size:                          # extend the grid above its last point
                m = np.concatenate([m, np.zeros(a + k - m.size + 1)])
                xg = np.concatenate([xg, xg[-1] + h * np.arange(1, a + k - xg.size + 2)])
            m[a] -= e
            m[a + k] += e
            with np.errstate(under="ignore", over="ignore"):
                pm = m * np.exp(-np.maximum(xg, -700.0))
            p_mass = _total(pm)
    if kind == "optimistic":
        # Rounding in the atoms (about u per atom, so n u in total: 1e-13 at n = 1e5) leaves the Q- or
        # P-mass a hair above 1. As slack it would grow T-fold; scaling all atoms down instead only
        # lowers both profiles (add and remove), which an optimistic pair may always do.
        over = max(_total(m), p_mass)
        if over > 1.0:
            m = m * ((1.0 - UNIT_ROUNDOFF) / over)    # each product rounds by u/2 at most: the sum stays <= 1
            with np.errstate(under="ignore", over="ignore"):
                pm = m * np.exp(-np.maximum(xg, -700.0))
            p_mass = _total(pm)
    # What the atoms actually give at the grid points against the values they were built from (a
    # pessimistic curve must not fall below them, an optimistic one must not rise above): the float
    # error of the construction, measured, becomes slack (read-outs widen by it, T-fold when composed)
    realized = _grid_values(m, h) + inf_mass
    intended = vv if kind == "pessimistic" else np.concatenate([_line(xg[:m.size - w.size]), w])
    bad = np.maximum(intended - realized if kind == "pessimistic" else realized - intended, 0.0)
    pin += float(np.max(bad))
    # The remove direction reads the reflected pair: there an error b at x_j weighs e^{-x_j} b
    # (H_a(P||Q) = a H_{1/a}(Q||P) + 1 - a), so it becomes P-side slack
    if kind == "pessimistic":
        bad[0] = max(bad[0], pin_0)
    with np.errstate(over="ignore"):
        pin_p = float(np.max(bad * np.exp(np.minimum(-xg, 700.0))))
    # Float rounding of values near y = 0 can leave the pair with P-mass slightly above 1; record it.
    p_excess = max(p_mass - 1.0, 0.0)
    if kind == "optimistic":
        # any P-mass still missing (float noise) would raise the profile left of x_0 by y (1 - p_mass),
        # and Q-mass above 1 raises every profile value by at most the excess: record both as slack
        miss = max(1.0 - p_mass, 0.0)
        q_excess = max(float(m.sum()) - 1.0, 0.0)
        return PLD(h, offset, m, inf_mass, 0.0, kind, slack_q=pin + q_excess + miss * math.exp(min(xg[0], 0.0)),
                   slack_p=p_excess + miss + pin_p, shift=shift)
    neg_inf = max(1.0 - p_mass, 0.0)
    return PLD(h, offset, m, inf_mass, neg_inf, kind, slack_q=pin, slack_p=p_excess + pin_p, shift=shift)


def _tail_tangent(xg, w, lowered):
    r"""Where the lowered values end in a run on 0 (the optimistic curve has no mass at
    :math:`+\infty`), replace the last ones by the tangent from the run's first point :math:`y_e` to the
    values before it, in place.

    Dropping from the last value :math:`w_r` to 0 within one cell takes an atom of slope change
    :math:`w_r/(y_e - y_r)`, far steeper than the curve's own slope where the tail is wider than the
    step: convexity fails, and the negative atom clipped would raise the curve by about
    :math:`w_r/h`, T-fold once composed. The tangent line of slope :math:`-\min_j w_j/(y_e - y_j)` lies
    below every value, so the curve stays dominated and convex.
    """
    idx = np.flatnonzero(lowered)
    if idx.size == 0:
        return
    e = int(idx[-1]) + 1
    if e >= w.size or xg[e] < 0.0 or w[e] != 0.0:
        return
    j = np.arange(e)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # log of w_j / (y_e - y_j)
        log_r = np.log(np.maximum(w[:e], 0.0)) - xg[:e] - np.log(np.expm1(xg[e] - xg[:e]))
    j0 = int(np.argmin(log_r))
    if j0 >= e - 1 or not np.isfinite(log_r[j0]):
        return
    jj = j[j0 + 1:]
    with np.errstate(over="ignore", under="ignore"):
        w[jj] = np.minimum(np.exp(log_r[j0] + xg[jj] + np.log(np.expm1(xg[e] - xg[jj]))), w[jj])
    lowered[jj] = False


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


def _convex_minorant(x, w):
    r"""Correction (<= 0) that turns ``w`` into the greatest convex minorant (in :math:`y = e^x`) of the polyline through :math:`(0, 1), (y_j, w_j)`.

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
    # block's total, so the correction returns to zero after every block)
    corr = np.zeros(w.size)
    corr[:k] = np.minimum(np.cumsum((s2 - s) * dy), 0.0)
    return corr


def regrid(pld, h, anchor=0.0):
    r"""The grid pair ``pld`` re-discretised on the coarser grid :math:`x_j = a + jh` (:math:`a` = ``anchor``), of the same kind.

    The second level of a two-level composition: compose :math:`T_1` steps on a fine grid, re-grid,
    compose the result :math:`K` times. With :math:`x_j < x_s \le x_{j+1}` the atoms of cell j:

    * **pessimistic**: each atom is split between the ends of its cell, keeping its :math:`Q`- and
      :math:`P`-mass: :math:`q_s \to q_s\,(e^{x_{j+1}-x_s}-1)/(e^h-1)` at :math:`x_j`, the rest at
      :math:`x_{j+1}` (connect the dots: the profile is unchanged at the grid points and a chord
      between them, so the coarse pair dominates the fine one);
    * **optimistic**: the fine profile at the grid points, lowered by the chord gap
      :math:`\tfrac14(e^h-1)\,e^{x_j}P(\text{cell}_j)` of the cells on either side (never below
      :math:`1 - y`), made convex, is the profile of a pair the fine one dominates; its missing
      :math:`P`-mass (a composed pair's window may have cut it) goes to :math:`-\infty`.

    Both errors are second order in ``h`` where the loss has a density, as for one step; an atom
    between two grid points costs first order (the optimistic side cannot split it), so put
    ``anchor`` on the largest atom (e.g. the unsampled steps' loss in the remove direction). The values come from positive terms
    only: :math:`\delta(x_j) - \delta(x_{j+1}) = \sum_{\text{cell}} q_s(1 - e^{x_j - x_s}) + (1 - e^{-h})\,G_{j+1}`
    with :math:`G_j = \sum_{x_s > x_j} q_s e^{x_j - x_s}`. The largest amount by which the result is
    on the wrong side of the fine pair (float noise) is measured at every kink of either profile and
    added to ``slack_q``, with the fine pair's slack.
    """
    if not isinstance(pld, PLD):
        raise TypeError(f"pld must be a PLD, got {type(pld).__name__}")
    hh = float(_checks.positive("h", h))
    if hh < pld.h:
        raise ValueError(f"h must be at least the pair's own step {pld.h!r} (regrid coarsens), got {hh!r}")
    m = np.asarray(pld.pmf, float)
    nz = np.flatnonzero(m > 0)
    if nz.size == 0:
        raise ValueError("regrid needs a pair with Q-mass at finite losses")
    a0 = float(_checks.real("anchor", anchor))
    m = m[nz[0]:nz[-1] + 1]
    xs = pld.losses[nz[0]:nz[-1] + 1]
    j0 = math.floor((xs[0] - a0) / hh) - 1
    n = int(math.ceil((xs[-1] - a0 - j0 * hh) / hh)) + 2
    j0, shift = normalise(j0, a0, hh)
    xc = (j0 + np.arange(n)) * hh + shift                    # the PLD's own losses
    while xc[0] >= xs[0]:                                    # (float rounding of the shift)
        j0 -= 1
        xc = np.concatenate([[xc[0] - hh], xc])
        n += 1
    if xc[-1] < xs[-1]:
        xc = np.concatenate([xc, [xc[-1] + hh]])
        n += 1
    cell = np.searchsorted(xc, xs, side="left") - 1          # x_c[cell] < x_s <= x_c[cell + 1]
    em = math.expm1(hh)
    if pld.kind == "pessimistic":
        low = m * (np.expm1(xc[cell + 1] - xs) / em)
        pmf = np.bincount(cell, weights=low, minlength=n) + np.bincount(cell + 1, weights=m - low, minlength=n)
        # the split keeps the mass up to rounding; what rounding lost goes to +infinity (see from_profile)
        short = max(_total(m) - _total(pmf), 0.0)
        out = PLD(hh, j0, pmf, pld.inf_mass + short, pld.neg_inf_mass, "pessimistic", shift=shift)
    else:
        at_s = _profile_at_atoms(m, pld.h) + pld.inf_mass        # the fine profile at its own kinks
        out = PLD(hh, j0, _dominated_atoms(m, xs, xc, cell, hh, pld.inf_mass, at_s), pld.inf_mass, 0.0,
                  "optimistic", shift=shift)
        with np.errstate(under="ignore", over="ignore"):
            p_fin = float(np.sum(out.pmf * np.exp(-np.maximum(xc, -700.0))))
        out = PLD(hh, j0, out.pmf, out.inf_mass, max(1.0 - p_fin, 0.0), "optimistic", shift=shift)
    # measured, not assumed: both profiles are piecewise linear in y = e^eps with kinks at their grid
    # points, so the largest amount by which the coarse pair is on the wrong side is at one of them
    # (left of both grids both are 1 - y P, linear: the first kink bounds it)
    if pld.kind == "pessimistic":
        # between grid points the coarse profile is a chord (linear in y) and the fine one convex:
        # fine - coarse is convex there, largest at the grid points
        wrong = max(float(np.max(_profile_ld(pld, xc) - _profile_ld(out, xc))), 0.0)
    else:
        e = np.union1d(xs, xc)
        # the exact fine pair is a pair, so its profile is >= 1 - y; where the computed one is below
        # (float noise of a composed pair, far left of 0, within its own slack) compare with 1 - y
        fine = np.maximum(_profile_ld(pld, e), _line(e))
        wrong = max(float(np.max(_profile_ld(out, e) - fine)), 0.0)
    return PLD(hh, j0, out.pmf, out.inf_mass, out.neg_inf_mass, out.kind, slack_q=pld.slack_q + wrong,
               slack_p=pld.slack_p, shift=shift)


def _profile_at_atoms(m, h):
    r"""Profile of the atoms ``m`` (on a grid of step ``h``) at their own grid points, from positive terms.

    :math:`\delta_s - \delta_{s+1} = (1 - e^{-h})\,S_{s+1}` with :math:`S_s = \sum_{t\ge s} m_t e^{-(t-s)h}`:
    relative accuracy about :math:`n u`, where the usual :math:`\sum_{t>s} m_t - e^{x_s}\sum_{t>s} m_t e^{-x_t}`
    loses :math:`n u` *absolute* to cancellation (1e-13 at :math:`n = 10^5`, where a composed pair's
    profile near :math:`1 - y` is 1e-6).
    """
    S = signal.lfilter([1.0], [1.0, -math.exp(-h)], np.asarray(m, float)[::-1])[::-1]
    drops = np.asarray(S[1:], dtype=np.longdouble) * -math.expm1(-h)
    return np.concatenate([np.cumsum(drops[::-1])[::-1], [0.0]]).astype(float)


def _profile_ld(pld, e):
    """The profile of ``pld`` at the losses ``e``, in extended precision (for measuring its error)."""
    cq, S, _ = _tables_ld(pld.pmf, pld.h)
    x = pld.losses
    idx = np.searchsorted(x, e, side="right")
    xs = np.where(idx < x.size, x[np.minimum(idx, x.size - 1)], np.inf)
    with np.errstate(over="ignore", under="ignore"):
        f = np.exp(np.minimum(np.asarray(e, dtype=np.longdouble) - xs, 0.0))
    return np.maximum(cq[idx] - f * S[idx], 0.0) + pld.inf_mass


def _dominated_atoms(m, xs, xc, cell, h, inf_mass, at_s):
    """Atoms on the grid ``xc`` of the optimistic coarse pair of :func:`regrid` (``at_s``: the fine
    profile at the fine losses ``xs``)."""
    n = xc.size
    em = math.expm1(h)
    with np.errstate(under="ignore"):
        w_ = np.exp(xc[cell] - xs)                               # in [e^-h, 1)
    a = np.bincount(cell, weights=m * (1.0 - w_), minlength=n - 1)[:n - 1]   # sum q_s (1 - e^{x_j - x_s})
    c = np.bincount(cell, weights=m * w_, minlength=n - 1)[:n - 1]           # e^{x_j} P(cell_j)
    g = np.concatenate([signal.lfilter([1.0], [1.0, -math.exp(-h)], c[::-1])[::-1], [0.0]])
    drop = a + (-math.expm1(-h)) * g[1:]                        # delta(x_j) - delta(x_{j+1}) >= 0
    v = np.concatenate([np.cumsum(drop[::-1])[::-1], [0.0]]) + inf_mass
    # Each kink s of the fine profile in cell j sits at lam_s = (y_s - y_j) / (y_{j+1} - y_j) with
    # g_s = chord - profile there; lowering the ends by d_j, d_{j+1} keeps the chord below the profile
    # iff d_j (1 - lam_s) + d_{j+1} lam_s >= g_s at every kink (the difference is linear between kinks).
    lam = np.expm1(xs - xc[cell]) / em
    g_s = np.maximum(v[cell] - drop[cell] * lam - at_s, 0.0)
    starts = np.flatnonzero(np.concatenate([[True], np.diff(cell) > 0]))
    gap = np.zeros(n - 1)
    gap[cell[starts]] = np.maximum.reduceat(g_s, starts)
    gap = np.minimum(gap, 0.25 * em * c)              # (slope change) x (width) / 4 bounds every g_s
    d = np.zeros(n)
    d[:-1] = gap
    d[1:] = np.maximum(d[1:], gap)
    line = _line(xc)
    room = np.maximum(v - line, 0.0)                  # a profile never goes below 1 - y
    d = np.minimum(d, room)
    # An end that cannot be lowered by its gap (it would cross 1 - y) leaves the chord too high near
    # it: lower the other end by what the kinks ask for, (g_s - d_b lam_s) / (1 - lam_s) on the left
    # and (g_s - d_a (1 - lam_s)) / lam_s on the right, as far as its room allows.
    for _ in range(8):
        da, db = d[cell], d[cell + 1]
        short = g_s - (da * (1.0 - lam) + db * lam)
        if not np.any(short > 0.0):
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            need_a = np.where((short > 0) & (db >= room[cell + 1]) & (lam < 1.0), (g_s - db * lam) / (1.0 - lam), 0.0)
            need_b = np.where((short > 0) & (da >= room[cell]) & (lam > 0.0), (g_s - da * (1.0 - lam)) / lam, 0.0)
        up = np.zeros(n)
        np.maximum.at(up, cell, need_a)
        np.maximum.at(up, cell + 1, need_b)
        d_new = np.minimum(np.maximum(d, up), room)
        if np.array_equal(d_new, d):
            break
        d = d_new
    w = v - d
    on = d >= room                                    # on 1 - y
    dw = -drop - np.diff(d)
    both = on[:-1] & on[1:]
    dw = np.where(both, np.diff(line), dw)
    dw = np.where(both & (xc[1:] <= 0.0), -np.exp(np.minimum(xc[:-1], 0.0)) * em, dw)
    w = np.where(on, line, w)
    u = dw / em                                                   # y_j x (slope right of y_j)
    u_prev = np.concatenate([[-(1.0 - w[0]) * math.exp(-h)], u])  # left of y_0: slope -(1 - w_0) / y_0
    atoms = np.concatenate([u, [0.0]]) - math.exp(h) * u_prev
    if -float(np.sum(atoms[atoms < 0])) > 1e-9:
        # a real kink (lowering broke convexity): the greatest convex minorant of the values
        w2 = w + _convex_minorant(xc, w)
        dw2 = dw + np.diff(w2 - w)
        u = dw2 / em
        u_prev = np.concatenate([[-(1.0 - w2[0]) * math.exp(-h)], u])
        atoms = np.concatenate([u, [0.0]]) - math.exp(h) * u_prev
    atoms = np.maximum(atoms, 0.0)
    total = float(atoms.sum()) + inf_mass
    if total > 1.0:
        atoms *= (1.0 - inf_mass) / float(atoms.sum())
    return atoms
