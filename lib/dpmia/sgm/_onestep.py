r"""One DP-SGD step in closed form: its eps(delta) and delta(eps), each rounded outward, for both neighbouring relations
(add/remove: the add direction's subsampled-Gaussian profile, :func:`._step.profile`, and the remove direction's,
:func:`_log_delta_remove`; replace-one: :func:`._replace.replace_one_profile`). They answer one-step runs and give
every longer run a lower end (eps and delta grow with T)."""

from __future__ import annotations

import math

import numpy as np

from .. import gaussian
from .._gaussian_kernel import _delta_up, _log_delta_scalar, _safe_up
from ._replace import replace_one_profile
from ._step import profile

#: The least positive double: an upper end on a delta that is positive however far below the float range it lies.
_TINY = math.ulp(0.0)


def _epsilon_one_step_r(q, sigma, d):
    """``(lower, upper)`` on one replace-one step's eps(delta) from its profile's outward-rounded ends (the
    profile decreases in eps): the crossing of ``d`` is narrowed 32-fold per vectorised round."""
    ends = []
    for end in (1, 0):
        def above(e, end=end):
            return replace_one_profile(np.asarray(e, float), q, sigma)[end] > d
        if not above([0.0])[0]:
            ends.append(0.0)
            continue
        a, b = 0.0, 1.0
        while above([b])[0] and b < 1e6:
            a, b = b, 2.0 * b
        for _ in range(12):
            xs = np.linspace(a, b, 33)
            up = above(xs)
            k = int(np.argmin(up))                 # first point at or below delta (the last one is)
            a, b = float(xs[max(k - 1, 0)]), float(xs[k])
            if b - a <= 1e-13 * b:
                break
        ends.append(b if end == 1 else a)
    return ends[1], ends[0]


def _epsilon_one_step_add(q, sigma, d):
    r"""The add direction's part of :func:`_epsilon_one_step`: :math:`\ln(1 + q(e^{\varepsilon'_*}-1))`, rounded up."""
    ep = float(gaussian.epsilon(min(d / q, 1.0), 1.0 / sigma))
    if q >= 1.0:
        add = ep                      # (no subsampling: the Gaussian pair itself; log1p(-1) has no value)
    else:
        add = float(np.logaddexp(math.log1p(-q), math.log(q) + ep)) if ep > 0 else 0.0
    return max(add, 0.0) * (1.0 + 4e-16)


def _log_delta_remove(e, q, mu, safe=True):
    r"""log of one step's remove profile :math:`H_{e^\varepsilon}(P\|Q) = c\,H_{e^{\tilde\varepsilon}}(P\|R)`,
    :math:`\varepsilon \ge 0`.

    With :math:`Q = (1-q)P + qR`: :math:`c = 1 - e^{\varepsilon}(1-q)` (0 from
    :math:`\varepsilon = -\ln(1-q)` on) and :math:`e^{\tilde\varepsilon} = q e^{\varepsilon}/c`; the Gaussian pair is
    symmetric, so :math:`H_a(P\|R) = \delta_G(\ln a)` for :math:`a \ge 1` and :math:`1 - a + a\,\delta_G(-\ln a)` below.
    ``safe``: :math:`\delta_G` rounded up by its float error (:func:`dpmia.gaussian.delta`); otherwise the plain
    scalar formula (for root finding).
    """
    log_c = math.log(-math.expm1(e + math.log1p(-q))) if e + math.log1p(-q) < 0 else -math.inf
    if log_c == -math.inf:
        return -math.inf
    et = math.log(q) + e - log_c
    if not safe:
        if et >= 0.0:
            return log_c + _log_delta_scalar(et, mu)
        a = math.exp(et)
        return log_c + math.log((1.0 - a) + a * math.exp(_log_delta_scalar(-et, mu)))
    v = float(_delta_up(np.float64(abs(et)), np.float64(mu)))
    if et >= 0.0:
        return log_c + math.log(v) if v > 0.0 else -math.inf
    a = math.exp(et)
    return log_c + math.log((1.0 - a) + a * v)


def _epsilon_one_step(q, sigma, d):
    r"""Exact :math:`\varepsilon(\delta)` of one SGM step, add/remove, rounded up.

    Add: :math:`q\,\delta_G(\varepsilon') \le \delta` with :math:`\varepsilon' = \ln(1 + (e^\varepsilon - 1)/q)`, so
    :math:`\varepsilon = \ln(1 + q(e^{\varepsilon'_*}-1))` with :math:`\varepsilon'_*` from
    :func:`dpmia.gaussian.epsilon`. Remove: the root of :func:`_log_delta_remove` = ln(delta) (less a 1e-12 relative
    margin) by bisection on the plain formula, then stepped up until the profile rounded up by its float error is
    below the target. All in log space, any sigma.
    """
    mu = 1.0 / sigma
    ep = float(gaussian.epsilon(min(d / q, 1.0), mu))
    if q >= 1.0:
        add = ep                      # (no subsampling: the Gaussian pair itself; log1p(-1) has no value)
    else:
        add = float(np.logaddexp(math.log1p(-q), math.log(q) + ep)) if ep > 0 else 0.0
    add = max(add, 0.0) * (1.0 + 4e-16)
    target = math.log(d) + math.log1p(-1e-12)
    if _log_delta_remove(0.0, q, mu) <= target:
        rem = 0.0
    elif _log_delta_remove(add, q, mu) <= target:
        rem = add       # the remove profile (decreasing) is already below delta at the add root: add answers
    else:
        lo, hi = 0.0, -math.log1p(-q)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            if _log_delta_remove(mid, q, mu, safe=False) <= target:
                hi = mid
            else:
                lo = mid
        rem = min(_safe_up(hi, lambda e: _log_delta_remove(e, q, mu) <= target), -math.log1p(-q))
    return max(add, rem)


def _delta_one_step(q, sigma, e):
    """One step's delta at ``e >= 0``, exactly: the larger of the two directions' closed forms (sgm.profile's add
    direction and _log_delta_remove), each accurate to a few ulps, rounded outward (the loss is unbounded: the upper
    end is at least the least double)."""
    v = max(float(profile(e, q, sigma)[0]), math.exp(_log_delta_remove(e, q, 1.0 / sigma)))
    lo, hi = _outward(v, 1e-12)
    return lo, min(max(hi, _TINY), 1.0)


def _outward(v, rel, rel_up=None):
    """``(lo, hi)``: ``v``, within ``rel`` relative of the value it stands for (``rel_up`` above it, default ``rel``),
    moved outward by that and by four units of the least subnormal: below the normal range a relative step leaves a
    value where it is, and rounding there is absolute (a subnormal delta of 1.38997e-320 came out as the bracket
    (1.39e-320, 1.39e-320))."""
    pad = 4.0 * _TINY if v > 0.0 else 0.0         # (a value that underflowed to 0 stands for one below _TINY / 2)
    return max(v * (1.0 - rel) - pad, 0.0), v * (1.0 + (rel if rel_up is None else rel_up)) + pad
