r"""Far tails of long runs by a tilted composition in two levels, certified by measurement.

One level (:mod:`._tilt`) composes the tilted single-step grid pair :math:`T` times on the grid whose step the far
tail's error model asks for (second order, about :math:`T(\lambda h)^2`), over a window the composed tilted loss sets
(its spread grows as :math:`\sqrt T`): at :math:`T = 10^7`, q = 1e-3, sigma = 1 that is four million points. Two
levels compose :math:`T_1` steps on that fine grid (a window about :math:`\sqrt{T_1/T}` as long), move the composite
to a grid :math:`m` times coarser, and compose it :math:`K = T/T_1` times there (a window :math:`m` times shorter in
points); the coarse grid adds about :math:`K(\lambda m h)^2`, a quarter of the fine error where :math:`m^2 = T_1/4`.

The composite :math:`\tilde X` (the fine FFT's output, a non-negative measure) goes to the coarse grid twice:

* :func:`_split` **(dominating)**: each atom split between the coarse points around it, keeping its :math:`Q`- and
  :math:`P`-mass (connect the dots: the coarse profile interpolates the fine one at the coarse points by chords);
* :func:`_lowered` **(dominated)**: the same atoms less the second differences of a lowering :math:`d_k` of the
  profile at each coarse point by the chord gaps of the cells on either side, measured on the fine profile (each at
  most :math:`\tfrac14(e^h - 1)\,e^{x_j}P(\text{cell}_j)`, slope change times width over 4), so that the chords lie
  below the fine profile; negative atoms (float noise at the window's ends, or a sharp edge of the composite) are
  carried to the next point up with their untilted mass, which only lowers the profile.

Neither construction is trusted: :func:`_measured` compares the profiles of the coarse atoms and of :math:`\tilde X` at
every fine grid point (both are piecewise linear in :math:`e^\varepsilon` with kinks at fine points, the coarse points
being every :math:`m`-th of them) and at :math:`\varepsilon = -\infty` (their Q-totals), summed in extended precision,
as :func:`._tiltexcess._excess` compares a single step with its reference values. That gives splits
:math:`(\kappa, s)` with
:math:`\delta_{\tilde X} \le (1+\kappa)\,\delta_C + s` for the dominating coarse pair :math:`C` and
:math:`\delta_Y \le (1+\kappa)\,\delta_{\tilde X} + s` for the dominated one :math:`Y`, which the tensorisation
identity carries through the :math:`K` coarse steps as through :math:`T` single steps (:class:`._tilt.TiltedPair`).
The fine FFT's misplaced tilted mass :math:`\eta` (:attr:`dpmia.pld.PLD.slack_q`) makes :math:`\tilde X^K` differ from
the exact composite's :math:`K`-th power by at most :math:`(1 + 2\eta + 16T_1u)^K - 1` of tilted mass, weighed at the
read-out as any misplaced tilted mass. So a read-out is: the single step against the true pair (:math:`T`-fold, as one
level), the exact composite against :math:`\tilde X` (that misplaced mass), :math:`\tilde X` against the coarse pair
(:math:`K`-fold) and the coarse composition's own window and float error.
"""

from __future__ import annotations

import math

import numpy as np

from .. import pld as _pld
from ._chain import _near_root_divisor
from ._tilt import _U, TiltedPair, _budget, _saddle, _tilted
from ._tiltexcess import _THETAS, _suffix_profile

#: Runs of at least this many steps may be composed in two levels.
_LEVEL_STEPS = 2**16


def _plan(steps):
    r"""``(T1, m)``: :math:`T_1` a divisor of ``steps`` near its square root (no remainder to compose apart) and
    :math:`m = \lfloor\sqrt{T_1}/2\rfloor`; ``None`` below :data:`_LEVEL_STEPS` steps, or where no such divisor gives
    :math:`m \ge 4` and :math:`K \ge 16`."""
    if steps < _LEVEL_STEPS:
        return None
    t1 = _near_root_divisor(steps)
    m = int(math.sqrt(t1) / 2.0)
    if steps % t1 or m < 4 or steps // t1 < 16:
        return None
    return t1, m


