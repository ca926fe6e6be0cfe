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
unsafe; :func:`target_met` reads the same tiers, so the answer meets its target there too.
The search is deterministic: a Gaussian-DP (CLT) guess
(:func:`dpmia.sgm.clt_mu`), a geometric expansion until the target is bracketed, then
interpolation in log σ safeguarded by bisection, until the bracket is relatively narrower than
``rtol``; the safe end is returned.
"""

from __future__ import annotations

import math
from dataclasses import replace

from scipy import special

from .. import _checks, gaussian
from ._accountant import _advantage_bracket, _tpr_bracket
from ._epsilon import _epsilon_bracket
from ._readout import TOL_EPS, TOL_PROB
from ._setting import SIGMA_MIN, check_run

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


def _decide(kind, args, run, target, seen=None):
    """``(met, upper)``: whether the run's certified bound meets the target. Brackets at ten, then three
    times the accountant's tol decide wherever the target lies outside them (both ends are certified:
    a lower end above the target fails it, an upper end at most the target meets it); only next to the
    target does the full-accuracy upper end decide. ``upper`` is the upper end that decided; ``seen``
    caches the brackets by (sigma, tier)."""
    seen = {} if seen is None else seen
    for tier in _TIERS:
        key = (run.sigma, tier)
        if key not in seen:
            seen[key] = _bracket(kind, args, run, coarse=tier)
        lo, hi = seen[key]
        if hi <= target or tier == 1.0:
            return hi <= target, float(hi)
        if lo > target:
            return False, float(hi)
    raise AssertionError("unreachable")


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


def calibrate_sigma(q, steps, *, advantage=None, fpr=None, tpr=None, epsilon=None, delta=None, rtol=1e-3,
                    neighbours="add-remove", sampler="poisson"):
    r"""Smallest noise multiplier σ (to relative ``rtol``) whose certified bound meets the target.

    For DP-SGD with Poisson rate ``q`` over ``steps`` iterations. The returned σ satisfies the target
    by the upper end of the certified bracket (never unsafe); ``σ/(1 + rtol)`` does not. Returns
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
    qq, tt = run.q, run.steps
    r = _checks.scalar("rtol", rtol, lo=1e-9, hi=0.5)
    if qq == 0.0:
        return SIGMA_MIN
    seen = {}

    def ok(s):
        return _decide(kind, args, replace(run, sigma=s), target, seen)[0]

    def upper(s):
        """The most accurate upper end known at s (for the interpolation)."""
        for tier in reversed(_TIERS):
            if (s, tier) in seen:
                return float(seen[s, tier][1])
        return _decide(kind, args, replace(run, sigma=s), target, seen)[1]

    # CLT guess: mu = q sqrt(T (e^{1/s^2} - 1))  =>  s = 1 / sqrt(log1p(mu^2 / (q^2 T)))
    mu = _gdp_mu(kind, args, target)
    guess = 1.0 / math.sqrt(math.log1p((mu / qq) ** 2 / tt))
    if run.symmetric:
        guess *= 2.0 if run.sampler == "fixed" else math.sqrt(2.0)   # about twice the variance (or sigma / 2)
    s = min(max(guess, SIGMA_MIN), SIGMA_MAX)
    grow = 1.02          # the CLT guess is usually within a few per cent: step by 2 %, then faster
    if ok(s):
        hi = s
        lo = s / grow
        while lo > SIGMA_MIN and ok(lo):
            grow = min(grow * grow, 1.5)
            hi, lo = lo, lo / grow
        if lo <= SIGMA_MIN:
            if ok(SIGMA_MIN):
                return SIGMA_MIN
            lo = SIGMA_MIN
    else:
        lo = s
        hi = s * grow
        while hi < SIGMA_MAX and not ok(hi):
            grow = min(grow * grow, 1.5)
            lo, hi = hi, hi * grow
        if hi >= SIGMA_MAX:
            if not ok(SIGMA_MAX):
                raise ValueError(f"the target needs a noise multiplier above {SIGMA_MAX:g} (the certified "
                                 f"bound at sigma = {SIGMA_MAX:g} is {upper(SIGMA_MAX):.6g} > {target:.6g})")
            hi = SIGMA_MAX
    # lo fails, hi meets: interpolate the log of the bound in log sigma, safeguarded by bisection
    side = 0
    while hi / lo - 1.0 > r:
        ll, lh = math.log(lo), math.log(hi)
        fl = math.log(min(max(upper(lo), 1e-300), 1e300)) - math.log(target)
        fh = math.log(min(max(upper(hi), 1e-300), 1e300)) - math.log(target)
        if side == 1:
            fl *= 0.5   # Illinois: halve the weight of an end that stayed
        elif side == -1:
            fh *= 0.5
        x = lh - fh * (lh - ll) / (fh - fl) if fh != fl and fl > 0 > fh else 0.5 * (ll + lh)
        width = lh - ll
        x = min(max(x, ll + 0.05 * width), lh - 0.05 * width)
        if math.exp(lh - x) - 1.0 < 0.6 * r:       # close to the safe end: test just below it
            x = lh - 0.5 * r
        elif math.exp(x - ll) - 1.0 < 0.6 * r:
            x = ll + 0.5 * r
        m = math.exp(x)
        if ok(m):
            hi, side = m, 1
        else:
            lo, side = m, -1
    # the answer meets the target as target_met reads it (the search decided it by the same tiers; this
    # reads the cached brackets), else a little more noise
    while not _met(kind, args, replace(run, sigma=hi), target, seen)[0] and hi < SIGMA_MAX:
        hi = min(hi * (1.0 + r), SIGMA_MAX)
    return hi


def _met(kind, args, run, target, seen):
    """``(met, upper)`` by :func:`target_met`'s rule: the first of the tiers' upper ends at most the target, else
    the full-accuracy one (brackets cached in ``seen`` by (sigma, tier))."""
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
