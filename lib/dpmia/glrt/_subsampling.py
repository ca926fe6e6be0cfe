r"""Poisson subsampling of the GLRT adversary (Kaissis et al., Sec. 4.6; Balle et al. 2018).

Reading A of Fig. 7: one inclusion coin for all releases, the pair :math:`(Q, (1-\gamma)Q + \gamma P)`,
whose profile follows from the unsubsampled one in closed form (forward) and by root-finding
(reverse). Reading B (a fresh coin per round) is :mod:`._energy`; the one-round helpers it shares are here.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from .. import _checks, gaussian
from ._curves import _d_lam
from ._profile import _eps_arr, delta_forward, delta_reverse, epsilon_bracket


def _gamma(gamma):
    return _checks.scalar("gamma", gamma, lo=0.0, hi=1.0, lo_open=True)


def _amplify(e, g):
    """log(1 + g (e^e - 1)) for e >= 0, without overflow (= logaddexp(log(1-g), log g + e))."""
    e = np.asarray(e, float)
    if g >= 1.0:
        return e
    return np.logaddexp(math.log1p(-g), math.log(g) + e)


def _deamplify(x, g):
    """log(1 + (e^x - 1)/g) = x - log g + log(1 - (1 - g) e^{-x}) for real x > log(1 - g), without overflow.

    The second form wherever (1 - g) e^{-x} <= 1/2 (x itself at g = 1, where e^x - 1 rounds to -1 below x = -37);
    the first only near the least loss, where both cancel alike."""
    x = np.asarray(x, float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        r = (1.0 - g) * np.exp(-x)
        near = np.log1p(np.expm1(np.minimum(x, 1.0)) / g)
        far = x - math.log(g) + np.log1p(-np.minimum(r, 0.5))
    return np.where(r <= 0.5, far, near)


def _profiles(d, lam, adversary):
    if adversary == "glrt":
        return (lambda e: np.asarray(delta_forward(e, d, lam), float),
                lambda e: np.asarray(delta_reverse(e, d, lam), float),
                lambda dl: epsilon_bracket(dl, d, lam)[0])
    if adversary == "npo":
        mu = math.sqrt(lam)
        fwd = lambda e: np.asarray(gaussian.delta(np.maximum(e, 0.0), mu), float)  # noqa: E731
        return fwd, fwd, lambda dl: float(gaussian.epsilon(dl, mu))
    raise ValueError(f"adversary must be 'glrt' or 'npo', got {adversary!r}")


def amplified_delta(eps, d, lam, gamma, *, adversary="glrt"):
    r"""Tight profile after Poisson subsampling with rate ``gamma``, one inclusion coin (reading A of Fig. 7).

    With :math:`M = (1-\gamma)Q + \gamma P` (a post-processing of :math:`y`, so exact for the energy
    statistic): :math:`H_{e^{\varepsilon'}}(M\|Q) = \gamma\,\delta_{\rm fwd}(\varepsilon)`,
    :math:`e^\varepsilon = 1 + (e^{\varepsilon'}-1)/\gamma`;
    :math:`H_{e^{\varepsilon'}}(Q\|M) = c\,\delta_{\rm rev}(\tilde\varepsilon)`,
    :math:`c = 1 - e^{\varepsilon'}(1-\gamma)`, :math:`e^{\tilde\varepsilon} = \gamma e^{\varepsilon'}/c`.
    Returns the max. ``adversary`` "glrt" (energy test) or "npo" (the Gaussian pair, :math:`\mu=\sqrt\lambda`).
    """
    e = _eps_arr(eps)
    dd, ll = _d_lam(d, lam)
    g = _gamma(gamma)
    fwd, rev, _ = _profiles(dd, ll, adversary)
    ef = _deamplify(e, g)
    out = g * fwd(ef)
    with np.errstate(over="ignore"):
        c = -np.expm1(e + math.log1p(-g)) if g < 1.0 else np.ones_like(e)
    act = c > 0
    if np.any(act):
        et = np.log(g) + e[act] - np.log(c[act])
        out[act] = np.maximum(out[act], c[act] * rev(np.maximum(et, 0.0)))
    return _checks.scalar_or_array(np.clip(out, 0.0, 1.0).reshape(np.shape(eps)), eps)


def amplified_epsilon(delta, d, lam, gamma, *, adversary="glrt"):
    r"""Smallest :math:`\varepsilon'` of the subsampled pair (reading A) with profile <= ``delta``; never understated.

    Forward direction in closed form, :math:`\varepsilon' = \log(1 + \gamma(e^{\varepsilon(\delta/\gamma)} - 1))`
    (Balle et al. 2018, the amplification the paper applies); the reverse direction by root-finding.
    """
    dl = _checks.real("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    dd, ll = _d_lam(d, lam)
    g = _gamma(gamma)
    if ll == 0.0:
        return 0.0
    _, rev, eps_fwd = _profiles(dd, ll, adversary)
    e_f = eps_fwd(dl / g) if dl / g < 1.0 else 0.0
    out_f = float(_amplify(e_f, g))

    def rev_amp(ep):
        c = -math.expm1(ep + math.log1p(-g)) if g < 1.0 else 1.0
        if c <= 0.0:
            return 0.0
        et = max(math.log(g) + ep - math.log(c), 0.0)
        return c * float(rev(np.array([et]))[0])

    if g < 1.0:
        hi = -math.log1p(-g)          # c = 0 there: the reverse profile vanishes
    else:
        hi = 1.0
        while rev_amp(hi) > dl:       # no subsampling: expand until the reverse profile is below delta
            hi *= 2.0
    if rev_amp(0.0) <= dl:
        out_r = 0.0
    else:
        root = optimize.brentq(lambda ep: rev_amp(ep) - dl, 0.0, hi, xtol=1e-14, rtol=8.9e-16)
        out_r = root
        step = 1e-15 * max(root, 1.0)
        while rev_amp(out_r) > dl:
            out_r += step
            step *= 2.0
    return max(out_f, out_r)
