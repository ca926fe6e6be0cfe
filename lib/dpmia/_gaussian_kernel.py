r"""The Gaussian mechanism's privacy profile in floating point: Balle and Wang's formula evaluated in log
space (:func:`log_delta_kernel`), and its float error, which :mod:`dpmia.gaussian` rounds to the safe side."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_SQRT2 = math.sqrt(2.0)


def log_delta_kernel(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Vectorised kernel of :func:`log_delta` (inputs already validated, broadcastable)."""
    eps, mu = np.broadcast_arrays(np.asarray(eps, float), np.asarray(mu, float))
    out = np.full(eps.shape, -np.inf)
    out[np.isinf(mu) & np.isfinite(eps)] = 0.0  # mu = inf: the outputs are disjoint
    reg = (mu > 0) & np.isfinite(mu) & np.isfinite(eps)
    if not reg.any():
        return out
    e, m = eps[reg], mu[reg]
    with np.errstate(over="ignore"):
        a = 0.5 * m - e / m
        b = -0.5 * m - e / m
    res = np.empty_like(a)
    hi = a >= 0.0
    # a >= 0 > b: delta = [Phi(a) - Phi(b)] - (e^eps - 1) Phi(b), where the bracket is a sum of
    # two non-negative erf terms (accurate even for tiny mu) and eps <= mu^2/2 is small.
    # (e^eps - 1) Phi(b) is formed as expm1(eps) Phi(b) for eps < 1 (accurate for tiny eps) and as
    # exp(eps + log Phi(b)) - Phi(b) otherwise (no overflow when e^eps is huge and Phi(b) tiny).
    ah, bh, eh = a[hi], b[hi], e[hi]
    lphi = special.log_ndtr(bh)
    with np.errstate(over="ignore", invalid="ignore"):
        tail = np.where(eh < 1.0, np.expm1(np.minimum(eh, 1.0)) * special.ndtr(bh),
                        np.exp(eh + lphi) - np.exp(lphi))
    with np.errstate(divide="ignore"):
        res[hi] = np.log(0.5 * (special.erf(ah / _SQRT2) + special.erf(-bh / _SQRT2)) - tail)
    # a < 0: use e^eps phi(b) = phi(a) and Phi(x) = phi(x) * sqrt(pi/2) erfcx(-x/sqrt2):
    # delta = phi(a) * sqrt(pi/2) * [erfcx(-a/sqrt2) - erfcx(-b/sqrt2)], both arguments > 0.
    lo = ~hi
    al, bl = a[lo], b[lo]
    diff = special.erfcx(-al / _SQRT2) - special.erfcx(-bl / _SQRT2)
    with np.errstate(divide="ignore", over="ignore"):  # delta underflows to 0 -> log = -inf
        res[lo] = -0.5 * al * al - _LOG_SQRT_2PI + np.log(_SQRT_HALF_PI * diff)
    out[reg] = res
    return out


def _log_delta_scalar(eps: float, mu: float) -> float:
    """Scalar kernel of :func:`log_delta` for root finding (same formula, no array overhead)."""
    a = 0.5 * mu - eps / mu
    b = -0.5 * mu - eps / mu
    if a >= 0.0:
        if eps < 1.0:
            tail = math.expm1(eps) * special.ndtr(b)
        elif eps < 700.0:
            lphi = special.log_ndtr(b)
            tail = math.exp(eps + lphi) - math.exp(lphi)
        else:  # e^eps Phi(b) = phi(a) Phi(b)/phi(b) (as e^eps phi(b) = phi(a)): no overflow, no cancellation
            tail = 0.5 * math.exp(-0.5 * a * a) * special.erfcx(-b / _SQRT2) - special.ndtr(b)
        d = 0.5 * (math.erf(a / _SQRT2) + math.erf(-b / _SQRT2)) - tail
        return math.log(d) if d > 0.0 else -math.inf
    diff = special.erfcx(-a / _SQRT2) - special.erfcx(-b / _SQRT2)
    if diff <= 0.0:
        return -math.inf
    return -0.5 * a * a - _LOG_SQRT_2PI + math.log(_SQRT_HALF_PI * diff)


