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

from .. import _checks
from ._accountant import _advantage_bracket, _tpr_bracket
from ._epsilon import _epsilon_bracket
from ._readout import TOL_EPS, TOL_PROB
from ._search import _TIERS, SIGMA_MAX, _level, _locate, _narrow, _step_down, _straddle, _widths
from ._setting import SIGMA_MIN, check_run

__all__ = ["calibrate_sigma", "max_steps", "target_met", "SIGMA_MAX"]


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
