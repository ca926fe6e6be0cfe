"""The search behind :func:`dpmia.sgm.calibrate_sigma`: where a certified bound of a DP-SGD run crosses a target as
the noise multiplier varies, from brackets read at three accuracies (tiers), located on the coarsest ones and
settled next to the answer on a lattice of 1 + rtol steps (see :mod:`._calibrate`, which reads the brackets)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy import special

from .. import gaussian
from ._readout import TOL_EPS, TOL_PROB
from ._setting import SIGMA_MIN
from ._tvbounds import _clt_mu

#: Largest noise multiplier the calibration searches (the accountant's certified range ends here).
SIGMA_MAX = 1e3


#: The accuracies (multiples of the accountant's tol) at which a target is decided, coarsest first.
_TIERS = (10.0, 3.0, 1.0)


def _rel_width(kind, target, tier):
    """About the relative width of the bracket read at ``tier`` (to choose which tier to read first)."""
    return tier * (TOL_EPS if kind == "epsilon" else TOL_PROB / target)


def _widths(kind, target, seen):
    """Per tier, the expected relative width of its brackets: 1.2 times the widest read at it so far, else
    scaled from the other tiers' (in proportion to the tol), else the nominal one (far wider for small
    probabilities, whose tol is absolute)."""
    seen_w = {}
    for (_, tier), (lo, hi) in seen.items():
        if 0.0 < hi < math.inf:
            seen_w[tier] = max(seen_w.get(tier, 0.0), 1.2 * (hi - max(lo, 0.0)) / hi)
    if not seen_w:
        return {t: _rel_width(kind, target, t) for t in _TIERS}
    return {t: seen_w[t] if t in seen_w else min(w * t / u for u, w in seen_w.items()) for t in _TIERS}


def _level(bracket, kind, target, tier):
    """The log of the quantity as a bracket read at ``tier`` locates it: its midpoint, or its upper end where
    the bracket is wider than 1.5 times the tier's nominal width (slack, or a bound that is not tight,
    sets it: no tier narrows it, and its upper end decides)."""
    lo, hi = (float(v) for v in bracket)
    if 0.0 < hi < math.inf and (hi - max(lo, 0.0)) / hi > 1.5 * _rel_width(kind, target, tier):
        return math.log(hi)
    return _log_mid(bracket)


def _log_mid(bracket):
    """log of the bracket's midpoint (+inf for an infinite upper end, -inf for 0)."""
    lo, hi = (float(v) for v in bracket)
    if not hi < math.inf:
        return math.inf
    mid = 0.5 * (max(lo, 0.0) + hi)
    return math.log(mid) if mid > 0.0 else -math.inf


def _sigma_of_mu(run, mu):
    """The noise multiplier at which :func:`dpmia.sgm.clt_mu`'s model gives ``mu`` (None if none does)."""
    if not (math.isfinite(mu) and mu > 0.0):
        return None
    z = mu * mu / (run.q * run.q * run.steps * (2.0 if run.symmetric else 1.0))
    return 1.0 / math.sqrt(math.log1p(z)) if 0.0 < z < math.inf else None


def _model_cross(kind, args, run, target, value):
    """The CLT model's sigma for the target, corrected by the ratio of the Gaussian-DP mu that ``value`` (the
    quantity measured at ``run``) implies to the model's mu there. None where either mu is not finite."""
    try:
        with np.errstate(all="ignore"):
            mu_meas, mu_goal = float(_gdp_mu(kind, args, value)), float(_gdp_mu(kind, args, target))
    except ValueError:
        return None
    mu_model = _clt_mu(run)
    if not all(math.isfinite(m) and m > 0.0 for m in (mu_meas, mu_goal, mu_model)):
        return None
    return _sigma_of_mu(run, mu_goal * mu_model / mu_meas)


def _gdp_mu(kind, args, target):
    """μ of the Gaussian-DP curve that meets the target exactly (the CLT's guess)."""
    if kind == "advantage":
        return 2.0 * special.ndtri(0.5 + 0.5 * target)
    if kind == "tpr":
        return max(special.ndtri(target) - special.ndtri(args[0]), 1e-6)
    return 1.0 / gaussian.calibrate_sigma(target, args[0])


