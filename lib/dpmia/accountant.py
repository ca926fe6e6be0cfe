r"""The accountant of the subsampled Gaussian mechanism (SGM) and DP-SGD: membership advantage, ε, δ, ROC.

Used through :mod:`dpmia.sgm`, which re-exports it with the noise calibration of :mod:`dpmia.calibrate`.

One DP-SGD step with Poisson sampling rate :math:`q` and noise multiplier :math:`\sigma`
(sensitivity 1, noise std :math:`\sigma`) is, in the worst case for a target, the pair

.. math:: P = \mathcal N(0, \sigma^2),\qquad Q = (1-q)\,\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2)

(without / with the target). Mahloujifar et al. (Theorem 6) show that :math:`T` *adaptive* steps
give an attacker no more than :math:`\mathrm{TV}(P^{\otimes T}, Q^{\otimes T})`, attained by a
real attack. This module computes that bound and the related read-outs with the certified PLD
engine of :mod:`dpmia.pld`:

* :func:`advantage_bound` / :func:`advantage_bracket` - Theorem 6 (upper end / certified bracket);
* :func:`epsilon` / :func:`epsilon_bracket` and :func:`delta_bracket` - tight :math:`\varepsilon(\delta)`
  and :math:`\delta(\varepsilon)`, add/remove adjacency;
* :func:`tpr_at_fpr` and :func:`tradeoff_bracket` - the ROC / trade-off curve of the dominating pair
  (Corollary 11);
* the ``*_schedule`` variants for non-adaptive schedules of :math:`(q_i, \sigma_i, T_i)` are in
  :mod:`dpmia.schedules`.

**Accuracy is an argument, never a clock.** Each read-out takes ``tol`` (absolute for
probabilities, relative for :math:`\varepsilon`); the grid step is predicted from an error model
(the bracket width is second order in the step) and refined a bounded number of times, each
time deterministically from the width just measured. The same call gives the same bits on any
machine and under any load. If the FFT needed for ``tol`` would exceed :data:`AUTO_MAX_FFT`
points, the narrowest bracket that fits is returned: still certified, only wider. Runs of
:data:`dpmia.sgmchain.SPLIT_STEPS` steps or more are composed in two levels (:func:`dpmia.sgmchain.split_plan`): about
:math:`\sqrt T` steps on a finer grid, re-gridded (:func:`dpmia.pld.regrid`) and composed
:math:`T/T_1` times, which cuts the discretisation error from :math:`T h^2` to about :math:`5\sqrt T h^2`.

The exact single step (profile, grid arrays) is in :mod:`dpmia.sgmstep`; the PLD-free bounds
(χ², threshold counting, sum test, CLT) in :mod:`dpmia.tvbounds`; both are re-exported by :mod:`dpmia.sgm`.
"""

from __future__ import annotations

import math

import numpy as np

from . import _checks, gaussian, pld as _pld
from .rdp import epsilon_rdp_certified
from .sgmbulk import bulk_epsilon
from .sgmbulk import clear_caches as _bulk_caches
from .sgmchain import AUTO_MAX_FFT, composed, refine
from .sgmchain import clear_caches as _chain_caches
from .sgmstep import check_args, single_step_tv
from .tvbounds import (chi2_tv_upper, clt_mu, mixture_delta_upper, sampled_cap, sum_test_tv, threshold_count_tv)

__all__ = ["plds", "advantage_bound", "advantage_bracket", "epsilon", "epsilon_bracket", "delta_bracket",
           "tpr_at_fpr", "tpr_bracket", "tradeoff_bracket", "prior_advantage", "clear_caches", "AUTO_MAX_FFT"]

#: Default accuracy: advantage/TPR brackets 1e-5 wide (absolute), epsilon brackets 1e-3 (relative).
TOL_PROB, TOL_EPS = 1e-5, 1e-3



def clear_caches():
    """Empty the accountant's caches of single-step grids and composed pairs (for timing runs)."""
    _chain_caches()
    _bulk_caches()


def check_tol(name, tol):
    return float(_checks.real(name, tol, lo=1e-12, hi=1.0))


def _rel_width(lo_hi):
    lo, hi = lo_hi
    if hi == lo:
        return 0.0
    return (hi - lo) / max(abs(hi), 1e-300)