def _delta_up(e, m):
    r""":func:`delta` rounded up by the float error of its evaluation (to the safe side, to the ulp): the
    formula's relative error is below :math:`8.9\cdot10^{-16}(4 + \max(1, \varepsilon/\mu)/\mu + |\ln\delta|)` (the two
    terms of Balle and Wang's formula differ by a relative :math:`O(\mu)`, and :math:`e^{\ln\delta}` adds
    :math:`|\ln\delta|` ulps; checked against mpmath in the tests); where that is large (tiny :math:`\mu`) the
    smaller of :math:`\mu/\sqrt{2\pi}` and :math:`\Phi(\mu/2 - \varepsilon/\mu)`, both upper bounds,
    rounded up; never above the TV."""
    e, m = np.broadcast_arrays(np.asarray(e, float), np.asarray(m, float))
    ld = log_delta_kernel(e, m)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        ratio = np.where(m > 0, np.maximum(1.0, np.where(np.isfinite(e), e, 0.0) / m) / np.where(m > 0, m, 1.0), 0.0)
        err = 8.9e-16 * (4.0 + ratio + np.where(np.isfinite(ld), np.abs(ld), 0.0))
        v = np.exp(ld) * (1.0 + 2.0 * err)
        z = 0.5 * m - e / np.where(m > 0, m, 1.0)
        lz = special.log_ndtr(z)
        alt = np.minimum(m * (1.0 + 1e-15) / math.sqrt(2.0 * math.pi),
                         np.exp(lz + 8.9e-16 * (4.0 + z * z)) * (1.0 + 4.4e-16))
        v = np.where((err >= 0.5) & (m > 0) & np.isfinite(m), alt, v)
        # and never above the TV erf(mu / (2 sqrt 2)) (delta decreases in eps; erf is a few ulps off)
        v = np.minimum(v, special.erf(m / (2.0 * _SQRT2)) * (1.0 + 4.5e-16))
    # a positive value below the smallest double is the smallest double (not 0); an exact 0 stays 0
    tiny = np.isfinite(ld) | ((err >= 0.5) & (m > 0) & np.isfinite(lz))
    return np.minimum(np.where(tiny, np.maximum(v, 5e-324), np.where(ld > 0, v, 0.0)), 1.0)


def _within_target(eps, mu: float, target: float):
    r"""True if :func:`dpmia.gaussian.delta` (the value rounded up by its float error, so the exact
    :math:`\delta(\varepsilon;\mu)` too) is at most ``target``: the same function as ``delta``, so that
    ``delta(epsilon(d, mu), mu) <= d`` holds to the bit. ``eps`` a float, or an array (then elementwise: the
    kernel is elementwise, so each entry gets the bits it would get alone)."""
    if np.ndim(eps):
        return _delta_up(np.asarray(eps, float), np.float64(mu)) <= target
    return float(_delta_up(np.float64(eps), np.float64(mu))) <= target


def _safe_up(x: float, ok, batch=None) -> float:
    """A float >= x with ``ok`` true: x itself, else x + s, x + 2s, x + 4s, ... (s = 2.3e-16 |x| + 5e-324, about
    an ulp; ``ok`` must be monotone): the first of them that passes, or the first that is not finite.

    ``batch``: ``ok`` for an array of candidates at once (elementwise, the same answers): the sequence is then
    tested 24 candidates per call, with the same result."""
    if batch is None:
        if ok(x):
            return float(x)
        step = abs(x) * 2.3e-16 + 5e-324
        while True:
            y = x + step
            if not math.isfinite(y) or ok(y):    # (nothing finite certifies: inf is the safe answer)
                return float(y)
            step *= 2.0
    cands = [float(x)]
    step = abs(x) * 2.3e-16 + 5e-324
    while True:
        while len(cands) < 24 and math.isfinite(cands[-1]):
            cands.append(x + step)
            step *= 2.0
        finite = [c for c in cands if math.isfinite(c)]
        for c, p in zip(finite, batch(np.array(finite)) if finite else ()):
            if p:
                return float(c)
        if len(finite) < len(cands):
            return float(cands[len(finite)])
        cands = [x + step]
        step *= 2.0