def _guess(kind, args, run, target):
    """The CLT guess: mu = q sqrt(T (e^{1/s^2} - 1)) at the Gaussian-DP mu that meets the target."""
    s = _sigma_of_mu(run, _gdp_mu(kind, args, target))
    if s is not None and run.sampler == "fixed":
        s *= math.sqrt(2.0)          # fixed-size batches: about twice the Poisson replace-one sigma
    return min(max(s if s is not None else SIGMA_MAX, SIGMA_MIN), SIGMA_MAX)


def _locate(kind, args, run, target, read, r):
    """``(c, slope, wide, known)``: where the quantity crosses the target, located on the coarsest tier's
    brackets by their midpoints, or upper ends where they are wide (``wide``, see :func:`_level`): the CLT
    model's step from the first bracket, then secant steps in log-log, each at most 2-fold and bisecting the
    bracket located so far where one would leave it; d log(quantity) / d log(sigma) there; and ``known``, the
    largest sigma whose bracket certainly misses the target and the smallest whose bracket meets it (None if
    none was read). It stops when a step is below the midpoints' own uncertainty (half the bracket's relative
    width, in sigma) or r / 2."""
    s = _guess(kind, args, run, target)
    pts = []
    slope = -1.0
    lt = math.log(target)
    side = [0.0, math.inf]            # the largest sigma located above the target, the smallest below it
    known = [None, None]              # the largest sigma certainly missing it, the smallest certainly meeting it
    for _ in range(6):
        b = read(s, _TIERS[0])
        f = _level(b, kind, target, _TIERS[0]) - lt
        wide = math.isfinite(f) and f == math.log(float(b[1])) - lt
        pts.append((math.log(s), f))
        if f > 0.0:
            side[0] = max(side[0], s)
        elif f < 0.0:
            side[1] = min(side[1], s)
        if b[0] > target and (known[0] is None or s > known[0]):
            known[0] = s
        if b[1] <= target and (known[1] is None or s < known[1]):
            known[1] = s
        (x0, f0), (x1, f1) = pts[-2] if len(pts) > 1 else (None, None), pts[-1]
        if len(pts) > 1 and math.isfinite(f0) and math.isfinite(f1) and f1 != f0:
            slope = min((f1 - f0) / (x1 - x0), -1e-3)
            step = -f1 / slope
        elif math.isfinite(f1):
            # the model's step; where fewer than one step is sampled on average the CLT is far off (its
            # slope near -1/sigma^2, far steeper than the quantity's): its implied slope kept in [-4, -0.7]
            cross = _model_cross(kind, args, replace(run, sigma=s), target, target * math.exp(f1))
            implied = -f1 / math.log(cross / s) if cross is not None and cross != s else -2.0
            if implied >= 0.0:
                implied = -2.0
            elif run.q * run.steps < 1.0:
                implied = min(max(implied, -4.0), -0.7)
            step = f1 / -implied
        else:
            step = math.copysign(math.log(1.5), f1)      # more noise if the bound is infinite
        step = min(max(step, -math.log(2.0)), math.log(2.0))
        s_next = min(max(s * math.exp(step), SIGMA_MIN), SIGMA_MAX)
        if 0.0 < side[0] and side[1] < math.inf and not side[0] < s_next < side[1]:
            s_next = math.sqrt(side[0] * side[1])        # (a step out of the located bracket: bisect it)
        noise = 0.5 * _rel_width(kind, target, _TIERS[0]) / abs(slope)
        if abs(math.log(s_next / s)) < max(0.5 * r, noise) or s_next == s:
            return s_next, slope, wide, tuple(known)
        s = s_next
    return s, slope, wide, tuple(known)


def _above(x, r):
    """The float h nearest x (1 + r) with h / (1 + r) == x where one is within a few ulps (so that the answer's
    check 1 + r below it finds the miss already read)."""
    h = x * (1.0 + r)
    for _ in range(4):
        b = h / (1.0 + r)
        if b == x:
            break
        h = np.nextafter(h, math.inf if b < x else -math.inf)
    return float(h)