def eps_width(lo_hi):
    """Relative width of an eps bracket; ``None`` (stop refining, keep the best bracket so far) when the
    upper end is infinite: that comes from the slack or the mass at +infinity exceeding delta, which
    a finer grid does not lower."""
    return None if math.isinf(lo_hi[1]) else _rel_width(lo_hi)


def prob_width(tol, floor=False):
    """Width measure for probabilities: absolute for values above 0.01, relative (x 0.01) below;
    with ``floor``, never narrower than ``tol`` / 10 absolute (x 10).

    With ``tol`` = 1e-5 this asks for 1e-5 absolute, 1e-3 relative for values under 0.01 and, with
    ``floor`` (the advantage), at most 1e-6 absolute for values under 1e-3: the last digits of a TV
    of 1e-5 would cost a grid of millions of points, for digits no attack can see.
    """
    def width(lo_hi):
        lo, hi = lo_hi
        if hi <= 0:
            return 0.0
        w = (hi - lo) / min(1.0, max(hi, 1e-300) / 1e-2)
        return min(w, 10.0 * (hi - lo)) if floor else w
    return width


# --------------------------------------------------------------------------------------
# public read-outs
# --------------------------------------------------------------------------------------
def plds(q, sigma, steps, *, h=None, tol=TOL_PROB):
    r"""Composed (pessimistic, optimistic) PLDs of :math:`T` SGM steps (add direction) on grid step ``h``.

    ``h=None`` chooses the grid for an advantage bracket of width ``tol``.
    """
    qq, ss, tt = check_args(q, sigma, steps, steps_lo=1)
    if qq == 0.0:
        raise ValueError("q must be in (0, 1] for a PLD (q = 0 releases nothing: every read-out is 0)")
    t = check_tol("tol", tol)
    # the Q-mass the windows may drop: 1e-2 tol, relative to the TV's certified ceiling where that is
    # below 0.01 (the width asked for is relative there)
    tail = 1e-2 * t * min(1.0, sampled_cap(qq, tt) / 1e-2)
    if h is None:
        return refine(qq, ss, tt, t, lambda hh, cap: (composed(qq, ss, tt, hh, "pessimistic", "add", tail, cap),
                                                        composed(qq, ss, tt, hh, "optimistic", "add", tail, cap)),
                       lambda pair: prob_width(t, floor=True)((pair[1].tv(), pair[0].tv())), tail=tail)
    hh = float(_checks.real("h", h, lo=1e-9, hi=1.0))
    return (composed(qq, ss, tt, hh, "pessimistic", "add", tail, _pld.MAX_FFT),
            composed(qq, ss, tt, hh, "optimistic", "add", tail, _pld.MAX_FFT))


def advantage_bracket(q, sigma, steps, *, tol=TOL_PROB):
    r"""Certified bracket ``(lower, upper)`` on Theorem 6's bound :math:`\mathrm{TV}(P^{\otimes T},Q^{\otimes T})`.

    ``q`` in [0, 1], ``sigma`` in [0.01, 1e6] (noise multiplier), ``steps`` integer >= 0; ``tol`` the
    target width: absolute for values of at least 0.01, relative (``tol`` / 0.01, so 1e-3 at the
    default) below, so that small values keep their digits, but never narrower than ``tol`` / 10
    absolute (a TV under 1e-4 gets a bracket at most 1e-6 wide, from the bounds that need no grid
    where they reach it). Deterministic: the grid is
    chosen from ``tol`` by an error model. Closed forms: :math:`q = 1` gives
    :math:`2\Phi(\sqrt T/(2\sigma)) - 1`, :math:`T = 1` gives :math:`q(2\Phi(1/(2\sigma)) - 1)`.
    """
    qq, ss, tt = check_args(q, sigma, steps)
    t = check_tol("tol", tol)
    if qq == 0.0 or tt == 0:
        return 0.0, 0.0
    if qq == 1.0 or tt == 1:
        # closed forms, rounded outward by a few ulps of their float error
        v = gaussian.tv(math.sqrt(tt) / ss) if qq == 1.0 else qq * gaussian.tv(1.0 / ss)
        return max(v * (1.0 - 1e-14), 0.0), min(v * (1.0 + 1e-14), 1.0)
    # TV never exceeds the probability that the target is ever sampled, 1 - (1-q)^T (rounded up)
    cap = sampled_cap(qq, tt)
    # cheap certified bounds first: the chi-square bound and the cap (upper); one step, the sum of
    # the outputs (small TV) and the threshold-counting attacker (small sigma) (lower). Where they
    # already meet tol the PLD is not needed.
    def done(lo_hi):
        return prob_width(t, floor=True)(lo_hi) <= t

    hi = min(cap, chi2_tv_upper(qq, ss, tt))
    lo = min(single_step_tv(qq, ss) * (1.0 - 1e-14), hi)        # TV grows with T; rounded down
    if hi <= 0.05 or (hi >= 1.0 - 0.1 * t and clt_mu(qq, ss, tt) > 10.0):
        # (the second: a TV so close to 1 that the sum test alone may close the bracket)
        lo = max(lo, min(sum_test_tv(qq, ss, tt), hi))
    if ss <= 0.5 and not done((lo, hi)):
        lo = max(lo, min(threshold_count_tv(qq, ss, tt), hi))
    if not done((lo, hi)):
        try:
            pe, op = plds(qq, ss, tt, tol=t)
            lo, hi = max(lo, min(op.tv(), hi)), min(pe.tv(), hi)
        except ValueError:
            pass
        lo, hi = _tv_lower_fewer(qq, ss, tt, t, lo, hi, counted=ss <= 0.5)
        if not done((lo, hi)) and hi > 0.05:
            # the sum of the outputs: the near-optimal test where the privacy loss is almost linear
            lo = max(lo, min(sum_test_tv(qq, ss, tt), hi))
    return lo, hi


