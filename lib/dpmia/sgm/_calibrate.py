"""Noise calibration to a membership-inference risk, certified: the smallest noise multiplier (or the
largest number of steps) whose *certified upper bound* meets a target.

Targets (exactly one):

* ``advantage=a``: the optimal attack's advantage TV(P^T, Q^T) (Mahloujifar et al., Theorem 6) at most a;
* ``fpr=f, tpr=t``: the largest TPR of any attack at FPR f (Corollary 11) at most t;
* ``epsilon=e, delta=d``: (e, d)-DP, i.e. the tight ε(d) of the dominating pair at most e
  (then δ(e) ≤ d).

Under the neighbouring relation and sampler given (``neighbours=``, ``sampler=``; add/remove and Poisson
by default), as in :func:`dpmia.sgm.advantage_bracket`.

Each predicate reads the accountant's certified bracket (:mod:`dpmia.sgm`): at ten, then three times its
tol, which decide wherever the target lies outside them, and only next to the answer the *upper* end at
full accuracy (without the far-tail refinement by tilted compositions), so a returned setting is never
unsafe; :func:`target_met` reads the same tiers, so the answer meets its target there too (met if any
tier's upper end is at most the target).
The search is deterministic: a Gaussian-DP (CLT) guess (:func:`dpmia.sgm.clt_mu`), then the crossing
located on the coarsest brackets' midpoints (the CLT model's step, then secant steps in log-log); near it
each σ reads first the tier expected to decide there (from the crossing, the local slope and the widths
seen), and a lower end above the target settles a miss at once; a met σ and a missed one 1 + ``rtol``
apart are sought from there, by interpolation in log σ safeguarded by bisection if needed, and the
answer is checked to miss the target 1 + ``rtol`` below it (brackets need not be monotone in σ).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy import special

from .. import _checks, gaussian
from ._accountant import _advantage_bracket, _tpr_bracket
from ._epsilon import _epsilon_bracket
from ._readout import TOL_EPS, TOL_PROB
from ._setting import SIGMA_MIN, check_run
from ._tvbounds import _clt_mu

__all__ = ["calibrate_sigma", "max_steps", "target_met", "SIGMA_MAX"]

#: Largest noise multiplier the calibration searches (the accountant's certified range ends here).
SIGMA_MAX = 1e3


def _target(advantage, fpr, tpr, epsilon, delta):
    """Checked target: (kind, parameters, threshold) for exactly one of the three targets."""
    given = {"advantage": advantage is not None, "fpr/tpr": fpr is not None or tpr is not None,
             "epsilon/delta": epsilon is not None or delta is not None}
    if sum(given.values()) != 1:
        raise ValueError("give exactly one target: advantage=..., or fpr=... with tpr=..., "
                         "or epsilon=... with delta=...")
    if given["advantage"]:
        a = _checks.scalar("advantage", advantage, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        return "advantage", (), a
    if given["fpr/tpr"]:
        if fpr is None or tpr is None:
            raise ValueError("the TPR target needs both fpr and tpr")
        f = _checks.scalar("fpr", fpr, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        t = _checks.scalar("tpr", tpr, lo=f, hi=1.0, lo_open=True, hi_open=True)
        return "tpr", (f,), t
    if epsilon is None or delta is None:
        raise ValueError("the (epsilon, delta) target needs both epsilon and delta")
    e = _checks.scalar("epsilon", epsilon, lo=0.0, lo_open=True)
    d = _checks.scalar("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    return "epsilon", (d,), e


def _bracket(kind, args, run, coarse=1.0):
    """The accountant's certified bracket for the target's quantity (``coarse`` times its tol)."""
    if kind == "advantage":
        return _advantage_bracket(run, TOL_PROB * coarse)
    if kind == "tpr":
        return _tpr_bracket(args[0], args[0], run, TOL_PROB * coarse)
    return _epsilon_bracket(run, args[0], TOL_EPS * coarse, far=False)


#: The accuracies (multiples of the accountant's tol) at which a target is decided, coarsest first.
_TIERS = (10.0, 3.0, 1.0)


def _decide(kind, args, run, target, seen=None, first=_TIERS[0]):
    """``(met, upper)``: whether the run's certified bound meets the target. Brackets at ten, then three
    times the accountant's tol decide wherever the target lies outside them (both ends are certified:
    a lower end above the target fails it, an upper end at most the target meets it); only next to the
    target does the full-accuracy upper end decide. ``upper`` is the upper end that decided; ``seen``
    caches the brackets by (sigma, tier). ``first``: the coarsest tier read first (the search skips tiers
    it expects not to decide); a miss at full accuracy then reads the skipped ones too, so the answer is
    :func:`target_met`'s (met if any tier's upper end is at most the target)."""
    seen = {} if seen is None else seen

    def read(tier):
        if (run.sigma, tier) not in seen:
            seen[run.sigma, tier] = _bracket(kind, args, run, coarse=tier)
        return seen[run.sigma, tier]

    for tier in _TIERS:                  # brackets read before at this sigma may decide already
        if (run.sigma, tier) in seen:
            lo, hi = seen[run.sigma, tier]
            if hi <= target or lo > target:
                return hi <= target, float(hi)
    for tier in (t for t in _TIERS if t <= first):
        lo, hi = read(tier)
        if hi <= target:
            return True, float(hi)
        if lo > target:
            return False, float(hi)
    for tier in (t for t in _TIERS if t > first):
        lo2, hi2 = read(tier)
        if hi2 <= target:
            return True, float(hi2)
        if lo2 > target:
            break
    return False, float(hi)


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


def target_met(q, sigma, steps, *, advantage=None, fpr=None, tpr=None, epsilon=None, delta=None,
               neighbours="add-remove", sampler="poisson"):
    """Whether a certified upper bound of the setting meets the target, and that bound: ``(bool, upper)``.

    The accountant's brackets are read at ten, then three times its tol, then at full accuracy; the first
    upper end at most the target answers ``(True, that upper end)`` (each is a certified bound, so the
    target is met); otherwise ``(False, the full-accuracy upper end)``. A setting from
    :func:`calibrate_sigma` always meets its target here (the search decides by the same rule).
    ``neighbours`` and ``sampler`` as in :func:`~dpmia.sgm.advantage_bracket`.

    Examples
    --------
    >>> from dpmia import sgm
    >>> met, upper = sgm.target_met(0.01, 1.0, 300, advantage=0.1)
    >>> met, upper <= 0.1
    (True, True)
    """
    kind, args, target = _target(advantage, fpr, tpr, epsilon, delta)
    run = check_run(q, sigma, steps, neighbours=neighbours, sampler=sampler)
    return _met(kind, args, run, target, {})


def _reader(kind, args, run, seen):
    """``read(sigma, tier)``: the bracket at that sigma and tier, cached in ``seen``."""
    def read(s, tier):
        if (s, tier) not in seen:
            seen[s, tier] = _bracket(kind, args, replace(run, sigma=s), coarse=tier)
        return seen[s, tier]
    return read


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
            if lo is None:
                up = _above(x, r)
            else:
                up, grow = x * grow, min(grow * grow, 1.5)
            lo, x = x, min(up, SIGMA_MAX, k_hi if k_hi is not None and k_hi > x else math.inf)
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


def calibrate_sigma(q, steps, *, advantage=None, fpr=None, tpr=None, epsilon=None, delta=None, rtol=1e-3,
                    neighbours="add-remove", sampler="poisson"):
    r"""Smallest noise multiplier σ (to relative ``rtol``) whose certified bound meets the target.

    For DP-SGD with Poisson rate ``q`` over ``steps`` iterations. The returned σ satisfies the target
    by the upper end of the certified bracket (never unsafe); ``σ/(1 + rtol)`` does not, by
    :func:`target_met` (or lies below ``SIGMA_MIN``, which does not either). Returns
    ``SIGMA_MIN`` when even that little noise (0.01) meets the target, and raises
    ``ValueError`` when the target needs more than ``SIGMA_MAX`` (1e3). ``neighbours`` (``"add-remove"`` or
    ``"replace-one"``) and ``sampler`` (``"poisson"`` or ``"fixed"``, replace-one only; ``q`` = batch size /
    dataset size) name the game and the way batches were drawn, as in :func:`~dpmia.sgm.advantage_bracket`.

    Examples
    --------
    >>> from dpmia import sgm
    >>> sigma = sgm.calibrate_sigma(0.01, 1000, advantage=0.1)
    >>> round(sigma, 3), sgm.advantage_bound(0.01, sigma, 1000) <= 0.1
    (1.423, True)
    """
    kind, args, target = _target(advantage, fpr, tpr, epsilon, delta)
    run = check_run(q, 1.0, steps, steps_lo=1, neighbours=neighbours, sampler=sampler)
    qq = run.q
    r = _checks.scalar("rtol", rtol, lo=1e-9, hi=0.5)
    if qq == 0.0:
        return SIGMA_MIN
    seen = {}

    read = _reader(kind, args, run, seen)
    c, slope, wide, known = _locate(kind, args, run, target, read, r)
    if c <= SIGMA_MIN and _decide(kind, args, replace(run, sigma=SIGMA_MIN), target, seen)[0]:
        return SIGMA_MIN

    def flat():
        # at a sigma read on both the finest and the coarsest tier, the finest at least half as wide
        def rel(b):
            return (b[1] - max(b[0], 0.0)) / b[1] if 0.0 < b[1] < math.inf else None
        pairs = ((rel(seen[x, _TIERS[-1]]), rel(seen[x, _TIERS[0]]))
                 for (x, tier) in seen if tier == _TIERS[-1] and (x, _TIERS[0]) in seen)
        return any(a is not None and b is not None and a >= 0.5 * b for a, b in pairs)

    loc = {"c": c, "acc": _widths(kind, target, seen)[_TIERS[0]]}

    def ok(s):
        # read first the coarsest tier expected to decide at s (from the located crossing and its slope,
        # and the widths seen at each tier), else the coarsest as narrow as the finest (slack can set them
        # all), and the coarsest where brackets are wide or no tier narrows them
        f = slope * math.log(s / loc["c"])
        w = _widths(kind, target, seen)
        first = next((t for t in _TIERS if abs(f) > 0.75 * w[t]), None)
        if first is None or wide or flat():
            first = next((t for t in _TIERS if w[t] <= 1.5 * w[_TIERS[-1]] or wide or flat()), _TIERS[-1])
        met = _decide(kind, args, replace(run, sigma=s), target, seen, first=first)[0]
        # a narrower bracket than the one the crossing was located with locates it again
        for tier in reversed(_TIERS):
            if (s, tier) in seen:
                lo_, hi_ = seen[s, tier]
                if 0.0 < lo_ <= hi_ < math.inf and (hi_ - lo_) / hi_ < loc["acc"]:
                    step = -(_level((lo_, hi_), kind, target, tier) - math.log(target)) / slope
                    loc["c"] = s * math.exp(min(max(step, -math.log(1.5)), math.log(1.5)))
                    loc["acc"] = (hi_ - lo_) / hi_
                break
        return met

    def upper(s):
        """The most accurate upper end known at s (for the interpolation)."""
        for tier in reversed(_TIERS):
            if (s, tier) in seen:
                return float(seen[s, tier][1])
        return _decide(kind, args, replace(run, sigma=s), target, seen)[1]

    # start where the full-accuracy upper end should meet the target: half the bracket's width above the
    # located crossing; where brackets are wide (located on their upper ends, and a miss needs every tier
    # read) a little further, 2 r, so as to approach the answer from the side that decides cheaply
    shift = math.log1p(2.0 * r) if wide else min(0.5 * _widths(kind, target, seen)[_TIERS[-1]] / abs(slope),
                                                   math.log(1.5))
    lo, hi = _straddle(ok, c * math.exp(shift), r, known)
    if hi is None:
        raise ValueError(f"the target needs a noise multiplier above {SIGMA_MAX:g} (the certified "
                         f"bound at sigma = {SIGMA_MAX:g} is {upper(SIGMA_MAX):.6g} > {target:.6g})")
    if lo is None:
        return SIGMA_MIN
    hi = _step_down(ok, _narrow(ok, upper, lo, hi, target, r, flat), r)
    # the answer meets the target as target_met reads it (the search decided it by the same tiers; this
    # reads the cached brackets), else a little more noise
    while not _met(kind, args, replace(run, sigma=hi), target, seen)[0] and hi < SIGMA_MAX:
        hi = min(hi * (1.0 + r), SIGMA_MAX)
    return hi


def _met(kind, args, run, target, seen):
    """``(met, upper)`` by :func:`target_met`'s rule: the first of the tiers' upper ends at most the target, else
    the full-accuracy one (brackets cached in ``seen`` by (sigma, tier))."""
    for tier in _TIERS:
        if (run.sigma, tier) in seen and seen[run.sigma, tier][1] <= target:
            return True, float(seen[run.sigma, tier][1])           # (met if any tier meets it)
    for tier in _TIERS:
        key = (run.sigma, tier)
        if key not in seen:
            seen[key] = _bracket(kind, args, run, coarse=tier)
        hi = float(seen[key][1])
        if hi <= target:
            return True, hi
    return False, hi


def max_steps(q, sigma, *, advantage=None, fpr=None, tpr=None, epsilon=None, delta=None, steps_max=10**7,
              neighbours="add-remove", sampler="poisson"):
    """Largest number of steps (at most ``steps_max``) whose certified bound meets the target; 0 if none.

    The bounds grow with the number of steps, so an exponential search and a bisection on integers
    find it exactly (for the certified upper bound as computed). In epochs: ``max_steps(...) * q``.

    Examples
    --------
    >>> from dpmia import sgm
    >>> T = sgm.max_steps(0.01, 1.0, advantage=0.1)      # at q = 0.01 and sigma = 1
    >>> T, sgm.advantage_bound(0.01, 1.0, T) <= 0.1 < sgm.advantage_bound(0.01, 1.0, T + 1)
    (384, True)
    """
    kind, args, target = _target(advantage, fpr, tpr, epsilon, delta)
    run = check_run(q, sigma, 1, neighbours=neighbours, sampler=sampler)
    cap = _checks.integer("steps_max", steps_max, lo=1, hi=10**7)

    def ok(t):
        return float(_bracket(kind, args, run.with_steps(t))[1]) <= target

    if not ok(1):
        return 0
    lo, hi = 1, 2
    while hi <= cap and ok(hi):
        lo, hi = hi, 2 * hi
    if hi > cap:
        if ok(cap):
            return cap
        hi = cap
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
