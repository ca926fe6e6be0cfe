r"""Re-discretising a grid pair on a coarser grid, each side kept certified (the second level of a
two-level composition, the DP-SGD chain of :mod:`dpmia.sgm`)."""

from __future__ import annotations

import math

import numpy as np
from scipy import signal

from .. import _checks
from ._convex import _convex_minorant
from ._discretise import _line_profile, _tables_ld, _total_ld
from ._lossdist import PLD, _normalise

__all__ = ["regrid"]


def regrid(pld, h, anchor=0.0):
    r"""The grid pair ``pld`` re-discretised on the coarser grid :math:`x_j = a + jh` (:math:`a` = ``anchor``), of the
    same kind.

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
    ``anchor`` on the largest atom (e.g. the unsampled steps' loss in the remove direction). The values come from
    positive terms only:
    :math:`\delta(x_j) - \delta(x_{j+1}) = \sum_{\text{cell}} q_s(1 - e^{x_j - x_s}) + (1 - e^{-h})\,G_{j+1}`
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
    a0 = _checks.scalar("anchor", anchor)
    m = m[nz[0]:nz[-1] + 1]
    xs = pld.losses[nz[0]:nz[-1] + 1]
    j0 = math.floor((xs[0] - a0) / hh) - 1
    n = int(math.ceil((xs[-1] - a0 - j0 * hh) / hh)) + 2
    j0, shift = _normalise(j0, a0, hh)
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
        short = max(_total_ld(m) - _total_ld(pmf), 0.0)
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
        fine = np.maximum(_profile_ld(pld, e), _line_profile(e))
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
    line = _line_profile(xc)
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