def _tv_lower_fewer(q, sigma, steps, tol, lo, hi, depth=3, counted=False):
    """Raise a weak lower end with the bound at fewer steps (TV increases with T), at one step,
    and with the threshold-counting attacker (unless already ``counted``)."""
    lo = max(lo, single_step_tv(q, sigma) * (1.0 - 1e-14))
    if lo < hi - tol and depth == 3 and not counted:
        lo = max(lo, threshold_count_tv(q, sigma, steps))
    if lo < 0.5 * hi and steps >= 8 and depth > 0:
        fewer = steps // 4
        try:
            pe, op = plds(q, sigma, fewer, tol=tol)
            lo = max(lo, op.tv())
        except ValueError:
            pass
        return _tv_lower_fewer(q, sigma, fewer, tol, lo, hi, depth - 1) if lo < 0.5 * hi else (lo, hi)
    return lo, hi


def advantage_bound(q, sigma, steps, *, tol=TOL_PROB):
    r"""Theorem 6 of Mahloujifar et al.: the largest membership advantage against :math:`T` DP-SGD steps.

    .. math:: \mathrm{Adv} \le \mathrm{TV}\big(\mathcal N(0,\sigma^2)^{\otimes T},\
              [(1-q)\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2)]^{\otimes T}\big)

    Returns the upper end of :func:`advantage_bracket` (never below the exact value, never above 1).
    """
    return advantage_bracket(q, sigma, steps, tol=tol)[1]


def _four(q, sigma, steps, h, tail, cap, directions=("add", "remove")):
    return {(k, d): composed(q, sigma, steps, h, k, d, tail, cap)
            for k in ("pessimistic", "optimistic") for d in directions}


def eps_of(c, d):
    """(lower, upper) eps(delta) from the composed grid pairs ``c`` (both kinds, for the directions in it)."""
    dirs = sorted({k[1] for k in c})
    return (max(c["optimistic", x].epsilon(d) for x in dirs), max(c["pessimistic", x].epsilon(d) for x in dirs))


