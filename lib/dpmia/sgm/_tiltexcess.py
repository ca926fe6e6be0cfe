r"""How a single-step grid pair relates to the true pair, for the tilted far-tail read-outs (:mod:`._tilt`).

A grid pair :math:`A` is compared with certified reference values of the true pair :math:`B` at its grid points
(:mod:`._tiltstep`): :func:`_excess` splits what :math:`A`'s profile exceeds them by (dominated pair; falls short of
them, dominating pair) into a relative part :math:`\kappa`, an absolute part :math:`s`, and for a dominated pair an
absolute part weighted by :math:`e^{-\lambda\varepsilon}`,

.. math:: \delta_A(\gamma) \le (1+\kappa)\,\delta_B(\gamma) + s + a\,\gamma^{-\lambda}
    \qquad (\gamma = e^{\varepsilon} > 0).

The tensorisation identity :math:`H_\gamma(Q_1 \otimes Q_C \| P_1 \otimes P_C) = \mathbb E_{Q_C}[\delta_1(\gamma\,
p_C/q_C)]` carries each part through :math:`T` steps, one step at a time. The weighted part becomes
:math:`a\,\gamma^{-\lambda}\,\mathbb E_{Q_C}[(q_C/p_C)^{\lambda}] = a\,\gamma^{-\lambda} M_C(\lambda)`, with
:math:`M_C` the other factors' moment generating function of the loss under :math:`Q`: at most
:math:`T a \gamma^{-\lambda} \max(M_A, (1+\kappa) M_B)^{T-1}` in all (:func:`weighted_log_factors`). An excess
next to the bulk of the losses then costs a far tail almost nothing: at q = 6.8e-6, sigma = 0.89, 15,710 steps, the
dominated pair's 1e-20 a step at loss 0 cost delta(23.445) = 2.4e-188, as an absolute part, 1.7e-16 (a lower end of
0); weighted, it is far below the value.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import signal

from ._tiltstep import Lowered, lowered_values

#: Unit roundoff of a double.
_U = np.finfo(float).eps / 2.0


#: Thresholds on the relative excess: below one, a grid point's excess counts as relative (kappa), above
#: it as absolute (s). Every choice gives a certified bound; read-outs take the best.
_THETAS = (1e-13, 1e-11, 1e-9, 1e-7, 1e-5, 1e-3)


def _rel_abs(num, den):
    """Each point's relative and absolute excess of ``num`` over ``den``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(den > 0, num / den - 1.0, np.where(num > 0, np.inf, 0.0))
    return rel, np.maximum(num - den, 0.0)


def _split_excess(num, den, excess=None, log_weight=None):
    r"""``[(kappa, s, log_a), ...]``, one per threshold, with ``num <= (1 + kappa) den + s`` at every point (or, given
    ``excess``, each entry's relative and absolute excess as it stands), and ``log_a`` the log of the largest absolute
    excess counted in ``s`` times its entry's weight ``exp(log_weight)`` (``-inf`` without weights)."""
    rel, ab = _rel_abs(num, den) if excess is None else excess
    if log_weight is not None:
        with np.errstate(divide="ignore"):
            log_ab = np.log(ab) + log_weight
    out = []
    for th in _THETAS:
        small = rel <= th
        la = -math.inf if log_weight is None else float(np.max(log_ab[~small], initial=-np.inf))
        out.append((float(max(np.max(rel[small], initial=0.0), 0.0)), float(np.max(ab[~small], initial=0.0)), la))
    return out


def _grid_profile(one, with_inf=True):
    r"""``(g, rnd)``: the profile of a grid pair's atoms at its own grid points (atoms strictly above), plus its
    atom at :math:`+\infty` if ``with_inf``, without slack, and the relative bound on its rounding.

    The suffix recursions of :attr:`dpmia.pld.PLD._tables` (:math:`S_k = q_k + e^{-h}S_{k+1}`,
    :math:`D_k = D_{k+1} + (1 - e^{-h})S_{k+1}`: positive terms only) run in extended precision where the
    platform has it, so their rounding, at most :math:`8(n+8)` units of that precision, stays far below
    the double's (with :math:`10^5` points, about 1e-13 instead of 1e-10: grown :math:`T`-fold by
    :func:`_excess`'s factor :math:`(1+\kappa)^T`, the double's bound alone shifted eps by 1e-3 at a
    million steps); rounding the result to double adds :math:`2u`."""
    D, rnd = _suffix_profile(np.asarray(one.pmf, dtype=np.longdouble), one.h)
    if with_inf:
        D = D + np.longdouble(one.inf_mass)
    return D.astype(float), rnd + 2.0 * _U