def _straddle(ok, start, r, known=(None, None)):
    """``(lo, hi)``: a sigma that fails (None: none above SIGMA_MIN) and one that meets the target (None: not
    even SIGMA_MAX), tried first at ``start`` (raised by r / 4) and 1 + r below it, then in growing steps
    outwards, never past the sigmas ``known`` to miss and to meet it."""
    k_lo, k_hi = known
    x = min(max(start * (1.0 + 0.25 * r), SIGMA_MIN), SIGMA_MAX)
    lo = hi = None
    grow = min(1.0 + 4.0 * r, 1.5)
    while hi is None:
        if ok(x):
            hi = x
        elif x >= SIGMA_MAX:
            return lo, None
        else:
            # first exactly 1 + r up (a met sigma there is the answer), then in growing steps
            # (the exact step is not capped at the sigma known to meet: its check 1 + r below is this miss)
            if lo is None:
                up = min(_above(x, r), SIGMA_MAX)
            else:
                up, grow = min(x * grow, SIGMA_MAX, k_hi if k_hi is not None and k_hi > x else math.inf), \
                    min(grow * grow, 1.5)
            lo, x = x, up
    if lo is not None:
        return lo, hi
    x, grow = hi / (1.0 + r), min(1.0 + 2.0 * r, 1.5)
    while True:
        if x <= SIGMA_MIN:
            return (SIGMA_MIN, hi) if not ok(SIGMA_MIN) else (None, SIGMA_MIN)
        if not ok(x):
            return x, hi
        hi, x = x, max(x / grow, SIGMA_MIN, k_lo if k_lo is not None and k_lo < x else 0.0)
        grow = min(grow * grow, 1.5)


def _narrow(ok, upper, lo, hi, target, r, flat):
    """The met end once ``lo`` (missed) and ``hi`` (met) are at most 1 + ``r`` apart: the log of the bound
    interpolated in log sigma (Illinois), safeguarded by bisection, each probe near ``lo`` on the lattice
    ``lo (1 + r)^k`` (chained by :func:`_above`, so that the met end's check 1 + ``r`` below it is a miss
    already read); where ``flat()`` (no tier narrows the brackets, so a miss next to the answer reads every
    tier, a met sigma away from it the coarsest only) and at most 8 lattice points are left, the top one
    below ``hi`` instead."""
    side = streak = 0
    while hi / lo - 1.0 > r * (1.0 + 1e-9):
        ll, lh = math.log(lo), math.log(hi)
        fl = math.log(min(max(upper(lo), 1e-300), 1e300)) - math.log(target)
        fh = math.log(min(max(upper(hi), 1e-300), 1e300)) - math.log(target)
        if side == 1:
            fl *= 0.5   # Illinois: halve the weight of an end that stayed
        elif side == -1:
            fh *= 0.5
        x = lh - fh * (lh - ll) / (fh - fl) if fh != fl and fl > 0 > fh and streak < 2 else 0.5 * (ll + lh)
        width = lh - ll
        x = min(max(x, ll + 0.05 * width), lh - 0.05 * width)
        # (bisection after the same end moved twice in a row: a bound falling to 0 near the answer, log -690
        # there, holds the interpolation next to the other end)
        # the lattice point nearest x strictly between lo and hi; where no tier narrows the brackets and few
        # lattice points are left, the top one below hi (a met sigma reads the coarsest tier only)
        n = math.ceil(width / math.log1p(r))
        k = n if flat() and n <= 8 else min(max(1, round((x - ll) / math.log1p(r))), n)
        if k > 64:
            m = lo * math.exp(k * math.log1p(r))           # far from lo: the exact chain matters only near it
        else:
            chain = [lo]
            for _ in range(k):
                chain.append(_above(chain[-1], r))
            while k > 1 and chain[k] >= hi:
                k -= 1
            m = chain[k]
        if not lo < m < hi:
            break
        new_side = 1 if ok(m) else -1
        streak = streak + 1 if new_side == side else 0
        if new_side == 1:
            hi, side = m, 1
        else:
            lo, side = m, -1
    return hi


def _step_down(ok, hi, r, limit=16):
    """``hi`` lowered by factors 1 + ``r`` while that still meets the target (at most ``limit`` times)."""
    # sigma / (1 + r) must miss the target as target_met reads it (the brackets need not be monotone in
    # sigma: where it meets it, step down)
    for _ in range(limit):
        below = hi / (1.0 + r)
        if below <= SIGMA_MIN:
            return SIGMA_MIN if ok(SIGMA_MIN) else hi
        if not ok(below):
            break
        hi = below
    return hi