def _eps_readout(q, sigma, steps, d, tail, tol):
    """Read-out for :func:`refine`: eps(delta) = max(eps_add, eps_remove) from both directions, until
    one grid shows one direction's lower end at or above the other's upper end. Then eps is that
    direction's (certified by that grid), and finer grids compose only it: half the work.

    ``readout.tail_needed``: the window budget under which the dominating pair's slack moves eps by
    at most a tenth of ``tol`` (relative), from the profile's measured slope at the upper end; where
    the profile is flat (eps set by a few far sampled steps) that is far below ``tail``."""
    dirs = ["add", "remove"]

    def readout(h, cap):
        c = _four(q, sigma, steps, h, tail, cap, tuple(dirs))
        # a dominating pair whose mass at +infinity and slack already reach a quarter of delta sets
        # the width by them, and a finer grid only adds float error (measured at delta = 1e-9 and T =
        # 1e7: 2.8 s for a wider bracket): stop refining (the caller tries its other bounds)
        readout.hopeless = any(v.inf_mass + v.slack_q > 0.25 * d for k, v in c.items() if k[0] == "pessimistic")
        if len(dirs) == 2:
            e = {k: v.epsilon(d) for k, v in c.items()}
            for a, b in (("add", "remove"), ("remove", "add")):
                if e["optimistic", a] >= e["pessimistic", b]:
                    dirs[:] = [a]
                    break
            res = (max(e["optimistic", "add"], e["optimistic", "remove"]),
                   max(e["pessimistic", "add"], e["pessimistic", "remove"]))
        else:
            res = eps_of(c, d)
        hi = res[1]
        if 0.0 < hi < math.inf:
            for x in dirs:
                pe = c["pessimistic", x]
                slope = (pe.delta(hi * (1.0 - 1e-3)) - pe.delta(hi)) / (1e-3 * hi)
                # (only where the windows' budget is a good part of that slack: float error is not
                # lowered by a smaller budget)
                if pe.slack_q > 0.1 * tol * hi * slope and tail >= 0.25 * pe.slack_q:
                    readout.tail_needed = min(readout.tail_needed, 0.1 * tol * hi * slope)
        return res
    readout.tail_needed = tail
    return readout


def _eps_refined(q, sigma, steps, d, tol, rdp_hi=None, one_step=0.0):
    """The refined grid bracket on eps(delta) of ``steps`` steps (``ValueError`` if no grid fits);
    ``rdp_hi``, Renyi accounting's upper bound, helps guess the grid where the CLT cannot."""
    tail = eps_tail(q, sigma, steps, d)
    # measured: the grid of an advantage bracket 1e-4 wide gives eps brackets under 1e-3 relative at
    # the papers' settings (eps up to about 6), so start from the advantage model at tol / 10. The
    # grid error moves eps by about 0.11 T h^2 / sd in absolute terms (the same as it moves the TV, in
    # units of the loss's density there), so a relative tol on a larger eps allows a coarser grid:
    # scale by the CLT estimate of eps (a large eps at ten million steps needs a grid 100x coarser)
    mu = clt_mu(q, sigma, steps)
    if math.isfinite(mu) and mu < 1e6:
        e_est = float(gaussian.epsilon(d, mu))
    else:
        # (sigma so small that the CLT overflows: Renyi accounting, about 10x above the tight eps there)
        e_est = 6.0 if rdp_hi is None or not math.isfinite(rdp_hi) else max(rdp_hi / 10.0, 6.0)
    res = None
    for _ in range(2):
        readout = _eps_readout(q, sigma, steps, d, tail, tol)
        r = refine(q, sigma, steps, tol, readout, lambda r: 0.0 if getattr(readout, "hopeless", False) else eps_width(r),
                   model_tol=1e-1 * tol * min(max(1.0, e_est / 6.0), 1e4), tail=tail, scale=one_step)
        res = r if res is None else (max(res[0], r[0]), min(res[1], r[1]))
        w = eps_width(res)
        if w is not None and w <= tol or not readout.tail_needed < 0.5 * tail:
            break
        # the slack of the windows set the width (a flat profile): once more with the budget it asked for
        tail = readout.tail_needed
    return res


def eps_tail(q, sigma, steps, d):
    """Q-mass allowed outside the FFT window for an eps(delta) read-out. It moves delta by up to that
    much, so eps by about tail / |delta'(eps)|; where eps is small (estimated by the CLT) delta is
    nearly flat in relative terms, so the budget shrinks with eps."""
    mu = clt_mu(q, sigma, steps)
    e = float(gaussian.epsilon(d, mu)) if math.isfinite(mu) and mu < 1e6 else 1.0
    return min(1e-3 * min(1.0, max(e, 1e-3)) * d, 1e-8)