def _suffix_profile(w, h):
    r"""``(D, rnd)``: the profile :math:`D_k = \sum_{j>k} w_j(1 - e^{-(j-k)h})` of the masses ``w`` (extended
    precision) on a grid of step ``h`` at each of its points, by the suffix recursions of :func:`_grid_profile`, and
    the bound :math:`8(n+8)` units of that precision on its relative rounding."""
    e = np.exp(np.longdouble(-h))
    S = signal.lfilter(np.ones(1, dtype=np.longdouble), np.array([1.0, -e], dtype=np.longdouble), w[::-1])[::-1]
    step = -np.expm1(np.longdouble(-h))
    D = np.concatenate([np.cumsum((S[1:] * step)[::-1])[::-1], np.zeros(1, dtype=np.longdouble)])
    return D, 8.0 * (w.size + 8) * float(np.finfo(np.longdouble).eps) / 2.0


def _excess(one, ref, lam=None):
    r"""``[(kappa, s, log_a), ...]`` relating a single-step grid pair :math:`A` (its atoms) to the true pair :math:`B`
    through the certified reference values ``ref`` at its grid points: :math:`\delta_B \le (1+\kappa)\,\delta_A + s`
    for a dominating pair, :math:`\delta_A \le (1+\kappa)\,\delta_B + s` for a dominated one, and (dominated, given
    the tilt ``lam``) also :math:`\delta_A \le (1+\kappa)\,\delta_B + e^{\mathrm{log\_a}}\gamma^{-\lambda}` (each
    absolute excess weighted by the largest :math:`\gamma^\lambda` where it holds; see the module). At the grid points
    this is the comparison with ``ref`` (the atoms' suffix sums rounded to the unsafe side by
    :func:`_grid_profile`'s bound); between them both grid profiles are affine in
    :math:`e^\varepsilon`, and the reference's linear interpolation bounds :math:`\delta_B` from the safe side: from
    above by convexity for a dominating pair, from below by construction for a dominated one (its values are
    the profile lowered by the chord gaps of their cells, :func:`dpmia.pld.from_profile`). So it holds
    everywhere: below the grid through the point :math:`\varepsilon = -\infty` (both profiles equal their
    :math:`Q`-totals there), above it through the last point (the true profile decreases, the atoms' is 0).

    Composition: :math:`\tilde A = A/(1+\kappa)` (both measures scaled) has profile
    :math:`\delta_A(\gamma)/(1+\kappa)` at every :math:`\gamma = e^\varepsilon`
    (:math:`H_\gamma(cQ\|cP) = c\,H_\gamma(Q\|P)`), and the tensorisation identity
    :math:`H_\gamma(Q_1 \otimes Q_C \| P_1 \otimes P_C) =
    \mathbb E_{Q_C}[\delta_1(\gamma\,p_C/q_C)]` (any non-negative measures) carries a one-step comparison through
    :math:`T` steps, one step at a time (the other factors' Q-totals at most :math:`(1+\kappa)^{-k}`, resp.
    :math:`(1+\kappa)^j`). For a dominated pair :math:`\delta_{B^T}(\varepsilon) \ge (1+\kappa)^{-T}
    \delta_{A^T}(\varepsilon) - s\sum_{k=1}^T(1+\kappa)^{-k}`: a factor, not a shift of :math:`\varepsilon` (which a
    far tail's slope :math:`\lambda` would multiply); for a dominating one :math:`\delta_{B^T}(\varepsilon) \le
    (1+\kappa)^T \delta_{A^T}(\varepsilon) + s\sum_{j<T}(1+\kappa)^j`, which the read-out bounds from above.

    A dominated pair's reference with ``points`` (:class:`._tiltstep.Lowered`) also bounds the true profile on each
    cell from below by its floor there (:func:`_floor_excess`); a cell is compared so where that is the smaller
    relative excess (where the lowering took both ends to 0, next to the bulk at tiny q), and its ends are then left
    out unless a neighbouring cell needs them."""
    g, rnd = _grid_profile(one, with_inf=one.kind != "pessimistic")
    # and the point e = -infinity (gamma = e^e = 0), where a pair's profile is its Q-total: 1 for the true
    # pair, the atoms' total c for the grid pair; with it the chords cover every e below the grid too
    c = float(np.sum(one.pmf.astype(np.longdouble))) + (one.inf_mass if one.kind != "pessimistic" else 0.0)
    g = np.append(g, c)
    if one.kind == "pessimistic":
        return _split_excess(np.append(np.asarray(ref, float), 1.0), g * (1.0 - rnd))
    up = g * (1.0 + rnd)
    rel, ab = _rel_abs(up, np.append(np.asarray(lowered_values(ref), float), 1.0))
    n = g.size - 1
    x = np.asarray(one.losses, float)
    # a point's weight, where it bounds the cells on either side: the largest gamma^lam there (its right cell's end)
    log_w = None if lam is None else lam * np.append(x[np.minimum(np.arange(1, n + 1), n - 1)], x[0])
    points = ref.points if isinstance(ref, Lowered) else None
    if points is None or points.size != n or n < 2:
        return _split_excess(None, None, (rel, ab), log_w)
    # each cell by the lowered values' chord (both ends), or the profile's floor on it (:func:`_floor_excess`) where
    # that is the smaller relative excess; the first point (the chord down to e = -infinity), the last and
    # e = -infinity as they stand
    # (only where the chord's relative excess exceeds the least threshold can the floor give a smaller one that
    # counts: elsewhere both ends are relative already)
    chord = np.maximum(rel[:n - 1], rel[1:n])
    cells = np.flatnonzero(chord > _THETAS[0])
    rf, af = _floor_excess(one, up[:n], np.asarray(points, float), cells)
    better = rf < chord[cells]
    cells, rf, af = cells[better], rf[better], af[better]
    floor = np.zeros(n - 1, bool)
    floor[cells] = True
    need = np.ones(n + 1, bool)
    need[1:n - 1] = ~(floor[:-1] & floor[1:])
    keep_w = None if lam is None else np.concatenate([log_w[need], lam * x[cells + 1]])
    return _split_excess(None, None, (np.concatenate([rel[need], rf]), np.concatenate([ab[need], af])), keep_w)