def _split(r, m, hf, lam):
    r"""Coarse atoms (tilted, at every ``m``-th point of the fine grid of step ``hf``, from its first) of the fine
    tilted masses ``r``: an atom at offset :math:`f` above coarse point :math:`x_j` (:math:`0 < f < h`) gives
    :math:`Q`-share :math:`w = (e^{h-f} - 1)/(e^h - 1)` to :math:`x_j` and :math:`1 - w = e^{h-f}(e^f - 1)/(e^h - 1)`
    to :math:`x_{j+1}` (positive terms), tilted by :math:`e^{-\lambda f}` and :math:`e^{\lambda(h - f)}`."""
    n, h = r.size, m * hf
    i = np.arange(n)
    cell, frac = i // m, i % m
    nc = _points(n, m)
    f = np.arange(m) * hf
    em = math.expm1(h)
    t_lo = np.expm1(h - f) / em * np.exp(-lam * f)
    t_hi = np.exp(h - f) * np.expm1(f) / em * np.exp(lam * (h - f))
    inner = frac > 0
    return (np.bincount(cell, weights=r * t_lo[frac], minlength=nc)
            + np.bincount(cell[inner] + 1, weights=r[inner] * t_hi[frac[inner]], minlength=nc))


def _points(n, m):
    """The number of coarse points over ``n`` fine ones: every ``m``-th from the first, the last at or above the last
    fine point."""
    return -(-(n - 1) // m) + 1


def _lowered(r, m, hf, lam):
    r"""Coarse atoms of the dominated pair (see the module): :func:`_split`'s less
    :math:`[(d_{k-1}e^{\lambda h} - d_k)/(1 - e^{-h}) - (d_k - d_{k+1}e^{-\lambda h})/(e^h - 1)]` (the second
    differences of the lowering, each :math:`d` tilted at its own point), :math:`d_k` the larger of the gaps of
    cells :math:`k-1` and :math:`k` (:func:`_gaps`), 0 at the first and last points; negative atoms carried upward."""
    n, h = r.size, m * hf
    nc = _points(n, m)
    gap, first, last = _gaps(r, m, hf, lam, nc)
    d = np.maximum(gap, np.concatenate([[0.0], gap[:-1]]) * math.exp(lam * h))
    if nc > 2:
        # (next to an end held at 0 the lowering falls to 0 across the cell: its other end covers the gap over t)
        d[1], d[-2] = max(d[1], first), max(d[-2], last)
    d[0] = d[-1] = 0.0
    dm = np.concatenate([[0.0], d[:-1]]) * math.exp(lam * h)
    dp = np.concatenate([d[1:], [0.0]]) * math.exp(-lam * h)
    y = _split(r, m, hf, lam) - ((dm - d) / -math.expm1(-h) - (d - dp) / math.expm1(h))
    # a negative atom moved to the next point up, its untilted mass kept (its tilted mass grows by e^{lam h}): for
    # e^eps below both points the profile changes by u e^eps (e^{-x_k} - e^{-x_{k+1}}) <= 0 (u < 0 its untilted
    # mass), between them by u (1 - e^{eps - x_{k+1}}) <= 0
    up = math.exp(lam * h)
    for k in np.flatnonzero(y < 0.0):
        if y[k] < 0.0:
            j = k
            while j + 1 < y.size and y[j] < 0.0:
                y[j + 1] += y[j] * up
                y[j] = 0.0
                j += 1
    # (what is left negative at the top point is set to 0: that raises the coarse profile below it, which the
    # measurement (:func:`_measured`) then finds; where the last cell holds atoms, its split keeps that point positive)
    return np.maximum(y, 0.0)


def _gaps(r, m, hf, lam, nc):
    r"""``(gap, first, last)``: per coarse cell :math:`k` the largest gap between the chord of the fine masses'
    profile across it (in :math:`e^\varepsilon`) and that profile at the fine points inside, tilted at the cell's
    left point; and for the first and last cells the largest gap over the share :math:`t` (resp. :math:`1 - t`) of the
    cell, the lowering its inner end needs where the other is held at 0. Each at most the generic bound
    :math:`\tfrac14(e^h - 1)\,e^{x_k}P(\text{cell}_k)` (slope change times width over 4), which it replaces where
    the mass does not sit mid-cell: at a sharp lower edge of the composite (73,564 steps at q = 6.9e-5, sigma 0.35)
    the generic bound lowered atoms of 1e-4 by 2e-3 of tilted mass. The profile is summed in extended precision
    (:func:`_fine_profile`) and each gap raised by 1e-15 of the cell's largest value for its rounding; the
    measurement (:func:`_measured`) checks the result in any case. Where the untilting leaves the extended range the
    generic bound."""
    n, h = r.size, m * hf
    i = np.arange(n)
    cell, frac = i // m, i % m
    g = np.exp(-(1.0 + lam) * np.arange(m) * hf)
    c = np.bincount(cell, weights=np.where(frac > 0, r * g[frac], 0.0), minlength=nc)
    top = (frac == 0) & (i >= m)
    c += np.bincount(cell[top] - 1, weights=r[top] * math.exp(-(1.0 + lam) * h), minlength=nc)
    generic = 0.25 * math.expm1(h) * c
    span = (nc - 1) * m + 1
    if not lam * span * hf <= 11_000.0 or nc < 3:
        return generic, 4.0 * generic[0] * math.exp(lam * h), 4.0 * generic[-2] if nc > 1 else 0.0
    x = np.arange(span, dtype=np.longdouble) * np.longdouble(hf)
    w = np.zeros(span, dtype=np.longdouble)
    w[:n] = r
    prof = _fine_profile(w * np.exp(-np.longdouble(lam) * x), hf)[0][:span]
    # each cell's fine points k m .. (k + 1) m: the chord through its ends at the share t of e^eps across it
    t = np.expm1(np.arange(m + 1, dtype=np.longdouble) * np.longdouble(hf)) / np.expm1(np.longdouble(h))
    rows = np.lib.stride_tricks.sliding_window_view(prof, m + 1)[::m]
    chord = rows[:, :1] * (1.0 - t) + rows[:, -1:] * t
    pad = 1e-15 * np.max(rows, axis=1)
    gaps = np.maximum(chord - rows, 0.0)
    exact = np.max(gaps, axis=1) + pad
    tilt = np.exp(np.longdouble(lam) * np.arange(nc - 1, dtype=np.longdouble) * np.longdouble(h))
    gap = np.append(np.minimum(np.asarray(exact * tilt, float), generic[:-1]), generic[-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        first = float(np.max(gaps[0, 1:] / t[1:]) + pad[0])
        last = float((np.max(gaps[-1, :-1] / (1.0 - t[:-1])) + pad[-1]) * tilt[-1])
    # (the first cell's lowering falls on its right end: tilted there)
    return gap, min(first, 4.0 * generic[0]) * math.exp(lam * h), min(last, 4.0 * generic[-2])


def _fine_profile(w, hf):
    r"""``(D, rnd)``: the profile :math:`D_i = \sum_{j>i} w_j(1 - e^{-(j-i)h_f})` of the masses ``w`` (extended
    precision) at each fine point and at :math:`\varepsilon = -\infty` (last entry: the total), by the suffix
    recursions of :func:`._tiltexcess._suffix_profile` (positive terms), and the bound on its relative rounding."""
    D, rnd = _suffix_profile(w, hf)
    return np.append(D, np.sum(w)), rnd + 8.0 * _U


def _measured(r, coarse, m, hf, lam, dominating):
    r"""Splits ``[(kappa, a), ...]`` relating the fine tilted masses ``r`` and the ``coarse`` atoms (see the module),
    one per threshold of :data:`._tiltexcess._THETAS`, and the larger of their tilted totals.

    With :math:`N` and :math:`D` the profiles compared (:math:`\tilde X` and the coarse pair's: ``dominating``, the
    coarse one's is :math:`D`), untilted by :math:`e^{-\lambda(x - x_0)}` and summed in extended precision
    (:func:`_fine_profile`, its rounding moved to the safe side; the ratio's own rounding, about 1e-19, is inside that
    bound's 8u): where :math:`N/D - 1` is at most the threshold it
    counts in :math:`\kappa`, elsewhere its excess :math:`v = N - (1+\kappa)D` in
    :math:`a = \max_i \max(v_i, v_{i+1})\,e^{\lambda(x_{i+1} - x_0)}` (and :math:`\max(v_{tot}, v_0)` for the point
    :math:`\varepsilon = -\infty` and the segment below the grid). Both profiles are linear in :math:`e^\varepsilon`
    between fine points, so :math:`N \le (1+\kappa)D + a\,F e^{-\lambda\varepsilon}` at every
    :math:`\varepsilon`, with :math:`F` the untilted scale of a unit tilted mass at 0: a term the tensorisation
    identity carries through :math:`K` steps as :math:`K a F e^{-\lambda\varepsilon} M^{K-1}` (each other factor
    contributes its MGF :math:`M` at :math:`\lambda`), i.e. as a misplaced tilted mass of :math:`K a M_t^{K-1}`
    (:math:`M_t` the tilted totals) read without the peak factor."""
    n = (coarse.size - 1) * m + 1
    if not lam * (n - 1) * hf <= 11_000.0:
        # (the untilting would leave the extended range, e^-11356: the masses there would count as 0, unmeasured)
        return [(0.0, math.inf)] * len(_THETAS), max(float(np.sum(r)), float(np.sum(coarse)))
    x = np.arange(n, dtype=np.longdouble) * np.longdouble(hf)
    tilt = np.exp(-np.longdouble(lam) * x)
    wf = np.zeros(n, dtype=np.longdouble)
    wf[:r.size] = r
    wc = np.zeros(n, dtype=np.longdouble)
    wc[::m] = coarse
    (df, rnd), (dc, _) = _fine_profile(wf * tilt, hf), _fine_profile(wc * tilt, hf)
    num, den = (df, dc) if dominating else (dc, df)
    num, den = num * (1.0 + rnd), den * (1.0 - rnd)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = np.where(den > 0, num / den - 1.0, np.where(num > 0, np.inf, 0.0))
    # Only the points above the least threshold can count in a: a point's excess v_j enters the segments on either
    # side, at most as v_j e^{lam (x_{j+1} - x_0)} (its right-hand one; e^{lam x} grows), the totals' entry (last) as
    # v itself, for the segment below the grid; the rest are relative at every threshold
    big = np.flatnonzero(rel > _THETAS[0])
    least = float(max(np.max(rel, initial=0.0, where=rel <= _THETAS[0]), 0.0))
    rb, nb, db = rel[big], num[big], den[big]
    with np.errstate(over="ignore"):
        grow = np.where(big < n, np.exp(np.longdouble(lam) * (big + 1).astype(np.longdouble) * np.longdouble(hf)), 1.0)
    out = []
    for th in _THETAS:
        small = rb <= th
        kap = max(least, float(np.max(rb[small], initial=0.0))) * (1.0 + 1e-12)
        v = np.where(small, 0.0, np.maximum(nb - (1.0 + kap) * db, 0.0))
        a = float(np.max(v * grow, initial=0.0))
        # (a factor e^{lam x} beyond the extended range, times an excess rounded to 0, is NaN: no bound from it)
        out.append((kap, a * (1.0 + 1e-12) if math.isfinite(a) else math.inf))
    return out, max(float(np.sum(wf)), float(np.sum(wc))) * (1.0 + 1e-12)


class LeveledPair(TiltedPair):
    r"""A :class:`._tilt.TiltedPair` read from a two-level composition: ``inner``, the splits
    ``[(K log(1 + kappa), mass), ...]`` relating the fine composite :math:`\tilde X` to the coarse pair over :math:`K`
    coarse steps (:func:`_measured`: ``mass`` a tilted mass weighed as misplaced, without the peak factor), and
    ``log_fine``: the log of :math:`M^T`, the weight at :math:`\varepsilon = 0` of a unit of tilted mass of
    :math:`\tilde X^K`, with ``moved`` the mass by which :math:`\tilde X^K` may differ from the exact composite's
    :math:`K`-th power (read with the peak factor, as :meth:`._tilt.TiltedPair._main` reads its slack)."""

    def __init__(self, one, ref, steps, lam, lm, comp, lo, inner, log_fine, moved):
        super().__init__(one, ref, steps, lam, lm, comp, lo)
        self.inner, self.log_fine, self.moved = inner, log_fine, moved
        # (the coarse grid's stated losses within a few ulps of the fine points they stand for: their weights' error,
        # and the factor 1 - e^{eps - y}, at least about the coarse step where it is not 0)
        ymax = float(np.max(np.abs(self.y)))
        self.rho += 16.0 * (lam * ymax + ymax / comp.h) * _U

    def _weight(self, e, mass, peak=True):
        """The read-out weight at ``e`` of ``mass`` misplaced tilted mass of :math:`\tilde X^K`."""
        if not mass > 0.0:
            return np.zeros(np.shape(e))
        with np.errstate(over="ignore"):
            lg = self.log_fine - self.lam * e + (self._log_peak if peak else 0.0) + math.log(mass)
            return np.exp(np.minimum(lg, 709.0))

    def delta(self, eps):
        e = np.atleast_1d(np.asarray(eps, float))
        pess = self.kind == "pessimistic"
        best = np.full(e.size, 1.0 if pess else 0.0)
        at = e + self.log_c if pess else e
        main, err, capped = self._main(at)
        fine = self._weight(at, self.moved)
        for k_in, m_in in self.inner:
            if k_in > 1.0 or not math.isfinite(m_in):
                continue                      # (a factor above e, or no bound: vacuous)
            extra = self._weight(at, m_in, peak=False)
            bad = capped | (fine >= 1e300) | (extra >= 1e300)
            with np.errstate(over="ignore", invalid="ignore"):
                if pess:
                    val = math.exp(k_in) * (main * (1.0 + self.rho) + err + extra) + fine
                else:
                    val = np.where(bad, 0.0, math.exp(-k_in) * (main * (1.0 - self.rho) - err) - extra - fine)
            for shift, slack, log_w in self.splits:
                if shift > 1.0:
                    continue
                with np.errstate(over="ignore"):
                    if pess:
                        a = val * math.exp(-self.log_c) + slack
                        best = np.minimum(best, a * math.exp(shift) * (1.0 + 4.0 * _U))
                    else:
                        w, big = self._weighted(at, log_w)
                        a = np.where(big, 0.0, val - slack - w)
                        best = np.maximum(best, a * math.exp(-shift) * (1.0 - 4.0 * _U))
        return np.clip(best, 0.0, 1.0)


def leveled_direction(pe, op, refs, steps, eps_c, lo, tail, cap, d_est=None):
    r"""The dominating and dominated :class:`LeveledPair` of one direction (as :func:`._tilt._tilted_direction`), or
    ``None`` where two levels do not apply (:func:`_plan`, the grids not shared, a coarse step whose tilt
    :math:`\lambda m h` exceeds 1/2) or are not shorter: the fine window and the coarse one (about the one-level
    window over :math:`m`) together above half the one-level window, or the fine window (:math:`T_1` steps) above a
    fifth of it. That last is a composite far from its central limit, whose window the single step's reach sets: at
    q 1e-5 and 1e-6, sigma 0.5 to 0.8, the composite's window was 0.3 to 1 times one level's (about
    :math:`\sqrt{T_1/T}` = 0.02 to 0.03 for a sum near its central limit), and its coarse grid, too coarse for the
    large steps the composite holds, left brackets up to ten times wider at up to four times the cost (eps at
    (1e-6, 0.5, 1e6, 1e-10): 16.6 s against 3.8 s); where it worked the ratio was 0.02 to 0.17."""
    plan = _plan(steps)
    if plan is None or pe.shift != op.shift:
        return None
    t1, m = plan
    k = steps // t1
    keep = pe.pmf > 0
    with np.errstate(divide="ignore"):
        lam = _saddle(np.log(pe.pmf[keep]), pe.losses[keep], steps, eps_c)
    hf = pe.h
    if not lam * m * hf <= 0.5:
        return None
    (a, la), (b, lb) = _tilted(pe, lam), _tilted(op, lam)
    tail, fine = _budget(tail, d_est, steps, max(la, lb), lam, eps_c, hf)
    a, b = _pld.same_support(a, b)
    n_one = _pld.composed_length(a, steps, tail=tail)
    n_fine = _pld.composed_length(a, t1, tail=tail / (4 * k))
    if n_fine > 0.2 * n_one or n_fine + n_one / m > 0.5 * n_one:
        return None
    fa, fb = _pld.compose_pair(a, b, t1, tail=tail / (4 * k), max_fft=cap, fine=fine)
    if lam * fa.pmf.size * hf > 10_000.0:
        return None                 # (the measurement's untilting would leave the extended range: e^-11356 and below)
    x0 = float(fa.losses[0])
    coarse = _split(fa.pmf, m, hf, lam), _lowered(fb.pmf, m, hf, lam)
    out = []
    for f, lm, one, ref, dominating, atoms in ((fa, la, pe, refs[0], True, coarse[0]),
                                               (fb, lb, op, refs[1], False, coarse[1])):
        splits, total = _measured(f.pmf, atoms, m, hf, lam, dominating)
        # (the other factors' tilted totals, at most the larger total each: K a M_t^(K-1), see _measured)
        lg = (k - 1) * math.log(max(total, 1.0))
        grow = math.exp(lg) if lg < 700.0 else math.inf
        inner = [(k * math.log1p(kap), 0.0 if a == 0.0 else k * a * grow * (1.0 + 1e-12)) for kap, a in splits]
        size = float(np.sum(atoms))
        off = math.floor(x0 / (m * hf))
        shift = min(max(x0 - off * (m * hf), 0.0), math.nextafter(m * hf, 0.0))
        coarse = _pld.PLD(m * hf, off, atoms / size, 0.0, 0.0, one.kind, shift=shift)
        out.append((coarse, math.log(size), lm, one, ref, inner, f.slack_q))
    (ca, sa, la_, one_a, ref_a, in_a, sl_a), (cb, sb, lb_, one_b, ref_b, in_b, sl_b) = out
    ca, cb = _pld.same_support(ca, cb)
    comp_a, comp_b = _pld.compose_pair(ca, cb, k, tail=0.5 * tail, max_fft=cap, fine=fine)
    pairs = []
    for comp, s_log, lm, one, ref, inner, sl, single in ((comp_a, sa, la_, one_a, ref_a, in_a, sl_a, a),
                                                         (comp_b, sb, lb_, one_b, ref_b, in_b, sl_b, b)):
        # the exact composite X has total t^T1 (t the tilted single step's, a few ulps per atom from 1), the computed
        # one is within sl of it: (t^T1 + sl)^K - t^T, the mass X~^K may differ from X^K by
        log_t = t1 * math.log(float(np.sum(single.pmf.astype(np.longdouble))) * (1.0 + 1e-12))
        moved = math.exp(k * log_t) * math.expm1(k * math.log1p(sl * math.exp(-log_t))) * (1.0 + 1e-12)
        pairs.append(LeveledPair(one, ref, steps, lam, lm + s_log / t1, comp, lo, inner, steps * lm, moved))
    return pairs[0], pairs[1]