def epsilon_bracket(q, sigma, steps, delta, *, tol=TOL_EPS):
    r"""Certified bracket on the tight :math:`\varepsilon(\delta)` of :math:`T` SGM steps (add/remove adjacency).

    ``tol`` is the target relative width. The upper end never understates the tight value; it is
    ``inf`` only if no finite :math:`\varepsilon` reaches ``delta`` (e.g. ``delta`` below the float
    accuracy of the composition, about 1e-14 times the mass near :math:`\varepsilon`).
    """
    qq, ss, tt = check_args(q, sigma, steps)
    d = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    t = check_tol("tol", tol)
    if qq == 0.0 or tt == 0:
        return 0.0, 0.0
    if qq == 1.0:
        v = gaussian.epsilon(d, math.sqrt(tt) / ss)
        return v, v
    if tt == 1:
        v = _epsilon_one_step(qq, ss, d)
        return v, v
    # delta(eps) <= TV <= min(1 - (1-q)^T, chi-square bound) for every eps >= 0: below delta, eps = 0
    if min(sampled_cap(qq, tt), chi2_tv_upper(qq, ss, tt)) <= d:
        return 0.0, 0.0
    rdp_hi = epsilon_rdp_certified([(qq, ss, tt)], d)[0]
    one = _epsilon_one_step(qq, ss, d)
    if qq * tt <= 0.05:
        # few sampled steps: eps may be set by the composed loss near 0 at the scale of q, which the
        # bulk pairs resolve on a grid over [ln(1 - q), b] only (see dpmia.sgmbulk)
        bulk = bulk_epsilon(qq, ss, tt, d, t)
        if bulk is not None and bulk[1] - bulk[0] <= t * bulk[1]:
            return float(max(bulk[0], one)), float(min(bulk[1], rdp_hi))
    try:
        lo, hi = _eps_refined(qq, ss, tt, d, t, rdp_hi, one)
    except ValueError:
        # no grid fits the caps: Renyi accounting (closed form, convexity between orders) is a certified
        # upper bound (the add direction dominates for the subsampled Gaussian); eps(delta) grows
        # with T, so the bracket at the most steps T / 4^k whose grid fits is a lower end
        lo, hi = _eps_lower_fewer(qq, ss, tt, d, t), rdp_hi
    hi = min(hi, rdp_hi)
    if not lo <= hi:        # the grid could not resolve the far tail: fall back to a safe lower end
        lo = 0.0
    lo = max(lo, one)   # eps(delta) increases with T: one step is a lower end
    if hi - lo > t * hi:
        # not tight (delta below the grid's float slack, or no grid fits): the sampling-pattern bound
        hi = _eps_mixture(qq, ss, tt, d, lo, hi)
    return float(lo), float(hi)


def _eps_mixture(q, sigma, steps, d, lo, hi):
    """The smallest eps in [lo, hi] (to 1e-12 relative, rounded up) whose :func:`mixture_delta_upper`
    is at most ``d``; ``hi`` if none (a certified upper end either way: the bound is one on delta)."""
    if not math.isfinite(hi):
        hi = max(2.0 * lo, 1.0)
        for _ in range(200):
            if mixture_delta_upper(q, sigma, steps, hi) <= d:
                break
            hi *= 2.0
        else:
            return math.inf
    elif mixture_delta_upper(q, sigma, steps, hi) > d:
        return hi
    a = lo
    for _ in range(80):
        if hi - a <= 1e-12 * hi:
            break
        mid = 0.5 * (a + hi)
        if mixture_delta_upper(q, sigma, steps, mid) <= d:
            hi = mid
        else:
            a = mid
    return hi


def _eps_lower_fewer(q, sigma, steps, d, tol, depth=6):
    """A lower end on eps(delta) after ``steps`` steps from the bracket at steps / 4, / 16, ... (the
    first whose grid fits the caps; 0 if none within ``depth``)."""
    fewer = steps
    for _ in range(depth):
        fewer //= 4
        if fewer < 2:
            return 0.0
        try:
            lo, hi = _eps_refined(q, sigma, fewer, d, tol)
        except ValueError:
            continue
        return float(lo) if lo <= hi else 0.0
    return 0.0