def _floor_excess(one, up, points, cells):
    r"""The relative and absolute excess of a dominated pair's atoms over the true profile's floor on each cell j of
    ``cells`` (between points j and j + 1).

    On cell j, :math:`y \in [y_j, y_{j+1}]` (:math:`y = e^\varepsilon`), the true profile is at least
    :math:`\max(1 - y, p_{j+1})` (``points``: lower values at the grid points; it decreases), and the atoms' is the
    chord of ``up`` (their values, rounded up). Split the cell at :math:`\tilde y`, the floor's kink
    :math:`y^* = 1 - p_{j+1}`: left of it the floor is at least the line :math:`1 - y` (both ends compared: the chord
    of the atoms against a line), right of it at least :math:`p_{j+1}`, and the atoms' profile at most its value at
    :math:`\tilde y`. Any :math:`\tilde y` in the cell gives a valid comparison; where the kink lies left of the
    cell (every cell above 0) :math:`\tilde y = y_j` and only the last one is left: the atoms at :math:`y_j` against
    :math:`p_{j+1}`."""
    x0 = np.asarray(one.losses, float)[cells]
    u0, u1, p1 = up[cells], up[cells + 1], points[cells + 1]
    h = one.h
    em = math.expm1(h)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        line = np.maximum(-np.expm1(np.minimum(x0, 0.0)), 0.0)
        width = np.exp(np.minimum(x0, 700.0)) * em                         # y_{j+1} - y_j
        t = np.clip((line - p1) / width, 0.0, 1.0)
        t = np.where(np.isfinite(t), t, 0.0)
        at = (u0 * (1.0 - t) + u1 * t) * (1.0 + 4.0 * _U)                 # the atoms' chord at y~ (>= 0 terms)
        z = x0 + np.log1p(t * em)
        # 1 - y~ from below: expm1 within 2u, its argument within 2u (|x_j| + h) absolute
        line_t = np.maximum(-np.expm1(np.minimum(z, 0.0)) * (1.0 - 4.0 * _U) - 4.0 * _U * (np.abs(x0) + h), 0.0)
    r1, a1 = _rel_abs(u0, line * (1.0 - 4.0 * _U))
    r2, a2 = _rel_abs(at, line_t)
    r3, a3 = _rel_abs(at, p1)
    left = t > 0.0
    rel = np.where(left, np.maximum(np.maximum(r1, r2), r3), r3)
    ab = np.where(left, np.maximum(np.maximum(a1, a2), a3), a3)
    return rel, ab