def _log_delta_remove(e, q, mu):
    r"""log of one step's remove profile :math:`H_{e^\varepsilon}(P\|Q) = c\,H_{e^{\tilde\varepsilon}}(P\|R)`, :math:`\varepsilon \ge 0`.

    With :math:`Q = (1-q)P + qR`: :math:`c = 1 - e^{\varepsilon}(1-q)` (0 from
    :math:`\varepsilon = -\ln(1-q)` on) and :math:`e^{\tilde\varepsilon} = q e^{\varepsilon}/c`; the Gaussian pair is
    symmetric, so :math:`H_a(P\|R) = \delta_G(\ln a)` for :math:`a \ge 1` and :math:`1 - a + a\,\delta_G(-\ln a)` below.
    """
    log_c = math.log(-math.expm1(e + math.log1p(-q))) if e + math.log1p(-q) < 0 else -math.inf
    if log_c == -math.inf:
        return -math.inf
    et = math.log(q) + e - log_c
    if et >= 0.0:
        return log_c + float(gaussian.log_delta(et, mu))
    a = math.exp(et)
    return log_c + math.log((1.0 - a) + a * float(gaussian.delta(-et, mu)))


def _epsilon_one_step(q, sigma, d):
    r"""Exact :math:`\varepsilon(\delta)` of one SGM step, add/remove, rounded up.

    Add: :math:`q\,\delta_G(\varepsilon') \le \delta` with :math:`\varepsilon' = \ln(1 + (e^\varepsilon - 1)/q)`, so
    :math:`\varepsilon = \ln(1 + q(e^{\varepsilon'_*}-1))` with :math:`\varepsilon'_*` from :func:`dpmia.gaussian.epsilon`.
    Remove: bisection on :func:`_log_delta_remove` keeping the end where the profile is below
    ``delta`` (with a 1e-12 relative margin for its float error). All in log space, any sigma.
    """
    mu = 1.0 / sigma
    ep = float(gaussian.epsilon(min(d / q, 1.0), mu))
    add = float(np.logaddexp(math.log1p(-q), math.log(q) + ep)) if ep > 0 else 0.0
    add = max(add, 0.0) * (1.0 + 4e-16)
    target = math.log(d) + math.log1p(-1e-12)
    if _log_delta_remove(0.0, q, mu) <= target:
        rem = 0.0
    else:
        lo, hi = 0.0, -math.log1p(-q)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            if _log_delta_remove(mid, q, mu) <= target:
                hi = mid
            else:
                lo = mid
        rem = hi
    return max(add, rem)


def epsilon(q, sigma, steps, delta, *, tol=TOL_EPS):
    r"""Tight :math:`\varepsilon(\delta)` of DP-SGD (add/remove), never understated (upper end of the bracket)."""
    return epsilon_bracket(q, sigma, steps, delta, tol=tol)[1]


def delta_bracket(q, sigma, steps, eps, *, tol=TOL_PROB):
    r"""Certified bracket on the tight :math:`\delta(\varepsilon) = \max(H_{e^\varepsilon}(Q\|P), H_{e^\varepsilon}(P\|Q))`.

    Add/remove adjacency for :math:`T` steps; ``eps`` a real number (negative values give the
    profile below 0); ``tol`` the width, absolute for values of at least 0.01 and
    relative (``tol`` / 0.01) below.
    """
    qq, ss, tt = check_args(q, sigma, steps)
    e = float(_checks.real("eps", eps))
    t = check_tol("tol", tol)
    if qq == 0.0 or tt == 0:
        return (0.0, 0.0) if e >= 0 else (-math.expm1(e), -math.expm1(e))
    if qq == 1.0:
        mu = math.sqrt(tt) / ss
        v = gaussian.delta(e, mu) if e >= 0 else -math.expm1(e) + math.exp(e) * gaussian.delta(-e, mu)
        return v, v

    def readout(h, cap):
        c = _four(qq, ss, tt, h, 1e-3 * t, cap)
        lo = max(c["optimistic", "add"].delta(e), c["optimistic", "remove"].delta(e))
        hi = max(c["pessimistic", "add"].delta(e), c["pessimistic", "remove"].delta(e))
        return lo, hi

    lo, hi = refine(qq, ss, tt, t, readout, prob_width(t), tail=1e-3 * t)
    if e >= 0.0:
        # where delta is below the grid's float slack the sampling-pattern bound is far tighter
        hi = min(hi, mixture_delta_upper(qq, ss, tt, e))
    return float(lo), float(hi)


def tpr_bracket(fpr, q, sigma, steps, *, tol=TOL_PROB):
    r"""Certified bracket ``(lower, upper)`` on the largest TPR at ``fpr`` (Corollary 11; the ROC of the dominating pair).

    Upper: :math:`\inf_\varepsilon[e^\varepsilon\,\mathrm{fpr} + \delta(\varepsilon)]` on the pessimistic
    pair; lower: the exact ROC of the optimistic pair. ``fpr`` scalar or array in [0, 1].
    """
    f = _checks.probability("fpr", fpr)
    qq, ss, tt = check_args(q, sigma, steps)
    t = check_tol("tol", tol)
    fa = np.atleast_1d(f)
    if qq == 0.0 or tt == 0:
        return _checks.scalar_or_array(fa, fpr), _checks.scalar_or_array(fa, fpr)
    if qq == 1.0:
        v = gaussian.tpr_at_fpr(f, math.sqrt(tt) / ss)
        return v, v
    pe, op = plds(qq, ss, tt, tol=t)
    return _checks.scalar_or_array(op.roc(fa), fpr), _checks.scalar_or_array(pe.roc(fa), fpr)


def tpr_at_fpr(fpr, q, sigma, steps, *, tol=TOL_PROB):
    r"""Largest TPR at ``fpr`` of any attack on :math:`T` DP-SGD steps (Corollary 11), never understated."""
    return tpr_bracket(fpr, q, sigma, steps, tol=tol)[1]


def tradeoff_bracket(q, sigma, steps, *, alpha=None, tol=TOL_PROB):
    r"""The symmetric (add/remove) trade-off curve :math:`\beta(\alpha)` of :math:`T` DP-SGD steps, as arrays.

    Returns ``(alpha, beta_lower, beta_upper)``: the smallest type-II error of any test at type-I
    error :math:`\alpha`, for the worse of the two directions; ``beta_lower`` is certified (an
    attacker can do no better), ``beta_upper`` shows the bracket. ``alpha`` defaults to 200 points
    log-spaced in [1e-6, 1].
    """
    qq, ss, tt = check_args(q, sigma, steps)
    t = check_tol("tol", tol)
    a = (np.concatenate([[0.0], np.geomspace(1e-6, 1.0, 199)]) if alpha is None
         else np.atleast_1d(_checks.probability("alpha", alpha)).astype(float))
    if qq == 0.0 or tt == 0:
        return a, 1.0 - a, 1.0 - a
    if qq == 1.0:
        b = gaussian.tradeoff(a, math.sqrt(tt) / ss)
        return a, b, b

    def readout(h, cap):
        c = _four(qq, ss, tt, h, 1e-3 * t, cap)
        up = np.maximum(c["pessimistic", "add"].roc(a), c["pessimistic", "remove"].roc(a))
        lo = np.maximum(c["optimistic", "add"].roc(a), c["optimistic", "remove"].roc(a))
        return lo, up

    lo, up = refine(qq, ss, tt, t, readout, lambda r: float(np.max(r[1] - r[0])), tail=1e-3 * t)
    return a, np.clip(1.0 - up, 0.0, 1.0), np.clip(1.0 - lo, 0.0, 1.0)


# --------------------------------------------------------------------------------------
# other read-outs and other ways to compute the bound
# --------------------------------------------------------------------------------------
def prior_advantage(q, sigma, steps, prior, *, tol=TOL_PROB):
    r"""Largest advantage over the best prior guess under membership prior :math:`p` (corrected Theorem 21).

    :math:`\mathrm{Adv}(p) = 2\Pr[b=b'] - 2\max(p,1-p) = 2(1-p)\,\mathrm{TV}_{p/(1-p)}(P,Q) - |1-2p|`,
    with :math:`P` the output law without the target. The paper prints :math:`+1-2p`, which is
    positive even for identical :math:`P = Q`. Upper end of the certified bracket.
    """
    qq, ss, tt = check_args(q, sigma, steps)
    p = _checks.real("prior", prior, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    t = check_tol("tol", tol)
    a = p / (1 - p)
    if qq == 0.0 or tt == 0:
        return 0.0
    if qq == 1.0:
        tva = gaussian.tv_a(a, math.sqrt(tt) / ss)
    else:
        pe, _ = plds(qq, ss, tt, tol=t)
        tva = pe.tv_a(a)
    return float(min(max(2 * (1 - p) * tva - abs(1 - 2 * p), 0.0), 2 * min(p, 1 - p)))