def _trimmed(one, ref, theta=1e-9, mass=1e-100):
    r"""A dominated single-step pair ``one`` without its atoms above the lowest grid point where their profile exceeds
    the reference values ``ref`` by more than ``theta`` relative (:func:`_excess`'s comparison), where those atoms
    hold at most ``mass`` of Q-mass; else ``one`` itself. Dropping atoms lowers the pair's profile at every
    :math:`\varepsilon` (:math:`H_\gamma` is linear in the measure, its integrand non-negative): the pair stays
    dominated. Why: far out, where the values the atoms are built from carry errors near their own size (the cells'
    P-mass errors times :math:`e^x`), the atoms can exceed the reference by 1e-4 relative, and the :math:`T`-fold
    factor :math:`(1+\kappa)^T` of :func:`_excess` then lowers a lower end by :math:`T\kappa` nats (at q = 0.01,
    sigma = 0.5, T = 1e4 replace-one: eps(1e-300)'s lower end 616.97 instead of 623.64)."""
    if one.kind != "optimistic" or one.inf_mass != 0.0 or ref is None or np.size(lowered_values(ref)) != one.pmf.size:
        return one
    g, rnd = _grid_profile(one, with_inf=True)
    r = np.asarray(lowered_values(ref), float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(r > 0, g * (1.0 + rnd) / r - 1.0, np.where(g > 0, np.inf, 0.0))
    bad = np.flatnonzero(rel > theta)
    if bad.size == 0:
        return one
    k = int(bad[0])
    if not float(np.sum(one.pmf[k + 1:])) <= mass:
        return one
    pmf = one.pmf.copy()
    pmf[k + 1:] = 0.0
    return dataclasses.replace(one, pmf=pmf)


def _dominated_sum(kappa, c, steps):
    r""":math:`(1+\kappa)^T \sum_{k=1}^T c^{k-1}(1+\kappa)^{-k} = \sum_{i=0}^{T-1} c^i (1+\kappa)^{T-1-i}`, rounded
    up: the weight of a dominated single step's absolute excess in a :math:`T`-fold read-out (:class:`TiltedPair`)."""
    a, b = math.log(c), math.log1p(max(kappa, 0.0))
    hi, lo = max(a, b), min(a, b)
    d = hi - lo
    # sum_i e^{i a + (T - 1 - i) b} = e^{(T - 1) hi} sum_j e^{-j d} = e^{(T - 1) hi} (1 - e^{-T d}) / (1 - e^{-d})
    if (steps - 1) * hi > 700.0:
        return math.inf                       # (a factor beyond e^700: such a split is vacuous, and skipped)
    geo = steps if d * steps < 1e-12 else math.expm1(-steps * d) / math.expm1(-d)
    return math.exp((steps - 1) * hi) * geo * (1.0 + 8.0 * _U) * (1.0 + 2e-12)


def _dominating_slack(s, c, steps):
    r""":math:`T s\,c^{T-1}` (rounded up; ``inf`` beyond e^700): a dominating single step's absolute excess ``s`` in a
    :math:`T`-fold read-out, inside the factor :math:`(1+\kappa)^T`, with :math:`c \ge 1` its atoms' Q-total (the other
    factors of the one-at-a-time swap have Q-total at most :math:`c(1+\kappa)` each; float sums leave c up to a few ulps
    above 1)."""
    lg = (steps - 1) * math.log(c)
    return math.inf if lg > 700.0 else steps * s * math.exp(lg) * (1.0 + 8.0 * _U)




def weighted_log_factors(one, ref, steps, lam, parts):
    r"""For each split ``(kappa, s, log_a)`` of ``parts`` (:func:`_excess` at the tilt ``lam``), the log of
    :math:`W = T a \max(M_A, (1+\kappa) M_B)^{T-1}`, rounded up: a dominated single step's weighted excess
    :math:`a\gamma^{-\lambda}` composed :math:`T` times is at most :math:`W e^{-\lambda\varepsilon}` (the module).
    :math:`M_A` is the grid pair's atoms' moment generating function at ``lam``, :math:`M_B` the true step's
    (``ref.log_mgf``, :class:`._tiltstep.Lowered`); ``inf`` where that is not bounded, or there is nothing to
    weigh."""
    log_mgf = getattr(ref, "log_mgf", None)
    keep = one.pmf > 0
    if log_mgf is None or not lam > 0.0 or not keep.any() or not any(math.isfinite(la) for _, _, la in parts):
        return [math.inf] * len(parts)
    lmb = log_mgf(lam)
    if not math.isfinite(lmb):
        return [math.inf] * len(parts)
    x = np.asarray(one.losses, float)[keep]
    z = np.log(one.pmf[keep]) + lam * x
    mx = float(np.max(z))
    lma = mx + math.log(float(np.sum(np.exp(z - mx))))
    # (each term's exponent within (|z| + 2) u, the sum within its length times u, the log within u of its value)
    lma += 4.0 * _U * (8.0 + float(np.max(np.abs(z))) + abs(mx) + z.size)
    out = []
    for k, _, la in parts:
        lg = la + math.log(steps) + (steps - 1) * max(lma, math.log1p(k) + lmb)
        out.append(lg + 1e-12 * (1.0 + abs(lg)) if math.isfinite(lg) else math.inf)
    return out
